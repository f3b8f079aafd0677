/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype constructors (MPI semantics), queries, reference counting,
 * constructor contents and error strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

/* `cls`: the elementary type MPICH 4.0 does not tell b apart from (signed
 * and unsigned integers of one size are one type to it) */
#define BASE(b, sz, al, cls) \
	[b] = { .refcnt = -1, .comb = DDT_COMBINER_NAMED, .base = b, \
		.size = sz, .lb = 0, .ub = sz, .tlb = 0, .tub = sz, \
		.dlb = 0, .dub = sz, .same = &base_types[cls], \
		.align = al, .depth = 1 }

static struct ddt_type base_types[DDT_BASE_COUNT] = {
	BASE(DDT_BYTE, 1, 1, DDT_BYTE),
	BASE(DDT_CHAR, 1, 1, DDT_CHAR),
	BASE(DDT_INT8, 1, 1, DDT_INT8),
	BASE(DDT_UINT8, 1, 1, DDT_UINT8),
	BASE(DDT_INT16, 2, 2, DDT_INT16),
	BASE(DDT_UINT16, 2, 2, DDT_INT16),
	BASE(DDT_INT32, 4, 4, DDT_INT32),
	BASE(DDT_UINT32, 4, 4, DDT_INT32),
	BASE(DDT_INT64, 8, 8, DDT_INT64),
	BASE(DDT_UINT64, 8, 8, DDT_INT64),
	BASE(DDT_FLOAT, 4, 4, DDT_FLOAT),
	BASE(DDT_DOUBLE, 8, 8, DDT_DOUBLE),
	BASE(DDT_COMPLEX, 8, 4, DDT_COMPLEX),
	BASE(DDT_DOUBLE_COMPLEX, 16, 8, DDT_DOUBLE_COMPLEX),
};

/* what every zero-length type is the same as */
static const struct ddt_type zerolen_same;

static const char *const base_names[DDT_BASE_COUNT] = {
	"byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32",
	"int64", "uint64", "float", "double", "complex", "double_complex",
};

/* > 0 while subarray builds its internal equivalent (depth not checked) */
static __thread int internal_build;

void ddt_depth_check(bool on)
{
	internal_build += on ? -1 : 1;
}

int64_t ddt_base_size(enum ddt_base b)
{
	return base_types[b].size;
}

const char *ddt_base_name(enum ddt_base b)
{
	if ((unsigned)b >= DDT_BASE_COUNT)
		return NULL;
	return base_names[b];
}

struct ddt_type *ddt_base(enum ddt_base b)
{
	if ((unsigned)b >= DDT_BASE_COUNT)
		return ddt_err_null(EINVAL);
	return &base_types[b];
}

/* A negative count marks a built-in type (never freed); others are
 * counted atomically, so even the sign test is an atomic load (a plain
 * read racing another thread's add is a data race: TSan saw it with the
 * layout cache's preparation thread). */
struct ddt_type *ddt_ref(struct ddt_type *t)
{
	if (t != NULL && __atomic_load_n(&t->refcnt, __ATOMIC_RELAXED) >= 0)
		__atomic_add_fetch(&t->refcnt, 1, __ATOMIC_RELAXED);
	return t;
}

void ddt_free(struct ddt_type *t)
{
	if (t == NULL || __atomic_load_n(&t->refcnt, __ATOMIC_RELAXED) < 0)
		return;
	if (__atomic_sub_fetch(&t->refcnt, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (int64_t i = 0; i < t->ntypes; i++)
		ddt_free(t->types[i]);
	ddt_free(t->inner);
	free(t->types);
	free(t->blocklens);
	free(t->displs);
	free(t->sizes);
	free(t->subsizes);
	free(t->starts);
	free(t->blob);
	free(t->cls_displs);
	ddt_prog_free(t->prog);
	free(t);
}

/* ---- bounds accumulation ----------------------------------------------
 * MPICH 4.0 (its yaksa engine) decides bounds and true bounds, per block of
 * bl copies of c at displacement d: the block spans [d + lb(c),
 * d + lb(c) + bl * extent(c)], a zero-length block included (an empty
 * interval there), and its true bounds are those shifted by c's distance
 * between true and plain bounds, so a member without data still places
 * true bounds. indexed and struct skip blocks of length 0, vector and
 * indexed_block do not. A constructor whose count times size(c) (sum of
 * blocks times sizes) is 0 makes MPICH's zero-length type instead: every
 * bound 0. The MPI standard has the true bounds of the data only (MPI-4.0
 * 5.1.8); lib/ddt keeps those too, as dlb/dub. */

struct bacc {
	bool ovf;
	bool any, data;
	int64_t lb, ub, tlb, tub; /* over the blocks that count */
	int64_t dmin, dmax;       /* data */
	int64_t size;
	int align, depth;
	bool pad;                 /* struct: round the extent to align */
};

static int64_t add(struct bacc *a, int64_t x, int64_t y)
{
	int64_t r;

	if (__builtin_add_overflow(x, y, &r))
		a->ovf = true;
	return r;
}

static int64_t sub(struct bacc *a, int64_t x, int64_t y)
{
	int64_t r;

	if (__builtin_sub_overflow(x, y, &r))
		a->ovf = true;
	return r;
}

static int64_t mul(struct bacc *a, int64_t x, int64_t y)
{
	int64_t r;

	if (__builtin_mul_overflow(x, y, &r))
		a->ovf = true;
	return r;
}

static void bacc_init(struct bacc *a)
{
	memset(a, 0, sizeof(*a));
	a->align = 1;
}

static void minmax(bool first, int64_t lo, int64_t hi, int64_t *min,
		   int64_t *max)
{
	if (first || lo < *min)
		*min = lo;
	if (first || hi > *max)
		*max = hi;
}

/* A block of bl copies of c at byte displacement d (copies c's extent
 * apart). `sizes`: add the block's bytes to the size (vector and friends
 * call this for the first and last block only); `bounds`: the block counts
 * for the bounds (see above). */
static void bacc_block(struct bacc *a, int64_t d, int64_t bl,
		       const struct ddt_type *c, bool sizes, bool bounds)
{
	int64_t ext = c->ub - c->lb;

	if (c->depth > a->depth)
		a->depth = c->depth;
	if (sizes)
		a->size = add(a, a->size, mul(a, bl, c->size));
	if (bl > 0 && c->size > 0) {
		int64_t span = mul(a, bl - 1, ext);

		minmax(!a->data, add(a, d, c->dlb),
		       add(a, add(a, d, span), c->dub), &a->dmin, &a->dmax);
		a->data = true;
	}
	if (bounds) {
		int64_t lo = add(a, d, c->lb);
		int64_t hi = add(a, lo, mul(a, bl, ext));

		minmax(!a->any, lo, hi, &a->lb, &a->ub);
		minmax(!a->any, add(a, lo, sub(a, c->tlb, c->lb)),
		       add(a, hi, sub(a, c->tub, c->ub)), &a->tlb, &a->tub);
		a->any = true;
	}
}

static struct ddt_type *type_new(enum ddt_combiner comb, int64_t ntypes)
{
	struct ddt_type *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return NULL;
	t->refcnt = 1;
	t->comb = comb;
	t->same = t;
	if (ntypes > 0) {
		t->types = calloc((size_t)ntypes, sizeof(*t->types));
		if (t->types == NULL) {
			free(t);
			return NULL;
		}
	}
	return t;
}

static int64_t *dup_arr(const int64_t *a, int64_t n, bool *fail)
{
	int64_t *r;

	if (n == 0 || a == NULL)
		return NULL;
	r = malloc((size_t)n * sizeof(*r));
	if (r == NULL) {
		*fail = true;
		return NULL;
	}
	memcpy(r, a, (size_t)n * sizeof(*r));
	return r;
}

/* Apply the accumulated bounds to t (MPICH's zero-length type when it holds
 * no bytes and `zerolen`); frees t and sets errno on error. */
static struct ddt_type *finish(struct ddt_type *t, struct bacc *a,
			       bool zerolen)
{
	int depth = a->depth + 1;

	if (!internal_build && depth > DDT_MAX_DEPTH) {
		ddt_free(t);
		return ddt_err_null(DDT_E_DEPTH);
	}
	t->depth = depth;
	t->size = a->size;
	t->dlb = a->data ? a->dmin : 0;
	t->dub = a->data ? a->dmax : 0;
	if (zerolen && a->size == 0) {
		t->zerolen = true;
		t->same = &zerolen_same;
		t->align = 1;
		t->lb = t->ub = t->tlb = t->tub = 0;
	} else {
		t->align = a->align;
		t->lb = a->lb;
		t->ub = a->ub;
		t->tlb = a->tlb;
		t->tub = a->tub;
	}
	if (!t->zerolen && a->pad && t->align > 1) {
		int64_t ext = sub(a, t->ub, t->lb);
		int64_t rem = ext % t->align;

		if (rem != 0)
			t->ub = add(a, t->ub, t->align - rem);
	}
	(void)sub(a, t->ub, t->lb);
	(void)sub(a, t->tub, t->tlb);
	if (t->ub < t->lb)
		a->ovf = true;
	if (a->ovf) {
		ddt_free(t);
		return ddt_err_null(DDT_E_OVERFLOW);
	}
	return t;
}

static struct ddt_type *fail_nomem(struct ddt_type *t)
{
	ddt_free(t);
	return ddt_err_null(ENOMEM);
}

/* ---- constructors ------------------------------------------------------ */

/* hvector with all arguments in bytes: shared by contiguous/vector/hvector */
static struct ddt_type *mk_hvector(enum ddt_combiner comb, int64_t count,
				   int64_t blocklen, int64_t stride_bytes,
				   int64_t stride_arg, struct ddt_type *old)
{
	struct ddt_type *t;
	struct bacc a;

	if (old == NULL || count < 0 || blocklen < 0)
		return ddt_err_null(EINVAL);
	t = type_new(comb, 1);
	if (t == NULL)
		return ddt_err_null(ENOMEM);
	t->types[0] = ddt_ref(old);
	t->ntypes = 1;
	t->count = count;
	t->blocklen = blocklen;
	t->stride = stride_arg;
	bacc_init(&a);
	a.align = old->align;
	/* MPICH makes one copy of one element the element itself */
	if (count == 1 && blocklen == 1)
		t->same = old->same;
	if (count > 0) {
		a.size = mul(&a, count, mul(&a, blocklen, old->size));
		bacc_block(&a, 0, blocklen, old, false, true);
		bacc_block(&a, mul(&a, count - 1, stride_bytes), blocklen, old,
			   false, true);
	} else {
		bacc_block(&a, 0, 0, old, false, false);
	}
	/* zero-length when count * size(old) is 0, not when blocklen is */
	return finish(t, &a, count == 0 || old->size == 0);
}

struct ddt_type *ddt_contiguous(int64_t count, struct ddt_type *old)
{
	if (old == NULL)
		return ddt_err_null(EINVAL);
	return mk_hvector(DDT_COMBINER_CONTIGUOUS, count, 1,
			  old->ub - old->lb, 0, old);
}

struct ddt_type *ddt_vector(int64_t count, int64_t blocklen, int64_t stride,
			    struct ddt_type *old)
{
	int64_t sb;

	if (old == NULL)
		return ddt_err_null(EINVAL);
	if (__builtin_mul_overflow(stride, old->ub - old->lb, &sb))
		return ddt_err_null(DDT_E_OVERFLOW);
	return mk_hvector(DDT_COMBINER_VECTOR, count, blocklen, sb, stride,
			  old);
}

struct ddt_type *ddt_hvector(int64_t count, int64_t blocklen,
			     int64_t stride_bytes, struct ddt_type *old)
{
	return mk_hvector(DDT_COMBINER_HVECTOR, count, blocklen, stride_bytes,
			  stride_bytes, old);
}

/* indexed family: blocklens == NULL means every block has `blocklen` */
static struct ddt_type *mk_indexed(enum ddt_combiner comb, int64_t count,
				   const int64_t *blocklens, int64_t blocklen,
				   const int64_t *displs, bool in_extents,
				   struct ddt_type *old)
{
	struct ddt_type *t;
	struct bacc a;
	bool fail = false;
	int64_t ext;

	if (old == NULL || count < 0 || (count > 0 && displs == NULL) ||
	    (blocklens == NULL && blocklen < 0))
		return ddt_err_null(EINVAL);
	for (int64_t i = 0; blocklens != NULL && i < count; i++)
		if (blocklens[i] < 0)
			return ddt_err_null(EINVAL);
	t = type_new(comb, 1);
	if (t == NULL)
		return ddt_err_null(ENOMEM);
	t->types[0] = ddt_ref(old);
	t->ntypes = 1;
	t->count = count;
	t->blocklen = blocklen;
	t->blocklens = dup_arr(blocklens, count, &fail);
	t->displs = dup_arr(displs, count, &fail);
	if (fail)
		return fail_nomem(t);
	ext = old->ub - old->lb;
	bacc_init(&a);
	a.align = old->align;
	bacc_block(&a, 0, 0, old, false, false);
	for (int64_t i = 0; i < count; i++) {
		int64_t bl = blocklens != NULL ? blocklens[i] : blocklen;
		int64_t d = in_extents ? mul(&a, displs[i], ext) : displs[i];

		/* indexed skips empty blocks, indexed_block has none or all */
		bacc_block(&a, d, bl, old, true, blocklens == NULL || bl > 0);
		if (count == 1 && bl == 1 && d == 0)
			t->same = old->same;
	}
	/* indexed_block is zero-length by count * size(old) alone */
	return finish(t, &a, blocklens != NULL || count == 0 ||
			     old->size == 0);
}

struct ddt_type *ddt_indexed(int64_t count, const int64_t *blocklens,
			     const int64_t *displs, struct ddt_type *old)
{
	if (count > 0 && blocklens == NULL)
		return ddt_err_null(EINVAL);
	return mk_indexed(DDT_COMBINER_INDEXED, count, blocklens, 0, displs,
			  true, old);
}

struct ddt_type *ddt_hindexed(int64_t count, const int64_t *blocklens,
			      const int64_t *displs_bytes, struct ddt_type *old)
{
	if (count > 0 && blocklens == NULL)
		return ddt_err_null(EINVAL);
	return mk_indexed(DDT_COMBINER_HINDEXED, count, blocklens, 0,
			  displs_bytes, false, old);
}

struct ddt_type *ddt_indexed_block(int64_t count, int64_t blocklen,
				   const int64_t *displs, struct ddt_type *old)
{
	return mk_indexed(DDT_COMBINER_INDEXED_BLOCK, count, NULL, blocklen,
			  displs, true, old);
}

struct ddt_type *ddt_hindexed_block(int64_t count, int64_t blocklen,
				    const int64_t *displs_bytes,
				    struct ddt_type *old)
{
	return mk_indexed(DDT_COMBINER_HINDEXED_BLOCK, count, NULL, blocklen,
			  displs_bytes, false, old);
}

struct ddt_type *ddt_struct(int64_t count, const int64_t *blocklens,
			    const int64_t *displs_bytes,
			    struct ddt_type *const *types)
{
	struct ddt_type *t;
	struct bacc a;
	bool fail = false;

	if (count < 0 || (count > 0 && (blocklens == NULL ||
					displs_bytes == NULL ||
					types == NULL)))
		return ddt_err_null(EINVAL);
	for (int64_t i = 0; i < count; i++)
		if (blocklens[i] < 0 || types[i] == NULL)
			return ddt_err_null(EINVAL);
	t = type_new(DDT_COMBINER_STRUCT, count);
	if (t == NULL)
		return ddt_err_null(ENOMEM);
	t->count = count;
	for (int64_t i = 0; i < count; i++)
		t->types[i] = ddt_ref(types[i]);
	t->ntypes = count;
	t->blocklens = dup_arr(blocklens, count, &fail);
	t->displs = dup_arr(displs_bytes, count, &fail);
	if (fail)
		return fail_nomem(t);
	bacc_init(&a);
	for (int64_t i = 0; i < count; i++) {
		bacc_block(&a, displs_bytes[i], blocklens[i], types[i], true,
			   blocklens[i] > 0);
		if (blocklens[i] > 0 && types[i]->align > a.align)
			a.align = types[i]->align;
		/* like MPICH, a struct whose members (empty ones included)
		 * are all the same type is an hindexed: only mixed members
		 * pad the extent */
		if (types[i]->same != types[0]->same)
			a.pad = true;
	}
	if (count == 1 && blocklens[0] == 1 && displs_bytes[0] == 0)
		t->same = types[0]->same;
	return finish(t, &a, true);
}

struct ddt_type *ddt_resized(int64_t lb, int64_t extent, struct ddt_type *old)
{
	struct ddt_type *t;
	int64_t ub;

	if (old == NULL || extent < 0)
		return ddt_err_null(EINVAL);
	if (__builtin_add_overflow(lb, extent, &ub))
		return ddt_err_null(DDT_E_OVERFLOW);
	if (!internal_build && old->depth + 1 > DDT_MAX_DEPTH)
		return ddt_err_null(DDT_E_DEPTH);
	t = type_new(DDT_COMBINER_RESIZED, 1);
	if (t == NULL)
		return ddt_err_null(ENOMEM);
	t->types[0] = ddt_ref(old);
	t->ntypes = 1;
	t->rlb = lb;
	t->rextent = extent;
	t->size = old->size;
	t->tlb = old->tlb;
	t->tub = old->tub;
	t->dlb = old->dlb;
	t->dub = old->dub;
	t->lb = lb;
	t->ub = ub;
	/* MPICH keeps the type itself when the bounds do not change */
	if (lb == old->lb && ub == old->ub) {
		t->zerolen = old->zerolen;
		t->same = old->same;
	}
	t->align = old->align;
	t->depth = old->depth + 1;
	return t;
}

struct ddt_type *ddt_dup(struct ddt_type *old)
{
	struct ddt_type *t;

	if (old == NULL)
		return ddt_err_null(EINVAL);
	t = type_new(DDT_COMBINER_DUP, 1);
	if (t == NULL)
		return ddt_err_null(ENOMEM);
	t->types[0] = ddt_ref(old);
	t->ntypes = 1;
	t->size = old->size;
	t->lb = old->lb;
	t->ub = old->ub;
	t->tlb = old->tlb;
	t->tub = old->tub;
	t->dlb = old->dlb;
	t->dub = old->dub;
	t->zerolen = old->zerolen;
	t->same = old->same;
	t->align = old->align;
	t->depth = old->depth;
	return t;
}

/* The MPI definition of subarray: nested hvectors placed at the start
 * offset, resized to the full array (lb 0, extent prod(sizes) * extent). */
static struct ddt_type *subarray_inner(int nd, const int64_t *sizes,
				       const int64_t *subsizes,
				       const int64_t *starts,
				       enum ddt_order order,
				       struct ddt_type *old)
{
	int64_t ext = old->ub - old->lb, stride, disp = 0, total;
	struct ddt_type *t, *n;
	int first = order == DDT_ORDER_C ? nd - 1 : 0;
	int step = order == DDT_ORDER_C ? -1 : 1;
	int d = first;

	t = ddt_contiguous(subsizes[d], old);
	if (t == NULL)
		return NULL;
	if (__builtin_mul_overflow(sizes[d], ext, &stride) ||
	    __builtin_mul_overflow(starts[d], ext, &disp))
		goto ovf;
	for (int k = 1; k < nd; k++) {
		int64_t sd;

		d += step;
		n = ddt_hvector(subsizes[d], 1, stride, t);
		ddt_free(t);
		if (n == NULL)
			return NULL;
		t = n;
		if (__builtin_mul_overflow(starts[d], stride, &sd) ||
		    __builtin_add_overflow(disp, sd, &disp) ||
		    __builtin_mul_overflow(stride, sizes[d], &stride))
			goto ovf;
	}
	total = stride;
	n = ddt_hindexed_block(1, 1, &disp, t);
	ddt_free(t);
	if (n == NULL)
		return NULL;
	t = ddt_resized(0, total, n);
	ddt_free(n);
	return t;
ovf:
	ddt_free(t);
	return ddt_err_null(DDT_E_OVERFLOW);
}

struct ddt_type *ddt_subarray(int ndims, const int64_t *sizes,
			      const int64_t *subsizes, const int64_t *starts,
			      enum ddt_order order, struct ddt_type *old)
{
	struct ddt_type *t, *in;
	bool fail = false;

	if (old == NULL || ndims < 1 || sizes == NULL || subsizes == NULL ||
	    starts == NULL ||
	    (order != DDT_ORDER_C && order != DDT_ORDER_FORTRAN))
		return ddt_err_null(EINVAL);
	for (int i = 0; i < ndims; i++)
		if (sizes[i] < 1 || subsizes[i] < 0 || starts[i] < 0 ||
		    starts[i] > sizes[i] - subsizes[i])
			return ddt_err_null(EINVAL);
	if (ndims > DDT_MAX_DEPTH || old->depth + ndims > DDT_MAX_DEPTH)
		return ddt_err_null(DDT_E_DEPTH);
	internal_build++;
	in = subarray_inner(ndims, sizes, subsizes, starts, order, old);
	internal_build--;
	if (in == NULL)
		return NULL;
	t = type_new(DDT_COMBINER_SUBARRAY, 1);
	if (t == NULL) {
		ddt_free(in);
		return ddt_err_null(ENOMEM);
	}
	t->types[0] = ddt_ref(old);
	t->ntypes = 1;
	t->inner = in;
	t->count = ndims;
	t->order = order;
	t->sizes = dup_arr(sizes, ndims, &fail);
	t->subsizes = dup_arr(subsizes, ndims, &fail);
	t->starts = dup_arr(starts, ndims, &fail);
	if (fail)
		return fail_nomem(t);
	t->size = in->size;
	t->lb = in->lb;
	t->ub = in->ub;
	t->tlb = in->tlb;
	t->tub = in->tub;
	t->dlb = in->dlb;
	t->dub = in->dub;
	t->zerolen = in->zerolen;
	t->same = in->same;
	t->align = in->align;
	t->depth = old->depth + ndims;
	return t;
}

/* ---- contents and queries --------------------------------------------- */

int ddt_get_contents(const struct ddt_type *t, struct ddt_contents *c_p)
{
	if (t == NULL || c_p == NULL)
		return -EINVAL;
	memset(c_p, 0, sizeof(*c_p));
	c_p->combiner = t->comb;
	c_p->base = t->base;
	c_p->count = t->count;
	c_p->blocklen = t->blocklen;
	c_p->stride = t->stride;
	c_p->blocklens = t->blocklens;
	c_p->displs = t->displs;
	c_p->sizes = t->sizes;
	c_p->subsizes = t->subsizes;
	c_p->starts = t->starts;
	c_p->order = t->order;
	c_p->lb = t->rlb;
	c_p->extent = t->rextent;
	c_p->types = (struct ddt_type *const *)t->types;
	return 0;
}

int64_t ddt_size(const struct ddt_type *t)
{
	return t->size;
}

int64_t ddt_extent(const struct ddt_type *t)
{
	return t->ub - t->lb;
}

int64_t ddt_lb(const struct ddt_type *t)
{
	return t->lb;
}

int64_t ddt_ub(const struct ddt_type *t)
{
	return t->ub;
}

int64_t ddt_true_lb(const struct ddt_type *t)
{
	return t->tlb;
}

int64_t ddt_true_extent(const struct ddt_type *t)
{
	return t->tub - t->tlb;
}

int64_t ddt_data_lb(const struct ddt_type *t)
{
	return t->dlb;
}

int64_t ddt_data_extent(const struct ddt_type *t)
{
	return t->dub - t->dlb;
}

int ddt_depth(const struct ddt_type *t)
{
	return t->depth;
}

int64_t ddt_num_blocks(const struct ddt_type *t)
{
	int64_t n;
	void *blob;
	size_t len;
	int rc;

	n = __atomic_load_n(&t->nblocks, __ATOMIC_RELAXED);
	if (n > 0)
		return n - 1;
	if (ddt_is_committed(t)) {
		n = ddt_blob_count_blocks(ddt_type_blob(t), 1);
		if (n >= 0)
			__atomic_store_n(&((struct ddt_type *)t)->nblocks,
					 n + 1, __ATOMIC_RELAXED);
		return n;
	}
	rc = ddt_build_blob(t, &blob, &len);
	if (rc < 0)
		return rc;
	n = ddt_blob_count_blocks(blob, 1);
	free(blob);
	return n;
}

/* ---- commit ------------------------------------------------------------- */

/* Compile @p blob for t unless another commit did; without a compiled
 * form (too many ops, no memory) t keeps the segment engine. */
static void prog_set(struct ddt_type *t, const void *blob)
{
	struct ddt_prog *pg, *expect = NULL;

	if (((const struct ddt_blob *)blob)->h.size == 0)
		return;
	pg = ddt_prog_build(blob);
	if (pg != NULL &&
	    !__atomic_compare_exchange_n(&t->prog, &expect, pg, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		ddt_prog_free(pg);
}

int ddt_commit(struct ddt_type *t)
{
	void *blob, *expect = NULL;
	size_t len;
	int rc;

	if (t == NULL)
		return -EINVAL;
	if (__atomic_load_n(&t->blob, __ATOMIC_ACQUIRE) != NULL)
		return 0;
	rc = ddt_build_blob(t, &blob, &len);
	if (rc < 0)
		return rc;
	t->blob_len = len;
	/* the compiled form goes first: a committed type has its last one */
	prog_set(t, blob);
	if (!__atomic_compare_exchange_n(&t->blob, &expect, blob, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		free(blob);
	return 0;
}

int ddt_is_committed(const struct ddt_type *t)
{
	return t != NULL &&
	       __atomic_load_n(&t->blob, __ATOMIC_ACQUIRE) != NULL;
}

ssize_t ddt_serialize(const struct ddt_type *t, void *buf, size_t len)
{
	const struct ddt_blob_hdr *h;

	if (t == NULL)
		return -EINVAL;
	if (!ddt_is_committed(t))
		return -DDT_E_NOTCOMMITTED;
	h = t->blob;
	if (buf == NULL)
		return (ssize_t)h->len;
	if (len < h->len)
		return -ENOSPC;
	memcpy(buf, t->blob, h->len);
	return (ssize_t)h->len;
}

/* ---- errors ------------------------------------------------------------- */

const char *ddt_strerror(int err)
{
	static const char *const msg[] = {
		[DDT_E_SYNTAX - DDT_E_BASE] = "type expression syntax error",
		[DDT_E_DEPTH - DDT_E_BASE] = "datatype nesting too deep",
		[DDT_E_OVERFLOW - DDT_E_BASE] =
			"datatype count, size or extent overflows",
		[DDT_E_BLOB - DDT_E_BASE] =
			"serialized datatype truncated, corrupt or hostile",
		[DDT_E_NOTCOMMITTED - DDT_E_BASE] = "datatype not committed",
	};

	if (err < 0)
		err = -err;
	if (err >= DDT_E_BASE && err < DDT_E_MAX)
		return msg[err - DDT_E_BASE];
	return strerror(err);
}
