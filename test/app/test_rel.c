/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable delivery's sequence logic (app/spinnic/rel.h): the receive
 * window against a reference set, in random order with duplicates, across
 * the 32-bit wrap; epochs; and the sender's reading of acks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel.h"

#define MIN_(a, b) ((a) < (b) ? (a) : (b))

static uint64_t rng = 88172645463325252ull;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Deliver seqs start..start+n-1, shuffled within windows of up to REL_WIN
 * (as the sender's window allows) and with duplicates: each is NEW once,
 * every later copy DUP, and next ends past them all. */
static void
run_stream(uint32_t start)
{
	enum { N = 5000 };
	static uint32_t order[2 * N];
	static uint8_t got[N];
	struct rel_rxwin w;
	unsigned n = 0, i, news = 0;

	memset(&w, 0, sizeof(w));
	memset(got, 0, sizeof(got));
	/* the window starts at `start`: as if that much had come before */
	assert_int_equal(rel_rx_check(&w, 7, start), REL_OTHER);
	assert_true(rel_rx_accept(&w, 7, start));
	for (i = 0; i < N; i++) {
		order[n++] = i;
		if (rnd(10) == 0)
			order[n++] = i; /* a duplicate */
	}
	/* shuffle within blocks of 128: no packet is ever a window ahead
	 * of the oldest missing one, as the sender guarantees */
	for (i = 0; i < n; i += 128) {
		unsigned len = MIN_(n - i, 128u), k;

		for (k = len - 1; k > 0; k--) {
			unsigned j = rnd(k + 1);
			uint32_t t = order[i + k];

			order[i + k] = order[i + j];
			order[i + j] = t;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t seq = start + order[i];
		enum rel_verdict v = rel_rx_check(&w, 7, seq);

		if (got[order[i]]) {
			assert_int_equal(v, REL_DUP);
			continue;
		}
		assert_int_equal(v, REL_NEW);
		got[order[i]] = 1;
		news++;
		rel_rx_mark(&w, seq);
		/* sack bits are exactly the received seqs above next */
		{
			uint64_t s = rel_rx_sack(&w, w.next + 1);
			unsigned b;

			for (b = 0; b < 64; b++) {
				uint32_t k = w.next + 1 + b - start;
				bool have = k < N && got[k];

				assert_int_equal((s >> b) & 1, have);
			}
		}
	}
	assert_int_equal(news, N);
	assert_int_equal(w.next, start + N);
}

static void
test_stream(void **state)
{
	(void)state;
	run_stream(0);
	run_stream(UINT32_MAX - 1234); /* crosses the wrap */
}

static void
test_window_edges(void **state)
{
	struct rel_rxwin w;

	(void)state;
	memset(&w, 0, sizeof(w));
	/* no window: nothing is taken before an epoch is accepted */
	assert_int_equal(rel_rx_check(&w, 100, 0), REL_OTHER);
	assert_true(rel_rx_accept(&w, 100, 0));
	assert_int_equal(rel_rx_check(&w, 100, 3), REL_NEW);
	assert_int_equal(w.next, 0);
	/* the last seq of the window, and the first past it */
	assert_int_equal(rel_rx_check(&w, 100, REL_WIN - 1), REL_NEW);
	assert_int_equal(rel_rx_check(&w, 100, REL_WIN), REL_BEYOND);
	rel_rx_mark(&w, REL_WIN - 1);
	assert_int_equal(w.next, 0);
	rel_rx_mark(&w, 0);
	assert_int_equal(w.next, 1);
	assert_int_equal(rel_rx_check(&w, 100, 0), REL_DUP);
	/* any other epoch, older or newer, changes nothing: it may be
	 * forged (issue: one TACK with epoch now + 2^30 cut a peer off) */
	assert_int_equal(rel_rx_check(&w, 99, 1), REL_OTHER);
	assert_int_equal(rel_rx_check(&w, 101, 5), REL_OTHER);
	assert_int_equal(rel_rx_check(&w, 100u + (1u << 30), 0), REL_OTHER);
	assert_int_equal(w.epoch, 100);
	assert_int_equal(w.next, 1);
	assert_int_equal(rel_rx_check(&w, 100, 1), REL_NEW);
	/* a repeated answer for the current epoch does not move it back */
	assert_false(rel_rx_accept(&w, 100, 0));
	assert_int_equal(w.next, 1);
	assert_true(rel_bit(w.bits, REL_WIN - 1));
	/* a verified new epoch starts where its sender's window starts */
	assert_true(rel_rx_accept(&w, 7, 1000));
	assert_int_equal(w.next, 1000);
	assert_int_equal(rel_rx_check(&w, 7, 999), REL_DUP);
	assert_int_equal(rel_rx_check(&w, 7, 1000), REL_NEW);
	assert_int_equal(rel_rx_check(&w, 100, 1), REL_OTHER);
}

static void
test_acked(void **state)
{
	(void)state;
	/* cumulative: below ack_seq */
	assert_true(rel_acked(9, 10, 11, 0));
	assert_false(rel_acked(10, 10, 11, 0));
	/* selective, relative to the base */
	assert_true(rel_acked(11, 10, 11, 1));
	assert_true(rel_acked(74, 10, 11, 1ull << 63));
	assert_false(rel_acked(75, 10, 11, ~0ull));
	assert_false(rel_acked(12, 10, 11, 1));
	/* a later block */
	assert_true(rel_acked(200, 10, 139, 1ull << 61));
	assert_false(rel_acked(138, 10, 139, ~0ull));
	/* across the wrap */
	assert_true(rel_acked(UINT32_MAX, 2, 3, 0));
	assert_true(rel_acked(1, 0, UINT32_MAX, 4));
	assert_int_equal(rel_seq_diff(1, UINT32_MAX), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_window_edges),
		cmocka_unit_test(test_acked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
