/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench group (issue #19; paper 003 Fig. 13-16,
 * ../shared/papers/notes/notes-002_003.md §2.6, §5.6): an alltoall
 * (scatter-destination: every send and receive of a rank in one epoch,
 * P003's Ialltoall) recorded as a group (spin_coll.h spin_group_*) on a
 * real `spinnic --virtual P --idle-sleep-us 0`, one forked rank per node,
 * for P (--ranks) and bytes per pair (--sizes), the variants
 *   cached      one group, called again and again: a call is one
 *               PtlCTInc (P003's cached group)
 *   rerecorded  a group recorded again before every call, same signature:
 *               its first call finds the cached schedule (one offloaded
 *               agreement allgather, no compile)
 *   uncached    SPIN_GROUP_NOCACHE: every call agrees and compiles
 *               (upload, host barrier): P003's group without its cache
 *   simple      SPIN_GROUP_SIMPLE: per transfer an RTS, an RTR and the
 *               data through the host, nothing offloaded (Fig. 15)
 *   host        SPIN_GROUP_HOST: the cached group's schedule progressed by
 *               the host inside call and wait (host-progressed MPI)
 *   staged      SPIN_GROUP_STAGED: the cached group with every send
 *               staged through NIC memory first (SPIN_MD_STAGE: the
 *               BluesMPI analog of Fig. 4 and 13, with P003's cache)
 *   mpich       MPICH's MPI_Ialltoall at the same P and bytes per pair
 *               (spinnic-bench-mpi alltoall under mpiexec -n P, after
 *               the ranks and spinnic stopped; same protocol, no t_first;
 *               where MPI was found at build, else skipped with a line)
 * t_first: the group's first call to completion (compile included: the
 * cold start of Fig. 16c), max over ranks, apart from the steady state;
 * t_pure, t_total, overlap as `spinnic-bench overlap` (whose rank and job
 * protocol this shares, bench_job.h: iterations at instants agreed in
 * advance, --busy-rank computes with a calibrated loop while the others
 * sleep without library calls, --nic-lcores). Every phase's last call is
 * checked byte for byte: block j of every rank's receive buffer holds
 * what rank j sent it (a pattern of sender, receiver and offset).
 */
#include <errno.h>
#include <inttypes.h>
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
#define WAIT_MS 60000u
#define MAXSIZES BENCH_JOB_MAXSIZES
#define BUSY_ALL BENCH_BUSY_ALL

/* The variants the ranks run (a new one: an index before G_COUNT, its
 * name and its spin_group_start_flags()), then MPICH's, run apart by
 * mpiexec after the ranks (not a group) */
enum { G_CACHED, G_REREC, G_UNCACHED, G_SIMPLE, G_HOST, G_STAGED,
       G_COUNT, G_MPICH = G_COUNT };
static const char *const gvar_names[G_COUNT + 1] = {
	"cached", "rerecorded", "uncached", "simple", "host", "staged",
	"mpich",
};
static const unsigned gvar_flags[G_COUNT] = {
	0, 0, SPIN_GROUP_NOCACHE, SPIN_GROUP_SIMPLE, SPIN_GROUP_HOST,
	SPIN_GROUP_STAGED,
};

static struct bench_job_cfg gcfg = {
	.busy = 1, .ranks = { 4, 8, 16 }, .nranks = 3,
	.sizes = { 1024, 16384, 65536, 262144 }, .nsizes = 4,
	.max_sizes = MAXSIZES, .size_min = 1, .size_max = 1 << 20,
	.warmup = 2, .nic_lcores = 1,
};

static const struct bench_cmd_opt group_opts[] = {
	{ "ranks", 1, "comma-separated P (2..16; default 4,8,16)" },
	{ "sizes", 1, "comma-separated bytes per pair (default "
		      "1024,16384,65536,262144)" },
	{ "busy-rank", 1, "the rank that computes with a busy loop "
			  "(default 1), or 'all'" },
	{ "warmup", 1, "untimed calls after the first, before each phase "
		       "(default 2)" },
	{ "nic-lcores", 1, "spinnic's lcores K (default 1), as overlap" },
	{ "mpich", 1, "the mpich variant's program (default: "
		      "spinnic-bench-mpi beside this one, run by mpiexec; "
		      "'none': skip it)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
group_opt(const char *name, const char *arg)
{
	int rc;

	rc = bench_job_opt(&gcfg, name, arg);
	return rc == -ENOENT ? -EINVAL : rc;
}

/* ---- a rank ------------------------------------------------------------------- */

/* a rank: struct bench_rank (bench_job.h), k->a, k->b: send and receive
 * buffers; rank_g: the phase's group (rerecorded: the last), one per
 * rank (a process) */
static spin_group_t *rank_g;

#define RCHECK BENCH_RCHECK

static int
record(struct bench_rank *k, int v, size_t bytes, spin_group_t **g_p)
{
	spin_group_t *g = NULL;
	int rc = spin_group_start_flags(k->comm, gvar_flags[v], &g);

	for (unsigned j = 0; j < k->P && rc == 0; j++) {
		rc = spin_group_send(g, k->a + j * bytes, bytes, j, 0);
		if (rc == 0)
			rc = spin_group_recv(g, k->b + j * bytes, bytes, j,
					     0);
	}
	if (rc == 0)
		rc = spin_group_end(g);
	if (rc != 0)
		spin_group_free(g);
	if (rc == 0)
		*g_p = g;
	return rc;
}

/* one call of variant @p v at the next agreed instant: @return µs, < 0 */
static double
giteration(struct bench_rank *k, int v, size_t bytes, double work_us, long it)
{
	double t0, t1;
	int rc = 0;

	bench_rank_at(k, it);
	t0 = bench_now();
	if (v == G_REREC || rank_g == NULL) {
		/* recorded again (timed: the recording is part of it) */
		spin_group_free(rank_g);
		rank_g = NULL;
		rc = record(k, v, bytes, &rank_g);
	}
	if (rc == 0)
		rc = spin_group_call(rank_g);
	if (rc == 0 && work_us > 0)
		bench_rank_compute(k, gcfg.busy, work_us);
	if (rc == 0)
		rc = spin_group_wait(rank_g);
	t1 = bench_now();
	return rc != 0 ? rc : (t1 - t0) * 1e6;
}

/* byte @p i of the block rank @p from sends to rank @p to */
static uint8_t
gbyte(unsigned from, unsigned to, size_t i)
{
	return (uint8_t)(from * 37u + to * 11u + i * 13u + (i >> 8) + 1u);
}

static int
check(struct bench_rank *k, size_t bytes)
{
	/* SPINNIC_BENCH_CORRUPT: the last rank flips a bit first, to see
	 * the check fail (as stencil and ring) */
	if (getenv("SPINNIC_BENCH_CORRUPT") != NULL && k->r == k->P - 1)
		k->b[bytes * k->P - 1] ^= 1;
	for (unsigned j = 0; j < k->P; j++)
		for (size_t i = 0; i < bytes; i++)
			RCHECK(k, k->b[j * bytes + i] == gbyte(j, k->r, i),
			       "alltoall %zu B: block %u byte %zu is %#x, "
			       "wanted %#x", bytes, j, i, k->b[j * bytes + i],
			       gbyte(j, k->r, i));
	return 0;
}

/* t[0]: the first call (the pure phase of a new group), t[1..]: reps */
static int
gphase(struct bench_rank *k, int v, size_t bytes, double work_us, double *t)
{
	long it = 0;

	/* block j for rank j (before the phase's agreed instants) */
	for (unsigned j = 0; j < k->P; j++)
		for (size_t i = 0; i < bytes; i++)
			k->a[j * bytes + i] = gbyte(k->r, j, i);
	if (bench_rank_phase(k, 4e-3 + 1.5e-3 * k->P +
			     (double)bytes * k->P / 50e6 +
			     (v == G_UNCACHED || v == G_SIMPLE ||
			      v == G_REREC ? 3e-3 * k->P : 0) +
			     3 * work_us * 1e-6) < 0)
		return -EIO;
	memset(k->b, 0, bytes * k->P);
	t[0] = 0;
	if (rank_g == NULL) {
		t[0] = giteration(k, v, bytes, 0, it++);
		RCHECK(k, t[0] >= 0, "%s %zu B first call: %s",
		       gvar_names[v], bytes, strerror((int)-t[0]));
	}
	for (long i = 0; i < gcfg.warmup; i++)
		RCHECK(k, giteration(k, v, bytes, work_us, it++) >= 0,
		       "warmup");
	for (int i = 0; i < k->reps; i++) {
		t[1 + i] = giteration(k, v, bytes, work_us, it++);
		RCHECK(k, t[1 + i] >= 0, "%s %zu B: %s", gvar_names[v], bytes,
		       strerror((int)-t[1 + i]));
	}
	return check(k, bytes);
}

static int
rank_group(struct bench_rank *k)
{
	size_t n = (size_t)k->reps + 1;
	double *t = calloc(n, sizeof(double)), work;
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++) {
		size_t bytes = (size_t)gcfg.sizes[z];

		for (int v = 0; v < G_COUNT && rc == 0; v++) {
			rank_g = NULL;
			rc = gphase(k, v, bytes, 0, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, n * sizeof(double),
						  true);
			if (rc == 0)
				rc = bench_io_all(k->rfd, &work, sizeof(work),
						  false);
			if (rc == 0)
				rc = gphase(k, v, bytes, work, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, n * sizeof(double),
						  true);
			spin_group_free(rank_g);
			rank_g = NULL;
		}
	}
	free(t);
	return rc;
}

/* a rank's body (bench_job_start()) */
static int
grank_main(struct bench_rank *k, void *arg)
{
	size_t cap = 64;
	int rc;

	(void)arg;
	for (unsigned z = 0; z < gcfg.nsizes; z++)
		if ((size_t)gcfg.sizes[z] > cap)
			cap = (size_t)gcfg.sizes[z];
	cap *= k->P;
	k->cap = cap;
	k->a = spin_host_alloc(cap);
	k->b = spin_host_alloc(cap);
	RCHECK(k, k->a != NULL && k->b != NULL, "spin_host_alloc %zu", cap);
	rc = rank_group(k);
	if (rc == 0) {
		rc = spin_group_cache_release(k->comm);
		RCHECK(k, rc == 0, "cache release: %s", strerror(-rc));
	}
	spin_host_free(k->a);
	spin_host_free(k->b);
	return rc;
}

/* ---- the parent (bench_job.h) -------------------------------------------- */

struct grow {
	double first, pure, total, nonov, overlap;
};

/* MPICH's MPI_Ialltoall, @p bytes per pair: @return 0 (w filled), -EIO */
static int
gmpich(const char *helper, unsigned P, long bytes, int reps, struct grow *w)
{
	char args[128];
	int rc;

	snprintf(args, sizeof(args), "alltoall %ld %d %ld %ld", bytes, reps,
		 gcfg.warmup, gcfg.busy);
	rc = bench_mpich_run(helper, P, args, &w->pure, &w->total);
	if (rc < 0)
		return rc;
	w->first = 0;
	w->nonov = w->total - w->pure;
	w->overlap = bench_clamp01(1 - w->nonov / w->pure);
	return 0;
}

static int
group_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "ranks", BENCH_COL_INT, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "t_first_us", BENCH_COL_NUM, 1 },
		{ "t_pure_us", BENCH_COL_NUM, 2 },
		{ "t_total_us", BENCH_COL_NUM, 2 },
		{ "t_nonov_us", BENCH_COL_NUM, 2 },
		{ "overlap", BENCH_COL_NUM, 3 },
		{ "ratio_total_host", BENCH_COL_NUM, 3 },
		{ "ratio_total_simple", BENCH_COL_NUM, 3 },
		{ "ratio_total_staged", BENCH_COL_NUM, 3 },
		{ "ratio_total_mpich", BENCH_COL_NUM, 3 },
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_job j = { .P = 0 };
	int R = o->reps, rc = 0, ncpus = 0;
	size_t n = (size_t)R + 1, maxb = 64;
	double *m, *tmp;
	char hbuf[4096];
	const char *helper, *why = "";

	helper = bench_mpich_path(gcfg.mpich, hbuf, sizeof(hbuf), &why);
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	m = calloc(n, sizeof(double));
	tmp = calloc(n, sizeof(double));
	if (tab == NULL || m == NULL || tmp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned z = 0; z < gcfg.nsizes; z++)
		if ((size_t)gcfg.sizes[z] > maxb)
			maxb = (size_t)gcfg.sizes[z];
	bench_spinnic_signals();
	for (unsigned pi = 0; pi < gcfg.nranks && rc == 0; pi++) {
		unsigned P = (unsigned)gcfg.ranks[pi];
		struct grow res[MAXSIZES][G_COUNT + 1];

		/* region memory per rank: the two buffers and schedules' */
		bench_job_region_env(2 * maxb * P);
		rc = bench_job_nic_start(&nic, P, gcfg.nic_lcores,
					 gcfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)gcfg.nic_lcores);
		rc = bench_job_start(&j, &nic, P, R, grank_main, NULL);
		for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++)
			for (int g = 0; g < G_COUNT && rc == 0; g++) {
				struct grow *w = &res[z][g];

				rc = bench_job_send_base(&j, 20e-3 + 5e-3 * P);
				if (rc == 0)
					rc = bench_job_gather_max(&j, m, tmp,
								  n);
				if (rc < 0)
					break;
				w->first = m[0];
				w->pure = bench_median(m + 1, R);
				for (unsigned r = 0; r < P && rc == 0; r++)
					rc = bench_io_all(j.wfd[r], &w->pure,
							  sizeof(w->pure),
							  true);
				if (rc == 0)
					rc = bench_job_send_base(&j,
							10e-3 + 1e-3 * P);
				if (rc == 0)
					rc = bench_job_gather_max(&j, m, tmp,
								  n);
				if (rc < 0)
					break;
				w->total = bench_median(m + 1, R);
				w->nonov = w->total - w->pure;
				w->overlap = bench_clamp01(1 - w->nonov /
							   w->pure);
			}
		if (rc == 0)
			rc = bench_job_finish(&j);
		else
			bench_job_end(&j);
		bench_spinnic_stop(&nic, gcfg.spinnic_log);
		for (unsigned z = 0; z < gcfg.nsizes && rc == 0 && helper; z++)
			rc = gmpich(helper, P, gcfg.sizes[z], R,
				    &res[z][G_MPICH]);
		for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++)
			for (int g = 0; g < G_COUNT + (helper != NULL); g++) {
				const struct grow *w = &res[z][g];

				if (bench_table_row(tab) < 0) {
					rc = -ENOMEM;
					break;
				}
				bench_table_set_int(tab, "ranks", P);
				bench_table_set_int(tab, "bytes",
						    gcfg.sizes[z]);
				bench_table_set_str(tab, "variant",
						    gvar_names[g]);
				if (g != G_MPICH)
					bench_table_set_num(tab, "t_first_us",
							    w->first);
				bench_table_set_num(tab, "t_pure_us", w->pure);
				bench_table_set_num(tab, "t_total_us",
						    w->total);
				bench_table_set_num(tab, "t_nonov_us",
						    w->nonov);
				bench_table_set_num(tab, "overlap",
						    w->overlap);
				if (g != G_HOST)
					bench_table_set_num(tab,
						"ratio_total_host", w->total /
						res[z][G_HOST].total);
				if (g != G_SIMPLE)
					bench_table_set_num(tab,
						"ratio_total_simple",
						w->total /
						res[z][G_SIMPLE].total);
				if (g != G_STAGED)
					bench_table_set_num(tab,
						"ratio_total_staged",
						w->total /
						res[z][G_STAGED].total);
				if (helper != NULL && g != G_MPICH)
					bench_table_set_num(tab,
						"ratio_total_mpich",
						w->total /
						res[z][G_MPICH].total);
			}
	}
	if (rc == 0) {
		rc = bench_table_emit(tab, o);
		printf("# group (paper 003 Fig. 13-16; notes-002_003 §5.6): "
		       "alltoall scatter-destination recorded as a group, "
		       "bytes per pair, one rank per node of spinnic "
		       "--virtual P --idle-sleep-us 0 (%ld lcore(s)), ranks "
		       "on %d CPU(s) off it; %s computes (calibrated loop), "
		       "the others sleep t_work without library calls; "
		       "t_first: the group's first call (compile included), "
		       "max over ranks, one sample; other times: max over "
		       "ranks per call, median of %d (%ld untimed first); "
		       "t_work = t_pure of the variant; ratios: t_total "
		       "against host's, simple's, staged's and mpich's in "
		       "the same run; mpich: MPICH's MPI_Ialltoall (spinnic-bench-mpi "
		       "under mpiexec -n P, same protocol, no progress "
		       "thread, MPIR_CVAR_POLLS_BEFORE_YIELD=1 by default)"
		       "%s%s\n",
		       gcfg.nic_lcores, ncpus, gcfg.busy == BUSY_ALL ?
		       "every rank" : "one rank (--busy-rank)", R,
		       gcfg.warmup, helper ? "" : ": skipped, ", why);
	}
out:
	bench_table_free(tab);
	free(m);
	free(tmp);
	return rc;
}

const struct bench_cmd bench_group_cmd = {
	.name = "group",
	.summary = "group offload (paper 003 Fig. 13-16): an alltoall "
		   "recorded as a group, cached, re-recorded, uncached, "
		   "simple (per-transfer host handshake) and host-progressed",
	.opts = group_opts,
	.opt = group_opt,
	.run = group_run,
};
