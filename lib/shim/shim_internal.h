/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libspinnic internals: global state, handles, host region, control
 * socket, command ring. Not installed.
 */
#ifndef SHIM_INTERNAL_H
#define SHIM_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "portals4.h"
#include "spin.h"
#include "spinnic_abi.h"

/* nothing below is exported from libspinnic.so */
#pragma GCC visibility push(hidden)

/* ---- logging ---------------------------------------------------------- */

/* Environment failures always print; argument errors only with
 * SPINNIC_LOG=debug (they are the caller's to report). */
extern int shim_log_debug;
#define SHIM_ERR(fmt, ...) \
	fprintf(stderr, "spinnic: " fmt "\n", ##__VA_ARGS__)
#define SHIM_DBG(fmt, ...) \
	do { \
		if (shim_log_debug) \
			fprintf(stderr, "spinnic: %s: " fmt "\n", __func__, \
				##__VA_ARGS__); \
	} while (0)

/* ---- handles ---------------------------------------------------------- */
/*
 * 64 bits: kind (8) | NI slot (8) | generation (16) | index (32). The
 * index is a slot of the shim's table of that kind, except for ME and LE
 * handles, which carry the NIC's own entry handle (the NIC unlinks
 * USE_ONCE entries by itself, so only it knows whether one is still live;
 * its handles carry their own generation).
 */
enum shim_kind {
	SHIM_KIND_NI = 1,
	SHIM_KIND_EQ,
	SHIM_KIND_CT,
	SHIM_KIND_MD,
	SHIM_KIND_ME,
	SHIM_KIND_LE,
	SHIM_KIND_CTX,
	SHIM_KIND_NICMEM,
	SHIM_KIND_MAX,
};

#define SHIM_NI_MAX 4           /* matching x logical */
/* Handle kind of a streaming put: its own table in shim_sput.c, outside
 * the per-NI object tables. */
#define SHIM_KIND_SPUT 0x40u

static inline ptl_handle_any_t
shim_handle_make(unsigned kind, unsigned ni, unsigned gen, uint32_t idx)
{
	return (uint64_t)kind << 56 | (uint64_t)ni << 48 |
		(uint64_t)(gen & 0xffff) << 32 | idx;
}

static inline unsigned shim_handle_kind(ptl_handle_any_t h)
{
	return (unsigned)(h >> 56);
}
static inline unsigned shim_handle_ni(ptl_handle_any_t h)
{
	return (unsigned)(h >> 48) & 0xff;
}
static inline unsigned shim_handle_gen(ptl_handle_any_t h)
{
	return (unsigned)(h >> 32) & 0xffff;
}
static inline uint32_t shim_handle_idx(ptl_handle_any_t h)
{
	return (uint32_t)h;
}

/* ---- objects ---------------------------------------------------------- */

struct shim_eq {
	struct spinnic_eq *ring;   /* in the region */
	uint32_t count;
	uint32_t tail;             /* consumer position (free-running) */
	uint32_t last_dropped;     /* ring->dropped when last reported */
	pthread_mutex_t lock;      /* one consumer at a time */
};

struct shim_ct {
	struct spinnic_ct *rec;    /* in the region */
};

struct shim_md {
	uint64_t start;
	uint64_t length;           /* bytes (summed for PTL_IOVEC) */
	uint64_t entries;          /* PTL_IOVEC: ptl_iovec_t at start */
	unsigned int options;
	bool has_eq, has_ct;       /* an EQ, a CT: which acks it can take */
};

struct shim_nicmem {
	uint64_t size;
};

/* One slot of an object table; fields read without the lock on fast paths
 * (a handle raced with its own free is the caller's bug). */
struct shim_obj {
	uint8_t used;
	uint8_t closing;           /* EQ/CT: being freed, waiters leave */
	uint16_t gen;
	uint32_t nic_id;           /* the NIC's handle for it */
	int waiters;               /* EQ/CT: threads inside a wait */
	union {
		struct shim_eq eq;
		struct shim_ct ct;
		struct shim_md md;
		struct shim_nicmem nicmem;
	} u;
};

struct shim_table {
	struct shim_obj *objs;
	uint32_t cap;
	uint32_t hint;             /* where to start looking for a free slot */
};

struct shim_ni {
	int refs;
	unsigned int options;
	uint32_t nic_ni;
	ptl_ni_limits_t limits;
	ptl_process_t *map;        /* logical: rank -> physical */
	ptl_size_t map_size;
	struct shim_table tab[SHIM_KIND_MAX];
};

/* ---- host region ------------------------------------------------------- */

#define SHIM_REGION_DEFAULT (64u << 20)
#define SHIM_REGION_ALIGN (2u << 20)
#define SHIM_CMD_ENTRIES 1024u
#define SHIM_HEAP_ALIGN 64u

struct shim_region {
	uint8_t *base;
	uint64_t size;
	int memfd;
	int hugetlb;
	struct spinnic_region_hdr *hdr;
	struct spinnic_cmd_ring *ring;
	uint8_t *heap;
	uint64_t heap_size;
	uint64_t free_head;        /* heap offset + 1 of first free block; 0 */
	uint64_t heap_used;        /* bytes in use, headers included */
	uint64_t heap_hwm;         /* heap offset past every block ever used
				      and the header after it (fork copy) */
	pthread_mutex_t heap_lock;
};

/* ---- process-wide state ---------------------------------------------- */

struct shim_state {
	pthread_mutex_t lock;      /* init/fini, NIs, tables (slow path) */
	int init_refs;
	/* control connection */
	int fd;                    /* -1 when not attached */
	int dead;                  /* peer gone: every call fails */
	uint32_t seq;
	uint64_t ctrl_round_trips; /* requests sent (spin_ctrl_round_trips) */
	pthread_mutex_t ctrl_lock;
	int timeout_ms;
	int slice_ms;              /* longest futex sleep of a wait */
	unsigned wait_polls;       /* polls of a wait before it sleeps
				      (spin_set_wait_polls) */
	struct spinnic_pid id;
	uint32_t payload_size;
	uint32_t nhpu;             /* HPUs of the node (attach reply) */
	uint64_t nic_mem_total;
	/* command ring producer */
	pthread_mutex_t cmd_lock;
	uint32_t cmd_head;
	uint64_t trig_posted[4];   /* TRIG commands posted, per NI kind
				      (ring->trig_done: those gone) */
	/* region (created on first need, kept until exit) */
	pthread_once_t region_once;
	int region_err;            /* errno of a failed creation */
	struct shim_region region;
	struct shim_ni ni[SHIM_NI_MAX];
};

extern struct shim_state shim_g;

/** Whether the library is initialized (a PtlInit not yet undone). */
static inline bool shim_ready(void)
{
	return __atomic_load_n(&shim_g.init_refs, __ATOMIC_ACQUIRE) > 0;
}

/*
 * Return codes: inside the shim 0 or a negative errno; a PTL_* code only
 * where a Ptl or spin_ call returns, through shim_ptl(). shim_consts.h
 * lists the pairs (EINVAL: PTL_ARG_INVALID, ENOMEM: PTL_NO_SPACE, ...).
 */
/** PTL_* code of 0 or a negative errno (unknown errnos: PTL_FAIL). */
int shim_ptl(int err);
/** Negative errno (or 0) of a PTL_* code the NIC sent. */
int shim_errno(int ptl_rc);

/* First line of every Ptl and spin_ call that needs the library. */
#define SHIM_ENTER() \
	do { \
		if (!shim_ready()) \
			return PTL_NO_INIT; \
	} while (0)

/* ---- region (shim_region.c) ------------------------------------------ */

/** Create the region if needed. @return 0 or a negative errno. */
int shim_region_get(void);
/**
 * Make the region attachable again: spinnic seals the file it attached
 * against future writes (no hole can be punched under its mapping, and no
 * new writable mapping can be made), so a later attach needs a fresh
 * memfd. When the current one is sealed so, create one of the same size
 * (hugetlb when the old one was, else or failing that ordinary pages),
 * copy the contents and map it at the same address, replacing the old.
 * @return 0 (nothing to do, or renewed), or a negative errno
 */
int shim_region_renew(void);
/** Whether [p, p + len) lies in the region. */
static inline bool shim_in_region(const void *p, uint64_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)shim_g.region.base;

	return shim_g.region.base != NULL && a >= b &&
	       a - b <= shim_g.region.size &&
	       len <= shim_g.region.size - (a - b);
}
/** Region offset of p, which must lie in the region. */
static inline uint64_t shim_region_off(const void *p)
{
	return (uint64_t)((const uint8_t *)p - shim_g.region.base);
}
/** Heap allocation with an explicit alignment (power of two, >= 64). */
void *shim_heap_alloc(size_t size);
void shim_heap_free(void *p);
/** Bytes of heap in use (headers included), for tests. */
uint64_t shim_heap_used(void);
/** Check the heap's block chain; @return 0 or -EFAULT. For tests. */
int shim_heap_check(void);

/* ---- control (shim_ctrl.c) ------------------------------------------- */

/**
 * The control socket's path: SPINNIC_SOCKET, where one %r is replaced by
 * the process's rank on this host and one %n by that rank modulo the
 * number of node sockets there (the pattern with 0, 1, ... as far as such
 * sockets exist), %% by a percent sign; the rank is SPINNIC_RANK, else
 * OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, else 0.
 * Unset: $XDG_RUNTIME_DIR/spinnic/node0.sock, else /run/spinnic/node0.sock.
 * @return 0, -ENAMETOOLONG, or -EINVAL (a bad pattern or rank: one line
 * on stderr)
 */
int shim_ctrl_socket_path(char *buf, size_t len);

/*
 * Control messages are built as liburing builds SQEs: one base that clears
 * the message and sets the op, one that adds the NI (every request but
 * ATTACH/DETACH starts with it: the union members of spinnic_ctrl_msg
 * share that first field), and a one-line variant per object that names
 * its handle.
 */
#define SHIM_CTRL_NI_AT(m) offsetof(struct spinnic_ctrl_msg, u.m.ni)
static_assert(SHIM_CTRL_NI_AT(pt) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(eq) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(ct) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(md) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(me) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(ctx) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(nicmem) == SHIM_CTRL_NI_AT(ni) &&
	      SHIM_CTRL_NI_AT(status) == SHIM_CTRL_NI_AT(ni),
	      "every request but ATTACH starts with its NI");

static inline void shim_ctrl_prep(struct spinnic_ctrl_msg *m, uint16_t op)
{
	memset(m, 0, sizeof(*m));
	m->op = op;
}
static inline void shim_ctrl_prep_ni(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni)
{
	shim_ctrl_prep(m, op);
	m->u.ni.ni = ni;
}
static inline void shim_ctrl_prep_pt(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni, ptl_pt_index_t pt_index)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.pt.eq = SPINNIC_HANDLE_NONE;
	m->u.pt.pt_index = pt_index;
}
static inline void shim_ctrl_prep_eq(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni, uint32_t eq)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.eq.eq = eq;
}
static inline void shim_ctrl_prep_ct(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni, uint32_t ct)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.ct.ct = ct;
}
static inline void shim_ctrl_prep_md(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni, uint32_t md)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.md.md = md;
	m->u.md.eq = m->u.md.ct = SPINNIC_HANDLE_NONE;
}
static inline void shim_ctrl_prep_me(struct spinnic_ctrl_msg *m, uint16_t op,
				     uint32_t ni, uint32_t me)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.me.me = me;
	m->u.me.ct = m->u.me.ctx = SPINNIC_HANDLE_NONE;
}
static inline void shim_ctrl_prep_ctx(struct spinnic_ctrl_msg *m, uint16_t op,
				      uint32_t ni, uint32_t ctx)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.ctx.ctx = ctx;
}
static inline void shim_ctrl_prep_nicmem(struct spinnic_ctrl_msg *m,
					 uint16_t op, uint32_t ni,
					 uint32_t handle)
{
	shim_ctrl_prep_ni(m, op, ni);
	m->u.nicmem.handle = handle;
}

/** Connect and attach (caller holds shim_g.lock). @return 0; -EIO
 *  (spinnic unreachable or gone); -ENOMEM (no host region); the NIC's
 *  refusal as a negative errno. */
int shim_ctrl_attach(ptl_pid_t pid);
/** Detach and close (caller holds shim_g.lock). */
void shim_ctrl_detach(void);
/**
 * One request/reply. msg->op and the union are filled by the caller; the
 * reply replaces *msg. @return 0; the reply's status as a negative errno
 * (shim_errno()); -EIO (spinnic unreachable, the connection is then
 * dead); -EPROTO (a status that is no PTL_* code).
 */
int shim_ctrl_call(struct spinnic_ctrl_msg *msg);
/** After a detach: forget every access log (their rings go back to the
 *  heap, their handles name nothing). shim_aa.c */
void shim_aa_forget(void);
/** Whether the NIC hung up (checks the socket without blocking). */
bool shim_ctrl_gone(void);

/* ---- objects (shim_obj.c, shim_map.c, shim_md.c) ---------------------- */

/** NI from an NI handle, NULL if invalid. */
struct shim_ni *shim_to_ni(ptl_handle_ni_t h, unsigned *slot_p);
/** Object of a kind from a handle, NULL if invalid. */
struct shim_obj *shim_obj_get(ptl_handle_any_t h, unsigned kind,
			      struct shim_ni **ni_p);
/** Allocate a table slot (caller holds shim_g.lock). */
struct shim_obj *shim_obj_alloc(struct shim_ni *ni, unsigned slot,
				unsigned kind, ptl_handle_any_t *h_p);
void shim_obj_release(struct shim_obj *o);
/** NIC id for an optional EQ/CT/context handle of NI slot, or -EINVAL. */
int64_t shim_opt_handle(ptl_handle_any_t h, unsigned kind, unsigned slot);
/** Translate a target on an NI to a physical id. @return 0 or a
 *  negative errno. */
int shim_target(const struct shim_ni *ni, ptl_process_t in,
		struct spinnic_pid *out, int wildcard_ok);
/** Physical -> rank for events on a logical NI. */
ptl_process_t shim_initiator(const struct shim_ni *ni, struct spinnic_pid p);
/** Common body of PtlMEAppend, PtlLEAppend, spin_me_append (after
 *  SHIM_ENTER). @return 0 or a negative errno. */
int shim_entry_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		      const ptl_me_t *me, int is_le, ptl_list_t list,
		      ptl_handle_any_t ctx_h, void *user_ptr,
		      ptl_handle_any_t *h_p);
/** shim_entry_append with control flags: SPINNIC_CTRL_F_ME_RESERVE
 *  reserves the entry (PtlTriggeredMEAppend). @return 0 or a negative
 *  errno. */
int shim_entry_append_flags(ptl_handle_ni_t ni_handle,
			    ptl_pt_index_t pt_index, const ptl_me_t *me,
			    int is_le, ptl_list_t list, ptl_handle_any_t ctx_h,
			    void *user_ptr, uint16_t flags,
			    ptl_handle_any_t *h_p);
/** The control request of an entry (ME or LE) to append or search for
 *  (shim_me.c). @return 0 or a negative errno */
int shim_entry_fill(struct shim_ni *ni, unsigned slot,
		    ptl_pt_index_t pt_index, const ptl_me_t *me, int is_le,
		    ptl_handle_any_t ctx_h, void *user_ptr,
		    struct spinnic_ctrl_me *m);
/** Common body of PtlMEUnlink and PtlLEUnlink. @return 0 or a negative
 *  errno. */
int shim_entry_unlink(ptl_handle_any_t h, unsigned kind);

/* Handle to object, per kind: NULL when the handle is not a live object
 * of that kind (the caller returns PTL_ARG_INVALID). */
static inline struct shim_obj *shim_to_eq(ptl_handle_eq_t h,
					  struct shim_ni **ni_p)
{
	return shim_obj_get(h, SHIM_KIND_EQ, ni_p);
}
static inline struct shim_obj *shim_to_ct(ptl_handle_ct_t h,
					  struct shim_ni **ni_p)
{
	return shim_obj_get(h, SHIM_KIND_CT, ni_p);
}
static inline struct shim_obj *shim_to_md(ptl_handle_md_t h,
					  struct shim_ni **ni_p)
{
	return shim_obj_get(h, SHIM_KIND_MD, ni_p);
}
static inline struct shim_obj *shim_to_ctx(spin_handle_ctx_t h,
					   struct shim_ni **ni_p)
{
	return shim_obj_get(h, SHIM_KIND_CTX, ni_p);
}
static inline struct shim_obj *shim_to_nicmem(spin_handle_nicmem_t h,
					      struct shim_ni **ni_p)
{
	return shim_obj_get(h, SHIM_KIND_NICMEM, ni_p);
}
/** NI of an ME or LE handle (kind), NULL if invalid. The entry itself
 * is the NIC's to check: it may have unlinked it. */
struct shim_ni *shim_to_entry_ni(ptl_handle_any_t h, unsigned kind);
/** Whether a PT index is within the NI's limits (not PTL_PT_ANY). */
static inline bool shim_pt_index_ok(const struct shim_ni *ni,
				    ptl_pt_index_t i)
{
	return ni->limits.max_pt_index < 0 ||
		i <= (ptl_pt_index_t)ni->limits.max_pt_index;
}
/** Bytes described by start/length/options (shim_md.c): *bytes_p.
 *  Start 0 with length PTL_SIZE_MAX is all of memory.
 *  @return 0, or -EINVAL (the range wraps, a bad iovec array) */
int shim_mem_bytes(const struct shim_ni *ni, const void *start,
		   ptl_size_t length, unsigned int options, uint64_t *bytes_p);

/* ---- command ring (shim_cmd.c) ---------------------------------------- */

/** Post a command (blocks while the ring is full). @return 0; -EIO
 *  (spinnic gone). */
int shim_cmd_post(const struct spinnic_cmd *cmd);
/** Post @p n commands the NIC sees together; *end_p (if not NULL) gets
 *  the ring position after them. @return 0; -EIO (spinnic gone) */
int shim_cmd_post_n(const struct spinnic_cmd *cmds, unsigned n,
		    uint32_t *end_p);
/**
 * The command of a data operation (PtlPut, PtlGet, the atomics) from its
 * arguments, checked: the MD handle, [local_offset, +length) within it,
 * ack_req, pt_index and length within the NI's limits, the target.
 * @param ni_p if not NULL, receives the MD's NI
 * @param md_p if not NULL, receives the MD
 * @return 0 (*cmd_p filled, nothing posted) or a negative errno
 */
int shim_data_cmd(uint16_t op, ptl_handle_md_t md_handle,
		  ptl_size_t local_offset, ptl_size_t length,
		  ptl_ack_req_t ack_req, ptl_process_t target_id,
		  ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		  ptl_size_t remote_offset, void *user_ptr,
		  ptl_hdr_data_t hdr_data, struct spinnic_cmd *cmd_p,
		  struct shim_ni **ni_p, const struct shim_md **md_p);
/**
 * The command of an atomic (PtlAtomic, PtlFetchAtomic, PtlSwap and their
 * triggered forms; shim_atomic.c), checked: shim_data_cmd's checks on the
 * put MD, then the operation valid for the datatype and for the call
 * (@p op), whole elements within max_atomic_size (max_fetch_atomic_size
 * when old values come back), one element for a conditional swap or
 * MSWAP (@p operand: its compare value or mask), the get MD's range.
 * @return 0 (*cmd_p filled, nothing posted) or a negative errno
 */
int shim_atomic_cmd(uint16_t op, ptl_handle_md_t put_md,
		    ptl_size_t put_offset, ptl_handle_md_t get_md,
		    ptl_size_t get_offset, ptl_size_t length,
		    ptl_ack_req_t ack_req, ptl_process_t target_id,
		    ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		    ptl_size_t remote_offset, void *user_ptr,
		    ptl_hdr_data_t hdr_data, const void *operand,
		    ptl_op_t operation, ptl_datatype_t datatype,
		    struct spinnic_cmd *cmd_p, const struct shim_md **md_p);
/**
 * Carry the bytes a PUT or an atomic reads from its MD in the command
 * (SPINNIC_CMD_F_INLINE): always from a PTL_MD_VOLATILE MD (the buffer is
 * the caller's again when the call returns; shim_data_cmd bounds the
 * length), and for other MDs where the NIC would need a system call to
 * read them (outside the region; not an MD over all memory, whose offsets
 * only the NIC's checked read may touch). @p lead: bytes of the operand
 * already used (a conditional swap's compare value). Not for triggered
 * operations: they read the MD when they fire.
 */
void shim_cmd_inline(const struct shim_md *md, struct spinnic_cmd *cmd,
		     size_t lead);
/** An increment of PtlCTInc/PtlTriggeredCTInc: the specification lets
 *  only one of success and failure be non-zero. */
static inline bool
shim_ct_inc_ok(ptl_ct_event_t v)
{
	return v.success == 0 || v.failure == 0;
}
/** Post @p op to start when CT @p trig_ct reaches @p threshold (counts
 *  toward max_triggered_ops; shim_trig.c). @return 0, -EINVAL (CT, or
 *  not on @p op's NI), -ENOMEM (max_triggered_ops pending), -EIO */
int shim_trig_post(const struct spinnic_cmd *op, ptl_handle_ct_t trig_ct,
		   ptl_size_t threshold);
/** Wait until the NIC consumed the ring up to @p end (every command
 *  before it acted on). @return 0; -EIO (spinnic gone) */
int shim_cmd_sync(uint32_t end);

/* ---- waiting (shim_wait.c) --------------------------------------------- */

/* polls of a wait before it sleeps, by default and at most; each failed
 * poll pauses and yields the CPU (doc/NOTES.md "Waiting yields while it
 * spins") */
#define SHIM_WAIT_SPINS 2000
#define SHIM_WAIT_POLLS_MAX 1000000u

/** Sleep until one of the words changes or ms pass. */
void shim_futex_wait_any(volatile uint32_t *const *addrs, const uint32_t *vals,
			 unsigned n, int ms);
/** CLOCK_MONOTONIC in milliseconds. */
uint64_t shim_now_ms(void);

/** futex wait on a shared word, bounded by ms. */
void shim_futex_wait(volatile uint32_t *addr, uint32_t val, int ms);
void shim_futex_wake(volatile uint32_t *addr);
void shim_cpu_relax(void);
/**
 * One wait over EQs or CTs, embedded in the caller's own state. take()
 * looks at object i (of n) and says whether it had what the caller waits
 * for (an event taken, a counter reached), keeping any result in the
 * caller's state.
 */
struct shim_wait {
	unsigned kind;             /* SHIM_KIND_EQ or SHIM_KIND_CT */
	ptl_time_t timeout;        /* ms, or PTL_TIME_FOREVER */
	bool (*take)(struct shim_wait *w, struct shim_obj *o,
		     const struct shim_ni *ni, unsigned i);
};
/**
 * Wait on the objects of n handles of w->kind: spin, then sleep on their
 * futex words in slices, until take() finds something, the timeout
 * passes, one of them is being freed or the NIC is gone.
 * @return 0 (*which_p: the index), -ETIMEDOUT, -EINTR (freed, NIC gone),
 *         -EINVAL (a handle is not a live object), -ENOMEM
 */
int shim_wait(struct shim_wait *w, const ptl_handle_any_t *hs, unsigned n,
	      unsigned *which_p);
/** Wake and wait out the threads waiting on an EQ/CT being freed. */
void shim_obj_drain(struct shim_obj *o, volatile uint32_t *futex);

#pragma GCC visibility pop

#endif
