/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ddt internals: the type object, the serialized dataloop format and the
 * segment state. Never installed.
 */
#ifndef SPINNIC_DDT_INTERNAL_H
#define SPINNIC_DDT_INTERNAL_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ddt.h"

#define DDT_UNUSED __attribute__((unused))
#define DDT_LIKELY(x) __builtin_expect(!!(x), 1)
#define DDT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/*
 * Largest magnitude of any offset, span or stream length a committed type
 * may have. Keeping every value below 2^61 lets the segment engine add a
 * handful of validated terms without overflow checks on the fast path.
 */
#define DDT_SPAN_MAX ((int64_t)1 << 61)

/* ---- type object ------------------------------------------------------ */

struct ddt_type {
	int refcnt;                /* < 0: static elementary type */
	enum ddt_combiner comb;
	enum ddt_base base;        /* NAMED */
	int64_t count;             /* count / ndims */
	int64_t blocklen;
	int64_t stride;
	int64_t *blocklens;
	int64_t *displs;
	int64_t *sizes, *subsizes, *starts;
	enum ddt_order order;
	int64_t rlb, rextent;      /* RESIZED arguments */
	struct ddt_type **types;   /* inputs (references held) */
	int64_t ntypes;
	struct ddt_type *inner;    /* SUBARRAY: equivalent resized hvectors */

	/* computed at construction; bounds are MPICH 4.0's (lib/ddt README) */
	int64_t size;
	int64_t lb, ub;            /* with resized bounds, struct padding */
	int64_t tlb, tub;          /* MPI true bounds (may lie past the data) */
	int64_t dlb, dub;          /* bytes of data (0,0 when size == 0) */
	bool zerolen;              /* MPICH's empty type: all bounds 0 */
	/* MPICH's object for this type (one for types it cannot tell apart):
	 * a struct whose members all have the same one is an hindexed */
	const struct ddt_type *same;
	int align;                 /* struct padding unit */
	int depth;

	/* commit */
	void *blob;                /* serialized dataloops, 8-byte aligned */
	int64_t nblocks;           /* ddt_num_blocks() cache, valid if > 0 */
	size_t blob_len;
	int64_t *cls_displs;       /* ddt_classify() INDEXED_BLOCK displs */
	struct ddt_prog *prog;     /* compiled at commit; NULL: segments */
};

/* types.c */
int64_t ddt_base_size(enum ddt_base b);
const char *ddt_base_name(enum ddt_base b);
/* Turn the constructors' depth limit off (false) and on again (true). */
void ddt_depth_check(bool on);

/* ---- serialized dataloops (the blob) ---------------------------------- */

#define DDT_BLOB_MAGIC 0x42544444u /* "DDTB" */
#define DDT_BLOB_VERSION 1

enum ddt_dl_kind {
	DDT_DL_CONTIG = 1, /* one block of blocklen children (count == 1) */
	DDT_DL_VECTOR,     /* count blocks of blocklen at off + i*stride */
	DDT_DL_BLOCKINDEXED, /* count blocks of blocklen at off + displs[i] */
	DDT_DL_INDEXED,    /* count blocks of blocklens[i] at off + displs[i] */
	DDT_DL_STRUCT,     /* as INDEXED, with children[i] per block */
};

/*
 * One dataloop. A leaf's blocks are bytes; a non-leaf block i holds
 * blocklen(i) copies of the child spaced child->extent apart. Arrays are
 * byte offsets into the blob (0 when absent); children are loop indices,
 * always larger than the parent's index (so no cycles).
 */
struct ddt_dl {
	uint8_t kind;
	uint8_t leaf;
	uint16_t depth;     /* 1 for a leaf; > every child's depth */
	uint32_t child;     /* non-leaf, non-struct */
	int64_t count;      /* number of blocks */
	int64_t blocklen;   /* CONTIG, VECTOR, BLOCKINDEXED */
	int64_t stride;     /* VECTOR */
	int64_t off;        /* added to every block displacement */
	int64_t size;       /* packed bytes of one instance */
	int64_t extent;     /* distance between copies placed by a parent */
	int64_t tlb, tub;   /* data span relative to the instance origin */
	uint32_t displs;    /* int64[count]: BLOCKINDEXED, INDEXED, STRUCT */
	uint32_t blocklens; /* int64[count]: INDEXED, STRUCT */
	uint32_t prefix;    /* int64[count+1] packed offsets: INDEXED, STRUCT */
	uint32_t children;  /* uint32[count]: STRUCT */
};

struct ddt_blob_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t depth;     /* root loop depth */
	uint32_t nloops;    /* loop table follows the header; root is 0 */
	uint32_t pad;
	uint64_t len;       /* total blob bytes */
	int64_t size, extent, lb, true_lb, true_ub;
	int64_t reserved;
	uint32_t checksum;  /* FNV-1a over the blob with this field zero */
	uint32_t pad2;
};

/* A loaded blob is the header itself (the view points into the buffer). */
struct ddt_blob {
	struct ddt_blob_hdr h;
};

static inline const struct ddt_dl *ddt_dl_at(const struct ddt_blob *b,
					     uint32_t idx)
{
	return (const struct ddt_dl *)((const uint8_t *)b + sizeof(b->h)) + idx;
}

static inline const int64_t *ddt_dl_arr(const struct ddt_blob *b, uint32_t off)
{
	return (const int64_t *)((const uint8_t *)b + off);
}

static inline const uint32_t *ddt_dl_arr32(const struct ddt_blob *b,
					   uint32_t off)
{
	return (const uint32_t *)((const uint8_t *)b + off);
}

static inline int64_t ddt_dl_bl(const struct ddt_blob *b,
				const struct ddt_dl *l, int64_t i)
{
	if (l->kind <= DDT_DL_BLOCKINDEXED)
		return l->blocklen;
	return ddt_dl_arr(b, l->blocklens)[i];
}

static inline int64_t ddt_dl_disp(const struct ddt_blob *b,
				  const struct ddt_dl *l, int64_t i)
{
	if (l->kind <= DDT_DL_VECTOR)
		return l->off + i * l->stride;
	return l->off + ddt_dl_arr(b, l->displs)[i];
}

static inline uint32_t ddt_dl_child(const struct ddt_blob *b,
				    const struct ddt_dl *l, int64_t i)
{
	if (l->kind == DDT_DL_STRUCT)
		return ddt_dl_arr32(b, l->children)[i];
	return l->child;
}

/* dataloop.c */
int ddt_build_blob(const struct ddt_type *t, void **blob_p, size_t *len_p);
uint32_t ddt_blob_checksum(const void *buf, size_t len);

static inline const struct ddt_blob *ddt_type_blob(const struct ddt_type *t)
{
	return (const struct ddt_blob *)t->blob;
}

/* ---- segment ----------------------------------------------------------- */

struct ddt_seg_frame {
	uint32_t loop;
	uint32_t pad;
	int64_t i;    /* block */
	int64_t j;    /* child copy in block; leaf: byte in block */
	int64_t base; /* buffer offset of this loop instance's origin */
};

#define DDT_SEG_MAGIC 0x53454744u /* "DGES" */

/* The copyable state: header then `nframes` frames. */
struct ddt_seg_state {
	uint32_t magic;
	uint32_t checksum;   /* blob checksum: restore checks the type */
	uint16_t nframes;    /* capacity (blob depth) */
	uint16_t sp;         /* frames in use; 0 at the end of the stream */
	uint32_t pad;
	int64_t count;
	int64_t pos;         /* stream bytes processed */
	int64_t elem;        /* current top-level element */
	struct ddt_seg_frame f[];
};

struct ddt_segment {
	const struct ddt_blob *b;
	struct ddt_type *t;      /* reference keeping b alive, or NULL */
	int64_t total;
	size_t state_size;
	struct ddt_seg_state st; /* must be last */
};

enum ddt_seg_mode {
	DDT_MODE_UNPACK,
	DDT_MODE_PACK,
	DDT_MODE_BLOCKS,
	DDT_MODE_SKIP,
	DDT_MODE_COUNT, /* arg is a struct ddt_count */
	DDT_MODE_VBLOCKS, /* arg is a struct ddt_vblocks */
	DDT_MODE_UNPACK_BOUNDED, /* arg is a struct ddt_bounds */
};

/* Where DDT_MODE_UNPACK_BOUNDED may write: typed offsets [lo, hi). */
struct ddt_bounds {
	int64_t lo, hi;
	bool bad; /* a block fell outside: stopped before writing it */
};

/* Callbacks of DDT_MODE_VBLOCKS (ddt_segment_blocks_strided). */
struct ddt_vblocks {
	ddt_block_fn fn;
	ddt_strided_fn sfn;
	void *arg;
};

/* Merged-block counter for DDT_MODE_COUNT. */
struct ddt_count {
	int64_t n;
	int64_t end;
	bool any;
};

/* segment.c */
void ddt_seg_init(struct ddt_segment *s, const struct ddt_blob *b,
		  int64_t count);
void ddt_seg_seek(struct ddt_segment *s, int64_t target);
int ddt_seg_run(struct ddt_segment *s, int mode, int64_t last,
		const uint8_t *src, uint8_t *dst, int64_t src_first,
		ddt_block_fn fn, void *arg);
size_t ddt_seg_size(const struct ddt_blob *b);
int ddt_seg_total(const struct ddt_blob *b, int64_t count, int64_t *total_p);

/* pack.c: copy kernels shared with the segment engine */
/* Destination bytes from which non-temporal stores are used (the timing
 * program changes it to compare). */
extern int64_t ddt_nt_min_total;
void ddt_copy_scatter(uint8_t *dst, const uint8_t *src, int64_t bl,
		      int64_t stride, int64_t n);
void ddt_copy_gather(uint8_t *dst, const uint8_t *src, int64_t bl,
		     int64_t stride, int64_t n);

/* Copy n bytes, inline for small n (overlapping loads and stores). */
static inline void ddt_copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t a, b;

	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n > 16 && n <= 32) {
		uint64_t c, e;

		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(&c, s + n - 16, 8);
		memcpy(&e, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(d + n - 16, &c, 8);
		memcpy(d + n - 8, &e, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t x, y;

		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		memcpy(d, s, n);
	}
}

/* ---- compiled form (prog.c) ------------------------------------------ */

enum ddt_op_kind {
	DDT_OP_VEC,  /* n blocks of bl at off + k * stride */
	DDT_OP_IDX,  /* n blocks of bl at off + displs[k] */
	DDT_OP_IDXV, /* n blocks of lens[k] at off + displs[k] */
};

/* kernels by block size: 0 any, then 1, 2, 4, 8, 12, 16, 24, 32 bytes */
#define DDT_KERN_COUNT 9

/* One op: n2 repetitions stride2 apart of a run of n blocks. */
struct ddt_op {
	uint8_t kind;
	uint8_t kern;      /* fixed-size kernel, 0: generic */
	uint8_t d32;       /* IDX with a fixed kernel: displacements are
			      int32, packed two per arr slot */
	int64_t bl;        /* block bytes (IDXV: 0) */
	int64_t n;         /* blocks of one repetition */
	int64_t stride;    /* VEC */
	int64_t off;       /* typed offset of repetition 0 in the element */
	int64_t n2, stride2;
	int64_t rsize;     /* packed bytes of one repetition */
	int64_t arr;       /* IDX: displs; IDXV: displs, lens, prefix[n+1] */
	int64_t tlo, thi;  /* typed span of one repetition, from its origin */
	uint64_t m_bl, m_rs; /* ddt_recip() of bl and rsize */
};

struct ddt_prog {
	int64_t size, extent;  /* of one element */
	int64_t nops;
	struct ddt_op *ops;
	int64_t *pre;          /* nops + 1 packed offsets of the ops */
	int64_t *arr;
	int64_t narr;
	uint64_t m_size;       /* ddt_recip(size) */
	uint32_t checksum;     /* of the blob it was compiled from */
};

/* "DDT2": ops and header carry the reciprocals of their divisors */
#define DDT_PROG_MAGIC 0x32544444u

/* Serialized form: this header, ops[nops], pre[nops + 1], arr[narr]. */
struct ddt_prog_hdr {
	uint32_t magic;
	uint32_t checksum;     /* of the blob it was compiled from */
	uint64_t len;
	int64_t nops, narr, size, extent;
	uint64_t m_size;       /* ddt_recip(size) */
};

/*
 * The reciprocal of divisor d for ddt_div(): ceil(2^64 / d) when d > 2 is
 * not a power of two and below 2^32, else 0 (a shift or a divide does).
 * Then floor(a / d) is the high half of a * m for every 0 <= a < 2^32
 * (Lemire, Kaser, Kurz, "Faster remainder by direct computation", 2019,
 * Theorem 1 with N = 32, F = 64): one multiply instead of a divide.
 */
static inline uint64_t ddt_recip(int64_t d)
{
	if (d < 3 || (d & (d - 1)) == 0 || d > (int64_t)UINT32_MAX)
		return 0;
	return UINT64_MAX / (uint64_t)d + 1;
}

/*
 * a / d for 0 <= a, 0 < d, m = ddt_recip(d): the divisions of resuming a
 * range. A quotient of 0 (an offset within the first element, repetition
 * or block) needs none, a 32-bit dividend a multiply by m, a power of two
 * a shift; only a dividend past 4 GiB divides (32-bit divides by 48 B or
 * 768 B blocks were ~30% of the resume on comb_y).
 */
static inline int64_t ddt_div(int64_t a, int64_t d, uint64_t m)
{
	if (a < d)
		return 0;
	if (m != 0 && (uint64_t)a <= UINT32_MAX)
		return (int64_t)(((unsigned __int128)(uint64_t)a * m) >> 64);
	if ((d & (d - 1)) == 0)
		return a >> __builtin_ctzll((uint64_t)d);
	if ((uint64_t)a <= UINT32_MAX && d <= (int64_t)UINT32_MAX)
		return (int64_t)((uint32_t)a / (uint32_t)d);
	return a / d;
}

/* Largest displacement magnitude stored as int32 (tests lower it to reach
 * the int64 kernels). */
extern int64_t ddt_prog_d32_max;
/* Whether forms compiled and checked from now on carry reciprocals
 * (default; tests and spinnic-bench's SPINNIC_BENCH_DDT_RECIP=0 clear it
 * to run the plain divisions). */
extern bool ddt_prog_recip;
/* ddt_recip(@p d) when ddt_prog_recip, else 0 */
uint64_t ddt_prog_recip_of(int64_t d);
/* Block bytes of fixed kernel @p kern (0: any), -1 when there is none. */
int64_t ddt_prog_kern_bl(unsigned kern);
/* Compile one element of @p b. NULL, errno E2BIG when it does not fit. */
struct ddt_prog *ddt_prog_build(const struct ddt_blob *b);
void ddt_prog_free(struct ddt_prog *pg);
/* Whole elements between typed (element 0's origin) and packed. */
void ddt_prog_whole(const struct ddt_prog *pg, int64_t count, uint8_t *typed,
		    uint8_t *packed, bool unpack);
/* Stream bytes [first, last) (within count elements) between typed and
 * p (stream offset first). With bd, a repetition not inside [lo, hi) of
 * typed stops the range before it is written. @return the stream offset
 * reached (last, or where bd stopped it) */
int64_t ddt_prog_range(const struct ddt_prog *pg, int64_t first, int64_t last,
		       uint8_t *typed, uint8_t *p, bool unpack,
		       const struct ddt_bounds *bd);

/* ddt_prog_range() for stream bytes from @p first in @p npc pieces that
 * follow each other in the stream, unpacking; transposed ops whose
 * repetitions each lie in one piece go in tiles across pieces.
 * @return the stream offset reached */
int64_t ddt_prog_range_pieces(const struct ddt_prog *pg, int64_t first,
			      const struct ddt_piece *pc, unsigned npc,
			      uint8_t *typed, const struct ddt_bounds *bd);

/* flatten.c */
int64_t ddt_blob_count_blocks(const struct ddt_blob *b, int64_t count);

/* errno-style helpers */
static inline void *ddt_err_null(int e)
{
	errno = e;
	return NULL;
}

#endif
