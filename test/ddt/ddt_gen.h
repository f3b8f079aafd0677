/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ddt_gen.h
 * Test helpers shared by the datatype tests (unit, MPI comparison, NIC
 * offload): a random nested datatype generator and a brute-force typemap
 * reference that is independent of lib/ddt's dataloops (it walks the
 * constructor arguments returned by ddt_get_contents()).
 */
#ifndef SPINNIC_DDT_GEN_H
#define SPINNIC_DDT_GEN_H

#include <stdint.h>

#include "ddt.h"

/** Next value of a xorshift64* generator; *seed must not be 0. */
uint64_t ddt_gen_rand(uint64_t *seed);

/**
 * Build a random datatype (not committed) from *seed.
 *
 * Every constructor can appear (contiguous, vector, hvector, indexed,
 * hindexed, indexed_block, hindexed_block, struct, subarray C and Fortran,
 * resized, dup) over every elementary type, nested up to max_depth
 * constructor levels, with zero counts, zero-length blocks, negative
 * strides and displacements. The typemap never overlaps itself, also across
 * consecutive elements (so pack/unpack round-trip), and the data stays
 * within [lb, ub).
 * @param seed PRNG state, advanced
 * @param max_depth constructor levels, 0..6 (ddt_depth() <= max_depth + 1
 *   except subarray, which counts its dimensions)
 * @param max_size_bytes upper bound on ddt_size() of the result
 * @return the type (caller frees with ddt_free()), or NULL with errno
 */
struct ddt_type *ddt_gen_random(uint64_t *seed, int max_depth,
				int64_t max_size_bytes);

/**
 * Reference typemap: one (offset, length) per elementary item of `count`
 * elements, in packing order, offsets from the buffer origin. Not merged.
 * @param out_p receives a malloc'd array (free()); NULL when 0 items
 * @return number of items, or -ENOMEM / -EINVAL
 */
int64_t ddt_ref_typemap(const struct ddt_type *t, int64_t count,
			struct ddt_iov **out_p);

/** Merge adjacent entries of a typemap in place (like ddt_flatten()).
 * @return the new number of entries */
int64_t ddt_ref_merge(struct ddt_iov *map, int64_t n);

/** Lowest offset and highest end touched by a typemap (0,0 when empty). */
void ddt_ref_span(const struct ddt_iov *map, int64_t n, int64_t *lo_p,
		  int64_t *hi_p);

/** Pack by the typemap: typed buffer origin -> contiguous packed. */
void ddt_ref_pack(const struct ddt_iov *map, int64_t n, const void *typed,
		  void *packed);
/** Unpack by the typemap: contiguous packed -> typed buffer origin. */
void ddt_ref_unpack(const struct ddt_iov *map, int64_t n, const void *packed,
		    void *typed);

#endif
