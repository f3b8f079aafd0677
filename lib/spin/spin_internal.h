/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_internal.h
 * Internals of lib/spin: NIC memory arena, object tables (contexts and
 * blobs), messages, HERs, vHPUs, HPUs. Not installed.
 */
#ifndef SPIN_INTERNAL_H
#define SPIN_INTERNAL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <string.h>

#include <rte_common.h>
#include <rte_debug.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "spin_rt.h"

extern int spin_logtype;
#define SPIN_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, spin_logtype, "spin: " fmt "\n", \
		##__VA_ARGS__)

#define SPIN_ALIGN 64u
/* handle = generation << 16 | index; index never 0xffff (HANDLE_NONE) */
#define SPIN_IDX_MAX 0xfffeu
#define SPIN_H_IDX(h) ((h) & 0xffffu)
#define SPIN_H_GEN(h) ((h) >> 16)

#define SPIN_ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define SPIN_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

/* ---- NIC memory arena (spin_nicmem.c) ---------------------------------- */

struct spin_extent {
	uint64_t off, len;
};

struct spin_owner_acct {
	uint32_t owner;
	uint32_t nobj;      /* live allocations; 0: slot free */
	uint64_t bytes;
};

struct spin_arena {
	rte_spinlock_t lock;
	uint8_t *base;
	uint64_t cap;
	struct spin_extent *free;   /* sorted by offset, never adjacent */
	unsigned nfree, free_max;
	uint64_t used;
	uint64_t allocs, frees, failures;
	struct spin_owner_acct *owners;
	unsigned max_owners;
	uint64_t per_owner_cap;
};

int spin_arena_init(struct spin_arena *a, uint64_t cap, unsigned max_allocs,
		    unsigned max_owners, uint64_t per_owner_cap);
void spin_arena_fini(struct spin_arena *a);
/* size rounded up to SPIN_ALIGN; memory zeroed. -ENOMEM / -ENOSPC */
int spin_arena_alloc(struct spin_arena *a, uint32_t owner, uint64_t size,
		     uint64_t *off_p);
void spin_arena_free(struct spin_arena *a, uint32_t owner, uint64_t off,
		     uint64_t size);
uint64_t spin_arena_owner_bytes(struct spin_arena *a, uint32_t owner);

static inline uint64_t
spin_round(uint64_t n)
{
	return (n + SPIN_ALIGN - 1) & ~(uint64_t)(SPIN_ALIGN - 1);
}

/* ---- reference-counted objects: contexts and blobs --------------------- */

/*
 * refs counts the installed reference (while live) plus users. A slot with
 * refs == 0 is free; gen changes when it is freed, so a stale handle never
 * names a reused slot. Users take a reference with a CAS that refuses 0,
 * then check gen (stable while they hold a reference).
 */
struct spin_obj {
	uint32_t refs;          /* atomic */
	uint16_t gen;
	uint8_t live;           /* installed reference not yet dropped */
	uint8_t kind;
	uint32_t owner;
	uint32_t next_free;     /* free list, under the table lock */
	uint64_t mem_off;       /* arena offset */
	uint64_t mem_len;       /* arena bytes (rounded) */
};

/* ---- handler statistics (spin_hstats.c) -------------------------------- */

/*
 * Invocations of one handler kind. An HPU's own copy (per family, and in
 * its batch for the message's context) takes plain increments; a
 * context's takes the batch's with relaxed atomics (hmask: the histogram
 * buckets the batch touched, so that a flush adds only those).
 */
struct spin_hacc {
	uint64_t rc[4];
	uint64_t cycles;
	uint64_t max;
	uint64_t over;
	uint64_t hmask;
	uint64_t hist[SPIN_HSTAT_BUCKETS];
};
static_assert(SPIN_HSTAT_BUCKETS <= 64, "hmask holds every bucket");

/* one family on one HPU: written by that HPU only */
struct spin_fstat {
	struct spin_hacc k[SPIN_HK_COUNT];
	uint64_t dma_to, dma_from, dma_rejects, dma_failures, put_errors;
} __rte_cache_aligned;

/* one entry of a context's trace ring: claimed (seq = SPIN_TRACE_BUSY),
 * written, then seq published; every field an atomic word */
struct spin_trace_slot {
	uint64_t seq;           /* 0: empty */
	uint64_t tsc, cycles, msg_id, offset;
	uint64_t len_nid;       /* len | src_nid << 32 */
	uint64_t kind_rc_hpu;   /* kind | rc << 8 | hpu << 16 | vhpu << 32 */
	uint64_t pad;
};
static_assert(sizeof(struct spin_trace_slot) == 64, "one line per entry");
#define SPIN_TRACE_BUSY (1ull << 63)

/* the over-budget log of a family: one line per second at most */
struct spin_flog {
	uint64_t next_tsc;      /* atomic: no line before */
	uint64_t missed;        /* atomic: over budget, not logged since */
};

struct spin_ctx {
	struct spin_obj o;
	const struct spin_handler_family *fam;
	uint32_t fam_idx;       /* position of fam in conf.families */
	uint32_t args_len, state_len;
	uint32_t policy, delta_p, nvhpu;
	/* trace ring (conf.handler_trace entries) or NULL */
	struct spin_trace_slot *trace;
	uint32_t trace_n;
	/* counters, relaxed atomics */
	uint64_t msgs, dma_bytes, dma_rejects;
	uint64_t h_dma_to, h_dma_from, h_dma_failures, h_put_errors;
	/* handler counts by kind (hers and rc[] of spin_ctx_stats are
	 * their sums), relaxed atomics */
	struct spin_hacc hk[SPIN_HK_COUNT] __rte_cache_aligned;
	uint64_t trace_head __rte_cache_aligned; /* atomic: entries claimed */
} __rte_cache_aligned;

struct spin_blob {
	struct spin_obj o;
} __rte_cache_aligned;

/* ---- HERs, vHPUs, messages --------------------------------------------- */

enum spin_her_kind {
	SPIN_HER_HEADER = 0,
	SPIN_HER_PAYLOAD,
	SPIN_HER_COMPLETION,
};

struct spin_msg_int;

struct spin_her {
	struct spin_her *next;          /* pending / vHPU queues */
	struct spin_msg_int *m;
	const void *payload;
	void *cookie;
	uint64_t offset;
	uint32_t len;
	uint32_t kind;
};

enum spin_vhpu_state {
	SPIN_VHPU_IDLE = 0,     /* no packet, not scheduled */
	SPIN_VHPU_QUEUED,       /* in the run queue */
	SPIN_VHPU_RUNNING,      /* on an HPU */
};

struct spin_vhpu {
	rte_spinlock_t lock;
	uint32_t state;
	uint32_t id;
	struct spin_msg_int *m;
	struct spin_her *head, *tail;
} __rte_cache_aligned;

/* message flags (atomic) */
#define SPIN_MF_ABORTED SPIN_MSG_F_ABORTED
#define SPIN_MF_PROCEED SPIN_MSG_F_PROCEED
#define SPIN_MF_DROPPED SPIN_MSG_F_DROPPED

struct spin_msg_int {
	/* set at start, read-only afterwards */
	struct spin_rt *rt;
	struct spin_ctx *ctx;
	void *host;
	void *app_msg;
	uint64_t win_addr, win_len;
	struct spin_msg_info info;
	uint32_t pkt_payload;   /* effective */
	uint32_t nv;            /* vHPUs (blocked-RR), 0 default policy */
	uint32_t delta_p;
	uint32_t slot;
	/* log2 of pkt_payload, delta_p, nv where a power of two, else
	 * SPIN_NOT_POW2: per-packet divisions become shifts */
	uint8_t pp_log2, dp_log2, nv_log2;
	/* inbound thread only, written per burst: apart from what the
	 * HPUs read per packet above */
	uint64_t bytes_in __rte_cache_aligned;
	uint32_t npkts_in;
	bool arrival_held;      /* the "more bytes to come" reference */
	/* shared: read by every payload HER, written rarely; apart from
	 * `pending`, which the inbound thread and each HPU's batch update */
	uint32_t flags __rte_cache_aligned; /* atomic SPIN_MF_* */
	uint32_t pending __rte_cache_aligned; /* atomic: arrival + HERs +
						vHPUs active + DMAs */
	rte_spinlock_t lock;    /* hdr_done, pend list */
	bool hdr_done;
	struct spin_her *pend_head, *pend_tail;
	struct spin_her hdr_her, cmpl_her;
	/* result, relaxed atomics */
	struct spin_msg_result res;
	uint32_t pay_errors;
	struct spin_vhpu *vhpu;     /* max_vhpus entries */
};

#define SPIN_NOT_POW2 0xffu

static inline uint8_t
spin_log2_or_none(uint64_t d)
{
	return d != 0 && (d & (d - 1)) == 0 ? (uint8_t)__builtin_ctzll(d) :
		SPIN_NOT_POW2;
}

/* a / d, a shift when d is a power of two (lg = its log2) */
static inline uint64_t
spin_div(uint64_t a, uint64_t d, uint8_t lg)
{
	return lg != SPIN_NOT_POW2 ? a >> lg : a / d;
}

/* packet index of a message offset */
static inline uint64_t
spin_pkt_index(const struct spin_msg_int *m, uint64_t off)
{
	return spin_div(off, m->pkt_payload, m->pp_log2);
}

/* ---- HPUs -------------------------------------------------------------- */

/*
 * Deferred per-HER bookkeeping of one HPU (spin_rt.c, "batching"): the
 * payload HERs of one message that an HPU runs back to back add their
 * counters, packet releases and `pending` references here, and give them
 * to the message, its context and the app in one go: when the HPU turns
 * to another message, before a header or completion HER and before
 * spin_hpu_poll() returns. Written by the HPU's thread only.
 */
#define SPIN_REL_BURST 32u

struct spin_batch {
	struct spin_msg_int *m;     /* message of everything below, or NULL */
	uint32_t puts;              /* `pending` references to drop */
	uint32_t dma_events;
	uint64_t dma_bytes;
	unsigned nrel;
	uint32_t kmask;             /* kinds in hk[] with counts */
	uint64_t h_dma_to, h_dma_from;          /* for m->ctx */
	struct spin_her *rel[SPIN_REL_BURST];   /* payload HERs to release */
	void *cookies[SPIN_REL_BURST];
	/* handler counts for m->ctx by kind (header, payload, completion) */
	struct spin_hacc hk[SPIN_HK_OUTBOUND];
};

/* outbound jobs' handler counts for one context, added to it at the end
 * of each burst (the jobs hold it until then) */
struct spin_oacc {
	struct spin_ctx *c;
	uint64_t h_dma_from;
	struct spin_hacc a;
};

struct spin_hpu {
	struct spin_hpu_stats st;
	struct spin_fstat *fst;     /* this HPU's counters of each family */
	uint32_t time_rnd;          /* xorshift32 state: payload timing */
	uint32_t time_all;          /* payload calls still timed, each one,
				       after a burst over the budget */
	struct spin_batch b;
	struct spin_oacc oa;
} __rte_cache_aligned;

static_assert(sizeof(struct spin_hpu) % RTE_CACHE_LINE_SIZE == 0,
	      "one HPU's counters per cache line(s)");
static_assert(sizeof(struct spin_vhpu) == RTE_CACHE_LINE_SIZE,
	      "one vHPU per cache line");
static_assert(offsetof(struct spin_msg_int, pending) % RTE_CACHE_LINE_SIZE
	      == 0, "shared message fields apart from the read-only ones");
static_assert(offsetof(struct spin_msg_int, flags) % RTE_CACHE_LINE_SIZE
	      == 0 && offsetof(struct spin_msg_int, bytes_in) %
	      RTE_CACHE_LINE_SIZE == 0,
	      "per-packet reads apart from the per-burst writes");

/* what a handler call runs in; h first so container_of is trivial */
struct spin_exec {
	struct spin_hctx h;
	struct spin_rt *rt;
	struct spin_msg_int *m;     /* NULL for an outbound job (read-only
				       window) */
	struct spin_ctx *ctx;       /* m->ctx, or the job's */
	void *host;                 /* m->host, or the job's */
	struct spin_hpu *hpu;
	uint32_t nblobs;
	uint32_t blobs[SPIN_HCTX_MAX_BLOBS];
	bool access;            /* an access handler: no message, but the
				   window is writable */
	bool err;               /* a DMA of this call failed or was rejected */
	int dma_err;            /* the first such DMA's error (outbound jobs) */
	/* summed here, added to the message and context once per call */
	uint32_t dma_events;
	uint32_t dma_inflight;  /* non-blocking DMAs not finished */
	uint64_t dma_bytes;
	uint64_t dma_from;      /* bytes read from the host by this call */
	/* the whole window through ops->direct, mapped at the first DMA of
	 * the call: SPIN_WIN_* */
	uint32_t win_map;
	uint8_t *win_base;
};

#define SPIN_WIN_UNMAPPED 0u    /* not tried yet */
#define SPIN_WIN_DIRECT 1u      /* win_base maps [0, win_len) */
#define SPIN_WIN_SLOW 2u        /* no direct mapping: per-DMA ops */

struct rte_ring;

/*
 * A free list of messages or HERs. Last in, first out: the object freed
 * last, its lines still in the cache of the core that freed it, is the
 * next one taken, where a FIFO ring hands out the one freed longest ago
 * (a cold message per spin_msg_start). An array under a spinlock: pushes
 * and pops are bursts of a few pointers. With spin_pool_fifo set before
 * spin_rt_create() (benches compare), a ring as before.
 */
struct spin_pool {
	struct rte_ring *r;         /* FIFO; NULL: the stack below */
	rte_spinlock_t lock;
	uint32_t n, cap;
	void **obj;                 /* cap */
};

extern bool spin_pool_fifo;

static inline void
spin_pool_put_bulk(struct spin_pool *p, void *const *o, unsigned n)
{
	if (p->r != NULL) {
		/* the pool holds every object: never full */
		rte_ring_enqueue_bulk(p->r, o, n, NULL);
		return;
	}
	rte_spinlock_lock(&p->lock);
	RTE_ASSERT(p->n + n <= p->cap);
	memcpy(p->obj + p->n, o, n * sizeof(*o));
	__atomic_store_n(&p->n, p->n + n, __ATOMIC_RELAXED);
	rte_spinlock_unlock(&p->lock);
}

static inline void
spin_pool_put(struct spin_pool *p, void *o)
{
	spin_pool_put_bulk(p, &o, 1);
}

/* up to @p n objects into @p o, the last freed first. @return how many */
static inline unsigned
spin_pool_get_burst(struct spin_pool *p, void **o, unsigned n)
{
	unsigned k;

	if (p->r != NULL)
		return rte_ring_dequeue_burst(p->r, o, n, NULL);
	rte_spinlock_lock(&p->lock);
	k = RTE_MIN(n, p->n);
	for (unsigned i = 0; i < k; i++)
		o[i] = p->obj[p->n - 1 - i];
	__atomic_store_n(&p->n, p->n - k, __ATOMIC_RELAXED);
	rte_spinlock_unlock(&p->lock);
	return k;
}

/* objects in the pool now (a snapshot) */
static inline unsigned
spin_pool_count(const struct spin_pool *p)
{
	return p->r != NULL ? rte_ring_count(p->r) :
		__atomic_load_n(&p->n, __ATOMIC_RELAXED);
}

struct spin_rt {
	struct spin_rt_conf conf;
	struct spin_host_ops ops;
	struct spin_arena arena;

	rte_spinlock_t obj_lock;    /* ctx and blob tables: alloc / free */
	struct spin_ctx *ctxs;
	uint32_t ctx_free;          /* free-list head, SPIN_IDX_NONE: none */
	struct spin_blob *blobs;
	uint32_t blob_free;

	struct spin_msg_int *msgs;
	struct spin_vhpu *vhpus;    /* max_msgs * max_vhpus */
	struct spin_her *hers;      /* max_hers */
	struct spin_pool msg_pool;  /* free struct spin_msg_int * */
	struct spin_pool her_pool;  /* free payload struct spin_her * */
	struct rte_ring *her_q;     /* runnable HERs (default policy, header,
				       completion) */
	struct rte_ring *vhpu_q;    /* runnable vHPUs */
	struct rte_ring *out_q;     /* submitted outbound jobs (MPMC) */
	struct rte_ring *out_done;  /* finished ones (MP, SC: the submitter) */
	uint32_t out_live;          /* atomic: submitted, not drained */
	uint64_t out_submitted, out_full, out_rejects;

	uint64_t msgs_started, msgs_done, msgs_aborted;
	uint64_t msg_full, her_full, pkt_rejects;

	/* handler statistics: conf.families has nfam entries; fstat holds
	 * nhpu * nfam, HPU h's at h * nfam (hpu[h].fst) */
	unsigned nfam;
	uint64_t budget_cyc;        /* conf.handler_budget_ns; UINT64_MAX off */
	uint32_t time_mask;         /* a payload call is timed when the HPU's
				       xorshift & time_mask is 0; 0: every one */
	bool budget_bursts;         /* a budget, payload calls sampled: the
				       HPU times its bursts */
	uint64_t tsc_hz;
	struct spin_fstat *fstat;
	struct spin_flog *flog;     /* nfam */

	struct spin_hpu hpu[SPIN_RT_HPUS_MAX];
};

#define SPIN_IDX_NONE UINT32_MAX

static inline struct spin_exec *
spin_exec_of(struct spin_hctx *h)
{
	return (struct spin_exec *)h;
}
static_assert(offsetof(struct spin_exec, h) == 0, "hctx first");

/* spin_ctx.c */
int spin_obj_tryget(struct spin_obj *o, uint16_t gen);
struct spin_ctx *spin_ctx_ref(struct spin_rt *rt, uint32_t handle);
void spin_ctx_unref(struct spin_rt *rt, struct spin_ctx *c);
int spin_blob_ref(struct spin_rt *rt, uint32_t owner, uint32_t handle,
		  struct spin_blob **b_p);
void spin_blob_unref(struct spin_rt *rt, struct spin_blob *b);
int spin_objs_init(struct spin_rt *rt);
void spin_objs_fini(struct spin_rt *rt);

/* spin_rt.c */
void spin_batch_flush(struct spin_rt *rt, struct spin_hpu *hpu);

static inline struct spin_batch *
spin_batch_for(struct spin_rt *rt, struct spin_hpu *hpu,
	       struct spin_msg_int *m)
{
	if (hpu->b.m != m) {
		spin_batch_flush(rt, hpu);
		hpu->b.m = m;
	}
	return &hpu->b;
}

/* spin_hstats.c */
int spin_hstats_init(struct spin_rt *rt);
void spin_hstats_fini(struct spin_rt *rt);
void spin_hacc_flush(struct spin_hacc *dst, struct spin_hacc *a);
void spin_hstats_over_budget(struct spin_exec *x, unsigned kind,
			     uint64_t t1, uint64_t dt,
			     struct spin_hacc *ctx_acc);
void spin_trace_put(struct spin_exec *x, unsigned kind, unsigned rc,
		    uint64_t t0, uint64_t dt, uint64_t off, uint32_t len);
uint32_t spin_ctx_handle(const struct spin_rt *rt, const struct spin_ctx *c);

static inline unsigned
spin_hist_bucket(uint64_t dt)
{
	unsigned b = dt != 0 ? 63u - (unsigned)__builtin_clzll(dt) : 0;

	return b < SPIN_HSTAT_BUCKETS ? b : SPIN_HSTAT_BUCKETS - 1;
}

static inline void
spin_hacc_add(struct spin_hacc *a, unsigned rc, uint64_t dt, unsigned b)
{
	a->rc[rc]++;
	a->cycles += dt;
	a->hist[b]++;
	if (dt > a->max)
		a->max = dt;
}

/* spin_handler.c */
void spin_exec_release(struct spin_exec *x);
int spin_dma_write_win(struct spin_exec *x, uint64_t win_off,
		       const void *src, size_t len, unsigned flags);

#endif
