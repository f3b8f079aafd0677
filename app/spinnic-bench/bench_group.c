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
 * t_first: the group's first call to completion (compile included: the
 * cold start of Fig. 16c), max over ranks, apart from the steady state;
 * t_pure, t_total, overlap as `spinnic-bench overlap` (whose rank and job
 * protocol this copies: iterations at instants agreed in advance,
 * --busy-rank computes with a calibrated loop while the others sleep
 * without library calls, --nic-lcores). Every phase's last call is
 * checked: block j of every rank's receive buffer holds rank j's bytes.
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
#define WAIT_MS 60000u
#define MAXSIZES 8
#define MAXRANKS 4
#define BUSY_ALL (-1L)

enum { G_CACHED, G_REREC, G_UNCACHED, G_SIMPLE, G_HOST, G_COUNT };
static const char *const gvar_names[G_COUNT] = {
	"cached", "rerecorded", "uncached", "simple", "host",
};
static const unsigned gvar_flags[G_COUNT] = {
	0, 0, SPIN_GROUP_NOCACHE, SPIN_GROUP_SIMPLE, SPIN_GROUP_HOST,
};

static struct {
	long busy;
	long ranks[MAXRANKS];
	unsigned nranks;
	long sizes[MAXSIZES];
	unsigned nsizes;
	long warmup;
	long nic_lcores;
	const char *spinnic;
	const char *spinnic_log;
} gcfg = { 1, { 4, 8, 16 }, 3, { 1024, 16384, 65536, 262144 }, 4, 2, 1,
	   NULL, NULL };

static const struct bench_cmd_opt group_opts[] = {
	{ "ranks", 1, "comma-separated P (2..16; default 4,8,16)" },
	{ "sizes", 1, "comma-separated bytes per pair (default "
		      "1024,16384,65536,262144)" },
	{ "busy-rank", 1, "the rank that computes with a busy loop "
			  "(default 1), or 'all'" },
	{ "warmup", 1, "untimed calls after the first, before each phase "
		       "(default 2)" },
	{ "nic-lcores", 1, "spinnic's lcores K (default 1), as overlap" },
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
group_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "busy-rank", &gcfg.busy, 0, MAXP - 1 },
		{ "warmup", &gcfg.warmup, 0, 1000 },
		{ "nic-lcores", &gcfg.nic_lcores, 1, MAXP },
	};

	if (strcmp(name, "busy-rank") == 0 && strcmp(arg, "all") == 0) {
		gcfg.busy = BUSY_ALL;
		return 0;
	}
	if (strcmp(name, "ranks") == 0)
		return parse_list(name, arg, gcfg.ranks, MAXRANKS,
				  &gcfg.nranks, 2, MAXP);
	if (strcmp(name, "sizes") == 0)
		return parse_list(name, arg, gcfg.sizes, MAXSIZES,
				  &gcfg.nsizes, 1, 1 << 20);
	if (strcmp(name, "spinnic") == 0) {
		gcfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		gcfg.spinnic_log = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- a rank ------------------------------------------------------------------- */

struct grank {
	unsigned r, P;
	int wfd, rfd;
	int reps;
	ptl_handle_ni_t ni;
	spin_coll_comm_t *comm;
	double loops_per_us;
	double at_base, at_period;
	uint8_t *sb, *rb;
	spin_group_t *g;          /* the phase's group (rerecorded: last) */
};

#define RCHECK(k, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "spinnic-bench: rank %u: ", (k)->r); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		return -EIO; \
	} \
} while (0)

static int
record(struct grank *k, int v, size_t bytes, spin_group_t **g_p)
{
	spin_group_t *g = NULL;
	int rc = spin_group_start_flags(k->comm, gvar_flags[v], &g);

	for (unsigned j = 0; j < k->P && rc == 0; j++) {
		rc = spin_group_send(g, k->sb + j * bytes, bytes, j, 0);
		if (rc == 0)
			rc = spin_group_recv(g, k->rb + j * bytes, bytes, j,
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
giteration(struct grank *k, int v, size_t bytes, double work_us, long it)
{
	double at = k->at_base + (double)it * k->at_period;
	struct timespec ts = { .tv_sec = (time_t)at,
			       .tv_nsec = (long)((at - (double)(time_t)at) *
						 1e9) };
	double t0, t1;
	int rc = 0;

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
	t0 = bench_now();
	if (v == G_REREC || k->g == NULL) {
		/* recorded again (timed: the recording is part of it) */
		spin_group_free(k->g);
		k->g = NULL;
		rc = record(k, v, bytes, &k->g);
	}
	if (rc == 0)
		rc = spin_group_call(k->g);
	if (rc == 0 && work_us > 0) {
		if (gcfg.busy == BUSY_ALL ||
		    k->r == (unsigned)gcfg.busy % k->P)
			work_loops((uint64_t)(work_us * k->loops_per_us));
		else
			sleep_us(work_us);
	}
	if (rc == 0)
		rc = spin_group_wait(k->g);
	t1 = bench_now();
	return rc != 0 ? rc : (t1 - t0) * 1e6;
}

static int
check(struct grank *k, size_t bytes)
{
	for (unsigned j = 0; j < k->P; j++)
		RCHECK(k, k->rb[j * bytes] == (uint8_t)(j + 1) &&
		       k->rb[j * bytes + bytes - 1] == (uint8_t)(j + 1),
		       "alltoall %zu B: block %u wrong", bytes, j);
	return 0;
}

/* t[0]: the first call (the pure phase of a new group), t[1..]: reps */
static int
gphase(struct grank *k, int v, size_t bytes, double work_us, double *t)
{
	long it = 0;

	if (bench_io_all(k->rfd, &k->at_base, sizeof(k->at_base), false) < 0)
		return -EIO;
	k->at_period = 4e-3 + 1.5e-3 * k->P + (double)bytes * k->P / 50e6 +
		       (v == G_UNCACHED || v == G_SIMPLE || v == G_REREC ?
			3e-3 * k->P : 0) + 3 * work_us * 1e-6;
	memset(k->rb, 0, bytes * k->P);
	t[0] = 0;
	if (k->g == NULL) {
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
rank_group(struct grank *k)
{
	size_t n = (size_t)k->reps + 1;
	double *t = calloc(n, sizeof(double)), work;
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++) {
		size_t bytes = (size_t)gcfg.sizes[z];

		for (int v = 0; v < G_COUNT && rc == 0; v++) {
			k->g = NULL;
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
			spin_group_free(k->g);
			k->g = NULL;
		}
	}
	free(t);
	return rc;
}

static int
grank_main(struct grank *k)
{
	ptl_process_t map[MAXP], id;
	uint32_t ids[2];
	size_t cap = 64;
	int rc;

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
	for (unsigned z = 0; z < gcfg.nsizes; z++)
		if ((size_t)gcfg.sizes[z] > cap)
			cap = (size_t)gcfg.sizes[z];
	cap *= k->P;
	k->sb = spin_host_alloc(cap);
	k->rb = spin_host_alloc(cap);
	RCHECK(k, k->sb != NULL && k->rb != NULL, "spin_host_alloc %zu", cap);
	memset(k->sb, (int)k->r + 1, cap);
	rc = rank_group(k);
	if (rc == 0) {
		rc = spin_group_cache_release(k->comm);
		RCHECK(k, rc == 0, "cache release: %s", strerror(-rc));
		rc = spin_coll_comm_free(k->comm);
		RCHECK(k, rc == 0, "comm_free: %s", strerror(-rc));
	}
	spin_host_free(k->sb);
	spin_host_free(k->rb);
	PtlNIFini(k->ni);
	PtlFini();
	return rc;
}

/* ---- the parent (as bench_overlap.c) --------------------------------------------- */

struct gjob {
	unsigned P;
	pid_t kid[MAXP];
	int rfd[MAXP], wfd[MAXP];
};

static void
gjob_end(struct gjob *j)
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
gjob_start(struct gjob *j, const struct bench_spinnic *nic, unsigned P,
	   int reps)
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
			struct grank k = { .r = i, .P = P, .wfd = up[1],
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
			_exit(grank_main(&k) == 0 ? 0 : 1);
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

static int
gjob_gather_max(struct gjob *j, double *out, double *tmp, size_t n)
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
gjob_finish(struct gjob *j)
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
	gjob_end(j);
	return rc;
}

static int
gstart_nic(struct bench_spinnic *nic, unsigned P)
{
	char n[8], lc[48], roles[96];
	const char *extra[] = { "--virtual", n, "--nic-mem", "4M", "--mbufs",
				"4096", NULL, NULL, NULL, NULL, NULL };
	long k = gcfg.nic_lcores;

	snprintf(n, sizeof(n), "%u", P);
	if (k > 1) {
		snprintf(lc, sizeof(lc), "0-%ld", k - 1);
		snprintf(roles, sizeof(roles), "inbound=0-%ld,outbound=0-%ld",
			 k - 1, k - 1);
		extra[6] = "--lcores";
		extra[7] = lc;
		extra[8] = "--lcore-roles";
		extra[9] = roles;
	}
	return bench_spinnic_start(nic, gcfg.spinnic, extra);
}

static int
gsend_base(struct gjob *j, unsigned P, double ahead)
{
	double base = bench_now() + ahead;

	for (unsigned r = 0; r < P; r++)
		if (bench_io_all(j->wfd[r], &base, sizeof(base), true) < 0)
			return -EIO;
	return 0;
}

struct grow {
	double first, pure, total, nonov, overlap;
};

static double
gclamp01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
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
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct gjob j = { .P = 0 };
	int R = o->reps, rc = 0, ncpus = 0;
	size_t n = (size_t)R + 1, maxb = 64;
	double *m, *tmp;

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
		struct grow res[MAXSIZES][G_COUNT];
		char v[32];

		/* region memory per rank: the two buffers and schedules' */
		snprintf(v, sizeof(v), "%zuM", 2 * maxb * P / (1 << 20) + 16);
		setenv("SPINNIC_REGION_SIZE", v, 1);
		rc = gstart_nic(&nic, P);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)gcfg.nic_lcores);
		rc = gjob_start(&j, &nic, P, R);
		for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++)
			for (int g = 0; g < G_COUNT && rc == 0; g++) {
				struct grow *w = &res[z][g];

				rc = gsend_base(&j, P, 20e-3 + 5e-3 * P);
				if (rc == 0)
					rc = gjob_gather_max(&j, m, tmp, n);
				if (rc < 0)
					break;
				w->first = m[0];
				w->pure = bench_median(m + 1, R);
				for (unsigned r = 0; r < P && rc == 0; r++)
					rc = bench_io_all(j.wfd[r], &w->pure,
							  sizeof(w->pure),
							  true);
				if (rc == 0)
					rc = gsend_base(&j, P,
							10e-3 + 1e-3 * P);
				if (rc == 0)
					rc = gjob_gather_max(&j, m, tmp, n);
				if (rc < 0)
					break;
				w->total = bench_median(m + 1, R);
				w->nonov = w->total - w->pure;
				w->overlap = gclamp01(1 - w->nonov / w->pure);
			}
		if (rc == 0)
			rc = gjob_finish(&j);
		else
			gjob_end(&j);
		bench_spinnic_stop(&nic, gcfg.spinnic_log);
		for (unsigned z = 0; z < gcfg.nsizes && rc == 0; z++)
			for (int g = 0; g < G_COUNT; g++) {
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
		       "against host's and simple's in the same run\n",
		       gcfg.nic_lcores, ncpus, gcfg.busy == BUSY_ALL ?
		       "every rank" : "one rank (--busy-rank)", R,
		       gcfg.warmup);
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
