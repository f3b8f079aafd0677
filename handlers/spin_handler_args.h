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

/* ---- "ddt_iblock": indexed-block layouts (paper 000 §3.2.3) -------------- */

#define SPIN_IBLOCK_ARGS_VERSION 1u

/**
 * nelem elements of equal blocks at arbitrary displacements (ddt_classify()
 * DDT_CLASS_INDEXED_BLOCK): element e, block b, byte r of the packed
 * stream (in that order) lands at window offset
 * base + e·extent + displs[b] + r. The nblocks int64_t displacements
 * (bytes from the element origin, packing order, any sign and order)
 * follow the struct: args_len = sizeof(struct spin_iblock_args) +
 * 8·nblocks.
 */
struct spin_iblock_args {
	uint32_t version;     /**< SPIN_IBLOCK_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint64_t blocklen;    /**< bytes per block, > 0 */
	uint64_t nblocks;     /**< blocks per element, > 0 */
	int64_t extent;       /**< bytes between element origins */
	uint64_t nelem;       /**< elements, > 0 */
	int64_t base;         /**< window offset of element 0's origin */
	/* int64_t displs[nblocks] follows */
};
static_assert(sizeof(struct spin_iblock_args) == 48, "iblock args");

/* ---- "ddt_general": dataloop segments (paper 000 §3.2.4) ----------------- */

#define SPIN_DDT_ARGS_VERSION 1u

/** How the general handlers keep segment state (struct spin_ddt_args). */
enum spin_ddt_strategy {
	/** one segment per vHPU (blocked-RR, Δp = 1, nvhpu = HPUs) in the
	 *  context state; catch up forward, reset when going backwards */
	SPIN_DDT_HPU_LOCAL = 1,
	/** read-only checkpoints every Δr bytes in the args; each handler
	 *  copies the nearest one at or before its offset to its stack */
	SPIN_DDT_RO_CP = 2,
	/** blocked-RR with Δp = Δr / k, one vHPU per sequence: a working
	 *  copy per checkpoint in the state, progressed in place and reset
	 *  from the master copy (in the args) when a packet is behind it */
	SPIN_DDT_RW_CP = 3,
};

/** Catch up by walking the stream (as MPITypes), not by seeking. */
#define SPIN_DDT_F_WALK 0x1u
/** stats_off value: no statistics. */
#define SPIN_DDT_STATS_NONE UINT64_MAX

/**
 * Arguments of "ddt_general": this header, then (8-byte aligned, offsets
 * from the start of the args) the type as a ddt_serialize() blob and, for
 * RO-CP and RW-CP, ckpt_count checkpoints of ckpt_size bytes each
 * (ddt_ckpt_state() of a ddt_ckpt_create() set, checkpoint i at stream
 * offset i·ckpt_interval). Packed byte s of the message, at typed offset
 * o from the MPI buffer origin, lands at window offset origin + o (origin
 * = -ddt_data_lb() when the window starts at the lowest byte touched, 0
 * when it starts at the buffer origin). Everything is checked at install
 * (blob with ddt_blob_load(), each checkpoint restored once).
 */
struct spin_ddt_args {
	uint32_t version;       /**< SPIN_DDT_ARGS_VERSION */
	uint32_t strategy;      /**< enum spin_ddt_strategy */
	uint32_t flags;         /**< SPIN_DDT_F_* */
	uint32_t nslots;        /**< HPU-local: segments (the vHPUs/HPUs);
				     checkpointed: 0 */
	int64_t count;          /**< elements of the type, >= 0 */
	int64_t origin;         /**< window offset of the buffer origin */
	uint64_t blob_off;      /**< type blob, 8-aligned, >= sizeof(*this) */
	uint64_t blob_len;
	uint64_t ckpt_off;      /**< checkpoint array, 8-aligned (CP only) */
	uint64_t ckpt_count;    /**< ceil(count·size / interval), >= 1 */
	uint64_t ckpt_interval; /**< Δr, bytes of the packed stream */
	uint64_t ckpt_size;     /**< bytes per checkpoint */
	uint64_t stats_off;     /**< window offset where the completion
				     handler writes struct spin_ddt_stats,
				     or SPIN_DDT_STATS_NONE */
};
static_assert(sizeof(struct spin_ddt_args) == 88, "ddt args");

/** Counters of a "ddt_general" context since install (all messages). */
struct spin_ddt_stats {
	uint64_t pkts;          /**< payload handlers run */
	uint64_t catchups;      /**< segment behind the packet: moved forward */
	uint64_t resets;        /**< HPU-local segment ahead: reset to 0 */
	uint64_t ckpt_copies;   /**< checkpoints copied to a handler (RO-CP,
				     RW-CP first use and master restores) */
	uint64_t master_restores; /**< RW-CP working copy ahead of the packet:
				       reset from its master copy */
	uint64_t busy;          /**< slot held by another HPU (policy not as
				     planned): processed from a private copy */
};
static_assert(sizeof(struct spin_ddt_stats) == 48, "ddt stats");

/* ---- "ddt_iovec": the Portals iovec baseline (paper 000 Fig. 16) --------- */

#define SPIN_IOVEC_ARGS_VERSION 1u

/**
 * One block of the list: soff bytes into the packed stream, len bytes
 * land at window offset origin + off. Blocks are in packing order and
 * continue each other in the stream (soff of block i + 1 = soff + len of
 * block i, block 0 at 0); len > 0.
 */
struct spin_iovec_ent {
	uint64_t soff;        /**< stream offset of the block */
	int64_t off;          /**< offset from the buffer origin */
	uint64_t len;         /**< bytes, > 0 */
};
static_assert(sizeof(struct spin_iovec_ent) == 24, "iovec entry");

/**
 * Arguments of "ddt_iovec": the list of nent struct spin_iovec_ent lives
 * in a NIC memory blob of the context's owner (spin_nicmem_alloc(), its
 * spin_nicmem_id() in list), so it can be far larger than an argument
 * block. Each payload handler binary-searches the list for the block
 * holding its packet's first byte and scatters from there (any packet
 * order, blocks straddling packets). The list itself is not validated at
 * install (the blob may be written after): a blob missing or shorter
 * than nent entries, or blocks that do not continue each other, fail the
 * packet (SPIN_ERROR); every DMA is bounds-checked against the window.
 */
struct spin_iovec_args {
	uint32_t version;     /**< SPIN_IOVEC_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint32_t list;        /**< blob id of the entries (unused if nent 0) */
	uint32_t pad;         /**< 0 */
	uint64_t nent;        /**< entries */
	uint64_t total;       /**< packed bytes the list covers */
	int64_t origin;       /**< window offset of the buffer origin */
};
static_assert(sizeof(struct spin_iovec_args) == 40, "iovec args");

/*
 * The Active Access families "aa_count", "aa_dirty" and "aa_dht" are a
 * handler plugin (examples/handlers/active_access/): their argument
 * blocks are in that folder's active_access.h.
 */

#endif
