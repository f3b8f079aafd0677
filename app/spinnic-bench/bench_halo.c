/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench halo (paper 001 Fig. 14b, issue #16; doc/NOTES.md
 * "Layout-aware typed receives"): a miniGhost-like halo exchange of the
 * faces of a 3-D grid between two processes through a real `spinnic
 * --virtual 2 --idle-sleep-us 0`, the faces received as typed receives,
 * iteration by iteration. This process is rank 0 on node 0, a forked child
 * rank 1 on node 1. Each rank holds a (n+2)^3 grid of doubles (ghost
 * layer 1) and every iteration receives three faces from the other rank
 * into its ghost planes — x (n^2 blocks of 8 B: one double per row), y and
 * z (n blocks of 8n B) — while it puts its own three (their packed
 * streams, a pattern per iteration) to the other. An iteration: post the
 * three receives, tell the peer (an 8-byte put to its ready entry), wait
 * for the peer's word, put the three faces, complete the three receives
 * (blocking EQ wait: the ranks share the CPUs off the lcore), wait for the acknowledgements; rank 0 times it from
 * the first post to the last acknowledgement. Variants, one run of
 * --iters iterations each, alternating in rotated order per repetition:
 *   host   the faces' SPIN_TYPE_HOST objects made once (MPI's host-ddt)
 *   aware  spin_me_append_ddt() with the calibrated chooser; the layout
 *          cache is flushed before each run (untimed), so that every run
 *          shows the switch: first uses on the host, then the NIC where
 *          the chooser predicts it faster and has prepared it
 * Rows: one per group of --group iterations, the median over the
 * repetitions' receives of that group, aware / host, and the share of
 * aware's receives of each face that went to the NIC: the per-iteration
 * curve of the switch. Every received face is checked against the
 * pattern (ddt_pack of the ghost plane) after the iteration's time.
 * SPINNIC_DDT_TRACE=F: rank 0's decisions in F, rank 1's in F.rank1.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>

#include "bench.h"
#include "shim_ddt.h"
#include "shim_ddt_calib.h"

#define FACES 3
#define READY_BITS 0x4a10ull
#define WAIT_MS 30000
#define MAX_ITERS 10000

enum { V_HOST, V_AWARE, V_COUNT };
static const char *const vnames[V_COUNT] = { "host", "aware" };
static const char *const fnames[FACES] = { "x", "y", "z" };

static struct {
	long n, iters, group, reps;
	const char *spinnic, *spinnic_log;
} hcfg = { 32, 100, 5, 5, NULL, NULL };

static const struct bench_cmd_opt halo_opts[] = {
	{ "grid", 1, "interior points per side n of each rank's (n+2)^3 "
		     "grid of doubles (default 32; 4 to 128)" },
	{ "iters", 1, "iterations per run (default 100)" },
	{ "group", 1, "iterations per row (default 5)" },
	{ "hreps", 1, "repetitions: runs per variant (default 5)" },
	{ "spinnic", 1, "spinnic binary (default: beside spinnic-bench)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
halo_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "grid", &hcfg.n, 4, 128 },
		{ "iters", &hcfg.iters, 1, MAX_ITERS },
		{ "group", &hcfg.group, 1, MAX_ITERS },
		{ "hreps", &hcfg.reps, 1, 1000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		hcfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		hcfg.spinnic_log = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0]));
}

/* ---- one rank ------------------------------------------------------------ */

struct hrank {
	unsigned me;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_handle_ct_t ct_ready, ct_send;
	ptl_handle_me_t ready_me;
	ptl_handle_md_t md;
	double *grid;             /* (n+2)^3, region */
	uint64_t *sbuf;           /* FACES packed faces, then the ready word */
	uint64_t *ready;          /* the peer's ready words land here */
	uint64_t *chk;            /* a received face packed again */
	size_t nd;                /* doubles per face (n^2) */
	size_t origin[FACES];     /* element of each ghost face's origin */
	struct ddt_type *face[FACES];
	struct spin_type_offload *host[FACES];
	ptl_process_t peer;
	ptl_pt_index_t peer_pt;
	uint64_t readies, acks;
	double calib_ms;
};

struct pid_pt {
	uint32_t nid, pid, pt;
};

#define RCHECK(r, call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("halo rank %u: %s: %d", (r)->me, #call, rc_); \
		return -EIO; \
	} \
} while (0)

static uint64_t
pat(unsigned from, uint64_t it, unsigned f, size_t i)
{
	return ((uint64_t)from << 56) ^ (it << 32) ^ ((uint64_t)f << 28) ^
		(uint64_t)i;
}

/* The three faces of an (n+2)^3 grid (z slowest, x fastest), each from
 * the origin of its first point: x = const (n^2 single doubles), y =
 * const (n rows of n doubles, a plane apart), z = const (n rows of n
 * doubles, a row apart). */
static int
faces_make(struct hrank *r, int64_t n)
{
	int64_t N = n + 2;
	struct ddt_type *d = ddt_base(DDT_DOUBLE), *row;

	row = ddt_vector(n, 1, N, d);
	r->face[0] = row == NULL ? NULL :
		ddt_hvector(n, 1, N * N * (int64_t)sizeof(double), row);
	ddt_free(row);
	r->face[1] = ddt_vector(n, n, N * N, d);
	r->face[2] = ddt_vector(n, n, N, d);
	for (int f = 0; f < FACES; f++)
		if (r->face[f] == NULL || ddt_commit(r->face[f]) != 0 ||
		    ddt_size(r->face[f]) != n * n * (int64_t)sizeof(double))
			return -EINVAL;
	/* the ghost planes: x = 0, y = 0, z = 0 */
	r->origin[0] = (size_t)((1 * N + 1) * N + 0);
	r->origin[1] = (size_t)((1 * N + 0) * N + 1);
	r->origin[2] = (size_t)((0 * N + 1) * N + 1);
	r->nd = (size_t)(n * n);
	return 0;
}

/* The aware chooser's table: the first aware post starts the calibration
 * (rank 0 measures it into the file, rank 1 reads the file); a receive
 * posted and cancelled starts it, then the cache is flushed. */
static int
calibrate(struct hrank *r)
{
	struct spin_typed_recv *rv;
	struct shim_calib cal;
	ptl_me_t me;
	int i;

	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = ~0ull;
	RCHECK(r, spin_me_append_ddt(r->ni, r->pt, &me, r->face[1], 1,
				     r->grid + r->origin[1], NULL, &rv));
	RCHECK(r, spin_typed_recv_cancel(rv));
	for (i = 0; i < 3000 && !shim_lc_calibrated(&cal); i++)
		usleep(10000);
	if (!shim_lc_calibrated(&cal)) {
		bench_err("halo rank %u: no calibration table", r->me);
		return -EIO;
	}
	r->calib_ms = cal.calib_ms;
	RCHECK(r, spin_type_cache_flush(r->ni));
	return 0;
}

static int
rank_open(struct hrank *r, int rfd, int wfd)
{
	int64_t N = hcfg.n + 2;
	size_t gb = (size_t)(N * N * N) * sizeof(double);
	struct pid_pt self, other;
	ptl_process_t id;
	ptl_md_t md;
	ptl_me_t me;
	int rc;

	RCHECK(r, PtlInit());
	RCHECK(r, PtlNIInit(PTL_IFACE_DEFAULT,
			    PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			    NULL, NULL, &r->ni));
	RCHECK(r, PtlGetPhysId(r->ni, &id));
	RCHECK(r, PtlEQAlloc(r->ni, 256, &r->eq));
	RCHECK(r, PtlPTAlloc(r->ni, 0, r->eq, PTL_PT_ANY, &r->pt));
	RCHECK(r, PtlCTAlloc(r->ni, &r->ct_ready));
	RCHECK(r, PtlCTAlloc(r->ni, &r->ct_send));
	rc = faces_make(r, hcfg.n);
	if (rc != 0) {
		bench_err("halo rank %u: the face types", r->me);
		return rc;
	}
	r->grid = spin_host_alloc(gb);
	r->sbuf = spin_host_alloc((FACES * r->nd + 1) * sizeof(uint64_t));
	r->ready = spin_host_alloc(sizeof(uint64_t));
	r->chk = malloc(r->nd * sizeof(uint64_t));
	if (r->grid == NULL || r->sbuf == NULL || r->ready == NULL ||
	    r->chk == NULL) {
		bench_err("halo rank %u: no memory for a %" PRId64 "^3 grid",
			  r->me, N);
		return -ENOMEM;
	}
	memset(r->grid, 0, gb);
	for (int f = 0; f < FACES; f++)
		RCHECK(r, spin_type_offload(r->ni, r->face[f], 1,
					    SPIN_TYPE_HOST, &r->host[f]));
	memset(&me, 0, sizeof(me));
	me.start = r->ready;
	me.length = sizeof(uint64_t);
	me.ct_handle = r->ct_ready;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = READY_BITS;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE |
		PTL_ME_EVENT_UNLINK_DISABLE;
	RCHECK(r, PtlMEAppend(r->ni, r->pt, &me, PTL_PRIORITY_LIST, NULL,
			      &r->ready_me));
	memset(&md, 0, sizeof(md));
	md.start = r->sbuf;
	md.length = (FACES * r->nd + 1) * sizeof(uint64_t);
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = r->ct_send;
	md.options = PTL_MD_EVENT_CT_ACK;
	RCHECK(r, PtlMDBind(r->ni, &md, &r->md));
	/* rank 0 measures the table before rank 1 reads it from the file */
	if (r->me == 0 && (rc = calibrate(r)) != 0)
		return rc;
	self = (struct pid_pt){ id.phys.nid, id.phys.pid, r->pt };
	if (bench_io_all(wfd, &self, sizeof(self), true) != 0 ||
	    bench_io_all(rfd, &other, sizeof(other), false) != 0) {
		bench_err("halo rank %u: the other rank did not start", r->me);
		return -EIO;
	}
	r->peer.phys.nid = other.nid;
	r->peer.phys.pid = other.pid;
	r->peer_pt = (ptl_pt_index_t)other.pt;
	if (r->me == 1 && (rc = calibrate(r)) != 0)
		return rc;
	return 0;
}

static void
rank_close(struct hrank *r)
{
	PtlMDRelease(r->md);
	PtlMEUnlink(r->ready_me);
	for (int f = 0; f < FACES; f++) {
		if (r->host[f] != NULL)
			spin_type_offload_free(r->host[f]);
		ddt_free(r->face[f]);
	}
	spin_type_cache_flush(r->ni);
	PtlCTFree(r->ct_send);
	PtlCTFree(r->ct_ready);
	PtlNIFini(r->ni);
	PtlFini();
	free(r->chk);
}

/* Wait until @p ct reaches @p want with no failure. */
static int
ct_reach(struct hrank *r, ptl_handle_ct_t ct, uint64_t want, const char *what)
{
	ptl_ct_event_t ev;
	unsigned which;
	int rc;

	rc = PtlCTPoll(&ct, &want, 1, WAIT_MS, &ev, &which);
	if (rc != PTL_OK || ev.failure != 0) {
		bench_err("halo rank %u: %s: counter %" PRIu64 " failures %"
			  PRIu64 " (wanted %" PRIu64 "), rc %d", r->me, what,
			  (uint64_t)ev.success, (uint64_t)ev.failure, want,
			  rc);
		return -EIO;
	}
	return 0;
}

/* One iteration @p it by variant @p v: *us_p its time, *nic_p the faces
 * received by a NIC strategy (bit per face). */
static int
halo_iter(struct hrank *r, int v, uint64_t it, double *us_p, unsigned *nic_p)
{
	struct spin_typed_recv *rv[FACES];
	size_t fb = r->nd * sizeof(uint64_t);
	unsigned got = 0, done = 0;
	ptl_event_t ev;
	ptl_me_t me;
	double t0;
	int rc;

	for (unsigned f = 0; f < FACES; f++)
		for (size_t i = 0; i < r->nd; i++)
			r->sbuf[f * r->nd + i] = pat(r->me, it, f, i);
	*nic_p = 0;
	t0 = bench_now();
	for (unsigned f = 0; f < FACES; f++) {
		enum spin_type_strategy s;

		memset(&me, 0, sizeof(me));
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = it << 2 | f;
		if (v == V_AWARE)
			rc = spin_me_append_ddt(r->ni, r->pt, &me, r->face[f],
						1, r->grid + r->origin[f],
						NULL, &rv[f]);
		else
			rc = spin_me_append_typed(r->ni, r->pt, &me,
						  r->host[f],
						  r->grid + r->origin[f],
						  NULL, &rv[f]);
		if (rc != PTL_OK) {
			bench_err("halo rank %u: typed receive of face %s: %d",
				  r->me, fnames[f], rc);
			return -EIO;
		}
		s = spin_typed_recv_strategy(rv[f]);
		if (s != SPIN_TYPE_HOST && s != SPIN_TYPE_CONTIG)
			*nic_p |= 1u << f;
	}
	RCHECK(r, PtlPut(r->md, FACES * fb, sizeof(uint64_t), PTL_NO_ACK_REQ,
			 r->peer, r->peer_pt, READY_BITS, 0, NULL, 0));
	if (ct_reach(r, r->ct_ready, ++r->readies, "peer's ready") != 0)
		return -EIO;
	for (unsigned f = 0; f < FACES; f++)
		RCHECK(r, PtlPut(r->md, f * fb, fb, PTL_CT_ACK_REQ, r->peer,
				 r->peer_pt, it << 2 | f, 0, NULL, 0));
	while (got < FACES) {
		unsigned f, which;

		/* a blocking wait: the two ranks share the CPUs off the
		 * lcore, a busy poll would hold one from the other */
		rc = PtlEQPoll(&r->eq, 1, WAIT_MS, &ev, &which);
		if (rc != PTL_OK && rc != PTL_EQ_DROPPED) {
			bench_err("halo rank %u: waiting for faces: %d", r->me,
				  rc);
			return -EIO;
		}
		if (ev.type != PTL_EVENT_PUT)
			continue;
		for (f = 0; f < FACES && ((done >> f & 1) ||
					  ev.user_ptr != rv[f]); f++)
			;
		if (f == FACES)
			continue;
		if (spin_typed_recv_complete(rv[f], &ev, NULL) != PTL_OK ||
		    ev.ni_fail_type != PTL_NI_OK) {
			bench_err("halo rank %u: face %s of iteration %" PRIu64
				  " failed", r->me, fnames[f], it);
			return -EIO;
		}
		done |= 1u << f;
		got++;
	}
	if (ct_reach(r, r->ct_send, r->acks += FACES, "own faces") != 0)
		return -EIO;
	*us_p = (bench_now() - t0) * 1e6;
	for (unsigned f = 0; f < FACES; f++) {
		if (ddt_pack(r->face[f], 1, r->grid + r->origin[f], r->chk) != 0)
			return -EIO;
		for (size_t i = 0; i < r->nd; i++)
			if (r->chk[i] != pat(1 - r->me, it, f, i)) {
				bench_err("halo rank %u: %s face of iteration %"
					  PRIu64 " (%s): double %zu wrong",
					  r->me, fnames[f], it, vnames[v], i);
				return -EIO;
			}
	}
	return 0;
}

/* Every repetition, both variants in rotated order; rank 0 records the
 * times t[(rep * V_COUNT + v) * iters + i] and aware's NIC faces
 * nic[rep * iters + i]. */
static int
rank_run(struct hrank *r, int rfd, int wfd, double *t, double *nic)
{
	uint64_t it = 1;
	int rc = rank_open(r, rfd, wfd);

	for (long rep = 0; rep < hcfg.reps && rc == 0; rep++)
		for (int j = 0; j < V_COUNT && rc == 0; j++) {
			int v = (int)((j + rep) % V_COUNT);

			/* every aware run starts from an empty cache */
			if (v == V_AWARE &&
			    spin_type_cache_flush(r->ni) != PTL_OK)
				rc = -EIO;
			for (long i = 0; i < hcfg.iters && rc == 0; i++) {
				unsigned mask;
				double us;

				rc = halo_iter(r, v, it++, &us, &mask);
				if (rc != 0 || t == NULL)
					continue;
				t[((size_t)rep * V_COUNT + (size_t)v) *
				  (size_t)hcfg.iters + (size_t)i] = us;
				if (v == V_AWARE)
					nic[(size_t)rep * (size_t)hcfg.iters +
					    (size_t)i] = mask;
			}
		}
	if (t != NULL)
		nic[(size_t)hcfg.reps * (size_t)hcfg.iters] = r->calib_ms;
	rank_close(r);
	return rc;
}

/* ---- the subcommand ------------------------------------------------------ */

static int
halo_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "iter_first", BENCH_COL_INT, 0 },
		{ "iter_last", BENCH_COL_INT, 0 },
		{ "host_us", BENCH_COL_NUM, 1 },
		{ "aware_us", BENCH_COL_NUM, 1 },
		{ "aware_vs_host", BENCH_COL_NUM, 2 },
		{ "aware_nic_x", BENCH_COL_NUM, 2 },
		{ "aware_nic_y", BENCH_COL_NUM, 2 },
		{ "aware_nic_z", BENCH_COL_NUM, 2 },
	};
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_pair pair = { .child = -1, .rd = -1, .wr = -1 };
	struct bench_table *tab = NULL;
	size_t nt = (size_t)hcfg.reps * V_COUNT * (size_t)hcfg.iters;
	size_t nn = (size_t)hcfg.reps * (size_t)hcfg.iters;
	double *t = NULL, *nm = NULL, *col = NULL, calib_ms;
	char calib[400];
	struct hrank r0, r1;
	int rc, ncpus;

	(void)o->verify; /* every face is checked */
	if (hcfg.group > hcfg.iters)
		hcfg.group = hcfg.iters;
	t = calloc(nt, sizeof(*t));
	nm = calloc(nn + 1, sizeof(*nm));
	col = calloc((size_t)hcfg.reps * (size_t)hcfg.group, sizeof(*col));
	if (t == NULL || nm == NULL || col == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	bench_spinnic_signals();
	rc = bench_spinnic_start(&nic, hcfg.spinnic,
				 (const char *const[]){ NULL });
	if (rc < 0)
		goto out;
	ncpus = bench_clients_off_lcore();
	/* this run's own calibration: rank 0 measures, rank 1 reads it */
	snprintf(calib, sizeof(calib), "%s/ddt-calib", nic.dir);
	setenv("SPINNIC_DDT_CALIB_FILE", calib, 1);
	unsetenv("SPINNIC_DDT_CHOOSER");
	unsetenv("SPINNIC_DDT_STRATEGY");
	rc = bench_pair_fork(&pair, &nic);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		setenv("SPINNIC_DDT_CALIB", "auto", 1);
		/* a decision trace per process: the replay reads one */
		if (getenv("SPINNIC_DDT_TRACE") != NULL &&
		    *getenv("SPINNIC_DDT_TRACE") != '\0') {
			char tr[600];

			snprintf(tr, sizeof(tr), "%s.rank1",
				 getenv("SPINNIC_DDT_TRACE"));
			setenv("SPINNIC_DDT_TRACE", tr, 1);
		}
		memset(&r1, 0, sizeof(r1));
		r1.me = 1;
		_exit(rank_run(&r1, pair.rd, pair.wr, NULL, NULL) == 0 ? 0 :
		      1);
	}
	setenv("SPINNIC_DDT_CALIB", "force", 1);
	memset(&r0, 0, sizeof(r0));
	r0.me = 0;
	rc = rank_run(&r0, pair.rd, pair.wr, t, nm);
	rc = bench_pair_end(&pair, rc);
	if (rc < 0)
		goto out;
	calib_ms = nm[nn];
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (long g0 = 0; g0 < hcfg.iters && rc == 0; g0 += hcfg.group) {
		long g1 = g0 + hcfg.group < hcfg.iters ? g0 + hcfg.group :
			hcfg.iters;
		int k;
		double m[V_COUNT], share[FACES] = { 0 };

		for (int v = 0; v < V_COUNT; v++) {
			k = 0;
			for (long rep = 0; rep < hcfg.reps; rep++)
				for (long i = g0; i < g1; i++)
					col[k++] = t[((size_t)rep * V_COUNT +
						      (size_t)v) *
						     (size_t)hcfg.iters +
						     (size_t)i];
			m[v] = bench_median(col, k);
		}
		for (long rep = 0; rep < hcfg.reps; rep++)
			for (long i = g0; i < g1; i++)
				for (int f = 0; f < FACES; f++)
					share[f] += ((unsigned)nm[(size_t)rep *
						(size_t)hcfg.iters +
						(size_t)i] >> f) & 1;
		rc = bench_table_row(tab);
		if (rc < 0)
			break;
		bench_table_set_int(tab, "iter_first", g0 + 1);
		bench_table_set_int(tab, "iter_last", g1);
		bench_table_set_num(tab, "host_us", m[V_HOST]);
		bench_table_set_num(tab, "aware_us", m[V_AWARE]);
		bench_table_set_num(tab, "aware_vs_host",
				    m[V_HOST] > 0 ? m[V_AWARE] / m[V_HOST] : 0);
		for (int f = 0; f < FACES; f++) {
			char name[32];

			snprintf(name, sizeof(name), "aware_nic_%s",
				 fnames[f]);
			bench_table_set_num(tab, name, share[f] /
					    (double)(hcfg.reps * (g1 - g0)));
		}
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# halo exchange (paper 001 Fig. 14b, miniGhost-like): "
		       "2 ranks on spinnic --virtual 2 --idle-sleep-us 0, "
		       "ranks on %d CPU(s) off the lcore; each iteration "
		       "receives 3 faces of a %ld^3 grid of doubles (x: %ld "
		       "blocks of 8 B; y, z: %ld blocks of %ld B) as typed "
		       "receives and puts 3; rank 0's µs per iteration (post "
		       "to the last ack), median over %ld repetitions x the "
		       "group's iterations; aware's layout cache emptied "
		       "before each run; aware_nic_*: share of aware's "
		       "receives of that face by the NIC; calibration "
		       "measured in %.1f ms\n", ncpus, hcfg.n,
		       hcfg.n * hcfg.n, hcfg.n, hcfg.n * 8, hcfg.reps,
		       calib_ms);
out:
	bench_pair_end(&pair, -1);
	bench_spinnic_stop(&nic, hcfg.spinnic_log);
	bench_table_free(tab);
	free(t);
	free(nm);
	free(col);
	return rc;
}

const struct bench_cmd bench_halo_cmd = {
	.name = "halo",
	.summary = "halo exchange of a 3-D grid's faces between two ranks, "
		   "typed receives by the layout-aware chooser against host, "
		   "per iteration (paper 001 Fig. 14b)",
	.opts = halo_opts,
	.opt = halo_opt,
	.run = halo_run,
};
