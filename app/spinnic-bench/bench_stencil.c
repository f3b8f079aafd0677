/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench stencil (issue #19; paper 003 Fig. 11/12,
 * ../shared/papers/notes/notes-002_003.md §5.6 row `stencil`, target T11):
 * a 3D halo exchange on a px × py × pz grid of ranks (balanced factors of
 * P, largest first: P = 8 is 2 × 2 × 2), periodic in every dimension of
 * extent >= 2 (a dimension of extent 1 has no neighbour; of extent 2, the
 * neighbours on both sides are the same rank, told apart by the tag),
 * each rank a local cube of n³ doubles (--sizes n). The host packs the
 * six faces (n² doubles each) from the cube into contiguous send buffers
 * before the phase and again before its last call, untimed (the cube does
 * not change between calls); a call sends the <= 6 faces and receives the
 * <= 6 halos into contiguous buffers. Variants, one group per rank with
 * every send and receive in one epoch, recorded once per (n, variant) and
 * called each iteration:
 *   offload   the cached group: the NIC moves everything (a call is one
 *             PtlCTInc)
 *   host      SPIN_GROUP_HOST: the same pattern progressed by the host
 *             inside call and wait
 *   mpich     MPICH: MPI_Irecv and MPI_Isend of the same faces and halos,
 *             MPI_Waitall (spinnic-bench-mpi stencil under mpiexec -n P,
 *             after the ranks and spinnic stopped, same protocol and
 *             t_work; its data is not checked), where MPI was found at
 *             build, else skipped with a line
 * t_pure: call..wait without compute; t_total: call, compute t_work,
 * wait, with one t_work for both = t_pure(host); overlap = clamp(1 -
 * (t_total - t_work) / t_pure, 0, 1) of each variant; offload/host =
 * their t_total. The rank and job protocol of `overlap` (bench_job.h).
 * Every phase's last call is checked byte for byte: each halo holds the
 * neighbour's opposite face as packed for that call.
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

#define MAXSIZES 4
#define NMAX 256
#define RCHECK BENCH_RCHECK

/* the variants the ranks run (a new one: an index before S_COUNT, a name,
 * a flag), then MPICH's, run apart by mpiexec */
enum { S_OFFLOAD, S_HOST, S_COUNT, S_MPICH = S_COUNT };
static const char *const svar_names[S_COUNT + 1] = {
	"offload", "host", "mpich",
};
static const unsigned svar_flags[S_COUNT] = { 0, SPIN_GROUP_HOST };

static struct bench_job_cfg scfg = {
	.busy = 1, .ranks = { 8 }, .nranks = 1, .sizes = { 32, 64, 128 },
	.nsizes = 3, .max_sizes = MAXSIZES, .size_min = 2, .size_max = NMAX,
	.warmup = 2, .nic_lcores = 1,
};

static const struct bench_cmd_opt stencil_opts[] = {
	{ "ranks", 1, "comma-separated P (2..16; default 8: a 2x2x2 grid)" },
	{ "sizes", 1, "comma-separated cube edges n, n^3 doubles a rank "
		      "(2..256; default 32,64,128)" },
	{ "busy-rank", 1, "the rank that computes with a busy loop "
			  "(default 1), or 'all'" },
	{ "warmup", 1, "untimed calls before each phase (default 2; the "
		       "group's first call is one more)" },
	{ "nic-lcores", 1, "spinnic's lcores K (default 1), as overlap" },
	{ "mpich", 1, "the mpich variant's program (default: "
		      "spinnic-bench-mpi beside this one, run by mpiexec; "
		      "'none': skip it)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
stencil_opt(const char *name, const char *arg)
{
	int rc;

	rc = bench_job_opt(&scfg, name, arg);
	return rc == -ENOENT ? -EINVAL : rc;
}

/* ---- the grid ---------------------------------------------------------- */

/* balanced factors of @p P, largest first (as MPI_Dims_create) */
static void
grid_dims(unsigned P, unsigned d[3])
{
	unsigned best = ~0u;

	d[0] = P;
	d[1] = d[2] = 1;
	for (unsigned a = 1; a <= P; a++)
		for (unsigned b = 1; b <= a; b++) {
			unsigned c;

			if (P % (a * b) != 0)
				continue;
			c = P / (a * b);
			if (c > b || a - c >= best)
				continue;
			best = a - c;
			d[0] = a;
			d[1] = b;
			d[2] = c;
		}
}

/*
 * Face f (0: -x, 1: +x, 2: -y, 3: +y, 4: -z, 5: +z) of an n³ cube
 * c[x][y][z] (z fastest): the cube index of its element e (0..n²-1).
 */
static size_t
face_index(size_t n, int f, size_t e)
{
	size_t u = e / n, v = e % n, edge = f % 2 ? n - 1 : 0;

	switch (f / 2) {
	case 0:
		return (edge * n + u) * n + v;
	case 1:
		return (u * n + edge) * n + v;
	default:
		return (u * n + v) * n + edge;
	}
}

/* the cube's element @p i of rank @p r: an integer, exact in a double */
static double
cube_value(unsigned r, size_t i)
{
	return (double)((uint64_t)(r + 1) << 24 | i);
}

/* ---- a rank (a process: its state in file-scope variables) -------------- */

static struct {
	unsigned d[3], c[3];      /* grid extents, this rank's coordinates */
	int nb[6];                /* the neighbour on side f, or -1 */
	double *cube;             /* n³ (malloc) */
	double *face[6], *halo[6]; /* n² each (region memory) */
	spin_group_t *g[S_COUNT];
	long phases;              /* phases run: the stamps alternate */
} st;

static void
rank_neighbours(struct bench_rank *k)
{
	unsigned c[3];

	grid_dims(k->P, st.d);
	st.c[0] = k->r / (st.d[1] * st.d[2]);
	st.c[1] = k->r / st.d[2] % st.d[1];
	st.c[2] = k->r % st.d[2];
	for (int f = 0; f < 6; f++) {
		unsigned ax = (unsigned)f / 2, e = st.d[ax];

		st.nb[f] = -1;
		if (e < 2)
			continue;
		memcpy(c, st.c, sizeof(c));
		c[ax] = (c[ax] + (f % 2 ? 1 : e - 1)) % e;
		st.nb[f] = (int)((c[0] * st.d[1] + c[1]) * st.d[2] + c[2]);
	}
}

/* the faces from the cube, each element + @p stamp (untimed) */
static void
pack(size_t n, double stamp)
{
	for (int f = 0; f < 6; f++)
		for (size_t e = 0; st.nb[f] >= 0 && e < n * n; e++)
			st.face[f][e] = st.cube[face_index(n, f, e)] + stamp;
}

/* each halo f holds neighbour nb[f]'s face f ^ 1 + @p stamp, every byte
 * (SPINNIC_BENCH_CORRUPT in the environment: the last rank flips a bit of
 * its first halo first, to see the check fail) */
static int
check(struct bench_rank *k, size_t n, double stamp)
{
	if (getenv("SPINNIC_BENCH_CORRUPT") != NULL && k->r == k->P - 1)
		for (int f = 0; f < 6; f++)
			if (st.nb[f] >= 0) {
				((uint8_t *)st.halo[f])[n * n * 8 / 2] ^= 1;
				break;
			}
	for (int f = 0; f < 6; f++) {
		if (st.nb[f] < 0)
			continue;
		for (size_t e = 0; e < n * n; e++) {
			double want = cube_value((unsigned)st.nb[f],
						 face_index(n, f ^ 1, e)) +
				      stamp;

			RCHECK(k, memcmp(&st.halo[f][e], &want,
					 sizeof(want)) == 0,
			       "stencil n=%zu: halo %d (from rank %d) element "
			       "%zu is %.1f, not %.1f", n, f, st.nb[f], e,
			       st.halo[f][e], want);
		}
	}
	return 0;
}

static int
record(struct bench_rank *k, int v, size_t n, spin_group_t **g_p)
{
	spin_group_t *g = NULL;
	size_t len = n * n * sizeof(double);
	int rc = spin_group_start_flags(k->comm, svar_flags[v], &g);

	/* halo f comes from nb[f], which sent it as its face f ^ 1 with the
	 * tag f ^ 1; face f goes to nb[f] with the tag f */
	for (int f = 0; f < 6 && rc == 0; f++) {
		if (st.nb[f] < 0)
			continue;
		rc = spin_group_recv(g, st.halo[f], len, (unsigned)st.nb[f],
				     (uint32_t)(f ^ 1));
		if (rc == 0)
			rc = spin_group_send(g, st.face[f], len,
					     (unsigned)st.nb[f], (uint32_t)f);
	}
	if (rc == 0)
		rc = spin_group_end(g);
	if (rc != 0)
		spin_group_free(g);
	else
		*g_p = g;
	return rc;
}

/* one call at the agreed instant @p it: @return µs, or < 0 */
static double
siteration(struct bench_rank *k, spin_group_t *g, double work_us, long it)
{
	double t0;
	int rc;

	bench_rank_at(k, it);
	t0 = bench_now();
	rc = spin_group_call(g);
	if (rc == 0 && work_us > 0)
		bench_rank_compute(k, scfg.busy, work_us);
	if (rc == 0)
		rc = spin_group_wait(g);
	return rc != 0 ? rc : (bench_now() - t0) * 1e6;
}

/* t[0..reps-1]; the first call of a new group is one untimed more */
static int
sphase(struct bench_rank *k, int v, size_t n, double work_us, bool first,
       double *t)
{
	size_t bytes = 6 * n * n * sizeof(double);
	double stamp = 0.25 * (double)(1 + st.phases++ % 2);
	long calls = (first ? 1 : 0) + scfg.warmup + k->reps;

	if (bench_rank_phase(k, 4e-3 + 1.5e-3 * k->P +
			     (double)bytes * k->P / 50e6 +
			     (first ? 3e-3 * k->P : 0) +
			     3 * work_us * 1e-6) < 0)
		return -EIO;
	pack(n, 0);
	for (long i = 0; i < calls; i++) {
		double us;

		/* the last call carries this phase's stamp */
		if (i == calls - 1)
			pack(n, stamp);
		us = siteration(k, st.g[v], work_us, i);
		RCHECK(k, us >= 0, "stencil %s n=%zu: %s", svar_names[v], n,
		       strerror((int)-us));
		if (i >= calls - k->reps)
			t[i - (calls - k->reps)] = us;
	}
	return check(k, n, stamp);
}

static int
rank_stencil(struct bench_rank *k)
{
	double *t = calloc((size_t)k->reps, sizeof(double)), work;
	double own[S_COUNT];
	size_t tb = (size_t)k->reps * sizeof(double);
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	for (unsigned z = 0; z < scfg.nsizes && rc == 0; z++) {
		size_t n = (size_t)scfg.sizes[z];

		st.cube = malloc(n * n * n * sizeof(double));
		RCHECK(k, st.cube != NULL, "cube n=%zu", n);
		for (size_t i = 0; i < n * n * n; i++)
			st.cube[i] = cube_value(k->r, i);
		for (int v = 0; v < S_COUNT && rc == 0; v++) {
			rc = record(k, v, n, &st.g[v]);
			RCHECK(k, rc == 0, "record %s: %s", svar_names[v],
			       strerror(-rc));
			rc = sphase(k, v, n, 0, true, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, tb, true);
		}
		if (rc == 0)
			rc = bench_io_all(k->rfd, &work, sizeof(work), false);
		for (int v = 0; v < S_COUNT && rc == 0; v++) {
			rc = sphase(k, v, n, work, false, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, tb, true);
		}
		/* each variant with its own pure time as t_work (OMB) */
		if (rc == 0)
			rc = bench_io_all(k->rfd, own, sizeof(own), false);
		for (int v = 0; v < S_COUNT && rc == 0; v++) {
			rc = sphase(k, v, n, own[v], false, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, tb, true);
		}
		for (int v = 0; v < S_COUNT; v++) {
			spin_group_free(st.g[v]);
			st.g[v] = NULL;
		}
		free(st.cube);
		st.cube = NULL;
	}
	free(t);
	return rc;
}

static int
srank_main(struct bench_rank *k, void *arg)
{
	size_t nmax = 2, len;
	int rc;

	(void)arg;
	for (unsigned z = 0; z < scfg.nsizes; z++)
		if ((size_t)scfg.sizes[z] > nmax)
			nmax = (size_t)scfg.sizes[z];
	len = nmax * nmax * sizeof(double);
	rank_neighbours(k);
	/* the 12 buffers in one region allocation each side */
	k->cap = 6 * len;
	k->a = spin_host_alloc(k->cap);
	k->b = spin_host_alloc(k->cap);
	RCHECK(k, k->a != NULL && k->b != NULL, "spin_host_alloc %zu",
	       k->cap);
	memset(k->b, 0, k->cap);
	for (int f = 0; f < 6; f++) {
		st.face[f] = (double *)(void *)(k->a + (size_t)f * len);
		st.halo[f] = (double *)(void *)(k->b + (size_t)f * len);
	}
	rc = rank_stencil(k);
	if (rc == 0) {
		rc = spin_group_cache_release(k->comm);
		RCHECK(k, rc == 0, "cache release: %s", strerror(-rc));
	}
	spin_host_free(k->a);
	spin_host_free(k->b);
	return rc;
}

/* ---- the parent ---------------------------------------------------- */

/* MPICH's halo exchange of cube edge @p n with compute @p work_us:
 * @return 0 (w filled), -EIO */
static int
smpich(const char *helper, unsigned P, long n, int reps, double work_us,
       struct bench_job_times *w)
{
	char args[160];
	int rc;

	snprintf(args, sizeof(args), "stencil %ld %d %ld %ld %.3f", n, reps,
		 scfg.warmup, scfg.busy, work_us);
	rc = bench_mpich_run(helper, P, args, &w->pure, &w->total);
	if (rc < 0)
		return rc;
	w->nonov = w->total - work_us;
	w->overlap = bench_clamp01(1 - w->nonov / w->pure);
	return 0;
}

static int
stencil_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "ranks", BENCH_COL_INT, 0 },
		{ "grid", BENCH_COL_STR, 0 },
		{ "n", BENCH_COL_INT, 0 },
		{ "face_bytes", BENCH_COL_INT, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "t_pure_us", BENCH_COL_NUM, 2 },
		{ "t_work_us", BENCH_COL_NUM, 2 },
		{ "t_total_us", BENCH_COL_NUM, 2 },
		{ "t_nonov_us", BENCH_COL_NUM, 2 },
		{ "overlap", BENCH_COL_NUM, 3 },
		{ "t_total_own_us", BENCH_COL_NUM, 2 },
		{ "overlap_own", BENCH_COL_NUM, 3 },
		{ "ratio_total_host", BENCH_COL_NUM, 3 },
		{ "ratio_total_mpich", BENCH_COL_NUM, 3 },
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_job j = { .P = 0 };
	int R = o->reps, rc = 0, ncpus = 0;
	size_t nmax = 2;
	double *m, *tmp;
	char hbuf[4096];
	const char *helper, *why = "";

	helper = bench_mpich_path(scfg.mpich, hbuf, sizeof(hbuf), &why);
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	m = calloc((size_t)R, sizeof(double));
	tmp = calloc((size_t)R, sizeof(double));
	if (tab == NULL || m == NULL || tmp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned z = 0; z < scfg.nsizes; z++)
		if ((size_t)scfg.sizes[z] > nmax)
			nmax = (size_t)scfg.sizes[z];
	bench_spinnic_signals();
	for (unsigned pi = 0; pi < scfg.nranks && rc == 0; pi++) {
		unsigned P = (unsigned)scfg.ranks[pi], d[3];
		struct bench_job_times res[MAXSIZES][S_COUNT + 1];
		char grid[48];

		grid_dims(P, d);
		snprintf(grid, sizeof(grid), "%ux%ux%u", d[0], d[1], d[2]);
		bench_job_region_env(12 * nmax * nmax * sizeof(double));
		rc = bench_job_nic_start(&nic, P, scfg.nic_lcores,
					 scfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)scfg.nic_lcores);
		rc = bench_job_start(&j, &nic, P, R, srank_main, NULL);
		/* the first call compiles (collective): longer periods */
		for (unsigned z = 0; z < scfg.nsizes && rc == 0; z++)
			rc = bench_job_common_work(&j, R, S_COUNT, S_HOST,
						   20e-3 + 5e-3 * P,
						   10e-3 + 1e-3 * P, true, m,
						   tmp, res[z]);
		if (rc == 0)
			rc = bench_job_finish(&j);
		else
			bench_job_end(&j);
		bench_spinnic_stop(&nic, scfg.spinnic_log);
		for (unsigned z = 0; z < scfg.nsizes && rc == 0 && helper; z++)
			rc = smpich(helper, P, scfg.sizes[z], R,
				    res[z][S_HOST].pure, &res[z][S_MPICH]);
		for (unsigned z = 0; z < scfg.nsizes && rc == 0; z++)
			for (int v = 0; v < S_COUNT + (helper != NULL); v++) {
				const struct bench_job_times *w = &res[z][v];
				long n = scfg.sizes[z];

				if (bench_table_row(tab) < 0) {
					rc = -ENOMEM;
					break;
				}
				bench_table_set_int(tab, "ranks", P);
				bench_table_set_str(tab, "grid", grid);
				bench_table_set_int(tab, "n", n);
				bench_table_set_int(tab, "face_bytes",
						    n * n * 8);
				bench_table_set_str(tab, "variant",
						    svar_names[v]);
				bench_table_set_num(tab, "t_pure_us", w->pure);
				bench_table_set_num(tab, "t_work_us",
						    res[z][S_HOST].pure);
				bench_table_set_num(tab, "t_total_us",
						    w->total);
				bench_table_set_num(tab, "t_nonov_us",
						    w->nonov);
				bench_table_set_num(tab, "overlap",
						    w->overlap);
				if (v != S_MPICH) {
					bench_table_set_num(tab,
						"t_total_own_us", w->total_own);
					bench_table_set_num(tab,
						"overlap_own", w->overlap_own);
				}
				if (v != S_HOST)
					bench_table_set_num(tab,
						"ratio_total_host", w->total /
						res[z][S_HOST].total);
				if (helper != NULL && v != S_MPICH)
					bench_table_set_num(tab,
						"ratio_total_mpich", w->total /
						res[z][S_MPICH].total);
			}
	}
	if (rc == 0) {
		rc = bench_table_emit(tab, o);
		printf("# stencil (paper 003 Fig. 11/12; notes-002_003 §5.6): "
		       "3D halo exchange, P = px x py x pz (periodic where an "
		       "extent is >= 2), n^3 doubles a rank, the 6 faces "
		       "(face_bytes each) packed by the host into contiguous "
		       "buffers before the call, untimed; one group per rank "
		       "(every send and receive in one epoch) called per "
		       "iteration; one rank per node of spinnic --virtual P "
		       "--idle-sleep-us 0 (%ld lcore(s)), ranks on %d CPU(s) "
		       "off it; %s computes (calibrated loop), the others "
		       "sleep t_work without library calls; times: max over "
		       "ranks per call, median of %d (%ld untimed first, and "
		       "the group's first call); t_work = t_pure(host) for "
		       "all (t_total_own, overlap_own: each variant's own "
		       "t_pure as t_work, the OSU benchmarks' overlap); "
		       "ratios: t_total against host's and mpich's in "
		       "the same run; halos checked byte for byte at every "
		       "phase's last call; mpich: MPI_Isend/MPI_Irecv of the "
		       "same buffers, MPI_Waitall (spinnic-bench-mpi under "
		       "mpiexec -n P, same protocol and t_work, no progress "
		       "thread, MPIR_CVAR_POLLS_BEFORE_YIELD=1 by default, "
		       "data not checked)%s%s\n", scfg.nic_lcores, ncpus,
		       scfg.busy == BENCH_BUSY_ALL ? "every rank" :
		       "one rank (--busy-rank)", R, scfg.warmup,
		       helper ? "" : ": skipped, ", why);
	}
out:
	bench_table_free(tab);
	free(m);
	free(tmp);
	return rc;
}

const struct bench_cmd bench_stencil_cmd = {
	.name = "stencil",
	.summary = "3D halo exchange (paper 003 Fig. 11/12): one offloaded "
		   "group per rank called per iteration, against the same "
		   "pattern host-progressed",
	.opts = stencil_opts,
	.opt = stencil_opt,
	.run = stencil_run,
};
