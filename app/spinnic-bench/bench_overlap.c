/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench overlap and setup (issue #18; paper 002 Fig. 9 and 10,
 * ../shared/papers/notes/notes-002_003.md §1.8, §5.6): lib/coll
 * (spin_coll.h) on a real `spinnic --virtual P --idle-sleep-us 0` (one
 * busy-polling lcore on CPU 0 runs every virtual NIC), one forked client
 * per node (a rank), all pinned off CPU 0.
 *
 *  overlap   per collective (--coll), P (--ranks) and size (--sizes), the
 *            variants
 *              offload         built per call (SPIN_SCHED_DYNAMIC: Fig. 6,
 *                              entries appended by triggered appends, no
 *                              barrier at compile), started, waited, freed
 *                              (the free is not timed)
 *              offload-cached  compiled once, re-armed: a start is one
 *                              PtlCTInc
 *              host            the same schedule compiled once with
 *                              SPIN_SCHED_HOST: progressed by the host only
 *                              inside start and wait (cDAG over MPI)
 *            t_pure: start..wait without compute; t_work := t_pure of the
 *            variant; t_total: start, compute t_work, wait. The busy rank
 *            (--busy-rank) computes with a calibrated loop, the others
 *            sleep t_work (clock_nanosleep) making no library call. Every
 *            time is the max over ranks of one iteration (iterations
 *            start at instants the parent agreed in advance, not at a
 *            barrier's exit: phase_instants), median over
 *            --reps. overlap = clamp(1 - (t_total - t_work) / t_pure, 0,
 *            1); t_nonov = t_total - t_work.
 *  setup     rank 0 alone: µs per PtlCTAlloc, PtlMDBind, PtlMEAppend,
 *            PtlTriggeredPut post, PtlTriggeredMEAppend (each freed
 *            untimed) and a one-way 1-byte put to its own ME (put to
 *            counted); then every rank: a bcast (binomial, root 0, 8 B)
 *            compiled (spin_coll_bcast: create, compile with its closing
 *            barrier), its objects in one control batch, and again
 *            unbatched (SPINNIC_COLL_BATCH=0), against a start of the
 *            compiled schedule (re-armed), max over ranks, medians; each
 *            over the one-way put, with its control round trips.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_coll.h>

#include "bench.h"
#include "bench_job.h"
#include "overlap_work.h"

#define MAXP BENCH_JOB_MAXP
#define COLL_PT BENCH_JOB_COLL_PT
#define WAIT_MS 30000u
#define MAXSIZES BENCH_JOB_MAXSIZES

enum { V_OFFLOAD, V_CACHED, V_HOST, V_COUNT, V_MPICH = V_COUNT };
static const char *const var_names[V_COUNT + 1] = {
	"offload", "offload-cached", "host", "mpich",
};

enum { C_BCAST, C_BARRIER, C_ALLREDUCE, C_ALLTOALL };
/* --busy-rank all: every rank computes */
#define BUSY_ALL BENCH_BUSY_ALL
static const char *const coll_names[] = {
	"bcast", "barrier", "allreduce", "alltoall",
};

static int ocoll = C_BCAST; /* --coll */
static struct bench_job_cfg ocfg = {
	.busy = 1, .ranks = { 2, 4, 8, 16 }, .nranks = 4,
	.sizes = { 8, 4096, 262144 }, .nsizes = 3, .max_sizes = MAXSIZES,
	.size_min = 0, .size_max = 1 << 20, .warmup = 2, .nic_lcores = 1,
};

static const struct bench_cmd_opt overlap_opts[] = {
	{ "coll", 1, "bcast (default), barrier, allreduce (uint64 SUM, "
		     "recursive doubling) or alltoall (pairwise; bytes per "
		     "pair)" },
	{ "ranks", 1, "comma-separated P (2..16; default 2,4,8,16)" },
	{ "sizes", 1, "comma-separated bytes (default 8,4096,262144)" },
	{ "busy-rank", 1, "the rank that computes with a busy loop "
			  "(default 1), or 'all': every rank does (only "
			  "where each rank has a CPU of its own)" },
	{ "warmup", 1, "untimed iterations before each phase (default 2)" },
	{ "nic-lcores", 1, "spinnic's lcores K (default 1): the virtual NICs "
			   "spread over CPUs 0..K-1 (node i on lcore i mod "
			   "K), the ranks off them" },
	{ "mpich", 1, "the mpich variant's program (default: "
		      "spinnic-bench-mpi beside this one, run by mpiexec; "
		      "'none': skip it)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static const struct bench_cmd_opt setup_opts[] = {
	{ "ranks", 1, "comma-separated P (2..16; default 2,4,8,16)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
overlap_opt(const char *name, const char *arg)
{
	int rc;

	if (strcmp(name, "coll") == 0) {
		for (int c = 0; c < 4; c++)
			if (strcmp(arg, coll_names[c]) == 0) {
				ocoll = c;
				return 0;
			}
		bench_err("--coll %s: expected bcast, barrier, allreduce or "
			  "alltoall", arg);
		return -EINVAL;
	}
	rc = bench_job_opt(&ocfg, name, arg);
	return rc == -ENOENT ? -EINVAL : rc;
}

/* ---- a rank ----------------------------------------------------------------- */

/* a rank: struct bench_rank (bench_job.h), k->a, k->b: send / receive
 * (or the bcast buffer) */

/* build the collective on the rank's buffers */
static int
build(struct bench_rank *k, int coll, size_t bytes, spin_sched_t **s_p)
{
	switch (coll) {
	case C_BCAST:
		return spin_coll_bcast(k->comm, k->a, bytes, 0,
				       SPIN_COLL_BCAST_BINOMIAL, 2, s_p);
	case C_BARRIER:
		return spin_coll_barrier(k->comm, s_p);
	case C_ALLREDUCE:
		return spin_coll_allreduce(k->comm, k->a, k->b,
					   bytes / 8 ? bytes / 8 : 1, PTL_SUM,
					   PTL_UINT64_T, s_p);
	case C_ALLTOALL:
		return spin_coll_alltoall(k->comm, k->a, k->b, bytes,
					  SPIN_COLL_ALLTOALL_PAIRWISE, s_p);
	}
	return -EINVAL;
}

#define RCHECK BENCH_RCHECK

/*
 * One iteration of variant @p v: @p work_us of compute (0: none) between
 * start and wait. @return its time in µs, < 0 on failure
 */
static double
iteration(struct bench_rank *k, int v, int coll, size_t bytes, spin_sched_t *s,
	  double work_us, long it)
{
	spin_sched_t *own = NULL;
	double t0, t1;
	int rc;

	bench_rank_at(k, it);
	t0 = bench_now();
	if (v == V_OFFLOAD) {
		rc = build(k, coll, bytes, &own);
		if (rc != 0)
			return rc;
		s = own;
	}
	rc = spin_sched_start(s);
	if (rc == 0 && work_us > 0)
		bench_rank_compute(k, ocfg.busy, work_us);
	if (rc == 0)
		rc = spin_sched_wait_timeout(s, WAIT_MS);
	t1 = bench_now();
	spin_sched_free(own);
	return rc != 0 ? rc : (t1 - t0) * 1e6;
}

/* the phase's agreed instants (bench_rank_phase()) */
static int
phase_instants(struct bench_rank *k, int v, size_t bytes, double work_us)
{
	return bench_rank_phase(k, 4e-3 + 1.5e-3 * k->P +
				(double)bytes * k->P / 50e6 +
				(v == V_OFFLOAD ? 2e-3 * k->P : 0) +
				3 * work_us * 1e-6);
}

static int
phase(struct bench_rank *k, int v, int coll, size_t bytes, spin_sched_t *s,
      double work_us, double *t)
{
	long it = 0;

	if (phase_instants(k, v, bytes, work_us) < 0)
		return -EIO;
	for (long i = 0; i < ocfg.warmup; i++)
		if (iteration(k, v, coll, bytes, s, work_us, it++) < 0)
			return -EIO;
	for (int i = 0; i < k->reps; i++) {
		t[i] = iteration(k, v, coll, bytes, s, work_us, it++);
		RCHECK(k, t[i] >= 0, "%s %s %zu B: %s", var_names[v],
		       coll_names[coll], bytes, strerror((int)-t[i]));
	}
	return 0;
}

/* what a rank sends per (size, variant): reps pure, then reps total */
static int
rank_overlap(struct bench_rank *k)
{
	double *t = calloc((size_t)k->reps, sizeof(double)), work;
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	for (unsigned z = 0; z < ocfg.nsizes && rc == 0; z++) {
		size_t bytes = (size_t)ocfg.sizes[z];

		for (int v = 0; v < V_COUNT && rc == 0; v++) {
			spin_sched_t *s = NULL;

			rc = spin_coll_comm_set_sched_flags(k->comm,
				v == V_HOST ? SPIN_SCHED_HOST :
				v == V_OFFLOAD ? SPIN_SCHED_DYNAMIC : 0);
			if (rc == 0 && v != V_OFFLOAD)
				rc = build(k, ocoll, bytes, &s);
			RCHECK(k, rc == 0, "build %s: %s", var_names[v],
			       strerror(-rc));
			rc = phase(k, v, ocoll, bytes, s, 0, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, (size_t)k->reps *
						  sizeof(double), true);
			if (rc == 0)
				rc = bench_io_all(k->rfd, &work, sizeof(work),
						  false);
			if (rc == 0)
				rc = phase(k, v, ocoll, bytes, s, work, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, (size_t)k->reps *
						  sizeof(double), true);
			spin_sched_free(s);
		}
	}
	free(t);
	return rc;
}

/* rows, then the control round trips of the build and start rows (per
 * rank, max over ranks; not rows of their own) */
enum { S_CTALLOC, S_MDBIND, S_MEAPPEND, S_TRIGPUT, S_TRIGME, S_PUT1,
       S_BUILD, S_BUILD_UNB, S_START, S_COUNT,
       S_RT_BUILD = S_COUNT, S_RT_BUILD_UNB, S_RT_START, S_ALL };
static const char *const setup_names[S_COUNT] = {
	"PtlCTAlloc", "PtlMDBind", "PtlMEAppend", "PtlTriggeredPut-post",
	"PtlTriggeredMEAppend", "put-1B-oneway", "bcast-build",
	"bcast-build-unbatched", "bcast-start-rearmed",
};

/* rank 0's primitives; @p t: S_PUT1 + 1 rows of reps */
static int
setup_primitives(struct bench_rank *k, double *t)
{
	ptl_handle_ct_t ct, never;
	ptl_handle_md_t md;
	ptl_handle_me_t me;
	ptl_process_t self = { .rank = k->r };
	ptl_md_t mdd;
	ptl_me_t med;
	ptl_pt_index_t pt;
	int R = k->reps;

	memset(&mdd, 0, sizeof(mdd));
	mdd.start = k->a;
	mdd.length = 64;
	mdd.eq_handle = PTL_EQ_NONE;
	mdd.ct_handle = PTL_CT_NONE;
	memset(&med, 0, sizeof(med));
	med.start = k->b;
	med.length = 64;
	med.uid = PTL_UID_ANY;
	med.match_id.rank = PTL_RANK_ANY;
	med.match_bits = 0x77;
	med.ct_handle = PTL_CT_NONE;
	med.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		      PTL_ME_EVENT_COMM_DISABLE | PTL_ME_ACK_DISABLE |
		      PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE;
	RCHECK(k, PtlPTAlloc(k->ni, 0, PTL_EQ_NONE, COLL_PT + 1, &pt) ==
	       PTL_OK && pt == COLL_PT + 1, "PtlPTAlloc");
	RCHECK(k, PtlCTAlloc(k->ni, &never) == PTL_OK, "PtlCTAlloc");
	for (int i = 0; i < R; i++) {
		double t0 = bench_now();

		RCHECK(k, PtlCTAlloc(k->ni, &ct) == PTL_OK, "PtlCTAlloc");
		t[S_CTALLOC * R + i] = (bench_now() - t0) * 1e6;
		PtlCTFree(ct);
		t0 = bench_now();
		RCHECK(k, PtlMDBind(k->ni, &mdd, &md) == PTL_OK, "PtlMDBind");
		t[S_MDBIND * R + i] = (bench_now() - t0) * 1e6;
		PtlMDRelease(md);
		t0 = bench_now();
		RCHECK(k, PtlMEAppend(k->ni, COLL_PT + 1, &med,
				      PTL_PRIORITY_LIST, NULL, &me) == PTL_OK,
		       "PtlMEAppend");
		t[S_MEAPPEND * R + i] = (bench_now() - t0) * 1e6;
		PtlMEUnlink(me);
		t0 = bench_now();
		RCHECK(k, PtlTriggeredMEAppend(k->ni, COLL_PT + 1, &med,
					       PTL_PRIORITY_LIST, NULL, &me,
					       never, 1) == PTL_OK,
		       "PtlTriggeredMEAppend");
		t[S_TRIGME * R + i] = (bench_now() - t0) * 1e6;
		PtlCTCancelTriggered(never);
		PtlMEUnlink(me);
	}
	/* the put and triggered puts: one MD, one counted ME */
	RCHECK(k, PtlCTAlloc(k->ni, &ct) == PTL_OK, "PtlCTAlloc");
	med.ct_handle = ct;
	RCHECK(k, PtlMDBind(k->ni, &mdd, &md) == PTL_OK, "PtlMDBind");
	RCHECK(k, PtlMEAppend(k->ni, COLL_PT + 1, &med, PTL_PRIORITY_LIST,
			      NULL, &me) == PTL_OK, "PtlMEAppend");
	for (int i = 0; i < R; i++) {
		ptl_ct_event_t ev;
		double t0 = bench_now();

		RCHECK(k, PtlTriggeredPut(md, 0, 1, PTL_NO_ACK_REQ, self,
					  COLL_PT + 1, 0x77, 0, NULL, 0, never,
					  1) == PTL_OK, "PtlTriggeredPut");
		t[S_TRIGPUT * R + i] = (bench_now() - t0) * 1e6;
		PtlCTCancelTriggered(never);
		t0 = bench_now();
		RCHECK(k, PtlPut(md, 0, 1, PTL_NO_ACK_REQ, self, COLL_PT + 1,
				 0x77, 0, NULL, 0) == PTL_OK, "PtlPut");
		do
			RCHECK(k, PtlCTGet(ct, &ev) == PTL_OK, "PtlCTGet");
		while (ev.success + ev.failure < (ptl_size_t)i + 1);
		t[S_PUT1 * R + i] = (bench_now() - t0) * 1e6;
	}
	PtlMEUnlink(me);
	PtlMDRelease(md);
	PtlCTFree(ct);
	PtlCTFree(never);
	PtlPTFree(k->ni, pt);
	return 0;
}

static int
rank_setup(struct bench_rank *k)
{
	int R = k->reps;
	double *t = calloc((size_t)R * S_ALL, sizeof(double));
	spin_sched_t *s = NULL, *su = NULL;
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	if (k->r == 0)
		rc = setup_primitives(k, t);
	if (rc == 0)
		rc = spin_coll_comm_sync(k->comm);
	for (int i = 0; i < R && rc == 0; i++) {
		double t0;
		uint64_t rt;

		/* batched (lib/coll's default), then SPINNIC_COLL_BATCH=0:
		 * every object its own control round trip */
		for (int u = 0; u < 2 && rc == 0; u++) {
			int row = u ? S_BUILD_UNB : S_BUILD;

			if (u)
				setenv("SPINNIC_COLL_BATCH", "0", 1);
			rc = spin_coll_comm_sync(k->comm);
			rt = spin_ctrl_round_trips();
			t0 = bench_now();
			if (rc == 0)
				rc = build(k, C_BCAST, 8, u ? &su : &s);
			t[row * R + i] = (bench_now() - t0) * 1e6;
			t[(u ? S_RT_BUILD_UNB : S_RT_BUILD) * R + i] =
				(double)(spin_ctrl_round_trips() - rt);
			unsetenv("SPINNIC_COLL_BATCH");
			RCHECK(k, rc == 0, "bcast build: %s", strerror(-rc));
		}
		/* the unbatched one is the same schedule: only its build
		 * is timed */
		spin_sched_free(su);
		su = NULL;
		for (int j = 0; j < 3 && rc == 0; j++) {
			rc = spin_coll_comm_sync(k->comm);
			rt = spin_ctrl_round_trips();
			t0 = bench_now();
			if (rc == 0)
				rc = spin_sched_start(s);
			/* the first start of a compiled schedule may post;
			 * the re-armed ones are the third */
			if (j == 2) {
				t[S_START * R + i] = (bench_now() - t0) * 1e6;
				t[S_RT_START * R + i] = (double)
					(spin_ctrl_round_trips() - rt);
			}
			if (rc == 0)
				rc = spin_sched_wait_timeout(s, WAIT_MS);
		}
		RCHECK(k, rc == 0, "bcast run: %s", strerror(-rc));
		spin_sched_free(s);
		s = NULL;
	}
	if (rc == 0)
		rc = bench_io_all(k->wfd, t, (size_t)R * S_ALL *
				  sizeof(double), true);
	free(t);
	return rc;
}

/* a rank's body (bench_job_start()): @p arg non-NULL: setup */
static int
rank_main(struct bench_rank *k, void *arg)
{
	bool setup = arg != NULL;
	size_t cap;
	int rc;

	cap = 64;
	for (unsigned z = 0; z < ocfg.nsizes && !setup; z++)
		if ((size_t)ocfg.sizes[z] > cap)
			cap = (size_t)ocfg.sizes[z];
	if (ocoll == C_ALLTOALL && !setup)
		cap *= k->P;
	k->cap = cap;
	k->a = spin_host_alloc(cap);
	k->b = spin_host_alloc(cap);
	RCHECK(k, k->a != NULL && k->b != NULL, "spin_host_alloc %zu", cap);
	memset(k->a, (int)k->r + 1, cap);
	memset(k->b, 0, cap);
	rc = setup ? rank_setup(k) : rank_overlap(k);
	spin_host_free(k->a);
	spin_host_free(k->b);
	return rc;
}

/* ---- the parent --------------------------------------------------------------- */

struct orow {
	unsigned P;
	long bytes;
	double pure, total, nonov, overlap;
};

/* the mpich helper's path, or NULL (why in @p why) */
static const char *
mpich_path(char *buf, size_t len, const char **why)
{
	return bench_mpich_path(ocfg.mpich, buf, len, why);
}

/* mpiexec -n P helper: @return 0 (w filled), -EIO (said) */
static int
mpich_run(const char *helper, unsigned P, long bytes, int reps,
	  struct orow *w)
{
	char args[256];
	double pure = 0, total = 0;
	int rc;

	snprintf(args, sizeof(args), "%s %ld %d %ld %ld",
		 coll_names[ocoll], bytes, reps, ocfg.warmup, ocfg.busy);
	rc = bench_mpich_run(helper, P, args, &pure, &total);
	if (rc < 0)
		return rc;
	w->pure = pure;
	w->total = total;
	w->nonov = total - pure;
	w->overlap = bench_clamp01(1 - w->nonov / pure);
	return 0;
}

static int
overlap_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "coll", BENCH_COL_STR, 0 },
		{ "ranks", BENCH_COL_INT, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "t_pure_us", BENCH_COL_NUM, 2 },
		{ "t_work_us", BENCH_COL_NUM, 2 },
		{ "t_total_us", BENCH_COL_NUM, 2 },
		{ "t_nonov_us", BENCH_COL_NUM, 2 },
		{ "overlap", BENCH_COL_NUM, 3 },
		{ "ratio_nonov_host", BENCH_COL_NUM, 3 },
		{ "ratio_nonov_mpich", BENCH_COL_NUM, 3 },
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_job j = { .P = 0 };
	double *m, *tmp;
	int R = o->reps, rc = 0, ncpus = 0;
	size_t maxb = 64;
	char hbuf[4096];
	const char *helper, *why = "";

	if (ocoll == C_BARRIER) {
		ocfg.sizes[0] = 0;
		ocfg.nsizes = 1;
	}
	helper = mpich_path(hbuf, sizeof(hbuf), &why);
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	m = calloc((size_t)R, sizeof(double));
	tmp = calloc((size_t)R, sizeof(double));
	if (tab == NULL || m == NULL || tmp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned z = 0; z < ocfg.nsizes; z++)
		if ((size_t)ocfg.sizes[z] > maxb)
			maxb = (size_t)ocfg.sizes[z];
	bench_spinnic_signals();
	for (unsigned pi = 0; pi < ocfg.nranks && rc == 0; pi++) {
		unsigned P = (unsigned)ocfg.ranks[pi];
		struct orow res[MAXSIZES][V_COUNT + 1];

		bench_job_region_env(4 * maxb *
				     (ocoll == C_ALLTOALL ? P : 1));
		rc = bench_job_nic_start(&nic, P, ocfg.nic_lcores,
					 ocfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)ocfg.nic_lcores);
		rc = bench_job_start(&j, &nic, P, R, rank_main, NULL);
		for (unsigned z = 0; z < ocfg.nsizes && rc == 0; z++)
			for (int v = 0; v < V_COUNT && rc == 0; v++) {
				struct orow *w = &res[z][v];

				/* the ranks build first (collective) */
				rc = bench_job_send_base(&j, 20e-3 + 5e-3 * P);
				if (rc == 0)
					rc = bench_job_gather_max(&j, m, tmp,
								  (size_t)R);
				if (rc < 0)
					break;
				w->pure = bench_median(m, R);
				for (unsigned r = 0; r < P && rc == 0; r++)
					rc = bench_io_all(j.wfd[r], &w->pure,
							  sizeof(w->pure),
							  true);
				if (rc == 0)
					rc = bench_job_send_base(&j,
							 10e-3 + 1e-3 * P);
				if (rc == 0)
					rc = bench_job_gather_max(&j, m, tmp,
								  (size_t)R);
				if (rc < 0)
					break;
				w->total = bench_median(m, R);
				w->nonov = w->total - w->pure;
				w->overlap = bench_clamp01(1 - w->nonov /
							   w->pure);
			}
		if (rc == 0)
			rc = bench_job_finish(&j);
		else
			bench_job_end(&j);
		bench_spinnic_stop(&nic, ocfg.spinnic_log);
		for (unsigned z = 0; z < ocfg.nsizes && rc == 0 && helper; z++)
			rc = mpich_run(helper, P, ocfg.sizes[z], R,
				       &res[z][V_MPICH]);
		for (unsigned z = 0; z < ocfg.nsizes && rc == 0; z++)
			for (int v = 0; v < V_COUNT + (helper != NULL); v++) {
				const struct orow *w = &res[z][v];
				double host = res[z][V_HOST].nonov;
				double mpich = helper != NULL ?
					res[z][V_MPICH].nonov : 0;

				if (bench_table_row(tab) < 0) {
					rc = -ENOMEM;
					break;
				}
				bench_table_set_str(tab, "coll",
						    coll_names[ocoll]);
				bench_table_set_int(tab, "ranks", P);
				bench_table_set_int(tab, "bytes",
						    ocfg.sizes[z]);
				bench_table_set_str(tab, "variant",
						    var_names[v]);
				bench_table_set_num(tab, "t_pure_us", w->pure);
				bench_table_set_num(tab, "t_work_us", w->pure);
				bench_table_set_num(tab, "t_total_us",
						    w->total);
				bench_table_set_num(tab, "t_nonov_us",
						    w->nonov);
				bench_table_set_num(tab, "overlap",
						    w->overlap);
				if (v < V_HOST && host > 0)
					bench_table_set_num(tab,
						"ratio_nonov_host",
						w->nonov / host);
				if (v < V_HOST && mpich > 0)
					bench_table_set_num(tab,
						"ratio_nonov_mpich",
						w->nonov / mpich);
			}
	}
	if (rc == 0) {
		char busy_who[32], where[96];

		if (ocfg.nic_lcores > 1)
			snprintf(where, sizeof(where), "node i on lcore i mod "
				 "%ld, CPUs 0-%ld, busy-polling",
				 ocfg.nic_lcores, ocfg.nic_lcores - 1);
		else
			snprintf(where, sizeof(where), "every virtual NIC on "
				 "one busy-polling lcore, CPU 0");
		if (ocfg.busy == BUSY_ALL)
			snprintf(busy_who, sizeof(busy_who), "every rank");
		else
			snprintf(busy_who, sizeof(busy_who), "rank %ld",
				 ocfg.busy);
		rc = bench_table_emit(tab, o);
		printf("# overlap (paper 002 Fig. 9, 10; notes-002_003 §5.6): "
		       "%s, one rank per node of spinnic --virtual P "
		       "--idle-sleep-us 0 (%s), ranks on %d CPU(s) off "
		       "it; %s computes (calibrated loop)%s; times: max over "
		       "ranks per iteration, median of %d (%ld untimed "
		       "first); t_work = t_pure of the variant; offload "
		       "includes its build (SPIN_SCHED_DYNAMIC), not its "
		       "free; mpich: MPICH's non-blocking collective "
		       "(spinnic-bench-mpi under mpiexec -n P, same "
		       "protocol, no progress thread, "
		       "MPIR_CVAR_POLLS_BEFORE_YIELD=1 by default)%s%s\n",
		       coll_names[ocoll], where, ncpus, busy_who,
		       ocfg.busy == BUSY_ALL ? "" : ", the others sleep "
		       "t_work without library calls", R,
		       ocfg.warmup, helper ? "" : ": skipped, ", why);
	}
out:
	bench_table_free(tab);
	free(m);
	free(tmp);
	return rc;
}

static int
setup_opt(const char *name, const char *arg)
{
	if (strcmp(name, "ranks") == 0 || strcmp(name, "spinnic") == 0 ||
	    strcmp(name, "spinnic-log") == 0)
		return overlap_opt(name, arg);
	return -EINVAL;
}

static int
setup_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "item", BENCH_COL_STR, 0 },
		{ "ranks", BENCH_COL_INT, 0 },
		{ "median_us", BENCH_COL_NUM, 2 },
		{ "min_us", BENCH_COL_NUM, 2 },
		{ "over_put_1B", BENCH_COL_NUM, 3 },
		{ "cached_uncached", BENCH_COL_NUM, 4 },
		{ "round_trips", BENCH_COL_NUM, 1 },
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_job j = { .P = 0 };
	int R = o->reps, rc = 0, ncpus = 0;
	size_t n = (size_t)R * S_ALL;
	double *m = calloc(n, sizeof(double));
	double *tmp = calloc(n, sizeof(double));

	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL || m == NULL || tmp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	bench_spinnic_signals();
	for (unsigned pi = 0; pi < ocfg.nranks && rc == 0; pi++) {
		unsigned P = (unsigned)ocfg.ranks[pi];
		double med[S_ALL], mins[S_ALL];

		bench_job_region_env(1 << 20);
		rc = bench_job_nic_start(&nic, P, ocfg.nic_lcores,
					 ocfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)ocfg.nic_lcores);
		rc = bench_job_start(&j, &nic, P, R, rank_main, &ocfg);
		if (rc == 0)
			rc = bench_job_gather_max(&j, m, tmp, n);
		if (rc == 0)
			rc = bench_job_finish(&j);
		else
			bench_job_end(&j);
		bench_spinnic_stop(&nic, ocfg.spinnic_log);
		for (int k = 0; k < S_ALL && rc == 0; k++) {
			double *x = m + (size_t)k * (size_t)R;

			med[k] = bench_median(x, R); /* sorted */
			mins[k] = x[0];
		}
		for (int k = 0; k < S_COUNT && rc == 0; k++) {
			/* the primitives are rank 0's alone: once, at the
			 * first P */
			if (k < S_PUT1 && pi > 0)
				continue;
			if (bench_table_row(tab) < 0) {
				rc = -ENOMEM;
				break;
			}
			bench_table_set_str(tab, "item", setup_names[k]);
			bench_table_set_int(tab, "ranks", k < S_PUT1 ? 1 : P);
			bench_table_set_num(tab, "median_us", med[k]);
			bench_table_set_num(tab, "min_us", mins[k]);
			if (med[S_PUT1] > 0)
				bench_table_set_num(tab, "over_put_1B",
						    med[k] / med[S_PUT1]);
			if (k == S_START && med[S_BUILD] > 0)
				bench_table_set_num(tab, "cached_uncached",
						    med[S_START] /
						    med[S_BUILD]);
			/* control round trips per rank (max), median */
			if (k >= S_BUILD)
				bench_table_set_num(tab, "round_trips",
						    med[S_RT_BUILD + k -
							S_BUILD]);
		}
	}
	if (rc == 0) {
		rc = bench_table_emit(tab, o);
		printf("# setup: primitives timed by rank 0 alone (each freed "
		       "untimed), put-1B-oneway = PtlPut to its own counted ME "
		       "until counted (in every P's run: the lcore polls P "
		       "nodes); bcast (binomial, 8 B) build = "
		       "spin_coll_bcast (create, compile, closing barrier) "
		       "with its objects created in one control batch "
		       "(SPINNIC_CTRL_BATCH), build-unbatched = the same with "
		       "SPINNIC_COLL_BATCH=0 (one control round trip per "
		       "object), start = a re-armed start (the third of the "
		       "schedule), cached_uncached = start / build; "
		       "round_trips = control requests per rank (max over "
		       "ranks); max over ranks, median of %d; spinnic "
		       "--virtual P --idle-sleep-us 0, ranks on %d CPU(s) off "
		       "its lcore\n", R, ncpus);
	}
out:
	bench_table_free(tab);
	free(m);
	free(tmp);
	return rc;
}

const struct bench_cmd bench_overlap_cmd = {
	.name = "overlap",
	.summary = "overlap and non-overlappable time of offloaded "
		   "collectives, built per call and re-armed, against the "
		   "same schedule host-progressed (paper 002 Fig. 9, 10)",
	.opts = overlap_opts,
	.opt = overlap_opt,
	.run = overlap_run,
};

const struct bench_cmd bench_setup_cmd = {
	.name = "setup",
	.summary = "cost of the Portals objects, triggered posts and a bcast "
		   "schedule's build against its re-armed start, over a "
		   "one-way 1-B put (paper 002 setup)",
	.opts = setup_opts,
	.opt = setup_opt,
	.run = setup_run,
};
