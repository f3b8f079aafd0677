/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/coll internals (spin_coll.h; doc/NOTES.md "lib/coll"). */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

#include "spin_coll.h"

/*
 * Match bits (64):
 *   [63:61] type      COLL_T_*
 *   [60:48] schedule  tag, the communicator's compile count mod 8192
 *   [47:36] rank      the rank that sends this message (DATA: the source;
 *                     RTR and CREDIT: the receiver answering the source)
 *   [35:24] seq       k-th message of one (source, destination, tag);
 *                     bit 35 marks SPIN_SCHED_DYNAMIC's steady RTS and
 *                     RTR (coll_sched.c COLL_SEQ_STEADY)
 *   [23:0]  tag       the user's tag (COPY: the local vertex id)
 * SYNC (the host barrier): [47:36] generation, [35:20] epoch, [19:12]
 * round, [11:0] the sender (coll_comm.c).
 */
enum {
	COLL_T_DATA = 1,
	COLL_T_RTR = 2,
	COLL_T_CREDIT = 3,
	COLL_T_COPY = 4,
	COLL_T_SYNC = 5,
	COLL_T_RTS = 6,
	COLL_T_XCHG = 7,   /* a compile's send table (coll_match.c) */
};

#define COLL_SCHED_TAGS 8192u
#define COLL_SEQ_MAX 4096u

static inline ptl_match_bits_t
coll_bits(unsigned type, unsigned stag, unsigned rank, unsigned seq,
	  uint32_t tag)
{
	return ((uint64_t)type << 61) | ((uint64_t)(stag & 0x1fff) << 48) |
	       ((uint64_t)(rank & 0xfff) << 36) |
	       ((uint64_t)(seq & 0xfff) << 24) | (tag & 0xffffffu);
}

struct spin_coll_comm {
	ptl_handle_ni_t ni;
	ptl_pt_index_t pt;
	unsigned rank;
	unsigned size;
	size_t eager_max;
	ptl_size_t max_atomic;
	/* host barrier */
	ptl_handle_eq_t eq;
	ptl_handle_me_t sync_me;
	ptl_handle_md_t sync_md;
	uint32_t sync_epoch;
	unsigned gen;            /* communicators created on this PT before */
	/* schedules */
	unsigned next_stag;
	unsigned live_scheds;
	uint8_t *stag_used;      /* COLL_SCHED_TAGS flags */
	ptl_handle_md_t ctl_md;  /* 0 bytes: RTS, RTR and CREDIT puts */
	ptl_handle_ct_t ctl_ct;  /* ctl_md's: its puts' failures (SEND
				    counted in bytes: a success adds 0) */
	char ctl_byte;
	unsigned sched_flags;    /* spin_coll_comm_set_sched_flags() */
	struct coll_xtab *xtab;  /* the send table (coll_match.c) */
};

/* spin_coll_comm_sync() that also ORs @p val over every rank: each
 * rank's bits in, the OR of all ranks' out (how a compile's failure on
 * one rank reaches all). @return as spin_coll_comm_sync() */
int coll_comm_sync_or(spin_coll_comm_t *c, uint32_t *val);

/* Control puts of @p c that failed so far (a lost RTS, RTR or credit:
 * the peer's node gave up on them), UINT64_MAX when the counter cannot
 * be read. */
uint64_t coll_ctl_failures(spin_coll_comm_t *c);

/* Environment value of SPINNIC_COLL_EAGER, or the default (bad values:
 * the default, with a message). */
size_t coll_eager_from_env(void);

/* Whether PtlAtomic() takes @p op on @p type (a reduction). */
bool coll_atomic_ok(ptl_op_t op, ptl_datatype_t type);

/* Zeroed memory the NIC reaches: the host region's, the heap's where the
 * region is full (the NIC then takes its slow path). @return NULL when
 * out of memory */
void *coll_mem_alloc(size_t len);
/* Free coll_mem_alloc() memory (NULL is ignored). */
void coll_mem_free(void *p);

/* Zeroed memory freed with the schedule (collectives' temporaries): the
 * region's, the heap's where the region is full.
 * @return NULL when out of memory */
void *coll_sched_alloc(spin_sched_t *s, size_t len);


/* ---- triggered operations of a compiled schedule (coll_sched.c) -------- */

enum { TP_PUT, TP_ATOMIC, TP_CTINC, TP_MEAPPEND };

/* Which instances an operation belongs to (instance i fires it at
 * thr + i * per): every one; the first only (SPIN_SCHED_DYNAMIC's Fig. 6
 * start); every one but the first (its steady state, coll_sched.c
 * compile_dynamic). */
enum { TW_EVERY, TW_FIRST, TW_LATER };

/* One triggered operation of the schedule, posted per instance (or once,
 * persistent, where the NIC re-arms) by trig_post() only. */
struct trig {
	uint8_t kind;
	uint8_t when;           /* TW_* */
	ptl_handle_md_t md;
	ptl_size_t loff, roff, len;
	ptl_ack_req_t ack;
	unsigned rank;
	ptl_match_bits_t bits;
	ptl_op_t op;
	ptl_datatype_t type;
	ptl_handle_ct_t ct;     /* TP_CTINC: the counter incremented;
				   TP_MEAPPEND: the entry's counter */
	void *me_start;         /* TP_MEAPPEND: a use-once entry over
				   (me_start, len) matching bits */
	bool me_ack;
	bool me_keep;           /* TP_MEAPPEND: persistent, not use-once */
	ptl_handle_ct_t trig;
	ptl_size_t thr, per;
	ptl_handle_me_t rsv;    /* TP_MEAPPEND: its entry, reserved in the
				   compile's batch (0: none; trig_post) */
};

/* ---- pre-matching (coll_match.c) ---------------------------------------- */

/* A send or receive of a schedule as the matching sees it. */
struct coll_msg {
	bool send;
	bool acc;          /* accumulating (send_reduce / recv_reduce) */
	unsigned peer;     /* receive: SPIN_SCHED_ANY_SOURCE, or resolved */
	uint32_t tag;      /* receive: SPIN_SCHED_ANY_TAG, or resolved */
	uint64_t len;
	unsigned seq;      /* out: the match bits' sequence number */
	unsigned vid;      /* the vertex */
};

/* Whether a receive is a wildcard (before resolution). */
static inline bool
coll_msg_wild(const struct coll_msg *m)
{
	return !m->send && (m->peer == SPIN_SCHED_ANY_SOURCE ||
			    m->tag == SPIN_SCHED_ANY_TAG);
}

/* Local numbering, creation order: the k-th send to (dst, tag) and the
 * k-th specific receive from (src, tag) get seq k (wildcards: left to
 * coll_match_exchange). @return 0; -E2BIG (k >= COLL_SEQ_MAX); -ENOMEM */
int coll_match_number(struct coll_msg *m, unsigned n);

/* What a compile read of its peers' send tables. */
struct coll_xchg;

/* Write this rank's send table for compile @p gen (every pre-matched
 * compile, in the communicator's table buffer that one persistent entry
 * exposes), then, where this rank has wildcard receives, read the tables
 * of the sources they may match and resolve its receives from those
 * sources: specific ones first, in creation order, each taking the
 * earliest unmatched send of its tag, length and kind; then the wildcards
 * in creation order, each the earliest remaining compatible send (lower
 * source rank first), writing peer, tag and seq into @p m.
 * @param gen the compile's number (the same on every rank).
 * @param x_p receives what to free with coll_match_end() (NULL when
 *   nothing was read), also on failure.
 * @return 0; -ENOMSG (a receive matches no send: printed); -EPROTO (a
 *   peer's table is malformed); -ETIMEDOUT (a peer never wrote its
 *   table, 30 s); -ENOMEM; -ENOSPC; -EIO */
int coll_match_exchange(spin_coll_comm_t *c, uint32_t gen,
			struct coll_msg *m, unsigned n,
			struct coll_xchg **x_p);

/* Free what coll_match_exchange() read with. NULL is ignored. */
void coll_match_end(struct coll_xchg *x);

/* Unlink and free the communicator's send table (at its free, after the
 * closing barrier). */
void coll_match_comm_free(spin_coll_comm_t *c);

/* ---- SPIN_SCHED_HOST (coll_host.c) --------------------------------------- */

/* The host progress state of one schedule: which instance each of its
 * operations was issued for, the increments the host made itself. */
struct coll_host;

/* @param cts the schedule's counters (every trig and ct of @p t among
 *   them). @return 0; -ENOMEM; -EINVAL (a counter not in @p cts) */
int coll_host_prepare(struct coll_host **h_p, const struct trig *t,
		      unsigned nt, const ptl_handle_ct_t *cts, unsigned ncts);
void coll_host_free(struct coll_host *h);
/* Count one on @p ct host-side (the start counter). @return 0; -EINVAL */
int coll_host_inc(struct coll_host *h, ptl_handle_ct_t ct);
/* Issue, as plain operations, every operation of @p t due for instances
 * up to @p inst, until none is. @return 0; -EIO (a call failed, or a
 * counter of the schedule holds a failure); -ENOMEM */
int coll_host_progress(struct coll_host *h, spin_sched_t *s,
		       const struct trig *t, uint64_t inst);
/* The success count of @p ct with the host's increments. */
ptl_size_t coll_host_value(struct coll_host *h, ptl_handle_ct_t ct);
/* Keep an entry appended by coll_host_progress (unlinked at free).
 * @return 0; -ENOMEM */
int coll_sched_keep_me(spin_sched_t *s, ptl_handle_me_t h);
/* The schedule's communicator. */
spin_coll_comm_t *coll_sched_comm(spin_sched_t *s);
/* The use-once (me_keep: persistent) entry a TP_MEAPPEND @p t appends
 * (an empty one on the schedule's 8-byte dummy), triggered or by the
 * host. */
void coll_sched_me(spin_sched_t *s, const struct trig *t, ptl_me_t *me);

#endif
