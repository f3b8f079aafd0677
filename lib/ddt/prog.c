/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The compiled form of a committed type (as MPICH's Yaksa and TEMPI do):
 * one element's blocks as a short list of ops in stream order, each a run
 * of equal blocks at a constant stride (vec) or at listed displacements
 * (idx), repeated n2 times stride2 apart. Inner loops have the block size
 * fixed at compile time (1, 2, 4, 8, 12, 16, 24, 32 B) and make no call per
 * block (other sizes up to 64 B: inline overlapping moves); a stream
 * offset maps to (op, repetition, block, byte) by one binary search over
 * the ops and two divisions (multiplies by reciprocals stored in the ops), so a range resumes in O(log ops) without a
 * checkpoint. Types it does not fit keep the segment engine.
 */
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

#define PROG_OPS_MAX (1 << 16)     /* ops of one element */
#define PROG_ARR_MAX (1 << 22)     /* int64 entries of displacements */
#define PROG_WORK_MAX (1 << 22)    /* loop instances visited at build */

static const int64_t kern_bl[DDT_KERN_COUNT] = {
	0, 1, 2, 4, 8, 12, 16, 24, 32,
};

int64_t ddt_prog_kern_bl(unsigned kern)
{
	return kern < DDT_KERN_COUNT ? kern_bl[kern] : -1;
}

static uint8_t kern_of(int64_t bl)
{
	for (int k = 1; k < DDT_KERN_COUNT; k++)
		if (kern_bl[k] == bl)
			return (uint8_t)k;
	return 0;
}

/* ---- build ------------------------------------------------------------ */

struct pbuild {
	const struct ddt_blob *b;
	struct ddt_op *ops;
	int64_t nops, cap;
	int64_t *arr;
	int64_t narr, acap;
	int64_t work;
	int err;
};

static int64_t *arr_take(struct pbuild *pb, int64_t n)
{
	int64_t at = pb->narr;

	if (pb->err || n > PROG_ARR_MAX - pb->narr) {
		pb->err = -E2BIG;
		return NULL;
	}
	if (pb->narr + n > pb->acap) {
		int64_t cap = pb->acap ? pb->acap : 64;
		int64_t *p;

		while (cap < pb->narr + n)
			cap *= 2;
		p = realloc(pb->arr, (size_t)cap * sizeof(*p));
		if (p == NULL) {
			pb->err = -ENOMEM;
			return NULL;
		}
		pb->arr = p;
		pb->acap = cap;
	}
	pb->narr += n;
	return pb->arr + at;
}

/* op b continues op a as its next repetition, or as more blocks */
static bool op_merge(struct ddt_op *a, const struct ddt_op *b)
{
	if (a->kind != b->kind || a->bl != b->bl || b->n2 != 1)
		return false;
	if (a->kind == DDT_OP_VEC && a->n2 == 1 && b->n == 1 &&
	    (a->n == 1 || b->off == a->off + a->n * a->stride)) {
		if (a->n == 1)
			a->stride = b->off - a->off;
		a->n++;
		a->rsize += b->rsize;
		return true;
	}
	if (a->n != b->n || a->arr != b->arr ||
	    (a->kind == DDT_OP_VEC && a->n > 1 && a->stride != b->stride))
		return false;
	if (a->n2 == 1)
		a->stride2 = b->off - a->off;
	else if (b->off != a->off + a->n2 * a->stride2)
		return false;
	a->n2++;
	return true;
}

static void op_add(struct pbuild *pb, const struct ddt_op *op)
{
	if (pb->err)
		return;
	if (pb->nops > 0 && op_merge(&pb->ops[pb->nops - 1], op))
		return;
	if (pb->nops == PROG_OPS_MAX) {
		pb->err = -E2BIG;
		return;
	}
	if (pb->nops == pb->cap) {
		int64_t cap = pb->cap ? pb->cap * 2 : 16;
		struct ddt_op *p = realloc(pb->ops, (size_t)cap * sizeof(*p));

		if (p == NULL) {
			pb->err = -ENOMEM;
			return;
		}
		pb->ops = p;
		pb->cap = cap;
	}
	pb->ops[pb->nops++] = *op;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b != 0) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* an indexed leaf: equal pieces of the blocks' common divisor when that
 * is a fixed kernel and at most doubles the blocks, else listed blocks */
static void leaf_indexed(struct pbuild *pb, const struct ddt_dl *l,
			 int64_t base)
{
	const int64_t *d = ddt_dl_arr(pb->b, l->displs);
	const int64_t *bls = ddt_dl_arr(pb->b, l->blocklens);
	struct ddt_op op = { .kind = DDT_OP_IDX, .n2 = 1, .off = base + l->off,
			     .rsize = l->size };
	int64_t g = 0, *a;

	for (int64_t k = 0; k < l->count; k++)
		g = gcd64(bls[k], g);
	if (kern_of(g) != 0 && l->size / g <= 2 * l->count) {
		op.bl = g;
		op.kern = kern_of(g);
		op.n = l->size / g;
		a = arr_take(pb, op.n);
		if (a == NULL)
			return;
		op.arr = a - pb->arr;
		for (int64_t k = 0; k < l->count; k++)
			for (int64_t p = 0; p < bls[k]; p += g)
				*a++ = d[k] + p;
		op_add(pb, &op);
		return;
	}
	/* displacements, lengths, packed prefix */
	op.kind = DDT_OP_IDXV;
	op.n = l->count;
	a = arr_take(pb, 3 * l->count + 1);
	if (a == NULL)
		return;
	op.arr = a - pb->arr;
	memcpy(a, d, (size_t)l->count * sizeof(*a));
	memcpy(a + l->count, bls, (size_t)l->count * sizeof(*a));
	memcpy(a + 2 * l->count, ddt_dl_arr(pb->b, l->prefix),
	       (size_t)(l->count + 1) * sizeof(*a));
	op_add(pb, &op);
}

static void leaf(struct pbuild *pb, const struct ddt_dl *l, int64_t base)
{
	struct ddt_op op = { .n2 = 1, .off = base + l->off, .rsize = l->size };
	int64_t *a;

	switch (l->kind) {
	case DDT_DL_CONTIG:
	case DDT_DL_VECTOR:
		op.kind = DDT_OP_VEC;
		op.bl = l->blocklen;
		op.n = l->count;
		op.stride = l->count > 1 ? l->stride : 0;
		break;
	case DDT_DL_BLOCKINDEXED:
		op.kind = DDT_OP_IDX;
		op.bl = l->blocklen;
		op.n = l->count;
		a = arr_take(pb, l->count);
		if (a == NULL)
			return;
		op.arr = a - pb->arr;
		memcpy(a, ddt_dl_arr(pb->b, l->displs),
		       (size_t)l->count * sizeof(*a));
		break;
	default:
		leaf_indexed(pb, l, base);
		return;
	}
	op.kern = kern_of(op.bl);
	op_add(pb, &op);
}

static void loop_ops(struct pbuild *pb, uint32_t li, int64_t base);

/* bl copies of child ci, ext apart, from base */
static void copies(struct pbuild *pb, uint32_t ci, int64_t base, int64_t bl)
{
	int64_t ext = ddt_dl_at(pb->b, ci)->extent;
	int64_t first = pb->nops, n;

	loop_ops(pb, ci, base);
	n = pb->nops - first;
	/* one op for the first copy: the others repeat it */
	if (!pb->err && bl > 1 && n == 1 && pb->ops[first].n2 == 1) {
		pb->ops[first].n2 = bl;
		pb->ops[first].stride2 = ext;
		return;
	}
	for (int64_t j = 1; j < bl && !pb->err; j++)
		loop_ops(pb, ci, base + j * ext);
}

static void loop_ops(struct pbuild *pb, uint32_t li, int64_t base)
{
	const struct ddt_dl *l = ddt_dl_at(pb->b, li);

	if (pb->err)
		return;
	if (++pb->work > PROG_WORK_MAX) {
		pb->err = -E2BIG;
		return;
	}
	if (l->leaf) {
		leaf(pb, l, base);
		return;
	}
	for (int64_t i = 0; i < l->count && !pb->err; i++)
		copies(pb, ddt_dl_child(pb->b, l, i),
		       base + ddt_dl_disp(pb->b, l, i), ddt_dl_bl(pb->b, l, i));
}

/* typed span of one repetition of op o, relative to its origin */
static void op_span(const struct ddt_prog *pg, struct ddt_op *o)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	if (o->kind == DDT_OP_VEC) {
		int64_t last = (o->n - 1) * o->stride;

		lo = last < 0 ? last : 0;
		hi = (last > 0 ? last : 0) + o->bl;
	} else {
		const int64_t *d = pg->arr + o->arr;

		for (int64_t k = 0; k < o->n; k++) {
			int64_t bl = o->kind == DDT_OP_IDX ? o->bl :
				d[o->n + k];

			lo = d[k] < lo ? d[k] : lo;
			hi = d[k] + bl > hi ? d[k] + bl : hi;
		}
	}
	o->tlo = lo;
	o->thi = hi;
}

static void op_to_d32(struct ddt_prog *pg, struct ddt_op *o);

/* arr slots op o's arrays take */
static int64_t op_slots(const struct ddt_op *o)
{
	if (o->kind == DDT_OP_IDXV)
		return 3 * o->n + 1;
	if (o->kind == DDT_OP_IDX)
		return o->d32 ? o->n / 2 + o->n % 2 : o->n;
	return 0;
}

/* Pack the ops' arrays into a pool of exactly their slots (int32
 * displacements take half). @return 0, -ENOMEM (pg unchanged) */
static int prog_compact(struct ddt_prog *pg)
{
	int64_t n = 0, at = 0, *a;

	for (int64_t o = 0; o < pg->nops; o++)
		n += op_slots(&pg->ops[o]);
	a = malloc((size_t)(n > 0 ? n : 1) * sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	for (int64_t o = 0; o < pg->nops; o++) {
		struct ddt_op *op = &pg->ops[o];
		int64_t k = op_slots(op);

		if (k == 0)
			continue;
		memcpy(a + at, pg->arr + op->arr, (size_t)k * sizeof(*a));
		op->arr = at;
		at += k;
	}
	free(pg->arr);
	pg->arr = a;
	pg->narr = n;
	return 0;
}

struct ddt_prog *ddt_prog_build(const struct ddt_blob *b)
{
	struct pbuild pb = { .b = b };
	struct ddt_prog *pg;

	if (b->h.size == 0 || b->h.nloops == 0)
		return ddt_err_null(EINVAL);
	loop_ops(&pb, 0, 0);
	pg = pb.err ? NULL : calloc(1, sizeof(*pg));
	if (pg != NULL)
		pg->pre = malloc((size_t)(pb.nops + 1) * sizeof(*pg->pre));
	if (pg == NULL || pg->pre == NULL) {
		free(pg);
		free(pb.ops);
		free(pb.arr);
		return ddt_err_null(pb.err ? -pb.err : ENOMEM);
	}
	pg->size = b->h.size;
	pg->extent = b->h.extent;
	pg->nops = pb.nops;
	pg->ops = pb.ops;
	pg->arr = pb.arr;
	pg->narr = pb.narr;
	pg->checksum = b->h.checksum;
	pg->m_size = ddt_prog_recip_of(pg->size);
	pg->pre[0] = 0;
	for (int64_t o = 0; o < pb.nops; o++) {
		struct ddt_op *op = &pg->ops[o];

		if (op->kind != DDT_OP_IDXV)
			op->rsize = op->n * op->bl;
		op->m_bl = ddt_prog_recip_of(op->bl);
		op->m_rs = ddt_prog_recip_of(op->rsize);
		op_span(pg, op);
		op_to_d32(pg, op);
		pg->pre[o + 1] = pg->pre[o] + op->n2 * op->rsize;
	}
	if (prog_compact(pg) < 0) {
		ddt_prog_free(pg);
		return ddt_err_null(ENOMEM);
	}
	return pg;
}

void ddt_prog_free(struct ddt_prog *pg)
{
	if (pg == NULL)
		return;
	free(pg->ops);
	free(pg->arr);
	free(pg->pre);
	free(pg);
}

int64_t ddt_prog_d32_max = INT32_MAX;
bool ddt_prog_recip = true;

uint64_t ddt_prog_recip_of(int64_t d)
{
	return ddt_prog_recip ? ddt_recip(d) : 0;
}

/* An IDX op's int32 displacements (d32), packed into its arr slots. */
static inline const int32_t *op_d32(const struct ddt_prog *pg,
				    const struct ddt_op *o)
{
	return (const int32_t *)(const void *)(pg->arr + o->arr);
}

/* Listed displacements of a fixed kernel as int32 when they fit: half the
 * bytes read per block (a 4 B block read 8 B of displacement). In place:
 * int32 k goes to byte 4k, after int64 k (byte 8k) was read. */
static void op_to_d32(struct ddt_prog *pg, struct ddt_op *o)
{
	int64_t *d;
	int32_t v;

	/* only listed ops have an array: a form without any has arr NULL,
	 * where even + 0 is undefined */
	if (o->kind != DDT_OP_IDX || o->kern == 0)
		return;
	d = pg->arr + o->arr;
	for (int64_t k = 0; k < o->n; k++)
		if (d[k] > ddt_prog_d32_max || d[k] < -ddt_prog_d32_max)
			return;
	for (int64_t k = 0; k < o->n; k++) {
		v = (int32_t)d[k];
		memcpy((uint8_t *)d + 4 * k, &v, sizeof(v));
	}
	o->d32 = 1;
}

/* ---- kernels ------------------------------------------------------------ */

#define VEC_KERN(K)                                                        \
static void vec_un_##K(uint8_t *t, const uint8_t *p, int64_t n,         \
		       int64_t stride)                                       \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(t + k * stride, p + k * K, K);                   \
}                                                                       \
static void vec_pk_##K(uint8_t *t, uint8_t *p, int64_t n, int64_t stride) \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(p + k * K, t + k * stride, K);                   \
}                                                                       \
static void idx_un_##K(uint8_t *t, const uint8_t *p, int64_t n,         \
		       const int64_t *d)                                    \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(t + d[k], p + k * K, K);                         \
}                                                                       \
static void idx_pk_##K(uint8_t *t, uint8_t *p, int64_t n,               \
		       const int64_t *d)                                    \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(p + k * K, t + d[k], K);                         \
}                                                                       \
static void i32_un_##K(uint8_t *t, const uint8_t *p, int64_t n,         \
		       const int32_t *d)                                    \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(t + d[k], p + k * K, K);                         \
}                                                                       \
static void i32_pk_##K(uint8_t *t, uint8_t *p, int64_t n,               \
		       const int32_t *d)                                    \
{                                                                       \
	_Pragma("GCC unroll 4")                                         \
	for (int64_t k = 0; k < n; k++)                                 \
		memcpy(p + k * K, t + d[k], K);                         \
}

VEC_KERN(1)
VEC_KERN(2)
VEC_KERN(4)
VEC_KERN(8)
VEC_KERN(12)
VEC_KERN(16)
VEC_KERN(24)
VEC_KERN(32)

/* 32 < n <= 64 bytes: 32-byte moves, the last one overlapping (src and
 * dst never overlap), no call */
static inline void copy_mid(uint8_t *d, const uint8_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 32 <= n; i += 32)
		memcpy(d + i, s + i, 32);
	if (i < n)
		memcpy(d + n - 32, s + n - 32, 32);
}

/* Above this libc's memcpy (AVX-512 here) beat 16-byte moves: 128 B
 * blocks lost ~10% inline */
#define MID_MAX 64

/* a block of up to MID_MAX bytes, inline */
static inline void copy_var(uint8_t *d, const uint8_t *s, size_t n)
{
	if (n <= 32)
		ddt_copy_small(d, s, n);
	else
		copy_mid(d, s, n);
}

static void vec_var(uint8_t *t, uint8_t *p, int64_t bl, int64_t n,
		    int64_t stride, bool unpack)
{
	for (int64_t k = 0; k < n; k++, t += stride, p += bl) {
		if (unpack)
			copy_var(t, p, (size_t)bl);
		else
			copy_var(p, t, (size_t)bl);
	}
}

typedef void (*vec_un_fn)(uint8_t *, const uint8_t *, int64_t, int64_t);
typedef void (*vec_pk_fn)(uint8_t *, uint8_t *, int64_t, int64_t);
typedef void (*idx_un_fn)(uint8_t *, const uint8_t *, int64_t,
			  const int64_t *);
typedef void (*idx_pk_fn)(uint8_t *, uint8_t *, int64_t, const int64_t *);

#define KTAB(pfx) { NULL, pfx##1, pfx##2, pfx##4, pfx##8, pfx##12,        \
		    pfx##16, pfx##24, pfx##32 }
static const vec_un_fn vec_un[DDT_KERN_COUNT] = KTAB(vec_un_);
static const vec_pk_fn vec_pk[DDT_KERN_COUNT] = KTAB(vec_pk_);
static const idx_un_fn idx_un[DDT_KERN_COUNT] = KTAB(idx_un_);
static const idx_pk_fn idx_pk[DDT_KERN_COUNT] = KTAB(idx_pk_);

typedef void (*i32_un_fn)(uint8_t *, const uint8_t *, int64_t,
			  const int32_t *);
typedef void (*i32_pk_fn)(uint8_t *, uint8_t *, int64_t, const int32_t *);
static const i32_un_fn i32_un[DDT_KERN_COUNT] = KTAB(i32_un_);
static const i32_pk_fn i32_pk[DDT_KERN_COUNT] = KTAB(i32_pk_);

/* Listed blocks of one size without a fixed kernel. Arguments, not
 * fields of the op: stores through t may alias it, the loop would reload
 * them per block. */
static void idx_any(uint8_t *t, uint8_t *p, int64_t bl, const int64_t *d,
		    int64_t nb, bool unpack)
{
	for (int64_t k = 0; k < nb; k++, p += bl) {
		if (bl <= MID_MAX && unpack)
			copy_var(t + d[k], p, (size_t)bl);
		else if (bl <= MID_MAX)
			copy_var(p, t + d[k], (size_t)bl);
		else if (unpack)
			memcpy(t + d[k], p, (size_t)bl);
		else
			memcpy(p, t + d[k], (size_t)bl);
	}
}

/* listed blocks of listed lengths */
static void idx_lens(uint8_t *t, uint8_t *p, const int64_t *d,
		     const int64_t *lens, int64_t nb, bool unpack)
{
	for (int64_t k = 0; k < nb; k++) {
		size_t n = (size_t)lens[k];

		if (unpack)
			ddt_copy_small(t + d[k], p, n);
		else
			ddt_copy_small(p, t + d[k], n);
		p += n;
	}
}

/* nb whole blocks k0.. of one repetition at t (the repetition's origin) */
static void op_blocks(const struct ddt_prog *pg, const struct ddt_op *o,
		      uint8_t *t, uint8_t *p, int64_t k0, int64_t nb,
		      bool unpack)
{
	const int64_t *d;

	switch (o->kind) {
	case DDT_OP_VEC:
		t += k0 * o->stride;
		if (o->kern && unpack)
			vec_un[o->kern](t, p, nb, o->stride);
		else if (o->kern)
			vec_pk[o->kern](t, p, nb, o->stride);
		else if (o->bl <= MID_MAX)
			vec_var(t, p, o->bl, nb, o->stride, unpack);
		else if (unpack)
			ddt_copy_scatter(t, p, o->bl, o->stride, nb);
		else
			ddt_copy_gather(p, t, o->bl, o->stride, nb);
		return;
	case DDT_OP_IDX:
		if (o->d32) {
			const int32_t *d4 = op_d32(pg, o) + k0;

			if (unpack)
				i32_un[o->kern](t, p, nb, d4);
			else
				i32_pk[o->kern](t, p, nb, d4);
			return;
		}
		d = pg->arr + o->arr + k0;
		if (o->kern && unpack) {
			idx_un[o->kern](t, p, nb, d);
			return;
		}
		if (o->kern) {
			idx_pk[o->kern](t, p, nb, d);
			return;
		}
		idx_any(t, p, o->bl, d, nb, unpack);
		return;
	default:
		d = pg->arr + o->arr + k0;
		idx_lens(t, p, d, d + o->n, nb, unpack);
		return;
	}
}

void ddt_copy_strided(void *dst, const void *src, int64_t bl, int64_t stride,
		      int64_t n)
{
	uint8_t k = kern_of(bl);

	if (k != 0)
		vec_un[k](dst, src, n, stride);
	else if (bl <= MID_MAX)
		vec_var(dst, (uint8_t *)(uintptr_t)src, bl, n, stride, true);
	else
		ddt_copy_scatter(dst, src, bl, stride, n);
}

/* block k's offset, bytes and packed offset in a repetition */
static inline void op_block(const struct ddt_prog *pg, const struct ddt_op *o,
			    int64_t k, int64_t *off_p, int64_t *bl_p,
			    int64_t *at_p)
{
	if (o->kind == DDT_OP_VEC) {
		*off_p = k * o->stride;
		*bl_p = o->bl;
		*at_p = k * o->bl;
	} else if (o->kind == DDT_OP_IDX) {
		*off_p = o->d32 ? op_d32(pg, o)[k] : pg->arr[o->arr + k];
		*bl_p = o->bl;
		*at_p = k * o->bl;
	} else {
		*off_p = pg->arr[o->arr + k];
		*bl_p = pg->arr[o->arr + o->n + k];
		*at_p = pg->arr[o->arr + 2 * o->n + k];
	}
}

/* block holding packed offset x of a repetition */
static int64_t op_find(const struct ddt_prog *pg, const struct ddt_op *o,
		       int64_t x)
{
	const int64_t *pre;
	int64_t lo = 0, hi = o->n - 1;

	if (o->kind != DDT_OP_IDXV)
		return ddt_div(x, o->bl, o->m_bl);
	pre = pg->arr + o->arr + 2 * o->n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;

		if (pre[mid] <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* part of a block: bytes [b, b + n) of block k of the repetition at t */
static void op_part(const struct ddt_prog *pg, const struct ddt_op *o,
		    uint8_t *t, uint8_t *p, int64_t k, int64_t b, int64_t n,
		    bool unpack)
{
	int64_t off, bl, at;

	op_block(pg, o, k, &off, &bl, &at);
	if (unpack)
		ddt_copy_small(t + off + b, p, (size_t)n);
	else
		ddt_copy_small(p, t + off + b, (size_t)n);
}

/* packed bytes [x, x + len) of one repetition at t, len > 0 */
static void op_piece(const struct ddt_prog *pg, const struct ddt_op *o,
		     uint8_t *t, uint8_t *p, int64_t x, int64_t len,
		     bool unpack)
{
	int64_t k = op_find(pg, o, x), off, bl, at, b, nb = 0;

	op_block(pg, o, k, &off, &bl, &at);
	b = x - at;
	if (b > 0 || len < bl) {
		int64_t n = bl - b < len ? bl - b : len;

		op_part(pg, o, t, p, k, b, n, unpack);
		p += n;
		len -= n;
		k++;
	}
	if (len == 0)
		return;
	if (o->kind != DDT_OP_IDXV) {
		nb = ddt_div(len, o->bl, o->m_bl);
	} else {
		const int64_t *pre = pg->arr + o->arr + 2 * o->n;
		int64_t x0 = pre[k];

		while (k + nb < o->n && pre[k + nb + 1] - x0 <= len)
			nb++;
	}
	if (nb > 0) {
		int64_t done = o->kind != DDT_OP_IDXV ? nb * o->bl :
			pg->arr[o->arr + 2 * o->n + k + nb] -
			pg->arr[o->arr + 2 * o->n + k];

		op_blocks(pg, o, t, p, k, nb, unpack);
		p += done;
		len -= done;
		k += nb;
	}
	if (len > 0)
		op_part(pg, o, t, p, k, 0, len, unpack);
}

/* ---- runs ----------------------------------------------------------------- */

/* A transpose: repetitions side by side, their blocks far apart (a
 * column of complex numbers per repetition, FFT2D). Block by block all of
 * them would touch a line per block and revisit it per repetition, with
 * every block in the same cache set; instead a tile of repetitions that
 * fills a line goes block by block, so each line is written in one visit. */
static bool vec_transposed(const struct ddt_op *o)
{
	return o->kind == DDT_OP_VEC && o->n2 > 1 && o->n > 1 &&
	       o->stride2 == o->bl && o->bl <= 32 &&
	       (o->stride >= 1024 || o->stride <= -1024);
}

static void vec_tiles(const struct ddt_op *o, uint8_t *t, uint8_t *p,
		      bool unpack)
{
	int64_t tile = 64 / o->bl;

	for (int64_t q0 = 0; q0 < o->n2; q0 += tile) {
		int64_t nq = o->n2 - q0 < tile ? o->n2 - q0 : tile;

		for (int64_t k = 0; k < o->n; k++) {
			uint8_t *tk = t + q0 * o->bl + k * o->stride;
			uint8_t *pk = p + q0 * o->rsize + k * o->bl;

			for (int64_t q = 0; q < nq; q++) {
				if (unpack)
					ddt_copy_small(tk + q * o->bl,
						       pk + q * o->rsize,
						       (size_t)o->bl);
				else
					ddt_copy_small(pk + q * o->rsize,
						       tk + q * o->bl,
						       (size_t)o->bl);
			}
		}
	}
}

void ddt_prog_whole(const struct ddt_prog *pg, int64_t count, uint8_t *typed,
		    uint8_t *packed, bool unpack)
{
	for (int64_t e = 0; e < count; e++) {
		uint8_t *te = typed + e * pg->extent;

		for (int64_t i = 0; i < pg->nops; i++) {
			const struct ddt_op *o = &pg->ops[i];
			uint8_t *t = te + o->off;

			if (vec_transposed(o)) {
				vec_tiles(o, t, packed, unpack);
				packed += o->n2 * o->rsize;
				continue;
			}
			for (int64_t q = 0; q < o->n2; q++) {
				op_blocks(pg, o, t, packed, 0, o->n, unpack);
				t += o->stride2;
				packed += o->rsize;
			}
		}
	}
}

/* op holding packed offset r of an element */
static int64_t prog_find(const struct ddt_prog *pg, int64_t r)
{
	int64_t lo = 0, hi = pg->nops - 1;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;

		if (pg->pre[mid] <= r)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* the repetition at typed offset torg lies inside bd */
static inline bool rep_inside(const struct ddt_op *op, int64_t torg,
			      const struct ddt_bounds *bd)
{
	int64_t a, z;

	return !__builtin_add_overflow(torg, op->tlo, &a) &&
	       !__builtin_add_overflow(torg, op->thi, &z) &&
	       a >= bd->lo && z <= bd->hi;
}

/* ddt_prog_range() from element @p e, packed offset @p r in it, op @p o
 * (where @p first is, already found) */
static int64_t range_at(const struct ddt_prog *pg, int64_t e, int64_t r,
			int64_t o, int64_t first, int64_t last, uint8_t *typed,
			uint8_t *p, bool unpack, const struct ddt_bounds *bd)
{
	while (first < last) {
		const struct ddt_op *op = &pg->ops[o];
		int64_t within = r - pg->pre[o];
		int64_t q = ddt_div(within, op->rsize, op->m_rs);
		int64_t x = within - q * op->rsize;
		int64_t n = op->rsize - x;
		int64_t torg = e * pg->extent + op->off + q * op->stride2;

		if (n > last - first)
			n = last - first;
		if (bd != NULL && !rep_inside(op, torg, bd))
			return first;
		op_piece(pg, op, typed + torg, p, x, n, unpack);
		p += n;
		first += n;
		r += n;
		if (r == pg->pre[o + 1] && ++o == pg->nops) {
			o = 0;
			e++;
			r = 0;
		}
	}
	return last;
}

int64_t ddt_prog_range(const struct ddt_prog *pg, int64_t first, int64_t last,
		       uint8_t *typed, uint8_t *p, bool unpack,
		       const struct ddt_bounds *bd)
{
	int64_t e = ddt_div(first, pg->size, pg->m_size), r = first - e * pg->size;

	return range_at(pg, e, r, prog_find(pg, r), first, last, typed, p,
			unpack, bd);
}

/*
 * A tile of @p nr repetitions q, q+1, ... of transposed op @p o (each
 * repetition's packed bytes at src[j]) into typed origin @p t of
 * repetition q: block row by block row, so each destination line is
 * written in one visit (vec_tiles() with a source per repetition).
 */
static void vec_tile_pieces(const struct ddt_op *o, uint8_t *t,
			    const uint8_t *const *src, unsigned nr)
{
	for (int64_t k = 0; k < o->n; k++) {
		uint8_t *tk = t + k * o->stride;
		int64_t pk = k * o->bl;

		if (o->bl == 16)
			for (unsigned j = 0; j < nr; j++)
				memcpy(tk + j * 16, src[j] + pk, 16);
		else
			for (unsigned j = 0; j < nr; j++)
				ddt_copy_small(tk + j * o->bl, src[j] + pk,
					       (size_t)o->bl);
	}
}

#define PIECE_TILE_MAX 16u

int64_t ddt_prog_range_pieces(const struct ddt_prog *pg, int64_t first,
			      const struct ddt_piece *pc, unsigned npc,
			      uint8_t *typed, const struct ddt_bounds *bd)
{
	unsigned k = 0;
	int64_t kp = 0; /* bytes of piece k done */

	while (k < npc) {
		int64_t left = pc[k].len - kp, e, r, o, within, q, x, end;
		int64_t reached;
		const struct ddt_op *op;

		if (left <= 0) {
			k++;
			kp = 0;
			continue;
		}
		e = ddt_div(first, pg->size, pg->m_size);
		r = first - e * pg->size;
		o = prog_find(pg, r);
		op = &pg->ops[o];
		within = r - pg->pre[o];
		q = ddt_div(within, op->rsize, op->m_rs);
		x = within - q * op->rsize;
		end = first + left;
		if (vec_transposed(op)) {
			const uint8_t *src[PIECE_TILE_MAX];
			int64_t tile = 64 / op->bl, torg, kkp = kp;
			unsigned nr = 0, kk = k;

			if (tile > (int64_t)PIECE_TILE_MAX)
				tile = PIECE_TILE_MAX;
			torg = e * pg->extent + op->off + q * op->stride2;
			/* whole repetitions from here, each in one piece */
			while (x == 0 && nr < tile && q + nr < op->n2) {
				while (kk < npc && pc[kk].len - kkp <= 0) {
					kk++;
					kkp = 0;
				}
				if (kk == npc || pc[kk].len - kkp < op->rsize ||
				    (bd != NULL &&
				     !rep_inside(op, torg + nr * op->stride2,
						 bd)))
					break;
				src[nr++] = (const uint8_t *)pc[kk].src + kkp;
				kkp += op->rsize;
			}
			if (nr >= 2) {
				vec_tile_pieces(op, typed + torg, src, nr);
				first += nr * op->rsize;
				k = kk;
				kp = kkp;
				continue;
			}
			/* this repetition alone: the next may start a tile */
			if (end > first + op->rsize - x)
				end = first + op->rsize - x;
		}
		reached = range_at(pg, e, r, o, first, end, typed,
				   (uint8_t *)(uintptr_t)pc[k].src + kp, true,
				   bd);
		if (reached != end)
			return reached;
		kp += end - first;
		first = end;
	}
	return first;
}
