/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench layout: paper 001's axes for the layout-aware typed
 * receives (doc/NOTES.md "Layout-aware typed receives"), through a real
 * `spinnic --virtual 2 --idle-sleep-us 0`. One client of node 0 (a forked
 * child off the lcore's CPU) receives from itself: post, put of the packed
 * stream from the region, busy-polled PUT event, completion (unpack on the
 * host path); one receive is timed from before its post to after its
 * completion. Variants, interleaved in rotated order in every repetition:
 *   host    spin_type_offload(HOST), spin_me_append_typed()
 *   static  the class rule prepared at the layout's first use (upload on
 *           the post path), kept for its later uses, freed after them
 *   aware   spin_me_append_ddt() with the calibrated aware chooser
 *   threshold  spin_me_append_ddt() with paper 001's Algorithm 1 (T = 2
 *           KiB; the layout cache reconfigured between the two, untimed)
 * Every repetition uses a layout not seen before (a vector with a stride of
 * its own), received `uses` times: the per-receive time amortizes the
 * preparation over the uses (Fig. 10). Axes: uses 1, 10, 100 at 64 B and
 * 4 KiB blocks; block size 64 B .. 16 KiB (the 2 KiB threshold) at 10
 * uses; 64 KiB messages. Rows: median µs per receive over the
 * repetitions and its ratio to the host path of the same run.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>

#include "bench.h"
#include "shim_ddt.h"
#include "shim_ddt_calib.h"

enum { V_HOST, V_STATIC, V_AWARE, V_THRESHOLD, V_COUNT };
static const char *const vnames[V_COUNT] = {
	"host", "static", "aware", "threshold",
};

/* The points: (axis, block bytes, uses). */
struct point {
	const char *axis;
	int64_t blk;
	long uses;
};
static const struct point points[] = {
	{ "uses", 64, 1 }, { "uses", 64, 10 }, { "uses", 64, 100 },
	{ "uses", 4096, 1 }, { "uses", 4096, 10 }, { "uses", 4096, 100 },
	{ "block", 64, 10 }, { "block", 512, 10 }, { "block", 2048, 10 },
	{ "block", 4096, 10 }, { "block", 16384, 10 },
};
#define NPOINTS (sizeof(points) / sizeof(points[0]))
#define MSG_BYTES (64 << 10)
/* the window of a layout: 2x the message plus the stride steps */
#define DST_BYTES (8u << 20)

static struct {
	long reps;
	const char *spinnic;
} lcfg = { .reps = 5 };

static const struct bench_cmd_opt layout_opts[] = {
	{ "lreps", 1, "repetitions per point, each with fresh layouts "
		      "(default 5)" },
	{ "spinnic", 1, "spinnic binary (default: <build>/app/spinnic/spinnic "
			"beside spinnic-bench)" },
	{ NULL, 0, NULL },
};

static int
layout_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "lreps", &lcfg.reps, 1, 1000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		lcfg.spinnic = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, 1) == 0 ? 0 : -EINVAL;
}

/* ---- the client ---------------------------------------------------------- */

struct cl {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	uint8_t *src, *dst;
	uint64_t match;
	long nic_recvs;   /* aware receives that took a NIC strategy */
	long by_strat[SPIN_TYPE_COUNT]; /* aware receives per strategy */
};

static int
cl_up(struct cl *c)
{
	ptl_md_t md;

	memset(c, 0, sizeof(*c));
	c->src = spin_host_alloc(MSG_BYTES);
	c->dst = spin_host_alloc(DST_BYTES);
	if (c->src == NULL || c->dst == NULL)
		return -ENOMEM;
	memset(c->src, 0x3c, MSG_BYTES);
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &c->ni) != PTL_OK ||
	    PtlGetPhysId(c->ni, &c->self) != PTL_OK ||
	    PtlEQAlloc(c->ni, 256, &c->eq) != PTL_OK ||
	    PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt) != PTL_OK)
		return -EIO;
	memset(&md, 0, sizeof(md));
	md.start = c->src;
	md.length = MSG_BYTES;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	return PtlMDBind(c->ni, &md, &c->md) == PTL_OK ? 0 : -EIO;
}

/* One receive by variant v (off: host or static object; t: aware).
 * @return 0 or -EIO */
static int
cl_recv(struct cl *c, int v, struct spin_type_offload *off,
	const struct ddt_type *t)
{
	struct spin_typed_recv *r;
	ptl_event_t ev;
	ptl_me_t me;
	int rc;

	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = ++c->match;
	if (v == V_AWARE || v == V_THRESHOLD)
		rc = spin_me_append_ddt(c->ni, c->pt, &me, t, 1, c->dst, NULL,
					&r);
	else
		rc = spin_me_append_typed(c->ni, c->pt, &me, off, c->dst, NULL,
					  &r);
	if (rc != PTL_OK)
		return -EIO;
	if (v == V_AWARE) {
		enum spin_type_strategy s = spin_typed_recv_strategy(r);

		if (s != SPIN_TYPE_HOST)
			c->nic_recvs++;
		if ((unsigned)s < SPIN_TYPE_COUNT)
			c->by_strat[s]++;
	}
	if (PtlPut(c->md, 0, MSG_BYTES, PTL_NO_ACK_REQ, c->self, c->pt,
		   me.match_bits, 0, NULL, 0) != PTL_OK)
		return -EIO;
	for (;;) {
		rc = PtlEQGet(c->eq, &ev);
		if (rc == PTL_EQ_EMPTY)
			continue;
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
			return -EIO;
		if (ev.type == PTL_EVENT_PUT && ev.user_ptr == r)
			break;
	}
	return spin_typed_recv_complete(r, &ev, NULL) == PTL_OK &&
		ev.ni_fail_type == PTL_NI_OK ? 0 : -EIO;
}

/* A layout of MSG_BYTES in blocks of blk bytes not used before: its own
 * stride. */
static struct ddt_type *
fresh_layout(int64_t blk, unsigned k)
{
	int64_t n = MSG_BYTES / blk, stride = 2 * blk + 8 * (int64_t)k;
	struct ddt_type *t;

	if (n * stride > DST_BYTES)
		return NULL;
	t = ddt_vector(n, blk, stride, ddt_base(DDT_BYTE));
	if (t != NULL && ddt_commit(t) != 0) {
		ddt_free(t);
		t = NULL;
	}
	return t;
}

/* uses receives of one fresh layout by variant v: µs per receive. */
static int
cl_point(struct cl *c, int v, int64_t blk, long uses, unsigned k,
	 double *us_p)
{
	struct spin_type_offload *off = NULL;
	struct ddt_type *t = fresh_layout(blk, k);
	double a;
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	a = bench_now();
	/* host: the staging object costs nothing to prepare, but it is
	 * made per layout like the others */
	if (v != V_AWARE && v != V_THRESHOLD &&
	    spin_type_offload(c->ni, t, 1, v == V_HOST ? SPIN_TYPE_HOST :
			      SPIN_TYPE_AUTO, &off) != PTL_OK)
		rc = -EIO;
	for (long u = 0; rc == 0 && u < uses; u++)
		rc = cl_recv(c, v, off, t);
	*us_p = (bench_now() - a) * 1e6 / (double)uses;
	if (off != NULL)
		spin_type_offload_free(off);
	ddt_free(t);
	return rc;
}

/* Posts timed by decide_cost(): hits in batches, each miss alone;
 * medians (a preemption on the shared CPUs hits one sample). */
#define DECIDE_BATCHES 200
#define DECIDE_BATCH 100
#define DECIDE_MISSES 200

/* The cache's own cost per post, without a receive: a hit (one layout,
 * prepared after its first uses) and a miss (a fresh layout: hash,
 * features, host object, decision), against what the host variant pays
 * per layout (spin_type_offload(HOST) and its release). ns into d[0..2].
 * @return 0 or -EIO */
static int
decide_cost(struct cl *c, unsigned *k, double *d)
{
	struct ddt_type *t[DECIDE_MISSES];
	double hit[DECIDE_BATCHES], miss[DECIDE_MISSES], obj[DECIDE_MISSES];
	struct spin_type_offload *off;
	struct shim_lc_use u;
	double a;
	int rc = 0, i, j;

	t[0] = fresh_layout(4096, (*k)++);
	if (t[0] == NULL)
		return -EIO;
	/* two uses queue its preparation; let it finish */
	for (i = 0; rc == 0 && i < 2; i++)
		rc = cl_recv(c, V_AWARE, NULL, t[0]);
	shim_lc_drain();
	for (i = 0; rc == 0 && i < DECIDE_BATCHES; i++) {
		a = bench_now();
		for (j = 0; rc == 0 && j < DECIDE_BATCH; j++) {
			rc = shim_lc_acquire(c->ni, t[0], 1, c->dst, &u);
			if (rc == 0)
				__atomic_fetch_sub(&u.off->posted, 1,
						   __ATOMIC_ACQ_REL);
		}
		hit[i] = (bench_now() - a) * 1e9 / DECIDE_BATCH;
	}
	ddt_free(t[0]);
	for (i = 0; i < DECIDE_MISSES; i++)
		t[i] = fresh_layout(4096, (*k)++);
	for (i = 0; rc == 0 && i < DECIDE_MISSES; i++) {
		if (t[i] == NULL) {
			rc = -ENOMEM;
			break;
		}
		a = bench_now();
		rc = spin_type_offload(c->ni, t[i], 1, SPIN_TYPE_HOST, &off) ==
			PTL_OK ? 0 : -EIO;
		if (rc == 0)
			spin_type_offload_free(off);
		obj[i] = (bench_now() - a) * 1e9;
		a = bench_now();
		if (rc == 0)
			rc = shim_lc_acquire(c->ni, t[i], 1, c->dst, &u);
		miss[i] = (bench_now() - a) * 1e9;
		if (rc == 0)
			__atomic_fetch_sub(&u.off->posted, 1,
					   __ATOMIC_ACQ_REL);
	}
	if (rc == 0) {
		d[0] = bench_median(hit, DECIDE_BATCHES);
		d[1] = bench_median(miss, DECIDE_MISSES);
		d[2] = bench_median(obj, DECIDE_MISSES);
	}
	for (i = 0; i < DECIDE_MISSES; i++)
		ddt_free(t[i]);
	if (spin_type_cache_flush(c->ni) != PTL_OK && rc == 0)
		rc = -EIO;
	return rc != 0 ? -EIO : 0;
}

/* The layout cache's chooser for variant v (aware: the configuration the
 * library read and calibrated, *aw; threshold: Algorithm 1, real
 * preparation). Reconfiguring drops the cache's entries: untimed, and
 * every point uses fresh layouts anyway. */
static void
chooser_set(int v, const struct shim_lc_config *aw, int *cur)
{
	struct shim_lc_config th;

	if ((v != V_AWARE && v != V_THRESHOLD) || v == *cur)
		return;
	if (v == V_AWARE) {
		shim_lc_configure(aw);
	} else {
		th = *aw;
		th.chooser = SHIM_CHOOSER_THRESHOLD;
		th.costs = NULL;
		shim_lc_configure(&th);
	}
	*cur = v;
}

/* The child: calibrate (waits for the table), then every point, then the
 * decision cost. Writes reps * NPOINTS * V_COUNT times, then the aware
 * NIC share per point, the calibration's ms and whether it has a table,
 * then per point the NIC strategy aware used most (SPIN_TYPE_HOST: none),
 * then decide_cost()'s three figures. */
#define NEXTRA (2 * NPOINTS + 5)
static int
client_run(int fd)
{
	size_t nres = (size_t)lcfg.reps * NPOINTS * V_COUNT;
	double *res = calloc(nres + NEXTRA, sizeof(double));
	struct shim_lc_config aw;
	struct shim_calib cal;
	int rc, i, cur = V_AWARE;
	unsigned k = 1;
	struct cl c;
	double us;

	if (res == NULL)
		return -ENOMEM;
	rc = cl_up(&c);
	/* the first aware receive starts the calibration (no file: it is
	 * measured); wait for it so that aware runs with its table */
	if (rc == 0)
		rc = cl_point(&c, V_AWARE, 4096, 1, k++, &us);
	for (i = 0; rc == 0 && i < 2000 && !shim_lc_calibrated(&cal); i++)
		usleep(10000);
	if (rc == 0 && !shim_lc_calibrated(&cal))
		memset(&cal, 0, sizeof(cal));
	shim_lc_config_get(&aw);
	for (long r = 0; rc == 0 && r < lcfg.reps; r++)
		for (size_t p = 0; rc == 0 && p < NPOINTS; p++) {
			long before = c.nic_recvs;

			if (r == 0)
				memset(c.by_strat, 0, sizeof(c.by_strat));
			for (int j = 0; rc == 0 && j < V_COUNT; j++) {
				/* rotated per repetition and point */
				int v = (int)((j + r + (long)p) % V_COUNT);

				chooser_set(v, &aw, &cur);
				rc = cl_point(&c, v, points[p].blk,
					      points[p].uses, k++, &us);
				res[((size_t)r * NPOINTS + p) * V_COUNT +
				    (size_t)v] = us;
			}
			res[nres + p] += (double)(c.nic_recvs - before) /
				(double)(points[p].uses * lcfg.reps);
			if (r == 0) {
				int best = SPIN_TYPE_HOST;

				for (int s = SPIN_TYPE_IOVEC; s < SPIN_TYPE_COUNT;
				     s++)
					if (c.by_strat[s] > c.by_strat[best] ||
					    (best == SPIN_TYPE_HOST &&
					     c.by_strat[s] > 0))
						best = s;
				res[nres + NPOINTS + 2 + p] = best;
			}
		}
	chooser_set(V_AWARE, &aw, &cur);
	res[nres + NPOINTS] = cal.calib_ms;
	res[nres + NPOINTS + 1] = cal.costs.s[SPIN_TYPE_HOST].valid ? 1 : 0;
	if (rc == 0)
		rc = decide_cost(&c, &k, &res[nres + 2 * NPOINTS + 2]);
	if (rc == 0)
		rc = bench_io_all(fd, res, (nres + NEXTRA) * sizeof(double),
				  true);
	free(res);
	return rc;
}

/* ---- the bench ------------------------------------------------------------ */

static const struct bench_col cols[] = {
	{ "axis", BENCH_COL_STR, 0 },
	{ "block_b", BENCH_COL_INT, 0 },
	{ "uses", BENCH_COL_INT, 0 },
	{ "host_us", BENCH_COL_NUM, 1 },
	{ "static_us", BENCH_COL_NUM, 1 },
	{ "aware_us", BENCH_COL_NUM, 1 },
	{ "threshold_us", BENCH_COL_NUM, 1 },
	{ "static_vs_host", BENCH_COL_NUM, 2 },
	{ "aware_vs_host", BENCH_COL_NUM, 2 },
	{ "threshold_vs_host", BENCH_COL_NUM, 2 },
	{ "aware_vs_static", BENCH_COL_NUM, 2 },
	{ "aware_nic_share", BENCH_COL_NUM, 2 },
	{ "aware_nic", BENCH_COL_STR, 0 },
};

static int
layout_run(const struct bench_opts *o)
{
	size_t nres = (size_t)lcfg.reps * NPOINTS * V_COUNT;
	struct bench_spinnic nic = { .pid = -1 };
	const char *extra[] = { NULL };
	struct bench_table *tab = NULL;
	double *res = NULL, *col = NULL;
	char sock[400], calib[400];
	int pfd[2] = { -1, -1 }, rc, st, ncpus;
	pid_t child;

	(void)o;
	res = calloc(nres + NEXTRA, sizeof(double));
	col = calloc((size_t)lcfg.reps, sizeof(double));
	if (res == NULL || col == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	bench_spinnic_signals();
	ncpus = bench_clients_off_lcore();
	rc = bench_spinnic_start(&nic, lcfg.spinnic, extra);
	if (rc < 0)
		goto out;
	if (pipe(pfd) != 0) {
		rc = -errno;
		goto out;
	}
	snprintf(calib, sizeof(calib), "%s/ddt-calib", nic.dir);
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
		/* this run's own calibration, measured now */
		setenv("SPINNIC_DDT_CALIB_FILE", calib, 1);
		setenv("SPINNIC_DDT_CALIB", "force", 1);
		unsetenv("SPINNIC_DDT_CHOOSER");
		unsetenv("SPINNIC_DDT_STRATEGY");
		_exit(client_run(pfd[1]) == 0 ? 0 : 1);
	}
	close(pfd[1]);
	pfd[1] = -1;
	rc = bench_io_all(pfd[0], res, (nres + NEXTRA) * sizeof(double),
			  false);
	if (rc < 0)
		kill(child, SIGKILL);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		bench_err("layout client failed (status 0x%x)", st);
		rc = -EIO;
		goto out;
	}
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t p = 0; p < NPOINTS; p++) {
		double m[V_COUNT];

		for (int v = 0; v < V_COUNT; v++) {
			for (long r = 0; r < lcfg.reps; r++)
				col[r] = res[((size_t)r * NPOINTS + p) *
					     V_COUNT + (size_t)v];
			m[v] = bench_median(col, (int)lcfg.reps);
		}
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "axis", points[p].axis);
		bench_table_set_int(tab, "block_b", points[p].blk);
		bench_table_set_int(tab, "uses", points[p].uses);
		bench_table_set_num(tab, "host_us", m[V_HOST]);
		bench_table_set_num(tab, "static_us", m[V_STATIC]);
		bench_table_set_num(tab, "aware_us", m[V_AWARE]);
		bench_table_set_num(tab, "threshold_us", m[V_THRESHOLD]);
		bench_table_set_num(tab, "static_vs_host",
				    m[V_STATIC] / m[V_HOST]);
		bench_table_set_num(tab, "aware_vs_host",
				    m[V_AWARE] / m[V_HOST]);
		bench_table_set_num(tab, "threshold_vs_host",
				    m[V_THRESHOLD] / m[V_HOST]);
		bench_table_set_num(tab, "aware_vs_static",
				    m[V_AWARE] / m[V_STATIC]);
		bench_table_set_num(tab, "aware_nic_share", res[nres + p]);
		bench_table_set_str(tab, "aware_nic", spin_type_strategy_name(
			(enum spin_type_strategy)res[nres + NPOINTS + 2 + p]));
	}
	rc = bench_table_emit(tab, o);
	printf("# spinnic --virtual 2 --idle-sleep-us 0 (2 HPUs), one client "
	       "on %d CPU(s) off the lcore receiving %d KiB vectors from "
	       "itself; per receive: post to completion, µs, median of %ld "
	       "repetitions, each a fresh layout used `uses` times by each "
	       "variant (%s, %s, %s, %s in rotated order); *_vs_host = time "
	       "/ host time (below 1: faster than host); calibration %s in "
	       "%.1f ms\n", ncpus, MSG_BYTES >> 10, lcfg.reps,
	       vnames[0], vnames[1], vnames[2], vnames[3],
	       res[nres + NPOINTS + 1] > 0 ? "measured" : "NOT available",
	       res[nres + NPOINTS]);
	printf("# layout cache per post, no receive, medians: hit %.0f ns "
	       "(%d batches of %d posts of one prepared layout), miss %.0f ns "
	       "(%d fresh layouts: hash, features, host object, decision; "
	       "the host variant's own object per layout %.0f ns)\n",
	       res[nres + 2 * NPOINTS + 2], DECIDE_BATCHES, DECIDE_BATCH,
	       res[nres + 2 * NPOINTS + 3], DECIDE_MISSES,
	       res[nres + 2 * NPOINTS + 4]);
out:
	for (int i = 0; i < 2; i++)
		if (pfd[i] >= 0)
			close(pfd[i]);
	bench_table_free(tab);
	bench_spinnic_stop(&nic, NULL);
	free(res);
	free(col);
	return rc;
}

const struct bench_cmd bench_layout_cmd = {
	.name = "layout",
	.summary = "layout-aware typed receives (paper 001): host, static, "
		   "aware and threshold per receive against uses of a layout "
		   "and block size",
	.opts = layout_opts,
	.opt = layout_opt,
	.run = layout_run,
};
