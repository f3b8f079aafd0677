/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Command line: `spinnic [EAL args] -- [options]`. Options are parsed before
 * the EAL starts so that --help and bad options never touch hugepages; the
 * EAL argument vector is built here too (safe defaults when none given).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_mbuf_core.h>

#include "spinnic.h"
#include "spin_rt.h"
#include "wire.h"

#define DEFAULT_PAYLOAD 2048u
#define PAYLOAD_MAX 65000u
#define DEFAULT_NIC_MEM (64ull << 20)
#define DEFAULT_HPUS 2u
#define DEFAULT_UDP_PORT SPINNIC_WIRE_UDP_PORT
#define DEFAULT_IDLE_SLEEP_US 50u
#define DEFAULT_PEER_TIMEOUT_MS 5000u
#define DEFAULT_RTO_US 4000u
#define DEFAULT_HANDLER_BUDGET_US 100u
#define DEFAULT_HANDLER_TIME_EVERY 64u
/* Largest reorder window (ENG_FAULT_WIN of engine.h). */
#define ENG_FAULT_WIN_OPT 32u
#define DEFAULT_RING_SIZE 1024u
/* Hugepages needed before spinnic uses them by default (MiB). */
#define HUGE_MIN_MB 256ull

enum {
	OPT_VIRTUAL = 256,
	OPT_SOCKET_DIR,
	OPT_SOCKET,
	OPT_PAYLOAD,
	OPT_NIC_MEM,
	OPT_HPUS,
	OPT_LCORE_ROLES,
	OPT_LCORES,
	OPT_UDP_PORT,
	OPT_NID_BASE,
	OPT_STATS_INTERVAL,
	OPT_DURATION,
	OPT_IDLE_SLEEP,
	OPT_MBUFS,
	OPT_RING_SIZE,
	OPT_MAX_TRIG,
	OPT_AA_PAGE,
	OPT_AA_IOTLB,
	OPT_RX_LOSS,
	OPT_RX_REORDER,
	OPT_RX_DUP,
	OPT_FAULT_SEED,
	OPT_FAULT_INJECT,
	OPT_PEER_TIMEOUT,
	OPT_RTO,
	OPT_XDP_RESET,
	OPT_FLOW_ISOLATE,
	OPT_NO_FLOW_ISOLATE,
	OPT_RX_QUEUES,
	OPT_CAPTURE,
	OPT_HELP,
	OPT_NIC_MEM_PER_CLIENT,
	OPT_ALLOW_UID,
	OPT_WIRE_KEY,
	OPT_HANDLERS,
	OPT_HANDLER_BUDGET,
	OPT_HANDLER_TRACE,
	OPT_HANDLER_TIME_EVERY,
};

static const struct option long_opts[] = {
	{"virtual", required_argument, NULL, OPT_VIRTUAL},
	{"socket-dir", required_argument, NULL, OPT_SOCKET_DIR},
	{"socket", required_argument, NULL, OPT_SOCKET},
	{"payload", required_argument, NULL, OPT_PAYLOAD},
	{"nic-mem", required_argument, NULL, OPT_NIC_MEM},
	{"hpus", required_argument, NULL, OPT_HPUS},
	{"lcore-roles", required_argument, NULL, OPT_LCORE_ROLES},
	{"lcores", required_argument, NULL, OPT_LCORES},
	{"udp-port", required_argument, NULL, OPT_UDP_PORT},
	{"nid-base", required_argument, NULL, OPT_NID_BASE},
	{"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
	{"duration", required_argument, NULL, OPT_DURATION},
	{"idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP},
	{"mbufs", required_argument, NULL, OPT_MBUFS},
	{"ring-size", required_argument, NULL, OPT_RING_SIZE},
	{"max-triggered-ops", required_argument, NULL, OPT_MAX_TRIG},
	{"aa-page-size", required_argument, NULL, OPT_AA_PAGE},
	{"aa-iotlb", required_argument, NULL, OPT_AA_IOTLB},
	{"rx-loss", required_argument, NULL, OPT_RX_LOSS},
	{"rx-reorder", required_argument, NULL, OPT_RX_REORDER},
	{"rx-dup", required_argument, NULL, OPT_RX_DUP},
	{"fault-seed", required_argument, NULL, OPT_FAULT_SEED},
	{"fault-inject", required_argument, NULL, OPT_FAULT_INJECT},
	{"peer-timeout-ms", required_argument, NULL, OPT_PEER_TIMEOUT},
	{"rto-us", required_argument, NULL, OPT_RTO},
	{"xdp-reset", required_argument, NULL, OPT_XDP_RESET},
	{"flow-isolate", no_argument, NULL, OPT_FLOW_ISOLATE},
	{"no-flow-isolate", no_argument, NULL, OPT_NO_FLOW_ISOLATE},
	{"rx-queues", required_argument, NULL, OPT_RX_QUEUES},
	{"capture", no_argument, NULL, OPT_CAPTURE},
	{"help", no_argument, NULL, OPT_HELP},
	{"nic-mem-per-client", required_argument, NULL,
	 OPT_NIC_MEM_PER_CLIENT},
	{"allow-uid", required_argument, NULL, OPT_ALLOW_UID},
	{"wire-key", required_argument, NULL, OPT_WIRE_KEY},
	{"handlers", required_argument, NULL, OPT_HANDLERS},
	{"handler-budget-us", required_argument, NULL, OPT_HANDLER_BUDGET},
	{"handler-trace", required_argument, NULL, OPT_HANDLER_TRACE},
	{"handler-time-every", required_argument, NULL,
	 OPT_HANDLER_TIME_EVERY},
	{NULL, 0, NULL, 0},
};

void
spinnic_options_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL args] -- [options]\n"
"       %s [options]            (no EAL args: safe defaults, see below)\n"
"\n"
"A software sPIN NIC: every port is one Portals 4 NIC with sPIN handlers.\n"
"\n"
"Nodes:\n"
"  --virtual N           N nodes (1..%u) on ring-backed ports wired back to\n"
"                        back through a software switch (every node reaches\n"
"                        every node, itself included); no NIC needed.\n"
"                        Without it, every ethdev the EAL probed (-a, --vdev)\n"
"                        is one node; with no EAL args either, 2 virtual\n"
"                        nodes (1 with --socket).\n"
"  --nid-base N          node id of node 0, node i gets N+i (default 0)\n"
"  --udp-port P          UDP port of spinnic packets (default %u)\n"
"  --payload BYTES       payload bytes per packet (default %u)\n"
"  --nic-mem BYTES       NIC memory per node, K/M/G suffixes (default 64M)\n"
"  --hpus N              HPUs per node (1..%u, default %u)\n"
"  --mbufs N             mbufs per node pool (default: sized from rings)\n"
"  --max-triggered-ops N most triggered operations an NI may hold armed\n"
"                        (64..65536, default 1024; ptl_ni_limits_t)\n"
"  --aa-page-size BYTES  Active Access marking granularity: a power of two,\n"
"                        4K..1G (K/M/G suffixes; default 4K)\n"
"  --aa-iotlb E[,W[,lru|rnd]] model an IOTLB of E entries (a power of two\n"
"                        up to 65536; 0 = off, the default), W ways (a power\n"
"                        of two dividing E; default E: fully associative),\n"
"                        LRU or random replacement; counts hits, misses and\n"
"                        page-walk reads in the AA lookup path, never waits\n"
"  --ring-size N         RX/TX descriptors per queue (default %u)\n"
"\n"
"Real NICs (doc/REAL-NIC.md):\n"
"  --xdp-reset IFACE     before the EAL starts, detach any XDP program from\n"
"                        IFACE (all modes): recovery from a program a killed\n"
"                        spinnic left behind (the af_xdp PMD then fails with\n"
"                        \"already attached\"). Repeatable.\n"
"  --flow-isolate        rte_flow isolated mode: the port receives only\n"
"                        IPv4/UDP to --udp-port (one rte_flow rule), the rest\n"
"                        stays with the kernel. Default on for mlx5_pci\n"
"                        ports; a port that refuses it is an error.\n"
"  --no-flow-isolate     never isolate (spinnic takes all traffic)\n"
"  --rx-queues N         RX queues per probed port (1..%u, default 1), all\n"
"                        polled by the node's inbound role; with N > 1 the\n"
"                        NIC spreads spinnic's packets by RSS (IPv4/UDP)\n"
"\n"
"Clients:\n"
"  --socket-dir D        client sockets D/node<i>.sock; D is created 0700\n"
"                        (default $XDG_RUNTIME_DIR/spinnic, else /run/spinnic)\n"
"  --socket PATH         control socket path (one node only)\n"
"  --allow-uid LIST      uids (numbers or user names, comma-separated) that\n"
"                        may attach besides root and spinnic's own uid, or\n"
"                        \"any\"; others are refused at ATTACH (default: only\n"
"                        root and spinnic's own uid)\n"
"  --nic-mem-per-client BYTES\n"
"                        NIC memory one client may hold (contexts and\n"
"                        blobs), K/M/G suffixes; more is PTL_NO_SPACE for\n"
"                        that client only (default: no cap but --nic-mem)\n"
"\n"
"Lcores:\n"
"  --lcores LIST         EAL lcores when no EAL args are given (default 0)\n"
"  --lcore-roles MAP     role=lcores,... roles: inbound, outbound, hpu, ctrl;\n"
"                        lcores: ids and ranges, a bare id continues the\n"
"                        previous role (hpu=0-1,3). Node i's inbound and\n"
"                        outbound run on the i-th lcore of their set, HPU h\n"
"                        on the h-th (wrapping). ctrl pins the control\n"
"                        thread to that lcore's CPUs. Default: inbound,\n"
"                        outbound on the main lcore, HPUs spread over all\n"
"                        lcores, control thread off the lcores' CPUs.\n"
"  --idle-sleep-us US    sleep of an lcore after idle rounds (default %u;\n"
"                        grows 4x after ~0.1 s idle, 16x after ~1 s, up\n"
"                        to 1 ms; 0: busy-poll)\n"
"\n"
"Run:\n"
"  --stats-interval S    print counters every S seconds (default: at exit)\n"
"  --duration S          stop after S seconds (default: until SIGINT/SIGTERM)\n"
"  --capture             make the default EAL args multi-process capable, so\n"
"                        that dpdk-dumpcap --file-prefix=spinnic<pid> -i PORT\n"
"                        can capture the ports (shared config on hugepages,\n"
"                        no --in-memory; needs a hugetlbfs mount). The log\n"
"                        names the command line per node. Telemetry\n"
"                        (dpdk-telemetry.py, /spinnic/...) works in every mode.\n"
"\n"
"Handler statistics (telemetry /spinnic/handlers, final counters):\n"
"  --handler-budget-us US  a handler invocation that takes longer is counted\n"
"                        (over_budget) and logged with its family, kind,\n"
"                        context and duration, at most one line per family\n"
"                        per second; reported, never stopped (default %u;\n"
"                        0: off). Payload invocations that are not timed\n"
"                        (--handler-time-every) are checked by their HPU's\n"
"                        bursts: a burst over the budget has the HPU time\n"
"                        its next 1024 payload invocations\n"
"  --handler-time-every N  time about one payload invocation in N per HPU\n"
"                        (the others are counted, not timed; 0..%u,\n"
"                        default %u; 0 or 1: every one)\n"
"  --handler-trace N     keep the last N handler invocations of every\n"
"                        context (0..%u, default 0: off; 64 B each), read\n"
"                        with telemetry /spinnic/handler_trace,NODE,CTX\n"
"\n"
"Reliable delivery (per peer sequence numbers, selective retransmission):\n"
"  --peer-timeout-ms MS  a peer silent this long while packets or operations\n"
"                        wait for it: they fail with PTL_NI_UNDELIVERABLE\n"
"                        (default %u)\n"
"  --rto-us US           first retransmission timer, doubled per try up to\n"
"                        64x (default %u)\n"
"\n"
"Authenticated wire (doc/NOTES.md):\n"
"  --wire-key FILE       a secret shared by the cluster: every frame sent\n"
"                        carries a MAC (AES-256-GMAC, key derived with\n"
"                        HKDF-SHA256) that receivers check before anything\n"
"                        else; a frame without a valid one, or one not\n"
"                        sequenced (replayable), is dropped and counted\n"
"                        (drop auth, drop unseq). FILE: at least 32 raw\n"
"                        bytes or 64 hex digits, no access for group or\n"
"                        others (openssl rand -hex 32 > F; chmod 600 F).\n"
"                        Every node of the cluster needs the same secret.\n"
"\n"
"Handler plugins (spin_handler.h; doc/NOTES.md, \"Handler plugins: trust\"):\n"
"  --handlers PATH       load the sPIN handler families of a plugin (a\n"
"                        shared object built against spin_handler.h, see\n"
"                        pkg-config spinnic-handler), or of every *.so file\n"
"                        of folder PATH in name order, before any port\n"
"                        starts. Clients select them by name like the\n"
"                        built-in ones. Repeatable (at most %u). A plugin\n"
"                        runs inside spinnic with its rights: the file must\n"
"                        be owned by root or spinnic's user and not be\n"
"                        writable by group or others, nor its folder\n"
"                        (unless sticky). Any problem (unreadable, not a\n"
"                        shared object, no or another ABI version, a bad\n"
"                        family or a name already taken) stops spinnic with\n"
"                        one line naming the file (status 2).\n"
"\n"
"Fault injection (tests of reliable delivery):\n"
"  --fault-inject [rx:|tx:]loss=P,dup=P,corrupt=P,reorder=N\n"
"                        P in percent (0..100): drop, duplicate, or flip one\n"
"                        bit of a packet; N: shuffle the order within a\n"
"                        window of N packets (0..32). Received packets (rx:,\n"
"                        the default) or sent ones (tx:); once per direction\n"
"  --rx-loss P, --rx-dup P  the RX probabilities as fractions (0..1)\n"
"  --rx-reorder N        the RX reorder window\n"
"  --fault-seed N        seed of the injection (default 1)\n"
"\n"
"  --help                this text\n"
"\n"
"Default EAL args: -l <--lcores> --no-pci --file-prefix spinnic<pid>, and\n"
"--in-memory when at least %llu MiB of hugepages are free, else\n"
"--no-huge --no-shconf -m <MiB>; with --capture neither (hugepages needed).\n"
"\n"
"The line \"spinnic: ready\" is printed to stdout once every control\n"
"socket listens.\n",
		prog, prog, SPINNIC_NODES_MAX, DEFAULT_UDP_PORT,
		DEFAULT_PAYLOAD, SPINNIC_HPUS_MAX, DEFAULT_HPUS,
		DEFAULT_RING_SIZE, SPINNIC_RXQ_MAX, DEFAULT_IDLE_SLEEP_US,
		DEFAULT_HANDLER_BUDGET_US, 1u << 20,
		DEFAULT_HANDLER_TIME_EVERY, SPIN_TRACE_MAX,
		DEFAULT_PEER_TIMEOUT_MS, DEFAULT_RTO_US,
		SPINNIC_HANDLER_PATHS_MAX, HUGE_MIN_MB);
}

/* Strict unsigned parse: digits only (0x allowed), within [lo, hi]. */
static int
parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v_p)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -EINVAL;
	*v_p = v;
	return 0;
}

/* --aa-iotlb E[,W[,lru|rnd]] into out[3]. @return 0, -EINVAL */
static int
parse_iotlb(const char *s, unsigned out[3])
{
	char buf[64], *w, *pol;
	uint64_t e, ways;

	if (s == NULL || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	w = strchr(buf, ',');
	pol = NULL;
	if (w != NULL) {
		*w++ = '\0';
		pol = strchr(w, ',');
		if (pol != NULL)
			*pol++ = '\0';
	}
	if (parse_u64(buf, 0, 65536, &e) < 0 || (e & (e - 1)) != 0)
		return -EINVAL;
	ways = e;
	if (w != NULL && (parse_u64(w, 1, 65536, &ways) < 0 ||
			  (ways & (ways - 1)) != 0 || ways > e))
		return -EINVAL;
	out[0] = (unsigned)e;
	out[1] = (unsigned)ways;
	out[2] = 0;
	if (pol != NULL && strcmp(pol, "rnd") == 0)
		out[2] = 1;
	else if (pol != NULL && strcmp(pol, "lru") != 0)
		return -EINVAL;
	return 0;
}

/* Bytes with an optional K/M/G suffix (powers of 1024). */
static int
parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *v_p)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (*end != '\0') {
		end++;
		if (*end == 'i' || *end == 'B')
			end += *end == 'i' && end[1] == 'B' ? 2 : 1;
		if (*end != '\0')
			return -EINVAL;
	}
	if (v > (hi >> shift))
		return -EINVAL;
	v <<= shift;
	if (v < lo || v > hi)
		return -EINVAL;
	*v_p = v;
	return 0;
}

static int
parse_prob(const char *s, double *p_p)
{
	char *end;
	double p;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	errno = 0;
	p = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(p >= 0.0 && p <= 1.0))
		return -EINVAL;
	*p_p = p;
	return 0;
}

/* --allow-uid any | UID-or-name[,UID-or-name...] */
static int
parse_allow_uid(const char *s, struct spinnic_cfg *cfg)
{
	char buf[1024], *tok, *save = NULL;

	if (strcmp(s, "any") == 0) {
		cfg->allow_any_uid = true;
		return 0;
	}
	if (s[0] == '\0' || strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (cfg->nb_allow_uids == SPINNIC_ALLOW_UIDS_MAX)
			return -E2BIG;
		if (parse_u64(tok, 0, UINT32_MAX - 1, &v) < 0) {
			struct passwd pw, *res = NULL;
			char pwbuf[1024];

			if (getpwnam_r(tok, &pw, pwbuf, sizeof(pwbuf),
				       &res) != 0 || res == NULL)
				return -ENOENT;
			v = pw.pw_uid;
		}
		cfg->allow_uids[cfg->nb_allow_uids++] = (uint32_t)v;
	}
	return cfg->nb_allow_uids > 0 ? 0 : -EINVAL;
}

/*
 * --fault-inject [rx:|tx:]loss=P,dup=P,corrupt=P,reorder=N: percentages,
 * and a reorder window in packets, for one direction (no prefix: RX).
 * Given once per direction; keys not named keep their value.
 */
static int
parse_fault_inject(const char *s, struct spinnic_cfg *cfg)
{
	struct spinnic_fault_cfg fc;
	char buf[128], *tok, *save = NULL, *eq, *end;
	int dir = SPINNIC_FAULT_RX;
	double v;

	if (strncmp(s, "rx:", 3) == 0) {
		s += 3;
	} else if (strncmp(s, "tx:", 3) == 0) {
		dir = SPINNIC_FAULT_TX;
		s += 3;
	}
	if (*s == '\0' || strlen(s) >= sizeof(buf))
		return -EINVAL;
	fc = cfg->faults[dir];
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (eq == NULL || eq[1] == '\0')
			return -EINVAL;
		*eq = '\0';
		errno = 0;
		v = strtod(eq + 1, &end);
		if (errno != 0 || *end != '\0' || !(v >= 0.0 && v <= 100.0))
			return -EINVAL;
		if (strcmp(tok, "loss") == 0)
			fc.loss = v / 100.0;
		else if (strcmp(tok, "dup") == 0)
			fc.dup = v / 100.0;
		else if (strcmp(tok, "corrupt") == 0)
			fc.corrupt = v / 100.0;
		else if (strcmp(tok, "reorder") == 0 && v == (unsigned)v &&
			 v <= ENG_FAULT_WIN_OPT)
			fc.reorder = (unsigned)v;
		else
			return -EINVAL;
	}
	if (fc.loss + fc.dup + fc.corrupt > 1.0)
		return -ERANGE;
	cfg->faults[dir] = fc;
	return 0;
}

static void
mask_set(uint64_t *mask, unsigned lcore)
{
	mask[lcore / 64] |= 1ull << (lcore % 64);
}

/* "a" or "a-b" into mask; lcores < RTE_MAX_LCORE. */
static int
parse_lcore_range(const char *s, size_t len, uint64_t *mask)
{
	char buf[32], *dash;
	uint64_t a, b, i;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash = '\0';
	if (parse_u64(buf, 0, RTE_MAX_LCORE - 1, &a) < 0)
		return -EINVAL;
	b = a;
	if (dash != NULL && parse_u64(dash + 1, a, RTE_MAX_LCORE - 1, &b) < 0)
		return -EINVAL;
	for (i = a; i <= b; i++)
		mask_set(mask, (unsigned)i);
	return 0;
}

static const char *const role_opt_names[] = {
	[SPINNIC_ROLE_INBOUND] = "inbound",
	[SPINNIC_ROLE_OUTBOUND] = "outbound",
	[SPINNIC_ROLE_HPU] = "hpu",
};

/*
 * "inbound=0,outbound=0,hpu=0-1,3,ctrl=0": a bare item continues the
 * previous role. ctrl takes exactly one lcore.
 */
static int
parse_roles(struct spinnic_cfg *cfg, const char *s)
{
	const char *const *names = role_opt_names;
	uint64_t ctrl_mask[RTE_MAX_LCORE / 64] = {0};
	int cur = -1; /* role index, SPINNIC_ROLE_MAX = ctrl */
	bool ctrl = false;
	const char *p = s;
	unsigned i, n;

	if (*s == '\0')
		return -EINVAL;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		const char *eq;
		size_t len;

		if (end == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		eq = memchr(p, '=', len);
		if (eq != NULL) {
			size_t nlen = (size_t)(eq - p);

			cur = -1;
			for (i = 0; i < RTE_DIM(role_opt_names); i++)
				if (strlen(names[i]) == nlen &&
				    memcmp(p, names[i], nlen) == 0)
					cur = (int)i;
			if (nlen == 4 && memcmp(p, "ctrl", 4) == 0)
				cur = SPINNIC_ROLE_MAX;
			if (cur < 0) {
				fprintf(stderr, "spinnic: --lcore-roles: unknown role '%.*s' (inbound, outbound, hpu, ctrl)\n",
					(int)nlen, p);
				return -EINVAL;
			}
			if (cur < SPINNIC_ROLE_MAX &&
			    (cfg->roles_given & (1u << cur))) {
				fprintf(stderr, "spinnic: --lcore-roles: role '%s' given twice\n",
					names[cur]);
				return -EINVAL;
			}
			if (cur == SPINNIC_ROLE_MAX && ctrl) {
				fprintf(stderr, "spinnic: --lcore-roles: role 'ctrl' given twice\n");
				return -EINVAL;
			}
			len -= nlen + 1;
			p = eq + 1;
		} else if (cur < 0) {
			fprintf(stderr, "spinnic: --lcore-roles: expected role=lcores at '%s'\n",
				p);
			return -EINVAL;
		}
		if (parse_lcore_range(p, len, cur == SPINNIC_ROLE_MAX ?
				      ctrl_mask : cfg->role_mask[cur]) < 0) {
			fprintf(stderr, "spinnic: --lcore-roles: bad lcore list '%.*s' (ids or ranges below %u)\n",
				(int)len, p, RTE_MAX_LCORE);
			return -EINVAL;
		}
		if (cur == SPINNIC_ROLE_MAX)
			ctrl = true;
		else
			cfg->roles_given |= 1u << cur;
		p = *end == ',' ? end + 1 : end;
		if (*end == ',' && *p == '\0') {
			fprintf(stderr, "spinnic: --lcore-roles: trailing ','\n");
			return -EINVAL;
		}
	}
	if (ctrl) {
		n = 0;
		for (i = 0; i < RTE_MAX_LCORE; i++)
			if (ctrl_mask[i / 64] & (1ull << (i % 64))) {
				cfg->ctrl_lcore = (int)i;
				n++;
			}
		if (n != 1) {
			fprintf(stderr, "spinnic: --lcore-roles: ctrl takes exactly one lcore\n");
			return -EINVAL;
		}
	}
	return 0;
}

static void
cfg_defaults(struct spinnic_cfg *cfg)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	memset(cfg, 0, sizeof(*cfg));
	cfg->payload = DEFAULT_PAYLOAD;
	cfg->nic_mem = DEFAULT_NIC_MEM;
	cfg->hpus = DEFAULT_HPUS;
	cfg->udp_port = DEFAULT_UDP_PORT;
	cfg->idle_sleep_us = DEFAULT_IDLE_SLEEP_US;
	cfg->ring_size = DEFAULT_RING_SIZE;
	cfg->fault_seed = 1;
	cfg->peer_timeout_ms = DEFAULT_PEER_TIMEOUT_MS;
	cfg->rto_us = DEFAULT_RTO_US;
	cfg->ctrl_lcore = -1;
	cfg->flow_isolate = -1;
	cfg->rx_queues = 1;
	cfg->handler_budget_us = DEFAULT_HANDLER_BUDGET_US;
	cfg->handler_time_every = DEFAULT_HANDLER_TIME_EVERY;
	if (xdg != NULL && xdg[0] == '/' &&
	    strlen(xdg) + sizeof("/spinnic") <= sizeof(cfg->socket_dir))
		snprintf(cfg->socket_dir, sizeof(cfg->socket_dir),
			 "%s/spinnic", xdg);
	else
		snprintf(cfg->socket_dir, sizeof(cfg->socket_dir),
			 "/run/spinnic");
}

/* Longest socket path sun_path takes: D/nodeNN.sock must fit. */
#define SUN_PATH_MAX 107

int
spinnic_options_parse(struct spinnic_cfg *cfg, int argc, char **argv)
{
	uint64_t v;
	int opt, rc = 0, rc2;
	const char *bad = NULL;
	bool dir_given = false;
	char keybad[128];

	cfg_defaults(cfg);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_VIRTUAL:
			if (parse_u64(optarg, 1, SPINNIC_NODES_MAX, &v) < 0)
				bad = "--virtual: expected 1..16";
			else
				cfg->virtual_nodes = (unsigned)v;
			break;
		case OPT_SOCKET_DIR:
			if (optarg[0] == '\0' ||
			    strlen(optarg) + sizeof("/node15.sock") >
			    SUN_PATH_MAX + 1)
				bad = "--socket-dir: empty or too long for a unix socket path";
			else {
				snprintf(cfg->socket_dir,
					 sizeof(cfg->socket_dir), "%s",
					 optarg);
				dir_given = true;
			}
			break;
		case OPT_SOCKET:
			if (optarg[0] == '\0' || strlen(optarg) > SUN_PATH_MAX)
				bad = "--socket: empty or longer than 107 bytes";
			else
				snprintf(cfg->socket_path,
					 sizeof(cfg->socket_path), "%s",
					 optarg);
			break;
		case OPT_PAYLOAD:
			/* the mbuf data room (16 bits) holds headroom,
			 * headers and payload */
			RTE_BUILD_BUG_ON(PAYLOAD_MAX + RTE_PKTMBUF_HEADROOM +
					 SPINNIC_HDR_ROOM > UINT16_MAX);
			if (parse_size(optarg, 64, PAYLOAD_MAX, &v) < 0)
				bad = "--payload: expected 64..65000 bytes";
			else
				cfg->payload = (uint32_t)v;
			break;
		case OPT_NIC_MEM:
			if (parse_size(optarg, 4096, 1ull << 40, &v) < 0)
				bad = "--nic-mem: expected 4K..1T (K/M/G suffixes)";
			else
				cfg->nic_mem = v;
			break;
		case OPT_HPUS:
			if (parse_u64(optarg, 1, SPINNIC_HPUS_MAX, &v) < 0)
				bad = "--hpus: expected 1..64";
			else
				cfg->hpus = (unsigned)v;
			break;
		case OPT_LCORE_ROLES:
			if (strlen(optarg) >= sizeof(cfg->lcore_roles)) {
				bad = "--lcore-roles: too long";
				break;
			}
			snprintf(cfg->lcore_roles, sizeof(cfg->lcore_roles),
				 "%s", optarg);
			memset(cfg->role_mask, 0, sizeof(cfg->role_mask));
			cfg->roles_given = 0;
			cfg->ctrl_lcore = -1;
			if (parse_roles(cfg, optarg) < 0)
				return -EINVAL; /* printed its own line */
			break;
		case OPT_LCORES:
			if (optarg[0] == '\0' ||
			    strlen(optarg) >= sizeof(cfg->lcores) ||
			    strspn(optarg, "0123456789,-") != strlen(optarg))
				bad = "--lcores: expected an lcore list like 0-1 or 0,2";
			else
				snprintf(cfg->lcores, sizeof(cfg->lcores),
					 "%s", optarg);
			break;
		case OPT_UDP_PORT:
			if (parse_u64(optarg, 1, UINT16_MAX, &v) < 0)
				bad = "--udp-port: expected 1..65535";
			else
				cfg->udp_port = (uint16_t)v;
			break;
		case OPT_NID_BASE:
			/* node addresses are 10.x.y.z: nids below 2^24 */
			if (parse_u64(optarg, 0, (1u << 24) - SPINNIC_NODES_MAX,
				      &v) < 0)
				bad = "--nid-base: expected 0..16777200";
			else
				cfg->nid_base = (uint32_t)v;
			break;
		case OPT_STATS_INTERVAL:
			if (parse_u64(optarg, 0, 86400, &v) < 0)
				bad = "--stats-interval: expected 0..86400 seconds";
			else
				cfg->stats_interval = (unsigned)v;
			break;
		case OPT_DURATION:
			if (parse_u64(optarg, 0, 86400 * 365, &v) < 0)
				bad = "--duration: expected seconds";
			else
				cfg->duration = (unsigned)v;
			break;
		case OPT_IDLE_SLEEP:
			if (parse_u64(optarg, 0, 1000000, &v) < 0)
				bad = "--idle-sleep-us: expected 0..1000000";
			else
				cfg->idle_sleep_us = (unsigned)v;
			break;
		case OPT_MBUFS:
			if (parse_u64(optarg, 1024, 1u << 24, &v) < 0)
				bad = "--mbufs: expected 1024..16777216";
			else
				cfg->nb_mbufs = (unsigned)v;
			break;
		case OPT_AA_PAGE:
			if (parse_size(optarg, 4096, 1ull << 30, &v) < 0 ||
			    !rte_is_power_of_2((uint32_t)v))
				bad = "--aa-page-size: expected a power of two in 4K..1G";
			else
				cfg->aa_page = v;
			break;
		case OPT_AA_IOTLB:
			if (parse_iotlb(optarg, cfg->aa_iotlb) < 0)
				bad = "--aa-iotlb: expected ENTRIES[,WAYS[,lru|rnd]], powers of two, ENTRIES <= 65536, WAYS <= ENTRIES";
			break;
		case OPT_MAX_TRIG:
			if (parse_u64(optarg, 64, 65536, &v) < 0)
				bad = "--max-triggered-ops: expected 64..65536";
			else
				cfg->max_trig = (unsigned)v;
			break;
		case OPT_RING_SIZE:
			if (parse_u64(optarg, 64, 16384, &v) < 0 ||
			    !rte_is_power_of_2((uint32_t)v))
				bad = "--ring-size: expected a power of two in 64..16384";
			else
				cfg->ring_size = (unsigned)v;
			break;
		case OPT_RX_LOSS:
			if (parse_prob(optarg,
				       &cfg->faults[SPINNIC_FAULT_RX].loss) < 0)
				bad = "--rx-loss: expected a probability 0..1";
			break;
		case OPT_RX_REORDER:
			if (parse_u64(optarg, 0, ENG_FAULT_WIN_OPT, &v) < 0)
				bad = "--rx-reorder: expected a window of 0..32 packets";
			else
				cfg->faults[SPINNIC_FAULT_RX].reorder = (unsigned)v;
			break;
		case OPT_RX_DUP:
			if (parse_prob(optarg,
				       &cfg->faults[SPINNIC_FAULT_RX].dup) < 0)
				bad = "--rx-dup: expected a probability 0..1";
			break;
		case OPT_FAULT_INJECT:
			rc2 = parse_fault_inject(optarg, cfg);
			if (rc2 == -ERANGE)
				bad = "--fault-inject: loss + dup + corrupt exceed 100 percent";
			else if (rc2 < 0)
				bad = "--fault-inject: expected [rx:|tx:]loss=P,dup=P,corrupt=P,reorder=N (P percent 0..100, N packets 0..32)";
			break;
		case OPT_PEER_TIMEOUT:
			if (parse_u64(optarg, 10, 3600000, &v) < 0)
				bad = "--peer-timeout-ms: expected 10..3600000";
			else
				cfg->peer_timeout_ms = (unsigned)v;
			break;
		case OPT_RTO:
			if (parse_u64(optarg, 10, 1000000, &v) < 0)
				bad = "--rto-us: expected 10..1000000";
			else
				cfg->rto_us = (unsigned)v;
			break;
		case OPT_FAULT_SEED:
			if (parse_u64(optarg, 0, UINT64_MAX, &cfg->fault_seed) < 0)
				bad = "--fault-seed: expected an unsigned integer";
			break;
		case OPT_XDP_RESET:
			if (optarg[0] == '\0' ||
			    strlen(optarg) >= SPINNIC_IFNAMSIZ ||
			    strchr(optarg, '/') != NULL)
				bad = "--xdp-reset: expected an interface name (at most 15 bytes)";
			else if (cfg->nb_xdp_reset == SPINNIC_NODES_MAX)
				bad = "--xdp-reset: given more than 16 times";
			else
				snprintf(cfg->xdp_reset[cfg->nb_xdp_reset++],
					 SPINNIC_IFNAMSIZ, "%s", optarg);
			break;
		case OPT_FLOW_ISOLATE:
			cfg->flow_isolate = 1;
			break;
		case OPT_NO_FLOW_ISOLATE:
			cfg->flow_isolate = 0;
			break;
		case OPT_RX_QUEUES:
			if (parse_u64(optarg, 1, SPINNIC_RXQ_MAX, &v) < 0)
				bad = "--rx-queues: expected 1..16";
			else
				cfg->rx_queues = (unsigned)v;
			break;
		case OPT_CAPTURE:
			cfg->capture = true;
			break;
		case OPT_NIC_MEM_PER_CLIENT:
			if (parse_size(optarg, 64, 1ull << 40, &v) < 0)
				bad = "--nic-mem-per-client: expected 64..1T bytes (K/M/G suffixes)";
			else
				cfg->nic_mem_per_client = v;
			break;
		case OPT_ALLOW_UID:
			rc2 = parse_allow_uid(optarg, cfg);
			if (rc2 == -ENOENT)
				bad = "--allow-uid: no such user";
			else if (rc2 == -E2BIG)
				bad = "--allow-uid: more than 32 uids";
			else if (rc2 < 0)
				bad = "--allow-uid: expected any, or uids or user names separated by commas";
			break;
		case OPT_WIRE_KEY:
			rc2 = spinnic_wire_key_load(optarg, cfg->wire_key);
			cfg->wire_keyed = rc2 == 0;
			if (rc2 == -EPERM)
				bad = "--wire-key: group or others may access the file: chmod 600 it (as for an ssh key)";
			else if (rc2 == -EMSGSIZE)
				bad = "--wire-key: under 32 bytes of secret (raw bytes, or 64 hex digits; openssl rand -hex 32 makes one)";
			else if (rc2 == -EFBIG)
				bad = "--wire-key: over 4096 bytes of secret";
			else if (rc2 == -EINVAL)
				bad = "--wire-key: not a regular file";
			else if (rc2 == -EIO)
				bad = "--wire-key: key derivation failed (libcrypto)";
			else if (rc2 < 0) {
				snprintf(keybad, sizeof(keybad),
					 "--wire-key: %s", strerror(-rc2));
				bad = keybad;
			}
			break;
		case OPT_HANDLERS:
			/* loaded (and refused) by plugins.c after parsing */
			if (optarg[0] == '\0' || strlen(optarg) >= PATH_MAX)
				bad = "--handlers: expected a plugin file or a folder of them";
			else if (cfg->nb_handler_paths ==
				 SPINNIC_HANDLER_PATHS_MAX)
				bad = "--handlers: given more than 16 times";
			else
				cfg->handler_paths[cfg->nb_handler_paths++] =
					optarg;
			break;
		case OPT_HANDLER_BUDGET:
			if (parse_u64(optarg, 0, 10000000, &v) < 0)
				bad = "--handler-budget-us: expected 0..10000000 microseconds";
			else
				cfg->handler_budget_us = (unsigned)v;
			break;
		case OPT_HANDLER_TIME_EVERY:
			if (parse_u64(optarg, 0, 1u << 20, &v) < 0)
				bad = "--handler-time-every: expected 0..1048576";
			else
				cfg->handler_time_every = (unsigned)v;
			break;
		case OPT_HANDLER_TRACE:
			if (parse_u64(optarg, 0, SPIN_TRACE_MAX, &v) < 0)
				bad = "--handler-trace: expected 0..4096 entries";
			else
				cfg->handler_trace = (unsigned)v;
			break;
		case 'h':
		case OPT_HELP:
			spinnic_options_usage(stdout, argv[0]);
			return 1;
		case ':':
			fprintf(stderr, "spinnic: option %s needs a value (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		default:
			fprintf(stderr, "spinnic: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return -EINVAL;
		}
		if (bad != NULL) {
			fprintf(stderr, "spinnic: %s, got '%s'\n", bad, optarg);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "spinnic: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return -EINVAL;
	}
	if (cfg->socket_path[0] != '\0' && cfg->virtual_nodes > 1) {
		fprintf(stderr, "spinnic: --socket names one socket but --virtual %u makes %u nodes; use --socket-dir\n",
			cfg->virtual_nodes, cfg->virtual_nodes);
		return -EINVAL;
	}
	if (cfg->socket_path[0] != '\0' && dir_given) {
		fprintf(stderr, "spinnic: --socket and --socket-dir exclude each other\n");
		return -EINVAL;
	}
	if (cfg->rx_queues > 1 && cfg->virtual_nodes > 0) {
		fprintf(stderr, "spinnic: --rx-queues %u: virtual nodes have one RX ring each; it applies to probed ports\n",
			cfg->rx_queues);
		return -EINVAL;
	}
	{
		const struct spinnic_fault_cfg *rx =
			&cfg->faults[SPINNIC_FAULT_RX];

		if (rx->loss + rx->dup + rx->corrupt > 1.0) {
			fprintf(stderr, "spinnic: --rx-loss + --rx-dup exceed 1\n");
			return -EINVAL;
		}
	}
	return rc;
}

/* ---- checks against this machine, before the EAL ----------------------- */

#define LCORE_WORDS (RTE_MAX_LCORE / 64)

static bool
mask_has(const uint64_t *mask, unsigned lcore)
{
	return lcore < RTE_MAX_LCORE &&
		(mask[lcore / 64] >> (lcore % 64)) & 1;
}

/* "0-1,4": ids and ranges separated by commas, as the EAL's -l. */
static int
parse_lcore_list(const char *s, size_t len, uint64_t *mask)
{
	const char *end = s + len;

	if (len == 0)
		return -EINVAL;
	while (s < end) {
		const char *c = memchr(s, ',', (size_t)(end - s));
		size_t n = (size_t)((c != NULL ? c : end) - s);

		if (parse_lcore_range(s, n, mask) < 0)
			return -EINVAL;
		s += n;
		if (c != NULL && ++s == end)
			return -EINVAL;
	}
	return 0;
}

/* The EAL's -c: a hex mask, lcore i for bit i. */
static int
parse_lcore_hexmask(const char *s, uint64_t *mask)
{
	size_t len, i;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	len = strlen(s);
	if (len == 0 || strspn(s, "0123456789abcdefABCDEF") != len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		char ch = s[len - 1 - i];
		unsigned d = ch <= '9' ? (unsigned)(ch - '0') :
			     (unsigned)((ch | 0x20) - 'a' + 10);
		unsigned b;

		for (b = 0; b < 4; b++)
			if (d & (1u << b)) {
				if (i * 4 + b >= RTE_MAX_LCORE)
					return -EINVAL;
				mask_set(mask, (unsigned)(i * 4 + b));
			}
	}
	return 0;
}

/* The EAL's --lcores: "lcores[@cpus],..." where lcores and cpus are an id,
 * a range or a "(list)"; only the lcore ids are kept. */
static int
parse_lcore_map(const char *s, uint64_t *mask)
{
	while (*s != '\0') {
		const char *e;

		if (*s == '(') {
			e = strchr(s, ')');
			if (e == NULL ||
			    parse_lcore_list(s + 1, (size_t)(e - s - 1),
					     mask) < 0)
				return -EINVAL;
			s = e + 1;
		} else {
			e = s + strcspn(s, ",@");
			if (parse_lcore_range(s, (size_t)(e - s), mask) < 0)
				return -EINVAL;
			s = e;
		}
		if (*s == '@') {
			s++;
			if (*s == '(') {
				e = strchr(s, ')');
				if (e == NULL)
					return -EINVAL;
				s = e + 1;
			} else {
				s += strcspn(s, ",");
			}
		}
		if (*s == ',') {
			if (*++s == '\0')
				return -EINVAL;
		} else if (*s != '\0') {
			return -EINVAL;
		}
	}
	return 0;
}

/* The CPUs this process may run on, as lcore ids (the EAL's default
 * without -l/-c/--lcores: lcore i on CPU i). */
static int
affinity_mask(uint64_t *mask)
{
	cpu_set_t set;
	unsigned i;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	for (i = 0; i < RTE_MAX_LCORE && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			mask_set(mask, i);
	return 0;
}

/* The CPUs of this machine, as the EAL detects them (a topology entry in
 * sysfs). @return 0, or -ENOENT when sysfs does not say. */
static int
detected_mask(uint64_t *mask)
{
	char path[80];
	unsigned i, n = 0;

	for (i = 0; i < RTE_MAX_LCORE; i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%u/topology/core_id", i);
		if (access(path, F_OK) == 0) {
			mask_set(mask, i);
			n++;
		}
	}
	return n > 0 ? 0 : -ENOENT;
}

/* "0-1,4" of a mask, for messages. */
static const char *
mask_str(const uint64_t *mask, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i = 0, j;

	buf[0] = '\0';
	while (i < RTE_MAX_LCORE && n + 1 < len) {
		if (!mask_has(mask, i)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < RTE_MAX_LCORE && mask_has(mask, j + 1);
		     j++)
			;
		n += (size_t)snprintf(buf + n, len - n,
				      j > i ? "%s%u-%u" : "%s%u",
				      n > 0 ? "," : "", i, j);
		i = j + 1;
	}
	if (n >= len)
		snprintf(buf + len - 4, 4, "...");
	return buf;
}

/*
 * The lcores the EAL will have: its -l, -c or --lcores among the user's
 * EAL args (the last one wins, as in the EAL), ours (--lcores, else 0)
 * when spinnic builds them, else every CPU this process may run on.
 * @param src_p what they come from, for messages
 * @return 0; -EINVAL when our own --lcores cannot be read (printed);
 *   -ENOENT when an EAL list cannot be read here (the EAL will say)
 */
static int
eal_lcore_mask(const struct spinnic_cfg *cfg, int argc, char **argv,
	       uint64_t *mask, const char **src_p)
{
	const char *list = NULL, *map = NULL, *hex = NULL;
	char cpus[64];
	uint64_t cpu_mask[LCORE_WORDS] = {0};
	int i, sep = -1;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (sep <= 1) {
		list = cfg->lcores[0] != '\0' ? cfg->lcores : "0";
		*src_p = cfg->lcores[0] != '\0' ? "--lcores" :
			 "spinnic's default -l 0";
		if (parse_lcore_list(list, strlen(list), mask) < 0) {
			fprintf(stderr, "spinnic: --lcores: expected lcore ids and ranges below %u, got '%s'\n",
				RTE_MAX_LCORE, list);
			return -EINVAL;
		}
		/* -l i runs lcore i on CPU i, which must exist */
		if (detected_mask(cpu_mask) == 0)
			for (i = 0; i < RTE_MAX_LCORE; i++)
				if (mask_has(mask, (unsigned)i) &&
				    !mask_has(cpu_mask, (unsigned)i)) {
					fprintf(stderr, "spinnic: --lcores %s: CPU %d does not exist (CPUs %s)\n",
						list, i,
						mask_str(cpu_mask, cpus,
							 sizeof(cpus)));
					return -EINVAL;
				}
		return 0;
	}
	for (i = 1; i < sep; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < sep ? argv[i + 1] : NULL;

		if (strcmp(a, "-l") == 0 || strcmp(a, "-c") == 0 ||
		    strcmp(a, "--lcores") == 0) {
			if (v == NULL)
				return -ENOENT;
			i++;
		} else if (strncmp(a, "-l", 2) == 0 ||
			   strncmp(a, "-c", 2) == 0) {
			v = a + 2;
		} else if (strncmp(a, "--lcores=", 9) == 0) {
			v = a + 9;
		} else {
			continue;
		}
		list = map = hex = NULL;
		if (a[1] == 'l')
			list = v;
		else if (a[1] == 'c')
			hex = v;
		else
			map = v;
	}
	if (list != NULL) {
		*src_p = "the EAL's -l";
		return parse_lcore_list(list, strlen(list), mask) < 0 ?
			-ENOENT : 0;
	}
	if (hex != NULL) {
		*src_p = "the EAL's -c";
		return parse_lcore_hexmask(hex, mask) < 0 ? -ENOENT : 0;
	}
	if (map != NULL) {
		*src_p = "the EAL's --lcores";
		return parse_lcore_map(map, mask) < 0 ? -ENOENT : 0;
	}
	*src_p = "the CPUs this process may run on";
	return affinity_mask(mask) < 0 ? -ENOENT : 0;
}

/* The socket directory exists as a directory, or can be made one (as
 * ctrl.c's dir_make does, parents included); --socket's directory exists. */
static int
socket_dir_check(const struct spinnic_cfg *cfg)
{
	const char *opt = cfg->socket_path[0] != '\0' ? "--socket" :
			  "--socket-dir";
	char path[PATH_MAX], *slash;
	struct stat st;

	if (cfg->socket_path[0] != '\0') {
		snprintf(path, sizeof(path), "%s", cfg->socket_path);
		slash = strrchr(path, '/');
		if (slash == NULL)
			return 0;
		*(slash == path ? slash + 1 : slash) = '\0';
		if (stat(path, &st) != 0) {
			fprintf(stderr, "spinnic: %s %s: its directory %s: %s\n",
				opt, cfg->socket_path, path, strerror(errno));
			return -EINVAL;
		}
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "spinnic: %s %s: %s is not a directory\n",
				opt, cfg->socket_path, path);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(path, sizeof(path), "%s", cfg->socket_dir);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		fprintf(stderr, "spinnic: %s %s: exists and is not a directory\n",
			opt, cfg->socket_dir);
		return -EINVAL;
	}
	if (errno != ENOENT) {
		fprintf(stderr, "spinnic: %s %s: %s\n", opt, cfg->socket_dir,
			strerror(errno));
		return -EINVAL;
	}
	/* missing: the nearest existing parent must be a directory we may
	 * create entries in */
	for (;;) {
		slash = strrchr(path, '/');
		if (slash == NULL) {
			snprintf(path, sizeof(path), ".");
		} else {
			*(slash == path ? slash + 1 : slash) = '\0';
		}
		if (stat(path, &st) == 0)
			break;
		if (errno != ENOENT || slash == NULL || slash == path) {
			fprintf(stderr, "spinnic: %s %s: %s: %s\n", opt,
				cfg->socket_dir, path, strerror(errno));
			return -EINVAL;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "spinnic: %s %s: %s is not a directory\n",
			opt, cfg->socket_dir, path);
		return -EINVAL;
	}
	if (faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) != 0) {
		fprintf(stderr, "spinnic: %s %s: cannot create it in %s: %s\n",
			opt, cfg->socket_dir, path, strerror(errno));
		return -EINVAL;
	}
	return 0;
}

int
spinnic_options_check(const struct spinnic_cfg *cfg, int argc, char **argv)
{
	uint64_t eal[LCORE_WORDS] = {0};
	const char *src = "";
	char buf[64];
	unsigned r, i;
	int rc;

	rc = eal_lcore_mask(cfg, argc, argv, eal, &src);
	if (rc == -EINVAL)
		return rc;
	if (rc == 0) {
		for (r = 0; r < SPINNIC_ROLE_MAX; r++)
			for (i = 0; i < RTE_MAX_LCORE; i++)
				if (mask_has(cfg->role_mask[r], i) &&
				    !mask_has(eal, i)) {
					fprintf(stderr, "spinnic: --lcore-roles: %s lcore %u is not an EAL lcore (EAL lcores %s, from %s)\n",
						role_opt_names[r], i,
						mask_str(eal, buf,
							 sizeof(buf)), src);
					return -EINVAL;
				}
		if (cfg->ctrl_lcore >= 0 &&
		    !mask_has(eal, (unsigned)cfg->ctrl_lcore)) {
			fprintf(stderr, "spinnic: --lcore-roles: ctrl lcore %d is not an EAL lcore (EAL lcores %s, from %s)\n",
				cfg->ctrl_lcore, mask_str(eal, buf,
							  sizeof(buf)), src);
			return -EINVAL;
		}
	}
	return socket_dir_check(cfg);
}

/* MiB of free hugepages of the default size, or 0. */
static uint64_t
huge_free_mb(void)
{
	unsigned long long free_pages = 0, page_kb = 0, v;
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			free_pages = v;
		else if (sscanf(line, "Hugepagesize: %llu kB", &v) == 1)
			page_kb = v;
	}
	fclose(f);
	return free_pages * page_kb / 1024;
}

static int
args_push(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, sizeof(**v) * (size_t)(*n + 2));

	if (nv == NULL)
		return -ENOMEM;
	nv[*n] = strdup(s);
	if (nv[*n] == NULL) {
		*v = nv;
		return -ENOMEM;
	}
	nv[++*n] = NULL;
	*v = nv;
	return 0;
}

int
spinnic_eal_args(const struct spinnic_cfg *cfg, int argc, char **argv,
		 char ***argv_p)
{
	char **v = NULL;
	char buf[64];
	int n = 0, i, sep = -1, rc = 0;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	rc |= args_push(&v, &n, argv[0]);
	if (sep > 1) {
		/* the user's EAL args, untouched */
		for (i = 1; i < sep; i++)
			rc |= args_push(&v, &n, argv[i]);
	} else {
		const char *lcores = "0";
		uint64_t huge_mb = huge_free_mb();
		int j;

		/* --lcores among our own options picks the EAL's -l */
		for (j = sep < 0 ? 1 : sep + 1; j < argc; j++) {
			if (strcmp(argv[j], "--lcores") == 0 && j + 1 < argc)
				lcores = argv[j + 1];
			else if (strncmp(argv[j], "--lcores=", 9) == 0)
				lcores = argv[j] + 9;
		}
		rc |= args_push(&v, &n, "-l");
		rc |= args_push(&v, &n, lcores);
		rc |= args_push(&v, &n, "--no-pci");
		snprintf(buf, sizeof(buf), "--file-prefix=spinnic%d",
			 (int)getpid());
		rc |= args_push(&v, &n, buf);
		if (cfg->capture) {
			/* secondaries (dpdk-dumpcap) map the primary's
			 * hugepage files: shared config, hugetlbfs */
			if (huge_mb < HUGE_MIN_MB)
				fprintf(stderr, "spinnic: --capture: %" PRIu64 " MiB of hugepages free (need %llu): the EAL may fail\n",
					huge_mb, HUGE_MIN_MB);
		} else if (huge_mb >= HUGE_MIN_MB) {
			/* --in-memory maps hugepages anonymously: no mount
			 * needed */
			rc |= args_push(&v, &n, "--in-memory");
		} else {
			/* pools are ~40 MiB per node at the defaults */
			unsigned mem_mb = RTE_MAX(512u,
				128u + 64u * cfg->virtual_nodes);

			snprintf(buf, sizeof(buf), "%u", mem_mb);
			fprintf(stderr, "spinnic: %" PRIu64 " MiB of hugepages free (need %llu): running on ordinary pages (--no-huge --no-shconf -m %s)\n",
				huge_mb, HUGE_MIN_MB, buf);
			rc |= args_push(&v, &n, "--no-huge");
			rc |= args_push(&v, &n, "--no-shconf");
			rc |= args_push(&v, &n, "-m");
			rc |= args_push(&v, &n, buf);
		}
	}
	if (rc != 0) {
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return -ENOMEM;
	}
	*argv_p = v;
	return n;
}
