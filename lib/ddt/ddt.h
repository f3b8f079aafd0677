/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ddt.h
 * MPI derived datatypes for spinnic: constructors, commit to a compact
 * serializable form, type expressions, resumable segments, checkpoints, fast
 * host pack/unpack, iovec flattening and layout classification.
 *
 * Depends on libc only: used by the client library (lib/shim), the NIC's
 * packet handlers (handlers/) and the tools.
 *
 * Conventions: int functions return 0 or a negative errno (or a DDT_E* code,
 * see ddt_strerror()); constructors return NULL and set errno.
 */
#ifndef SPINNIC_DDT_H
#define SPINNIC_DDT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Project error codes, above the errno range. */
enum ddt_errno {
	DDT_E_BASE = 4000,
	DDT_E_SYNTAX = DDT_E_BASE, /**< type expression syntax error */
	DDT_E_DEPTH,               /**< nesting deeper than DDT_MAX_DEPTH */
	DDT_E_OVERFLOW,            /**< a count, size or extent overflows 64 bits */
	DDT_E_BLOB,                /**< serialized type truncated, corrupt or hostile */
	DDT_E_NOTCOMMITTED,        /**< operation needs a committed type */
	DDT_E_MAX,
};

/** Maximum nesting depth of a type (constructors reject deeper types). */
#define DDT_MAX_DEPTH 16

/** Elementary types (DESIGN §7). */
enum ddt_base {
	DDT_BYTE, DDT_CHAR, DDT_INT8, DDT_UINT8, DDT_INT16, DDT_UINT16,
	DDT_INT32, DDT_UINT32, DDT_INT64, DDT_UINT64, DDT_FLOAT, DDT_DOUBLE,
	DDT_COMPLEX, DDT_DOUBLE_COMPLEX,
	DDT_BASE_COUNT,
};

/** Array order for ddt_subarray(). */
enum ddt_order { DDT_ORDER_C = 0, DDT_ORDER_FORTRAN = 1 };

/** Layout classes for specialized handlers (ddt_classify()). */
enum ddt_class {
	DDT_CLASS_CONTIG = 0, /**< one contiguous block per element, extent == size */
	DDT_CLASS_VECTOR,     /**< equal blocks at a constant byte stride (vector/hvector) */
	DDT_CLASS_INDEXED_BLOCK, /**< equal blocks at arbitrary displacements */
	DDT_CLASS_GENERAL,    /**< anything else: needs dataloop segments */
};

/** Opaque, reference-counted datatype. */
struct ddt_type;

/* ---- constructors (MPI semantics; return NULL and set errno) ---------- */

/** Elementary type (a shared static object; ddt_free() on it is a no-op). */
struct ddt_type *ddt_base(enum ddt_base b);
struct ddt_type *ddt_contiguous(int64_t count, struct ddt_type *old);
/** @param stride in extents of old */
struct ddt_type *ddt_vector(int64_t count, int64_t blocklen, int64_t stride,
			    struct ddt_type *old);
/** @param stride_bytes stride in bytes */
struct ddt_type *ddt_hvector(int64_t count, int64_t blocklen,
			     int64_t stride_bytes, struct ddt_type *old);
/** @param displs in extents of old */
struct ddt_type *ddt_indexed(int64_t count, const int64_t *blocklens,
			     const int64_t *displs, struct ddt_type *old);
struct ddt_type *ddt_hindexed(int64_t count, const int64_t *blocklens,
			      const int64_t *displs_bytes, struct ddt_type *old);
struct ddt_type *ddt_indexed_block(int64_t count, int64_t blocklen,
				   const int64_t *displs, struct ddt_type *old);
struct ddt_type *ddt_hindexed_block(int64_t count, int64_t blocklen,
				    const int64_t *displs_bytes,
				    struct ddt_type *old);
struct ddt_type *ddt_struct(int64_t count, const int64_t *blocklens,
			    const int64_t *displs_bytes,
			    struct ddt_type *const *types);
struct ddt_type *ddt_subarray(int ndims, const int64_t *sizes,
			      const int64_t *subsizes, const int64_t *starts,
			      enum ddt_order order, struct ddt_type *old);
struct ddt_type *ddt_resized(int64_t lb, int64_t extent, struct ddt_type *old);
struct ddt_type *ddt_dup(struct ddt_type *old);

/** Take one more reference. @return t */
struct ddt_type *ddt_ref(struct ddt_type *t);
/** Drop a reference; the type is freed when the last one goes (derived
 * types hold references to their inputs). NULL is accepted. */
void ddt_free(struct ddt_type *t);

/* ---- constructor arguments (like MPI_Type_get_envelope/get_contents) -- */

enum ddt_combiner {
	DDT_COMBINER_NAMED, DDT_COMBINER_CONTIGUOUS, DDT_COMBINER_VECTOR,
	DDT_COMBINER_HVECTOR, DDT_COMBINER_INDEXED, DDT_COMBINER_HINDEXED,
	DDT_COMBINER_INDEXED_BLOCK, DDT_COMBINER_HINDEXED_BLOCK,
	DDT_COMBINER_STRUCT, DDT_COMBINER_SUBARRAY, DDT_COMBINER_RESIZED,
	DDT_COMBINER_DUP,
};

/** The arguments a type was built with; arrays are owned by the type. */
struct ddt_contents {
	enum ddt_combiner combiner;
	enum ddt_base base;        /**< NAMED */
	int64_t count;             /**< count argument; SUBARRAY: ndims */
	int64_t blocklen;          /**< VECTOR, HVECTOR, (H)INDEXED_BLOCK */
	int64_t stride;            /**< VECTOR: extents; HVECTOR: bytes */
	const int64_t *blocklens;  /**< (H)INDEXED, STRUCT */
	const int64_t *displs;     /**< as passed to the constructor */
	const int64_t *sizes, *subsizes, *starts; /**< SUBARRAY */
	enum ddt_order order;      /**< SUBARRAY */
	int64_t lb, extent;        /**< RESIZED */
	struct ddt_type *const *types; /**< inputs: 1, or count for STRUCT */
};
/** Constructor and arguments of t. @return 0 */
int ddt_get_contents(const struct ddt_type *t, struct ddt_contents *c_p);

/* ---- queries ---------------------------------------------------------- */

int64_t ddt_size(const struct ddt_type *t);        /**< bytes of data */
int64_t ddt_extent(const struct ddt_type *t);      /**< ub - lb */
int64_t ddt_lb(const struct ddt_type *t);
int64_t ddt_ub(const struct ddt_type *t);
/** MPI true lb and true extent as MPICH 4.0 has them: a member without
 * data (a zero-length block of a vector, a resized empty type) still
 * places true bounds, so they may reach past the data, and the true extent
 * of a type without data may be negative. See ddt_data_lb(). */
int64_t ddt_true_lb(const struct ddt_type *t);
int64_t ddt_true_extent(const struct ddt_type *t);
/** The bytes one element's data occupies: lowest offset from the buffer
 * origin that pack reads and unpack writes (the MPI standard's true lb),
 * and the distance from it to one past the highest. Within MPICH's true
 * bounds; both 0 when the size is 0. Use these to size buffers and windows
 * the data must fit. */
int64_t ddt_data_lb(const struct ddt_type *t);
int64_t ddt_data_extent(const struct ddt_type *t);
/** Number of contiguous blocks of one element after merging. */
int64_t ddt_num_blocks(const struct ddt_type *t);
/** Nesting depth: 1 for an elementary type. */
int ddt_depth(const struct ddt_type *t);

/* ---- commit and serialized form -------------------------------------- */

/** Commit: build the normalized dataloop representation. Idempotent.
 * @return 0, -ENOMEM */
int ddt_commit(struct ddt_type *t);
int ddt_is_committed(const struct ddt_type *t);

/** Serialized, pointer-free, versioned dataloops of a committed type.
 * @param buf may be NULL to query the size.
 * @return bytes needed (>0), or -DDT_E_NOTCOMMITTED, -ENOSPC if len too small */
ssize_t ddt_serialize(const struct ddt_type *t, void *buf, size_t len);

/** A validated serialized type (read-only view over the blob: no copy, the
 * blob must outlive it; this is what a handler uses from NIC memory). */
struct ddt_blob;
/** Validate a blob (bounds, offsets, counts, no cycles, version) and return
 * a view over it. @return 0, -DDT_E_BLOB (reason logged to errno-string via
 * ddt_blob_error()), -EINVAL. @param view_p set on success, points into buf */
int ddt_blob_load(const void *buf, size_t len, const struct ddt_blob **view_p);
/** Reason (one line) the last ddt_blob_load() of this thread rejected a
 * blob; empty after a successful load. */
const char *ddt_blob_error(void);
/** Size in bytes of the packed stream of one element of a blob type. */
int64_t ddt_blob_size(const struct ddt_blob *b);
int64_t ddt_blob_extent(const struct ddt_blob *b);
/** Rebuild a type object from a validated blob. */
struct ddt_type *ddt_blob_to_type(const struct ddt_blob *b);

/* ---- compiled form (lib/ddt README, "Compiled form") ------------------ */

/** The compiled form of a committed type as pointer-free bytes, for a NIC
 * handler to resume in at any stream offset without a segment.
 * @param buf NULL to query the size; else 8-byte aligned
 * @return bytes needed (> 0); -DDT_E_NOTCOMMITTED; -ENOENT the type has
 *   no compiled form (too many ops: use segments); -ENOSPC @p len too
 *   small; -EINVAL */
ssize_t ddt_prog_serialize(const struct ddt_type *t, void *buf, size_t len);
/** Check serialized compiled-form bytes against the validated blob they
 * were made from: header, every op, array and span recomputed.
 * @return 0; -EINVAL (not the blob's, or inconsistent) */
int ddt_prog_check(const void *buf, size_t len, const struct ddt_blob *b);
/**
 * Unpack stream bytes [first, last) from @p src into @p dst (the buffer
 * origin), writing only typed offsets [lo, hi).
 * @param buf bytes ddt_prog_check() accepted; [first, last) within the
 *   count·size bytes of a count ddt_segment_init() accepted for the blob
 * @return the stream offset reached: @p last, or the start of the first
 *   run of blocks not inside [lo, hi) (nothing of that run written)
 */
int64_t ddt_prog_unpack_bounded(const void *buf, int64_t first, int64_t last,
				const void *src, void *dst, int64_t lo,
				int64_t hi);

/** A piece of a packed stream: @c len bytes at @c src. */
struct ddt_piece {
	const void *src;
	int64_t len;
};

/**
 * ddt_prog_unpack_bounded() for a stream range given in @p n pieces that
 * follow each other in the stream (the payloads of consecutive packets):
 * [first, first + Σ len). A transpose (repetitions side by side with
 * blocks far apart, FFT2D's columns) whose repetitions each lie in one
 * piece is unpacked in tiles across the pieces, each destination line
 * written in one visit instead of once per repetition.
 * @param buf bytes ddt_prog_check() accepted; the range as for
 *   ddt_prog_unpack_bounded(); piece lengths >= 0
 * @return the stream offset reached: the end, or the start of the first
 *   run of blocks not inside [lo, hi) (nothing of that run written)
 */
int64_t ddt_prog_unpack_pieces(const void *buf, int64_t first,
			       const struct ddt_piece *pc, unsigned n,
			       void *dst, int64_t lo, int64_t hi);

/**
 * Copy @p n blocks of @p bl bytes from contiguous @p src to @p dst, one
 * every @p stride bytes, with the compiled form's kernels (fixed sizes up
 * to 32 B, inline up to 64 B, non-temporal stores for large totals):
 * what a vector handler places into a directly addressable window.
 */
void ddt_copy_strided(void *dst, const void *src, int64_t bl, int64_t stride,
		      int64_t n);

/* ---- type expressions (DESIGN §7) ------------------------------------ */

/** Parse a type expression (the type is not committed).
 * @param err_p if not NULL, on error receives a static-lifetime-until-next-
 *   call message "at position N: expected X" (thread-local buffer).
 * @return type, or NULL with errno = DDT_E_SYNTAX / DDT_E_DEPTH /
 *   DDT_E_OVERFLOW / EINVAL / ENOMEM */
struct ddt_type *ddt_parse(const char *expr, const char **err_p);
/** Print a type expression; parse(print(t)) is equal to t.
 * @return characters needed excluding NUL (like snprintf), or negative errno */
int ddt_print(const struct ddt_type *t, char *buf, size_t len);
/** Equality of two types: the same typemap as bytes (every byte of the
 * packed stream lands at the same offset) and the same lb/extent.
 * Committed types with identical normalized dataloops compare in time
 * proportional to their description; others by walking both block streams
 * in bounded memory.
 * @return 1 equal, 0 different, -E2BIG when they differ in description and
 *   are too large to walk (over 16 GiB of data), -ENOMEM */
int ddt_equal(const struct ddt_type *a, const struct ddt_type *b);

/* ---- segments --------------------------------------------------------- */

/** Resumable processing state over the packed stream of `count` elements.
 * Pointer-free and fixed-size once created (ddt_segment_state_size()), so it
 * can be copied as a checkpoint. */
struct ddt_segment;

/** Create a segment over a committed type (or a loaded blob) and count. */
struct ddt_segment *ddt_segment_create(const struct ddt_type *t, int64_t count);
struct ddt_segment *ddt_segment_create_blob(const struct ddt_blob *b,
					    int64_t count);
void ddt_segment_free(struct ddt_segment *s);
/** Bytes a segment over blob b takes (for ddt_segment_init()). */
size_t ddt_segment_mem_size(const struct ddt_blob *b);
/** Build a segment in caller memory (NIC memory, a stack buffer) without
 * allocating; never pass it to ddt_segment_free(). The blob must outlive it.
 * @param mem 8-byte aligned, at least ddt_segment_mem_size(b) bytes
 * @return the segment (== mem), or NULL with errno EINVAL (bad size or
 *   alignment, count < 0) or DDT_E_OVERFLOW (count elements too large) */
struct ddt_segment *ddt_segment_init(void *mem, size_t len,
				     const struct ddt_blob *b, int64_t count);
/** Back to the start of the stream. */
void ddt_segment_reset(struct ddt_segment *s);
/** Position (bytes of the packed stream already processed). */
int64_t ddt_segment_pos(const struct ddt_segment *s);

/** Unpack packed bytes [first, last) of the stream from `src` (which holds
 * exactly those bytes) into the typed buffer `dst` (MPI buf origin).
 * Resumes from the current position; catches up forward without copying
 * when first > pos; resets when first < pos.
 * @return 0, -EINVAL (range outside the stream) */
int ddt_segment_unpack(struct ddt_segment *s, int64_t first, int64_t last,
		       const void *src, void *dst);
/** ddt_segment_unpack(), writing only typed offsets [lo, hi) of `dst`:
 * a block outside stops the range before it is written (the segment's
 * position is then past it; seek again to retry).
 * @return 0, -ERANGE (a block outside the bounds), -EINVAL */
int ddt_segment_unpack_bounded(struct ddt_segment *s, int64_t first,
			       int64_t last, const void *src, void *dst,
			       int64_t lo, int64_t hi);
/** Pack bytes [first, last) of the stream from typed `src` into `dst`. */
int ddt_segment_pack(struct ddt_segment *s, int64_t first, int64_t last,
		     const void *src, void *dst);
/** Block callback: (offset from buf origin, length, offset in the packed
 * stream); return non-zero to stop (the segment stays resumable). */
typedef int (*ddt_block_fn)(void *arg, int64_t buf_off, int64_t len,
			    int64_t stream_off);
/** Emit the (offset, length) blocks of stream range [first, last).
 * @return 0 when the range is done, 1 when fn stopped it early (the
 *   segment's position is just after the last block emitted), -EINVAL */
int ddt_segment_blocks(struct ddt_segment *s, int64_t first, int64_t last,
		       ddt_block_fn fn, void *arg);
/** Strided block callback: @p nblocks whole blocks of @p blocklen bytes at
 * buffer offsets buf_off + k * stride (k < nblocks), packed one after the
 * other from stream offset stream_off; return non-zero to stop after
 * them. */
typedef int (*ddt_strided_fn)(void *arg, int64_t buf_off, int64_t blocklen,
			      int64_t stride, int64_t nblocks,
			      int64_t stream_off);
/** ddt_segment_blocks(), the whole blocks of a vector leaf that the range
 * covers given to @p sfn in one call, every other block to @p fn.
 * @return as ddt_segment_blocks() */
int ddt_segment_blocks_strided(struct ddt_segment *s, int64_t first,
			       int64_t last, ddt_block_fn fn,
			       ddt_strided_fn sfn, void *arg);

/** Choose how a segment catches up when asked for a range after its
 * position: 0 (default) seeks arithmetically in O(depth * log blocks);
 * non-zero walks the stream without copying, like MPITypes (paper 000
 * §3.2.4), for measuring the catch-up cost the paper models. */
void ddt_segment_set_walk(struct ddt_segment *s, int walk);

/** Bytes of the segment's copyable state (a checkpoint's size). */
size_t ddt_segment_state_size(const struct ddt_segment *s);
/** Copy state out/in (checkpoint save/restore between segments of the
 * same type and count). @return 0, -EINVAL on mismatched size/type */
int ddt_segment_save(const struct ddt_segment *s, void *state, size_t len);
int ddt_segment_restore(struct ddt_segment *s, const void *state, size_t len);

/* ---- checkpoints (paper 000 §3.2.4) ---------------------------------- */

/** Snapshots of a segment every `interval` bytes of the packed stream. */
struct ddt_ckpt_set;
/** Create checkpoints at 0, Δr, 2Δr, ... for count elements. */
struct ddt_ckpt_set *ddt_ckpt_create(const struct ddt_type *t, int64_t count,
				     int64_t interval);
void ddt_ckpt_free(struct ddt_ckpt_set *c);
int64_t ddt_ckpt_count(const struct ddt_ckpt_set *c);
int64_t ddt_ckpt_interval(const struct ddt_ckpt_set *c);
/** Size of one checkpoint in bytes (C in the paper's model). */
size_t ddt_ckpt_size(const struct ddt_ckpt_set *c);
/** Index of the nearest checkpoint at or before stream offset `off`. */
int64_t ddt_ckpt_find(const struct ddt_ckpt_set *c, int64_t off);
/** Restore checkpoint `idx` into segment s. @return 0, -EINVAL */
int ddt_ckpt_restore(const struct ddt_ckpt_set *c, int64_t idx,
		     struct ddt_segment *s);
/** Pointer to checkpoint idx's raw state (ddt_ckpt_size() bytes), for
 * copying checkpoints into NIC memory as one array. */
const void *ddt_ckpt_state(const struct ddt_ckpt_set *c, int64_t idx);

/** Inputs of the checkpoint-interval model (paper 000 §3.2.4). */
struct ddt_ckpt_model {
	double epsilon;        /**< allowed scheduling overhead fraction (0.2) */
	uint64_t nic_mem;      /**< NIC memory available for checkpoints, bytes */
	uint64_t pkt_buf;      /**< packet buffer bytes (bounds in-flight packets) */
	uint32_t hpus;         /**< P */
	uint32_t pkt_payload;  /**< k, bytes per packet */
	double t_pkt;          /**< T_pkt, seconds to receive one packet */
	double t_ph;           /**< T_PH(gamma), seconds per packet handler */
	size_t ckpt_size;      /**< C, bytes per checkpoint */
	int64_t msg_size;      /**< m, bytes of the message */
};
/** Select Δr (bytes, a multiple of pkt_payload) from the model.
 * @return Δr > 0, or -EINVAL; -ENOSPC when even one checkpoint per message
 *   does not fit (the caller falls back) */
int64_t ddt_ckpt_select_interval(const struct ddt_ckpt_model *m);

/* ---- whole-message host pack/unpack (baseline and fallback) ---------- */

/** Pack count elements from typed `src` into contiguous `dst`.
 * @return 0, -DDT_E_NOTCOMMITTED */
int ddt_pack(const struct ddt_type *t, int64_t count, const void *src,
	     void *dst);
int ddt_unpack(const struct ddt_type *t, int64_t count, const void *src,
	       void *dst);

/* ---- flattening and classification ----------------------------------- */

struct ddt_iov { int64_t off; int64_t len; };
/** Merged blocks of count elements in packing order (offsets from origin).
 * @param iov may be NULL to count. @return number of blocks total (may
 *   exceed n; only n are written), or negative errno */
int64_t ddt_flatten(const struct ddt_type *t, int64_t count,
		    struct ddt_iov *iov, int64_t n);
/** Number of merged blocks of count elements, without materializing. */
int64_t ddt_count_blocks(const struct ddt_type *t, int64_t count);

/** Parameters a specialized handler needs (bytes; offsets from origin). */
struct ddt_class_info {
	enum ddt_class cls;
	int64_t blocklen;   /**< bytes per block (VECTOR, INDEXED_BLOCK, CONTIG) */
	int64_t stride;     /**< bytes between blocks (VECTOR) */
	int64_t nblocks;    /**< blocks per element */
	int64_t first_off;  /**< offset of the first block from origin */
	int64_t extent;     /**< element extent (next element's origin) */
	const int64_t *displs; /**< INDEXED_BLOCK: nblocks displacements in
				    bytes (owned by the type) */
};
/** Classify a committed type for `count` elements (a vector of count
 * elements whose extent continues the stride is still VECTOR). */
int ddt_classify(const struct ddt_type *t, int64_t count,
		 struct ddt_class_info *info_p);
const char *ddt_class_name(enum ddt_class c);

/** Message for errno values and DDT_E_* codes (sign ignored). */
const char *ddt_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif
