/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench latency (paper 000 Fig. 2): one-byte put latency through
 * the real path, with and without a handler. A real `spinnic --virtual 2
 * --idle-sleep-us 0` (busy-polling lcores) is started. Each client has two
 * MEs of one byte: match bits 1 without execution context, 2 with a
 * context of a handler family (default ddt_vector: the payload handler
 * DMAs the byte to the host, the completion handler posts the event).
 * The two paths alternate, iteration by iteration, so both see the same
 * machine. Two methods:
 *
 *  oneway    (default) paper 000's definition: from when the data leaves
 *            the initiator to when it reaches the target's host memory
 *            (seen as its PUT event). One client of node 0 puts to its own
 *            MEs: the frame still goes the whole way (outbound role, the
 *            port's TX queue, the switch, the inbound role, reliable
 *            delivery, matching, the handler on an HPU, the DMA, the
 *            event), and one thread times both ends, alone on the CPUs
 *            off the lcore, busy-polling its EQ.
 *  pingpong  node 0 puts a byte, a client of node 1 (a forked child) puts
 *            it back to the ME of the same path when its PUT event
 *            arrives; latency = round trip / 2. Both clients share the
 *            CPUs off the lcore and poll with sched_yield, so on a 2-core
 *            machine this adds their scheduling to every leg.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <portals4.h>
#include <spin.h>
#include <spin_handler_args.h>

#include "bench.h"

#define READY_LINE "spinnic: ready"
#define START_TIMEOUT_S 20.0
#define EVENT_TIMEOUT_S 30.0
#define STOP_GRACE_S 5.0
#define MATCH_PLAIN 1u
#define MATCH_HANDLER 2u

enum { P_PLAIN, P_HANDLER, P_COUNT };

static const char *const path_names[P_COUNT] = { "no-handler", "handler" };

static struct {
	const char *spinnic;
	const char *spinnic_log;
	const char *handler;
	long iters;
	long warmup;
	int spin; /* busy-poll the EQ without yielding */
	int pingpong; /* --method pingpong */
} lcfg = { NULL, NULL, "ddt_vector", 1000, 50, 0, 0 };

static const struct bench_cmd_opt latency_opts[] = {
	{ "iters", 1, "timed puts per path (default 1000)" },
	{ "warmup", 1, "untimed puts per path first (default 50)" },
	{ "method", 1, "oneway (default: put to the event at the target, one "
		       "client timing both ends) or pingpong (two clients, "
		       "half round trips)" },
	{ "handler", 1, "family of the handler path: ddt_vector (default) or "
			"checksum" },
	{ "spinnic", 1, "spinnic binary (default: <build>/app/spinnic/spinnic "
			"beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output (final counters) in this "
			    "file" },
	{ "busy-poll", 0, "poll the event queue without sched_yield (only "
			  "with spare cores)" },
	{ NULL, 0, NULL },
};

static int
latency_opt(const char *name, const char *arg)
{
	long long v;
	char tail;

	if (strcmp(name, "iters") == 0 || strcmp(name, "warmup") == 0) {
		int it = name[0] == 'i';

		if (sscanf(arg, "%lld%c", &v, &tail) != 1 || v < (it ? 1 : 0) ||
		    v > 10000000) {
			bench_err("bad --%s '%s': expected %d..10000000", name,
				  arg, it ? 1 : 0);
			return -EINVAL;
		}
		if (it)
			lcfg.iters = (long)v;
		else
			lcfg.warmup = (long)v;
		return 0;
	}
	if (strcmp(name, "handler") == 0) {
		if (strcmp(arg, "ddt_vector") != 0 &&
		    strcmp(arg, "checksum") != 0) {
			bench_err("bad --handler '%s': ddt_vector or checksum",
				  arg);
			return -EINVAL;
		}
		lcfg.handler = arg;
		return 0;
	}
	if (strcmp(name, "method") == 0) {
		if (strcmp(arg, "oneway") != 0 && strcmp(arg, "pingpong") != 0) {
			bench_err("bad --method '%s': oneway or pingpong", arg);
			return -EINVAL;
		}
		lcfg.pingpong = arg[0] == 'p';
		return 0;
	}
	if (strcmp(name, "busy-poll") == 0) {
		lcfg.spin = 1;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		lcfg.spinnic_log = arg;
		return 0;
	}
	lcfg.spinnic = arg;
	return 0;
}

/* ---- spinnic ----------------------------------------------------------------- */

/* What a signal must not leave behind: spinnic busy-polls a CPU. */
static volatile pid_t spinnic_pgid = -1, client_pid = -1;
/* spinnic's directory and its files, for the signal handler */
static char sig_dir[256], sig_files[3][300];

static void
on_signal(int sig)
{
	if (client_pid > 0)
		kill(client_pid, SIGKILL);
	if (spinnic_pgid > 0)
		kill(-spinnic_pgid, SIGKILL);
	for (int i = 0; i < 3; i++)
		if (sig_files[i][0] != '\0')
			unlink(sig_files[i]);
	if (sig_dir[0] != '\0')
		rmdir(sig_dir);
	_exit(128 + sig);
}

/* the build folder of this binary (<build>/app/spinnic-bench/spinnic-bench)
 * into @p buf; @p opt names the option that would avoid it */
static int
build_dir(char *buf, size_t len, const char *opt)
{
	char self[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		bench_err("/proc/self/exe: %s (use %s PATH)", strerror(errno),
			  opt);
		return -errno;
	}
	self[n] = '\0';
	snprintf(buf, len, "%s", dirname(dirname(dirname(self))));
	return 0;
}

/* <build>/app/spinnic-bench/spinnic-bench -> <build>/app/spinnic/spinnic */
static int
spinnic_path(const char *given, char *buf, size_t len)
{
	char dir[PATH_MAX];
	int rc;

	if (given != NULL) {
		snprintf(buf, len, "%s", given);
	} else {
		rc = build_dir(dir, sizeof(dir), "--spinnic");
		if (rc != 0)
			return rc;
		if (snprintf(buf, len, "%s/app/spinnic/spinnic", dir) >=
		    (int)len)
			return -ENAMETOOLONG;
	}
	if (access(buf, X_OK) != 0) {
		int err = errno;

		bench_err("spinnic not found at %s: %s (use --spinnic PATH)",
			  buf, strerror(err));
		return -err;
	}
	return 0;
}

int
bench_plugin_path(const char *given, const char *name, char *buf,
		  size_t len)
{
	char dir[PATH_MAX];
	int rc;

	if (given != NULL) {
		snprintf(buf, len, "%s", given);
	} else {
		rc = build_dir(dir, sizeof(dir), "--handlers");
		if (rc != 0)
			return rc;
		if (snprintf(buf, len, "%s/examples/handlers/%s", dir, name) >=
		    (int)len)
			return -ENAMETOOLONG;
#ifdef SPINNIC_HANDLER_DIR
		if (access(buf, R_OK) != 0)
			snprintf(buf, len, "%s/%s", SPINNIC_HANDLER_DIR, name);
#endif
	}
	if (access(buf, R_OK) != 0) {
		int err = errno;

		bench_err("handler plugin %s not found at %s: %s (use "
			  "--handlers PATH)", name, buf, strerror(err));
		return -err;
	}
	return 0;
}

static char *
file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *t = NULL;
	long n;

	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		t = calloc(1, (size_t)n + 1);
		rewind(f);
		if (t != NULL && fread(t, 1, (size_t)n, f) != (size_t)n)
			t[0] = '\0';
	}
	if (f != NULL)
		fclose(f);
	return t;
}

/* The last line of spinnic's log that says what went wrong. */
static void
log_reason(const struct bench_spinnic *p, char *buf, size_t len)
{
	char *t = file_text(p->log), *line, *save = NULL, *last = NULL;

	snprintf(buf, len, "no output");
	if (t == NULL)
		return;
	for (line = strtok_r(t, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "rror") != NULL || strstr(line, "annot") ||
		    strstr(line, "fail") || last == NULL)
			last = line;
	if (last != NULL)
		snprintf(buf, len, "%s", last);
	free(t);
}

static void
sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) *
						 1e9) };

	nanosleep(&ts, NULL);
}

void
bench_spinnic_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
}

void
bench_spinnic_stop(struct bench_spinnic *p, const char *keep_log)
{
	double t0 = bench_now();
	char cmd[300];
	int status;

	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		while (waitpid(p->pid, &status, WNOHANG) != p->pid) {
			if (bench_now() - t0 > STOP_GRACE_S) {
				kill(-p->pid, SIGKILL);
				waitpid(p->pid, &status, 0);
				break;
			}
			sleep_s(0.01);
		}
		p->pid = -1;
		spinnic_pgid = -1;
	}
	if (p->dir[0] != '\0' && keep_log != NULL) {
		char *t = file_text(p->log);
		FILE *f = fopen(keep_log, "w");

		if (f == NULL || t == NULL || fputs(t, f) < 0)
			bench_err("cannot write %s", keep_log);
		if (f != NULL)
			fclose(f);
		free(t);
	}
	if (p->dir[0] != '\0') {
		/* sockets and the log; the name came from mkdtemp */
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
		if (system(cmd) != 0)
			bench_err("could not remove %s", p->dir);
		p->dir[0] = '\0';
		sig_dir[0] = '\0';
	}
}

int
bench_spinnic_start(struct bench_spinnic *p, const char *bin_given,
		    const char *const *extra)
{
	const char *tmp = getenv("TMPDIR");
	char bin[PATH_MAX];
	double t0;
	int fd, status, rc;

	p->pid = -1;
	rc = spinnic_path(bin_given, bin, sizeof(bin));
	if (rc < 0)
		return rc;
	snprintf(p->dir, sizeof(p->dir), "%s/spinnic-bench-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(p->dir) == NULL) {
		bench_err("mkdtemp %s: %s", p->dir, strerror(errno));
		p->dir[0] = '\0';
		return -EIO;
	}
	snprintf(p->log, sizeof(p->log), "%s/spinnic.log", p->dir);
	snprintf(sig_files[0], sizeof(sig_files[0]), "%s", p->log);
	snprintf(sig_files[1], sizeof(sig_files[1]), "%s/node0.sock", p->dir);
	snprintf(sig_files[2], sizeof(sig_files[2]), "%s/node1.sock", p->dir);
	snprintf(sig_dir, sizeof(sig_dir), "%s", p->dir);
	fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0) {
		bench_err("%s: %s", p->log, strerror(errno));
		return -EIO;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		bench_err("fork: %s", strerror(errno));
		close(fd);
		return -EIO;
	}
	if (p->pid == 0) {
		const char *argv[32] = {
			bin, "--", "--virtual", "2", "--socket-dir", p->dir,
			"--idle-sleep-us", "0",
		};
		unsigned n = 8;

		for (; extra != NULL && *extra != NULL && n < 31; extra++)
			argv[n++] = *extra;
		argv[n] = NULL;
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		setpgid(0, 0);
		/* never outlive the bench, however it ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	setpgid(p->pid, p->pid);
	spinnic_pgid = p->pid;
	close(fd);
	t0 = bench_now();
	for (;;) {
		char *t = file_text(p->log);
		int ready = t != NULL && strstr(t, READY_LINE) != NULL;

		free(t);
		if (ready)
			return 0;
		if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
			char why[256];

			p->pid = -1;
			spinnic_pgid = -1;
			log_reason(p, why, sizeof(why));
			bench_err("spinnic exited before ready (status 0x%x): "
				  "%s", status, why);
			return -EIO;
		}
		if (bench_now() - t0 > START_TIMEOUT_S) {
			bench_err("spinnic not ready after %.0f s",
				  START_TIMEOUT_S);
			return -ETIMEDOUT;
		}
		sleep_s(0.02);
	}
}

/* ---- one client ----------------------------------------------------------- */

struct peer_id {
	uint32_t nid, pid, pt;
};

struct peer {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_handle_md_t md;
	ptl_handle_me_t me[P_COUNT];
	spin_handle_ctx_t ctx;
	uint8_t *sendbuf;
	uint8_t *win[P_COUNT];
	struct peer_id self, other;
	const char *role;
	int ni_up;
};

#define PEER_CHECK(p, call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("%s: %s: %s", (p)->role, #call, \
			  spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

static int
write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len > 0) {
		ssize_t n = write(fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
read_all(int fd, void *buf, size_t len, double timeout_s)
{
	char *b = buf;
	double t0 = bench_now();

	while (len > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pfd, 1, 100) == 0) {
			if (bench_now() - t0 > timeout_s)
				return -ETIMEDOUT;
			continue;
		}
		n = read(fd, b, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The handler context. ddt_vector places the byte at window offset 1
 * (base 1), where the non-processing path never would: finding it there
 * proves the handler ran. checksum copies it to offset 0 and writes its
 * result after it, which is checked too.
 */
static int
peer_ctx(struct peer *p, uint64_t *win_len_p)
{
	struct spin_ctx_desc d;
	struct spin_vec_args va;
	struct spin_csum_args ca;

	memset(&d, 0, sizeof(d));
	d.family = lcfg.handler;
	d.policy = SPIN_SCHED_DEFAULT;
	if (strcmp(lcfg.handler, "checksum") == 0) {
		memset(&ca, 0, sizeof(ca));
		ca.version = SPIN_CSUM_ARGS_VERSION;
		ca.flags = SPIN_CSUM_F_COPY;
		ca.result_off = SPIN_CSUM_RESULT_AFTER;
		d.args = &ca;
		d.args_len = sizeof(ca);
		*win_len_p = 1 + sizeof(struct spin_csum_result);
	} else {
		memset(&va, 0, sizeof(va));
		va.version = SPIN_VEC_ARGS_VERSION;
		va.blocklen = 1;
		va.count = 1;
		va.stride = 1;
		va.extent = 1;
		va.nelem = 1;
		va.base = 1;
		d.args = &va;
		d.args_len = sizeof(va);
		*win_len_p = 2;
	}
	PEER_CHECK(p, spin_ctx_install(p->ni, &d, &p->ctx));
	return 0;
}

/* Attach, build both MEs and the send MD, swap ids with the other side
 * (no other side, rfd < 0: the puts go to this client's own MEs). */
static int
peer_open(struct peer *p, int rfd, int wfd)
{
	ptl_ni_limits_t lim;
	ptl_md_t md;
	int rc;

	p->ctx = SPIN_CTX_NONE;
	PEER_CHECK(p, PtlInit());
	PEER_CHECK(p, PtlNIInit(PTL_IFACE_DEFAULT,
				PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
				NULL, &lim, &p->ni));
	p->ni_up = 1;
	{
		ptl_process_t id;

		PEER_CHECK(p, PtlGetPhysId(p->ni, &id));
		p->self.nid = id.phys.nid;
		p->self.pid = id.phys.pid;
	}
	PEER_CHECK(p, PtlEQAlloc(p->ni, 1024, &p->eq));
	PEER_CHECK(p, PtlPTAlloc(p->ni, 0, p->eq, PTL_PT_ANY, &p->pt));
	p->self.pt = p->pt;
	for (int k = 0; k < P_COUNT; k++) {
		uint64_t win_len = 1;
		ptl_me_t me;

		if (k == P_HANDLER) {
			rc = peer_ctx(p, &win_len);
			if (rc < 0)
				return rc;
		}
		p->win[k] = spin_host_alloc(win_len);
		if (p->win[k] == NULL) {
			bench_err("%s: spin_host_alloc: %s", p->role,
				  strerror(errno));
			return -ENOMEM;
		}
		memset(p->win[k], 0, win_len);
		memset(&me, 0, sizeof(me));
		me.start = p->win[k];
		me.length = win_len;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = k == P_HANDLER ? MATCH_HANDLER : MATCH_PLAIN;
		me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE |
			PTL_ME_EVENT_UNLINK_DISABLE;
		PEER_CHECK(p, spin_me_append(p->ni, p->pt, &me,
					     PTL_PRIORITY_LIST,
					     k == P_HANDLER ? p->ctx :
					     SPIN_CTX_NONE, NULL, &p->me[k]));
	}
	p->sendbuf = spin_host_alloc(1);
	if (p->sendbuf == NULL) {
		bench_err("%s: spin_host_alloc: %s", p->role, strerror(errno));
		return -ENOMEM;
	}
	memset(&md, 0, sizeof(md));
	md.start = p->sendbuf;
	md.length = 1;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	PEER_CHECK(p, PtlMDBind(p->ni, &md, &p->md));
	if (rfd < 0) {
		p->other = p->self;
		return 0;
	}
	if (write_all(wfd, &p->self, sizeof(p->self)) < 0 ||
	    read_all(rfd, &p->other, sizeof(p->other), START_TIMEOUT_S) < 0) {
		bench_err("%s: the other client did not start", p->role);
		return -EIO;
	}
	return 0;
}

static void
peer_close(struct peer *p)
{
	if (!p->ni_up)
		return;
	PtlMDRelease(p->md);
	for (int k = 0; k < P_COUNT; k++)
		PtlMEUnlink(p->me[k]);
	if (p->ctx != SPIN_CTX_NONE)
		spin_ctx_free(p->ctx);
	PtlPTFree(p->ni, p->pt);
	PtlEQFree(p->eq);
	PtlNIFini(p->ni);
	PtlFini();
	p->ni_up = 0;
}

static int
peer_put(struct peer *p, int path, uint8_t byte)
{
	ptl_process_t t;

	t.phys.nid = p->other.nid;
	t.phys.pid = p->other.pid;
	p->sendbuf[0] = byte;
	PEER_CHECK(p, PtlPut(p->md, 0, 1, PTL_NO_ACK_REQ, t,
			     (ptl_pt_index_t)p->other.pt,
			     path == P_HANDLER ? MATCH_HANDLER : MATCH_PLAIN, 0,
			     NULL, 0));
	return 0;
}

/* The next PUT event; its path and the byte that arrived. */
static int
peer_wait(struct peer *p, int *path_p, uint8_t *byte_p)
{
	double t0 = 0;
	unsigned spins = 0;
	ptl_event_t ev;
	int rc, path;

	for (;;) {
		rc = PtlEQGet(p->eq, &ev);
		if (rc == PTL_OK || rc == PTL_EQ_DROPPED)
			break;
		if (rc != PTL_EQ_EMPTY) {
			bench_err("%s: PtlEQGet: %s", p->role,
				  spin_strerror(rc));
			return -EIO;
		}
		if (!lcfg.spin)
			sched_yield();
		if (++spins % 4096 == 0) {
			if (t0 == 0)
				t0 = bench_now();
			else if (bench_now() - t0 > EVENT_TIMEOUT_S) {
				bench_err("%s: no event within %.0f s", p->role,
					  EVENT_TIMEOUT_S);
				return -ETIMEDOUT;
			}
		}
	}
	if (rc == PTL_EQ_DROPPED || ev.type != PTL_EVENT_PUT ||
	    ev.ni_fail_type != PTL_NI_OK || ev.mlength != 1 ||
	    (ev.match_bits != MATCH_PLAIN && ev.match_bits != MATCH_HANDLER)) {
		bench_err("%s: unexpected event %d (ni_fail_type %d, mlength "
			  "%" PRIu64 ", match bits %" PRIu64 ")", p->role,
			  (int)ev.type, (int)ev.ni_fail_type,
			  (uint64_t)ev.mlength, (uint64_t)ev.match_bits);
		return -EIO;
	}
	path = ev.match_bits == MATCH_HANDLER ? P_HANDLER : P_PLAIN;
	*path_p = path;
	*byte_p = p->win[path][0];
	if (path == P_HANDLER && strcmp(lcfg.handler, "ddt_vector") == 0) {
		*byte_p = p->win[path][1];
	} else if (path == P_HANDLER) {
		struct spin_csum_result r;

		memcpy(&r, p->win[path] + 1, sizeof(r));
		if (r.sum != *byte_p || r.bytes != 1 || r.pkts != 1) {
			bench_err("%s: checksum result sum %" PRIu64 " bytes %"
				  PRIu64 " pkts %" PRIu64 " for byte %u",
				  p->role, r.sum, r.bytes, r.pkts, *byte_p);
			return -EIO;
		}
	}
	return 0;
}

/* node 1: answer every ping on the ME of its path with the same byte. */
static int
ponger(int rfd, int wfd, long total)
{
	struct peer p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.role = "node 1";
	rc = peer_open(&p, rfd, wfd);
	for (long i = 0; rc == 0 && i < total; i++) {
		uint8_t byte;
		int path;

		rc = peer_wait(&p, &path, &byte);
		if (rc == 0)
			rc = peer_put(&p, path, byte);
	}
	peer_close(&p);
	return rc == 0 ? 0 : 1;
}

/* node 0: puts alternating the paths, in us: half round trips of
 * ping-pongs with node 1, or (rfd < 0) put to the PUT event of its own
 * ME. */
static int
pinger(int rfd, int wfd, long warm, long iters, double *lat[P_COUNT])
{
	const double legs = rfd < 0 ? 1 : 2;
	struct peer p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.role = "node 0";
	rc = peer_open(&p, rfd, wfd);
	for (long i = 0; rc == 0 && i < 2 * (warm + iters); i++) {
		int want = (int)(i & 1), path;
		uint8_t byte = (uint8_t)(i * 7 + 1), got;
		double t0, t1;

		t0 = bench_now();
		rc = peer_put(&p, want, byte);
		if (rc == 0)
			rc = peer_wait(&p, &path, &got);
		t1 = bench_now();
		if (rc != 0)
			break;
		if (path != want || got != byte) {
			bench_err("ping-pong %ld: %s path, byte %u back on the "
				  "%s path as %u", i, path_names[want], byte,
				  path_names[path], got);
			rc = -EIO;
			break;
		}
		if (i >= 2 * warm)
			lat[want][(i - 2 * warm) / 2] = (t1 - t0) / legs * 1e6;
	}
	peer_close(&p);
	return rc;
}

/* ---- the subcommand -------------------------------------------------------- */

/*
 * Keep the clients off CPU 0, where spinnic's only lcore busy-polls: a
 * client sharing that CPU would wait for a scheduler time slice (ms) on
 * every event. With the clients on the other CPUs, sched_yield hands the
 * CPU straight to the other client. @return CPUs the clients may use
 */
int
bench_pair_fork(struct bench_pair *pp, const struct bench_spinnic *nic)
{
	int to_child[2], to_parent[2];
	char sock[400];
	int i;

	pp->child = -1;
	pp->rd = pp->wr = -1;
	if (pipe(to_child) != 0)
		goto fail;
	if (pipe(to_parent) != 0) {
		close(to_child[0]);
		close(to_child[1]);
		goto fail;
	}
	fflush(NULL);
	pp->child = fork();
	if (pp->child < 0) {
		for (i = 0; i < 2; i++) {
			close(to_child[i]);
			close(to_parent[i]);
		}
		goto fail;
	}
	if (pp->child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(to_child[1]);
		close(to_parent[0]);
		pp->rd = to_child[0];
		pp->wr = to_parent[1];
	} else {
		close(to_child[0]);
		close(to_parent[1]);
		pp->rd = to_parent[0];
		pp->wr = to_child[1];
	}
	snprintf(sock, sizeof(sock), "%s/node%d.sock", nic->dir,
		 pp->child == 0 ? 1 : 0);
	setenv("SPINNIC_SOCKET", sock, 1);
	return pp->child == 0 ? 1 : 0;
fail:
	bench_err("rank 1: %s", strerror(errno));
	return -EIO;
}

int
bench_pair_end(struct bench_pair *pp, int rc)
{
	int status;

	if (pp->child > 0) {
		if (rc == 0 && !(waitpid(pp->child, &status, 0) == pp->child &&
				 WIFEXITED(status) &&
				 WEXITSTATUS(status) == 0)) {
			bench_err("rank 1 failed");
			rc = -EIO;
		} else if (rc != 0) {
			kill(pp->child, SIGKILL);
			waitpid(pp->child, NULL, 0);
		}
		pp->child = -1;
	}
	if (pp->rd >= 0)
		close(pp->rd);
	if (pp->wr >= 0)
		close(pp->wr);
	pp->rd = pp->wr = -1;
	return rc;
}

int
bench_clients_off_lcore(void)
{
	return bench_clients_off_lcores(1);
}

int
bench_clients_off_lcores(int k)
{
	cpu_set_t set, off;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	off = set;
	for (cpu = 0; cpu < k && cpu < CPU_SETSIZE; cpu++)
		CPU_CLR(cpu, &off);
	/* no CPU left: share them (as with one CPU in all) */
	if (CPU_COUNT(&off) > 0 && sched_setaffinity(0, sizeof(off), &off) == 0)
		return CPU_COUNT(&off);
	return CPU_COUNT(&set);
}

double
bench_percentile(const double *sorted, long n, double pct)
{
	long k = (long)((pct / 100.0) * (double)n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

static int
latency_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "path", BENCH_COL_STR, 0 },
		{ "handler", BENCH_COL_STR, 0 },
		{ "method", BENCH_COL_STR, 0 },
		{ "iters", BENCH_COL_INT, 0 },
		{ "latency_us", BENCH_COL_NUM, 2 },
		{ "mean_us", BENCH_COL_NUM, 2 },
		{ "p99_us", BENCH_COL_NUM, 2 },
		{ "min_us", BENCH_COL_NUM, 2 },
		{ "ratio", BENCH_COL_NUM, 3 },
	};
	struct bench_spinnic nic = { .pid = -1 };
	double *lat[P_COUNT] = { NULL, NULL }, med[P_COUNT];
	int to_child[2] = { -1, -1 }, to_parent[2] = { -1, -1 };
	struct bench_table *tab = NULL;
	char sock[400];
	pid_t child = -1;
	int rc, status, ncpus;

	(void)o->verify; /* every byte of every ping-pong is checked */
	for (int k = 0; k < P_COUNT; k++) {
		lat[k] = calloc((size_t)lcfg.iters, sizeof(double));
		if (lat[k] == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	bench_spinnic_signals();
	rc = bench_spinnic_start(&nic, lcfg.spinnic, NULL);
	if (rc < 0)
		goto out;
	ncpus = bench_clients_off_lcore();
	if (!lcfg.pingpong) {
		/* one thread alone on the CPUs off the lcore: nothing to
		 * yield to */
		lcfg.spin = 1;
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		rc = pinger(-1, -1, lcfg.warmup, lcfg.iters, lat);
		if (rc < 0)
			goto out;
		goto table;
	}
	if (pipe(to_child) != 0 || pipe(to_parent) != 0) {
		bench_err("pipe: %s", strerror(errno));
		rc = -EIO;
		goto out;
	}
	fflush(NULL);
	child = fork();
	if (child < 0) {
		bench_err("fork: %s", strerror(errno));
		rc = -EIO;
		goto out;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(to_child[1]);
		close(to_parent[0]);
		snprintf(sock, sizeof(sock), "%s/node1.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		_exit(ponger(to_child[0], to_parent[1],
			     2 * (lcfg.warmup + lcfg.iters)));
	}
	client_pid = child;
	close(to_child[0]);
	close(to_parent[1]);
	to_child[0] = to_parent[1] = -1;
	snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
	setenv("SPINNIC_SOCKET", sock, 1);
	rc = pinger(to_parent[0], to_child[1], lcfg.warmup, lcfg.iters, lat);
	if (rc < 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		child = -1;
		goto out;
	}
	if (waitpid(child, &status, 0) == child &&
	    !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		bench_err("node 1 client failed (status 0x%x)", status);
		rc = -EIO;
	}
	child = -1;
	if (rc < 0)
		goto out;
table:
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < P_COUNT; k++) {
		double *l = lat[k];

		double sum = 0;

		for (long i = 0; i < lcfg.iters; i++)
			sum += l[i];
		med[k] = bench_median(l, (int)lcfg.iters); /* sorts l */
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "path", path_names[k]);
		bench_table_set_str(tab, "handler",
				    k == P_HANDLER ? lcfg.handler : "-");
		bench_table_set_str(tab, "method",
				    lcfg.pingpong ? "pingpong" : "oneway");
		bench_table_set_int(tab, "iters", lcfg.iters);
		bench_table_set_num(tab, "latency_us", med[k]);
		bench_table_set_num(tab, "mean_us", sum / (double)lcfg.iters);
		bench_table_set_num(tab, "p99_us",
				    bench_percentile(l, lcfg.iters, 99.0));
		bench_table_set_num(tab, "min_us", l[0]);
		bench_table_set_num(tab, "ratio", med[P_PLAIN] > 0 ?
				    med[k] / med[P_PLAIN] : 0);
	}
	rc = bench_table_emit(tab, o);
	if (lcfg.pingpong)
		printf("# one-byte put, half round trip, paths interleaved; "
		       "spinnic --virtual 2 --idle-sleep-us 0 (busy-polling "
		       "lcore on CPU 0); clients %s on %d CPU(s) off it\n",
		       lcfg.spin ? "busy-poll their EQ" :
		       "poll their EQ with sched_yield", ncpus);
	else
		printf("# one-byte put, issued to PUT event at the target (its "
		       "own ME, through the switch), paths interleaved; spinnic "
		       "--virtual 2 --idle-sleep-us 0 (busy-polling lcore on "
		       "CPU 0); one client busy-polls on %d CPU(s) off it\n",
		       ncpus);
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	client_pid = -1;
	for (int i = 0; i < 2; i++) {
		if (to_child[i] >= 0)
			close(to_child[i]);
		if (to_parent[i] >= 0)
			close(to_parent[i]);
	}
	bench_spinnic_stop(&nic, lcfg.spinnic_log);
	bench_table_free(tab);
	free(lat[0]);
	free(lat[1]);
	return rc;
}

const struct bench_cmd bench_latency_cmd = {
	.name = "latency",
	.summary = "one-byte put latency with and without a handler through "
		   "a real spinnic (paper 000 Fig. 2)",
	.opts = latency_opts,
	.opt = latency_opt,
	.run = latency_run,
};
