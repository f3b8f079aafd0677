/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench internals: the subcommand table, common options, timing,
 * the streaming-copy limit and the result table (stdout + CSV).
 *
 * Adding a subcommand: write bench_<name>.c exporting a `struct bench_cmd`,
 * list it in bench_cmds[] (main.c) and in meson.build.
 */
#ifndef SPINNIC_BENCH_H
#define SPINNIC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/** Options every subcommand accepts. */
struct bench_opts {
	const char *csv;   /**< --csv F: also write the table as CSV */
	const char *type;  /**< --type EXPR: run this type only (or NULL) */
	int verify;        /**< --verify: check every byte placed */
	int cold;          /**< --cold: evict the buffers before every timed run */
	int reps;          /**< --reps N: timed repetitions (best of) */
	int64_t bytes;     /**< --bytes N: message (packed) bytes, 0: default */
	uint64_t seed;     /**< --seed N: random layouts */
};

/** A subcommand-specific option (long form only). */
struct bench_cmd_opt {
	const char *name;
	int has_arg;       /**< 0 or 1 */
	const char *help;
};

/** One subcommand; mandatory: name, summary, run (checked at start-up). */
struct bench_cmd {
	const char *name;
	const char *summary;
	/** NULL or an array ending with a NULL name; then opt is mandatory. */
	const struct bench_cmd_opt *opts;
	/** Receives one of opts (arg NULL when it has none).
	 * @return 0, or -EINVAL with a one-line message already printed */
	int (*opt)(const char *name, const char *arg);
	/** Run and print. @return 0; a negative errno on failure; 1 when
	 * --verify found a mismatch */
	int (*run)(const struct bench_opts *o);
};

extern const struct bench_cmd bench_ddt_cmd;
extern const struct bench_cmd bench_unpack_cmd;
extern const struct bench_cmd bench_latency_cmd;
extern const struct bench_cmd bench_apps_cmd;
extern const struct bench_cmd bench_scaling_cmd;
extern const struct bench_cmd bench_ckpt_cmd;
extern const struct bench_cmd bench_auth_cmd;
extern const struct bench_cmd bench_rate_cmd;
extern const struct bench_cmd bench_trig_cmd;
extern const struct bench_cmd bench_layout_cmd;
extern const struct bench_cmd bench_aa_cmd;
extern const struct bench_cmd bench_dht_cmd;
extern const struct bench_cmd bench_aa_count_cmd;
extern const struct bench_cmd bench_aa_getlog_cmd;
extern const struct bench_cmd bench_aa_ickpt_cmd;
extern const struct bench_cmd bench_aa_flush_cmd;
extern const struct bench_cmd bench_aa_iotlb_cmd;
extern const struct bench_cmd bench_overlap_cmd;
extern const struct bench_cmd bench_setup_cmd;
extern const struct bench_cmd bench_group_cmd;
extern const struct bench_cmd bench_staging_cmd;
extern const struct bench_cmd bench_stencil_cmd;
extern const struct bench_cmd bench_ring_cmd;
extern const struct bench_cmd bench_halo_cmd;

/* ---- a real spinnic (bench_latency.c; latency, auth) ---------------- */

/** A `spinnic --virtual 2 --idle-sleep-us 0` of the bench's own. */
struct bench_spinnic {
	pid_t pid;
	char dir[256];  /**< its sockets (node<i>.sock) and log, made here */
	char log[300];  /**< its stdout and stderr */
};

/**
 * Start one (and wait for its ready line); it dies with the bench.
 * @param bin   spinnic binary, NULL: <build>/app/spinnic/spinnic beside
 *              spinnic-bench
 * @param extra more spinnic options (NULL-terminated), or NULL
 * @return 0; a negative errno (the reason printed)
 */
int bench_spinnic_start(struct bench_spinnic *p, const char *bin,
			const char *const *extra);
/** Stop it (SIGTERM, then SIGKILL), keep its log in @p keep_log (NULL:
 *  not kept), remove its directory. */
void bench_spinnic_stop(struct bench_spinnic *p, const char *keep_log);

/** The file name of the Active Access handler plugin (aa_count, aa_dirty,
 *  aa_dht; examples/handlers/active_access). */
#define BENCH_AA_PLUGIN "libactive_access.so"

/**
 * Where a handler plugin is, for spinnic --handlers.
 * @param given the path the user gave (an option), or NULL: the build
 *   tree's, <build>/examples/handlers/@p name beside spinnic-bench's
 *   <build>/app, else the installed one (<libdir>/spinnic/handlers)
 * @param name the plugin's file name, e.g. BENCH_AA_PLUGIN
 * @param buf receives the path
 * @param len bytes of @p buf
 * @return 0; a negative errno (the reason printed: not found)
 */
int bench_plugin_path(const char *given, const char *name, char *buf,
		      size_t len);
/**
 * Two ranks over a bench_spinnic's two nodes, linked by pipes: this
 * process is rank 0 on node 0, a forked child rank 1 on node 1 (halo,
 * staging).
 */
struct bench_pair {
	pid_t child;    /**< rank 1 (in the parent), -1: none or reaped */
	int rd, wr;     /**< this rank's ends: from the other, to it */
};

/**
 * Fork rank 1. The child gets the default SIGINT/SIGTERM, dies with the
 * parent and talks to node 1 (SPINNIC_SOCKET); the parent to node 0.
 * Set what both ranks inherit before the call.
 * @return 1 in the child, 0 in the parent, a negative errno (printed)
 */
int bench_pair_fork(struct bench_pair *pp, const struct bench_spinnic *nic);
/**
 * Parent, after rank 0's run ended with @p rc: wait for rank 1 when
 * @p rc is 0 (and require its status 0), else kill it; close the pipes.
 * @return @p rc, or -EIO when rank 1 failed
 */
int bench_pair_end(struct bench_pair *pp, int rc);

/** SIGINT/SIGTERM kill the bench's spinnic (and client) first. */
void bench_spinnic_signals(void);
/** Keep this process off CPU 0, where spinnic's lcore busy-polls.
 *  @return CPUs it may use */
int bench_clients_off_lcore(void);
/** Keep this process off CPUs 0..@p k - 1 (spinnic's lcores when it runs
 *  with --lcores 0-(k-1)); all of them where nothing else is left.
 *  @return CPUs it may use */
int bench_clients_off_lcores(int k);
/** The @p pct percentile of @p n sorted values. */
double bench_percentile(const double *sorted, long n, double pct);

/**
 * The in-process NIC's payload handler timing (spin_rt_conf
 * handler_time_every): SPINNIC_BENCH_TIME_EVERY when set to a number of
 * 0 to 2^20, else BENCH_TIME_EVERY (the handler statistics are not read
 * here; 1 times every packet, as the runtime did before sampling).
 */
uint32_t bench_time_every(void);
/**
 * The in-process NIC's handler budget (spin_rt_conf handler_budget_ns):
 * SPINNIC_BENCH_BUDGET_NS when set (spinnic's default is 100000), else 0.
 */
uint64_t bench_budget_ns(void);
#define BENCH_TIME_EVERY 64u

/**
 * SPINNIC_BENCH_DDT_RECIP=0: compiled types resume by plain divisions
 * instead of the reciprocals in the form (lib/ddt ddt_prog_recip);
 * SPINNIC_BENCH_POOL_FIFO=1: the runtime's free lists of messages and
 * HERs are FIFO rings instead of stacks (lib/spin spin_pool_fifo); to
 * compare both in one binary.
 */
void bench_ddt_recip_env(void);

/** Print a one-line error "spinnic-bench: ..." on stderr. */
void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Read (@p wr false) or write (@p wr true) all @p len bytes of a pipe or
 * socket, again after EINTR. @return 0, -EIO (end of file or an error)
 */
int bench_io_all(int fd, void *buf, size_t len, bool wr);
/**
 * Run @p fn in a forked child (SIGKILLed when we die) that fills and sends
 * back @p n doubles of @p out through a pipe.
 * @return 0 or a negative errno (said, naming @p what)
 */
int bench_in_child(int (*fn)(double *out, void *arg), void *arg,
		   double *out, size_t n, const char *what);

/** A numeric option of a subcommand: --NAME N with MIN <= N <= MAX. */
struct bench_num_opt {
	const char *name;
	long *v;
	long min, max;
};

/**
 * Set option @p name from @p arg when @p t (of @p n) has it.
 * @return 0, -EINVAL (a bad value: said), -ENOENT (not one of @p t)
 */
int bench_opt_num(const char *name, const char *arg,
		  const struct bench_num_opt *t, size_t n);

/** Largest span (lowest to highest byte touched) of a --type message. */
#define BENCH_SPAN_MAX (256ll << 20)

struct ddt_type;
/**
 * A committed type from a --type expression, the element count that makes
 * about @p bytes of packed data (fewer when their span would pass
 * BENCH_SPAN_MAX), and the mean block size.
 * @return 0, or a negative errno after one line on stderr (*t_p is NULL)
 */
int bench_type_from_expr(const char *expr, int64_t bytes,
			 struct ddt_type **t_p, int64_t *count_p,
			 int64_t *block_bytes_p);

/** Bytes from the lowest to the highest byte @p count elements touch. */
int64_t bench_span_bytes(const struct ddt_type *t, int64_t count);

/* ---- timing ------------------------------------------------------------ */

/** CLOCK_MONOTONIC in seconds. */
double bench_now(void);
/** Gbit/s of bytes moved in seconds. */
double bench_gbit_s(int64_t bytes, double seconds);
/** Smallest of n times. */
double bench_best(const double *t, int n);
/** Median of n times (sorts t). */
double bench_median(double *t, int n);

/** Page-aligned buffer, every page written before it is returned (so no
 * first-touch fault is timed). @return NULL on failure (logged) */
void *bench_alloc(size_t len);
void bench_free(void *p);

/** Evict [p, p + len) from every cache level (clflush on x86; elsewhere
 * by writing a buffer larger than the last-level cache), so that the next
 * access comes from memory, as data just written there by a NIC would. */
void bench_cache_evict(const void *p, size_t len);

/** xorshift64* step; *state must not be 0. */
uint64_t bench_rand(uint64_t *state);

/* ---- the physical limit: streaming copy of the same bytes -------------- */

/** Two buffers of the same size for timing memcpy between them. */
struct bench_copy {
	void *src, *dst;
	size_t len;
	int cold;  /* --cold: the buffers are evicted before each variant */
};

/** @return 0, -ENOMEM */
int bench_copy_init(struct bench_copy *c, size_t len);
/** One timed copy of len bytes: the faster of one memcpy and memcpy in
 * 256 KiB pieces (glibc's non-temporal stores for large copies are slower
 * on cache-resident data); with c->cold both start from evicted buffers
 * (the caller evicts before the first). @return seconds */
double bench_copy_once(struct bench_copy *c);
void bench_copy_fini(struct bench_copy *c);
/** Best of reps timed copies of len bytes, as Gbit/s. @return < 0 on
 * allocation failure */
double bench_copy_limit(size_t len, int reps);
/** The same, with @p cold: both buffers evicted from the caches before
 *  every timed copy (--cold) */
double bench_copy_limit_cold(size_t len, int reps, int cold);

/* ---- result table ------------------------------------------------------ */

enum bench_col_kind { BENCH_COL_STR, BENCH_COL_INT, BENCH_COL_NUM };

struct bench_col {
	const char *name;
	enum bench_col_kind kind;
	int prec;          /**< BENCH_COL_NUM: digits after the point */
};

struct bench_table;

/** Columns are copied. @return NULL on ENOMEM */
struct bench_table *bench_table_create(const struct bench_col *cols,
				       int ncols);
/** Start a new row (cells unset until bench_table_set_*). @return 0, -ENOMEM */
int bench_table_row(struct bench_table *t);
/** Set a cell of the current row by column name (a name that is not a
 * column is a programming error and aborts). */
void bench_table_set_str(struct bench_table *t, const char *col,
			 const char *v);
void bench_table_set_int(struct bench_table *t, const char *col, int64_t v);
void bench_table_set_num(struct bench_table *t, const char *col, double v);
/** Aligned table with a header line; unset cells print as '-'. */
void bench_table_print(const struct bench_table *t, FILE *f);
/** CSV with a header row; unset cells are empty. @return 0, -errno */
int bench_table_write_csv(const struct bench_table *t, const char *path);
/**
 * Check, before a benchmark runs, that --csv @p path can be written: an
 * existing file is opened for writing (not truncated), a missing one is
 * created and removed again.
 * @param path the --csv argument
 * @return 0, or -errno after one line on stderr (-EISDIR: a directory;
 *   -ENOENT: a missing directory; -EACCES, -EROFS, -ENOTDIR, ...)
 */
int bench_csv_check(const char *path);
/** Print to stdout and, when o->csv, write the CSV. @return 0, -errno */
int bench_table_emit(const struct bench_table *t, const struct bench_opts *o);
void bench_table_free(struct bench_table *t);

/**
 * A subcommand's exit value: @p rc when negative, else 1 (with one line)
 * when --verify found a mismatch, else 0.
 */
int bench_run_status(int rc, int mismatch);

#endif
