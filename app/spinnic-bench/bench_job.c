/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rank and job protocol shared by bench_overlap.c (overlap, setup),
 * bench_group.c (group), bench_stencil.c (stencil) and bench_ring.c
 * (ring): see bench_job.h.
 */
#include <errno.h>
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
#include "bench_job.h"
#include "overlap_work.h"

/* ---- a rank ----------------------------------------------------------- */

/* Iterations start at instants agreed in advance, not at a barrier's
 * exit: on CPUs shared by the ranks they leave a barrier up to a
 * scheduling slice apart, which the first rank would time as the
 * collective's (the skew was most of a small bcast's t_pure). The parent
 * sends the phase's base (CLOCK_MONOTONIC, one clock for all ranks) once
 * every rank's previous phase ended; iteration i starts at base + i *
 * period, the period several times what the iteration should take (an
 * iteration that overruns makes the next one start late, not early). */
int
bench_rank_phase(struct bench_rank *k, double period_s)
{
	if (bench_io_all(k->rfd, &k->at_base, sizeof(k->at_base), false) < 0)
		return -EIO;
	k->at_period = period_s;
	return 0;
}

void
bench_rank_at(const struct bench_rank *k, long it)
{
	double at = k->at_base + (double)it * k->at_period;
	struct timespec ts = { .tv_sec = (time_t)at,
			       .tv_nsec = (long)((at - (double)(time_t)at) *
						 1e9) };

	/* the agreed instant (past already: at once) */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

bool
bench_rank_is_busy(const struct bench_rank *k, long busy)
{
	return busy == BENCH_BUSY_ALL || k->r == (unsigned)busy % k->P;
}

void
bench_rank_compute(const struct bench_rank *k, long busy, double us)
{
	if (bench_rank_is_busy(k, busy))
		work_loops((uint64_t)(us * k->loops_per_us));
	else
		sleep_us(us);
}

static int
rank_main(struct bench_rank *k, bench_rank_fn fn, void *arg)
{
	ptl_process_t map[BENCH_JOB_MAXP], id;
	uint32_t ids[2];
	int rc;

	/* the sleeping ranks wake at t_work, not 50 us (the default timer
	 * slack) later: that lateness would be timed as non-overlapped */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	k->loops_per_us = work_calibrate();
	BENCH_RCHECK(k, PtlInit() == PTL_OK, "PtlInit");
	BENCH_RCHECK(k, PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
				  PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL,
				  &k->ni) == PTL_OK, "PtlNIInit");
	BENCH_RCHECK(k, PtlGetPhysId(k->ni, &id) == PTL_OK, "PtlGetPhysId");
	ids[0] = id.phys.nid;
	ids[1] = id.phys.pid;
	if (bench_io_all(k->wfd, ids, sizeof(ids), true) < 0 ||
	    bench_io_all(k->rfd, map, sizeof(map[0]) * k->P, false) < 0)
		return -EIO;
	BENCH_RCHECK(k, PtlSetMap(k->ni, k->P, map) == PTL_OK, "PtlSetMap");
	rc = spin_coll_comm_create(k->ni, BENCH_JOB_COLL_PT, &k->comm);
	BENCH_RCHECK(k, rc == 0, "comm_create: %s", strerror(-rc));
	rc = fn(k, arg);
	if (rc == 0) {
		rc = spin_coll_comm_free(k->comm);
		BENCH_RCHECK(k, rc == 0, "comm_free: %s", strerror(-rc));
	}
	PtlNIFini(k->ni);
	PtlFini();
	return rc;
}

/* ---- the parent ------------------------------------------------------- */

void
bench_job_end(struct bench_job *j)
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

int
bench_job_start(struct bench_job *j, const struct bench_spinnic *nic,
		unsigned P, int reps, bench_rank_fn fn, void *arg)
{
	ptl_process_t map[BENCH_JOB_MAXP];

	if (P > BENCH_JOB_MAXP)
		return -EINVAL;
	j->P = P;
	for (unsigned i = 0; i < BENCH_JOB_MAXP; i++) {
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
			struct bench_rank k = { .r = i, .P = P, .wfd = up[1],
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
			_exit(rank_main(&k, fn, arg) == 0 ? 0 : 1);
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
	return bench_job_send_all(j, map, sizeof(map[0]) * P);
}

int
bench_job_gather_max(struct bench_job *j, double *out, double *tmp, size_t n)
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

int
bench_job_send_all(struct bench_job *j, const void *buf, size_t len)
{
	for (unsigned r = 0; r < j->P; r++)
		if (bench_io_all(j->wfd[r], (void *)(uintptr_t)buf, len,
				 true) < 0)
			return -EIO;
	return 0;
}

int
bench_job_send_base(struct bench_job *j, double ahead)
{
	double base = bench_now() + ahead;

	return bench_job_send_all(j, &base, sizeof(base));
}

int
bench_job_finish(struct bench_job *j)
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
	bench_job_end(j);
	return rc;
}

int
bench_job_nic_start(struct bench_spinnic *nic, unsigned P, long nic_lcores,
		    const char *bin)
{
	char n[8], lc[48], roles[96];
	const char *extra[] = { "--virtual", n, "--nic-mem", "4M", "--mbufs",
				"4096", NULL, NULL, NULL, NULL, NULL };
	long k = nic_lcores;

	snprintf(n, sizeof(n), "%u", P);
	if (k > 1) {
		/* node i's inbound and outbound on lcore i mod K (spinnic
		 * --lcore-roles) */
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

void
bench_job_region_env(size_t need)
{
	char v[32];

	snprintf(v, sizeof(v), "%zuM", need / (1 << 20) + 16);
	setenv("SPINNIC_REGION_SIZE", v, 1);
}

int
bench_parse_list(const char *what, const char *arg, long *out, unsigned max,
		 unsigned *n_p, long lo, long hi)
{
	const char *p = arg;

	*n_p = 0;
	while (*p != '\0') {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < lo || v > hi || *n_p >= max ||
		    (*end != ',' && *end != '\0')) {
			bench_err("--%s %s: expected up to %u comma-separated "
				  "values in %ld..%ld", what, arg, max, lo, hi);
			return -EINVAL;
		}
		out[(*n_p)++] = v;
		p = *end == ',' ? end + 1 : end;
	}
	if (*n_p == 0) {
		bench_err("--%s: empty", what);
		return -EINVAL;
	}
	return 0;
}

int
bench_job_common_work(struct bench_job *j, int R, int nvar, int ref,
		      double pure_period_s, double total_period_s,
		      bool own, double *m, double *tmp,
		      struct bench_job_times *out)
{
	double work, pures[BENCH_JOB_MAXVAR];
	int rc = 0;

	if (nvar > BENCH_JOB_MAXVAR)
		return -EINVAL;

	for (int v = 0; v < nvar && rc == 0; v++) {
		rc = bench_job_send_base(j, pure_period_s);
		if (rc == 0)
			rc = bench_job_gather_max(j, m, tmp, (size_t)R);
		out[v].pure = bench_median(m, R);
	}
	work = out[ref].pure;
	if (rc == 0)
		rc = bench_job_send_all(j, &work, sizeof(work));
	for (int v = 0; v < nvar && rc == 0; v++) {
		rc = bench_job_send_base(j, total_period_s);
		if (rc == 0)
			rc = bench_job_gather_max(j, m, tmp, (size_t)R);
		out[v].total = bench_median(m, R);
		out[v].nonov = out[v].total - work;
		out[v].overlap = bench_clamp01(1 - out[v].nonov / out[v].pure);
	}
	if (!own || rc != 0)
		return rc;
	for (int v = 0; v < nvar; v++)
		pures[v] = out[v].pure;
	rc = bench_job_send_all(j, pures, (size_t)nvar * sizeof(pures[0]));
	for (int v = 0; v < nvar && rc == 0; v++) {
		rc = bench_job_send_base(j, total_period_s);
		if (rc == 0)
			rc = bench_job_gather_max(j, m, tmp, (size_t)R);
		out[v].total_own = bench_median(m, R);
		out[v].overlap_own = bench_clamp01(1 - (out[v].total_own -
							out[v].pure) /
						   out[v].pure);
	}
	return rc;
}

int
bench_job_opt(struct bench_job_cfg *c, const char *name, const char *arg)
{
	const struct bench_num_opt nums[] = {
		{ "busy-rank", &c->busy, 0, BENCH_JOB_MAXP - 1 },
		{ "warmup", &c->warmup, 0, 1000 },
		{ "nic-lcores", &c->nic_lcores, 1, BENCH_JOB_MAXP },
	};
	const char **str = strcmp(name, "spinnic") == 0 ? &c->spinnic :
		strcmp(name, "spinnic-log") == 0 ? &c->spinnic_log :
		strcmp(name, "mpich") == 0 ? &c->mpich : NULL;

	if (str != NULL) {
		*str = arg;
		return 0;
	}
	if (strcmp(name, "busy-rank") == 0 && strcmp(arg, "all") == 0) {
		c->busy = BENCH_BUSY_ALL;
		return 0;
	}
	if (strcmp(name, "ranks") == 0)
		return bench_parse_list(name, arg, c->ranks, BENCH_JOB_MAXRANKS,
					&c->nranks, 2, BENCH_JOB_MAXP);
	if (strcmp(name, "sizes") == 0)
		return bench_parse_list(name, arg, c->sizes,
					c->max_sizes < BENCH_JOB_MAXSIZES ?
					c->max_sizes : BENCH_JOB_MAXSIZES,
					&c->nsizes, c->size_min, c->size_max);
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0]));
}

double
bench_clamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* ---- MPICH (spinnic-bench-mpi, coll_mpi.c) ---------------------------- */

const char *
bench_mpich_path(const char *opt, char *buf, size_t len, const char **why_p)
{
	char self[4096], *slash;
	ssize_t n;

	if (opt != NULL && strcmp(opt, "none") == 0) {
		*why_p = "--mpich none";
		return NULL;
	}
	if (system("command -v mpiexec >/dev/null 2>&1") != 0) {
		*why_p = "no mpiexec";
		return NULL;
	}
	if (opt != NULL) {
		snprintf(buf, len, "%s", opt);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0) {
			*why_p = "/proc/self/exe";
			return NULL;
		}
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL)
			*slash = '\0';
		snprintf(buf, len, "%.3900s/spinnic-bench-mpi", self);
	}
	if (access(buf, X_OK) != 0) {
		*why_p = "spinnic-bench-mpi not built (no MPI found by meson)";
		return NULL;
	}
	return buf;
}

int
bench_mpich_run(const char *helper, unsigned P, const char *args,
		double *pure_p, double *total_p)
{
	char cmd[4600], line[256];
	double pure = 0, total = 0;
	FILE *f;
	int got = 0, st;

	snprintf(cmd, sizeof(cmd), "timeout 300 mpiexec -n %u '%.4000s' "
		 "%.400s </dev/null", P, helper, args);
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
	*pure_p = pure;
	*total_p = total;
	return 0;
}
