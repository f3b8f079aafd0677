/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoints: the interval model of paper 000 §3.2.4, lookup, and
 * restoring from a flat copy of the checkpoint array (as in NIC memory).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddt.h"
#include "ddt_gen.h"

static int64_t npkt(const struct ddt_ckpt_model *m)
{
	return m->msg_size == 0 ? 1
		: (m->msg_size - 1) / m->pkt_payload + 1;
}

/* (1): T_pkt + q (P-1) T_pkt <= eps ceil(npkt/P) T_PH */
static bool overhead_ok(const struct ddt_ckpt_model *m, int64_t q)
{
	double lhs = m->t_pkt + (double)q * (m->hpus - 1) * m->t_pkt;
	double rhs = m->epsilon * (double)((npkt(m) - 1) / m->hpus + 1) *
		     m->t_ph;

	return lhs <= rhs * (1 + 1e-12);
}

static bool mem_ok(const struct ddt_ckpt_model *m, int64_t q)
{
	return (uint64_t)((npkt(m) - 1) / q + 1) * m->ckpt_size <= m->nic_mem;
}

static bool buf_ok(const struct ddt_ckpt_model *m, int64_t q)
{
	double a = m->t_ph * m->pkt_payload / m->t_pkt;
	double dr = (double)q * m->pkt_payload;

	return m->pkt_buf == 0 || (a < dr ? a : dr) <= (double)m->pkt_buf;
}

static void test_paper_setting(void **state)
{
	/* 4 MiB message, 2 KiB packets, 16 HPUs, 200 Gbit/s, 1 us handlers */
	struct ddt_ckpt_model m = {
		.epsilon = 0.2, .nic_mem = 1 << 20, .pkt_buf = 0, .hpus = 16,
		.pkt_payload = 2048, .t_pkt = 2048 * 8 / 200e9, .t_ph = 1e-6,
		.ckpt_size = 612, .msg_size = 4 << 20,
	};
	int64_t dr;

	(void)state;
	/* eps * ceil(2048/16) * 1us = 25.6 us; T_pkt = 81.92 ns:
	 * q <= (25.6 us - 81.92 ns) / (15 * 81.92 ns) = 20.76 -> 20 */
	dr = ddt_ckpt_select_interval(&m);
	assert_int_equal(dr, 20 * 2048);
	/* faster handlers: smaller interval (more checkpoints) */
	m.t_ph = 0.25e-6;
	assert_int_equal(ddt_ckpt_select_interval(&m), 5 * 2048);
	/* too little NIC memory for that: memory wins, q = ceil(2048/8) */
	m.nic_mem = 8 * 612;
	assert_int_equal(ddt_ckpt_select_interval(&m), 256 * 2048);
	/* not even one checkpoint */
	m.nic_mem = 611;
	assert_int_equal(ddt_ckpt_select_interval(&m), -ENOSPC);
	/* one HPU: no scheduling dependency, one checkpoint per message */
	m.nic_mem = 1 << 20;
	m.hpus = 1;
	assert_int_equal(ddt_ckpt_select_interval(&m), 2048 * 2048);
	/* slow handlers and a small packet buffer cap the interval */
	m.hpus = 16;
	m.t_ph = 1e-3;
	m.pkt_buf = 64 * 1024;
	assert_int_equal(ddt_ckpt_select_interval(&m), 32 * 2048);
	m.epsilon = 0;
	assert_int_equal(ddt_ckpt_select_interval(&m), -EINVAL);
	assert_int_equal(ddt_ckpt_select_interval(NULL), -EINVAL);
}

static void test_model_properties(void **state)
{
	uint64_t s = 5;

	(void)state;
	for (int n = 0; n < 20000; n++) {
		struct ddt_ckpt_model m = {
			.epsilon = 0.01 + (double)(ddt_gen_rand(&s) % 100) / 200,
			.nic_mem = ddt_gen_rand(&s) % (1 << 22),
			.pkt_buf = ddt_gen_rand(&s) % 2 ? 0
				   : ddt_gen_rand(&s) % (1 << 20),
			.hpus = 1 + (uint32_t)(ddt_gen_rand(&s) % 32),
			.pkt_payload = 64 + (uint32_t)(ddt_gen_rand(&s) % 4096),
			.t_pkt = 1e-9 * (1 + (double)(ddt_gen_rand(&s) % 1000)),
			.t_ph = 1e-9 * (double)(ddt_gen_rand(&s) % 100000),
			.ckpt_size = 64 + ddt_gen_rand(&s) % 1024,
			.msg_size = (int64_t)(ddt_gen_rand(&s) % (64 << 20)),
		};
		int64_t dr = ddt_ckpt_select_interval(&m), q, np = npkt(&m);

		if (m.nic_mem < m.ckpt_size) {
			assert_int_equal(dr, -ENOSPC);
			continue;
		}
		assert_true(dr > 0);
		assert_int_equal(dr % m.pkt_payload, 0);
		q = dr / m.pkt_payload;
		assert_true(q >= 1);
		/* memory is a hard limit */
		assert_true(mem_ok(&m, q));
		if (q > 1 && !mem_ok(&m, q - 1)) {
			/* raised to the smallest q that fits */
			continue;
		}
		/* otherwise q is the largest meeting (1) and (3), capped at
		 * one checkpoint per message */
		assert_true(q <= np);
		if (q > 1)
			assert_true(overhead_ok(&m, q) || m.hpus == 1);
		if (q < np)
			assert_true(!overhead_ok(&m, q + 1) || !buf_ok(&m, q + 1));
		assert_true(buf_ok(&m, q) || q == 1);
	}
}

static void test_find_and_array(void **state)
{
	struct ddt_type *t = ddt_parse("vector(100,3,7)[int32]", NULL);
	struct ddt_ckpt_set *c;
	struct ddt_segment *s;
	uint8_t *arr, src[1200], dst[2800], want[2800];
	size_t cs;

	(void)state;
	assert_int_equal(ddt_commit(t), 0);
	c = ddt_ckpt_create(t, 1, 100);
	assert_non_null(c);
	assert_int_equal(ddt_ckpt_count(c), 12);
	assert_int_equal(ddt_ckpt_find(c, 0), 0);
	assert_int_equal(ddt_ckpt_find(c, 99), 0);
	assert_int_equal(ddt_ckpt_find(c, 100), 1);
	assert_int_equal(ddt_ckpt_find(c, 1199), 11);
	assert_int_equal(ddt_ckpt_find(c, 5000), 11);
	assert_int_equal(ddt_ckpt_find(c, -1), -EINVAL);
	assert_null(ddt_ckpt_state(c, 12));
	assert_int_equal(ddt_ckpt_restore(c, 12, NULL), -EINVAL);
	/* copy all checkpoints into one array, as into NIC memory */
	cs = ddt_ckpt_size(c);
	arr = malloc(cs * 12);
	for (int i = 0; i < 12; i++)
		memcpy(arr + cs * (size_t)i, ddt_ckpt_state(c, i), cs);
	for (int i = 0; i < 1200; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	memset(want, 0, sizeof(want));
	assert_int_equal(ddt_unpack(t, 1, src, want), 0);
	memset(dst, 0, sizeof(dst));
	s = ddt_segment_create(t, 1);
	/* packets of 100 bytes in reverse order, each from its checkpoint */
	for (int p = 11; p >= 0; p--) {
		assert_int_equal(ddt_segment_restore(s, arr + cs * (size_t)p,
						     cs), 0);
		assert_int_equal(ddt_segment_pos(s), p * 100);
		assert_int_equal(ddt_segment_unpack(s, p * 100, p * 100 + 100,
						    src + p * 100, dst), 0);
	}
	assert_memory_equal(dst, want, sizeof(want));
	/* a checkpoint of another type is refused */
	{
		struct ddt_type *u = ddt_parse("vector(100,3,8)[int32]", NULL);
		struct ddt_segment *su;

		ddt_commit(u);
		su = ddt_segment_create(u, 1);
		assert_int_equal(ddt_segment_restore(su, arr, cs), -EINVAL);
		ddt_segment_free(su);
		ddt_free(u);
	}
	ddt_segment_free(s);
	/* the same from a segment built in caller memory */
	{
		const struct ddt_blob *v;
		ssize_t bl = ddt_serialize(t, NULL, 0);
		uint64_t blob[256], mem[64];

		assert_true(bl > 0 && (size_t)bl <= sizeof(blob));
		ddt_serialize(t, blob, sizeof(blob));
		assert_int_equal(ddt_blob_load(blob, (size_t)bl, &v), 0);
		assert_true(ddt_segment_mem_size(v) <= sizeof(mem));
		assert_null(ddt_segment_init(mem, ddt_segment_mem_size(v) - 1,
					     v, 1));
		assert_int_equal(errno, EINVAL);
		s = ddt_segment_init(mem, sizeof(mem), v, 1);
		assert_ptr_equal(s, mem);
		memset(dst, 0, sizeof(dst));
		for (int p = 0; p < 12; p++) {
			assert_int_equal(ddt_segment_restore(s,
					arr + cs * (size_t)(11 - p), cs), 0);
			assert_int_equal(ddt_segment_unpack(s, (11 - p) * 100,
					(11 - p) * 100 + 100,
					src + (11 - p) * 100, dst), 0);
		}
		assert_memory_equal(dst, want, sizeof(want));
	}
	free(arr);
	ddt_ckpt_free(c);
	ddt_free(t); /* the set held its own reference */
	assert_null(ddt_ckpt_create(NULL, 1, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_setting),
		cmocka_unit_test(test_model_properties),
		cmocka_unit_test(test_find_and_array),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
