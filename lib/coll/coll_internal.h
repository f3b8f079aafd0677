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
 *   [35:24] seq       k-th message of one (source, destination, tag)
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
};

/* Environment value of SPINNIC_COLL_EAGER, or the default (bad values:
 * the default, with a message). */
size_t coll_eager_from_env(void);

/* Whether PtlAtomic() takes @p op on @p type (a reduction). */
bool coll_atomic_ok(ptl_op_t op, ptl_datatype_t type);

/* Zeroed region memory freed with the schedule (collectives' temporaries).
 * @return NULL when out of memory */
void *coll_sched_alloc(spin_sched_t *s, size_t len);

#endif
