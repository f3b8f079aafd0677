/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench coll: offloaded collectives (lib/coll, paper 002 Fig. 9
 * and 10, in part). P ranks, forked, one per node of a spinnic --virtual P
 * --idle-sleep-us 0, kept off its lcore; a binomial bcast from rank 0.
 *   setup:  building the schedule (create, vertices, compile with its
 *           host barrier, free) against a re-armed start (one PtlCTInc)
 *   overlap: t_pure = start..wait; the measured rank (1) then computes
 *           (a busy loop) for t_work = t_pure between start and wait, the
 *           others sleep as long with no library call; overlap =
 *           clamp(1 - (t_total - t_work) / t_pure, 0, 1), t_nonov =
 *           t_total - t_work; for the re-armed schedule ("offload-cached")
 *           and for one built and freed around every call ("offload", as
 *           in P002, where setup is not overlappable).
 * Not here (notes-002_003 §5.6): the host-progressed variant and MPICH's
 * MPI_Ibcast. Medians over --iters of the measured rank's times; every
 * iteration starts after a host barrier (not timed).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>

#include <portals4.h>
#include <spin.h>
#include <spin_coll.h>

#include "bench.h"

#define BUSY_RANK 1
enum { M_BUILD, M_START, M_PURE, M_TOTAL, M_WORK, M_PURE_B, M_TOTAL_B,
       M_WORK_B, M_COUNT };

static struct {
	long ranks;
	long iters;
	const char *spinnic;
} ccfg = { 4, 40, NULL };

static const struct bench_cmd_opt coll_opts[] = {
	{ "ranks", 1, "ranks P, one per virtual node (2..16, default 4)" },
	{ "iters", 1, "timed iterations per variant (default 40)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ NULL, 0, NULL },
};

static int
coll_opt(const char *name, const char *arg)
{
	const struct bench_num_opt t[] = {
		{ "ranks", &ccfg.ranks, 2, 16 },
		{ "iters", &ccfg.iters, 3, 100000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		ccfg.spinnic = arg;
		return 0;
	}
	return bench_opt_num(name, arg, t, sizeof(t) / sizeof(t[0])) == 0 ?
	       0 : -EINVAL;
}

/* compute: a busy loop that yields the CPU every 20 us (sched_yield, no
 * library call), because every rank shares the one client CPU here: a
 * loop that never yields keeps the other ranks from even calling start
 * until the scheduler preempts it, which says nothing about the NIC */
static void
busy_for(double s)
{
	double end = bench_now() + s, next = 0;

	for (double t = bench_now(); t < end; t = bench_now())
		if (t >= next) {
			sched_yield();
			next = t + 20e-6;
		}
}

static void
sleep_for(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* the compute of one iteration: the measured rank busy, the others asleep */
static void
work(unsigned rank, double s)
{
	if (rank == BUSY_RANK)
		busy_for(s);
	else
		sleep_for(s);
}

/* the median of @p n values, leaving them in place */
static double
median_of(const double *v, long n)
{
	double *t = malloc((size_t)n * sizeof(*t)), m;

	if (t == NULL)
		return 0;
	memcpy(t, v, (size_t)n * sizeof(*t));
	m = bench_median(t, (int)n);
	free(t);
	return m;
}

static int
bcast_build(spin_coll_comm_t *comm, void *buf, size_t len,
	    spin_sched_t **s_p)
{
	return spin_coll_bcast(comm, buf, len, 0, SPIN_COLL_BCAST_BINOMIAL, 2,
			       s_p);
}

/* one rank: M_COUNT * iters doubles (only the measured rank's count) */
/*
 * Iterations start at agreed instants, not at a barrier's exit: on one
 * shared client CPU the ranks leave a barrier up to a scheduling slice
 * apart, which would be timed as the collective's. Phase k's iteration
 * it (it >= -3: warm-ups) starts at base + k * slot + (it + 3) * period,
 * the same on every rank (one CLOCK_MONOTONIC for all).
 */
static double at_base, at_period;
static long at_phase;

static void
at_start(long it)
{
	double t = at_base + (double)at_phase * (double)(ccfg.iters + 4) *
		   at_period + (double)(it + 3) * at_period;
	struct timespec ts = { .tv_sec = (time_t)t,
			       .tv_nsec = (long)((t - (time_t)t) * 1e9) };

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static int
rank_main(unsigned rank, unsigned P, size_t len, int rfd, int wfd,
	  double *v)
{
	long it, n = ccfg.iters;
	ptl_process_t map[16], id;
	spin_coll_comm_t *comm;
	spin_sched_t *s;
	ptl_handle_ni_t ni;
	uint8_t *buf;
	double t0, t_work = 0, t_work_b = 0;
	int rc;

	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL,
		      PTL_PID_ANY, NULL, NULL, &ni) != PTL_OK ||
	    PtlGetPhysId(ni, &id) != PTL_OK)
		return -EIO;
	if (bench_io_all(wfd, &id, sizeof(id), true) != 0 ||
	    bench_io_all(rfd, map, P * sizeof(map[0]), false) != 0 ||
	    PtlSetMap(ni, P, map) != PTL_OK)
		return -EIO;
	rc = spin_coll_comm_create(ni, 9, &comm);
	if (rc != 0)
		return rc;
	if (bench_io_all(rfd, &at_base, sizeof(at_base), false) != 0)
		return -EIO;
	at_period = 4e-3 + 1.5e-3 * P + (double)len / 100e6;
	buf = spin_host_alloc(len ? len : 1);
	if (buf == NULL)
		return -ENOMEM;
	memset(buf, rank == 0 ? 0x5a : 0, len);
	/* setup: build and free */
	at_phase = 0;
	for (it = -2; it < n; it++) {
		at_start(it);
		t0 = bench_now();
		rc = bcast_build(comm, buf, len, &s);
		if (rc != 0)
			return rc;
		if (it >= 0)
			v[M_BUILD * n + it] = bench_now() - t0;
		spin_sched_free(s);
	}
	/* offload-cached: one schedule, re-armed */
	rc = bcast_build(comm, buf, len, &s);
	if (rc != 0)
		return rc;
	at_phase = 1;
	for (it = -3; it < n; it++) {
		at_start(it);
		t0 = bench_now();
		rc = spin_sched_start(s);
		if (it >= 0)
			v[M_START * n + it] = bench_now() - t0;
		if (rc == 0)
			rc = spin_sched_wait(s);
		if (rc != 0)
			return rc;
		if (it >= 0)
			v[M_PURE * n + it] = bench_now() - t0;
	}
	/* the same t_work on every rank: the measured rank's median */
	if (rank == BUSY_RANK)
		t_work = median_of(v + M_PURE * n, n);
	if (bench_io_all(wfd, &t_work, sizeof(t_work), true) != 0 ||
	    bench_io_all(rfd, &t_work, sizeof(t_work), false) != 0)
		return -EIO;
	at_phase = 2;
	for (it = -1; it < n; it++) {
		at_start(it);
		t0 = bench_now();
		rc = spin_sched_start(s);
		work(rank, t_work);
		if (rc == 0)
			rc = spin_sched_wait(s);
		if (rc != 0)
			return rc;
		if (it >= 0) {
			v[M_TOTAL * n + it] = bench_now() - t0;
			v[M_WORK * n + it] = t_work;
		}
	}
	spin_sched_free(s);
	/* offload built per call: setup is part of every call */
	at_phase = 3;
	for (it = -1; it < n; it++) {
		at_start(it);
		t0 = bench_now();
		rc = bcast_build(comm, buf, len, &s);
		if (rc == 0)
			rc = spin_sched_start(s);
		if (rc == 0)
			rc = spin_sched_wait(s);
		if (rc != 0)
			return rc;
		spin_sched_free(s);
		if (it >= 0)
			v[M_PURE_B * n + it] = bench_now() - t0;
	}
	if (rank == BUSY_RANK)
		t_work_b = median_of(v + M_PURE_B * n, n);
	if (bench_io_all(wfd, &t_work_b, sizeof(t_work_b), true) != 0 ||
	    bench_io_all(rfd, &t_work_b, sizeof(t_work_b), false) != 0)
		return -EIO;
	at_phase = 4;
	for (it = -1; it < n; it++) {
		at_start(it);
		t0 = bench_now();
		rc = bcast_build(comm, buf, len, &s);
		if (rc == 0)
			rc = spin_sched_start(s);
		work(rank, t_work_b);
		if (rc == 0)
			rc = spin_sched_wait(s);
		if (rc != 0)
			return rc;
		spin_sched_free(s);
		if (it >= 0) {
			v[M_TOTAL_B * n + it] = bench_now() - t0;
			v[M_WORK_B * n + it] = t_work_b;
		}
	}
	for (size_t i = 0; i < len; i++)
		if (buf[i] != 0x5a)
			return -EIO;
	spin_host_free(buf);
	rc = spin_coll_comm_free(comm);
	PtlNIFini(ni);
	PtlFini();
	return rc;
}

static double
med(double *v, long n)
{
	return bench_median(v, (int)n);
}

static void
row(struct bench_table *tab, unsigned P, size_t len, const char *variant,
    double pure, double total, double wk)
{
	double nonov = total - wk;
	double ov = pure > 0 ? 1 - nonov / pure : 0;

	ov = ov < 0 ? 0 : ov > 1 ? 1 : ov;
	bench_table_row(tab);
	bench_table_set_str(tab, "variant", variant);
	bench_table_set_int(tab, "ranks", P);
	bench_table_set_int(tab, "bytes", (int64_t)len);
	bench_table_set_num(tab, "t_pure_us", pure * 1e6);
	bench_table_set_num(tab, "t_total_us", total * 1e6);
	bench_table_set_num(tab, "t_nonov_us", nonov * 1e6);
	bench_table_set_num(tab, "overlap", ov);
}

/* one (P, size): spinnic, P ranks, their numbers; rows into @p tab */
static int
coll_one(unsigned P, size_t len, struct bench_table *tab,
	 struct bench_table *stab)
{
	long n = ccfg.iters;
	struct bench_spinnic nic = { .pid = -1 };
	char vstr[8], sock[400];
	const char *extra[] = { "--virtual", vstr, NULL };
	int up[16][2], down[16][2], st, rc;
	pid_t kid[16];
	double *v = calloc((size_t)(M_COUNT * n), sizeof(double));
	ptl_process_t map[16];
	unsigned r;

	if (v == NULL)
		return -ENOMEM;
	snprintf(vstr, sizeof(vstr), "%u", P);
	rc = bench_spinnic_start(&nic, ccfg.spinnic, extra);
	if (rc < 0) {
		free(v);
		return rc;
	}
	for (r = 0; r < P; r++) {
		if (pipe(up[r]) != 0 || pipe(down[r]) != 0)
			return -EIO;
		fflush(NULL);
		kid[r] = fork();
		if (kid[r] < 0)
			return -EIO;
		if (kid[r] == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			snprintf(sock, sizeof(sock), "%s/node%u.sock", nic.dir,
				 r);
			setenv("SPINNIC_SOCKET", sock, 1);
			rc = rank_main(r, P, len, down[r][0], up[r][1], v);
			if (rc == 0 && r == BUSY_RANK)
				rc = bench_io_all(up[r][1], v, (size_t)(M_COUNT *
						  n) * sizeof(double), true);
			if (rc != 0)
				fprintf(stderr, "spinnic-bench coll: rank %u: "
					"%s\n", r, strerror(-rc));
			_exit(rc == 0 ? 0 : 1);
		}
		close(up[r][1]);
		close(down[r][0]);
	}
	rc = 0;
	for (r = 0; r < P && rc == 0; r++)
		rc = bench_io_all(up[r][0], &map[r], sizeof(map[r]), false);
	for (r = 0; r < P && rc == 0; r++)
		rc = bench_io_all(down[r][1], map, P * sizeof(map[0]), true);
	/* the instant every rank's iterations count from: after their
	 * communicator exists (its creation is a barrier, up to 30 s) */
	{
		double base = bench_now() + 0.5 + 0.1 * P;

		for (r = 0; r < P && rc == 0; r++)
			rc = bench_io_all(down[r][1], &base, sizeof(base),
					  true);
	}
	/* t_work twice: the measured rank's, to everyone */
	for (int k = 0; k < 2 && rc == 0; k++) {
		double tw = 0, x;

		for (r = 0; r < P && rc == 0; r++) {
			rc = bench_io_all(up[r][0], &x, sizeof(x), false);
			if (r == BUSY_RANK)
				tw = x;
		}
		for (r = 0; r < P && rc == 0; r++)
			rc = bench_io_all(down[r][1], &tw, sizeof(tw), true);
	}
	if (rc == 0)
		rc = bench_io_all(up[BUSY_RANK][0], v, (size_t)(M_COUNT * n) *
				  sizeof(double), false);
	for (r = 0; r < P; r++) {
		if (rc != 0)
			kill(kid[r], SIGKILL);
		if (waitpid(kid[r], &st, 0) != kid[r] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			rc = rc ? rc : -EIO;
		close(up[r][0]);
		close(down[r][1]);
	}
	bench_spinnic_stop(&nic, NULL);
	if (rc == 0) {
		double build = med(v + M_BUILD * n, n);
		double start = med(v + M_START * n, n);

		row(tab, P, len, "offload-cached", med(v + M_PURE * n, n),
		    med(v + M_TOTAL * n, n), med(v + M_WORK * n, n));
		row(tab, P, len, "offload", med(v + M_PURE_B * n, n),
		    med(v + M_TOTAL_B * n, n), med(v + M_WORK_B * n, n));
		bench_table_row(stab);
		bench_table_set_int(stab, "ranks", P);
		bench_table_set_int(stab, "bytes", (int64_t)len);
		bench_table_set_num(stab, "build_us", build * 1e6);
		bench_table_set_num(stab, "start_us", start * 1e6);
		bench_table_set_num(stab, "rearm_per_build", start / build);
	}
	free(v);
	return rc;
}

static int
coll_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "variant", BENCH_COL_STR, 0 },
		{ "ranks", BENCH_COL_INT, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "t_pure_us", BENCH_COL_NUM, 1 },
		{ "t_total_us", BENCH_COL_NUM, 1 },
		{ "t_nonov_us", BENCH_COL_NUM, 1 },
		{ "overlap", BENCH_COL_NUM, 3 },
	};
	static const struct bench_col scols[] = {
		{ "ranks", BENCH_COL_INT, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "build_us", BENCH_COL_NUM, 1 },
		{ "start_us", BENCH_COL_NUM, 2 },
		{ "rearm_per_build", BENCH_COL_NUM, 5 },
	};
	static const size_t sizes[] = { 8, 4096, 262144 };
	struct bench_table *tab, *stab;
	int rc = 0;

	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	stab = bench_table_create(scols,
				  (int)(sizeof(scols) / sizeof(scols[0])));
	if (tab == NULL || stab == NULL)
		return -ENOMEM;
	bench_spinnic_signals();
	(void)bench_clients_off_lcore();
	for (size_t i = 0; i < 3 && rc == 0; i++) {
		if (o->bytes > 0 && (size_t)o->bytes != sizes[i] && i > 0)
			break;
		rc = coll_one((unsigned)ccfg.ranks,
			      o->bytes > 0 ? (size_t)o->bytes : sizes[i], tab,
			      stab);
	}
	if (rc == 0) {
		rc = bench_table_emit(tab, o);
		bench_table_print(stab, stdout);
		printf("# bcast binomial from rank 0, P ranks one per node of "
		       "spinnic --virtual P --idle-sleep-us 0 (every virtual "
		       "NIC on one busy-polling lcore, CPU 0), ranks off it; "
		       "medians over %ld iterations of rank %d's times "
		       "(compute: a busy loop of t_work = its t_pure that "
		       "calls sched_yield every 20 us, all ranks sharing the "
		       "client CPU(s); the others sleep as long; no library "
		       "call); build = "
		       "create + compile (host barrier included) + free; "
		       "start = one PtlCTInc (re-armed). Not measured: the "
		       "host-progressed schedule, MPICH.\n", ccfg.iters,
		       BUSY_RANK);
	}
	bench_table_free(tab);
	bench_table_free(stab);
	return rc;
}

const struct bench_cmd bench_coll_cmd = {
	.name = "coll",
	.summary = "offloaded bcast (lib/coll): schedule setup against a "
		   "re-armed start, overlap re-armed and built per call "
		   "(paper 002 Fig. 9/10, offload variants only)",
	.opts = coll_opts,
	.opt = coll_opt,
	.run = coll_run,
};
