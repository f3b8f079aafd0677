/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench ring (issue #19; paper 003 Listing 5 and Fig. 17, HPL's
 * 1-ring broadcast with look-ahead; ../shared/papers/notes/
 * notes-002_003.md §5.6 row `ring`, target T12): a panel of --sizes bytes
 * broadcast from rank 0 every step, then compute, P (--ranks) ranks, one
 * per node of `spinnic --virtual P`. Variants, each a group recorded once
 * per (P, bytes) on the panel buffer and called once per step:
 *   group       the ring (P003 Listing 5): rank 0 sends right; every
 *               other rank receives from the left, a local barrier, then
 *               sends right (the last one does not send); offloaded and
 *               cached: the NIC receives and forwards, the host computes
 *               without polling
 *   host-1ring  the same ring with SPIN_GROUP_HOST: the host receives and
 *               forwards, but only inside spin_group_test() at polls every
 *               --poll-us of compute (HPL's look-ahead: the compute is cut
 *               into chunks of at most --poll-us and the rank tests the
 *               group between chunks until it is done; the sleeping ranks
 *               sleep the same chunks and test likewise), then
 *               spin_group_wait() after the compute
 *   host-bcast  a binomial tree from rank 0 (receive from the parent, a
 *               local barrier, send to the children, the farthest first)
 *               with SPIN_GROUP_HOST, progressed at the same polls
 * Messages are lib/coll's (eager up to SPINNIC_COLL_EAGER, else the
 * pre-matched rendezvous: for a host-progressed group every RTR, data put
 * and completion is issued or seen only inside call, test and wait).
 * t_pure: call..wait without compute (the host variants progress
 * continuously in wait); t_work, the compute per step, is one for all:
 * t_pure(host-1ring), the pure ring time; t_total: call, compute (with
 * polls for the host variants), wait; overlap as `overlap`; ratios:
 * t_total over host-1ring's and host-bcast's. The rank and job protocol of
 * `overlap` (bench_job.h). Every rank's panel is checked byte for byte at
 * every phase's last step (rank 0 stamps that step's panel).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
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

#define MAXSIZES 6
#define RCHECK BENCH_RCHECK

/* the variants (a new one: an index before R_COUNT and its row in each
 * table) */
enum { R_GROUP, R_HOST1, R_HOSTB, R_COUNT };
static const char *const rvar_names[R_COUNT] = {
	"group", "host-1ring", "host-bcast",
};
static const unsigned rvar_flags[R_COUNT] = {
	0, SPIN_GROUP_HOST, SPIN_GROUP_HOST,
};
static const bool rvar_binomial[R_COUNT] = { false, false, true };
/* the host tests the group between chunks of compute */
static const bool rvar_polls[R_COUNT] = { false, true, true };

static long rpoll_us = 100; /* --poll-us */
static struct bench_job_cfg rcfg = {
	.busy = 1, .ranks = { 4, 8 }, .nranks = 2,
	.sizes = { 65536, 524288, 4194304 }, .nsizes = 3,
	.max_sizes = MAXSIZES, .size_min = 1, .size_max = 1 << 24,
	.warmup = 2, .nic_lcores = 1,
};

static const struct bench_cmd_opt ring_opts[] = {
	{ "ranks", 1, "comma-separated P (2..16; default 4,8)" },
	{ "sizes", 1, "comma-separated panel bytes (1..16777216; default "
		      "65536,524288,4194304)" },
	{ "poll-us", 1, "the host variants test the group every this many "
			"µs of compute (1..1000000; default 100)" },
	{ "busy-rank", 1, "the rank that computes with a busy loop "
			  "(default 1), or 'all'" },
	{ "warmup", 1, "untimed steps before each phase (default 2; the "
		       "group's first call is one more)" },
	{ "nic-lcores", 1, "spinnic's lcores K (default 1), as overlap" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
ring_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt poll[] = {
		{ "poll-us", &rpoll_us, 1, 1000000 },
	};
	int rc;

	if (strcmp(name, "poll-us") == 0)
		return bench_opt_num(name, arg, poll, 1);
	rc = bench_job_opt(&rcfg, name, arg);
	return rc == -ENOENT ? -EINVAL : rc;
}

/* ---- a rank (a process: its state in file-scope variables) -------------- */

static struct {
	spin_group_t *g[R_COUNT];
	long phases;             /* phases run: the stamps alternate */
} st;

/* byte @p e of the panel rank 0 sends with stamp @p s */
static uint8_t
panel_byte(size_t e, unsigned s)
{
	return (uint8_t)((e * 131u + (e >> 9)) ^ (s * 0x5bu));
}

static int
record(struct bench_rank *k, int v, size_t bytes, spin_group_t **g_p)
{
	unsigned r = k->r, P = k->P, mask = 1, parent = ~0u;
	uint8_t *panel = k->a;
	spin_group_t *g = NULL;
	int rc = spin_group_start_flags(k->comm, rvar_flags[v], &g);

	if (rc == 0 && !rvar_binomial[v]) {
		/* P003 Listing 5 */
		if (r > 0)
			rc = spin_group_recv(g, panel, bytes, r - 1, 0);
		if (rc == 0 && r > 0 && r + 1 < P)
			rc = spin_group_local_barrier(g);
		if (rc == 0 && r + 1 < P)
			rc = spin_group_send(g, panel, bytes, r + 1, 0);
	} else if (rc == 0) {
		/* binomial from 0: the parent is r without its lowest set
		 * bit; the children r + 2^j below it, the farthest first */
		while (mask < P) {
			if (r & mask) {
				parent = r - mask;
				break;
			}
			mask <<= 1;
		}
		mask >>= 1;
		if (parent != ~0u)
			rc = spin_group_recv(g, panel, bytes, parent, 0);
		if (rc == 0 && parent != ~0u && mask > 0 && r + 1 < P)
			rc = spin_group_local_barrier(g);
		for (; mask > 0 && rc == 0; mask >>= 1)
			if (r + mask < P)
				rc = spin_group_send(g, panel, bytes,
						     r + mask, 0);
	}
	if (rc == 0)
		rc = spin_group_end(g);
	if (rc != 0)
		spin_group_free(g);
	else
		*g_p = g;
	return rc;
}

/* @p work_us of compute in chunks of at most --poll-us, the group tested
 * between chunks until done */
static int
compute_polling(struct bench_rank *k, spin_group_t *g, double work_us)
{
	long chunks = (long)ceil(work_us / (double)rpoll_us);
	double chunk = work_us / (double)(chunks > 0 ? chunks : 1);
	bool done = false;
	int rc = 0;

	for (long c = 0; c < chunks && rc == 0; c++) {
		bench_rank_compute(k, rcfg.busy, chunk);
		if (!done)
			rc = spin_group_test(g, &done);
	}
	return rc;
}

/* one step at the agreed instant @p it: @return µs, or < 0 */
static double
riteration(struct bench_rank *k, int v, double work_us, long it)
{
	spin_group_t *g = st.g[v];
	double t0;
	int rc;

	bench_rank_at(k, it);
	t0 = bench_now();
	rc = spin_group_call(g);
	if (rc == 0 && work_us > 0) {
		if (rvar_polls[v])
			rc = compute_polling(k, g, work_us);
		else
			bench_rank_compute(k, rcfg.busy, work_us);
	}
	if (rc == 0)
		rc = spin_group_wait(g);
	return rc != 0 ? rc : (bench_now() - t0) * 1e6;
}

/* every byte of the panel (SPINNIC_BENCH_CORRUPT in the environment: the
 * last rank flips a bit of its panel first, to see the check fail) */
static int
check(struct bench_rank *k, int v, size_t bytes, unsigned stamp)
{
	if (getenv("SPINNIC_BENCH_CORRUPT") != NULL && k->r == k->P - 1)
		k->a[bytes - 1] ^= 1;
	for (size_t e = 0; e < bytes; e++)
		RCHECK(k, k->a[e] == panel_byte(e, stamp),
		       "ring %s %zu B: panel byte %zu is 0x%02x, not 0x%02x",
		       rvar_names[v], bytes, e, k->a[e],
		       panel_byte(e, stamp));
	return 0;
}

static void
stamp_panel(struct bench_rank *k, size_t bytes, unsigned stamp)
{
	if (k->r != 0)
		return;
	for (size_t e = 0; e < bytes; e++)
		k->a[e] = panel_byte(e, stamp);
}

/* t[0..reps-1]; the first call of a new group is one untimed more */
static int
rphase(struct bench_rank *k, int v, size_t bytes, double work_us, bool first,
       double *t)
{
	unsigned stamp = 1 + (unsigned)(st.phases++ % 2);
	long calls = (first ? 1 : 0) + rcfg.warmup + k->reps;

	if (bench_rank_phase(k, 4e-3 + 1.5e-3 * k->P +
			     (double)bytes * k->P / 100e6 +
			     (first ? 3e-3 * k->P : 0) +
			     3 * work_us * 1e-6) < 0)
		return -EIO;
	stamp_panel(k, bytes, 0);
	for (long i = 0; i < calls; i++) {
		double us;

		/* the last step's panel carries this phase's stamp */
		if (i == calls - 1)
			stamp_panel(k, bytes, stamp);
		us = riteration(k, v, work_us, i);
		RCHECK(k, us >= 0, "ring %s %zu B: %s", rvar_names[v], bytes,
		       strerror((int)-us));
		if (i >= calls - k->reps)
			t[i - (calls - k->reps)] = us;
	}
	return check(k, v, bytes, stamp);
}

static int
rank_ring(struct bench_rank *k)
{
	double *t = calloc((size_t)k->reps, sizeof(double)), work;
	size_t tb = (size_t)k->reps * sizeof(double);
	int rc = 0;

	if (t == NULL)
		return -ENOMEM;
	for (unsigned z = 0; z < rcfg.nsizes && rc == 0; z++) {
		size_t bytes = (size_t)rcfg.sizes[z];

		for (int v = 0; v < R_COUNT && rc == 0; v++) {
			rc = record(k, v, bytes, &st.g[v]);
			RCHECK(k, rc == 0, "record %s: %s", rvar_names[v],
			       strerror(-rc));
			rc = rphase(k, v, bytes, 0, true, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, tb, true);
		}
		if (rc == 0)
			rc = bench_io_all(k->rfd, &work, sizeof(work), false);
		for (int v = 0; v < R_COUNT && rc == 0; v++) {
			rc = rphase(k, v, bytes, work, false, t);
			if (rc == 0)
				rc = bench_io_all(k->wfd, t, tb, true);
		}
		for (int v = 0; v < R_COUNT; v++) {
			spin_group_free(st.g[v]);
			st.g[v] = NULL;
		}
	}
	free(t);
	return rc;
}

static int
rrank_main(struct bench_rank *k, void *arg)
{
	int rc;

	(void)arg;
	k->cap = 64;
	for (unsigned z = 0; z < rcfg.nsizes; z++)
		if ((size_t)rcfg.sizes[z] > k->cap)
			k->cap = (size_t)rcfg.sizes[z];
	k->a = spin_host_alloc(k->cap);
	RCHECK(k, k->a != NULL, "spin_host_alloc %zu", k->cap);
	memset(k->a, 0, k->cap);
	rc = rank_ring(k);
	if (rc == 0) {
		rc = spin_group_cache_release(k->comm);
		RCHECK(k, rc == 0, "cache release: %s", strerror(-rc));
	}
	spin_host_free(k->a);
	return rc;
}

/* ---- the parent ---------------------------------------------------- */

static int
ring_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "ranks", BENCH_COL_INT, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "poll_us", BENCH_COL_INT, 0 },
		{ "t_pure_us", BENCH_COL_NUM, 2 },
		{ "t_work_us", BENCH_COL_NUM, 2 },
		{ "t_total_us", BENCH_COL_NUM, 2 },
		{ "t_nonov_us", BENCH_COL_NUM, 2 },
		{ "overlap", BENCH_COL_NUM, 3 },
		{ "ratio_total_1ring", BENCH_COL_NUM, 3 },
		{ "ratio_total_bcast", BENCH_COL_NUM, 3 },
	};
	struct bench_table *tab;
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_job j = { .P = 0 };
	int R = o->reps, rc = 0, ncpus = 0;
	size_t maxb = 64;
	double *m, *tmp;

	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	m = calloc((size_t)R, sizeof(double));
	tmp = calloc((size_t)R, sizeof(double));
	if (tab == NULL || m == NULL || tmp == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned z = 0; z < rcfg.nsizes; z++)
		if ((size_t)rcfg.sizes[z] > maxb)
			maxb = (size_t)rcfg.sizes[z];
	bench_spinnic_signals();
	for (unsigned pi = 0; pi < rcfg.nranks && rc == 0; pi++) {
		unsigned P = (unsigned)rcfg.ranks[pi];
		struct bench_job_times res[MAXSIZES][R_COUNT];

		bench_job_region_env(maxb);
		rc = bench_job_nic_start(&nic, P, rcfg.nic_lcores,
					 rcfg.spinnic);
		if (rc < 0)
			break;
		ncpus = bench_clients_off_lcores((int)rcfg.nic_lcores);
		rc = bench_job_start(&j, &nic, P, R, rrank_main, NULL);
		/* the first call compiles (collective): longer periods */
		for (unsigned z = 0; z < rcfg.nsizes && rc == 0; z++)
			rc = bench_job_common_work(&j, R, R_COUNT, R_HOST1,
						   20e-3 + 5e-3 * P,
						   10e-3 + 1e-3 * P, false, m,
						   tmp, res[z]);
		if (rc == 0)
			rc = bench_job_finish(&j);
		else
			bench_job_end(&j);
		bench_spinnic_stop(&nic, rcfg.spinnic_log);
		for (unsigned z = 0; z < rcfg.nsizes && rc == 0; z++)
			for (int v = 0; v < R_COUNT; v++) {
				const struct bench_job_times *w = &res[z][v];

				if (bench_table_row(tab) < 0) {
					rc = -ENOMEM;
					break;
				}
				bench_table_set_int(tab, "ranks", P);
				bench_table_set_int(tab, "bytes",
						    rcfg.sizes[z]);
				bench_table_set_str(tab, "variant",
						    rvar_names[v]);
				if (rvar_polls[v])
					bench_table_set_int(tab, "poll_us",
							    rpoll_us);
				bench_table_set_num(tab, "t_pure_us", w->pure);
				bench_table_set_num(tab, "t_work_us",
						    res[z][R_HOST1].pure);
				bench_table_set_num(tab, "t_total_us",
						    w->total);
				bench_table_set_num(tab, "t_nonov_us",
						    w->nonov);
				bench_table_set_num(tab, "overlap",
						    w->overlap);
				if (v != R_HOST1)
					bench_table_set_num(tab,
						"ratio_total_1ring", w->total /
						res[z][R_HOST1].total);
				if (v != R_HOSTB)
					bench_table_set_num(tab,
						"ratio_total_bcast", w->total /
						res[z][R_HOSTB].total);
			}
	}
	if (rc == 0) {
		rc = bench_table_emit(tab, o);
		printf("# ring (paper 003 Listing 5, Fig. 17; notes-002_003 "
		       "§5.6): a panel (bytes) broadcast from rank 0 per "
		       "step, then compute; group: the ring with local "
		       "barriers offloaded (cached, called per step, compute "
		       "without polls); host-1ring: the same ring "
		       "host-progressed, tested every %ld µs of compute; "
		       "host-bcast: a binomial tree host-progressed at the "
		       "same polls; one rank per node of spinnic --virtual P "
		       "--idle-sleep-us 0 (%ld lcore(s)), ranks on %d CPU(s) "
		       "off it; %s computes (calibrated loop), the others "
		       "sleep (in chunks, testing, for the host variants) "
		       "without other library calls; times: max over ranks "
		       "per step, median of %d (%ld untimed first, and the "
		       "group's first call); t_work = t_pure(host-1ring) for "
		       "all; ratios: t_total against host-1ring's and "
		       "host-bcast's in the same run; every rank's panel "
		       "checked byte for byte at every phase's last step\n",
		       rpoll_us, rcfg.nic_lcores, ncpus,
		       rcfg.busy == BENCH_BUSY_ALL ? "every rank" :
		       "one rank (--busy-rank)", R, rcfg.warmup);
	}
out:
	bench_table_free(tab);
	free(m);
	free(tmp);
	return rc;
}

const struct bench_cmd bench_ring_cmd = {
	.name = "ring",
	.summary = "HPL 1-ring panel broadcast (paper 003 Listing 5, Fig. "
		   "17): a ring with local barriers offloaded as a group, "
		   "against the ring and a binomial tree host-progressed at "
		   "polls between chunks of compute",
	.opts = ring_opts,
	.opt = ring_opt,
	.run = ring_run,
};
