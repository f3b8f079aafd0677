/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NIC's atomic arithmetic (atomic.h): the specification's table of
 * valid (operation, datatype) pairs, and element-wise application. An
 * element's new value is computed from byte copies (no alignment needed);
 * it is stored with a compare-and-swap loop (or a fetch-and-op) when the
 * element is a natively aligned 1/2/4/8-byte integer, float or double,
 * else under a striped lock. Called by the target engine (to come).
 */
#include <assert.h>
#include <complex.h>
#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "atomic.h"
#include "atomic_types.h"

/* Why a lock table for the rest: complex types (8 to 32 bytes), long
 * double (16 bytes, 10 significant) and unaligned elements have no
 * lock-free atomic instruction that C exposes without undefined behaviour
 * (__atomic on a misaligned object is undefined; x86's split locks are
 * slow and may be disabled); libatomic would take its own locks for them
 * anyway. A stripe is chosen by the element's address, so every caller
 * applying the same datatype to the same element takes the same lock. */
#define ATOMIC_STRIPES 64u
#define ATOMIC_ELEM_MAX 32u /* long double complex */

static_assert(sizeof(long double complex) <= ATOMIC_ELEM_MAX,
	      "element buffer");
static_assert(__atomic_always_lock_free(8, 0) &&
	      __atomic_always_lock_free(4, 0), "lock-free words");

#define STRIPE1 PTHREAD_MUTEX_INITIALIZER
#define STRIPE8 STRIPE1, STRIPE1, STRIPE1, STRIPE1, STRIPE1, STRIPE1, \
	STRIPE1, STRIPE1
static pthread_mutex_t atomic_stripes[ATOMIC_STRIPES] = {
	STRIPE8, STRIPE8, STRIPE8, STRIPE8, STRIPE8, STRIPE8, STRIPE8, STRIPE8,
};

bool
ptl_atomic_valid(unsigned int op, unsigned int type)
{
	return spinnic_atomic_valid(op, type);
}

size_t
ptl_atomic_type_size(unsigned int type)
{
	return spinnic_atomic_size(type);
}

static bool
kind_is_int(unsigned int kind)
{
	return kind == AK_SINT || kind == AK_UINT;
}

static bool
op_is_cswap(unsigned int op)
{
	return op >= SPINNIC_PTL_CSWAP && op <= SPINNIC_PTL_CSWAP_GT;
}

/* Whether "c <op> t" holds, from cmp = -1, 0, 1 (c below, equal, above
 * t) or 2 (unordered: a NaN, or complex values that differ). */
static bool
cswap_holds(unsigned int op, int cmp)
{
	switch (op) {
	case SPINNIC_PTL_CSWAP:
		return cmp == 0;
	case SPINNIC_PTL_CSWAP_NE:
		return cmp != 0;
	case SPINNIC_PTL_CSWAP_LE:
		return cmp == -1 || cmp == 0;
	case SPINNIC_PTL_CSWAP_LT:
		return cmp == -1;
	case SPINNIC_PTL_CSWAP_GE:
		return cmp == 1 || cmp == 0;
	default: /* SPINNIC_PTL_CSWAP_GT */
		return cmp == 1;
	}
}

/* ---- integers: every width in 64 bits ----------------------------------- */

static uint64_t
int_load(const void *p, size_t size)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 2:
		memcpy(&u16, p, 2);
		return u16;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

static void
int_store(void *p, size_t size, uint64_t x)
{
	uint8_t u8 = (uint8_t)x;
	uint16_t u16 = (uint16_t)x;
	uint32_t u32 = (uint32_t)x;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		break;
	case 2:
		memcpy(p, &u16, 2);
		break;
	case 4:
		memcpy(p, &u32, 4);
		break;
	default:
		memcpy(p, &x, 8);
		break;
	}
}

/* -1, 0, 1: a below, equal to, above b (zero-extended values of size) */
static int
int_cmp(uint64_t a, uint64_t b, size_t size, bool sgn)
{
	unsigned int shift = 64u - 8u * (unsigned int)size;

	if (sgn) {
		/* move the sign bit to bit 63, then compare as signed */
		int64_t sa = (int64_t)(a << shift), sb = (int64_t)(b << shift);

		return sa < sb ? -1 : sa > sb;
	}
	return a < b ? -1 : a > b;
}

/* t = op(t, v) for the arithmetic and logical operations */
static uint64_t
int_arith(unsigned int op, uint64_t t, uint64_t v, size_t size, bool sgn)
{
	switch (op) {
	case SPINNIC_PTL_MIN:
		return int_cmp(v, t, size, sgn) < 0 ? v : t;
	case SPINNIC_PTL_MAX:
		return int_cmp(v, t, size, sgn) > 0 ? v : t;
	case SPINNIC_PTL_SUM:
		return t + v; /* unsigned: wraps, truncated at the store */
	case SPINNIC_PTL_PROD:
		return t * v;
	case SPINNIC_PTL_LOR:
		return t != 0 || v != 0;
	case SPINNIC_PTL_LAND:
		return t != 0 && v != 0;
	case SPINNIC_PTL_BOR:
		return t | v;
	case SPINNIC_PTL_BAND:
		return t & v;
	case SPINNIC_PTL_LXOR:
		return (t != 0) != (v != 0);
	default: /* SPINNIC_PTL_BXOR */
		return t ^ v;
	}
}

static bool
int_compute(unsigned int op, const struct atomic_type *at, const void *tp,
	    const void *vp, const void *cp, void *rp)
{
	bool sgn = at->kind == AK_SINT;
	uint64_t t = int_load(tp, at->size), v = int_load(vp, at->size), c;

	if (op_is_cswap(op)) {
		c = int_load(cp, at->size);
		if (!cswap_holds(op, int_cmp(c, t, at->size, sgn)))
			return false;
		memcpy(rp, vp, at->size);
		return true;
	}
	if (op == SPINNIC_PTL_MSWAP) {
		c = int_load(cp, at->size);
		int_store(rp, at->size, (v & c) | (t & ~c));
		return true;
	}
	int_store(rp, at->size, int_arith(op, t, v, at->size, sgn));
	return true;
}

/* ---- reals and complex: one function per C type -------------------------- */

/* -1, 0, 1, or 2 when unordered (a NaN) */
#define REAL_CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : (a) == (b) ? 0 : 2)

/* t = op(t, v), c compared for the CSWAPs; r only written when stored.
 * The result is built in a zeroed variable so that long double's padding
 * bytes are stored as zeros, not as whatever the stack held. */
#define REAL_COMPUTE(fn, T) \
static bool \
fn(unsigned int op, const void *tp, const void *vp, const void *cp, \
   void *rp) \
{ \
	T t, v, c, r; \
	\
	memcpy(&t, tp, sizeof(t)); \
	memcpy(&v, vp, sizeof(v)); \
	memset(&r, 0, sizeof(r)); \
	if (op_is_cswap(op)) { \
		memcpy(&c, cp, sizeof(c)); \
		if (!cswap_holds(op, REAL_CMP(c, t))) \
			return false; \
		memcpy(rp, vp, sizeof(v)); \
		return true; \
	} \
	switch (op) { \
	case SPINNIC_PTL_MIN: \
		if (!(v < t)) \
			return false; \
		r = v; \
		break; \
	case SPINNIC_PTL_MAX: \
		if (!(v > t)) \
			return false; \
		r = v; \
		break; \
	case SPINNIC_PTL_SUM: \
		r = t + v; \
		break; \
	default: /* SPINNIC_PTL_PROD */ \
		r = t * v; \
		break; \
	} \
	memcpy(rp, &r, sizeof(r)); \
	return true; \
}

/* complex: SUM, PROD, and the CSWAP/CSWAP_NE equality */
#define CPLX_COMPUTE(fn, T) \
static bool \
fn(unsigned int op, const void *tp, const void *vp, const void *cp, \
   void *rp) \
{ \
	T t, v, c, r; \
	\
	memcpy(&t, tp, sizeof(t)); \
	memcpy(&v, vp, sizeof(v)); \
	memset(&r, 0, sizeof(r)); \
	if (op_is_cswap(op)) { \
		memcpy(&c, cp, sizeof(c)); \
		if (!cswap_holds(op, c == t ? 0 : 2)) \
			return false; \
		memcpy(rp, vp, sizeof(v)); \
		return true; \
	} \
	r = op == SPINNIC_PTL_SUM ? t + v : t * v; \
	memcpy(rp, &r, sizeof(r)); \
	return true; \
}

REAL_COMPUTE(float_compute, float)
REAL_COMPUTE(double_compute, double)
REAL_COMPUTE(ldouble_compute, long double)
CPLX_COMPUTE(cfloat_compute, float complex)
CPLX_COMPUTE(cdouble_compute, double complex)
CPLX_COMPUTE(cldouble_compute, long double complex)

/* The new value r of one element from its old value t. @return whether r
 * is to be stored (false: a CSWAP whose condition fails, a MIN/MAX that
 * changes nothing) */
/* Bytes of a long double that carry its value: x86's 80-bit extended
 * format in 16 bytes leaves 6 of padding, which a store of the value
 * (even into a zeroed variable: the compiler may drop the zeroing) leaves
 * as whatever the register spill held. */
#if LDBL_MANT_DIG == 64
#define LDBL_VALUE_BYTES 10u
#else
#define LDBL_VALUE_BYTES sizeof(long double)
#endif

/* Zero the padding of @p n long doubles at @p r (a result to store).
 * @return true */
static bool
ldouble_clean(void *r, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		memset((uint8_t *)r + i * sizeof(long double) +
		       LDBL_VALUE_BYTES, 0,
		       sizeof(long double) - LDBL_VALUE_BYTES);
	return true;
}

static bool
elem_compute(unsigned int op, unsigned int type, const void *t,
	     const void *v, const void *c, void *r)
{
	const struct atomic_type *at = &atomic_types[type];

	if (op == SPINNIC_PTL_SWAP) {
		memcpy(r, v, at->size);
		return true;
	}
	switch (type) {
	case SPINNIC_PTL_FLOAT:
		return float_compute(op, t, v, c, r);
	case SPINNIC_PTL_DOUBLE:
		return double_compute(op, t, v, c, r);
	case SPINNIC_PTL_LONG_DOUBLE:
		return ldouble_compute(op, t, v, c, r) &&
			ldouble_clean(r, 1);
	case SPINNIC_PTL_FLOAT_COMPLEX:
		return cfloat_compute(op, t, v, c, r);
	case SPINNIC_PTL_DOUBLE_COMPLEX:
		return cdouble_compute(op, t, v, c, r);
	case SPINNIC_PTL_LONG_DOUBLE_COMPLEX:
		return cldouble_compute(op, t, v, c, r) &&
			ldouble_clean(r, 2);
	default:
		return int_compute(op, at, t, v, c, r);
	}
}

/* ---- storing: lock-free words, or the stripe lock ------------------------ */

/* One fetch-and-op instruction for this (op, integer type)? Then do it.
 * @return whether it was done */
#define WORD_FETCH_OP(fn, U) \
static bool \
fn(unsigned int op, bool is_int, U *t, U v, U *old_p) \
{ \
	if (op == SPINNIC_PTL_SWAP) { \
		*old_p = __atomic_exchange_n(t, v, __ATOMIC_ACQ_REL); \
		return true; \
	} \
	if (!is_int) \
		return false; \
	switch (op) { \
	case SPINNIC_PTL_SUM: \
		*old_p = __atomic_fetch_add(t, v, __ATOMIC_ACQ_REL); \
		return true; \
	case SPINNIC_PTL_BOR: \
		*old_p = __atomic_fetch_or(t, v, __ATOMIC_ACQ_REL); \
		return true; \
	case SPINNIC_PTL_BAND: \
		*old_p = __atomic_fetch_and(t, v, __ATOMIC_ACQ_REL); \
		return true; \
	case SPINNIC_PTL_BXOR: \
		*old_p = __atomic_fetch_xor(t, v, __ATOMIC_ACQ_REL); \
		return true; \
	default: \
		return false; \
	} \
}

/* An aligned word: a fetch-and-op, else compare-and-swap until no other
 * writer came between the read and the store. A computation that stores
 * nothing is linearized at its (acquire) read. */
#define WORD_APPLY(fn, fetch_op, U) \
static void \
fn(unsigned int op, unsigned int type, void *tp, const void *vp, \
   const void *cp, void *fetch) \
{ \
	U *t = tp, old, nv, v; \
	\
	memcpy(&v, vp, sizeof(v)); \
	if (!fetch_op(op, kind_is_int(atomic_types[type].kind), t, v, \
		      &old)) { \
		old = __atomic_load_n(t, __ATOMIC_ACQUIRE); \
		while (elem_compute(op, type, &old, vp, cp, &nv) && \
		       !__atomic_compare_exchange_n(t, &old, nv, true, \
						    __ATOMIC_ACQ_REL, \
						    __ATOMIC_ACQUIRE)) \
			; \
	} \
	if (fetch != NULL) \
		memcpy(fetch, &old, sizeof(old)); \
}

WORD_FETCH_OP(word8_fetch_op, uint8_t)
WORD_FETCH_OP(word16_fetch_op, uint16_t)
WORD_FETCH_OP(word32_fetch_op, uint32_t)
WORD_FETCH_OP(word64_fetch_op, uint64_t)
WORD_APPLY(word8_apply, word8_fetch_op, uint8_t)
WORD_APPLY(word16_apply, word16_fetch_op, uint16_t)
WORD_APPLY(word32_apply, word32_fetch_op, uint32_t)
WORD_APPLY(word64_apply, word64_fetch_op, uint64_t)

static pthread_mutex_t *
stripe_of(const void *elem)
{
	uintptr_t a = (uintptr_t)elem;

	return &atomic_stripes[((a >> 3) ^ (a >> 9)) % ATOMIC_STRIPES];
}

static void
locked_apply(unsigned int op, unsigned int type, uint8_t *t, const void *v,
	     const void *c, void *fetch)
{
	size_t size = atomic_types[type].size;
	pthread_mutex_t *m = stripe_of(t);
	uint8_t old[ATOMIC_ELEM_MAX], nv[ATOMIC_ELEM_MAX];

	pthread_mutex_lock(m);
	memcpy(old, t, size);
	if (elem_compute(op, type, old, v, c, nv))
		memcpy(t, nv, size);
	pthread_mutex_unlock(m);
	if (fetch != NULL)
		memcpy(fetch, old, size);
}

static void
elem_apply(unsigned int op, unsigned int type, uint8_t *t, const void *v,
	   const void *c, void *fetch)
{
	const struct atomic_type *at = &atomic_types[type];
	bool word = at->kind != AK_CPLX && at->size <= 8 &&
		((uintptr_t)t & (at->size - 1u)) == 0;

	if (!word) {
		locked_apply(op, type, t, v, c, fetch);
		return;
	}
	switch (at->size) {
	case 1:
		word8_apply(op, type, t, v, c, fetch);
		break;
	case 2:
		word16_apply(op, type, t, v, c, fetch);
		break;
	case 4:
		word32_apply(op, type, t, v, c, fetch);
		break;
	default:
		word64_apply(op, type, t, v, c, fetch);
		break;
	}
}

int
ptl_atomic_apply(unsigned int op, unsigned int type, void *target,
		 const void *operand, const void *compare_or_mask, size_t len,
		 void *fetch_out)
{
	size_t size, i;
	bool needs_c = op_is_cswap(op) || op == SPINNIC_PTL_MSWAP;

	if (!ptl_atomic_valid(op, type))
		return -EINVAL;
	size = atomic_types[type].size;
	if (len % size != 0 || (needs_c && compare_or_mask == NULL) ||
	    (len > 0 && (target == NULL || operand == NULL)))
		return -EINVAL;
	for (i = 0; i < len; i += size)
		elem_apply(op, type, (uint8_t *)target + i,
			   (const uint8_t *)operand + i, compare_or_mask,
			   fetch_out != NULL ? (uint8_t *)fetch_out + i : NULL);
	return 0;
}
