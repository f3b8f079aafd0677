/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench auth: what the authenticated wire (spinnic --wire-key,
 * doc/NOTES.md) costs. A real `spinnic --virtual 2 --idle-sleep-us 0` is
 * started without and with a key, in rounds (ABBA order: plain, keyed,
 * keyed, plain, ...), so both see the same machine. In each, one client
 * of node 0 (a forked child, alone on the CPUs off the lcore, busy-polling
 * its EQ) puts to its own MEs: every frame goes through the outbound role
 * (sealed there when keyed), the port, the switch and the inbound role
 * (verified there), so each packet costs one MAC and one check.
 *
 *  latency   one-way put latency (PtlPut to the PUT event at the target),
 *            of 1 byte and of one full packet (--payload bytes)
 *  put       throughput: --burst puts of --bytes each back to back, from
 *            the first PtlPut to the last PUT event
 *
 * Rows: plain and keyed medians over every round, ratio = keyed / plain,
 * cost_pct = the keyed extra time in percent (of a put for latency, of a
 * byte for throughput); the throughput row also carries the streaming
 * copy limit of the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <portals4.h>
#include <spin.h>

#include "bench.h"

#define EVENT_TIMEOUT_S 30.0
#define MATCH_LAT 1u
#define MATCH_PUT 2u

enum { V_PLAIN, V_KEYED, V_COUNT };
enum { M_LAT1, M_LATP, M_PUT, M_COUNT };

static struct {
	long iters;     /* latency puts per size, per round and variant */
	long warmup;
	long rounds;
	long samples;   /* throughput samples per round and variant */
	long burst;     /* puts in flight per sample */
	long payload;   /* spinnic --payload */
	const char *spinnic;
	const char *spinnic_log;
} acfg = { 2000, 200, 4, 20, 8, 2048, NULL, NULL };

static const struct bench_cmd_opt auth_opts[] = {
	{ "iters", 1, "timed latency puts per size, round and variant "
		      "(default 2000)" },
	{ "warmup", 1, "untimed puts first, per spinnic (default 200)" },
	{ "rounds", 1, "rounds of one plain and one keyed spinnic, ABBA order "
		       "(default 4)" },
	{ "samples", 1, "throughput samples per round and variant (default "
			"20)" },
	{ "burst", 1, "puts in flight per throughput sample (default 8); "
		      "--bytes each (default 262144)" },
	{ "payload", 1, "spinnic --payload: bytes per packet, also the size "
			"of the one-packet latency put (default 2048)" },
	{ "spinnic", 1, "spinnic binary (default: <build>/app/spinnic/spinnic "
			"beside this one)" },
	{ "spinnic-log", 1, "keep the output (final counters) of the last "
			    "keyed spinnic in this file" },
	{ NULL, 0, NULL },
};

static int
auth_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "iters", &acfg.iters, 1, 10000000 },
		{ "warmup", &acfg.warmup, 0, 10000000 },
		{ "rounds", &acfg.rounds, 1, 100 },
		{ "samples", &acfg.samples, 1, 100000 },
		{ "burst", &acfg.burst, 1, 64 },
		{ "payload", &acfg.payload, 256, 9000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		acfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		acfg.spinnic_log = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- the client (a child per spinnic) ------------------------------------ */

struct client {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	uint8_t *src, *lat_win, *put_win;
	uint64_t bytes;
	int verify;
};

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("auth client: %s: %s", #call, spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

static int
me_add(struct client *c, void *buf, uint64_t len, uint64_t match)
{
	ptl_handle_me_t h;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = len;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = match;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
		PTL_ME_EVENT_UNLINK_DISABLE;
	CHECK_PTL(PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL, &h));
	return 0;
}

static int
client_open(struct client *c, uint64_t bytes, int verify)
{
	ptl_ni_limits_t lim;
	ptl_md_t md;

	memset(c, 0, sizeof(*c));
	c->bytes = bytes;
	c->verify = verify;
	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &c->ni));
	CHECK_PTL(PtlGetPhysId(c->ni, &c->self));
	CHECK_PTL(PtlEQAlloc(c->ni, 4096, &c->eq));
	CHECK_PTL(PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt));
	c->src = spin_host_alloc(bytes);
	c->lat_win = spin_host_alloc((uint64_t)acfg.payload);
	c->put_win = spin_host_alloc(bytes);
	if (c->src == NULL || c->lat_win == NULL || c->put_win == NULL) {
		bench_err("auth client: spin_host_alloc: %s", strerror(errno));
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < bytes; i++)
		c->src[i] = (uint8_t)(i * 131 + 7);
	if (me_add(c, c->lat_win, (uint64_t)acfg.payload, MATCH_LAT) < 0 ||
	    me_add(c, c->put_win, bytes, MATCH_PUT) < 0)
		return -EIO;
	memset(&md, 0, sizeof(md));
	md.start = c->src;
	md.length = bytes;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(c->ni, &md, &c->md));
	return 0;
}

static int
put(struct client *c, uint64_t len, uint64_t match)
{
	CHECK_PTL(PtlPut(c->md, 0, len, PTL_NO_ACK_REQ, c->self, c->pt, match,
			 0, NULL, 0));
	return 0;
}

/* the next PUT event (busy-polled: this process has its own CPU) */
static int
put_event(struct client *c, uint64_t len)
{
	double t0 = 0;
	unsigned spins = 0;
	ptl_event_t ev;
	int rc;

	while ((rc = PtlEQGet(c->eq, &ev)) == PTL_EQ_EMPTY) {
		if (++spins % 65536 == 0) {
			if (t0 == 0)
				t0 = bench_now();
			else if (bench_now() - t0 > EVENT_TIMEOUT_S) {
				bench_err("auth client: no event within %.0f s",
					  EVENT_TIMEOUT_S);
				return -ETIMEDOUT;
			}
		}
	}
	if (rc != PTL_OK || ev.type != PTL_EVENT_PUT ||
	    ev.ni_fail_type != PTL_NI_OK || ev.mlength != len) {
		bench_err("auth client: unexpected event %d (rc %d, "
			  "ni_fail_type %d, mlength %" PRIu64 ")", (int)ev.type,
			  rc, (int)ev.ni_fail_type, (uint64_t)ev.mlength);
		return -EIO;
	}
	return 0;
}

/* one latency put of @p len; @return microseconds, < 0 on failure */
static double
lat_one(struct client *c, uint64_t len, long i)
{
	double t0, t1;

	c->src[0] = (uint8_t)i;
	t0 = bench_now();
	if (put(c, len, MATCH_LAT) < 0 || put_event(c, len) < 0)
		return -1;
	t1 = bench_now();
	if (c->lat_win[0] != (uint8_t)i ||
	    (c->verify && memcmp(c->lat_win, c->src, len) != 0)) {
		bench_err("auth client: latency put %ld: wrong bytes", i);
		return -1;
	}
	return (t1 - t0) * 1e6;
}

/* one throughput sample; @return Gbit/s, < 0 on failure */
static double
put_burst(struct client *c)
{
	double t0, t1;
	long k;

	t0 = bench_now();
	for (k = 0; k < acfg.burst; k++)
		if (put(c, c->bytes, MATCH_PUT) < 0)
			return -1;
	for (k = 0; k < acfg.burst; k++)
		if (put_event(c, c->bytes) < 0)
			return -1;
	t1 = bench_now();
	if (c->verify && memcmp(c->put_win, c->src, c->bytes) != 0) {
		bench_err("auth client: throughput put: wrong bytes");
		return -1;
	}
	return bench_gbit_s((int64_t)c->bytes * acfg.burst, t1 - t0);
}

/* The child's work: latency of both sizes interleaved, then throughput;
 * results (doubles) written to @p fd in that order. */
static int
client_run(int fd, uint64_t bytes, int verify)
{
	long n = acfg.iters * 2 + acfg.samples;
	struct client c;
	double *r = calloc((size_t)n, sizeof(double));
	long i;
	int rc;

	if (r == NULL)
		return -ENOMEM;
	rc = client_open(&c, bytes, verify);
	for (i = 0; rc == 0 && i < 2 * acfg.warmup; i++)
		if (lat_one(&c, i & 1 ? (uint64_t)acfg.payload : 1, i) < 0)
			rc = -EIO;
	for (i = 0; rc == 0 && i < 2; i++)
		if (put_burst(&c) < 0)
			rc = -EIO;
	for (i = 0; rc == 0 && i < 2 * acfg.iters; i++) {
		/* 1 byte, one packet, alternating */
		r[(i & 1) * acfg.iters + i / 2] =
			lat_one(&c, i & 1 ? (uint64_t)acfg.payload : 1, i);
		if (r[(i & 1) * acfg.iters + i / 2] < 0)
			rc = -EIO;
	}
	for (i = 0; rc == 0 && i < acfg.samples; i++) {
		r[2 * acfg.iters + i] = put_burst(&c);
		if (r[2 * acfg.iters + i] < 0)
			rc = -EIO;
	}
	if (rc == 0 && write(fd, r, (size_t)n * sizeof(double)) !=
	    (ssize_t)((size_t)n * sizeof(double)))
		rc = -EIO;
	free(r);
	PtlNIFini(c.ni);
	PtlFini();
	return rc;
}

/* ---- the rounds ----------------------------------------------------------- */

/* One spinnic (keyed or not) and one client; its samples appended. */
static int
one_spinnic(const char *key, uint64_t bytes, int verify, double *lat1,
	    double *latp, double *gbit)
{
	long n = acfg.iters * 2 + acfg.samples;
	char payload[16], sock[400];
	const char *extra[6];
	struct bench_spinnic nic = { .pid = -1 };
	double *r = NULL;
	int pfd[2] = { -1, -1 }, rc, st;
	pid_t child;
	unsigned k = 0;

	snprintf(payload, sizeof(payload), "%ld", acfg.payload);
	extra[k++] = "--payload";
	extra[k++] = payload;
	if (key != NULL) {
		extra[k++] = "--wire-key";
		extra[k++] = key;
	}
	extra[k] = NULL;
	rc = bench_spinnic_start(&nic, acfg.spinnic, extra);
	if (rc < 0)
		goto out;
	if (key != NULL) {
		char *t = NULL;
		FILE *f = fopen(nic.log, "r");
		size_t len = 0;

		if (f != NULL && getdelim(&t, &len, '\0', f) > 0 &&
		    strstr(t, "wire: authenticated") == NULL) {
			bench_err("spinnic --wire-key did not say it "
				  "authenticates");
			rc = -EIO;
		}
		free(t);
		if (f != NULL)
			fclose(f);
		if (rc < 0)
			goto out;
	}
	r = calloc((size_t)n, sizeof(double));
	if (r == NULL || pipe(pfd) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		rc = -errno;
		goto out;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		_exit(client_run(pfd[1], bytes, verify) == 0 ? 0 : 1);
	}
	close(pfd[1]);
	pfd[1] = -1;
	rc = bench_io_all(pfd[0], r, (size_t)n * sizeof(double), false);
	if (rc < 0)
		kill(child, SIGKILL);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		if (rc == 0)
			bench_err("auth client failed (status 0x%x)", st);
		rc = -EIO;
	}
	if (rc == 0) {
		memcpy(lat1, r, (size_t)acfg.iters * sizeof(double));
		memcpy(latp, r + acfg.iters, (size_t)acfg.iters *
		       sizeof(double));
		memcpy(gbit, r + 2 * acfg.iters, (size_t)acfg.samples *
		       sizeof(double));
	}
out:
	for (int i = 0; i < 2; i++)
		if (pfd[i] >= 0)
			close(pfd[i]);
	free(r);
	bench_spinnic_stop(&nic, key != NULL ? acfg.spinnic_log : NULL);
	return rc;
}

/* A fresh key file (mode 0600) in a fresh directory. */
static int
key_make(char *dir, size_t dlen, char *path, size_t plen)
{
	const char *tmp = getenv("TMPDIR");
	uint8_t k[32];
	char hex[66];
	int fd, rnd;

	snprintf(dir, dlen, "%s/spinnic-bench-key-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		bench_err("mkdtemp %s: %s", dir, strerror(errno));
		return -EIO;
	}
	snprintf(path, plen, "%s/wire.key", dir);
	rnd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (rnd < 0 || read(rnd, k, sizeof(k)) != (ssize_t)sizeof(k)) {
		bench_err("/dev/urandom: %s", strerror(errno));
		if (rnd >= 0)
			close(rnd);
		return -EIO;
	}
	close(rnd);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", k[i]);
	hex[64] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, hex, 65) != 65) {
		bench_err("%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static int
auth_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "metric", BENCH_COL_STR, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "plain", BENCH_COL_NUM, 3 },
		{ "keyed", BENCH_COL_NUM, 3 },
		{ "ratio", BENCH_COL_NUM, 3 },
		{ "cost_pct", BENCH_COL_NUM, 1 },
		{ "limit_gbit_s", BENCH_COL_NUM, 2 },
		{ "keyed_limit_ratio", BENCH_COL_NUM, 3 },
	};
	const uint64_t bytes = o->bytes > 0 ? (uint64_t)o->bytes : 262144;
	double *v[V_COUNT][M_COUNT] = { { NULL } };
	long per[M_COUNT] = { acfg.iters, acfg.iters, acfg.samples };
	char kdir[300] = "", key[400];
	struct bench_table *tab = NULL;
	double limit;
	int rc = 0, ncpus;

	if (bytes > (1ull << 30) || bytes < (uint64_t)acfg.payload) {
		bench_err("--bytes %" PRIu64 ": from --payload (%ld) to 1 GiB",
			  bytes, acfg.payload);
		return -EINVAL;
	}
	for (int a = 0; a < V_COUNT; a++)
		for (int m = 0; m < M_COUNT; m++) {
			v[a][m] = calloc((size_t)(per[m] * acfg.rounds),
					 sizeof(double));
			if (v[a][m] == NULL) {
				rc = -ENOMEM;
				goto out;
			}
		}
	bench_spinnic_signals();
	rc = key_make(kdir, sizeof(kdir), key, sizeof(key));
	if (rc < 0)
		goto out;
	ncpus = bench_clients_off_lcore();
	limit = bench_copy_limit((size_t)bytes, o->reps);
	for (long r = 0; r < acfg.rounds; r++) {
		for (int j = 0; j < V_COUNT; j++) {
			/* ABBA: plain first in even rounds */
			int a = (r & 1) ? V_COUNT - 1 - j : j;

			rc = one_spinnic(a == V_KEYED ? key : NULL, bytes,
					 o->verify,
					 v[a][M_LAT1] + r * per[M_LAT1],
					 v[a][M_LATP] + r * per[M_LATP],
					 v[a][M_PUT] + r * per[M_PUT]);
			if (rc < 0)
				goto out;
		}
	}
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int m = 0; m < M_COUNT; m++) {
		int n = (int)(per[m] * acfg.rounds);
		double p = bench_median(v[V_PLAIN][m], n);
		double k = bench_median(v[V_KEYED][m], n);

		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "metric", m == M_PUT ? "put_gbit_s" :
				    "latency_us");
		bench_table_set_int(tab, "bytes", m == M_LAT1 ? 1 :
				    m == M_LATP ? acfg.payload :
				    (int64_t)bytes);
		bench_table_set_int(tab, "samples", n);
		bench_table_set_num(tab, "plain", p);
		bench_table_set_num(tab, "keyed", k);
		bench_table_set_num(tab, "ratio", p > 0 ? k / p : 0);
		/* extra time: per put (latency), per byte (throughput) */
		if (m == M_PUT) {
			bench_table_set_num(tab, "cost_pct", k > 0 ?
					    (p / k - 1) * 100 : 0);
			bench_table_set_num(tab, "limit_gbit_s", limit);
			bench_table_set_num(tab, "keyed_limit_ratio",
					    limit > 0 ? k / limit : 0);
		} else {
			bench_table_set_num(tab, "cost_pct", p > 0 ?
					    (k / p - 1) * 100 : 0);
		}
	}
	rc = bench_table_emit(tab, o);
	printf("# spinnic --virtual 2 --idle-sleep-us 0 --payload %ld, without "
	       "and with --wire-key (AES-256-GMAC per frame), %ld rounds in "
	       "ABBA order, medians; latency: put to the PUT event at the "
	       "target (own ME, through the switch); put: %ld puts of %" PRIu64
	       " B in flight; one client busy-polls on %d CPU(s) off the "
	       "lcore%s\n", acfg.payload, acfg.rounds, acfg.burst, bytes,
	       ncpus, o->verify ? "; every byte verified" : "");
out:
	bench_table_free(tab);
	if (kdir[0] != '\0') {
		unlink(key);
		rmdir(kdir);
	}
	for (int a = 0; a < V_COUNT; a++)
		for (int m = 0; m < M_COUNT; m++)
			free(v[a][m]);
	return rc;
}

const struct bench_cmd bench_auth_cmd = {
	.name = "auth",
	.summary = "cost of the authenticated wire (--wire-key): put "
		   "latency and throughput with and without the MAC",
	.opts = auth_opts,
	.opt = auth_opt,
	.run = auth_run,
};
