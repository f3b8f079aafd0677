/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rank and job protocol of the lib/coll benches (overlap, setup,
 * group, stencil, ring; notes-002_003 §5.6): a real `spinnic --virtual P
 * --idle-sleep-us 0`, one forked rank per virtual node talking to the
 * parent through two pipes, iterations that start at instants the parent
 * agreed in advance (not at a barrier's exit), a calibrated compute loop
 * for the busy rank(s) while the others sleep without library calls,
 * times gathered as the max over ranks, and the MPICH helper
 * (spinnic-bench-mpi under mpiexec) where it was built.
 */
#ifndef SPINNIC_BENCH_JOB_H
#define SPINNIC_BENCH_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <portals4.h>
#include <spin_coll.h>

#include "bench.h"

/** Ranks at most (spinnic --virtual's limit as the benches use it). */
#define BENCH_JOB_MAXP 16
/** The portal table index of the ranks' communicator. */
#define BENCH_JOB_COLL_PT 7
/** --busy-rank all: every rank computes. */
#define BENCH_BUSY_ALL (-1L)

/** A rank: the forked client of one virtual node. A rank is a process
 *  of its own: a bench may keep more per-rank state in file-scope
 *  variables. */
struct bench_rank {
	unsigned r, P;
	int wfd, rfd;              /**< to and from the parent */
	int reps;                  /**< timed iterations per phase */
	ptl_handle_ni_t ni;
	spin_coll_comm_t *comm;
	double loops_per_us;       /**< work_loops() per µs (calibrated) */
	double at_base, at_period; /**< this phase's agreed instants */
	uint8_t *a, *b;            /**< the bench's buffers (its own) */
	size_t cap;                /**< their bytes */
};

/**
 * A rank's body, run in the forked child once the NI and the
 * communicator exist (bench_job_start()); it frees what it made.
 * @return 0, or a negative errno (said on stderr)
 */
typedef int (*bench_rank_fn)(struct bench_rank *k, void *arg);

/** Print "spinnic-bench: rank R: ..." and return -EIO from the caller
 *  when @p cond is false. */
#define BENCH_RCHECK(k, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "spinnic-bench: rank %u: ", (k)->r); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		return -EIO; \
	} \
} while (0)

/**
 * Read the next phase's first instant from the parent and set the
 * period: iteration i of the phase starts at base + i * @p period_s.
 * @return 0, -EIO (the parent is gone)
 */
int bench_rank_phase(struct bench_rank *k, double period_s);

/** Sleep until the instant of iteration @p it of the phase (at once when
 *  it is past). */
void bench_rank_at(const struct bench_rank *k, long it);

/**
 * @p us µs of compute: the calibrated loop when this rank is @p busy
 * (BENCH_BUSY_ALL: every rank), else a sleep without library calls.
 */
void bench_rank_compute(const struct bench_rank *k, long busy, double us);

/** Whether rank @p k computes with the busy loop under @p busy. */
bool bench_rank_is_busy(const struct bench_rank *k, long busy);

/** The parent's side: P forked ranks and their pipes. */
struct bench_job {
	unsigned P;
	pid_t kid[BENCH_JOB_MAXP];
	int rfd[BENCH_JOB_MAXP], wfd[BENCH_JOB_MAXP]; /**< from / to a rank */
};

/**
 * Fork @p P ranks, rank i a client of @p nic's node i: each calibrates
 * the compute loop, opens a logical matching NI, sends its id, receives
 * the map, creates the communicator on BENCH_JOB_COLL_PT and runs
 * @p fn; then (when @p fn returned 0) frees the communicator (a host
 * barrier) and closes the NI. The parent collects the ids and sends every
 * rank the map.
 * @return 0; -EIO (a rank did not start: said); call bench_job_end() on
 *   failure, bench_job_finish() after success
 */
int bench_job_start(struct bench_job *j, const struct bench_spinnic *nic,
		    unsigned P, int reps, bench_rank_fn fn, void *arg);

/** Kill and reap the ranks still running, close the pipes. */
void bench_job_end(struct bench_job *j);

/**
 * Read @p n doubles from every rank: @p out[i] = the max over ranks of
 * element i (@p tmp: scratch of @p n).
 * @return 0, -EIO (a rank stopped: said)
 */
int bench_job_gather_max(struct bench_job *j, double *out, double *tmp,
			 size_t n);

/** Write @p len bytes at @p buf to every rank. @return 0, -EIO */
int bench_job_send_all(struct bench_job *j, const void *buf, size_t len);

/** The next phase's first instant, @p ahead s from now, to every rank.
 *  @return 0, -EIO */
int bench_job_send_base(struct bench_job *j, double ahead);

/**
 * Wait for every rank to exit, then bench_job_end().
 * @return 0; -EIO (a rank failed: said)
 */
int bench_job_finish(struct bench_job *j);

/**
 * Start `spinnic --virtual P --nic-mem 4M --mbufs 4096` (lib/coll runs no
 * handler: little NIC memory and smaller pools, so 16 nodes fit beside
 * other spinnics' hugepages), with @p nic_lcores > 1: node i's inbound and
 * outbound on lcore i mod K (--lcores, --lcore-roles).
 * @param bin spinnic binary, NULL: beside spinnic-bench.
 * @return as bench_spinnic_start()
 */
int bench_job_nic_start(struct bench_spinnic *nic, unsigned P,
			long nic_lcores, const char *bin);

/** SPINNIC_REGION_SIZE for the ranks: @p need bytes and 16 MiB more (the
 *  schedules'). */
void bench_job_region_env(size_t need);

/** Variants bench_job_common_work() takes at most. */
#define BENCH_JOB_MAXVAR 8

/** One variant's times at one size (µs; overlap 0..1). */
struct bench_job_times {
	double pure, total, nonov, overlap;
	/** with its own t_pure as t_work (OMB's overlap; @p own phases) */
	double total_own, overlap_own;
};

/**
 * One size of a bench whose variants compute for one common time
 * (stencil, ring): per variant a pure phase (the first may compile: the
 * phases' periods are @p pure_period_s), then every rank is told t_work
 * = the pure time of variant @p ref, then per variant a phase computing
 * t_work (periods @p total_period_s). Times: max over ranks per
 * iteration, medians of the @p R reps, into @p out[0..nvar-1]
 * (nonov = total - t_work, overlap = 1 - nonov / pure, clamped). With
 * @p own, then every rank is told the nvar pure times and each variant
 * runs one more phase computing its own (total_own, overlap_own = 1 -
 * (total_own - pure) / pure: the OSU benchmarks' overlap).
 * @param m, tmp @p R doubles each (scratch)
 * @return 0, -EIO
 */
int bench_job_common_work(struct bench_job *j, int R, int nvar, int ref,
			  double pure_period_s, double total_period_s,
			  bool own, double *m, double *tmp,
			  struct bench_job_times *out);

/** --ranks and --sizes values a job bench takes at most. */
#define BENCH_JOB_MAXRANKS 4
#define BENCH_JOB_MAXSIZES 8

/** The options the job benches share (overlap, group, stencil, ring). */
struct bench_job_cfg {
	long busy;          /**< --busy-rank R, or BENCH_BUSY_ALL ('all') */
	long ranks[BENCH_JOB_MAXRANKS];
	unsigned nranks;    /**< --ranks: P, 2..BENCH_JOB_MAXP each */
	long sizes[BENCH_JOB_MAXSIZES];
	unsigned nsizes;    /**< --sizes */
	unsigned max_sizes; /**< --sizes values at most (the bench's) */
	long size_min, size_max; /**< --sizes bounds (the bench's) */
	long warmup;        /**< --warmup: untimed iterations, 0..1000 */
	long nic_lcores;    /**< --nic-lcores K, 1..BENCH_JOB_MAXP */
	const char *spinnic, *spinnic_log, *mpich; /**< --spinnic ... */
};

/**
 * Take option @p name of a job bench when it is one of the shared ones
 * (busy-rank, ranks, sizes, warmup, nic-lcores, spinnic, spinnic-log,
 * mpich; the bench's option table says which it offers).
 * @return 0, -EINVAL (a bad value: said), -ENOENT (not a shared one)
 */
int bench_job_opt(struct bench_job_cfg *c, const char *name,
		  const char *arg);

/**
 * Parse "--@p what @p arg": up to @p max comma-separated integers in
 * @p lo..@p hi into @p out, their count in @p n_p.
 * @return 0, -EINVAL (said)
 */
int bench_parse_list(const char *what, const char *arg, long *out,
		     unsigned max, unsigned *n_p, long lo, long hi);

/** @p x clamped to [0, 1]. */
double bench_clamp01(double x);

/**
 * The MPICH helper (spinnic-bench-mpi beside this binary, or @p opt),
 * run through mpiexec.
 * @param opt the --mpich option (NULL: default; "none": skipped).
 * @param why_p receives why it is skipped.
 * @return its path in @p buf, or NULL (skipped)
 */
const char *bench_mpich_path(const char *opt, char *buf, size_t len,
			     const char **why_p);

/**
 * Run `timeout 300 mpiexec -n P HELPER ARGS` (with
 * MPIR_CVAR_POLLS_BEFORE_YIELD=1 unless set) and read its line
 * "mpich T_PURE_US T_TOTAL_US".
 * @return 0; -EIO (said)
 */
int bench_mpich_run(const char *helper, unsigned P, const char *args,
		    double *pure_p, double *total_p);

#endif
