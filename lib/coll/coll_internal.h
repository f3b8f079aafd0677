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
	ptl_handle_md_t ctl_md;  /* 0 bytes: RTR and CREDIT puts */
	char ctl_byte;
	unsigned sched_flags;    /* spin_coll_comm_set_sched_flags() */
};

/* Environment value of SPINNIC_COLL_EAGER, or the default (bad values:
 * the default, with a message). */
size_t coll_eager_from_env(void);

/* Whether PtlAtomic() takes @p op on @p type (a reduction). */
bool coll_atomic_ok(ptl_op_t op, ptl_datatype_t type);

/* Zeroed region memory freed with the schedule (collectives' temporaries).
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
