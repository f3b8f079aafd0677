/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_ddt_args.h
 * Client-side builders of the argument blocks of the datatype handler
 * families ("ddt_vector", "ddt_iblock", "ddt_general", "ddt_iovec") from
 * a committed ddt type. libc and ddt.h only: lib/shim and the tests call them.
 *
 * Window convention: @p origin is the window offset of the MPI buffer
 * origin (buf). A window that starts at the lowest byte the message
 * touches has origin = -(ddt_data_lb(t)); one that starts at buf has 0.
 */
#ifndef SPIN_DDT_ARGS_H
#define SPIN_DDT_ARGS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "ddt.h"
#include "spin_handler_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Arguments of "ddt_vector" for @p count elements of a type that
 * ddt_classify() calls DDT_CLASS_VECTOR or DDT_CLASS_CONTIG (vector and
 * hvector, negative strides included).
 *
 * @param t committed type
 * @param count elements, > 0
 * @param origin window offset of the buffer origin
 * @param a_p receives the arguments
 * @return 0; -EINVAL another class, count <= 0, empty type; a negative
 *   ddt_classify() error
 */
static inline int
spin_ddt_vec_args(const struct ddt_type *t, int64_t count, int64_t origin,
		  struct spin_vec_args *a_p)
{
	struct ddt_class_info ci;
	int rc;

	if (count <= 0 || ddt_size(t) <= 0)
		return -EINVAL;
	rc = ddt_classify(t, count, &ci);
	if (rc != 0)
		return rc;
	if (ci.cls != DDT_CLASS_VECTOR && ci.cls != DDT_CLASS_CONTIG)
		return -EINVAL;
	memset(a_p, 0, sizeof(*a_p));
	a_p->version = SPIN_VEC_ARGS_VERSION;
	a_p->blocklen = (uint64_t)ci.blocklen;
	a_p->count = (uint64_t)ci.nblocks;
	a_p->stride = ci.stride;
	a_p->extent = ci.extent;
	a_p->nelem = (uint64_t)count;
	a_p->base = origin + ci.first_off;
	return 0;
}

/**
 * Arguments of "ddt_iblock" for @p count elements of a type that
 * ddt_classify() calls DDT_CLASS_INDEXED_BLOCK.
 *
 * @param buf receives struct spin_iblock_args and the displacements; may
 *   be NULL to size
 * @return bytes needed (> 0; nothing written when @p len is smaller);
 *   -EINVAL another class, count <= 0; a negative ddt_classify() error
 */
static inline ssize_t
spin_ddt_iblock_args(const struct ddt_type *t, int64_t count, int64_t origin,
		     void *buf, size_t len)
{
	struct spin_iblock_args a;
	struct ddt_class_info ci;
	size_t need;
	int rc;

	if (count <= 0)
		return -EINVAL;
	rc = ddt_classify(t, count, &ci);
	if (rc != 0)
		return rc;
	if (ci.cls != DDT_CLASS_INDEXED_BLOCK || ci.nblocks <= 0)
		return -EINVAL;
	need = sizeof(a) + (size_t)ci.nblocks * sizeof(int64_t);
	if (buf == NULL || len < need)
		return (ssize_t)need;
	memset(&a, 0, sizeof(a));
	a.version = SPIN_IBLOCK_ARGS_VERSION;
	a.blocklen = (uint64_t)ci.blocklen;
	a.nblocks = (uint64_t)ci.nblocks;
	a.extent = ci.extent;
	a.nelem = (uint64_t)count;
	a.base = origin;
	memcpy(buf, &a, sizeof(a));
	memcpy((uint8_t *)buf + sizeof(a), ci.displs,
	       (size_t)ci.nblocks * sizeof(int64_t));
	return (ssize_t)need;
}

/** Scheduling the client installs with "ddt_general" arguments. */
struct spin_ddt_sched {
	uint32_t blocked_rr;   /**< 1: SPINNIC_SCHED_BLOCKED_RR, 0: default */
	uint32_t delta_p;      /**< Δp (blocked-RR) */
	uint32_t nvhpu;        /**< vHPUs (blocked-RR; 0: one per sequence) */
	uint32_t pad;
};

/**
 * Flag of struct spin_ddt_plan and struct spin_ddt_args: the arguments end
 * with the type's compiled form (ddt_prog_serialize(), at
 * spin_ddt_args_prog_off()). Payload handlers copy through it, resuming at
 * the packet's offset without a segment, and fall back to the strategy's
 * segments only for what lies outside the window. Dropped by
 * spin_ddt_general_args() for a type without a compiled form.
 */
#define SPIN_DDT_F_PROG 0x2u

/** Offset of the compiled form in "ddt_general" arguments: the first
 * 8-aligned byte after the checkpoints (or the blob). Bounded arguments
 * (checked by the handler before it calls this) do not overflow. */
static inline uint64_t
spin_ddt_args_prog_off(const struct spin_ddt_args *a)
{
	uint64_t end = a->ckpt_count != 0 ?
		a->ckpt_off + a->ckpt_count * a->ckpt_size :
		a->blob_off + a->blob_len;

	return (end + 7) & ~(uint64_t)7;
}

/** Request of spin_ddt_general_args(). */
struct spin_ddt_plan {
	uint32_t strategy;     /**< enum spin_ddt_strategy */
	uint32_t flags;        /**< SPIN_DDT_F_* */
	uint32_t nhpu;         /**< HPU-local: segments (the NIC's HPUs) */
	uint32_t pkt_payload;  /**< k: payload bytes per packet (RW-CP) */
	int64_t interval;      /**< Δr (RO-CP, RW-CP; RW-CP rounds it up to
				    a multiple of k), e.g. from
				    ddt_ckpt_select_interval() */
	int64_t origin;        /**< window offset of the buffer origin */
	uint64_t stats_off;    /**< or SPIN_DDT_STATS_NONE */
};

/**
 * Arguments of "ddt_general" for @p count elements of @p t: header, type
 * blob, checkpoints (RO-CP, RW-CP), and the scheduling to install with
 * them (HPU-local: blocked-RR, Δp = 1, nvhpu = nhpu; RW-CP: blocked-RR,
 * Δp = Δr / k, one vHPU per sequence; RO-CP: default).
 *
 * @param buf may be NULL to size; must be 8-byte aligned
 * @param sched_p if not NULL, receives the scheduling
 * @return bytes needed (> 0; nothing written when @p len is smaller);
 *   -EINVAL bad plan or count; -DDT_E_NOTCOMMITTED; -ENOMEM
 */
static inline ssize_t
spin_ddt_general_args(const struct ddt_type *t, int64_t count,
		      const struct spin_ddt_plan *p, void *buf, size_t len,
		      struct spin_ddt_sched *sched_p)
{
	struct spin_ddt_args a;
	struct spin_ddt_sched sc = { 0 };
	struct ddt_ckpt_set *cs = NULL;
	ssize_t blen;
	size_t need, blob_off = sizeof(a), ckpt_off, prog_off = 0;
	int64_t interval = p->interval, i;

	if (count < 0 || ((uintptr_t)buf & 7) != 0)
		return -EINVAL;
	blen = ddt_serialize(t, NULL, 0);
	if (blen < 0)
		return blen;
	memset(&a, 0, sizeof(a));
	a.version = SPIN_DDT_ARGS_VERSION;
	a.strategy = p->strategy;
	a.flags = p->flags;
	a.count = count;
	a.origin = p->origin;
	a.blob_off = blob_off;
	a.blob_len = (uint64_t)blen;
	a.stats_off = p->stats_off;
	ckpt_off = (blob_off + (size_t)blen + 7) & ~(size_t)7;
	need = ckpt_off;
	switch (p->strategy) {
	case SPIN_DDT_HPU_LOCAL:
		if (p->nhpu == 0)
			return -EINVAL;
		a.nslots = p->nhpu;
		sc = (struct spin_ddt_sched){ 1, 1, p->nhpu, 0 };
		break;
	case SPIN_DDT_RW_CP:
		if (p->pkt_payload == 0 || interval <= 0 ||
		    interval > ((int64_t)1 << 61))
			return -EINVAL;
		interval = (interval + p->pkt_payload - 1) / p->pkt_payload *
			p->pkt_payload;
		if (interval / p->pkt_payload > UINT32_MAX)
			return -EINVAL;
		sc = (struct spin_ddt_sched){
			1, (uint32_t)(interval / p->pkt_payload), 0, 0 };
		/* fall through */
	case SPIN_DDT_RO_CP:
		if (interval <= 0)
			return -EINVAL;
		cs = ddt_ckpt_create(t, count, interval);
		if (cs == NULL)
			return -errno;
		a.ckpt_off = ckpt_off;
		a.ckpt_count = (uint64_t)ddt_ckpt_count(cs);
		a.ckpt_interval = (uint64_t)interval;
		a.ckpt_size = ddt_ckpt_size(cs);
		need += (size_t)a.ckpt_count * a.ckpt_size;
		break;
	default:
		return -EINVAL;
	}
	if (p->flags & SPIN_DDT_F_PROG) {
		ssize_t plen = ddt_prog_serialize(t, NULL, 0);

		if (plen == -ENOENT) {
			a.flags &= ~SPIN_DDT_F_PROG;
		} else if (plen < 0) {
			ddt_ckpt_free(cs);
			return plen;
		} else {
			prog_off = (need + 7) & ~(size_t)7;
			need = prog_off + (size_t)plen;
		}
	}
	if (sched_p != NULL)
		*sched_p = sc;
	if (buf == NULL || len < need) {
		ddt_ckpt_free(cs);
		return (ssize_t)need;
	}
	memset(buf, 0, need);
	memcpy(buf, &a, sizeof(a));
	if (ddt_serialize(t, (uint8_t *)buf + blob_off, (size_t)blen) != blen) {
		ddt_ckpt_free(cs);
		return -EINVAL;
	}
	for (i = 0; cs != NULL && i < ddt_ckpt_count(cs); i++)
		memcpy((uint8_t *)buf + ckpt_off + (size_t)i * a.ckpt_size,
		       ddt_ckpt_state(cs, i), a.ckpt_size);
	ddt_ckpt_free(cs);
	if ((a.flags & SPIN_DDT_F_PROG) &&
	    ddt_prog_serialize(t, (uint8_t *)buf + prog_off,
			       need - prog_off) < 0)
		return -EINVAL;
	return (ssize_t)need;
}

/**
 * Arguments and entry list of "ddt_iovec" for @p count elements of @p t,
 * from ddt_flatten() (merged blocks, packing order, zero-length blocks
 * left out). Call with @p list NULL to size the list, allocate the NIC
 * memory blob, then again with the blob's id and the list buffer.
 *
 * @param t committed type
 * @param count elements, >= 0
 * @param origin window offset of the buffer origin
 * @param list_id blob id the handler maps (spin_nicmem_id())
 * @param a_p receives the arguments (also when only sizing)
 * @param list receives the entries; may be NULL to size
 * @param len bytes at @p list
 * @return bytes of the list (>= 0; nothing written to @p list when @p len
 *   is smaller; 0 for an empty type); -EINVAL count < 0; -ENOMEM; a
 *   negative ddt_flatten() error
 */
static inline ssize_t
spin_ddt_iovec_args(const struct ddt_type *t, int64_t count, int64_t origin,
		    uint32_t list_id, struct spin_iovec_args *a_p,
		    struct spin_iovec_ent *list, size_t len)
{
	struct ddt_iov *iov = NULL;
	int64_t n, i, k = 0;
	uint64_t soff = 0;
	size_t need;

	if (count < 0 || a_p == NULL)
		return -EINVAL;
	n = ddt_flatten(t, count, NULL, 0);
	if (n < 0)
		return n;
	if ((uint64_t)n > SIZE_MAX / sizeof(*iov) / 2)
		return -ENOMEM;
	if (n > 0) {
		iov = (struct ddt_iov *)malloc((size_t)n * sizeof(*iov));
		if (iov == NULL)
			return -ENOMEM;
		if (ddt_flatten(t, count, iov, n) != n) {
			free(iov);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++)
		k += iov[i].len > 0;
	need = (size_t)k * sizeof(*list);
	for (i = 0, k = 0; i < n; i++) {
		if (iov[i].len <= 0)
			continue;
		if (list != NULL && len >= need) {
			list[k].soff = soff;
			list[k].off = iov[i].off;
			list[k].len = (uint64_t)iov[i].len;
		}
		soff += (uint64_t)iov[i].len;
		k++;
	}
	free(iov);
	memset(a_p, 0, sizeof(*a_p));
	a_p->version = SPIN_IOVEC_ARGS_VERSION;
	a_p->list = list_id;
	a_p->nent = (uint64_t)k;
	a_p->total = soff;
	a_p->origin = origin;
	return (ssize_t)need;
}

#ifdef __cplusplus
}
#endif

#endif
