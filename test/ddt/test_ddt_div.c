/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ddt_div() with the reciprocals ddt_recip() stores in the compiled form,
 * against the plain division: edge divisors (3, powers of two and their
 * neighbours, 2^32 - 1, above 2^32) and dividends (0, multiples and their
 * neighbours, 2^32 - 1, 2^32, 2^61), every dividend below 2^16 for small
 * divisors, and random pairs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ddt_internal.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check(int64_t a, int64_t d)
{
	uint64_t m = ddt_recip(d);
	int64_t q = ddt_div(a, d, m);

	if (q != a / d)
		fail_msg("%lld / %lld: %lld, not %lld (m %llu)", (long long)a,
			 (long long)d, (long long)q, (long long)(a / d),
			 (unsigned long long)m);
}

static void check_around(int64_t a, int64_t d)
{
	for (int64_t i = -2; i <= 2; i++)
		if (a + i >= 0 && a + i <= ((int64_t)1 << 61))
			check(a + i, d);
}

static const int64_t edge_d[] = {
	1, 2, 3, 4, 5, 6, 7, 9, 12, 24, 48, 96, 100, 255, 257, 641, 768,
	1000, 1025, 4095, 4097, 65535, 65537, 6700417, 0x7fffffff,
	0x80000001ll, 0xfffffffell, 0xffffffffll, 0x100000000ll,
	0x100000001ll, 0x1fffffffffll, (int64_t)1 << 61,
};

static void test_recip(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(edge_d) / sizeof(edge_d[0]); i++) {
		int64_t d = edge_d[i];

		/* the reciprocal exists exactly where it is exact */
		assert_true((ddt_recip(d) != 0) ==
			    (d > 2 && (d & (d - 1)) != 0 &&
			     d <= (int64_t)UINT32_MAX));
	}
	assert_int_equal(ddt_recip(0), 0);
	assert_int_equal(ddt_recip(-3), 0);
	assert_int_equal(ddt_recip(3), 0x5555555555555556ull);
}

static void test_edges(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(edge_d) / sizeof(edge_d[0]); i++) {
		int64_t d = edge_d[i];
		int64_t k32 = (int64_t)UINT32_MAX / d;

		check_around(0, d);
		check_around(d, d);
		check_around(2 * d, d);
		check_around(k32 * d, d);
		check_around((k32 + 1) * d, d);
		check_around(UINT32_MAX, d);
		check_around((int64_t)1 << 32, d);
		check_around((int64_t)1 << 61, d);
		for (int j = 0; j < 1000; j++) {
			int64_t q = (int64_t)(next() % ((uint64_t)k32 + 1));

			check_around(q * d, d);
		}
	}
}

static void test_small_all(void **state)
{
	(void)state;
	for (int64_t d = 1; d <= 1100; d++)
		for (int64_t a = 0; a < (1 << 16); a++)
			check(a, d);
}

static void test_random(void **state)
{
	(void)state;
	for (int i = 0; i < 4000000; i++) {
		uint64_t r = next();
		/* divisors of 1 to 32 bits, dividends mostly below 2^32 */
		int64_t d = (int64_t)(next() >> (32 + r % 32));
		int64_t a = (int64_t)(next() >> (r & 64 ? 3 : 32));

		if (d == 0)
			d = 1;
		check(a, d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recip),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_small_all),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
