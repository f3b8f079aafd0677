/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The receive strategies of DESIGN §7 as a library for the subcommands that
 * measure typed receives (apps, scaling, ckpt): a case (one committed type,
 * its message, window and reference), the streaming-copy limit of its bytes,
 * and one row per strategy: host-ddt / host-mpi (contiguous receive, then
 * ddt_unpack / MPI_Unpack on the host), a handler family on the preloaded
 * NIC (bench_nic.h), timed from the first packet to the last byte placed,
 * or the layout's copy floor (bench_floor.h).
 *
 * The same plumbing as bench_unpack.c, which could later be rebuilt on it.
 */
#ifndef SPINNIC_BENCH_STRAT_H
#define SPINNIC_BENCH_STRAT_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "bench_nic.h"

struct ddt_type;

enum bench_strat {
	BS_HOST_DDT, BS_HOST_MPI, BS_SPECIALIZED, BS_HPU_LOCAL, BS_RO_CP,
	BS_RW_CP, BS_IOVEC, BS_FLOOR, BS_COUNT,
};

/** Mask of every strategy. */
#define BS_ALL ((1u << BS_COUNT) - 1)
/** Mask of the strategies that run on the NIC. */
#define BS_NIC_MASK (BS_ALL & ~((1u << BS_HOST_DDT) | (1u << BS_HOST_MPI) | \
				(1u << BS_FLOOR)))

/** DESIGN §9 name ("host-ddt", "rw-cp", ...). */
const char *bench_strat_name(enum bench_strat s);

/**
 * Parse a comma list of strategy names into a mask.
 * @param opt the option's name, for the message
 * @return 0; -EINVAL after one line on stderr
 */
int bench_strat_parse(const char *opt, const char *list, unsigned *mask_p);

/** The NIC's shape and the checkpoint interval. */
struct bench_strat_cfg {
	uint32_t payload;   /**< bytes per packet */
	unsigned hpus;      /**< HPUs of the NIC the case runs on */
	int64_t interval;   /**< Δr of ro-cp and rw-cp, 0: paper 000's model */
	int wire;           /**< --mode wire: packets through an ethdev pair
				 (bench_wire.h); 0: preloaded (bench_nic.h) */
	int prog;           /**< ddt_general arguments carry the compiled
				 form (SPIN_DDT_F_PROG); --prog 0: segments */
};

/** Defaults: 2048 B packets, 1 HPU, the model's Δr, compiled form. */
#define BENCH_STRAT_CFG_DEFAULT { 2048, 1, 0, 0, 1 }

/** Help of --mode. */
#define BENCH_STRAT_MODE_HELP						\
	"preloaded (default): packets built into mbufs beforehand, fed "	\
	"to the runtime; wire: a generator sends spinnic frames through "	\
	"a net_ring ethdev pair in this process, the NIC receives, "	\
	"parses and dispatches them (no physical link)"

/** Option table entries for --payload, --hpus, --interval, --prog,
 * --strategies (the last one's help names the default) and --mode. */
#define BENCH_STRAT_OPTS(strategies_default)				\
	{ "mode", 1, BENCH_STRAT_MODE_HELP },				\
	{ "payload", 1, "payload bytes per packet (default 2048)" },	\
	{ "hpus", 1, "HPUs: 1 runs on the main thread, more on their "	\
		     "own threads (default 1)" },			\
	{ "interval", 1, "checkpoint interval of ro-cp and rw-cp in "	\
			 "bytes (default: paper 000's model)" },	\
	{ "prog", 1, "1 (default): ddt_general arguments carry the "	\
		     "type's compiled form, handlers resume in it; 0: "	\
		     "segments and checkpoints only" },		\
	{ "strategies", 1, "comma list of host-ddt,host-mpi,specialized,"	\
			   "hpu-local,ro-cp,rw-cp,iovec,floor (default "	\
			   strategies_default ")" }

/**
 * Parse one of the BENCH_STRAT_OPTS options (and --mode).
 * @return 0 taken; 1 not one of them; -EINVAL after one line on stderr
 */
int bench_strat_opt(struct bench_strat_cfg *cfg, unsigned *mask_p,
		    const char *name, const char *arg);

/** One message of one type and the buffers every strategy uses. */
struct bench_case {
	char label[64];
	int64_t block_bytes;  /**< mean contiguous block */
	struct ddt_type *t;   /**< committed, owned */
	int64_t count;
	int64_t msg;          /**< packed bytes */
	int64_t lo, span;     /**< window = [origin + lo, origin + lo + span) */
	char *packed;         /**< the message (random bytes) */
	char *contig;         /**< host strategies: contiguous receive buffer */
	char *win;            /**< the host buffer every strategy writes */
	char *ref;            /**< ddt_unpack of packed into a 0xa5 span */
	void *mtype;          /**< MPI_Datatype * or NULL */
	double limit_gbit_s;  /**< streaming copy of msg bytes, this run */
};

/**
 * A case over @p t (a reference is taken; the caller keeps its own) and
 * @p count elements: buffers, random message, reference, the MPI type when
 * @p want_mpi (and the build has MPI).
 * @return 0; a negative errno (logged); bench_case_free() either way
 */
int bench_case_init(struct bench_case *c, const char *label,
		    struct ddt_type *t, int64_t count, int want_mpi,
		    uint64_t *rng);
void bench_case_free(struct bench_case *c);

/** Measure c->limit_gbit_s: best of o->reps streaming copies of c->msg
 * bytes (cold when o->cold). @return 0, -ENOMEM */
int bench_case_limit(struct bench_case *c, const struct bench_opts *o);

/**
 * Δr for ro-cp and rw-cp: cfg->interval, else paper 000's model
 * (ddt_ckpt_select_interval, ε = 0.2, 16 MiB of NIC memory for
 * checkpoints) with packets at the case's copy limit and handlers that
 * keep up with them.
 * @return Δr > 0, or the model's negative errno
 */
int64_t bench_strat_model_interval(const struct bench_strat_cfg *cfg,
				   const struct bench_case *c,
				   size_t ckpt_size);

/** The outcome of one strategy on one case. */
struct bench_strat_row {
	int avail;          /**< 1 ran; 0 n/a (why); -1 not asked */
	char why[96];
	double best;        /**< seconds, best of the timed runs */
	int64_t interval;   /**< checkpoint interval Δr, 0: none */
	int64_t nic_bytes;  /**< argument block installed in NIC memory */
	double setup_s;     /**< host time to build that block */
	int verified;       /**< 1 ok, 0 mismatch, -1 not checked */
};

/**
 * Run strategy @p s on case @p c (loaded into @p n with bench_nic_load()
 * by the caller; n has cfg->hpus HPUs): one untimed warm-up (or every run
 * cold), best of o->reps, then with o->verify one run into a fresh window
 * compared with the reference.
 * A NIC strategy whose family handlers/ lacks or that cannot express the
 * type is a row with avail 0 and the reason, never another path.
 * @return 0; a negative errno on failure (logged)
 */
int bench_strat_run(const struct bench_opts *o,
		    const struct bench_strat_cfg *cfg, enum bench_strat s,
		    struct bench_case *c, struct bench_nic *n,
		    struct bench_strat_row *row);

/**
 * Build the argument block of ro-cp or rw-cp for the case at interval
 * @p interval without installing it (the host's checkpoint creation).
 * @param len_p receives its bytes
 * @return seconds it took; < 0 a negative errno (logged)
 */
double bench_strat_ckpt_build(enum bench_strat s,
			      const struct bench_strat_cfg *cfg,
			      const struct bench_case *c, int64_t interval,
			      int64_t *len_p);

/**
 * The EAL, MPI when @p mask asks for host-mpi, and a NIC of cfg's shape
 * (none when @p cfg is NULL: the caller makes its own).
 * @return 0; a negative errno (logged; everything released)
 */
int bench_strat_env_init(unsigned mask, const struct bench_strat_cfg *cfg,
			 struct bench_nic **n_p);
/** Destroy @p n (NULL accepted) and the wire NIC of --mode wire, and
 * release the EAL; after
 * bench_strat_env_init() succeeded. */
void bench_strat_env_fini(struct bench_nic *n);

#endif
