/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC's atomic arithmetic (lib/portals/atomic.c): the table of valid
 * (operation, datatype) pairs; every valid pair applied to random elements
 * against a reference computed here in the element's own C type (aligned
 * and unaligned targets, old values fetched); refusals; two threads on one
 * element (SUM int64, a CSWAP lock, a CSWAP increment, the locked path).
 */
#include <complex.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "atomic.h"

#define NELEM 16
#define ELEM_MAX 32
#define NTHREAD_ITERS 100000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* ---- the expectation, written from the specification's text ------------ */

static bool
type_is_int(unsigned int type)
{
	return type <= SPINNIC_PTL_UINT64_T;
}

static bool
type_is_complex(unsigned int type)
{
	return type == SPINNIC_PTL_FLOAT_COMPLEX ||
	       type == SPINNIC_PTL_DOUBLE_COMPLEX ||
	       type == SPINNIC_PTL_LONG_DOUBLE_COMPLEX;
}

static bool
expect_valid(unsigned int op, unsigned int type)
{
	switch (op) {
	case SPINNIC_PTL_SUM:
	case SPINNIC_PTL_PROD:
	case SPINNIC_PTL_SWAP:
	case SPINNIC_PTL_CSWAP:
	case SPINNIC_PTL_CSWAP_NE:
		return true;
	case SPINNIC_PTL_MIN:
	case SPINNIC_PTL_MAX:
	case SPINNIC_PTL_CSWAP_LE:
	case SPINNIC_PTL_CSWAP_LT:
	case SPINNIC_PTL_CSWAP_GE:
	case SPINNIC_PTL_CSWAP_GT:
		return !type_is_complex(type);
	default: /* logical, bitwise, MSWAP */
		return type_is_int(type);
	}
}

/* ---- reference results, one function per C type ------------------------- */

/* New value of t (r), from t, v and the compare value/mask c. */
#define REF_INT(fn, T, U) \
static void \
fn(unsigned int op, const void *tp, const void *vp, const void *cp, \
   void *rp) \
{ \
	T t, v, c, r; \
	\
	memcpy(&t, tp, sizeof(t)); \
	memcpy(&v, vp, sizeof(v)); \
	memcpy(&c, cp, sizeof(c)); \
	switch (op) { \
	case SPINNIC_PTL_MIN: r = v < t ? v : t; break; \
	case SPINNIC_PTL_MAX: r = v > t ? v : t; break; \
	case SPINNIC_PTL_SUM: r = (T)(U)((uint64_t)(U)t + (U)v); break; \
	case SPINNIC_PTL_PROD: \
		r = (T)(U)((uint64_t)(U)t * (uint64_t)(U)v); break; \
	case SPINNIC_PTL_LOR: r = t || v; break; \
	case SPINNIC_PTL_LAND: r = t && v; break; \
	case SPINNIC_PTL_BOR: r = (T)((U)t | (U)v); break; \
	case SPINNIC_PTL_BAND: r = (T)((U)t & (U)v); break; \
	case SPINNIC_PTL_LXOR: r = !t != !v; break; \
	case SPINNIC_PTL_BXOR: r = (T)((U)t ^ (U)v); break; \
	case SPINNIC_PTL_SWAP: r = v; break; \
	case SPINNIC_PTL_CSWAP: r = c == t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_NE: r = c != t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_LE: r = c <= t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_LT: r = c < t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_GE: r = c >= t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_GT: r = c > t ? v : t; break; \
	default: r = (T)(((U)v & (U)c) | ((U)t & (U)~(U)c)); break; \
	} \
	memcpy(rp, &r, sizeof(r)); \
}

#define REF_REAL(fn, T) \
static void \
fn(unsigned int op, const void *tp, const void *vp, const void *cp, \
   void *rp) \
{ \
	T t, v, c, r; \
	\
	memcpy(&t, tp, sizeof(t)); \
	memcpy(&v, vp, sizeof(v)); \
	memcpy(&c, cp, sizeof(c)); \
	switch (op) { \
	case SPINNIC_PTL_MIN: r = v < t ? v : t; break; \
	case SPINNIC_PTL_MAX: r = v > t ? v : t; break; \
	case SPINNIC_PTL_SUM: r = t + v; break; \
	case SPINNIC_PTL_PROD: r = t * v; break; \
	case SPINNIC_PTL_SWAP: r = v; break; \
	case SPINNIC_PTL_CSWAP: r = c == t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_NE: r = c != t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_LE: r = c <= t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_LT: r = c < t ? v : t; break; \
	case SPINNIC_PTL_CSWAP_GE: r = c >= t ? v : t; break; \
	default: r = c > t ? v : t; break; \
	} \
	memcpy(rp, &r, sizeof(r)); \
}

#define REF_CPLX(fn, T) \
static void \
fn(unsigned int op, const void *tp, const void *vp, const void *cp, \
   void *rp) \
{ \
	T t, v, c, r; \
	\
	memcpy(&t, tp, sizeof(t)); \
	memcpy(&v, vp, sizeof(v)); \
	memcpy(&c, cp, sizeof(c)); \
	switch (op) { \
	case SPINNIC_PTL_SUM: r = t + v; break; \
	case SPINNIC_PTL_PROD: r = t * v; break; \
	case SPINNIC_PTL_SWAP: r = v; break; \
	case SPINNIC_PTL_CSWAP: r = c == t ? v : t; break; \
	default: r = c != t ? v : t; break; \
	} \
	memcpy(rp, &r, sizeof(r)); \
}

REF_INT(ref_i8, int8_t, uint8_t)
REF_INT(ref_u8, uint8_t, uint8_t)
REF_INT(ref_i16, int16_t, uint16_t)
REF_INT(ref_u16, uint16_t, uint16_t)
REF_INT(ref_i32, int32_t, uint32_t)
REF_INT(ref_u32, uint32_t, uint32_t)
REF_INT(ref_i64, int64_t, uint64_t)
REF_INT(ref_u64, uint64_t, uint64_t)
REF_REAL(ref_f, float)
REF_REAL(ref_d, double)
REF_REAL(ref_ld, long double)
REF_CPLX(ref_cf, float complex)
REF_CPLX(ref_cd, double complex)
REF_CPLX(ref_cld, long double complex)

typedef void (*ref_fn)(unsigned int, const void *, const void *,
		       const void *, void *);

static const struct {
	ref_fn ref;
	size_t size;
	const char *name;
} types[SPINNIC_PTL_DATATYPE_LAST] = {
	[SPINNIC_PTL_INT8_T] = { ref_i8, 1, "int8" },
	[SPINNIC_PTL_UINT8_T] = { ref_u8, 1, "uint8" },
	[SPINNIC_PTL_INT16_T] = { ref_i16, 2, "int16" },
	[SPINNIC_PTL_UINT16_T] = { ref_u16, 2, "uint16" },
	[SPINNIC_PTL_INT32_T] = { ref_i32, 4, "int32" },
	[SPINNIC_PTL_UINT32_T] = { ref_u32, 4, "uint32" },
	[SPINNIC_PTL_INT64_T] = { ref_i64, 8, "int64" },
	[SPINNIC_PTL_UINT64_T] = { ref_u64, 8, "uint64" },
	[SPINNIC_PTL_FLOAT] = { ref_f, sizeof(float), "float" },
	[SPINNIC_PTL_FLOAT_COMPLEX] = { ref_cf, sizeof(float complex),
					"float complex" },
	[SPINNIC_PTL_DOUBLE] = { ref_d, sizeof(double), "double" },
	[SPINNIC_PTL_DOUBLE_COMPLEX] = { ref_cd, sizeof(double complex),
					 "double complex" },
	[SPINNIC_PTL_LONG_DOUBLE] = { ref_ld, sizeof(long double),
				      "long double" },
	[SPINNIC_PTL_LONG_DOUBLE_COMPLEX] = {
		ref_cld, sizeof(long double complex), "long double complex" },
};

/* ---- values -------------------------------------------------------------- */

/* A random element of a type: integers any bits (a few small ones, so the
 * logical operations see zeros); reals small multiples of 1/8, so sums
 * and products stay exact and comparisons go both ways. */
static void
rnd_elem(unsigned int type, void *p)
{
	size_t size = types[type].size;
	uint64_t x = rnd();
	long double parts[2];

	if (type_is_int(type)) {
		if (x % 5 == 0)
			x %= 3;
		memset(p, 0, size);
		memcpy(p, &x, size);
		return;
	}
	parts[0] = (long double)((int)(x % 41) - 20) / 8;
	parts[1] = (long double)((int)((x >> 8) % 41) - 20) / 8;
	switch (type) {
	case SPINNIC_PTL_FLOAT:
		*(float *)p = (float)parts[0];
		break;
	case SPINNIC_PTL_DOUBLE:
		*(double *)p = (double)parts[0];
		break;
	case SPINNIC_PTL_LONG_DOUBLE:
		memset(p, 0, size);
		*(long double *)p = parts[0];
		break;
	case SPINNIC_PTL_FLOAT_COMPLEX:
		*(float complex *)p = CMPLXF((float)parts[0], (float)parts[1]);
		break;
	case SPINNIC_PTL_DOUBLE_COMPLEX:
		*(double complex *)p = CMPLX((double)parts[0],
					     (double)parts[1]);
		break;
	default:
		memset(p, 0, size);
		*(long double complex *)p = CMPLXL(parts[0], parts[1]);
		break;
	}
}

/* Equal as values of the type (long double's padding bytes differ). */
static bool
elem_equal(unsigned int type, const void *a, const void *b)
{
	/* copied out: the elements may be unaligned */
	switch (type) {
	case SPINNIC_PTL_LONG_DOUBLE: {
		long double x, y;

		memcpy(&x, a, sizeof(x));
		memcpy(&y, b, sizeof(y));
		return x == y;
	}
	case SPINNIC_PTL_LONG_DOUBLE_COMPLEX: {
		long double complex x, y;

		memcpy(&x, a, sizeof(x));
		memcpy(&y, b, sizeof(y));
		return x == y;
	}
	default:
		return memcmp(a, b, types[type].size) == 0;
	}
}

/* ---- tests --------------------------------------------------------------- */

static void
test_valid_table(void **state)
{
	unsigned int op, type, n = 0;

	(void)state;
	for (op = 0; op < SPINNIC_PTL_OP_LAST; op++)
		for (type = 0; type < SPINNIC_PTL_DATATYPE_LAST; type++) {
			assert_int_equal(ptl_atomic_valid(op, type),
					 expect_valid(op, type));
			n += ptl_atomic_valid(op, type);
		}
	/* 22 MIN/MAX, 28 SUM/PROD, 48 logical and bitwise, 42 SWAP/CSWAP/
	 * CSWAP_NE, 44 ordered CSWAPs, 8 MSWAP */
	assert_int_equal(n, 192);
	assert_false(ptl_atomic_valid(SPINNIC_PTL_OP_LAST, 0));
	assert_false(ptl_atomic_valid(0, SPINNIC_PTL_DATATYPE_LAST));
	assert_false(ptl_atomic_valid(~0u, ~0u));
	for (type = 0; type < SPINNIC_PTL_DATATYPE_LAST; type++)
		assert_int_equal(ptl_atomic_type_size(type),
				 types[type].size);
	assert_int_equal(ptl_atomic_type_size(SPINNIC_PTL_DATATYPE_LAST), 0);
}

/* One (op, type) on NELEM random elements at target + shift. */
static void
check_pair(unsigned int op, unsigned int type, size_t shift)
{
	size_t size = types[type].size, len = NELEM * size, i;
	uint8_t buf[NELEM * ELEM_MAX + 8], old[NELEM * ELEM_MAX];
	uint8_t v[NELEM * ELEM_MAX], fetch[NELEM * ELEM_MAX];
	uint8_t want[ELEM_MAX], c[ELEM_MAX];
	uint8_t *t = buf + shift;

	rnd_elem(type, c);
	for (i = 0; i < NELEM; i++) {
		rnd_elem(type, old + i * size);
		rnd_elem(type, v + i * size);
	}
	/* some elements equal to the compare value: every CSWAP both ways */
	memcpy(old, c, size);
	memcpy(old + 3 * size, c, size);
	memcpy(t, old, len);
	assert_int_equal(ptl_atomic_apply(op, type, t, v, c, len, fetch), 0);
	for (i = 0; i < NELEM; i++) {
		types[type].ref(op, old + i * size, v + i * size, c, want);
		if (!elem_equal(type, t + i * size, want))
			fail_msg("op %u on %s, element %zu (shift %zu): wrong "
				 "result", op, types[type].name, i, shift);
		if (!elem_equal(type, fetch + i * size, old + i * size))
			fail_msg("op %u on %s, element %zu: wrong old value",
				 op, types[type].name, i);
	}
}

static void
test_every_pair(void **state)
{
	unsigned int op, type, rounds;

	(void)state;
	for (rounds = 0; rounds < 20; rounds++)
		for (op = 0; op < SPINNIC_PTL_OP_LAST; op++)
			for (type = 0; type < SPINNIC_PTL_DATATYPE_LAST;
			     type++) {
				if (!ptl_atomic_valid(op, type))
					continue;
				check_pair(op, type, 0);
				/* unaligned: the locked path */
				check_pair(op, type, 1 + rounds % 7);
			}
}

static void
test_refusals(void **state)
{
	unsigned int op, type;
	uint64_t t[4] = { 1, 2, 3, 4 }, v[4] = { 5, 6, 7, 8 }, c = 1;
	uint64_t before[4];

	(void)state;
	memcpy(before, t, sizeof(t));
	for (op = 0; op < SPINNIC_PTL_OP_LAST; op++)
		for (type = 0; type < SPINNIC_PTL_DATATYPE_LAST; type++)
			if (!expect_valid(op, type))
				assert_int_equal(ptl_atomic_apply(op, type, t,
								  v, &c, 8,
								  NULL),
						 -EINVAL);
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_OP_LAST,
					  SPINNIC_PTL_INT64_T, t, v, &c, 8,
					  NULL), -EINVAL);
	/* not a multiple of the element size */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T,
					  t, v, NULL, 12, NULL), -EINVAL);
	/* a compare value or mask is needed */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_CSWAP,
					  SPINNIC_PTL_INT64_T, t, v, NULL, 8,
					  NULL), -EINVAL);
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_MSWAP,
					  SPINNIC_PTL_UINT32_T, t, v, NULL, 4,
					  NULL), -EINVAL);
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T,
					  NULL, v, NULL, 8, NULL), -EINVAL);
	assert_memory_equal(t, before, sizeof(t));
	/* nothing to do */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T,
					  NULL, NULL, NULL, 0, NULL), 0);
}

static void
test_nan_and_wrap(void **state)
{
	double t[2] = { __builtin_nan(""), 1.0 }, v[2] = { 0.0,
		__builtin_nan("") };
	int8_t i8 = 127, one = 1, m = -128;
	uint8_t u8 = 0xf0, mask = 0x3c, nv = 0x0f;

	(void)state;
	/* a NaN target stays, a NaN operand changes nothing */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_MIN, SPINNIC_PTL_DOUBLE,
					  t, v, NULL, sizeof(t), NULL), 0);
	assert_true(t[0] != t[0]);
	assert_true(t[1] == 1.0);
	/* signed wrap, signed compare */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT8_T,
					  &i8, &one, NULL, 1, NULL), 0);
	assert_int_equal(i8, -128);
	i8 = 5;
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_MIN, SPINNIC_PTL_INT8_T,
					  &i8, &m, NULL, 1, NULL), 0);
	assert_int_equal(i8, -128);
	/* MSWAP: bits of the mask from the new value */
	assert_int_equal(ptl_atomic_apply(SPINNIC_PTL_MSWAP,
					  SPINNIC_PTL_UINT8_T, &u8, &nv, &mask,
					  1, NULL), 0);
	assert_int_equal(u8, 0xcc);
}

/* ---- two threads on one element ----------------------------------------- */

/* cmocka's asserts may not run on other threads */
#define CHECK0(x) \
	do { \
		if ((x) != 0) \
			abort(); \
	} while (0)

struct race {
	int64_t sum;              /* SUM int64, aligned */
	uint8_t unaligned[16];    /* SUM int64 at +1: the locked path */
	double complex csum;      /* SUM double complex: the locked path */
	int64_t casw;             /* incremented with CSWAP */
	uint32_t lock;            /* a CSWAP spin lock ... */
	uint64_t guarded;         /* ... around a plain counter */
	int64_t *olds[2];         /* old values SUM fetched, per thread */
	pthread_barrier_t go;
};

static void
race_lock(struct race *r)
{
	uint32_t one = 1, zero = 0, old;
	unsigned int spins = 0;

	for (;;) {
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_CSWAP,
					SPINNIC_PTL_UINT32_T, &r->lock, &one,
					&zero, 4, &old));
		if (old == 0)
			return;
		if (++spins % 64 == 0)
			sched_yield();
	}
}

static void
race_unlock(struct race *r)
{
	uint32_t zero = 0;

	CHECK0(ptl_atomic_apply(SPINNIC_PTL_SWAP, SPINNIC_PTL_UINT32_T,
				&r->lock, &zero, NULL, 4, NULL));
}

/* increment with CSWAP only: read, then swap in old + 1 if still old */
static void
race_cas_inc(struct race *r)
{
	int64_t zero = 0, old, nv, seen;

	for (;;) {
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_BOR, SPINNIC_PTL_INT64_T,
					&r->casw, &zero, NULL, 8, &old));
		nv = old + 1;
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_CSWAP, SPINNIC_PTL_INT64_T,
					&r->casw, &nv, &old, 8, &seen));
		if (seen == old)
			return;
	}
}

static void *
race_thread(void *arg)
{
	struct race *r = arg;
	static int next;
	int me = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) % 2;
	int64_t one = 1;
	double complex c1 = CMPLX(1.0, 2.0);

	pthread_barrier_wait(&r->go);
	for (int i = 0; i < NTHREAD_ITERS; i++) {
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T,
					&r->sum, &one, NULL, 8,
					&r->olds[me][i]));
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T,
					r->unaligned + 1, &one, NULL, 8, NULL));
		CHECK0(ptl_atomic_apply(SPINNIC_PTL_SUM,
					SPINNIC_PTL_DOUBLE_COMPLEX, &r->csum,
					&c1, NULL, sizeof(c1), NULL));
		race_cas_inc(r);
		if (i % 4 == 0) {
			race_lock(r);
			r->guarded++;
			race_unlock(r);
		}
	}
	return NULL;
}

static void
test_two_threads(void **state)
{
	struct race *r = calloc(1, sizeof(*r));
	uint8_t *seen = calloc(2 * NTHREAD_ITERS, 1);
	pthread_t th[2];
	int64_t un;

	(void)state;
	assert_non_null(r);
	assert_non_null(seen);
	r->olds[0] = calloc(NTHREAD_ITERS, sizeof(int64_t));
	r->olds[1] = calloc(NTHREAD_ITERS, sizeof(int64_t));
	assert_non_null(r->olds[0]);
	assert_non_null(r->olds[1]);
	assert_int_equal(pthread_barrier_init(&r->go, NULL, 2), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, race_thread, r),
				 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	assert_int_equal(r->sum, 2 * NTHREAD_ITERS);
	/* the fetched old values: each of 0 .. 2n-1 exactly once */
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < NTHREAD_ITERS; i++) {
			int64_t o = r->olds[t][i];

			assert_true(o >= 0 && o < 2 * NTHREAD_ITERS);
			assert_int_equal(seen[o], 0);
			seen[o] = 1;
		}
	memcpy(&un, r->unaligned + 1, sizeof(un));
	assert_int_equal(un, 2 * NTHREAD_ITERS);
	assert_true(creal(r->csum) == 2.0 * NTHREAD_ITERS);
	assert_true(cimag(r->csum) == 4.0 * NTHREAD_ITERS);
	assert_int_equal(r->casw, 2 * NTHREAD_ITERS);
	assert_int_equal(r->guarded, 2 * (NTHREAD_ITERS / 4));
	assert_int_equal(r->lock, 0);
	pthread_barrier_destroy(&r->go);
	free(r->olds[0]);
	free(r->olds[1]);
	free(seen);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_table),
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_nan_and_wrap),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
