/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * active_access.h: what the Active Access handler families of the
 * active_access plugin (active_access.c: "aa_count", "aa_dirty",
 * "aa_dht") and their clients share: the argument block each family's
 * client installs with the execution context. libc only, fixed-width and
 * pointer-free: the client builds it, spinnic copies it into NIC memory,
 * the handlers read it there. Each family's init checks version and
 * length. Every offset is a window offset: of the log owner's ME that the
 * context is bound to (spin_aa_log_desc), or of the ME carrying the
 * context (aa_dht's active messages).
 */
#ifndef ACTIVE_ACCESS_H
#define ACTIVE_ACCESS_H

#include <assert.h>
#include <stdint.h>

/** The family names a client asks for in spin_ctx_install(). */
#define AA_COUNT_FAMILY "aa_count"
#define AA_DIRTY_FAMILY "aa_dirty"
#define AA_DHT_FAMILY "aa_dht"

/** processed_off value: keep no processed count. */
#define AA_NO_WORD UINT64_MAX

/* ---- "aa_count": access counting (paper 004 §4.2) ----------------------- */

#define AA_COUNT_ARGS_VERSION 1u

/**
 * Access counting on the NIC: per record of the log, an 8-byte host
 * fetch-add on the counter of the record's page: writes (PUT_*, ATOMIC)
 * at window offset counters_off + 8·page, reads (GET_*) at counters_off
 * + 8·(npages + page), page = (addr - base) / 4096; records outside
 * [base, base + 4096·npages) count nothing but the processed word. Then a
 * fetch-add of 1 on processed_off (unless AA_NO_WORD): the flushing
 * page's word, for spin_aa_flush.
 */
struct aa_count_args {
	uint32_t version;     /**< AA_COUNT_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint64_t base;        /**< client address of page 0, page-aligned */
	uint64_t npages;      /**< pages counted (> 0) */
	uint64_t counters_off;/**< window offset of 2·npages u64 counters */
	uint64_t processed_off; /**< window offset or AA_NO_WORD */
};
static_assert(sizeof(struct aa_count_args) == 40, "aa_count args");

/* ---- "aa_dirty": dirty pages for incremental checkpoints (§4.3) --------- */

#define AA_DIRTY_ARGS_VERSION 1u

/**
 * Dirty pages on the NIC: per record of a remote write that reached
 * memory (PUT_META, PUT_DATA not redirected, ATOMIC) the byte of the
 * record's page in a host bitmap at window offset bitmap_off + page is
 * set to 1 (a 1-byte DMA: setting is idempotent, no atomic needed), page
 * = (addr - base) / 4096 below npages; refused and redirected writes and
 * reads mark nothing. Then a fetch-add of 1 on processed_off (unless
 * AA_NO_WORD), as aa_count. The client clears the bytes it has
 * checkpointed.
 */
struct aa_dirty_args {
	uint32_t version;     /**< AA_DIRTY_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint64_t base;        /**< client address of page 0, page-aligned */
	uint64_t npages;      /**< pages tracked (> 0) */
	uint64_t bitmap_off;  /**< window offset of npages bytes */
	uint64_t processed_off; /**< window offset or AA_NO_WORD */
};
static_assert(sizeof(struct aa_dirty_args) == 40, "aa_dirty args");

/* ---- "aa_dht": the hashtable insert (§4.1, Listing 3) ------------------- */

#define AA_DHT_ARGS_VERSION 1u

/**
 * The paper's hashtable insert (Listing 3's local_insert) run on the NIC
 * per redirected 8-byte put of a key to table slot pos (a PUT_DATA record
 * at window offset table_off + 8·pos): host CAS of the slot from 0 to the
 * key; if taken, cell = host fetch-add of next_free, the key DMAed to
 * heap cell `cell` ({key, next}, 16 bytes), head[pos] swapped to cell + 1
 * and the old head DMAed to the cell's next (chains are 1-based cell
 * numbers, 0 ends). A full heap counts in the word at overflow_off
 * instead. Then processed_off += 1 (as aa_count). Keys are never 0. Every
 * offset is a window offset, 8-aligned. On an ME, the context's payload
 * handler does the same insert for an active message: an 8-byte put of
 * the key, the slot as header data (the ME window is the volume).
 */
struct aa_dht_args {
	uint32_t version;     /**< AA_DHT_ARGS_VERSION */
	uint32_t flags;       /**< 0 */
	uint64_t nslot;       /**< slots of the table (> 0) */
	uint64_t table_off;   /**< nslot u64 keys */
	uint64_t head_off;    /**< nslot u64 chain heads */
	uint64_t nheap;       /**< heap cells */
	uint64_t heap_off;    /**< nheap cells of {u64 key, u64 next} */
	uint64_t next_free_off; /**< u64: next heap cell */
	uint64_t overflow_off;  /**< u64: keys that found the heap full */
	uint64_t processed_off; /**< window offset or AA_NO_WORD */
};
static_assert(sizeof(struct aa_dht_args) == 72, "aa_dht args");

#endif
