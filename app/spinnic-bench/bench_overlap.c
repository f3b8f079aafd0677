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
#include <spin_coll.h>

#include "bench.h"
#include "overlap_work.h"

#define MAXP 16
#define COLL_PT 7
#define WAIT_MS 30000u
#define MAXSIZES 8
#define MAXRANKS 4

enum { V_OFFLOAD, V_CACHED, V_HOST, V_COUNT, V_MPICH = V_COUNT };
static const char *const var_names[V_COUNT + 1] = {
	"offload", "offload-cached", "host", "mpich",
};

enum { C_BCAST, C_BARRIER, C_ALLREDUCE, C_ALLTOALL };
/* --busy-rank all: every rank computes */
#define BUSY_ALL (-1L)
static const char *const coll_names[] = {
	"bcast", "barrier", "allreduce", "alltoall",
};

static struct {
	int coll;
	long busy;
	long ranks[MAXRANKS];
	unsigned nranks;
	long sizes[MAXSIZES];
	unsigned nsizes;
	long warmup;
	long nic_lcores;
	const char *spinnic;
	const char *spinnic_log;
	const char *mpich;
} ocfg = { C_BCAST, 1, { 2, 4, 8, 16 }, 4, { 8, 4096, 262144 }, 3, 2, 1,
	   NULL, NULL, NULL };

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
parse_list(const char *what, const char *arg, long *out, unsigned max,
	   unsigned *n, long lo, long hi)
{
	const char *p = arg;

	*n = 0;
	while (*p != '\0') {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < lo || v > hi || *n >= max ||
		    (*end != ',' && *end != '\0')) {
			bench_err("--%s %s: expected up to %u comma-separated "
				  "values in %ld..%ld", what, arg, max, lo, hi);
			return -EINVAL;
		}
		out[(*n)++] = v;
		p = *end == ',' ? end + 1 : end;
	}
	if (*n == 0) {
		bench_err("--%s: empty", what);
		return -EINVAL;
	}
	return 0;
}

static int
overlap_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "busy-rank", &ocfg.busy, 0, MAXP - 1 },
		{ "warmup", &ocfg.warmup, 0, 1000 },
		{ "nic-lcores", &ocfg.nic_lcores, 1, MAXP },
	};

	if (strcmp(name, "coll") == 0) {
		for (int c = 0; c < 4; c++)
			if (strcmp(arg, coll_names[c]) == 0) {
				ocfg.coll = c;
				return 0;
			}
		bench_err("--coll %s: expected bcast, barrier, allreduce or "
			  "alltoall", arg);
		return -EINVAL;
	}
	if (strcmp(name, "busy-rank") == 0 && strcmp(arg, "all") == 0) {
		ocfg.busy = BUSY_ALL;
		return 0;
	}
	if (strcmp(name, "ranks") == 0)
		return parse_list(name, arg, ocfg.ranks, MAXRANKS,
				  &ocfg.nranks, 2, MAXP);
	if (strcmp(name, "sizes") == 0)
		return parse_list(name, arg, ocfg.sizes, MAXSIZES,
				  &ocfg.nsizes, 0, 1 << 20);
	if (strcmp(name, "spinnic") == 0) {
		ocfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		ocfg.spinnic_log = arg;
		return 0;
	}
	if (strcmp(name, "mpich") == 0) {
		ocfg.mpich = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- a rank ----------------------------------------------------------------- */

struct rank {
	unsigned r, P;
	int wfd, rfd;           /* to and from the parent */
	int reps;
	ptl_handle_ni_t ni;
	spin_coll_comm_t *comm;
	double loops_per_us;
	double at_base, at_period; /* this phase's agreed instants */
	uint8_t *a, *b;          /* send / receive (or the bcast buffer) */
	size_t cap;
};

/* build the collective on the rank's buffers */
static int
build(struct rank *k, int coll, size_t bytes, spin_sched_t **s_p)
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

#define RCHECK(k, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "spinnic-bench: rank %u: ", (k)->r); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		return -EIO; \
	} \
} while (0)

/*
 * One iteration of variant @p v: @p work_us of compute (0: none) between
 * start and wait. @return its time in µs, < 0 on failure
 */
static double
iteration(struct rank *k, int v, int coll, size_t bytes, spin_sched_t *s,
	  double work_us, long it)
{
	double at = k->at_base + (double)it * k->at_period;
	struct timespec ts = { .tv_sec = (time_t)at,
			       .tv_nsec = (long)((at - (double)(time_t)at) *
						 1e9) };
	spin_sched_t *own = NULL;
	double t0, t1;
	int rc;

	/* the agreed instant (past already: at once) */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	t0 = bench_now();
	if (v == V_OFFLOAD) {
		rc = build(k, coll, bytes, &own);
		if (rc != 0)
			return rc;
		s = own;
	}
	rc = spin_sched_start(s);
	if (rc == 0 && work_us > 0) {
		if (ocfg.busy == BUSY_ALL ||
		    k->r == (unsigned)ocfg.busy % k->P)
			work_loops((uint64_t)(work_us * k->loops_per_us));
		else
			sleep_us(work_us);
	}
	if (rc == 0)
		rc = spin_sched_wait_timeout(s, WAIT_MS);
	t1 = bench_now();
	spin_sched_free(own);
	return rc != 0 ? rc : (t1 - t0) * 1e6;
}

/* Iterations start at instants agreed in advance, not at a barrier's
 * exit: on CPUs shared by the ranks they leave a barrier up to a
 * scheduling slice apart, which the first rank would time as the
 * collective's (the skew was most of a small bcast's t_pure). The parent
 * sends the phase's base (CLOCK_MONOTONIC, one clock for all ranks) once
 * every rank's previous phase ended; iteration i starts at base + i *
 * period, the period several times what the iteration should take (an
 * iteration that overruns makes the next one start late, not early). */
static int
phase_instants(struct rank *k, int v, size_t bytes, double work_us)
{
	if (bench_io_all(k->rfd, &k->at_base, sizeof(k->at_base), false) < 0)
		return -EIO;
	k->at_period = 4e-3 + 1.5e-3 * k->P + (double)bytes * k->P / 50e6 +
		       (v == V_OFFLOAD ? 2e-3 * k->P : 0) + 3 * work_us * 1e-6;
	return 0;
}

static int
phase(struct rank *k, int v, int coll, size_t bytes, spin_sched_t *s,
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
rank_overlap(struct rank *k)
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
				rc = build(k, ocfg.coll, bytes, &s);
			RCHECK(k, rc == 0, "build %s: %s", var_names[v],
			       strerror(-rc));
			rc = phase(k, v, ocfg.coll, bytes, s, 0, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, (size_t)k->reps *
						  sizeof(double), true);
			if (rc == 0)
				rc = bench_io_all(k->rfd, &work, sizeof(work),
						  false);
			if (rc == 0)
				rc = phase(k, v, ocfg.coll, bytes, s, work, t);
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
setup_primitives(struct rank *k, double *t)
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
rank_setup(struct rank *k)
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

static int
rank_main(struct rank *k, bool setup)
{
	ptl_process_t map[MAXP], id;
	uint32_t ids[2];
	size_t cap;
	int rc;

	/* the sleeping ranks wake at t_work, not 50 us (the default timer
	 * slack) later: that lateness would be timed as non-overlapped */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	k->loops_per_us = work_calibrate();
	RCHECK(k, PtlInit() == PTL_OK, "PtlInit");
	RCHECK(k, PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL,
			    &k->ni) == PTL_OK, "PtlNIInit");
	RCHECK(k, PtlGetPhysId(k->ni, &id) == PTL_OK, "PtlGetPhysId");
	ids[0] = id.phys.nid;
	ids[1] = id.phys.pid;
	if (bench_io_all(k->wfd, ids, sizeof(ids), true) < 0 ||
	    bench_io_all(k->rfd, map, sizeof(map[0]) * k->P, false) < 0)
		return -EIO;
	RCHECK(k, PtlSetMap(k->ni, k->P, map) == PTL_OK, "PtlSetMap");
	rc = spin_coll_comm_create(k->ni, COLL_PT, &k->comm);
	RCHECK(k, rc == 0, "comm_create: %s", strerror(-rc));
	cap = 64;
	for (unsigned z = 0; z < ocfg.nsizes && !setup; z++)
		if ((size_t)ocfg.sizes[z] > cap)
			cap = (size_t)ocfg.sizes[z];
	if (ocfg.coll == C_ALLTOALL && !setup)
		cap *= k->P;
	k->cap = cap;
	k->a = spin_host_alloc(cap);
	k->b = spin_host_alloc(cap);
	RCHECK(k, k->a != NULL && k->b != NULL, "spin_host_alloc %zu", cap);
	memset(k->a, (int)k->r + 1, cap);
	memset(k->b, 0, cap);
	rc = setup ? rank_setup(k) : rank_overlap(k);
	if (rc == 0) {
		rc = spin_coll_comm_free(k->comm);
		RCHECK(k, rc == 0, "comm_free: %s", strerror(-rc));
	}
	spin_host_free(k->a);
	spin_host_free(k->b);
	PtlNIFini(k->ni);
	PtlFini();
	return rc;
}

/* ---- the parent --------------------------------------------------------------- */

struct job {
	unsigned P;
	pid_t kid[MAXP];
	int rfd[MAXP], wfd[MAXP];  /* from / to each rank */
};

static void
job_end(struct job *j)
{
	for (unsigned i = 0; i < j->P; i++) {
		if (j->kid[i] > 0) {
			kill(j->kid[i], SIGKILL);
			waitpid(j->kid[i], NULL, 0);
			j->kid[i] = -1;
		}
		if (j->rfd[i] >= 0)
			close(j->rfd[i]);
		if (j->wfd[i] >= 0)
			close(j->wfd[i]);
		j->rfd[i] = j->wfd[i] = -1;
	}
}

static int
job_start(struct job *j, const struct bench_spinnic *nic, unsigned P,
	  int reps, bool setup)
{
	ptl_process_t map[MAXP];

	j->P = P;
	for (unsigned i = 0; i < MAXP; i++) {
		j->kid[i] = -1;
		j->rfd[i] = j->wfd[i] = -1;
	}
	for (unsigned i = 0; i < P; i++) {
		int up[2], down[2];

		if (pipe(up) != 0)
			return -EIO;
		if (pipe(down) != 0) {
			close(up[0]);
			close(up[1]);
			return -EIO;
		}
		fflush(NULL);
		j->kid[i] = fork();
		if (j->kid[i] < 0) {
			close(up[0]);
			close(up[1]);
			close(down[0]);
			close(down[1]);
			return -EIO;
		}
		if (j->kid[i] == 0) {
			struct rank k = { .r = i, .P = P, .wfd = up[1],
					  .rfd = down[0], .reps = reps };
			char sock[400];

			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(up[0]);
			close(down[1]);
			for (unsigned q = 0; q < i; q++) {
				close(j->rfd[q]);
				close(j->wfd[q]);
			}
			snprintf(sock, sizeof(sock), "%s/node%u.sock",
				 nic->dir, i);
			setenv("SPINNIC_SOCKET", sock, 1);
			_exit(rank_main(&k, setup) == 0 ? 0 : 1);
		}
		close(up[1]);
		close(down[0]);
		j->rfd[i] = up[0];
		j->wfd[i] = down[1];
	}
	memset(map, 0, sizeof(map));
	for (unsigned i = 0; i < P; i++) {
		uint32_t ids[2];

		if (bench_io_all(j->rfd[i], ids, sizeof(ids), false) < 0) {
			bench_err("rank %u did not start", i);
			return -EIO;
		}
		map[i].phys.nid = ids[0];
		map[i].phys.pid = ids[1];
	}
	for (unsigned i = 0; i < P; i++)
		if (bench_io_all(j->wfd[i], map, sizeof(map[0]) * P, true) < 0)
			return -EIO;
	return 0;
}

/* every rank's @p n doubles; @p out[i] = max over ranks of element i */
static int
job_gather_max(struct job *j, double *out, double *tmp, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = 0;
	for (unsigned r = 0; r < j->P; r++) {
		if (bench_io_all(j->rfd[r], tmp, n * sizeof(double), false) <
		    0) {
			bench_err("rank %u stopped", r);
			return -EIO;
		}
		for (size_t i = 0; i < n; i++)
			if (tmp[i] > out[i])
				out[i] = tmp[i];
	}
	return 0;
}

static int
job_finish(struct job *j)
{
	int rc = 0, st;

	for (unsigned i = 0; i < j->P; i++) {
		if (waitpid(j->kid[i], &st, 0) != j->kid[i] ||
		    !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			bench_err("rank %u failed (status 0x%x)", i, st);
			rc = -EIO;
		}
		j->kid[i] = -1;
	}
	job_end(j);
	return rc;
}

static int
start_nic(struct bench_spinnic *nic, unsigned P, const char *bin)
{
	char n[8], lc[48], roles[96];
	/* lib/coll runs no handler: little NIC memory, and smaller pools,
	 * so that 16 nodes fit where other spinnics hold hugepages */
	const char *extra[] = { "--virtual", n, "--nic-mem", "4M", "--mbufs",
				"4096", NULL, NULL, NULL, NULL, NULL };
	long k = ocfg.nic_lcores;

	snprintf(n, sizeof(n), "%u", P);
	if (k > 1) {
		/* --nic-lcores: node i's inbound and outbound on lcore
		 * i mod K (spinnic --lcore-roles) */
		snprintf(lc, sizeof(lc), "0-%ld", k - 1);
		snprintf(roles, sizeof(roles), "inbound=0-%ld,outbound=0-%ld",
			 k - 1, k - 1);
		extra[6] = "--lcores";
		extra[7] = lc;
		extra[8] = "--lcore-roles";
		extra[9] = roles;
	}
	return bench_spinnic_start(nic, bin, extra);
}

/* region memory per rank: the buffers and the schedules' */
static void
region_env(size_t need)
{
	char v[32];

	snprintf(v, sizeof(v), "%zuM", need / (1 << 20) + 16);
	setenv("SPINNIC_REGION_SIZE", v, 1);
}

struct orow {
	unsigned P;
	long bytes;
	double pure, total, nonov, overlap;
};

static double
clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* the mpich helper's path, or NULL (why in @p why) */
static const char *
mpich_path(char *buf, size_t len, const char **why)
{
	char self[4096], *slash;
	ssize_t n;

	if (ocfg.mpich != NULL && strcmp(ocfg.mpich, "none") == 0) {
		*why = "--mpich none";
		return NULL;
	}
	if (system("command -v mpiexec >/dev/null 2>&1") != 0) {
		*why = "no mpiexec";
		return NULL;
	}
	if (ocfg.mpich != NULL) {
		snprintf(buf, len, "%s", ocfg.mpich);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0) {
			*why = "/proc/self/exe";
			return NULL;
		}
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL)
			*slash = '\0';
		snprintf(buf, len, "%.3900s/spinnic-bench-mpi", self);
	}
	if (access(buf, X_OK) != 0) {
		*why = "spinnic-bench-mpi not built (no MPI found by meson)";
		return NULL;
	}
	return buf;
}

/* mpiexec -n P helper: @return 0 (w filled), -EIO (said) */
static int
mpich_run(const char *helper, unsigned P, long bytes, int reps,
	  struct orow *w)
{
	char cmd[4400], line[256];
	double pure = 0, total = 0;
	FILE *f;
	int got = 0, st;

	snprintf(cmd, sizeof(cmd), "timeout 300 mpiexec -n %u '%s' %s %ld %d "
		 "%ld %ld </dev/null", P, helper, coll_names[ocfg.coll],
		 bytes, reps, ocfg.warmup, ocfg.busy);
	/* P ranks on the CPUs off the lcore: MPICH's busy waits yield at
	 * every poll, as host's wait does (unless set otherwise) */
	setenv("MPIR_CVAR_POLLS_BEFORE_YIELD", "1", 0);
	fflush(NULL);
	f = popen(cmd, "r");
	if (f == NULL) {
		bench_err("popen %s: %s", cmd, strerror(errno));
		return -EIO;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "mpich %lf %lf", &pure, &total) == 2)
			got = 1;
	st = pclose(f);
	if (st != 0 || !got || !(pure > 0) || !(total > 0)) {
		bench_err("%s: status %d, %s", cmd, st,
			  got ? "bad times" : "no result line");
		return -EIO;
	}
	w->pure = pure;
	w->total = total;
	w->nonov = total - pure;
	w->overlap = clamp01(1 - w->nonov / pure);
	return 0;
}

/* the next phase's first instant, @p ahead s from now, to every rank */
static int
send_base(struct job *j, unsigned P, double ahead)
{
	double base = bench_now() + ahead;

	for (unsigned r = 0; r < P; r++)
		if (bench_io_all(j->wfd[r], &base, sizeof(base), true) < 0)
			return -EIO;
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
	struct job j = { .P = 0 };
	double *m, *tmp;
	int R = o->reps, rc = 0, ncpus = 0;
	size_t maxb = 64;
	char hbuf[4096];
	const char *helper, *why = "";

	if (ocfg.coll == C_BARRIER) {
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

		region_env(4 * maxb * (ocfg.coll == C_ALLTOALL ? P : 1));
		rc = start_nic(&nic, P, ocfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)ocfg.nic_lcores);
		rc = job_start(&j, &nic, P, R, false);
		for (unsigned z = 0; z < ocfg.nsizes && rc == 0; z++)
			for (int v = 0; v < V_COUNT && rc == 0; v++) {
				struct orow *w = &res[z][v];

				/* the ranks build first (collective) */
				rc = send_base(&j, P, 20e-3 + 5e-3 * P);
				if (rc == 0)
					rc = job_gather_max(&j, m, tmp,
							    (size_t)R);
				if (rc < 0)
					break;
				w->pure = bench_median(m, R);
				for (unsigned r = 0; r < P && rc == 0; r++)
					rc = bench_io_all(j.wfd[r], &w->pure,
							  sizeof(w->pure),
							  true);
				if (rc == 0)
					rc = send_base(&j, P, 10e-3 + 1e-3 * P);
				if (rc == 0)
					rc = job_gather_max(&j, m, tmp,
							    (size_t)R);
				if (rc < 0)
					break;
				w->total = bench_median(m, R);
				w->nonov = w->total - w->pure;
				w->overlap = clamp01(1 - w->nonov / w->pure);
			}
		if (rc == 0)
			rc = job_finish(&j);
		else
			job_end(&j);
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
						    coll_names[ocfg.coll]);
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
		       coll_names[ocfg.coll], where, ncpus, busy_who,
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
	struct job j = { .P = 0 };
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

		region_env(1 << 20);
		rc = start_nic(&nic, P, ocfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)ocfg.nic_lcores);
		rc = job_start(&j, &nic, P, R, true);
		if (rc == 0)
			rc = job_gather_max(&j, m, tmp, n);
		if (rc == 0)
			rc = job_finish(&j);
		else
			job_end(&j);
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
