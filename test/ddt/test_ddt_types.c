/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Constructors and queries against hand-computed values; normalization
 * and classification of simple layouts; reference counting.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddt.h"

#define I32 ddt_base(DDT_INT32)
#define I16 ddt_base(DDT_INT16)
#define F64 ddt_base(DDT_DOUBLE)
#define CHR ddt_base(DDT_CHAR)

struct want {
	int64_t size, lb, ub, tlb, text, blocks;
	int depth;
};

static void check(struct ddt_type *t, struct want w)
{
	assert_non_null(t);
	assert_int_equal(ddt_size(t), w.size);
	assert_int_equal(ddt_lb(t), w.lb);
	assert_int_equal(ddt_ub(t), w.ub);
	assert_int_equal(ddt_extent(t), w.ub - w.lb);
	assert_int_equal(ddt_true_lb(t), w.tlb);
	assert_int_equal(ddt_true_extent(t), w.text);
	assert_int_equal(ddt_num_blocks(t), w.blocks);
	assert_int_equal(ddt_depth(t), w.depth);
	/* committed and uncommitted answers agree */
	assert_int_equal(ddt_commit(t), 0);
	assert_int_equal(ddt_num_blocks(t), w.blocks);
	assert_int_equal(ddt_count_blocks(t, 1), w.blocks);
}

static void test_base(void **state)
{
	static const int64_t sz[DDT_BASE_COUNT] = { 1, 1, 1, 1, 2, 2, 4, 4,
						     8, 8, 4, 8, 8, 16 };

	(void)state;
	for (int b = 0; b < DDT_BASE_COUNT; b++)
		check(ddt_base(b), (struct want){ sz[b], 0, sz[b], 0, sz[b],
						  1, 1 });
	assert_null(ddt_base(DDT_BASE_COUNT));
	assert_int_equal(errno, EINVAL);
	ddt_free(ddt_base(DDT_INT32)); /* no-op on elementary types */
	assert_int_equal(ddt_size(I32), 4);
}

static void test_contig(void **state)
{
	struct ddt_type *t;

	(void)state;
	t = ddt_contiguous(3, I32);
	check(t, (struct want){ 12, 0, 12, 0, 12, 1, 2 });
	ddt_free(t);
	t = ddt_contiguous(0, F64);
	check(t, (struct want){ 0, 0, 0, 0, 0, 0, 2 });
	ddt_free(t);
	assert_null(ddt_contiguous(-1, F64));
	assert_int_equal(errno, EINVAL);
}

static void test_vector(void **state)
{
	struct ddt_type *t;

	(void)state;
	t = ddt_vector(3, 2, 4, I32);
	check(t, (struct want){ 24, 0, 40, 0, 40, 3, 2 });
	ddt_free(t);
	/* negative stride */
	t = ddt_vector(3, 1, -2, F64);
	check(t, (struct want){ 24, -32, 8, -32, 40, 3, 2 });
	ddt_free(t);
	t = ddt_hvector(2, 3, -20, I16);
	check(t, (struct want){ 12, -20, 6, -20, 26, 2, 2 });
	ddt_free(t);
	/* zero blocklen (MPICH: the blocks still place bounds) and count */
	t = ddt_vector(3, 0, 2, I32);
	check(t, (struct want){ 0, 0, 16, 0, 16, 0, 2 });
	ddt_free(t);
	t = ddt_hvector(0, 2, 8, I32);
	check(t, (struct want){ 0, 0, 0, 0, 0, 0, 2 });
	ddt_free(t);
	/* stride == blocklen is contiguous */
	t = ddt_vector(4, 2, 2, F64);
	check(t, (struct want){ 64, 0, 64, 0, 64, 1, 2 });
	ddt_free(t);
}

static void test_indexed(void **state)
{
	int64_t bl[] = { 2, 0, 1 }, d[] = { 5, 1, -1 };
	int64_t d2[] = { 4, 0 }, d3[] = { 0, 4 }, one[] = { 1, 1 };
	int64_t d4[] = { 3, 0 }, d5[] = { 0, 4, 8 };
	struct ddt_type *t;

	(void)state;
	t = ddt_indexed(3, bl, d, I32);
	check(t, (struct want){ 12, -4, 28, -4, 32, 2, 2 });
	ddt_free(t);
	t = ddt_hindexed(2, one, d2, I32);
	check(t, (struct want){ 8, 0, 8, 0, 8, 2, 2 });
	ddt_free(t);
	t = ddt_hindexed(2, one, d3, I32);
	check(t, (struct want){ 8, 0, 8, 0, 8, 1, 2 });
	ddt_free(t);
	t = ddt_indexed_block(2, 2, d4, I16);
	check(t, (struct want){ 8, 0, 10, 0, 10, 2, 2 });
	ddt_free(t);
	t = ddt_hindexed_block(3, 1, d5, I32);
	check(t, (struct want){ 12, 0, 12, 0, 12, 1, 2 });
	ddt_free(t);
	t = ddt_indexed(0, NULL, NULL, I32);
	check(t, (struct want){ 0, 0, 0, 0, 0, 0, 2 });
	ddt_free(t);
}

static void test_struct(void **state)
{
	int64_t bl[] = { 1, 2, 1 }, d[] = { 0, 4, 8 };
	struct ddt_type *ty[] = { I32, CHR, F64 };
	int64_t bl2[] = { 1, 1 }, d2[] = { 0, 8 }, d3[] = { 0, 100 };
	struct ddt_type *ty2[] = { F64, CHR };
	struct ddt_type *r, *ty3[2], *t;

	(void)state;
	/* mixed types with a gap */
	t = ddt_struct(3, bl, d, ty);
	check(t, (struct want){ 14, 0, 16, 0, 16, 2, 2 });
	ddt_free(t);
	/* extent padded to the alignment of double */
	t = ddt_struct(2, bl2, d2, ty2);
	check(t, (struct want){ 9, 0, 16, 0, 9, 1, 2 });
	ddt_free(t);
	/* resized member: bounds are the min/max of markers and data */
	r = ddt_resized(-4, 16, I32);
	ty3[0] = r;
	ty3[1] = F64;
	t = ddt_struct(2, bl2, d3, ty3);
	check(t, (struct want){ 12, -4, 108, 0, 108, 2, 3 });
	ddt_free(t);
	ddt_free(r);
}

/* size, lb, ub, true lb, true extent as MPICH 4.0 reports them for the
 * same constructors (checked by hand with a small MPI program) */
static void test_mpich_bounds(void **state)
{
	static const struct {
		const char *expr;
		int64_t v[5];
	} cases[] = {
		{ "struct(1,1;0,8)[double,char]", { 9, 0, 16, 0, 9 } },
		{ "struct(1,1;0,100)[resized(-4,16)[int32],double]",
		  { 12, -4, 108, 0, 108 } },
		{ "struct(1,2,1;0,4,8)[int32,char,double]", { 14, 0, 16, 0, 16 } },
		{ "struct(1,1;0,16)[int32,contig(3)[int16]]", { 10, 0, 24, 0, 22 } },
		{ "contig(2)[resized(-4,16)[int32]]", { 8, -4, 28, 0, 20 } },
		{ "subarray(4,5;2,3;1,2;F)[resized(-4,16)[int32]]",
		  { 24, 0, 320, 144, 148 } },
		{ "subarray(4,5;2,3;1,2;C)[resized(4,16)[int32]]",
		  { 24, 0, 320, 112, 116 } },
		{ "struct(0,1;0,4)[resized(-4,16)[int32],char]", { 1, 4, 5, 4, 1 } },
		{ "struct(1,1;0,16)[resized(0,19)[int32],char]", { 5, 0, 20, 0, 17 } },
		{ "struct(1,1;0,20)[resized(0,19)[int32],char]", { 5, 0, 24, 0, 21 } },
		{ "struct(1;0)[resized(0,9)[double]]", { 8, 0, 9, 0, 8 } },
		{ "struct(1,1;0,9)[resized(0,9)[double],char]", { 9, 0, 16, 0, 10 } },
		{ "struct(1,1;0,24)[vector(2,1,2)[double],char]", { 17, 0, 32, 0, 25 } },
		{ "resized(0,4)[resized(-4,16)[int32]]", { 4, 0, 4, 0, 4 } },
		{ "contig(2)[struct(1,1;0,8)[double,contig(3)[char]]]",
		  { 22, 0, 32, 0, 27 } },
		{ "struct(1,1;0,8)[complex,char]", { 9, 0, 12, 0, 9 } },
		{ "struct(1,1;0,16)[double_complex,char]", { 17, 0, 24, 0, 17 } },
		{ "struct(1,1;0,8)[hvector(2,1,-9)[double],char]",
		  { 17, -9, 15, -9, 18 } },
		{ "struct(1,1;0,5)[int32,int32]", { 8, 0, 9, 0, 9 } },
		{ "struct(1,1;0,5)[int32,float]", { 8, 0, 12, 0, 9 } },
		{ "struct(1;1)[double]", { 8, 1, 9, 1, 8 } },
		{ "indexed(2,0,1;5,1,-1)[int32]", { 12, -4, 28, -4, 32 } },
		/* members without data: zero-length blocks of vector and
		 * indexed_block place bounds (true ones too, shifted by the
		 * element's), indexed and struct skip them, a constructor
		 * over count * size 0 is all 0 */
		{ "vector(3,0,-2)[int32]", { 0, -16, 0, -16, 16 } },
		{ "vector(1,0,2)[int32]", { 0, 0, 0, 0, 0 } },
		{ "vector(3,0,2)[resized(-4,16)[int32]]", { 0, -4, 60, 0, 52 } },
		{ "vector(3,0,-2)[resized(-4,16)[int32]]",
		  { 0, -68, -4, -64, 52 } },
		{ "hvector(3,0,-5)[resized(-4,16)[int32]]",
		  { 0, -14, -4, -10, -2 } },
		{ "indexed_block(0;3,7)[int32]", { 0, 12, 28, 12, 16 } },
		{ "hindexed_block(0;3,7)[resized(-4,16)[int32]]",
		  { 0, -1, 3, 3, -8 } },
		{ "indexed(0,2,0;-5,3,9)[resized(-4,16)[int32]]",
		  { 8, 44, 76, 48, 20 } },
		{ "indexed(0,0;-5,3)[resized(-4,16)[int32]]", { 0, 0, 0, 0, 0 } },
		{ "contig(2)[vector(3,0,2)[int32]]", { 0, 0, 0, 0, 0 } },
		{ "resized(-8,40)[vector(3,0,2)[int32]]", { 0, -8, 32, 0, 16 } },
		{ "resized(-3,7)[contig(0)[int32]]", { 0, -3, 4, 0, 0 } },
		{ "subarray(4,4;0,2;1,1;C)[int32]", { 0, 0, 64, 0, 0 } },
		{ "struct(2;100)[vector(3,0,2)[int32]]", { 0, 0, 0, 0, 0 } },
		{ "struct(2,1;100,0)[vector(3,0,2)[int32],int8]",
		  { 1, 0, 132, 0, 132 } },
		{ "struct(2,1;100,0)[resized(-8,40)[vector(3,0,2)[int32]],int8]",
		  { 1, 0, 172, 0, 156 } },
		{ "struct(1,1;1,0)[vector(3,0,2)[int32],int8]", { 1, 0, 20, 0, 17 } },
		{ "struct(1,1;50,0)[contig(0)[int32],int8]", { 1, 0, 50, 0, 50 } },
		{ "struct(1,1;50,1)[resized(-3,7)[contig(0)[int32]],int8]",
		  { 1, 1, 54, 1, 49 } },
		{ "struct(0,1;100,0)[double,int8]", { 1, 0, 1, 0, 1 } },
		/* an empty entry of another type still makes the struct mixed
		 * (padded); types MPICH does not tell apart do not */
		{ "struct(1,1,0;0,5,9)[int32,int32,int8]", { 8, 0, 12, 0, 9 } },
		{ "struct(1,1;0,5)[int32,uint32]", { 8, 0, 9, 0, 9 } },
		{ "struct(1,1;0,5)[int32,contig(1)[int32]]", { 8, 0, 9, 0, 9 } },
		{ "struct(1,1;0,5)[int32,resized(0,4)[int32]]", { 8, 0, 9, 0, 9 } },
		{ "struct(1,1;0,5)[int32,resized(0,8)[int32]]", { 8, 0, 16, 0, 9 } },
		{ "struct(1,1;0,5)[int32,contig(2)[int32]]", { 12, 0, 16, 0, 13 } },
		{ "struct(0,3,0,3;2,11,594,598)[uint16,resized(-8,192)[vector(7,0,"
		  "4)[int64]],resized(-7,16)[uint8],int32]",
		  { 12, 3, 611, 11, 599 } },
		{ "indexed(1,1,2;3,4,6)[struct(0,3,0,3;2,11,594,598)[uint16,"
		  "resized(-8,192)[vector(7,0,4)[int64]],resized(-7,16)[uint8],"
		  "int32]]", { 48, 1827, 4867, 1835, 3031 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct ddt_type *t = ddt_parse(cases[i].expr, NULL);
		int64_t got[5];

		assert_non_null(t);
		got[0] = ddt_size(t);
		got[1] = ddt_lb(t);
		got[2] = ddt_ub(t);
		got[3] = ddt_true_lb(t);
		got[4] = ddt_true_extent(t);
		if (memcmp(got, cases[i].v, sizeof(got)))
			print_message("%s: %ld %ld %ld %ld %ld\n", cases[i].expr,
				      (long)got[0], (long)got[1], (long)got[2],
				      (long)got[3], (long)got[4]);
		assert_memory_equal(got, cases[i].v, sizeof(got));
		ddt_free(t);
	}
}

/* The data's own span (the standard's true bounds) beside MPICH's; and a
 * struct of one type object twice is an hindexed (not padded), of two
 * equal objects a struct (padded), as MPICH has it for handles. */
static void test_data_span(void **state)
{
	static const struct {
		const char *expr;
		int64_t dlb, dext;
	} cases[] = {
		{ "vector(3,0,2)[int32]", 0, 0 },
		{ "struct(1,1;1,0)[vector(3,0,2)[int32],int8]", 0, 1 },
		{ "struct(2,1;100,0)[resized(-8,40)[vector(3,0,2)[int32]],int8]",
		  0, 1 },
		{ "vector(2,1,3)[int32]", 0, 16 },
		{ "indexed(1,1,2;3,4,6)[struct(0,3,0,3;2,11,594,598)[uint16,"
		  "resized(-8,192)[vector(7,0,4)[int64]],resized(-7,16)[uint8],"
		  "int32]]", 2422, 2444 },
	};
	int64_t bl[] = { 1, 1 }, d[] = { 0, 5 };
	struct ddt_type *v, *w, *t, *ty[2];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		t = ddt_parse(cases[i].expr, NULL);
		assert_non_null(t);
		assert_int_equal(ddt_data_lb(t), cases[i].dlb);
		assert_int_equal(ddt_data_extent(t), cases[i].dext);
		ddt_free(t);
	}
	v = ddt_vector(2, 1, 2, I32);
	w = ddt_vector(2, 1, 2, I32);
	ty[0] = ty[1] = v;
	t = ddt_struct(2, bl, d, ty);
	check(t, (struct want){ 16, 0, 17, 0, 17, 4, 3 });
	ddt_free(t);
	ty[1] = w;
	t = ddt_struct(2, bl, d, ty);
	check(t, (struct want){ 16, 0, 20, 0, 17, 4, 3 });
	ddt_free(t);
	ddt_free(w);
	ddt_free(v);
}

static void test_resized(void **state)
{
	struct ddt_type *r, *t;

	(void)state;
	r = ddt_resized(-4, 16, I32);
	check(r, (struct want){ 4, -4, 12, 0, 4, 1, 2 });
	t = ddt_contiguous(2, r);
	check(t, (struct want){ 8, -4, 28, 0, 20, 2, 3 });
	ddt_free(t);
	ddt_free(r);
	assert_null(ddt_resized(0, -1, I32));
	assert_int_equal(errno, EINVAL);
}

static void test_subarray(void **state)
{
	int64_t sz[] = { 4, 5 }, sub[] = { 2, 3 }, st[] = { 1, 2 };
	int64_t bad[] = { 3, 2 };
	struct ddt_iov iov[4];
	struct ddt_type *t;

	(void)state;
	t = ddt_subarray(2, sz, sub, st, DDT_ORDER_C, I32);
	check(t, (struct want){ 24, 0, 80, 28, 32, 2, 3 });
	assert_int_equal(ddt_flatten(t, 1, iov, 4), 2);
	assert_int_equal(iov[0].off, 28);
	assert_int_equal(iov[0].len, 12);
	assert_int_equal(iov[1].off, 48);
	assert_int_equal(iov[1].len, 12);
	ddt_free(t);
	t = ddt_subarray(2, sz, sub, st, DDT_ORDER_FORTRAN, I32);
	check(t, (struct want){ 24, 0, 80, 36, 40, 3, 3 });
	assert_int_equal(ddt_flatten(t, 1, iov, 4), 3);
	assert_int_equal(iov[0].off, 36);
	assert_int_equal(iov[1].off, 52);
	assert_int_equal(iov[2].off, 68);
	assert_int_equal(iov[2].len, 8);
	ddt_free(t);
	/* start + subsize beyond size */
	assert_null(ddt_subarray(2, sz, bad, bad, DDT_ORDER_C, I32));
	assert_int_equal(errno, EINVAL);
}

static void test_dup_contents(void **state)
{
	struct ddt_type *v = ddt_vector(3, 2, 4, I32), *d = ddt_dup(v);
	struct ddt_contents c;

	(void)state;
	check(d, (struct want){ 24, 0, 40, 0, 40, 3, 2 });
	assert_int_equal(ddt_get_contents(d, &c), 0);
	assert_int_equal(c.combiner, DDT_COMBINER_DUP);
	assert_ptr_equal(c.types[0], v);
	assert_int_equal(ddt_get_contents(v, &c), 0);
	assert_int_equal(c.combiner, DDT_COMBINER_VECTOR);
	assert_int_equal(c.count, 3);
	assert_int_equal(c.blocklen, 2);
	assert_int_equal(c.stride, 4);
	assert_ptr_equal(c.types[0], I32);
	assert_int_equal(ddt_get_contents(I32, &c), 0);
	assert_int_equal(c.combiner, DDT_COMBINER_NAMED);
	assert_int_equal(c.base, DDT_INT32);
	assert_int_equal(ddt_equal(v, d), 1);
	ddt_free(d);
	ddt_free(v);
}

static void test_refcount(void **state)
{
	struct ddt_type *c = ddt_contiguous(4, I16);
	struct ddt_type *v = ddt_vector(2, 1, 3, c);
	uint8_t src[64], dst[16];

	(void)state;
	ddt_free(c); /* v still holds c */
	assert_int_equal(ddt_commit(v), 0);
	for (int i = 0; i < 64; i++)
		src[i] = (uint8_t)i;
	assert_int_equal(ddt_pack(v, 1, src, dst), 0);
	assert_memory_equal(dst, src, 8);
	assert_memory_equal(dst + 8, src + 24, 8);
	assert_ptr_equal(ddt_ref(v), v);
	ddt_free(v);
	assert_int_equal(ddt_size(v), 16);
	/* a segment keeps its type alive */
	{
		struct ddt_segment *s = ddt_segment_create(v, 1);

		ddt_free(v);
		memset(dst, 0, sizeof(dst));
		assert_int_equal(ddt_segment_pack(s, 0, 16, src, dst), 0);
		assert_memory_equal(dst + 8, src + 24, 8);
		ddt_segment_free(s);
	}
}

static void test_limits(void **state)
{
	struct ddt_type *t = I32, *n;

	(void)state;
	for (int d = 2; d <= DDT_MAX_DEPTH; d++) {
		n = ddt_contiguous(1, t);
		assert_non_null(n);
		assert_int_equal(ddt_depth(n), d);
		ddt_free(t);
		t = n;
	}
	assert_null(ddt_contiguous(1, t));
	assert_int_equal(errno, DDT_E_DEPTH);
	assert_null(ddt_resized(0, 4, t));
	assert_int_equal(errno, DDT_E_DEPTH);
	assert_int_equal(ddt_commit(t), 0);
	ddt_free(t);

	assert_null(ddt_contiguous(INT64_MAX / 2, I32));
	assert_int_equal(errno, DDT_E_OVERFLOW);
	assert_null(ddt_vector(2, 1, INT64_MAX / 2, F64));
	assert_int_equal(errno, DDT_E_OVERFLOW);
	assert_null(ddt_hvector(3, 1, INT64_MAX / 2 + 1, CHR));
	assert_int_equal(errno, DDT_E_OVERFLOW);
	assert_null(ddt_resized(INT64_MAX, 1, CHR));
	assert_int_equal(errno, DDT_E_OVERFLOW);
	/* fits the type, but not a segment of 2^62 elements */
	t = ddt_contiguous(1 << 20, F64);
	assert_int_equal(ddt_commit(t), 0);
	assert_null(ddt_segment_create(t, INT64_C(1) << 42));
	assert_int_equal(errno, DDT_E_OVERFLOW);
	ddt_free(t);
}

static void test_classify(void **state)
{
	int64_t d[] = { 5, 0, 9 };
	struct ddt_class_info ci;
	struct ddt_type *t, *c, *v;

	(void)state;
	t = ddt_contiguous(4, F64);
	assert_int_equal(ddt_classify(t, 1, &ci), -DDT_E_NOTCOMMITTED);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 10, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_CONTIG);
	assert_int_equal(ci.blocklen, 32);
	ddt_free(t);

	t = ddt_vector(4, 2, 3, F64);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_VECTOR);
	assert_int_equal(ci.blocklen, 16);
	assert_int_equal(ci.stride, 24);
	assert_int_equal(ci.nblocks, 4);
	assert_int_equal(ci.first_off, 0);
	assert_int_equal(ci.extent, 88);
	ddt_free(t);

	/* vector of contiguous becomes one vector with bigger blocks */
	c = ddt_contiguous(4, I32);
	t = ddt_vector(3, 1, 2, c);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_VECTOR);
	assert_int_equal(ci.blocklen, 16);
	assert_int_equal(ci.stride, 32);
	ddt_free(t);
	ddt_free(c);

	/* rows of a vector continuing its stride: one vector */
	v = ddt_vector(2, 1, 2, I32);
	t = ddt_hvector(2, 1, 16, v);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_VECTOR);
	assert_int_equal(ci.blocklen, 4);
	assert_int_equal(ci.stride, 8);
	assert_int_equal(ci.nblocks, 4);
	ddt_free(t);
	ddt_free(v);

	/* two blocks are always a vector; three irregular ones are not */
	t = ddt_indexed_block(2, 2, d, I32);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_VECTOR);
	assert_int_equal(ci.stride, -20);
	ddt_free(t);
	t = ddt_indexed_block(3, 2, d, I32);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_INDEXED_BLOCK);
	assert_int_equal(ci.blocklen, 8);
	assert_int_equal(ci.nblocks, 3);
	assert_int_equal(ci.displs[0], 20);
	assert_int_equal(ci.displs[1], 0);
	assert_int_equal(ci.displs[2], 36);
	ddt_free(t);

	t = ddt_parse("struct(1,1;0,16)[int32,contig(3)[int16]]", NULL);
	assert_non_null(t);
	ddt_commit(t);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	assert_int_equal(ci.cls, DDT_CLASS_GENERAL);
	ddt_free(t);
	assert_string_equal(ddt_class_name(DDT_CLASS_INDEXED_BLOCK),
			    "indexed-block");
}

/* classify() reports a specialized class only when commit normalized the
 * type to one leaf dataloop of that kind */
static void expect_class(const char *expr, enum ddt_class cls, int64_t bl,
			 int64_t stride, int64_t nblocks, int64_t first)
{
	struct ddt_type *t = ddt_parse(expr, NULL);
	struct ddt_class_info ci;

	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	assert_int_equal(ddt_classify(t, 1, &ci), 0);
	if (ci.cls != cls)
		print_message("%s: class %s\n", expr, ddt_class_name(ci.cls));
	assert_int_equal(ci.cls, cls);
	assert_int_equal(ci.blocklen, bl);
	assert_int_equal(ci.nblocks, nblocks);
	assert_int_equal(ci.first_off, first);
	if (cls == DDT_CLASS_VECTOR)
		assert_int_equal(ci.stride, stride);
	ddt_free(t);
}

static void test_normalize(void **state)
{
	(void)state;
	/* contiguous of contiguous -> one contig */
	expect_class("contig(3)[contig(4)[int8]]", DDT_CLASS_CONTIG, 12, 0, 1,
		     0);
	/* vector whose stride == blocklen -> contig */
	expect_class("vector(4,2,2)[double]", DDT_CLASS_CONTIG, 64, 0, 1, 0);
	/* zero-length pieces dropped, adjacent pieces merged */
	expect_class("hindexed(1,0,1;0,4,4)[int32]", DDT_CLASS_CONTIG, 8, 0,
		     1, 0);
	expect_class("struct(1,1,0;0,4,100)[int32,float,double]",
		     DDT_CLASS_CONTIG, 8, 0, 1, 0);
	/* vector of contiguous -> vector with a larger block */
	expect_class("vector(5,1,2)[contig(3)[int32]]", DDT_CLASS_VECTOR, 12,
		     24, 5, 0);
	expect_class("hvector(5,2,100)[contig(3)[int32]]", DDT_CLASS_VECTOR,
		     24, 100, 5, 0);
	/* vector of a single resized element -> vector */
	expect_class("contig(4)[resized(0,16)[int32]]", DDT_CLASS_VECTOR, 4,
		     16, 4, 0);
	/* regular indexed blocks -> vector, with its first offset */
	expect_class("hindexed_block(2;40,56,72)[int32]", DDT_CLASS_VECTOR, 8,
		     16, 3, 40);
	/* a 2D subarray row block is a vector; a single row is contiguous */
	expect_class("subarray(4,5;2,5;1,0;C)[int32]", DDT_CLASS_CONTIG, 40, 0,
		     1, 20);
	expect_class("subarray(4,5;2,3;1,2;C)[int32]", DDT_CLASS_VECTOR, 12,
		     20, 2, 28);
	expect_class("indexed_block(1;0,3,5)[int64]",
		     DDT_CLASS_INDEXED_BLOCK, 8, 0, 3, 0);
	/* an outer displacement is folded into the block displacements */
	expect_class("hindexed_block(1;100)[indexed_block(1;0,3,5)[int64]]",
		     DDT_CLASS_INDEXED_BLOCK, 8, 0, 3, 100);
	/* adjacent blocks merge, leaving unequal blocks: general */
	expect_class("indexed_block(1;0,3,4)[int64]", DDT_CLASS_GENERAL, 0, 0,
		     0, 0);
}

static void test_pack_simple(void **state)
{
	struct ddt_type *t = ddt_vector(3, 1, -2, F64);
	double buf[8], out[3], back[8];

	(void)state;
	ddt_commit(t);
	for (int i = 0; i < 8; i++)
		buf[i] = i;
	/* origin at buf[6]: elements at 6, 4, 2 */
	assert_int_equal(ddt_pack(t, 1, buf + 6, out), 0);
	assert_true(out[0] == 6 && out[1] == 4 && out[2] == 2);
	memset(back, 0, sizeof(back));
	assert_int_equal(ddt_unpack(t, 1, out, back + 6), 0);
	assert_true(back[6] == 6 && back[4] == 4 && back[2] == 2 &&
		    back[5] == 0);
	ddt_free(t);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(ddt_strerror(-DDT_E_DEPTH),
			    "datatype nesting too deep");
	assert_string_equal(ddt_strerror(DDT_E_BLOB),
			    "serialized datatype truncated, corrupt or hostile");
	assert_string_equal(ddt_strerror(-ENOMEM), strerror(ENOMEM));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base),
		cmocka_unit_test(test_contig),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_indexed),
		cmocka_unit_test(test_struct),
		cmocka_unit_test(test_mpich_bounds),
		cmocka_unit_test(test_data_span),
		cmocka_unit_test(test_resized),
		cmocka_unit_test(test_subarray),
		cmocka_unit_test(test_dup_contents),
		cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_pack_simple),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
