/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench layout: paper 001's figures for the layout-aware typed
 * receives (doc/NOTES.md "Layout-aware typed receives"), through a real
 * `spinnic --virtual 2 --idle-sleep-us 0`. One client of node 0 (a forked
 * child off the lcore's CPU) receives from itself: post, put of the packed
 * stream from the region, busy-polled PUT event, completion (unpack on the
 * host path); one receive is timed from before its post to after its
 * completion. Variants, interleaved in rotated order in every repetition
 * (which ones run depends on --figure):
 *   host    spin_type_offload(HOST), spin_me_append_typed()
 *   static  the class rule prepared at the layout's first use (upload on
 *           the post path), kept for its later uses, freed after them
 *           (= the NIC strategy cached, paper 001's HA-cache)
 *   aware   spin_me_append_ddt() with the calibrated aware chooser
 *   threshold  spin_me_append_ddt() with paper 001's Algorithm 1 (T = 2
 *           KiB; the layout cache reconfigured between the two, untimed)
 *   nic_uncached  the class rule prepared, uploaded and freed per receive
 *           (paper 001's HA: registration on every use)
 *   iovec_uncached, iovec_cached  one descriptor per block (the SGL
 *           analog) prepared per receive, or once per layout
 *   plain   a plain ME on the buffer (Fig. 12's baseline)
 * Every repetition uses a layout not seen before (a vector with a stride of
 * its own), received `uses` times: the per-receive time amortizes the
 * preparation over the uses. Figures: 10 (default; uses 1, 10, 100 at 64 B
 * and 4 KiB blocks, block size 64 B .. 16 KiB at 10 uses, 64 KiB
 * messages), 9 (element count at 8 B, 64 B and 4 KiB blocks, 100 uses; its
 * 4 KiB rows are Fig. 11's cache effect), 3 (block size x uses grid of
 * the NIC prepared per use against host) and 12 (contiguous receives:
 * plain ME against the chooser). Rows: median µs per receive over the
 * repetitions and its ratio to the figure's base variant of the same run.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
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

#include "apps.h"
#include "bench.h"
#include "shim_ddt.h"
#include "shim_ddt_calib.h"

enum {
	V_HOST, V_STATIC, V_AWARE, V_THRESHOLD, V_NIC_U, V_IOVEC_U, V_IOVEC_C,
	V_PLAIN, V_SPEC_C, V_HPUL_C, V_ROCP_C, V_RWCP_C, V_COUNT
};
static const char *const vnames[V_COUNT] = {
	"host", "static", "aware", "threshold", "nic_uncached",
	"iovec_uncached", "iovec_cached", "plain", "specialized", "hpu_local",
	"ro_cp", "rw_cp",
};
#define VM(v) (1u << (v))
/* Fig. 11's cache effect: cached against prepared per use */
#define FIG11 (VM(V_IOVEC_U) | VM(V_IOVEC_C) | VM(V_STATIC) | VM(V_NIC_U))

/* The points: (axis, block bytes, blocks (0: a 64 KiB message), uses). */
struct point {
	const char *axis;    /* Fig. 13: the catalog row (apps.h) */
	int64_t blk, count;
	long uses;
	const struct bench_app *app;
	int64_t bytes;       /* Fig. 13: the message (blk: mean block) */
};
static const struct point points10[] = {
	{ "uses", 64, 0, 1 }, { "uses", 64, 0, 10 }, { "uses", 64, 0, 100 },
	{ "uses", 4096, 0, 1 }, { "uses", 4096, 0, 10 },
	{ "uses", 4096, 0, 100 },
	{ "block", 64, 0, 10 }, { "block", 512, 0, 10 },
	{ "block", 2048, 0, 10 }, { "block", 4096, 0, 10 },
	{ "block", 16384, 0, 10 },
};
/* Fig. 9a (small blocks: 8 B, the paper's 64 B) and 9b (4 KiB) against
 * the element count; osu_latency's 100 iterations of one layout */
static const struct point points9[] = {
	{ "count", 8, 256, 100 }, { "count", 8, 2048, 100 },
	{ "count", 8, 8192, 100 },
	{ "count", 64, 64, 100 }, { "count", 64, 1024, 100 },
	{ "count", 4096, 2, 100 }, { "count", 4096, 8, 100 },
	{ "count", 4096, 16, 100 }, { "count", 4096, 64, 100 },
};
/* Fig. 3: block length x use frequency */
static const struct point points3[] = {
	{ "grid", 64, 0, 1 }, { "grid", 64, 0, 10 }, { "grid", 64, 0, 100 },
	{ "grid", 512, 0, 1 }, { "grid", 512, 0, 10 }, { "grid", 512, 0, 100 },
	{ "grid", 2048, 0, 1 }, { "grid", 2048, 0, 10 },
	{ "grid", 2048, 0, 100 },
	{ "grid", 4096, 0, 1 }, { "grid", 4096, 0, 10 },
	{ "grid", 4096, 0, 100 },
	{ "grid", 16384, 0, 1 }, { "grid", 16384, 0, 10 },
	{ "grid", 16384, 0, 100 },
};
/* Fig. 12: contiguous receives (one block), 8 B to 64 KiB */
static const struct point points12[] = {
	{ "contig", 8, 1, 200 }, { "contig", 4096, 1, 200 },
	{ "contig", 65536, 1, 200 },
};

struct figure {
	const char *name;
	const struct point *pts;
	size_t npts;
	unsigned vmask;  /* variants run */
	int base;        /* the ratios' denominator */
	bool median;     /* a point is the median receive of its uses, not
			    their mean (nothing to amortize: Fig. 12) */
	bool apps;       /* points: the application catalog (Fig. 13); the
			    layout cache is flushed after every aware and
			    threshold point (untimed): a type cannot be
			    made fresh */
};
#define NP(a) (a), (sizeof(a) / sizeof((a)[0]))
static const struct figure figures[] = {
	{ "10", NP(points10), VM(V_HOST) | VM(V_STATIC) | VM(V_AWARE) |
	  VM(V_THRESHOLD), V_HOST },
	{ "9", NP(points9), VM(V_HOST) | VM(V_STATIC) | VM(V_AWARE) |
	  VM(V_THRESHOLD) | VM(V_NIC_U) | VM(V_IOVEC_U) | VM(V_IOVEC_C),
	  V_HOST },
	{ "3", NP(points3), VM(V_HOST) | VM(V_STATIC) | VM(V_AWARE) |
	  VM(V_NIC_U), V_HOST },
	{ "12", NP(points12), VM(V_PLAIN) | VM(V_AWARE), V_PLAIN, true, false },
	{ "13", NULL, 0, VM(V_HOST) | VM(V_STATIC) | VM(V_AWARE) |
	  VM(V_THRESHOLD) | VM(V_IOVEC_C) | VM(V_SPEC_C) | VM(V_HPUL_C) |
	  VM(V_ROCP_C) | VM(V_RWCP_C), V_HOST, false, true },
};
/* Fig. 13's points, from the catalog (filled before the client forks) */
#define APPS_MAX 64
static struct point points13[APPS_MAX];
/* uses of an application type (an exchange per iteration) */
#define APPS_USES 50
/* receives of a point kept for its median (Fig. 12) */
#define MAX_USES_MEDIAN 1000
#define MSG_BYTES (64 << 10)
/* the largest message (Fig. 9b: 64 x 4 KiB) */
#define SRC_BYTES (256 << 10)
/* the window of a layout: 2x the message plus the stride steps */
#define DST_BYTES (32u << 20)
/* fresh layouts' stride steps wrap after so many (by then the layout
 * cache, 256 entries, has long dropped the first) */
#define FRESH_WRAP 1024u

static struct {
	long reps;
	const char *spinnic;
	const struct figure *fig;
	const struct point *pts;  /* the figure's points */
	size_t npts;
} lcfg = { .reps = 5, .fig = &figures[0] };

static const struct bench_cmd_opt layout_opts[] = {
	{ "lreps", 1, "repetitions per point, each with fresh layouts "
		      "(default 5)" },
	{ "figure", 1, "paper 001's figure: 10 (uses and block size, "
		       "default), 9 (element count; 11 in its 4 KiB rows), 3 "
		       "(block x uses grid), 12 (contiguous) or 13 (the "
		       "application types of `apps`, 50 uses each)" },
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
	if (strcmp(name, "figure") == 0) {
		for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]);
		     i++)
			if (strcmp(arg, figures[i].name) == 0) {
				lcfg.fig = &figures[i];
				return 0;
			}
		bench_err("--figure %s: expected 10, 9, 3, 12 or 13", arg);
		return -EINVAL;
	}
	return bench_opt_num(name, arg, nums, 1) == 0 ? 0 : -EINVAL;
}

static int64_t
pt_count(const struct point *p)
{
	return p->count > 0 ? p->count : MSG_BYTES / p->blk;
}

static int64_t
pt_bytes(const struct point *p)
{
	return p->app != NULL ? p->bytes : pt_count(p) * p->blk;
}

/* The figure's points into lcfg (Fig. 13: one per catalog row, its
 * blocks, mean block and bytes). @return 0 or a negative errno */
static int
fig_points(void)
{
	const struct figure *fg = lcfg.fig;
	size_t n = 0;

	if (!fg->apps) {
		lcfg.pts = fg->pts;
		lcfg.npts = fg->npts;
		return 0;
	}
	for (const struct bench_app *a = bench_apps;
	     a->name != NULL && n < APPS_MAX; a++) {
		struct ddt_type *t;
		int64_t nb;
		int rc = bench_app_type(a, &t, NULL);

		if (rc < 0)
			return rc;
		nb = ddt_count_blocks(t, 1);
		points13[n] = (struct point){
			a->name, nb > 0 ? ddt_size(t) / nb : 0, nb > 0 ? nb : 1,
			APPS_USES, a, ddt_size(t),
		};
		ddt_free(t);
		n++;
	}
	lcfg.pts = points13;
	lcfg.npts = n;
	return 0;
}

/* ---- the client ---------------------------------------------------------- */

struct cl {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	uint8_t *src, *dst;
	uint8_t *buf;     /* the receive's buffer (origin) in dst */
	uint64_t match;
	long nic_recvs;   /* aware receives that took a NIC strategy */
	long by_strat[SPIN_TYPE_COUNT]; /* aware receives per strategy */
};

static int
cl_up(struct cl *c)
{
	ptl_md_t md;

	memset(c, 0, sizeof(*c));
	c->src = spin_host_alloc(SRC_BYTES);
	c->dst = spin_host_alloc(DST_BYTES);
	if (c->src == NULL || c->dst == NULL)
		return -ENOMEM;
	memset(c->src, 0x3c, SRC_BYTES);
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &c->ni) != PTL_OK ||
	    PtlGetPhysId(c->ni, &c->self) != PTL_OK ||
	    PtlEQAlloc(c->ni, 256, &c->eq) != PTL_OK ||
	    PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt) != PTL_OK)
		return -EIO;
	memset(&md, 0, sizeof(md));
	md.start = c->src;
	md.length = SRC_BYTES;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	return PtlMDBind(c->ni, &md, &c->md) == PTL_OK ? 0 : -EIO;
}

/* One receive of bytes by variant v (off: an explicit object; t: aware
 * and threshold; plain: an ME on the buffer). @return 0 or -EIO */
static int
cl_recv(struct cl *c, int v, struct spin_type_offload *off,
	const struct ddt_type *t, int64_t bytes)
{
	struct spin_typed_recv *r = NULL;
	ptl_handle_me_t meh;
	ptl_event_t ev;
	ptl_me_t me;
	int rc;

	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = ++c->match;
	if (v == V_PLAIN) {
		/* what a typed receive of a contiguous type posts */
		me.start = c->dst;
		me.length = (ptl_size_t)bytes;
		me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
			PTL_ME_EVENT_UNLINK_DISABLE |
			PTL_ME_EVENT_LINK_DISABLE;
		rc = PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, c,
				 &meh);
	} else if (v == V_AWARE || v == V_THRESHOLD) {
		rc = spin_me_append_ddt(c->ni, c->pt, &me, t, 1, c->buf, NULL,
					&r);
	} else {
		rc = spin_me_append_typed(c->ni, c->pt, &me, off, c->buf, NULL,
					  &r);
	}
	if (rc != PTL_OK)
		return -EIO;
	if (v == V_AWARE) {
		enum spin_type_strategy s = spin_typed_recv_strategy(r);

		if (s != SPIN_TYPE_HOST && s != SPIN_TYPE_CONTIG)
			c->nic_recvs++;
		if ((unsigned)s < SPIN_TYPE_COUNT)
			c->by_strat[s]++;
	}
	if (PtlPut(c->md, 0, (ptl_size_t)bytes, PTL_NO_ACK_REQ, c->self,
		   c->pt, me.match_bits, 0, NULL, 0) != PTL_OK)
		return -EIO;
	for (;;) {
		rc = PtlEQGet(c->eq, &ev);
		if (rc == PTL_EQ_EMPTY)
			continue;
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED)
			return -EIO;
		if (ev.type == PTL_EVENT_PUT &&
		    ev.user_ptr == (v == V_PLAIN ? (void *)c : (void *)r))
			break;
	}
	if (v == V_PLAIN)
		return ev.ni_fail_type == PTL_NI_OK &&
			ev.mlength == (ptl_size_t)bytes ? 0 : -EIO;
	return spin_typed_recv_complete(r, &ev, NULL) == PTL_OK &&
		ev.ni_fail_type == PTL_NI_OK ? 0 : -EIO;
}

/* A layout of n blocks of blk bytes not used before: its own stride
 * (steps of 8 bytes, of 1 below 64-byte blocks so that 8192 of them fit
 * the window); one contiguous block when n is 1. */
static struct ddt_type *
fresh_layout(int64_t blk, int64_t n, unsigned k)
{
	int64_t stride = 2 * blk + (blk >= 64 ? 8 : 1) *
		(int64_t)(k % FRESH_WRAP);
	struct ddt_type *t;

	if (n * stride > DST_BYTES || n * blk > SRC_BYTES)
		return NULL;
	t = n == 1 ? ddt_contiguous(blk, ddt_base(DDT_BYTE)) :
		ddt_vector(n, blk, stride, ddt_base(DDT_BYTE));
	if (t != NULL && ddt_commit(t) != 0) {
		ddt_free(t);
		t = NULL;
	}
	return t;
}

/* The explicit object of variant v (NULL for aware, threshold, plain). */
static int
cl_object(struct cl *c, int v, const struct ddt_type *t,
	  struct spin_type_offload **off_p)
{
	enum spin_type_strategy s;

	*off_p = NULL;
	switch (v) {
	case V_HOST:
		s = SPIN_TYPE_HOST;
		break;
	case V_STATIC:
	case V_NIC_U:
		s = SPIN_TYPE_AUTO;
		break;
	case V_IOVEC_U:
	case V_IOVEC_C:
		s = SPIN_TYPE_IOVEC;
		break;
	case V_SPEC_C:
		s = SPIN_TYPE_SPECIALIZED;
		break;
	case V_HPUL_C:
		s = SPIN_TYPE_HPU_LOCAL;
		break;
	case V_ROCP_C:
		s = SPIN_TYPE_RO_CP;
		break;
	case V_RWCP_C:
		s = SPIN_TYPE_RW_CP;
		break;
	default:
		return 0;
	}
	/* a strategy that cannot express the layout (specialized for a
	 * general type): not available, the point says so */
	return spin_type_offload(c->ni, t, 1, s, off_p) == PTL_OK ? 0 :
		-ENOTSUP;
}

/* uses receives of one fresh layout by variant v: µs per receive. The
 * uncached variants prepare (and upload, at the post) and free their
 * object around every receive; the others make it once per layout. */
static int
cl_point(struct cl *c, int v, const struct point *pt, unsigned k,
	 double *us_p)
{
	struct spin_type_offload *off = NULL;
	int64_t n = pt_count(pt), bytes = n * pt->blk, lo;
	struct ddt_type *t = NULL;
	bool per_use = v == V_NIC_U || v == V_IOVEC_U;
	double a, one[MAX_USES_MEDIAN];
	int rc = 0;

	c->buf = c->dst;
	if (pt->app != NULL) {
		/* an application type: its own window, placed in dst */
		if (bench_app_type(pt->app, &t, NULL) < 0)
			return -EINVAL;
		bytes = ddt_size(t);
		lo = ddt_true_lb(t);
		if (bytes > SRC_BYTES || bytes <= 0 || (lo < 0 ? -lo : 0) +
		    lo + ddt_true_extent(t) > (int64_t)DST_BYTES) {
			ddt_free(t);
			return -E2BIG;
		}
		c->buf = c->dst + (lo < 0 ? -lo : 0);
	} else {
		t = fresh_layout(pt->blk, n, k);
	}
	if (t == NULL)
		return -ENOMEM;
	a = bench_now();
	if (!per_use)
		rc = cl_object(c, v, t, &off);
	for (long u = 0; rc == 0 && u < pt->uses; u++) {
		double b = bench_now();

		if (per_use)
			rc = cl_object(c, v, t, &off);
		if (rc == 0)
			rc = cl_recv(c, v, off, t, bytes);
		if (per_use && off != NULL) {
			spin_type_offload_free(off);
			off = NULL;
		}
		if (u < MAX_USES_MEDIAN)
			one[u] = (bench_now() - b) * 1e6;
	}
	*us_p = (bench_now() - a) * 1e6 / (double)pt->uses;
	if (rc == -ENOTSUP || rc == -E2BIG) {
		*us_p = NAN;
		rc = 0;
	}
	if (rc == 0 && lcfg.fig->median)
		*us_p = bench_median(one, (int)(pt->uses < MAX_USES_MEDIAN ?
						pt->uses : MAX_USES_MEDIAN));
	if (off != NULL)
		spin_type_offload_free(off);
	ddt_free(t);
	/* the cache keeps no prepared application type for the next point
	 * (untimed; waits for a preparation in progress) */
	if (rc == 0 && lcfg.fig->apps && (v == V_AWARE || v == V_THRESHOLD) &&
	    spin_type_cache_flush(c->ni) != PTL_OK)
		rc = -EIO;
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

	t[0] = fresh_layout(4096, 16, (*k)++);
	if (t[0] == NULL)
		return -EIO;
	/* two uses queue its preparation; let it finish */
	for (i = 0; rc == 0 && i < 2; i++)
		rc = cl_recv(c, V_AWARE, NULL, t[0], MSG_BYTES);
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
		t[i] = fresh_layout(4096, 16, (*k)++);
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

/* The variants of the figure, in order; @return their number */
static int
fig_variants(int *vs)
{
	int n = 0;

	for (int v = 0; v < V_COUNT; v++)
		if (lcfg.fig->vmask & VM(v))
			vs[n++] = v;
	return n;
}

/* The child: calibrate (waits for the table), then every point, then the
 * decision cost. Writes reps * npts * V_COUNT times, then the aware
 * NIC share per point, the calibration's ms and whether it has a table,
 * then per point the NIC strategy aware used most (SPIN_TYPE_HOST: none),
 * then decide_cost()'s three figures. */
#define NEXTRA(np) (2 * (np) + 5)
static int
client_run(int fd)
{
	static const struct point warm = { "warm", 4096, 0, 1 };
	size_t np = lcfg.npts, nres = (size_t)lcfg.reps * np * V_COUNT;
	double *res = calloc(nres + NEXTRA(np), sizeof(double));
	struct shim_lc_config aw;
	struct shim_calib cal;
	int rc, i, cur = V_AWARE, vs[V_COUNT], nv = fig_variants(vs);
	unsigned k = 1;
	struct cl c;
	double us;

	if (res == NULL)
		return -ENOMEM;
	rc = cl_up(&c);
	/* the first aware receive starts the calibration (no file: it is
	 * measured); wait for it so that aware runs with its table */
	if (rc == 0)
		rc = cl_point(&c, V_AWARE, &warm, k++, &us);
	for (i = 0; rc == 0 && i < 2000 && !shim_lc_calibrated(&cal); i++)
		usleep(10000);
	if (rc == 0 && !shim_lc_calibrated(&cal))
		memset(&cal, 0, sizeof(cal));
	shim_lc_config_get(&aw);
	for (long r = 0; rc == 0 && r < lcfg.reps; r++)
		for (size_t p = 0; rc == 0 && p < np; p++) {
			long before = c.nic_recvs;

			if (r == 0)
				memset(c.by_strat, 0, sizeof(c.by_strat));
			for (int j = 0; rc == 0 && j < nv; j++) {
				/* rotated per repetition and point */
				int v = vs[(j + r + (long)p) % nv];

				chooser_set(v, &aw, &cur);
				rc = cl_point(&c, v, &lcfg.pts[p], k++, &us);
				res[((size_t)r * np + p) * V_COUNT +
				    (size_t)v] = us;
			}
			res[nres + p] += (double)(c.nic_recvs - before) /
				(double)(lcfg.pts[p].uses * lcfg.reps);
			if (r == 0) {
				int best = SPIN_TYPE_HOST;

				for (int s = SPIN_TYPE_IOVEC; s < SPIN_TYPE_COUNT;
				     s++)
					if (c.by_strat[s] > c.by_strat[best] ||
					    (best == SPIN_TYPE_HOST &&
					     c.by_strat[s] > 0))
						best = s;
				res[nres + np + 2 + p] = best;
			}
		}
	chooser_set(V_AWARE, &aw, &cur);
	res[nres + np] = cal.calib_ms;
	res[nres + np + 1] = cal.costs.s[SPIN_TYPE_HOST].valid ? 1 : 0;
	if (rc == 0)
		rc = decide_cost(&c, &k, &res[nres + 2 * np + 2]);
	if (rc == 0)
		rc = bench_io_all(fd, res, (nres + NEXTRA(np)) * sizeof(double),
				  true);
	free(res);
	return rc;
}

/* ---- the bench ------------------------------------------------------------ */

/* Column names: "<variant>_us", "<variant>_vs_<base>" */
#define MAX_COLS 40
static char colname[MAX_COLS][48];

static int
cols_make(struct bench_col *cols)
{
	static const char *const fixed[] = {
		"axis", "block_b", "count", "msg_b", "uses",
	};
	const struct figure *fg = lcfg.fig;
	int n = 0, vs[V_COUNT], nv = fig_variants(vs);

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		cols[n].name = fixed[i];
		cols[n].kind = i == 0 ? BENCH_COL_STR : BENCH_COL_INT;
		cols[n++].prec = 0;
	}
	for (int j = 0; j < nv; j++) {
		snprintf(colname[n], sizeof(colname[n]), "%s_us", vnames[vs[j]]);
		cols[n] = (struct bench_col){ colname[n], BENCH_COL_NUM, 1 };
		n++;
	}
	for (int j = 0; j < nv; j++) {
		if (vs[j] == fg->base)
			continue;
		snprintf(colname[n], sizeof(colname[n]), "%s_vs_%s",
			 vnames[vs[j]], vnames[fg->base]);
		cols[n] = (struct bench_col){ colname[n], BENCH_COL_NUM, 2 };
		n++;
	}
	if (fg->vmask & VM(V_STATIC))
		cols[n++] = (struct bench_col){ "aware_vs_static",
						BENCH_COL_NUM, 2 };
	if (fg->base != V_PLAIN) {
		cols[n++] = (struct bench_col){ "aware_vs_best",
						BENCH_COL_NUM, 2 };
		cols[n++] = (struct bench_col){ "best", BENCH_COL_STR, 0 };
		cols[n++] = (struct bench_col){ "aware_nic_share",
						BENCH_COL_NUM, 2 };
		cols[n++] = (struct bench_col){ "aware_nic", BENCH_COL_STR,
						0 };
	}
	if ((fg->vmask & FIG11) == FIG11) {
		cols[n++] = (struct bench_col){ "iovec_cached_vs_uncached",
						BENCH_COL_NUM, 2 };
		cols[n++] = (struct bench_col){ "static_vs_nic_uncached",
						BENCH_COL_NUM, 2 };
	}
	return n;
}

static int
layout_run(const struct bench_opts *o)
{
	const struct figure *fg = lcfg.fig;
	struct bench_spinnic nic = { .pid = -1 };
	const char *extra[] = { NULL };
	struct bench_table *tab = NULL;
	struct bench_col cols[MAX_COLS];
	double *res = NULL, *col = NULL;
	char sock[400], calib[400], name[64];
	int pfd[2] = { -1, -1 }, rc, st, ncpus, vs[V_COUNT], nv, ncols;
	size_t np, nres;
	pid_t child;

	rc = fig_points();
	if (rc < 0)
		return rc;
	np = lcfg.npts;
	nres = (size_t)lcfg.reps * np * V_COUNT;
	nv = fig_variants(vs);
	res = calloc(nres + NEXTRA(np), sizeof(double));
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
	rc = bench_io_all(pfd[0], res, (nres + NEXTRA(np)) * sizeof(double),
			  false);
	if (rc < 0)
		kill(child, SIGKILL);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		bench_err("layout client failed (status 0x%x)", st);
		rc = -EIO;
		goto out;
	}
	ncols = cols_make(cols);
	tab = bench_table_create(cols, ncols);
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t p = 0; p < np; p++) {
		const struct point *pt = &lcfg.pts[p];
		double m[V_COUNT], best = 0.0;
		int bv = -1;

		for (int j = 0; j < nv; j++) {
			int v = vs[j];

			m[v] = 0.0;
			for (long r = 0; r < lcfg.reps; r++) {
				col[r] = res[((size_t)r * np + p) * V_COUNT +
					     (size_t)v];
				if (isnan(col[r]))
					m[v] = NAN; /* not available */
			}
			if (!isnan(m[v]))
				m[v] = bench_median(col, (int)lcfg.reps);
			/* the best fixed variant: not a chooser */
			if (!isnan(m[v]) && v != V_AWARE && v != V_THRESHOLD &&
			    (bv < 0 || m[v] < best)) {
				best = m[v];
				bv = v;
			}
		}
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "axis", pt->axis);
		bench_table_set_int(tab, "block_b", pt->blk);
		bench_table_set_int(tab, "count", pt_count(pt));
		bench_table_set_int(tab, "msg_b", pt_bytes(pt));
		bench_table_set_int(tab, "uses", pt->uses);
		for (int j = 0; j < nv; j++) {
			int v = vs[j];

			if (isnan(m[v]) || isnan(m[fg->base]))
				continue; /* '-': not available */
			snprintf(name, sizeof(name), "%s_us", vnames[v]);
			bench_table_set_num(tab, name, m[v]);
			if (v == fg->base)
				continue;
			snprintf(name, sizeof(name), "%s_vs_%s", vnames[v],
				 vnames[fg->base]);
			bench_table_set_num(tab, name, m[v] / m[fg->base]);
		}
		if ((fg->vmask & VM(V_STATIC)) && !isnan(m[V_STATIC]))
			bench_table_set_num(tab, "aware_vs_static",
					    m[V_AWARE] / m[V_STATIC]);
		if (fg->base != V_PLAIN && bv >= 0) {
			bench_table_set_num(tab, "aware_vs_best",
					    m[V_AWARE] / best);
			bench_table_set_str(tab, "best", vnames[bv]);
			bench_table_set_num(tab, "aware_nic_share",
					    res[nres + p]);
			bench_table_set_str(tab, "aware_nic",
				spin_type_strategy_name(
				(enum spin_type_strategy)res[nres + np + 2 +
							     p]));
		}
		if ((fg->vmask & FIG11) == FIG11) {
			bench_table_set_num(tab, "iovec_cached_vs_uncached",
					    m[V_IOVEC_C] / m[V_IOVEC_U]);
			bench_table_set_num(tab, "static_vs_nic_uncached",
					    m[V_STATIC] / m[V_NIC_U]);
		}
	}
	rc = bench_table_emit(tab, o);
	printf("# figure %s: spinnic --virtual 2 --idle-sleep-us 0 (2 HPUs), "
	       "one client on %d CPU(s) off the lcore receiving from itself; "
	       "per receive: post to completion, µs, median of %ld "
	       "repetitions, each a fresh layout used `uses` times by each "
	       "variant in rotated order; *_vs_%s = time / %s time (below 1: "
	       "faster); best: the fastest variant that is not a chooser; "
	       "calibration %s in %.1f ms\n", fg->name, ncpus, lcfg.reps,
	       vnames[fg->base], vnames[fg->base],
	       res[nres + np + 1] > 0 ? "measured" : "NOT available",
	       res[nres + np]);
	printf("# layout cache per post, no receive, medians: hit %.0f ns "
	       "(%d batches of %d posts of one prepared layout), miss %.0f ns "
	       "(%d fresh layouts: hash, features, host object, decision; "
	       "the host variant's own object per layout %.0f ns)\n",
	       res[nres + 2 * np + 2], DECIDE_BATCHES, DECIDE_BATCH,
	       res[nres + 2 * np + 3], DECIDE_MISSES,
	       res[nres + 2 * np + 4]);
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
	.summary = "layout-aware typed receives (paper 001's figures 10, 9, "
		   "11, 3, 12): host, NIC strategies cached and per use, "
		   "static, aware and threshold per receive",
	.opts = layout_opts,
	.opt = layout_opt,
	.run = layout_run,
};
