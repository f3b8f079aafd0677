/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/portals internals: object layouts, handle encoding, locks, stats.
 * Not installed.
 */
#ifndef PTL_INTERNAL_H
#define PTL_INTERNAL_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptl_nic.h"
#include "aa.h"

#define PTL_NONE SPINNIC_HANDLE_NONE
#define PTL_NIL UINT32_MAX /* end of an index-linked list */

/* ---- log: the first function that decides on an error logs it once ---- */
void ptl_log_emit(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define PTL_LOG(lvl, fmt, ...) \
	ptl_log_emit(PTL_LOG_##lvl, fmt, ##__VA_ARGS__)
#define PTL_DBG(fmt, ...) PTL_LOG(DEBUG, fmt, ##__VA_ARGS__)

/* ---- counters: relaxed atomic adds on the NIC's stats ---- */
#define PTL_STAT_ADD(nic, field, v) \
	__atomic_fetch_add(&(nic)->stats.field, (uint64_t)(v), __ATOMIC_RELAXED)
#define PTL_STAT(nic, field) PTL_STAT_ADD(nic, field, 1)

/* ---- a small spinlock that yields: holders may be preempted ---- */
typedef struct {
	volatile uint32_t v;
} ptl_lock_t;

static inline void
ptl_lock(ptl_lock_t *l)
{
	unsigned spins = 0;

	while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) {
			if (++spins >= 256) {
				spins = 0;
				sched_yield();
			} else {
				__builtin_ia32_pause();
			}
		}
	}
}

static inline void
ptl_unlock(ptl_lock_t *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

/* ---- handles: ni(2) | type(3) | gen(7) | index(20) ---- */
enum ptl_htype {
	PTL_HT_NI = 1,
	PTL_HT_EQ,
	PTL_HT_CT,
	PTL_HT_MD,
	PTL_HT_ME,
};
#define PTL_H_NI_SHIFT 30
#define PTL_H_TYPE_SHIFT 27
#define PTL_H_GEN_SHIFT 20
#define PTL_H_GEN_MASK 0x7fu
#define PTL_H_IDX_MASK 0xfffffu
/* largest object count per NI: index all-ones is never used */
#define PTL_MAX_OBJS PTL_H_IDX_MASK

static inline uint32_t
ptl_handle(unsigned ni, unsigned type, unsigned gen, uint32_t idx)
{
	return ((uint32_t)ni << PTL_H_NI_SHIFT) |
	       ((uint32_t)type << PTL_H_TYPE_SHIFT) |
	       ((uint32_t)(gen & PTL_H_GEN_MASK) << PTL_H_GEN_SHIFT) |
	       (idx & PTL_H_IDX_MASK);
}

static inline unsigned
ptl_handle_ni(uint32_t h)
{
	return h >> PTL_H_NI_SHIFT;
}

static inline unsigned
ptl_handle_type(uint32_t h)
{
	return (h >> PTL_H_TYPE_SHIFT) & 7u;
}

static inline unsigned
ptl_handle_gen(uint32_t h)
{
	return (h >> PTL_H_GEN_SHIFT) & PTL_H_GEN_MASK;
}

static inline uint32_t
ptl_handle_idx(uint32_t h)
{
	return h & PTL_H_IDX_MASK;
}

/* ---- objects ---- */

struct ptl_eq {
	ptl_lock_t lock;      /* post vs post vs free */
	uint8_t gen;
	bool used;
	uint32_t count;
	uint32_t head;        /* NIC's own copy; never read back */
	uint32_t owed;        /* slots reserved for the events of messages
				 matched on a flow-controlled PT, not yet
				 completed (ptl_eq_reserve) */
	struct spinnic_eq *ring;
};

struct ptl_ct {
	ptl_lock_t lock;      /* update vs free; its triggered list */
	uint8_t gen;
	bool used;
	struct spinnic_ct *rec;
	uint32_t trig_head;   /* pending triggered operations (trig.c), */
	uint32_t trig_n;      /* by (threshold, arm order); head if n > 0 */
};

/* A triggered operation (trig.c): the command as posted, kept until its
 * CT reaches the threshold, then on its NI's fired FIFO until it ran. A
 * persistent one (period > 0) goes back on its CT's list at threshold +
 * period each time it fires, and may sit in the FIFO several times. */
struct ptl_trig {
	struct spinnic_cmd cmd;
	uint64_t threshold;
	uint64_t period;      /* 0: one-shot */
	uint32_t next;        /* CT list or free list */
	uint32_t ct;          /* slot of the trigger CT */
	uint32_t nref;        /* on the CT list (1) + times in the FIFO */
};

/* Per NI: max_triggered_ops entries, allocated at the first arm. */
struct ptl_trig_pool {
	ptl_lock_t lock;      /* all below; taken after a ct->lock */
	bool running;         /* a thread is running the fired FIFO */
	struct ptl_trig *ents;
	uint32_t n;           /* entries: the NI's max_triggered_ops */
	uint32_t used_top;    /* entries never used: [used_top, n) */
	uint32_t free_head, nfree;
	/* fired FIFO: a ring of entry indices (an entry repeats when it is
	 * persistent), grown up to PTL_TRIG_FQ_MAX; full: firing waits */
	uint32_t *fq;
	uint32_t fq_cap, fq_head, nfired;
	bool backlog;         /* a CT has due entries the full FIFO refused */
};

struct ptl_md {
	uint8_t gen;
	bool used;
	uint32_t options;
	uint32_t eq, ct;
	uint64_t start, length; /* PTL_IOVEC: the array's address, bytes */
	struct ptl_iovs *iov; /* PTL_IOVEC: the entries (one reference) */
};

struct ptl_me {
	uint8_t gen;
	bool used;            /* slot taken (linked, or still referenced) */
	bool linked;
	bool auto_unlinked;
	bool reserved;        /* used, not linked: a triggered append waits */
	uint8_t list;
	uint32_t pt_index;
	uint32_t options;
	uint32_t ct, uid, ctx;
	struct spinnic_pid match_id;
	uint64_t start, length; /* PTL_IOVEC: the array's address, bytes */
	struct ptl_iovs *iov; /* PTL_IOVEC: the entries (one reference) */
	uint64_t offset;      /* manage-local offset */
	uint64_t min_free;
	uint64_t match_bits, ignore_bits;
	uint64_t user_ptr;
	uint32_t refs;        /* in-flight messages + unexpected headers */
	uint32_t inflight;    /* in-flight messages */
	uint32_t prev, next;  /* list links (slot indices) */
	uint32_t tmpl;        /* a persistent triggered append's copy: its
				 reserved template's handle; else PTL_NONE */
	bool copied;          /* a template: copies were linked */
};

struct ptl_uh {
	uint8_t gen;          /* match results name a uh by slot and gen */
	bool used;
	bool complete;
	bool claimed;
	uint8_t op;
	uint8_t fail;
	uint32_t me_slot;     /* overflow ME holding the data (referenced) */
	uint32_t pt_index;
	uint32_t prev, next;
	struct spinnic_pid initiator;
	uint32_t uid;
	uint64_t match_bits, hdr_data, rlength, mlength, remote_offset;
	uint64_t start;       /* where the data was placed */
	/* the priority ME that claimed it before it completed */
	uint32_t claim_ct, claim_options;
	uint64_t claim_user_ptr;
};

struct ptl_pt {
	bool used;
	bool enabled;
	uint32_t options;
	uint32_t eq;
	uint32_t list_head[2], list_tail[2], list_len[2];
	uint32_t reserved[2]; /* entries reserved for triggered appends */
	uint32_t uh_head, uh_tail;
};

struct ptl_ni {
	bool active;
	bool allocated;       /* arrays below exist (kept until client free) */
	uint32_t refs;        /* NI_INIT count */
	uint32_t options;
	struct spinnic_limits lim;
	uint32_t n_pt, n_eq, n_ct, n_md, n_me, n_uh; /* array sizes */
	uint32_t uh_used;
	uint32_t me_hint, uh_hint; /* where to look for a free slot */
	struct ptl_pt *pts;
	struct ptl_eq *eqs;
	struct ptl_ct *cts;
	struct ptl_md *mds;
	struct ptl_me *mes;
	struct ptl_uh *uhs;
	uint64_t sr[SPINNIC_PTL_SR_LAST]; /* status registers (PtlNIStatus) */
	struct ptl_trig_pool trig;
};

/* Active Access state of a client (aa_host.c). */
struct ptl_aa {
	ptl_lock_t lock;      /* table and logs; held over a marked access */
	uint32_t on;          /* atomic: the table holds a range */
	uint64_t lo, hi;      /* atomic: [first start, last end) of the
				 table: accesses outside skip the lock */
	uint8_t *rmap;        /* one byte per region page, 1: marked (read
				 without the lock; freed with the client) */
	struct ptl_aa_table t;
	struct ptl_aa_log logs[SPINNIC_AA_LOGS_MAX];
	uint32_t watched;     /* logs the NIC serves or that hold handler
				 records (nic->aa_watch) */
	uint64_t bl_bytes;    /* atomic: bytes of records held on the NIC
				 (struct ptl_aa_bl), every log */
	/* fault log (E = 0 pages): NIC memory, this client's records only;
	 * allocated at the first E = 0 mark, under lock */
	struct spinnic_aa_rec *fault;  /* SPINNIC_AA_FAULTS_MAX records */
	uint32_t fault_head;  /* index of the oldest */
	uint32_t fault_n;     /* records held */
	uint64_t faults;      /* records logged (seq of the last one) */
	uint64_t fault_lost;  /* records lost: fault log full */
};

struct ptl_client {
	struct ptl_nic *nic;
	uint32_t refs;        /* atomic */
	uint8_t alive;        /* atomic */
	uint32_t pid;
	uint32_t uid;
	pid_t os_pid;
	uint8_t *region;
	size_t size;
	uint64_t base_va;
	struct spinnic_cmd_ring *ring;
	uint32_t cmd_entries;
	uint32_t cmd_tail;    /* consumer's own copy */
	struct ptl_ni ni[SPINNIC_WIRE_NI_KINDS];
	void (*release)(void *arg, void *region, size_t size);
	void *release_arg;
	struct ptl_aa aa;
};

struct ptl_op {
	uint64_t msg_id;      /* 0: free */
	struct ptl_client *c;
	struct ptl_cmd cmd;
	bool sent;
	bool acked;
	uint8_t ack_fail;
	uint8_t ack_list;     /* the list the put matched (ACK event) */
	uint64_t ack_mlength;
};

struct ptl_nic {
	struct ptl_nic_conf conf;
	ptl_lock_t lock;      /* clients, NIs, PTs, lists, MDs, uhs */
	struct ptl_client **clients;
	ptl_lock_t op_lock;   /* op table */
	struct ptl_op *ops;
	uint32_t *op_free;
	uint32_t op_nfree;
	uint64_t op_seq;
	uint64_t op_key;      /* random: message ids are not guessable */
	ptl_originate_fn originate; /* fired triggered data operations */
	void *originate_arg;
	/* Active Access: clients with logs the NIC serves itself (access
	 * handlers, notify_us, held handler records), by pid */
	ptl_lock_t aa_wlock;
	/* the IOTLB model (conf.aa_iotlb_*): nested inside a client's
	 * aa.lock, never the other way */
	ptl_lock_t aa_tlb_lock;
	struct ptl_aa_iotlb aa_tlb;
	uint32_t aa_walk_levels;
	uint32_t aa_wn;       /* atomic */
	uint32_t aa_wpid[SPINNIC_AA_WATCH_MAX];
	struct ptl_client *aa_wcl[SPINNIC_AA_WATCH_MAX]; /* identity only:
				 removed before the client is freed */
	uint64_t aa_unheld;   /* atomic: logs whose held handler records
				 went to none (ptl_aa_unheld) */
	struct ptl_nic_stats stats;
};

#define PTL_OP_SLOT_BITS 24
#define PTL_OP_SLOT_MASK ((1ull << PTL_OP_SLOT_BITS) - 1)

/* ---- shared helpers (by file) ---- */

/* client.c */
static inline bool
ptl_client_is_alive(const struct ptl_client *c)
{
	return __atomic_load_n(&c->alive, __ATOMIC_ACQUIRE) != 0;
}

/* ni.c: resolve handles (caller holds nic->lock for NI/MD/ME). */
struct ptl_ni *ptl_ni_get(struct ptl_client *c, uint32_t h);
struct ptl_md *ptl_md_get(struct ptl_client *c, uint32_t h,
			  struct ptl_ni **ni_p);
struct ptl_me *ptl_me_get(struct ptl_client *c, uint32_t h,
			  struct ptl_ni **ni_p);
bool ptl_eq_valid(struct ptl_ni *ni, unsigned kind, uint32_t h);
bool ptl_ct_valid(struct ptl_ni *ni, unsigned kind, uint32_t h);
void ptl_ni_teardown(struct ptl_client *c, unsigned kind);
void ptl_ni_free_arrays(struct ptl_ni *ni);
int ptl_ctrl_status(struct ptl_client *c, struct spinnic_ctrl_status *r);
int ptl_ctrl_ni(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_ni *r);
int ptl_ctrl_pt(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_pt *r);
int ptl_ctrl_md(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_md *r);

/* aa_host.c (caller holds nic->lock) */
int ptl_ctrl_aa(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_aa *r);
/* last reference: the client's marks and logs go */
void ptl_aa_client_fini(struct ptl_client *c);

/* eq.c / ct.c */
int ptl_ctrl_eq(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_eq *r);
int ptl_ctrl_ct(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		struct spinnic_ctrl_ct *r);
int ptl_eq_reserve(struct ptl_client *c, uint32_t eq, unsigned n);
void ptl_eq_unreserve(struct ptl_client *c, uint32_t eq, unsigned n);
void ptl_eq_release_all(struct ptl_ni *ni);
void ptl_ct_release_all(struct ptl_client *c, unsigned kind);

/* me.c / match.c (caller holds nic->lock) */
int ptl_ctrl_me(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
		uint16_t flags, struct spinnic_ctrl_me *r);
/* Ring ME_APPEND: link reserved entry @p h as PtlMEAppend would.
 * @return 0, -ENOENT (not a reserved entry now: unlinked, NI gone) */
int ptl_me_link_reserved(struct ptl_client *c, uint32_t h);
/* A persistent triggered append fired (nic->lock held): link a fresh copy
 * of reserved entry @p h, which stays reserved (the template). @return 0,
 * -ENOENT (no such reserved entry), -ENOSPC (no slot, list full) */
int ptl_me_link_copy(struct ptl_client *c, uint32_t h);
/* Ring ME_UNLINK: take entry @p h off its list at once (in-flight
 * messages keep the slot until they end); a reserved one is released.
 * @return 0, -ENOENT (no such entry now: consumed or unlinked) */
int ptl_me_unlink_now(struct ptl_client *c, uint32_t h);
/* Release entry @p h if it is still reserved (its append will not run) */
void ptl_me_unreserve(struct ptl_client *c, uint32_t h);
/* NI teardown: release every reserved entry of NI @p kind */
void ptl_me_unreserve_all(struct ptl_client *c, unsigned kind);
void ptl_me_list_remove(struct ptl_ni *ni, struct ptl_pt *pt, uint32_t slot);
void ptl_me_put_ref(struct ptl_client *c, unsigned kind, uint32_t slot);
void ptl_uh_remove(struct ptl_client *c, unsigned kind, struct ptl_pt *pt,
		   uint32_t u);
void ptl_pt_disable_flowctrl(struct ptl_client *c, unsigned kind,
			     struct ptl_pt *pt, uint32_t pt_index);

bool ptl_me_accepts(const struct ptl_me *me, bool matching,
		    const struct spinnic_pid *src, uint64_t match_bits,
		    uint64_t rlength, uint64_t roff, uint64_t *loff_p,
		    uint64_t *mlen_p);
/* May a message of wire_op from uid use this entry? The one check of
 * matching (ptl_nic_match) and of unexpected headers (ME append): 0,
 * -EPERM (the entry does not allow the operation), -EACCES (uid). */
int ptl_me_check_perms(const struct ptl_me *me, uint8_t wire_op,
		       uint32_t uid);

static inline bool
ptl_me_permits(const struct ptl_me *me, uint8_t wire_op, uint32_t uid)
{
	return ptl_me_check_perms(me, wire_op, uid) == 0;
}
unsigned ptl_event_kind(uint8_t wire_op, bool overflow);
void ptl_uh_deliver_claim(struct ptl_client *c, struct ptl_pt *pt,
			  uint32_t pt_index, const struct ptl_uh *u);

/* ops.c */
void ptl_op_cancel_client(struct ptl_nic *nic, struct ptl_client *c);

/* Event helpers. */
static inline void
ptl_event_init(struct spinnic_event *ev, unsigned type, uint8_t fail)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = (uint16_t)type;
	ev->ni_fail_type = fail;
}

/* [off, off+len) within [0, size) without overflow */
static inline bool
ptl_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static inline bool
ptl_is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

#endif
