/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isolation between clients of one spinnic (DESIGN §4, issue 5), each rule
 * tried by a client that attempts to break it:
 *  - the control sockets are reachable only by their owner: spinnic
 *    creates a missing --socket-dir and its missing parents 0700, each
 *    socket is 0600, and an existing directory that others can enter is
 *    reported in the log (spinnic still serves it);
 *  - memory a client does not own: an attacker names a victim's buffer
 *    address (on the same NIC) as ME, MD and get destination, and ranges
 *    that wrap; wrapping ranges are refused at bind/append, the others
 *    fail at use with failure events (host_fault counted) and the victim's
 *    bytes neither change nor leak into the attacker's memory;
 *  - --nic-mem-per-client: a client at its quota gets PTL_NO_SPACE (NIC
 *    memory blobs and execution contexts) while another client still
 *    allocates; /spinnic/clients reports its usage and quota;
 *  - the per-user policy: a client that setuid()s to nobody is refused at
 *    PtlNIInit with one line on stderr (counted: uid_denied), and its
 *    70 idle connections cannot keep root from attaching; with
 *    --allow-uid 65534 it attaches, and an ME that only root may use
 *    refuses its put (PERM_VIOLATION) while an open one takes it
 *    (root only: skipped otherwise);
 *  - a client whose process exits while a child keeps its connection
 *    open is detached (its pid could name another process by then);
 *  - after every client detached, nothing is left: no client object,
 *    region mapping, ME, NIC memory, sPIN context or mbuf (the live: line
 *    of the final counters).
 * The clients are forked children of this program linked with libspinnic.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_handler_args.h>

#include "harness.h"
#include "kid.h"

static unsigned
mode_of(const char *path, bool want_dir)
{
	struct stat st;

	ITEST_CHECK(stat(path, &st) == 0, "stat %s: %s", path,
		    strerror(errno));
	ITEST_CHECK(want_dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode),
		    "%s: not a %s", path, want_dir ? "directory" : "socket");
	ITEST_CHECK(st.st_uid == geteuid(), "%s: owner %u", path,
		    (unsigned)st.st_uid);
	return st.st_mode & 07777;
}

/* ---- clients: forked children of this test, linked with libspinnic ---- */

#define KID_EV_MS 15000
#define KID_BUF 65536u
#define NOBODY 65534u

/* Next event other than LINK/UNLINK/FREE, or -1 after the timeout. */
static int
kid_ev(struct kid_ni *n, ptl_event_t *ev)
{
	for (;;) {
		unsigned which;
		int rc = PtlEQPoll(&n->eq, 1, KID_EV_MS, ev, &which);

		if (rc != PTL_OK)
			return -1;
		if (ev->type != PTL_EVENT_LINK &&
		    ev->type != PTL_EVENT_AUTO_UNLINK &&
		    ev->type != PTL_EVENT_AUTO_FREE)
			return (int)ev->type;
	}
}

static ptl_me_t
kid_me(void *start, ptl_size_t len, ptl_match_bits_t bits, ptl_uid_t uid)
{
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = start;
	me.length = len;
	me.ct_handle = PTL_CT_NONE;
	me.uid = uid;
	me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	return me;
}

/* Whether [a, a+len) meets any mapping of this process. */
static bool
range_mapped(uint64_t a, uint64_t len)
{
	unsigned long long lo, hi;
	char line[512];
	bool hit = false;
	FILE *f = fopen("/proc/self/maps", "r");

	if (f == NULL)
		return true;
	while (!hit && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    lo < a + len && a < hi)
			hit = true;
	fclose(f);
	return hit;
}

/* ---- 1. memory a client does not own ------------------------------------ */

struct victim_arg {
	uint64_t buf;          /* filled by the parent from the kid's line */
};

/*
 * The victim: a buffer of 0xaa in its region, exposed by an ME that only
 * its own uid may use; it reports the buffer's address, waits until the
 * parent says "check", and checks every byte is still 0xaa.
 */
static int
kid_victim(struct kid *self, void *arg)
{
	struct kid_ni n;
	ptl_handle_me_t meh;
	ptl_me_t me;
	uint8_t *buf;
	char line[64];
	void *resv;

	(void)arg;
	/* keep the region away from where the attacker's lands (forked
	 * from one parent, both would otherwise map at the same address) */
	resv = mmap(NULL, 1ull << 30, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	KCHECK(self, resv != MAP_FAILED, "reserve: %s", strerror(errno));
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	buf = spin_host_alloc(KID_BUF);
	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(buf, 0xaa, KID_BUF);
	me = kid_me(buf, KID_BUF, 0x77, getuid());
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "PtlMEAppend");
	kid_say(self, "buf 0x%llx", (unsigned long long)(uintptr_t)buf);
	if (kid_line(self, line, sizeof(line), 50000) != 0)
		return 1;
	KCHECK(self, kid_bytes_all(buf, KID_BUF, 0xaa),
	       "the victim's buffer changed");
	kid_say(self, "ok");
	PtlMEUnlink(meh);
	PtlNIFini(n.ni);
	PtlFini();
	return 0;
}

/*
 * The attacker names the victim's buffer address (not mapped in its own
 * address space) as ME, MD and get destination, and ranges that wrap: the
 * appends/binds of wrapping ranges are refused, the others fail at use
 * with a failure event, and its own memory gets none of the victim's bytes.
 */
static int
kid_attacker(struct kid *self, void *arg)
{
	const struct victim_arg *va = arg;
	void *vbuf = (void *)(uintptr_t)va->buf;
	struct kid_ni n;
	ptl_handle_me_t meh, me2;
	ptl_handle_md_t mdh, mdv;
	ptl_md_t md;
	ptl_me_t me;
	ptl_event_t ev;
	uint8_t *own;
	int rc, k;

	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	KCHECK(self, !range_mapped(va->buf, KID_BUF),
	       "the victim's buffer 0x%llx is mapped here: the test cannot "
	       "tell the clients apart", (unsigned long long)va->buf);
	own = spin_host_alloc(KID_BUF);
	KCHECK(self, own != NULL, "spin_host_alloc");
	memset(own, 0x55, KID_BUF);

	/* ranges that wrap around the address space: refused */
	memset(&md, 0, sizeof(md));
	md.start = (void *)(uintptr_t)(UINT64_MAX - 4095);
	md.length = 8192;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	rc = PtlMDBind(n.ni, &md, &mdh);
	KCHECK(self, rc == PTL_ARG_INVALID, "wrapping MD: rc %d", rc);
	me = kid_me(md.start, 8192, 1, PTL_UID_ANY);
	rc = PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL, &meh);
	KCHECK(self, rc == PTL_ARG_INVALID, "wrapping ME: rc %d", rc);

	/* an ME over the victim's buffer; a put into it fails */
	me = kid_me(vbuf, KID_BUF, 2, PTL_UID_ANY);
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &meh) == PTL_OK, "ME at the victim's address");
	md.start = own;
	md.length = KID_BUF;
	KCHECK(self, PtlMDBind(n.ni, &md, &mdh) == PTL_OK, "own MD");
	KCHECK(self, PtlPut(mdh, 0, KID_BUF, PTL_ACK_REQ, n.id, n.pt, 2, 0,
			    NULL, 0) == PTL_OK, "PtlPut");
	for (k = 0; k < 3; k++) {
		/* PUT (target, failed), SEND and ACK (failed) in any order */
		KCHECK(self, kid_ev(&n, &ev) >= 0, "put: event %d missing", k);
		if (ev.type == PTL_EVENT_PUT || ev.type == PTL_EVENT_ACK)
			KCHECK(self, ev.ni_fail_type != PTL_NI_OK,
			       "put into the victim's address: event %d ok",
			       (int)ev.type);
	}

	/* an MD over the victim's buffer; a put from it fails and sends
	 * nothing: the attacker's own ME keeps its 0x55 */
	me = kid_me(own, KID_BUF, 3, PTL_UID_ANY);
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &me2) == PTL_OK, "own ME");
	md.start = vbuf;
	KCHECK(self, PtlMDBind(n.ni, &md, &mdv) == PTL_OK,
	       "MD at the victim's address");
	KCHECK(self, PtlPut(mdv, 0, KID_BUF, PTL_ACK_REQ, n.id, n.pt, 3, 0,
			    NULL, 0) == PTL_OK, "PtlPut from it");
	KCHECK(self, kid_ev(&n, &ev) == PTL_EVENT_SEND &&
		     ev.ni_fail_type != PTL_NI_OK,
	       "put from the victim's address: event %d fail %d",
	       (int)ev.type, (int)ev.ni_fail_type);
	/* a get into it: the reply cannot land */
	KCHECK(self, PtlGet(mdv, 0, 4096, n.id, n.pt, 3, 0, NULL) == PTL_OK,
	       "PtlGet");
	for (k = 0; k < 2; k++) {
		KCHECK(self, kid_ev(&n, &ev) >= 0, "get: event %d missing", k);
		if (ev.type == PTL_EVENT_REPLY)
			KCHECK(self, ev.ni_fail_type != PTL_NI_OK,
			       "get into the victim's address succeeded");
	}
	KCHECK(self, kid_bytes_all(own, KID_BUF, 0x55),
	       "the attacker's memory changed");
	kid_say(self, "ok");
	PtlNIFini(n.ni);
	PtlFini();
	return 0;
}

static void
test_memory(void)
{
	struct victim_arg va;
	struct kid v, x;
	char line[128];
	unsigned long long a;

	kid_start(&v, "victim", 0, false, kid_victim, NULL);
	kid_expect(&v, "buf ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "buf %llx", &a) == 1, "victim: %s", line);
	va.buf = a;
	kid_start(&x, "attacker", 0, false, kid_attacker, &va);
	kid_expect(&x, "ok", line, sizeof(line));
	kid_end(&x);
	ITEST_CHECK(write(v.wr, "check\n", 6) == 6, "victim: write");
	kid_expect(&v, "ok", line, sizeof(line));
	kid_end(&v);
	printf("itest_isolation: another client's address: refused or failed, nothing reached\n");
}

/*
 * A client's connection outlives it: it forks, the child keeps the
 * inherited control socket (and the region), and the client exits. Its
 * pid may now be reused by any process, so spinnic must not keep serving
 * it (process_vm_* on that pid): it detaches the client when the process
 * exits, and the child's next request fails.
 */
static int
kid_handoff(struct kid *self, void *arg)
{
	ptl_sr_value_t v;
	struct kid_ni n;
	int gate[2], rc = PTL_OK, i;
	pid_t g;

	(void)arg;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	KCHECK(self, pipe(gate) == 0, "pipe");
	KCHECK(self, PtlNIStatus(n.ni, PTL_SR_DROP_COUNT, &v) == PTL_OK,
	       "PtlNIStatus");
	g = fork();
	KCHECK(self, g >= 0, "fork");
	if (g == 0) {
		char ch;

		close(gate[1]);
		/* EOF once the client process is gone */
		while (read(gate[0], &ch, 1) > 0)
			;
		for (i = 0; i < 500; i++) {
			rc = PtlNIStatus(n.ni, PTL_SR_DROP_COUNT, &v);
			if (rc != PTL_OK)
				break;
			usleep(10000);
		}
		if (rc != PTL_OK)
			kid_say(self, "detached %d", rc);
		else
			kid_say(self, "fail still attached 5 s after its process exited");
		_exit(0);
	}
	close(gate[0]);
	return 0;
}

static void
test_handoff(void)
{
	struct kid k;
	char line[128];

	kid_start(&k, "handoff", 0, false, kid_handoff, NULL);
	kid_expect(&k, "detached", line, sizeof(line));
	kid_end(&k);
	printf("itest_isolation: a connection that outlives its process: detached\n");
}

/* ---- 2. NIC memory quota ------------------------------------------------- */

#define QUOTA (64u << 10)

/* Fill the quota: 40 KiB fits, 40 KiB more does not (PTL_NO_SPACE) while
 * the NIC has plenty left; hold it until the parent says so. */
static int
kid_quota(struct kid *self, void *arg)
{
	const bool hold = arg != NULL;
	struct spin_csum_args csum;
	struct spin_ctx_desc d;
	spin_handle_ctx_t ctx;
	spin_handle_nicmem_t a, b;
	struct kid_ni n;
	char line[32];
	int rc;

	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	rc = spin_nicmem_alloc(n.ni, 40u << 10, &a);
	KCHECK(self, rc == PTL_OK, "first 40 KiB: rc %d", rc);
	rc = spin_nicmem_alloc(n.ni, 40u << 10, &b);
	KCHECK(self, rc == PTL_NO_SPACE, "40 KiB over the quota: rc %d", rc);
	rc = spin_nicmem_alloc(n.ni, QUOTA + 64, &b);
	KCHECK(self, rc == PTL_NO_SPACE, "more than the quota: rc %d", rc);
	rc = spin_nicmem_alloc(n.ni, 16u << 10, &b);
	KCHECK(self, rc == PTL_OK, "16 KiB within the quota: rc %d", rc);
	/* an execution context is charged to the same quota */
	memset(&csum, 0, sizeof(csum));
	csum.version = SPIN_CSUM_ARGS_VERSION;
	csum.flags = SPIN_CSUM_F_COPY;
	csum.result_off = SPIN_CSUM_RESULT_AFTER;
	memset(&d, 0, sizeof(d));
	d.family = "checksum";
	d.args = &csum;
	d.args_len = sizeof(csum);
	d.state_len = 16u << 10;
	rc = spin_ctx_install(n.ni, &d, &ctx);
	KCHECK(self, rc == PTL_NO_SPACE, "context over the quota: rc %d", rc);
	d.state_len = 0;
	rc = spin_ctx_install(n.ni, &d, &ctx);
	KCHECK(self, rc == PTL_OK, "small context within the quota: rc %d",
	       rc);
	kid_say(self, "full %u", (unsigned)n.id.phys.pid);
	if (hold && kid_line(self, line, sizeof(line), 50000) != 0)
		return 1;
	KCHECK(self, spin_nicmem_free(a) == PTL_OK, "free");
	rc = spin_nicmem_alloc(n.ni, 40u << 10, &a);
	KCHECK(self, rc == PTL_OK, "after a free: rc %d", rc);
	kid_say(self, "ok");
	PtlNIFini(n.ni);
	PtlFini();
	return 0;
}

/* The reply of one telemetry command (v2 protocol: greeting first). */
static char *
telemetry(const char *cmd)
{
	static char buf[16384];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[sizeof(sa.sun_path)];
	struct pollfd p;
	ssize_t n;
	int fd, k;

	ITEST_CHECK(itest_log_word("telemetry: ", path, sizeof(path)) == 0,
		    "spinnic did not log its telemetry socket");
	memcpy(sa.sun_path, path, sizeof(path));
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ITEST_CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa,
				       sizeof(sa)) == 0,
		    "telemetry %s: %s", path, strerror(errno));
	for (k = 0; k < 2; k++) {
		if (k == 1)
			ITEST_CHECK(send(fd, cmd, strlen(cmd), 0) ==
				    (ssize_t)strlen(cmd), "telemetry send");
		p.fd = fd;
		p.events = POLLIN;
		ITEST_CHECK(poll(&p, 1, 5000) == 1, "telemetry: no reply");
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		ITEST_CHECK(n > 0, "telemetry: %s", strerror(errno));
		buf[n] = '\0';
	}
	close(fd);
	return buf;
}

/* The number after "key": in the object "node0/pid<pid>" of a reply. */
static long long
tel_number(const char *json, unsigned pid, const char *key)
{
	char obj[48], k[64];
	const char *o, *end, *v;

	snprintf(obj, sizeof(obj), "\"node0/pid%u\"", pid);
	snprintf(k, sizeof(k), "\"%s\":", key);
	o = strstr(json, obj);
	ITEST_CHECK(o != NULL, "telemetry: no %s in %s", obj, json);
	end = strchr(o, '}');
	v = strstr(o, k);
	ITEST_CHECK(v != NULL && (end == NULL || v < end),
		    "telemetry: no %s in %s of %s", k, obj, json);
	return strtoll(v + strlen(k), NULL, 10);
}

static void
test_quota(void)
{
	struct kid a, b;
	char line[128];
	const char *json;
	unsigned pid;

	kid_start(&a, "quota/a", 0, false, kid_quota, (void *)1);
	kid_expect(&a, "full", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "full %u", &pid) == 1, "quota/a: %s", line);
	/* reported per client: what it holds and its cap */
	json = telemetry("/spinnic/clients,0");
	ITEST_CHECK(tel_number(json, pid, "nic_mem_quota") == QUOTA,
		    "nic_mem_quota in %s", json);
	ITEST_CHECK(tel_number(json, pid, "nic_mem_used") >= 56 << 10 &&
		    tel_number(json, pid, "nic_mem_used") <= QUOTA,
		    "nic_mem_used in %s", json);
	/* a is at its quota: another client still gets its own */
	kid_start(&b, "quota/b", 0, false, kid_quota, NULL);
	kid_expect(&b, "full", line, sizeof(line));
	kid_expect(&b, "ok", line, sizeof(line));
	kid_end(&b);
	ITEST_CHECK(write(a.wr, "go\n", 3) == 3, "quota/a: write");
	kid_expect(&a, "ok", line, sizeof(line));
	kid_end(&a);
	printf("itest_isolation: --nic-mem-per-client: one client at its quota, the other served\n");
}

/* ---- 3. per-user policy ---------------------------------------------------- */

struct uid_arg {
	const char *err_path;  /* its stderr */
	bool allowed;
	unsigned target_nid, target_pid, target_pt;
};

/* As nobody: attach. Refused: say so. Allowed: a put to an ME that only
 * root may use fails with PERM_VIOLATION, one to an open ME works. */
static int
kid_nobody(struct kid *self, void *arg)
{
	const struct uid_arg *ua = arg;
	ptl_ni_limits_t lim;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t mdh;
	ptl_process_t t;
	ptl_event_t ev;
	ptl_md_t md;
	unsigned which;
	void *buf;
	int fd, rc, k;

	fd = open(ua->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	KCHECK(self, fd >= 0 && dup2(fd, 2) == 2, "stderr: %s",
	       strerror(errno));
	KCHECK(self, setgid(NOBODY) == 0 && setuid(NOBODY) == 0,
	       "setuid: %s", strerror(errno));
	KCHECK(self, PtlInit() == PTL_OK, "PtlInit");
	rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, &lim, &ni);
	if (!ua->allowed) {
		KCHECK(self, rc != PTL_OK, "uid %u attached", NOBODY);
		kid_say(self, "refused %d", rc);
		PtlFini();
		return 0;
	}
	KCHECK(self, rc == PTL_OK, "PtlNIInit: %d", rc);
	KCHECK(self, PtlEQAlloc(ni, 64, &eq) == PTL_OK, "PtlEQAlloc");
	buf = spin_host_alloc(4096);
	KCHECK(self, buf != NULL, "spin_host_alloc");
	memset(buf, 0x33, 4096);
	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = 4096;
	md.eq_handle = eq;
	md.ct_handle = PTL_CT_NONE;
	KCHECK(self, PtlMDBind(ni, &md, &mdh) == PTL_OK, "PtlMDBind");
	t.phys.nid = ua->target_nid;
	t.phys.pid = ua->target_pid;
	for (k = 0; k < 2; k++) {
		/* match bits 0x77: root only; 0x78: anyone */
		KCHECK(self, PtlPut(mdh, 0, 4096, PTL_ACK_REQ, t,
				    ua->target_pt, 0x77 + k, 0, NULL, 0) ==
			     PTL_OK, "PtlPut");
		do {
			rc = PtlEQPoll(&eq, 1, KID_EV_MS, &ev, &which);
			KCHECK(self, rc == PTL_OK, "no ACK");
		} while (ev.type != PTL_EVENT_ACK);
		KCHECK(self, ev.ni_fail_type == (k == 0 ?
			     PTL_NI_PERM_VIOLATION : PTL_NI_OK),
		       "put %d: ni_fail %d", k, (int)ev.ni_fail_type);
	}
	kid_say(self, "ok");
	PtlNIFini(ni);
	PtlFini();
	return 0;
}

/* Root's target: ME 0x77 for its own uid only, ME 0x78 for anyone. */
static int
kid_root_target(struct kid *self, void *arg)
{
	struct kid_ni n;
	ptl_handle_me_t m1, m2;
	ptl_event_t ev;
	ptl_me_t me;
	uint8_t *own, *open_buf;
	char line[32];

	(void)arg;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	own = spin_host_alloc(4096);
	open_buf = spin_host_alloc(4096);
	KCHECK(self, own != NULL && open_buf != NULL, "spin_host_alloc");
	memset(own, 0xaa, 4096);
	memset(open_buf, 0xaa, 4096);
	me = kid_me(own, 4096, 0x77, getuid());
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &m1) == PTL_OK, "PtlMEAppend");
	me = kid_me(open_buf, 4096, 0x78, PTL_UID_ANY);
	KCHECK(self, PtlMEAppend(n.ni, n.pt, &me, PTL_PRIORITY_LIST, NULL,
				 &m2) == PTL_OK, "PtlMEAppend");
	kid_say(self, "ready %u %u %u", n.id.phys.nid, n.id.phys.pid, n.pt);
	KCHECK(self, kid_ev(&n, &ev) == PTL_EVENT_PUT &&
		     ev.match_bits == 0x78 && ev.ni_fail_type == PTL_NI_OK &&
		     ev.uid == NOBODY,
	       "PUT event: type %d bits 0x%llx uid %u", (int)ev.type,
	       (unsigned long long)ev.match_bits, (unsigned)ev.uid);
	KCHECK(self, kid_line(self, line, sizeof(line), 50000) == 0,
	       "parent");
	KCHECK(self, kid_bytes_all(own, 4096, 0xaa), "root-only ME written");
	KCHECK(self, kid_bytes_all(open_buf, 4096, 0x33), "open ME not written");
	kid_say(self, "ok");
	PtlNIFini(n.ni);
	PtlFini();
	return 0;
}

#define FLOOD 70

/* As nobody: open more connections than a node has slots and keep them
 * open (never attaching) until the parent says so. */
static int
kid_flood(struct kid *self, void *arg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("SPINNIC_SOCKET");
	int fds[FLOOD], i;
	char line[32];

	(void)arg;
	KCHECK(self, setgid(NOBODY) == 0 && setuid(NOBODY) == 0,
	       "setuid: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (i = 0; i < FLOOD; i++) {
		fds[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		KCHECK(self, fds[i] >= 0 &&
			     connect(fds[i], (struct sockaddr *)&sa,
				     sizeof(sa)) == 0,
		       "connection %d: %s", i, strerror(errno));
	}
	kid_say(self, "holding %d", FLOOD);
	if (kid_line(self, line, sizeof(line), 50000) != 0)
		return 1;
	for (i = 0; i < FLOOD; i++)
		close(fds[i]);
	return 0;
}

/* Root attaches while nobody holds connections */
static int
kid_root_attach(struct kid *self, void *arg)
{
	struct kid_ni n;

	(void)arg;
	if (kid_ni_open(self, &n, 256) != 0)
		return 1;
	kid_say(self, "ok");
	PtlNIFini(n.ni);
	PtlFini();
	return 0;
}

static char *
slurp(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	ITEST_CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Let nobody reach the control sockets (spinnic makes them root's). */
static void
sockets_open_up(const char *sdir)
{
	char sock[PATH_MAX];
	unsigned node;

	ITEST_CHECK(chmod(sdir, 0711) == 0, "chmod %s: %s", sdir,
		    strerror(errno));
	for (node = 0; node < 2; node++) {
		snprintf(sock, sizeof(sock), "%s/node%u.sock", sdir, node);
		ITEST_CHECK(chmod(sock, 0666) == 0, "chmod %s: %s", sock,
			    strerror(errno));
	}
}

static void
test_uid_refused(const char *sdir)
{
	char err[PATH_MAX], line[128], *msg, *nl;
	struct uid_arg ua = { .err_path = err };
	struct kid k;

	snprintf(err, sizeof(err), "%s/nobody.err", itest_dir());
	sockets_open_up(sdir);
	kid_start(&k, "nobody", 0, false, kid_nobody, &ua);
	kid_expect(&k, "refused", line, sizeof(line));
	kid_end(&k);
	msg = slurp(err);
	ITEST_CHECK(strstr(msg, "uid 65534 is not allowed") != NULL,
		    "nobody's error: \"%s\"", msg);
	nl = strchr(msg, '\n');
	ITEST_CHECK(nl != NULL && nl[1] == '\0',
		    "nobody's error is not one line: \"%s\"", msg);
	printf("itest_isolation: uid %u refused: %s", NOBODY, msg);

	/* nobody cannot take the slots of those who may attach */
	kid_start(&k, "flood", 0, false, kid_flood, NULL);
	kid_expect(&k, "holding", line, sizeof(line));
	{
		struct kid r;

		kid_start(&r, "root-attach", 0, false, kid_root_attach, NULL);
		kid_expect(&r, "ok", line, sizeof(line));
		kid_end(&r);
	}
	ITEST_CHECK(write(k.wr, "go\n", 3) == 3, "flood: write");
	kid_end(&k);
	printf("itest_isolation: %d connections of uid %u: a root client still attached\n",
	       FLOOD, NOBODY);
}

static void
test_uid_allowed(const char *sdir)
{
	char err[PATH_MAX], line[128];
	struct uid_arg ua = { .err_path = err, .allowed = true };
	struct kid t, k;

	snprintf(err, sizeof(err), "%s/nobody2.err", itest_dir());
	sockets_open_up(sdir);
	kid_start(&t, "root-target", 0, false, kid_root_target, NULL);
	kid_expect(&t, "ready ", line, sizeof(line));
	ITEST_CHECK(sscanf(line, "ready %u %u %u", &ua.target_nid,
			   &ua.target_pid, &ua.target_pt) == 3,
		    "root-target: %s", line);
	kid_start(&k, "nobody", 1, false, kid_nobody, &ua);
	kid_expect(&k, "ok", line, sizeof(line));
	kid_end(&k);
	ITEST_CHECK(write(t.wr, "check\n", 6) == 6, "root-target: write");
	kid_expect(&t, "ok", line, sizeof(line));
	kid_end(&t);
	printf("itest_isolation: --allow-uid %u: attached, a root-only ME refused it (PERM_VIOLATION)\n",
	       NOBODY);
}

/* ---- 0. the socket directory ------------------------------------------------ */

static void
test_socket_dir(void)
{
	char parent[300], sdir[320], open_dir[300], sock[340];
	const char *opts[] = { "--socket-dir", sdir, NULL };
	const char *opts2[] = { "--socket-dir", open_dir, NULL };
	unsigned node, m;

	snprintf(parent, sizeof(parent), "%s/a", itest_dir());
	snprintf(sdir, sizeof(sdir), "%s/b", parent);
	itest_spinnic_start(opts);

	m = mode_of(parent, true);
	ITEST_CHECK(m == 0700, "created parent %s has mode %03o", parent, m);
	m = mode_of(sdir, true);
	ITEST_CHECK(m == 0700, "socket directory %s has mode %03o", sdir, m);
	for (node = 0; node < 2; node++) {
		snprintf(sock, sizeof(sock), "%s/node%u.sock", sdir, node);
		m = mode_of(sock, false);
		ITEST_CHECK(m == 0600, "%s has mode %03o", sock, m);
	}
	printf("itest_isolation: %s 0700, sockets 0600\n", sdir);
	itest_spinnic_finish();

	/* a directory others can enter: served, but reported */
	snprintf(open_dir, sizeof(open_dir), "%s/open", itest_dir());
	ITEST_CHECK(mkdir(open_dir, 0700) == 0 && chmod(open_dir, 0755) == 0,
		    "mkdir %s: %s", open_dir, strerror(errno));
	itest_spinnic_start(opts2);
	ITEST_CHECK(strstr(itest_spinnic_log(),
			   "lets other users reach the control sockets") != NULL,
		    "no warning for a socket directory of mode 0755");
	itest_spinnic_finish();
}

int
main(void)
{
	const char *opts[] = { "--nic-mem-per-client", "64K", NULL };
	const char *opts2[] = { "--allow-uid", "65534", NULL };
	const bool root = geteuid() == 0;
	long long faults, denied;

	itest_init("itest_isolation", 170);
	test_socket_dir();

	itest_spinnic_start(opts);
	test_memory();
	test_quota();
	test_handoff();
	if (root)
		test_uid_refused(itest_dir());
	else
		printf("itest_isolation: not root: the uid policy is not tried\n");
	itest_spinnic_finish();
	itest_expect_no_leaks();
	faults = itest_counter(0, "host_fault");
	ITEST_CHECK(faults >= 3, "node 0: host_fault %lld, want >= 3", faults);
	ITEST_CHECK(itest_counter(0, "orphaned") == 1,
		    "node 0: orphaned %lld, want 1",
		    itest_counter(0, "orphaned"));
	/* the refused ATTACH, and the flood's connections past the 4 kept */
	denied = itest_counter(0, "uid_denied");
	ITEST_CHECK(denied == (root ? 1 + FLOOD - 4 : 0),
		    "node 0: uid_denied %lld", denied);

	if (root) {
		itest_spinnic_start(opts2);
		test_uid_allowed(itest_dir());
		itest_spinnic_finish();
		itest_expect_no_leaks();
		ITEST_CHECK(itest_counter(0, "uid_denied") == 0 &&
			    itest_counter(1, "uid_denied") == 0,
			    "uid_denied with --allow-uid 65534");
	}
	printf("itest_isolation: ok\n");
	return 0;
}
