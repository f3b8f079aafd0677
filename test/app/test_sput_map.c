/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the piece map of streaming puts (app/spinnic/sput_map.c):
 * merging of adjacent pieces, the declared length (past it, EOM short of
 * it), empty pieces, and random piece sequences read back by random byte
 * ranges against a simulated host memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sput_map.h"

static void
test_merge_and_limits(void **state)
{
	struct sput_map m;

	(void)state;
	sput_map_init(&m, 100);
	assert_int_equal(sput_map_add(&m, 1000, 10, false), 0);
	assert_int_equal(sput_map_add(&m, 1010, 20, false), 0); /* merges */
	assert_int_equal(m.n, 1);
	assert_int_equal(sput_map_add(&m, 5000, 0, false), 0);  /* empty */
	assert_int_equal(m.n, 1);
	assert_int_equal(sput_map_add(&m, 500, 30, false), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.ext[1].msg_off, 30);
	assert_int_equal(m.avail, 60);
	/* past the declared length; EOM short of it: refused, unchanged */
	assert_int_equal(sput_map_add(&m, 0, 41, false), -ERANGE);
	assert_int_equal(sput_map_add(&m, 0, 39, true), -ERANGE);
	assert_int_equal(sput_map_add(&m, UINT64_MAX - 5, 10, false),
			 -EOVERFLOW);
	assert_int_equal(m.avail, 60);
	assert_int_equal(m.n, 2);
	assert_int_equal(sput_map_add(&m, 0, 40, true), 0);
	assert_int_equal(m.avail, 100);
	/* nothing more fits, not even with EOM */
	assert_int_equal(sput_map_add(&m, 0, 1, true), -ERANGE);
	assert_int_equal(sput_map_add(&m, 0, 0, true), 0);
	sput_map_fini(&m);
	assert_null(m.ext);
}

struct sim {
	const uint8_t *host;    /* simulated client memory, address 0.. */
	uint64_t host_len;
	uint8_t *dst;
	uint64_t runs;
	uint64_t stop_after;    /* return 7 after this many runs (0: never) */
};

static int
sim_run(void *arg, uint64_t addr, uint64_t len, uint64_t dst_off)
{
	struct sim *s = arg;

	assert_true(len > 0);
	assert_true(addr + len <= s->host_len);
	memcpy(s->dst + dst_off, s->host + addr, len);
	if (++s->runs == s->stop_after)
		return 7;
	return 0;
}

static void
test_walk_bounds(void **state)
{
	uint8_t host[64], dst[64];
	struct sim s = { host, sizeof(host), dst, 0, 0 };
	struct sput_map m;

	(void)state;
	for (unsigned i = 0; i < sizeof(host); i++)
		host[i] = (uint8_t)i;
	sput_map_init(&m, 40);
	assert_int_equal(sput_map_walk(&m, 0, 0, sim_run, &s), 0);
	assert_int_equal(sput_map_walk(&m, 0, 1, sim_run, &s), -ERANGE);
	assert_int_equal(sput_map_add(&m, 30, 10, false), 0);
	assert_int_equal(sput_map_add(&m, 0, 10, false), 0);
	assert_int_equal(sput_map_walk(&m, 5, 16, sim_run, &s), -ERANGE);
	assert_int_equal(sput_map_walk(&m, 5, 10, sim_run, &s), 0);
	assert_int_equal(s.runs, 2);
	assert_memory_equal(dst, host + 35, 5);
	assert_memory_equal(dst + 5, host, 5);
	/* a callback's non-zero value stops the walk and comes back */
	s.runs = 0;
	s.stop_after = 1;
	assert_int_equal(sput_map_walk(&m, 0, 20, sim_run, &s), 7);
	assert_int_equal(s.runs, 1);
	sput_map_fini(&m);
}

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random pieces from random places; every random range reads back the
 * bytes of the concatenated pieces. */
static void
test_random(void **state)
{
	enum { HOST = 1 << 16 };
	uint8_t *host = malloc(HOST), *want = malloc(HOST), *dst = malloc(HOST);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_non_null(host);
	assert_non_null(want);
	assert_non_null(dst);
	for (unsigned i = 0; i < HOST; i++)
		host[i] = (uint8_t)rnd(&x);
	for (unsigned round = 0; round < 200; round++) {
		uint64_t total = rnd(&x) % 20000;
		struct sim s = { host, HOST, dst, 0, 0 };
		struct sput_map m;
		uint64_t at = rnd(&x) % HOST;

		sput_map_init(&m, total);
		while (m.avail < total) {
			uint64_t len = rnd(&x) % (1 + (rnd(&x) % 3 == 0 ?
							  5000 : 40));

			if (len > total - m.avail)
				len = total - m.avail;
			/* often right after the previous piece (merges) */
			if (rnd(&x) % 3 != 0 || at + len > HOST)
				at = rnd(&x) % (HOST - len + 1);
			memcpy(want + m.avail, host + at, len);
			assert_int_equal(sput_map_add(&m, at, len,
						      m.avail + len == total &&
						      rnd(&x) % 2), 0);
			at += len;
		}
		for (unsigned q = 0; q < 50 && total > 0; q++) {
			uint64_t off = rnd(&x) % total;
			uint64_t len = rnd(&x) % (total - off + 1);

			memset(dst, 0, len);
			assert_int_equal(sput_map_walk(&m, off, len, sim_run,
						       &s), 0);
			assert_memory_equal(dst, want + off, len);
		}
		sput_map_fini(&m);
	}
	free(dst);
	free(want);
	free(host);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_and_limits),
		cmocka_unit_test(test_walk_bounds),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
