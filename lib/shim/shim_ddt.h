/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives (spin.h, DESIGN §7): what the four shim_ddt_*.c files
 * share. shim_ddt_type.c prepares a type (strategy choice),
 * shim_ddt_args.c builds its handler arguments, shim_ddt_nic.c uploads
 * them to NIC memory (LRU of prepared types), shim_ddt_recv.c posts and
 * completes the receives. Internal to lib/shim, 0 or a negative errno.
 */
#ifndef SHIM_DDT_H
#define SHIM_DDT_H

#include <pthread.h>
#include <stdint.h>

#include "ddt.h"
#include "shim_ddt_choose.h"
#include "shim_internal.h"
#include "spin_ddt_args.h"

/* Largest handler arguments of a type loaded into NIC memory (bytes). */
#define TYPE_ARGS_MAX (1u << 20)

struct spin_type_offload {
	struct spin_type_offload *prev, *next; /* LRU, most recent first */
	ptl_handle_ni_t ni;
	struct ddt_type *t;
	int64_t count;
	enum spin_type_strategy strat;
	int64_t size;              /* packed bytes of count elements */
	int64_t lo;                /* window = buf + lo ... */
	uint64_t span;             /* ... for span bytes */
	/* what the NIC needs, kept to upload again after an eviction */
	const char *family;
	void *args;
	size_t args_len;
	void *list;                /* iovec entries (blob) */
	size_t list_len;
	struct spin_ddt_sched sched;
	/* NIC side */
	bool loaded;
	spin_handle_ctx_t ctx;
	spin_handle_nicmem_t blob;
	uint64_t nic_bytes;
	/* receives posted and not completed: atomic (a receive completes
	 * without shim_type_lock; taken under it for a type on the LRU) */
	uint32_t posted;
	bool on_lru;               /* a NIC strategy: on the LRU */
};

/* Guards the LRU, every offload's NIC side and posted count, and the
 * counters (shim_ddt_nic.c). */
extern pthread_mutex_t shim_type_lock;
extern struct spin_type_stats shim_type_st;

/** Build the handler arguments (and list) of o->strat (shim_ddt_args.c).
 *  @return 0; -EINVAL (the layout cannot be expressed); -ENOMEM; -EIO
 *  (spinnic did not say its packet payload) */
int shim_type_args_build(struct spin_type_offload *o,
			 const struct ddt_class_info *ci);

/** SPINNIC_DDT_STRATEGY. @return the strategy, SPIN_TYPE_AUTO when
 *  unset, or -EINVAL */
int shim_type_strategy_env(void);
/** spin_type_offload() after its checks: a NIC strategy goes on the LRU
 *  (shim_type_lock taken briefly), a host or contiguous one takes no
 *  lock. @return 0 or a negative errno */
int shim_type_prepare(ptl_handle_ni_t ni_handle, const struct ddt_type *t,
		      int64_t count, int strat,
		      struct spin_type_offload **off_p);

/** Put o at the LRU head (shim_type_lock held). */
void shim_type_lru_add(struct spin_type_offload *o);
/** Take o off the LRU (shim_type_lock held). */
void shim_type_lru_del(struct spin_type_offload *o);
/** Move o to the LRU head (shim_type_lock held). */
void shim_type_lru_touch(struct spin_type_offload *o);
/** Upload o, evicting idle types while NIC memory is short
 *  (shim_type_lock held). @return 0; -ENOMEM (NIC memory, nothing left
 *  to evict); another error of the upload */
int shim_type_load(struct spin_type_offload *o);
/** Give o's NIC memory back (shim_type_lock held). @return 0; -EBUSY
 *  (the NIC still uses its context) */
int shim_type_unload(struct spin_type_offload *o);

/* ---- layout cache (shim_ddt_lc.c) ------------------------------------ */

struct shim_lc_entry;

/* What one post of spin_me_append_ddt() uses. */
struct shim_lc_use {
	struct shim_lc_entry *e;
	struct spin_type_offload *off; /* the object posted with: a posted
					  reference on it is taken */
	enum spin_type_strategy strat; /* the decision */
	bool need_load;                /* off must be claimed on the NIC at
					  the post (static or forced) */
	spin_handle_ctx_t ctx;         /* !need_load: the context to post */
};

/* One decision of a post, as the layout cache saw it (the replay oracle
 * of test_shim_ddt_lc reads these). */
struct shim_lc_trace {
	uint64_t id;                   /* the entry: 1, 2, ... by creation */
	uint64_t uses;                 /* this post counted */
	struct shim_ddt_feat feat;     /* in_region: this post's buffer */
	struct shim_ddt_obs obs;       /* measured times before the post */
	bool ready;                    /* NIC candidate prepared, before */
	struct shim_ddt_choice choice; /* shim_ddt_choose_obs()'s answer */
	bool queued;                   /* this post queued the preparation */
	bool explored;                 /* sent the other way on purpose */
	bool fallback;                 /* the decision named the NIC object,
					  not loaded or its upload holding
					  the lock: posted host-based */
	int state;                     /* the entry's state before the post
					  (0 new, 1 queued, 2 preparing,
					  3 ready, 4 failed) */
	bool table;                    /* a cost table was in use */
	double prep_ns;                /* predicted preparation (rent gate) */
	enum spin_type_strategy strat; /* what the post used */
};

/* How the cache prepares and releases NIC objects (tests replace them). */
struct shim_lc_ops {
	int (*build)(ptl_handle_ni_t ni, const struct ddt_type *t,
		     int64_t count, enum spin_type_strategy strat,
		     struct spin_type_offload **off_p);
	int (*load)(struct spin_type_offload *off);
	void (*release)(struct spin_type_offload *off);
};

struct shim_lc_config {
	int chooser;                 /* enum shim_ddt_chooser */
	int forced;                  /* SPIN_TYPE_AUTO or a strategy */
	const struct shim_ddt_costs *costs; /* NULL: none (threshold rule) */
	unsigned max_entries;
	uint64_t max_bytes;          /* host bytes of prepared arguments */
	bool inline_prep;            /* no thread: shim_lc_drain() or the
					next post prepares */
	const struct shim_lc_ops *ops; /* NULL: the real ones */
	int gate;                    /* enum shim_ddt_gate (aware) */
	/* predicted preparation of a NIC object (ns: fixed, per block of an
	 * iovec list), for SHIM_GATE_RENT; 0: unknown */
	double prep_msg_ns, prep_block_ns;
	/* samples from the post, spinnic's NIC time ignored
	 * (SPINNIC_DDT_NICTIME=off: the sixth slice's samples, for A/B) */
	bool no_nic_time;
	/* called with every decision of a post (lc.lock held; tests) */
	void (*trace)(const struct shim_lc_trace *t, void *arg);
	void *trace_arg;
};

struct shim_lc_stats {
	uint64_t hits, misses, entries, bytes;
	uint64_t prep_queued, prep_done, prep_failed, evicted;
	uint64_t host_choices, nic_choices, host_while_preparing;
	uint64_t explores;           /* posts sent the other way on purpose */
	uint64_t observed;           /* refinement samples taken */
	uint64_t nic_timed;          /* ... of them from spinnic's NIC time
					(shim_ddt_ctx_sample()) */
};

/** Find or create the entry of (ni, t, count), decide this post, and take
 *  a posted reference on the object to post with. Never waits for a
 *  preparation. @return 0; -EINVAL (bad SPINNIC_DDT_CHOOSER,
 *  SPINNIC_DDT_GATE or SPINNIC_DDT_STRATEGY, layout too large); -ENOMEM */
int shim_lc_acquire(ptl_handle_ni_t ni, const struct ddt_type *t,
		    int64_t count, const void *buf, struct shim_lc_use *u_p);
/** Replace the configuration (tests, benchmarks); the cache must hold no
 *  posted receive; its entries are dropped, its counters zeroed; a
 *  started preparation thread stays unless @p c is NULL or inline.
 *  NULL: from the environment again at the next post. */
void shim_lc_configure(const struct shim_lc_config *c);
/** Run what is queued: inline mode prepares now, thread mode waits until
 *  the thread is idle. Dropped entries are released. */
void shim_lc_drain(void);
/** Release every entry of ni. @return 0; -EBUSY (a posted receive still
 *  uses one: those stay) */
int shim_lc_flush(ptl_handle_ni_t ni);
void shim_lc_stats_get(struct shim_lc_stats *s_p);
/** The configuration in force (from the environment once the first post
 *  read it, with the calibration's table once published), to hand back
 *  to shim_lc_configure() later (benchmarks switching choosers). */
void shim_lc_config_get(struct shim_lc_config *c_p);
/** Refinement: one measured receive time of entry @p e by the host path
 *  or its NIC candidate (@p nic): spin_typed_recv_complete() gives the
 *  time from the post to the data in place (host: unpack included).
 *  Samples that are not times are ignored. */
void shim_lc_observe(struct shim_lc_entry *e, bool nic, double ns);
/** shim_lc_observe() of a receive without the wait for its sender:
 *  shim_ddt_ctx_sample(@p ptc_ns, @p nic_ns, @p unpack_ns) with the
 *  process's completion latency (updated). @p nic_ns 0: none (the
 *  sample is @p ptc_ns). @p e NULL: the latency only (a receive no
 *  estimate is about: prepared types, the calibration's). */
void shim_lc_observe_times(struct shim_lc_entry *e, bool nic, double ptc_ns,
			   double nic_ns, double unpack_ns);
/** The completion latency of shim_lc_observe_times() (ns; < 0: none). */
double shim_lc_latency(void);
struct shim_calib;
/** Whether the aware table is the calibration's (copied to @p c_p when
 *  not NULL). */
bool shim_lc_calibrated(struct shim_calib *c_p);

#endif
