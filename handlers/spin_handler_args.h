/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_handler_args.h
 * Argument blocks of the handler families in handlers/, as a client
 * installs them (SPINNIC_CTRL_CTX_INSTALL args bytes). libc only,
 * pointer-free, fixed-width: lib/shim builds them, the handlers read them
 * from NIC memory. Each family's init checks version and length.
 */
#ifndef SPIN_HANDLER_ARGS_H
#define SPIN_HANDLER_ARGS_H

#include <assert.h>
#include <stdint.h>

/* ---- "checksum": proves the pipeline -------------------------------------- */

#define SPIN_CSUM_ARGS_VERSION 1u
/** Also DMA every payload to the window at its message offset. */
#define SPIN_CSUM_F_COPY 0x1u
/** result_off value: right after the message, at window offset length. */
#define SPIN_CSUM_RESULT_AFTER UINT64_MAX

/**
 * Order-independent checksum of a message: for payload byte b at message
 * offset i, sum = Σ b and wsum = Σ (i + 1)·b (mod 2^64). The completion
 * handler writes struct spin_csum_result at window offset result_off.
 * State (per context, one message at a time): zeroed by the header handler.
 */
struct spin_csum_args {
	uint32_t version;     /**< SPIN_CSUM_ARGS_VERSION */
	uint32_t flags;       /**< SPIN_CSUM_F_* */
	uint64_t result_off;  /**< window offset or SPIN_CSUM_RESULT_AFTER */
};
static_assert(sizeof(struct spin_csum_args) == 16, "checksum args");

struct spin_csum_result {
	uint64_t sum;
	uint64_t wsum;
	uint64_t bytes;       /**< payload bytes the handlers saw */
	uint64_t pkts;        /**< payload handlers run */
};
static_assert(sizeof(struct spin_csum_result) == 32, "checksum result");

/* ---- "ddt_vector": paper 000 Listing 1 ------------------------------------ */

#define SPIN_VEC_ARGS_VERSION 1u

/**
 * nelem elements of an MPI (h)vector: element e, block b, byte r of the
 * packed stream (in that order) lands at window offset
 * base + e·extent + b·stride + r. All in bytes; MPI's vector(count,
 * blocklen, stride)[T] has blocklen·size(T), stride·extent(T).
 */
struct spin_vec_args {
	uint32_t version;     /**< SPIN_VEC_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint64_t blocklen;    /**< bytes per block, > 0 */
	uint64_t count;       /**< blocks per element, > 0 */
	int64_t stride;       /**< bytes between block starts */
	int64_t extent;       /**< bytes between element starts */
	uint64_t nelem;       /**< elements, > 0 */
	int64_t base;         /**< window offset of element 0, block 0 */
};
static_assert(sizeof(struct spin_vec_args) == 56, "vector args");

#endif
