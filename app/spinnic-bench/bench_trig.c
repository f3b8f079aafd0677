/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench trig (issue #13; paper 002 Fig. 3): what triggered
 * operations save the host, through a real `spinnic --virtual 2
 * --idle-sleep-us 0` (one busy-polling lcore on CPU 0 runs both nodes).
 *
 *  response  a client of node 0 (the initiator) puts one byte to a client
 *            of node 1 (the responder), whose ME counts it; one byte comes
 *            back and the initiator's ME counts it. Timed at the
 *            initiator, put to the answer counted. Who answers:
 *              triggered   a PtlTriggeredPut on the responder's counter,
 *                          posted ahead; the responder meanwhile blocks
 *                          on a pipe (not on the counter: no wake-ups)
 *              host-spin   the responder spins on PtlCTGet (sched_yield
 *                          between reads) and calls PtlPut itself
 *              host-sleep  the responder sleeps in PtlCTWait (at once:
 *                          spin_set_wait_polls(0)), then PtlPut
 *            in blocks of --block puts, the three interleaved block by
 *            block (the initiator waits for the responder's "ready" before
 *            each block, outside the timing).
 *  chain     the initiator alone: a chain of --chain counters, each
 *            PtlTriggeredCTInc'ing the next when it reaches the round's
 *            threshold (posted ahead, in batches); timed from PtlCTInc on
 *            the first to the last counting, divided by --chain = one hop.
 *            Interleaved with a one-way 1-byte put to its own ME (PtlPut to
 *            the ME's counter counting it).
 *
 * Both clients poll with sched_yield: on 2 cores they share the one CPU
 * off the lcore, so host-spin pays for the scheduling of two spinners.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <portals4.h>
#include <spin.h>

#include "bench.h"

#define EVENT_TIMEOUT_S 30.0
#define MATCH_PING 1u
#define MATCH_ONEWAY 2u

enum { R_TRIG, R_SPIN, R_SLEEP, R_COUNT };
static const char *const resp_names[R_COUNT] = {
	"triggered", "host-spin", "host-sleep",
};

static struct {
	long iters;   /* timed responses per variant */
	long block;   /* responses per block */
	long warmup;  /* untimed blocks per variant */
	long chain;   /* counters in the chain */
	long hops;    /* timed chain runs (and one-way puts) */
	const char *spinnic;
	const char *spinnic_log;
} tcfg = { 600, 50, 1, 32, 600, NULL, NULL };

static const struct bench_cmd_opt trig_opts[] = {
	{ "iters", 1, "timed responses per variant (default 600), a "
		      "multiple of --block" },
	{ "block", 1, "responses per block; variants alternate by block "
		      "(default 50; at most 1000)" },
	{ "warmup", 1, "untimed blocks per variant first (default 1)" },
	{ "chain", 1, "counters in the PtlTriggeredCTInc chain (default 32)" },
	{ "hops", 1, "timed chain runs and one-way puts (default 600)" },
	{ "spinnic", 1, "spinnic binary (default: <build>/app/spinnic/spinnic "
			"beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output (final counters) in this "
			    "file" },
	{ NULL, 0, NULL },
};

static int
trig_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "iters", &tcfg.iters, 1, 10000000 },
		{ "block", &tcfg.block, 1, 1000 },
		{ "warmup", &tcfg.warmup, 0, 1000 },
		{ "chain", &tcfg.chain, 1, 512 },
		{ "hops", &tcfg.hops, 1, 10000000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		tcfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		tcfg.spinnic_log = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- a client ----------------------------------------------------------------- */

struct tclient {
	const char *role;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct, ct_ow;  /* pings/answers; one-way puts */
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self, peer;
	uint8_t *src, *win, *win_ow;
};

#define CHECK_PTL(c, call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("trig %s: %s: %s", (c)->role, #call, \
			  spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

static int
me_add(struct tclient *c, void *buf, uint64_t bits, ptl_handle_ct_t ct)
{
	ptl_handle_me_t h;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = 1;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = bits;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		PTL_ME_EVENT_UNLINK_DISABLE;
	CHECK_PTL(c, PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL,
				 &h));
	return 0;
}

/* Attach, the MEs and the MD; swap ids over the pipes. */
static int
tclient_open(struct tclient *c, int rfd, int wfd)
{
	ptl_ni_limits_t lim;
	ptl_md_t md;

	CHECK_PTL(c, PtlInit());
	CHECK_PTL(c, PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			       PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim,
			       &c->ni));
	CHECK_PTL(c, PtlGetPhysId(c->ni, &c->self));
	CHECK_PTL(c, PtlEQAlloc(c->ni, 64, &c->eq));
	CHECK_PTL(c, PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt));
	CHECK_PTL(c, PtlCTAlloc(c->ni, &c->ct));
	CHECK_PTL(c, PtlCTAlloc(c->ni, &c->ct_ow));
	c->src = spin_host_alloc(64);
	c->win = spin_host_alloc(64);
	c->win_ow = spin_host_alloc(64);
	if (c->src == NULL || c->win == NULL || c->win_ow == NULL) {
		bench_err("trig %s: spin_host_alloc failed", c->role);
		return -ENOMEM;
	}
	c->src[0] = 0x5a;
	if (me_add(c, c->win, MATCH_PING, c->ct) < 0 ||
	    me_add(c, c->win_ow, MATCH_ONEWAY, c->ct_ow) < 0)
		return -EIO;
	memset(&md, 0, sizeof(md));
	md.start = c->src;
	md.length = 64;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(c, PtlMDBind(c->ni, &md, &c->md));
	if (bench_io_all(wfd, &c->self, sizeof(c->self), true) < 0 ||
	    bench_io_all(rfd, &c->peer, sizeof(c->peer), false) < 0) {
		bench_err("trig %s: the other client did not start", c->role);
		return -EIO;
	}
	return 0;
}

/* Wait (sched_yield between reads) until @p ct counts @p n. */
static int
ct_spin(struct tclient *c, ptl_handle_ct_t ct, uint64_t n, int yield)
{
	unsigned spins = 0;
	double t0 = 0;
	ptl_ct_event_t e;

	for (;;) {
		CHECK_PTL(c, PtlCTGet(ct, &e));
		if (e.failure != 0) {
			bench_err("trig %s: %" PRIu64 " failed", c->role,
				  (uint64_t)e.failure);
			return -EIO;
		}
		if (e.success >= n)
			return 0;
		if (yield)
			sched_yield();
		if (++spins % 4096 == 0) {
			if (t0 == 0) {
				t0 = bench_now();
			} else if (bench_now() - t0 > EVENT_TIMEOUT_S) {
				bench_err("trig %s: counter at %" PRIu64 " of %"
					  PRIu64 " after %.0f s", c->role,
					  (uint64_t)e.success, n,
					  EVENT_TIMEOUT_S);
				return -ETIMEDOUT;
			}
		}
	}
}

static int
put1(struct tclient *c, ptl_process_t to, uint64_t bits)
{
	CHECK_PTL(c, PtlPut(c->md, 0, 1, PTL_NO_ACK_REQ, to, c->pt, bits, 0,
			    NULL, 0));
	return 0;
}

static long
nblocks(void)
{
	return (tcfg.warmup + tcfg.iters / tcfg.block) * R_COUNT;
}

/* Block @p k's variant: the three rotate, the first one each cycle too. */
static int
block_var(long k)
{
	long cyc = k / R_COUNT;

	return (int)((k + cyc) % R_COUNT);
}

/* node 1: answer every ping, the block's way. */
static int
responder(int rfd, int wfd)
{
	struct tclient c = { .role = "responder" };
	uint8_t go = 1;
	int rc;

	rc = tclient_open(&c, rfd, wfd);
	/* host-sleep's PtlCTWait blocks in the kernel at once (a waiter that
	 * polls first would be a spinning host) */
	spin_set_wait_polls(0);
	for (long k = 0; rc == 0 && k < nblocks(); k++) {
		uint64_t base = (uint64_t)(k * tcfg.block);
		int v = block_var(k);

		if (v == R_TRIG)
			for (long j = 0; rc == 0 && j < tcfg.block; j++) {
				int e = PtlTriggeredPut(c.md, 0, 1,
							PTL_NO_ACK_REQ,
							c.peer, c.pt,
							MATCH_PING, 0, NULL, 0,
							c.ct, base +
							(uint64_t)j + 1);

				if (e != PTL_OK) {
					bench_err("trig responder: "
						  "PtlTriggeredPut: %s",
						  spin_strerror(e));
					rc = -EIO;
				}
			}
		if (rc == 0 && bench_io_all(wfd, &go, 1, true) < 0)
			rc = -EIO;
		/* blocked on the pipe, not on the counter: the NIC has no
		 * sleeper to wake at every count */
		if (rc == 0 && v == R_TRIG) {
			if (bench_io_all(rfd, &go, 1, false) < 0)
				rc = -EIO;
			continue;
		}
		for (long j = 0; rc == 0 && j < tcfg.block; j++) {
			uint64_t want = base + (uint64_t)j + 1;

			if (v == R_SPIN) {
				rc = ct_spin(&c, c.ct, want, 1);
			} else {
				ptl_ct_event_t e;

				if (PtlCTWait(c.ct, want, &e) != PTL_OK)
					rc = -EIO;
			}
			if (rc == 0)
				rc = put1(&c, c.peer, MATCH_PING);
		}
	}
	PtlNIFini(c.ni);
	PtlFini();
	return rc;
}

/* The chain: ct[0] -> ct[1] -> ... -> ct[chain]. */
static int
chain_run(struct tclient *c, double *hop, double *ow)
{
	long n = tcfg.chain, per_batch = 1000 / n, done = 0;
	ptl_handle_ct_t *ct = calloc((size_t)n + 1, sizeof(*ct));
	int rc = 0;

	if (ct == NULL)
		return -ENOMEM;
	for (long k = 0; k <= n; k++)
		CHECK_PTL(c, PtlCTAlloc(c->ni, &ct[k]));
	if (per_batch < 1)
		per_batch = 1;
	/* the first 10% untimed */
	for (long t = -(tcfg.hops / 10 + 1); rc == 0 && t < tcfg.hops;) {
		long batch = per_batch;
		struct timespec arm = { 0, 2000000 };

		if (batch > tcfg.hops - t)
			batch = tcfg.hops - t;
		for (long r = 1; rc == 0 && r <= batch; r++)
			for (long k = 0; rc == 0 && k < n; k++) {
				ptl_ct_event_t one = { 1, 0 };
				int e = PtlTriggeredCTInc(ct[k + 1], one,
							  ct[k],
							  (ptl_size_t)(done +
								       r));

				if (e != PTL_OK) {
					bench_err("trig initiator: "
						  "PtlTriggeredCTInc: %s",
						  spin_strerror(e));
					rc = -EIO;
				}
			}
		/* let the NIC arm them: not part of a hop */
		nanosleep(&arm, NULL);
		for (long r = 1; rc == 0 && r <= batch; r++, t++) {
			ptl_ct_event_t one = { 1, 0 };
			double t0, t1, t2;

			t0 = bench_now();
			if (PtlCTInc(ct[0], one) != PTL_OK)
				rc = -EIO;
			if (rc == 0)
				rc = ct_spin(c, ct[n], (uint64_t)(done + r), 0);
			t1 = bench_now();
			if (rc == 0)
				rc = put1(c, c->self, MATCH_ONEWAY);
			if (rc == 0)
				rc = ct_spin(c, c->ct_ow, (uint64_t)(done + r),
					     0);
			t2 = bench_now();
			if (t >= 0) {
				hop[t] = (t1 - t0) / (double)n * 1e6;
				ow[t] = (t2 - t1) * 1e6;
			}
		}
		done += batch;
	}
	for (long k = 0; k <= n; k++)
		PtlCTFree(ct[k]);
	free(ct);
	return rc;
}

/* node 0: ping, time the answer; then the chain. out: R_COUNT x iters
 * response times, then hops, then one-way puts (us). */
static int
initiator(int rfd, int wfd, double *out)
{
	struct tclient c = { .role = "initiator" };
	long idx[R_COUNT] = { 0 };
	uint8_t go;
	int rc;

	rc = tclient_open(&c, rfd, wfd);
	for (long k = 0; rc == 0 && k < nblocks(); k++) {
		uint64_t base = (uint64_t)(k * tcfg.block);
		int v = block_var(k);

		if (bench_io_all(rfd, &go, 1, false) < 0) {
			bench_err("trig initiator: the responder stopped");
			rc = -EIO;
			break;
		}
		for (long j = 0; rc == 0 && j < tcfg.block; j++) {
			double t0 = bench_now(), t1;

			rc = put1(&c, c.peer, MATCH_PING);
			if (rc == 0)
				rc = ct_spin(&c, c.ct, base + (uint64_t)j + 1,
					     1);
			t1 = bench_now();
			if (k >= tcfg.warmup * R_COUNT && idx[v] < tcfg.iters)
				out[v * tcfg.iters + idx[v]++] =
					(t1 - t0) * 1e6;
		}
		if (rc == 0 && v == R_TRIG &&
		    bench_io_all(wfd, &go, 1, true) < 0)
			rc = -EIO;
	}
	if (rc == 0)
		rc = chain_run(&c, out + R_COUNT * tcfg.iters,
			       out + R_COUNT * tcfg.iters + tcfg.hops);
	PtlNIFini(c.ni);
	PtlFini();
	return rc;
}

/* ---- the subcommand ------------------------------------------------------------ */

static void
row(struct bench_table *tab, const char *metric, const char *variant,
    long n, double *s, const char *vs, double vs_us, double aim)
{
	double med = bench_median(s, (int)n); /* sorts s */

	if (bench_table_row(tab) < 0)
		return;
	bench_table_set_str(tab, "metric", metric);
	bench_table_set_str(tab, "variant", variant);
	bench_table_set_int(tab, "samples", n);
	bench_table_set_num(tab, "median_us", med);
	bench_table_set_num(tab, "p99_us", bench_percentile(s, n, 99.0));
	if (vs != NULL) {
		bench_table_set_str(tab, "vs", vs);
		bench_table_set_num(tab, "vs_us", vs_us);
		bench_table_set_num(tab, "ratio", vs_us > 0 ? med / vs_us : 0);
		bench_table_set_num(tab, "aim", aim);
		bench_table_set_str(tab, "meets", vs_us > 0 &&
				    med / vs_us <= aim ? "yes" : "no");
	}
}

static int
trig_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "metric", BENCH_COL_STR, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "median_us", BENCH_COL_NUM, 2 },
		{ "p99_us", BENCH_COL_NUM, 2 },
		{ "vs", BENCH_COL_STR, 0 },
		{ "vs_us", BENCH_COL_NUM, 2 },
		{ "ratio", BENCH_COL_NUM, 3 },
		{ "aim", BENCH_COL_NUM, 2 },
		{ "meets", BENCH_COL_STR, 0 },
	};
	long n = R_COUNT * tcfg.iters + 2 * tcfg.hops;
	struct bench_spinnic nic = { .pid = -1 };
	int to_r[2] = { -1, -1 }, to_i[2] = { -1, -1 }, res[2] = { -1, -1 };
	struct bench_table *tab = NULL;
	double *v = NULL, *hop, *ow, med[R_COUNT], s;
	pid_t kid[2] = { -1, -1 };
	char sock[400];
	int rc, st, ncpus;

	(void)o->verify;
	if (tcfg.iters % tcfg.block != 0) {
		bench_err("--iters %ld is not a multiple of --block %ld",
			  tcfg.iters, tcfg.block);
		return -EINVAL;
	}
	v = calloc((size_t)n, sizeof(double));
	if (v == NULL)
		return -ENOMEM;
	bench_spinnic_signals();
	rc = bench_spinnic_start(&nic, tcfg.spinnic, NULL);
	if (rc < 0)
		goto out;
	ncpus = bench_clients_off_lcore();
	if (pipe(to_r) != 0 || pipe(to_i) != 0 || pipe(res) != 0) {
		rc = -EIO;
		goto out;
	}
	for (int w = 0; w < 2; w++) {
		fflush(NULL);
		kid[w] = fork();
		if (kid[w] < 0) {
			rc = -EIO;
			goto out;
		}
		if (kid[w] > 0)
			continue;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(sock, sizeof(sock), "%s/node%d.sock", nic.dir,
			 w == 0 ? 0 : 1);
		setenv("SPINNIC_SOCKET", sock, 1);
		close(res[0]);
		if (w == 1)
			close(res[1]);
		if (w == 0) {
			rc = initiator(to_i[0], to_r[1], v);
			if (rc == 0)
				rc = bench_io_all(res[1], v, (size_t)n *
						  sizeof(double), true);
		} else {
			rc = responder(to_r[0], to_i[1]);
		}
		_exit(rc == 0 ? 0 : 1);
	}
	close(res[1]);
	res[1] = -1;
	rc = bench_io_all(res[0], v, (size_t)n * sizeof(double), false);
	for (int w = 0; w < 2; w++) {
		if (rc < 0)
			kill(kid[w], SIGKILL);
		if (waitpid(kid[w], &st, 0) != kid[w] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			if (rc == 0)
				bench_err("trig %s failed (status 0x%x)",
					  w == 0 ? "initiator" : "responder",
					  st);
			rc = -EIO;
		}
		kid[w] = -1;
	}
	if (rc < 0)
		goto out;
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	hop = v + R_COUNT * tcfg.iters;
	ow = hop + tcfg.hops;
	for (int k = 0; k < R_COUNT; k++)
		med[k] = bench_median(v + k * tcfg.iters, (int)tcfg.iters);
	row(tab, "response", resp_names[R_SPIN], tcfg.iters,
	    v + R_SPIN * tcfg.iters, NULL, 0, 0);
	row(tab, "response", resp_names[R_SLEEP], tcfg.iters,
	    v + R_SLEEP * tcfg.iters, NULL, 0, 0);
	row(tab, "response", resp_names[R_TRIG], tcfg.iters,
	    v + R_TRIG * tcfg.iters, resp_names[R_SPIN], med[R_SPIN], 1.2);
	row(tab, "response", resp_names[R_TRIG], tcfg.iters,
	    v + R_TRIG * tcfg.iters, resp_names[R_SLEEP], med[R_SLEEP], 0.5);
	s = bench_median(ow, (int)tcfg.hops);
	row(tab, "put", "oneway-1B", tcfg.hops, ow, NULL, 0, 0);
	row(tab, "chain-hop", "triggered-ctinc", tcfg.hops, hop, "oneway-1B",
	    s, 0.5);
	rc = bench_table_emit(tab, o);
	printf("# response: 1-B put node 0 -> node 1, 1-B answer counted at "
	       "node 0, blocks of %ld, variants interleaved, medians; "
	       "chain-hop: %ld-counter PtlTriggeredCTInc chain, time to the "
	       "last / %ld, interleaved with a one-way 1-B put to the "
	       "initiator's own ME (counted); spinnic --virtual 2 "
	       "--idle-sleep-us 0 (one busy-polling lcore on CPU 0); clients "
	       "poll with sched_yield on %d CPU(s) off it (host-spin's "
	       "responder shares them with the initiator)\n", tcfg.block,
	       tcfg.chain, tcfg.chain, ncpus);
out:
	for (int w = 0; w < 2; w++)
		if (kid[w] > 0) {
			kill(kid[w], SIGKILL);
			waitpid(kid[w], NULL, 0);
		}
	for (int i = 0; i < 2; i++) {
		if (to_r[i] >= 0)
			close(to_r[i]);
		if (to_i[i] >= 0)
			close(to_i[i]);
		if (res[i] >= 0)
			close(res[i]);
	}
	bench_spinnic_stop(&nic, tcfg.spinnic_log);
	bench_table_free(tab);
	free(v);
	return rc;
}

const struct bench_cmd bench_trig_cmd = {
	.name = "trig",
	.summary = "triggered put response and PtlTriggeredCTInc chain hop "
		   "against a host that spins or sleeps (paper 002 Fig. 3)",
	.opts = trig_opts,
	.opt = trig_opt,
	.run = trig_run,
};
