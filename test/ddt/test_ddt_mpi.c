/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ddt against the system MPI: fixed types and random ones (ddt_gen.h's
 * generator, and a local one whose layouts may overlap themselves) are
 * rebuilt as MPI datatypes from their constructor arguments
 * (ddt_get_contents, recursively); size, lb, extent and true bounds must
 * agree at every constructor, ddt_pack must equal MPI_Pack byte for byte,
 * and ddt_unpack, whole or a range of the packed stream at a time, must
 * equal MPI_Unpack over the whole touched span. MPI runs as a singleton (no
 * mpiexec).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#include <cmocka.h>

#include <ddt.h>
#include "ddt_internal.h" /* which ops a compiled type has */

#include "ddt_gen.h"
#include "../../app/spinnic-bench/ddt_mpi.h"

#define N_TYPES 2000
#define MAX_DEPTH 4

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t
rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* uniform in [lo, hi] */
static int64_t
rnd_in(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ---- random types whose blocks may overlap (pack is still defined) ------- */

static struct ddt_type *gen(int depth);

static int64_t
abs_extent(struct ddt_type *t)
{
	int64_t e = ddt_extent(t);

	return e < 0 ? -e : e;
}

static struct ddt_type *
gen_inner(int depth)
{
	int64_t bl[4], d[4], sizes[3], subs[3], starts[3];
	struct ddt_type *old, *ts[3] = { NULL, NULL, NULL }, *t = NULL;
	int64_t n, e;
	int kind = (int)rnd_in(0, 10);

	if (kind == 9) {
		int64_t k = rnd_in(1, 3);

		for (int64_t i = 0; i < k; i++) {
			ts[i] = gen(depth - 1);
			if (ts[i] == NULL)
				goto out;
			bl[i] = rnd_in(0, 2);
			d[i] = rnd_in(-32, 64);
		}
		t = ddt_struct(k, bl, d, ts);
		goto out;
	}
	old = gen(depth - 1);
	if (old == NULL)
		return NULL;
	e = abs_extent(old);
	n = rnd_in(1, 4);
	switch (kind) {
	case 0:
		t = ddt_contiguous(rnd_in(1, 3), old);
		break;
	case 1: {
		int64_t b = rnd_in(1, 3);
		int64_t s = b + rnd_in(0, 2);

		t = ddt_vector(n, b, rnd() & 1 ? s : -s, old);
		break;
	}
	case 2: {
		int64_t b = rnd_in(1, 2);
		int64_t s = b * e + rnd_in(0, 8);

		t = ddt_hvector(n, b, rnd() & 1 ? s : -s, old);
		break;
	}
	case 3:
		for (int64_t i = 0; i < n; i++) {
			bl[i] = rnd_in(0, 3);
			d[i] = rnd_in(-8, 8);
		}
		t = ddt_indexed(n, bl, d, old);
		break;
	case 4:
		for (int64_t i = 0; i < n; i++) {
			bl[i] = rnd_in(0, 3);
			d[i] = rnd_in(-64, 64);
		}
		t = ddt_hindexed(n, bl, d, old);
		break;
	case 5:
		for (int64_t i = 0; i < n; i++)
			d[i] = rnd_in(-8, 8);
		t = ddt_indexed_block(n, rnd_in(1, 3), d, old);
		break;
	case 6:
		for (int64_t i = 0; i < n; i++)
			d[i] = rnd_in(-64, 64);
		t = ddt_hindexed_block(n, rnd_in(1, 2), d, old);
		break;
	case 7: {
		int nd = (int)rnd_in(1, 3);

		for (int i = 0; i < nd; i++) {
			sizes[i] = rnd_in(1, 4);
			subs[i] = rnd_in(1, sizes[i]);
			starts[i] = rnd_in(0, sizes[i] - subs[i]);
		}
		t = ddt_subarray(nd, sizes, subs, starts,
				 rnd() & 1 ? DDT_ORDER_C : DDT_ORDER_FORTRAN,
				 old);
		break;
	}
	case 8: {
		/* lib/ddt refuses negative extents (MPI allows them) */
		t = ddt_resized(rnd_in(-16, 16), rnd_in(1, 64), old);
		break;
	}
	default:
		t = ddt_dup(old);
		break;
	}
	ts[0] = old;
out:
	/* the new type holds its own references to its inputs */
	for (int i = 0; i < 3; i++)
		ddt_free(ts[i]);
	return t;
}

static struct ddt_type *
gen(int depth)
{
	if (depth <= 0 || rnd_in(0, 3) == 0)
		return ddt_base((enum ddt_base)rnd_in(0, DDT_BASE_COUNT - 1));
	return gen_inner(depth);
}

/* ---- checks --------------------------------------------------------------- */

struct span {
	int64_t lo, hi, n;
	struct ddt_iov *iov;
	int overlap;
};

static int
cmp_iov(const void *a, const void *b)
{
	const struct ddt_iov *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

static void
span_of(const struct ddt_type *t, int64_t count, struct span *s)
{
	struct ddt_iov *sorted;

	s->n = ddt_flatten(t, count, NULL, 0);
	assert_true(s->n >= 0);
	s->iov = calloc((size_t)s->n + 1, sizeof(*s->iov));
	sorted = calloc((size_t)s->n + 1, sizeof(*sorted));
	assert_true(s->iov && sorted);
	assert_int_equal(ddt_flatten(t, count, s->iov, s->n), s->n);
	s->lo = s->hi = 0;
	for (int64_t i = 0; i < s->n; i++) {
		if (i == 0 || s->iov[i].off < s->lo)
			s->lo = s->iov[i].off;
		if (i == 0 || s->iov[i].off + s->iov[i].len > s->hi)
			s->hi = s->iov[i].off + s->iov[i].len;
	}
	/* Unpacking into overlapping blocks is erroneous in MPI. */
	memcpy(sorted, s->iov, (size_t)s->n * sizeof(*sorted));
	qsort(sorted, (size_t)s->n, sizeof(*sorted), cmp_iov);
	s->overlap = 0;
	for (int64_t i = 1; i < s->n; i++)
		if (sorted[i].off < sorted[i - 1].off + sorted[i - 1].len)
			s->overlap = 1;
	free(sorted);
}

static char *
origin(char *buf, const struct span *s)
{
	return (char *)((uintptr_t)buf - (uintptr_t)s->lo);
}

static void
describe(const struct ddt_type *t, char *buf, size_t len)
{
	if (ddt_print(t, buf, len) < 0)
		snprintf(buf, len, "(unprintable)");
}

/* Whether t or any of its inputs holds no data. MPICH 4.0.2 (yaksa)
 * divides by zero packing some of those, so random ones are packed against
 * ddt_gen's brute-force typemap reference instead of MPI_Pack. */
static int
has_empty(const struct ddt_type *t)
{
	struct ddt_contents c;
	int64_t n;

	if (ddt_size(t) == 0)
		return 1;
	assert_int_equal(ddt_get_contents(t, &c), 0);
	if (c.combiner == DDT_COMBINER_NAMED)
		return 0;
	n = c.combiner == DDT_COMBINER_STRUCT ? c.count : 1;
	for (int64_t i = 0; i < n; i++)
		if (has_empty(c.types[i]))
			return 1;
	return 0;
}

/* Refill u as check_range() does and place packed bytes [first, last)
 * through t's serialized compiled form, bounded by the span.
 * @return 1 placed; 0 t has no compiled form */
static int
prog_range(const struct ddt_type *t, const struct span *s, const char *packed,
	   char *u, int64_t first, int64_t last)
{
	ssize_t blen = ddt_serialize(t, NULL, 0);
	ssize_t plen = ddt_prog_serialize(t, NULL, 0);
	const struct ddt_blob *b;
	uint64_t *blob, *prog;

	if (plen == -ENOENT)
		return 0;
	assert_true(blen > 0 && plen > 0);
	blob = malloc((size_t)blen);
	prog = malloc((size_t)plen);
	assert_true(blob && prog);
	assert_int_equal(ddt_serialize(t, blob, (size_t)blen), blen);
	assert_int_equal(ddt_prog_serialize(t, prog, (size_t)plen), plen);
	assert_int_equal(ddt_blob_load(blob, (size_t)blen, &b), 0);
	assert_int_equal(ddt_prog_check(prog, (size_t)plen, b), 0);
	for (int64_t i = 0; i < s->hi - s->lo; i++)
		u[i] = (char)(i * 5 + 1);
	assert_int_equal(ddt_prog_unpack_bounded(prog, first, last,
						 packed + first, origin(u, s),
						 s->lo, s->hi), last);
	free(prog);
	free(blob);
	return 1;
}

/* Packed bytes [first, last) alone, unpacked through a segment into the
 * pre-filled span u, must change exactly the bytes they map to (flatten's
 * blocks are in packing order), to what the whole unpack `want` (MPI's or
 * the reference's) has there. */
static void
check_range(const struct ddt_type *t, int64_t count, const struct span *s,
	    const char *packed, const char *want, char *u, int64_t first,
	    int64_t last, const char *expr)
{
	struct ddt_segment *seg = ddt_segment_create(t, count);
	size_t span = (size_t)(s->hi - s->lo);
	int64_t pos = 0;
	char *exp = malloc(span + 1);

	assert_non_null(seg);
	assert_non_null(exp);
	for (size_t i = 0; i < span; i++)
		u[i] = exp[i] = (char)(i * 5 + 1);
	for (int64_t b = 0; b < s->n; b++) {
		for (int64_t k = 0; k < s->iov[b].len; k++, pos++)
			if (pos >= first && pos < last) {
				size_t at = (size_t)(s->iov[b].off + k - s->lo);

				exp[at] = want[at];
			}
	}
	assert_int_equal(ddt_segment_unpack(seg, first, last, packed + first,
					    origin(u, s)), 0);
	for (size_t i = 0; i < span; i++)
		if (u[i] != exp[i])
			fail_msg("%s x%lld: range [%lld, %lld) unpack differs "
				 "from the whole one at span byte %zu of %zu",
				 expr, (long long)count, (long long)first,
				 (long long)last, i, span);
	/* the same range through the compiled form, as ddt_general does */
	if (prog_range(t, s, packed, u, first, last)) {
		for (size_t i = 0; i < span; i++)
			if (u[i] != exp[i])
				fail_msg("%s x%lld: compiled range [%lld, %lld) "
					 "differs from the whole unpack at span "
					 "byte %zu of %zu", expr,
					 (long long)count, (long long)first,
					 (long long)last, i, span);
	}
	ddt_segment_free(seg);
	free(exp);
}

/* Every constructor of t must have MPI's size, lb, extent and true bounds
 * (ddt_mpi_type resizes none of them). use_mpi: pack and unpack are
 * compared with MPI_Pack/MPI_Unpack, otherwise with the reference. */
static void
check_type(struct ddt_type *t, int64_t count, int use_mpi, int *unpacks_p,
	   int *mpi_checked_p)
{
	struct ddt_iov *map = NULL;
	struct ddt_mpi_adjust adj;
	int64_t nmap = 0;
	MPI_Aint lb, ext, tlb, text;
	MPI_Datatype mt;
	char expr[512];
	int64_t size, at;
	size_t span;
	char *typed, *p_ddt, *p_mpi, *u_ddt, *u_mpi;
	int msize, pos, rc;
	struct span s;

	assert_int_equal(ddt_commit(t), 0);
	describe(t, expr, sizeof(expr));
	rc = ddt_mpi_type(t, DDT_MPI_MATCH_BOUNDS, &mt, &adj);
	if (rc != 0)
		fail_msg("%s: no MPI type (%d)", expr, rc);
	if (adj.others + adj.structs != 0)
		fail_msg("%s: lb/extent differ from MPI's in %d non-struct and "
			 "%d struct constructors", expr, adj.others,
			 adj.structs);

	MPI_Type_size(mt, &msize);
	MPI_Type_get_extent(mt, &lb, &ext);
	MPI_Type_get_true_extent(mt, &tlb, &text);
	if (ddt_size(t) != msize || ddt_lb(t) != lb || ddt_extent(t) != ext)
		fail_msg("%s: ddt size/lb/extent %lld/%lld/%lld, MPI "
			 "%d/%lld/%lld", expr, (long long)ddt_size(t),
			 (long long)ddt_lb(t), (long long)ddt_extent(t), msize,
			 (long long)lb, (long long)ext);
	if (ddt_true_lb(t) != tlb || ddt_true_extent(t) != text)
		fail_msg("%s: ddt true lb/extent %lld/%lld, MPI %lld/%lld",
			 expr, (long long)ddt_true_lb(t),
			 (long long)ddt_true_extent(t), (long long)tlb,
			 (long long)text);

	size = ddt_size(t) * count;
	span_of(t, count, &s);
	span = (size_t)(s.hi - s.lo);
	typed = malloc(span + 1);
	u_ddt = malloc(span + 1);
	u_mpi = malloc(span + 1);
	p_ddt = malloc((size_t)size + 1);
	p_mpi = malloc((size_t)size + 1);
	assert_true(typed && u_ddt && u_mpi && p_ddt && p_mpi);
	for (size_t i = 0; i < span; i++)
		typed[i] = (char)(rnd() >> 56);

	if (!use_mpi) {
		nmap = ddt_ref_typemap(t, count, &map);
		assert_true(nmap >= 0);
	}

	/* pack */
	memset(p_ddt, 0x11, (size_t)size);
	memset(p_mpi, 0x22, (size_t)size);
	assert_int_equal(ddt_pack(t, count, origin(typed, &s), p_ddt), 0);
	pos = (int)size;
	if (use_mpi) {
		pos = 0;
		MPI_Pack(origin(typed, &s), (int)count, mt, p_mpi, (int)size,
			 &pos, MPI_COMM_WORLD);
	} else {
		ddt_ref_pack(map, nmap, origin(typed, &s), p_mpi);
	}
	if (pos != size)
		fail_msg("%s x%lld: MPI packed %d bytes, ddt size %lld", expr,
			 (long long)count, pos, (long long)size);
	for (at = 0; at < size && p_ddt[at] == p_mpi[at]; at++)
		;
	if (at < size)
		fail_msg("%s x%lld: ddt_pack differs from %s at byte %lld of "
			 "%lld", expr, (long long)count,
			 use_mpi ? "MPI_Pack" : "the reference", (long long)at,
			 (long long)size);

	/* unpack, into identically pre-filled spans */
	if (!s.overlap) {
		for (size_t i = 0; i < span; i++)
			u_ddt[i] = u_mpi[i] = (char)(i * 7 + 3);
		assert_int_equal(ddt_unpack(t, count, p_mpi,
					    origin(u_ddt, &s)), 0);
		if (use_mpi) {
			pos = 0;
			MPI_Unpack(p_mpi, (int)size, &pos, origin(u_mpi, &s),
				   (int)count, mt, MPI_COMM_WORLD);
			assert_int_equal(pos, size);
		} else {
			ddt_ref_unpack(map, nmap, p_mpi, origin(u_mpi, &s));
		}
		for (at = 0; at < (int64_t)span && u_ddt[at] == u_mpi[at]; at++)
			;
		if (at < (int64_t)span)
			fail_msg("%s x%lld: ddt_unpack differs from %s at span "
				 "byte %lld of %zu", expr, (long long)count,
				 use_mpi ? "MPI_Unpack" : "the reference",
				 (long long)at, span);
		/* and the round trip restores every touched byte */
		for (int64_t b = 0; b < s.n; b++)
			assert_memory_equal(u_ddt + s.iov[b].off - s.lo,
					    typed + s.iov[b].off - s.lo,
					    (size_t)s.iov[b].len);
		/* a packet's range placed on its own, as a NIC handler does */
		if (size > 0) {
			int64_t f = rnd_in(0, size - 1);

			check_range(t, count, &s, p_mpi, u_mpi, u_ddt, f,
				    rnd_in(f + 1, size), expr);
			check_range(t, count, &s, p_mpi, u_mpi, u_ddt,
				    size / 3, size - size / 3, expr);
		}
		(*unpacks_p)++;
	}

	*mpi_checked_p += use_mpi;
	free(map);
	free(p_mpi);
	free(p_ddt);
	free(u_mpi);
	free(u_ddt);
	free(typed);
	free(s.iov);
	ddt_mpi_type_free(&mt);
}

/* Fixed layouts the benchmarks use, then random ones. */
static void
test_fixed_types(void **state)
{
	static const char *const exprs[] = {
		"vector(1024,4,8)[byte]",
		"vector(64,1,1024)[double]",
		"hvector(16,3,-40)[int32]",
		"indexed_block(2;7,0,3,12)[int16]",
		"indexed(3,1,2;5,0,9)[float]",
		"struct(2,1;0,16)[int32,double]",
		"subarray(6,5,4;2,3,2;1,1,1;C)[double_complex]",
		"subarray(6,5,4;2,3,2;1,1,1;F)[complex]",
		"resized(-8,48)[vector(3,1,2)[uint64]]",
		"contig(3)[resized(-4,24)[hvector(2,1,-8)[int32]]]",
	};
	int unpacks = 0, with_mpi = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		const char *err = NULL;
		struct ddt_type *t = ddt_parse(exprs[i], &err);

		if (t == NULL)
			fail_msg("%s: %s", exprs[i], err ? err : "?");
		check_type(t, 1, 1, &unpacks, &with_mpi);
		check_type(t, 3, 1, &unpacks, &with_mpi);
		ddt_free(t);
	}
	assert_int_equal(with_mpi, 2 * (int)(sizeof(exprs) / sizeof(exprs[0])));
	assert_true(unpacks > 0);
}

/* A compiled op of this kind and block size (kern 0: the generic one);
 * a fixed-kernel indexed op with int32 displacements exactly when d32. */
static int
has_op(const struct ddt_type *t, int kind, int64_t bl, int kern_fixed,
       int d32)
{
	const struct ddt_prog *pg = t->prog;

	for (int64_t i = 0; pg != NULL && i < pg->nops; i++) {
		const struct ddt_op *o = &pg->ops[i];

		if (o->kind == kind && o->bl == bl &&
		    (o->kern != 0) == kern_fixed &&
		    o->d32 == (d32 && kind == DDT_OP_IDX && kern_fixed))
			return 1;
	}
	return 0;
}

/* The form's reciprocals: ddt_recip() of every divisor when on (and at
 * least one non-zero when a divisor is not a power of two), all 0 when
 * off. */
static int
has_recips(const struct ddt_type *t, int on)
{
	const struct ddt_prog *pg = t->prog;
	int odd = 0, nz = 0;

	if (pg == NULL)
		return 1;
	if (pg->m_size != (on ? ddt_recip(pg->size) : 0))
		return 0;
	odd += ddt_recip(pg->size) != 0;
	nz += pg->m_size != 0;
	for (int64_t i = 0; i < pg->nops; i++) {
		const struct ddt_op *o = &pg->ops[i];

		if (o->m_bl != (on ? ddt_recip(o->bl) : 0) ||
		    o->m_rs != (on ? ddt_recip(o->rsize) : 0))
			return 0;
		odd += ddt_recip(o->bl) != 0 || ddt_recip(o->rsize) != 0;
		nz += o->m_bl != 0 || o->m_rs != 0;
	}
	return !on || !odd || nz > 0;
}

/* Every kernel of the compiled form (lib/ddt/prog.c), reached by a layout
 * that selects it, byte for byte against MPICH: whole pack and unpack,
 * and ranges through segments and through the serialized form. */
static void
test_prog_kernels(void **state)
{
	static const struct {
		const char *expr;
		int kind;
		int64_t bl;
		int fixed;
	} cases[] = {
		{ "vector(100,1,3)[byte]", DDT_OP_VEC, 1, 1 },
		{ "vector(100,1,3)[int16]", DDT_OP_VEC, 2, 1 },
		{ "vector(100,1,3)[int32]", DDT_OP_VEC, 4, 1 },
		{ "hvector(100,1,-24)[double]", DDT_OP_VEC, 8, 1 },
		{ "vector(100,3,5)[float]", DDT_OP_VEC, 12, 1 },
		{ "vector(50,2,3)[double]", DDT_OP_VEC, 16, 1 },
		{ "vector(50,3,4)[double]", DDT_OP_VEC, 24, 1 },
		{ "vector(50,4,5)[double]", DDT_OP_VEC, 32, 1 },
		{ "vector(20,5,7)[double]", DDT_OP_VEC, 40, 0 },
		{ "vector(10,5,7)[float]", DDT_OP_VEC, 20, 0 },
		/* root vectors: ddt_copy_scatter's 48 and 64 B loops */
		{ "vector(20,6,8)[double]", DDT_OP_VEC, 48, 0 },
		{ "hvector(20,8,-80)[double]", DDT_OP_VEC, 64, 0 },
		{ "vector(8,40,50)[float]", DDT_OP_VEC, 160, 0 },
		{ "indexed_block(40;0,50,120)[float]", DDT_OP_IDX, 160, 0 },
		{ "indexed_block(5;0,6,13)[float]", DDT_OP_IDX, 20, 0 },
		/* a transpose: tiles of repetitions (FFT2D) */
		{ "contig(12)[resized(0,16)[vector(16,1,128)[double_complex]]]",
		  DDT_OP_VEC, 16, 1 },
		{ "contig(9)[resized(0,8)[hvector(7,1,-4096)[double]]]",
		  DDT_OP_VEC, 8, 1 },
		{ "indexed_block(1;9,0,3,17,12)[byte]", DDT_OP_IDX, 1, 1 },
		{ "indexed_block(1;9,0,3,17,12)[int16]", DDT_OP_IDX, 2, 1 },
		{ "indexed_block(1;9,0,3,17,12)[float]", DDT_OP_IDX, 4, 1 },
		{ "indexed_block(1;9,0,3,17,12)[double]", DDT_OP_IDX, 8, 1 },
		{ "indexed_block(3;9,0,3,17,12)[float]", DDT_OP_IDX, 12, 1 },
		{ "indexed_block(2;9,0,3,17,12)[double]", DDT_OP_IDX, 16, 1 },
		{ "indexed_block(3;9,0,3,17,12)[double]", DDT_OP_IDX, 24, 1 },
		{ "indexed_block(4;9,0,4,17,13)[double]", DDT_OP_IDX, 32, 1 },
		{ "indexed_block(5;9,0,20,26)[double]", DDT_OP_IDX, 40, 0 },
		/* merged blocks of 4, 8 and 12 B split back into 4 B ones */
		{ "indexed(1,2,1,3;0,2,6,10)[float]", DDT_OP_IDX, 4, 1 },
		{ "indexed(1,2,1,3;10,2,6,20)[double]", DDT_OP_IDX, 8, 1 },
		{ "indexed(10,11,13;0,20,40)[double]", DDT_OP_IDXV, 0, 0 },
		/* repetitions of one op, and a struct of several */
		{ "hvector(5,1,1000)[vector(4,1,3)[double]]", DDT_OP_VEC, 8, 1 },
		{ "hvector(3,1,-500)[indexed_block(2;0,5,9)[float]]",
		  DDT_OP_IDX, 8, 1 },
		{ "struct(1,1;0,4096)[indexed_block(3;0,7,10)[double],"
		  "indexed_block(1;1,4,6)[int32]]", DDT_OP_IDX, 24, 1 },
		{ "struct(1,1;0,4096)[indexed_block(3;0,7,10)[double],"
		  "indexed_block(1;1,4,6)[int32]]", DDT_OP_IDX, 4, 1 },
		{ "hvector(3,2,700)[struct(1,1;0,48)[vector(3,3,4)[float],"
		  "int64]]", DDT_OP_VEC, 12, 1 },
	};
	const int64_t d32_max = ddt_prog_d32_max;
	int unpacks = 0, with_mpi = 0;

	(void)state;
	/* resumed by reciprocals (the default), then by plain divisions;
	 * listed displacements as int32 (they fit), then as int64 */
	for (int rc = 1; rc >= 0; rc--)
	for (int d32 = 1; d32 >= 0; d32--) {
		ddt_prog_recip = rc;
		ddt_prog_d32_max = d32 ? d32_max : -1;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const char *err = NULL;
			struct ddt_type *t = ddt_parse(cases[i].expr, &err);

			if (t == NULL)
				fail_msg("%s: %s", cases[i].expr,
					 err ? err : "?");
			assert_int_equal(ddt_commit(t), 0);
			if (!has_op(t, cases[i].kind, cases[i].bl,
				    cases[i].fixed, d32))
				fail_msg("%s: no op of kind %d, %lld B blocks "
					 "(%s kernel, d32 %d)", cases[i].expr,
					 cases[i].kind,
					 (long long)cases[i].bl,
					 cases[i].fixed ? "fixed" : "generic",
					 d32);
			if (!has_recips(t, rc))
				fail_msg("%s: reciprocals not as compiled "
					 "(recip %d)", cases[i].expr, rc);
			for (int64_t count = 1; count <= 3; count += 2)
				check_type(t, count, 1, &unpacks, &with_mpi);
			ddt_free(t);
		}
	}
	ddt_prog_d32_max = d32_max;
	ddt_prog_recip = true;
	assert_int_equal(unpacks, 8 * (int)(sizeof(cases) / sizeof(cases[0])));
}

/* Members without data: zero-length vector and indexed_block blocks,
 * struct entries of block length 0, resized types around them, zero-length
 * types, nested in indexed and struct; MPICH places (true) bounds for them
 * where the MPI standard's typemap has nothing. Bounds are compared with
 * MPI for all; bytes too, except where MPICH 4.0.2 divides by zero packing
 * (a zero-length hvector or indexed_block of a resized type in a struct):
 * those against the reference. */
static void
test_empty_members(void **state)
{
	static const struct {
		const char *expr;
		int mpi_pack;
	} cases[] = {
		{ "indexed(1,1,2;3,4,6)[struct(0,3,0,3;2,11,594,598)[uint16,"
		  "resized(-8,192)[vector(7,0,4)[int64]],resized(-7,16)[uint8],"
		  "int32]]", 1 },
		{ "struct(0,3,0,3;2,11,594,598)[uint16,resized(-8,192)[vector(7,"
		  "0,4)[int64]],resized(-7,16)[uint8],int32]", 1 },
		{ "vector(7,0,4)[int64]", 1 },
		{ "resized(-8,192)[vector(7,0,4)[int64]]", 1 },
		{ "hindexed_block(0;3,7)[resized(-4,16)[int32]]", 1 },
		{ "struct(1,1;0,1)[vector(3,0,2)[int32],int8]", 1 },
		{ "struct(2,1;100,0)[vector(3,0,2)[int32],int8]", 1 },
		{ "struct(1,2;40,0)[vector(3,0,-2)[resized(-4,16)[int32]],int16]",
		  0 },
		{ "struct(1,1;8,0)[hvector(3,0,-5)[resized(-4,16)[int32]],"
		  "double]", 0 },
		{ "struct(1,1;0,40)[indexed_block(0;3,7)[int32],int8]", 1 },
		{ "struct(1,1;60,0)[hindexed_block(0;3,7)[resized(-4,16)[int32]],"
		  "int16]", 0 },
		{ "indexed(0,2,0;-5,3,9)[resized(-4,16)[int32]]", 1 },
		{ "struct(1,1,0;0,5,9)[int32,int32,int8]", 1 },
		{ "struct(1,1,0;0,5,9)[int16,int16,int8]", 1 },
		{ "struct(0,1;0,5)[int64,int32]", 1 },
		{ "struct(1,1;50,1)[resized(-3,7)[contig(0)[int32]],int8]", 1 },
		{ "struct(2,1;100,0)[resized(-8,40)[vector(3,0,2)[int32]],int8]",
		  1 },
		{ "struct(1,1;51,0)[contig(0)[int32],int16]", 1 },
		{ "struct(1,1;0,70)[subarray(4,4;0,2;1,1;C)[int32],int8]", 1 },
		{ "contig(2)[struct(1,1;0,17)[vector(3,0,2)[int32],int8]]", 1 },
		{ "hvector(2,1,40)[struct(1,1;0,17)[vector(3,0,2)[int32],int8]]",
		  1 },
		{ "indexed(2,1;0,3)[struct(1,1;1,0)[vector(3,0,2)[int32],int8]]",
		  1 },
		{ "struct(1,2;0,7)[struct(1,1;3,100)[int8,vector(2,0,3)[int8]],"
		  "resized(0,3)[int8]]", 1 },
	};
	int unpacks = 0, with_mpi = 0, want = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *err = NULL;
		struct ddt_type *t = ddt_parse(cases[i].expr, &err);

		if (t == NULL)
			fail_msg("%s: %s", cases[i].expr, err ? err : "?");
		for (int64_t count = 1; count <= 3; count++)
			check_type(t, count, cases[i].mpi_pack, &unpacks,
				   &with_mpi);
		want += 3 * cases[i].mpi_pack;
		ddt_free(t);
	}
	assert_int_equal(with_mpi, want);
	assert_int_equal(unpacks, 3 * (int)(sizeof(cases) / sizeof(cases[0])));
}

/* ddt_gen.h's types never overlap: every one is unpacked too. */
static void
test_gen_types(void **state)
{
	const char *env = getenv("SPINNIC_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x5eed0001;
	int unpacks = 0, with_mpi = 0;

	(void)state;
	for (int i = 0; i < N_TYPES; i++) {
		struct ddt_type *t = ddt_gen_random(&seed, MAX_DEPTH, 4096);

		if (t == NULL)
			fail_msg("ddt_gen_random: %s", ddt_strerror(errno));
		check_type(t, rnd_in(1, 3), !has_empty(t), &unpacks,
			   &with_mpi);
		ddt_free(t);
	}
	assert_int_equal(unpacks, N_TYPES);
	/* most types have no empty members and went against MPI itself */
	print_message("%d of %d types compared with MPI, the rest with the "
		      "reference\n", with_mpi, N_TYPES);
	assert_true(with_mpi > N_TYPES / 2);
}

static void
test_random_types(void **state)
{
	int unpacks = 0, made = 0, with_mpi = 0;

	(void)state;
	for (int i = 0; i < N_TYPES; i++) {
		struct ddt_type *t = gen(MAX_DEPTH);

		/* every generated argument list is valid MPI */
		if (t == NULL)
			fail_msg("constructor refused valid arguments: %s",
				 ddt_strerror(errno));
		check_type(t, rnd_in(1, 3), !has_empty(t), &unpacks,
			   &with_mpi);
		ddt_free(t);
		made++;
	}
	/* most random layouts do not overlap: unpack was compared too */
	assert_int_equal(made, N_TYPES);
	assert_true(with_mpi > N_TYPES / 2);
	assert_true(unpacks > N_TYPES / 4);
}

int
main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_types),
		cmocka_unit_test(test_prog_kernels),
		cmocka_unit_test(test_empty_members),
		cmocka_unit_test(test_gen_types),
		cmocka_unit_test(test_random_types),
	};

	const char *env = getenv("SPINNIC_TEST_SEED");

	/* SPINNIC_TEST_SEED=N reruns with other random types */
	if (env != NULL && strtoull(env, NULL, 0) != 0)
		rng_state = strtoull(env, NULL, 0);
	if (ddt_mpi_init() < 0)
		return 77;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
