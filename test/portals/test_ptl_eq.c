/* SPDX-License-Identifier: BSD-3-Clause */
/* Event queues (overflow), counting events, host memory access. */
#include <pthread.h>

#include "ptl_test.h"

static void
mk_event(struct spinnic_event *ev, uint64_t tag)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = SPINNIC_PTL_EVENT_PUT;
	ev->user_ptr = tag;
	ev->mlength = tag * 10;
	ev->seq = 0xffffffff; /* overwritten by the NIC */
}

static void
test_eq_overflow(void **state)
{
	struct t_env e;
	struct spinnic_event ev, before[4];
	struct spinnic_eq *q;
	struct ptl_nic_stats s;
	int i;

	(void)state;
	t_env_setup_opts(&e, 4, 0, NULL);
	q = t_eq(&e, T_EQ_OFF);
	assert_int_equal(q->mask, 3);
	for (i = 0; i < 4; i++) {
		mk_event(&ev, (uint64_t)i + 1);
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), 0);
	}
	memcpy(before, q->slots, sizeof(before));
	/* full: dropped and flagged, nothing else touched */
	for (i = 0; i < 3; i++) {
		mk_event(&ev, 100 + (uint64_t)i);
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), -ENOBUFS);
	}
	assert_memory_equal(before, q->slots, sizeof(before));
	assert_int_equal(q->head, 4);
	assert_int_equal(q->dropped, 3);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.eq_dropped, 3);
	assert_int_equal(s.eq_posted, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_PUT);
		assert_int_equal(ev.user_ptr, (uint64_t)i + 1);
		assert_int_equal(ev.mlength, ((uint64_t)i + 1) * 10);
		assert_int_equal(ev.seq, (uint32_t)i + 1);
	}
	/* room again: wraps around */
	mk_event(&ev, 9);
	assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.user_ptr, 9);
	assert_int_equal(ev.seq, 5);
	/* a consumer index ahead of the producer is not believed */
	q->tail = q->head + 100;
	assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), -ENOBUFS);
	assert_int_equal(q->head, 5);
	/* NONE is a no-op, a stale handle is refused */
	assert_int_equal(ptl_eq_post(e.c, SPINNIC_HANDLE_NONE, &ev), 0);
	{
		struct spinnic_ctrl_msg m;

		memset(&m, 0, sizeof(m));
		m.u.eq.ni = e.ni;
		m.u.eq.eq = e.eq;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_FREE, &m),
				 SPINNIC_PTL_OK);
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), -EBADF);
		/* reallocated in the same slot: the old handle stays dead */
		q->tail = 0;
		q->head = 0;
		assert_int_not_equal(t_eq_alloc(&e, e.c, e.ni, T_EQ_OFF, 4),
				     e.eq);
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), -EBADF);
	}
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.eq_bad, 2);
	t_env_teardown(&e);
}

struct poster {
	struct t_env *e;
	int n;
	int base;
};

static void *
poster_run(void *arg)
{
	struct poster *p = arg;
	struct spinnic_event ev;
	int i;

	for (i = 0; i < p->n; i++) {
		mk_event(&ev, (uint64_t)(p->base + i));
		while (ptl_eq_post(p->e->c, p->e->eq, &ev) == -ENOBUFS)
			sched_yield();
	}
	return NULL;
}

static void
test_eq_concurrent(void **state)
{
	struct t_env e;
	struct poster p[2];
	pthread_t th[2];
	struct spinnic_event ev;
	static uint8_t seen[2000];
	int got = 0, i;

	(void)state;
	t_env_setup_opts(&e, 64, 0, NULL);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < 2; i++) {
		p[i].e = &e;
		p[i].n = 1000;
		p[i].base = i * 1000;
		assert_int_equal(pthread_create(&th[i], NULL, poster_run,
						&p[i]), 0);
	}
	while (got < 2000) {
		if (t_ev_next(&e, T_EQ_OFF, &ev) < 0) {
			sched_yield();
			continue;
		}
		assert_true(ev.user_ptr < 2000);
		assert_int_equal(seen[ev.user_ptr], 0);
		assert_int_equal(ev.mlength, ev.user_ptr * 10);
		seen[ev.user_ptr] = 1;
		got++;
	}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t_env_teardown(&e);
}

static void
test_ct(void **state)
{
	struct t_env e;
	struct spinnic_ctrl_msg m;
	struct spinnic_ct *rec;
	uint32_t ct;

	(void)state;
	t_env_setup(&e);
	rec = (struct spinnic_ct *)(e.region + T_CT_OFF);
	rec->success = 55; /* alloc zeroes it */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	ct = m.u.ct.ct;
	assert_int_equal(rec->success, 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 3, 0), 0);
	assert_int_equal(ptl_ct_inc(e.c, ct, 0, 1), 0);
	assert_int_equal(rec->success, 3);
	assert_int_equal(rec->failure, 1);
	assert_int_equal(rec->futex, 2);
	assert_int_equal(ptl_ct_set(e.c, ct, 10, 20), 0);
	assert_int_equal(rec->success, 10);
	assert_int_equal(rec->failure, 20);
	/* an EQ handle is not a CT handle */
	assert_int_equal(ptl_ct_inc(e.c, e.eq, 1, 0), -EBADF);
	assert_int_equal(ptl_ct_inc(e.c, SPINNIC_HANDLE_NONE, 1, 0), 0);
	/* ME with CT_COMM|CT_BYTES counts bytes of matched messages */
	{
		struct t_me me;
		struct spinnic_pkt h;
		struct ptl_match mt;

		t_me_default(&me);
		me.ct = ct;
		me.options |= SPINNIC_PTL_ME_EVENT_CT_COMM |
			      SPINNIC_PTL_ME_EVENT_CT_BYTES |
			      SPINNIC_PTL_ME_EVENT_COMM_DISABLE;
		t_me_append(&e, &me);
		t_hdr(&e, &h, 0, 300);
		assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
		ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
		assert_int_equal(rec->success, 310);
		assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
		ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_DROPPED);
		assert_int_equal(rec->success, 310);
		assert_int_equal(rec->failure, 21);
	}
	/* freed */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct = ct;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(ptl_ct_inc(e.c, ct, 1, 0), -EBADF);
	assert_int_equal(rec->success, 310);
	t_env_teardown(&e);
}

static void
test_host_memory(void **state)
{
	struct t_env e;
	struct ptl_nic_stats s;
	uint8_t src[256], dst[256];
	uint8_t *outside;
	uint64_t base;
	size_t i;

	(void)state;
	t_env_setup(&e);
	base = t_addr(&e, 0);
	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i ^ 0x5a);
	/* fast path: inside the region */
	assert_int_equal(ptl_host_write(e.c, base + T_BUF_OFF, src, 256), 0);
	assert_memory_equal(e.region + T_BUF_OFF, src, 256);
	memset(dst, 0, sizeof(dst));
	assert_int_equal(ptl_host_read(e.c, base + T_BUF_OFF, dst, 256), 0);
	assert_memory_equal(dst, src, 256);
	assert_ptr_equal(ptl_host_ptr(e.c, base + 100, 10), e.region + 100);
	assert_ptr_equal(ptl_host_ptr(e.c, base + T_REGION_SIZE - 10, 10),
			 e.region + T_REGION_SIZE - 10);
	assert_null(ptl_host_ptr(e.c, base + T_REGION_SIZE - 10, 11));
	assert_null(ptl_host_ptr(e.c, base - 1, 2));
	assert_null(ptl_host_ptr(e.c, ~0ull - 4, 8));
	/* slow path: the client's own memory outside the region */
	outside = calloc(1, 4096);
	assert_non_null(outside);
	assert_int_equal(ptl_host_write(e.c, (uint64_t)(uintptr_t)outside + 10,
					src, 256), 0);
	assert_memory_equal(outside + 10, src, 256);
	{
		struct ptl_host_iov v[3] = {
			{ (uint64_t)(uintptr_t)outside, dst, 16 },
			{ base + T_BUF_OFF + 16, dst + 16, 16 },
			{ (uint64_t)(uintptr_t)outside + 300, dst + 32, 8 },
		};

		memset(dst, 0xee, sizeof(dst));
		memset(outside + 300, 0x77, 8);
		assert_int_equal(ptl_host_readv(e.c, v, 3), 0);
		assert_int_equal(dst[0], 0);
		assert_memory_equal(dst + 10, src, 6);
		assert_memory_equal(dst + 16, src + 16, 16);
		assert_int_equal(dst[32], 0x77);
		assert_int_equal(dst[40], 0xee);
	}
	/* unmapped client memory: a fault, not a crash */
	assert_int_equal(ptl_host_write(e.c, 16, src, 8), -EFAULT);
	/* a range that wraps */
	assert_int_equal(ptl_host_write(e.c, ~0ull - 4, src, 8), -EFAULT);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.fast_bytes, 512 + 16);
	assert_int_equal(s.slow_path_bytes, 256 + 24);
	assert_int_equal(s.slow_path_calls, 3);
	assert_int_equal(s.host_fault, 2);
	free(outside);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eq_overflow),
		cmocka_unit_test(test_eq_concurrent),
		cmocka_unit_test(test_ct),
		cmocka_unit_test(test_host_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
