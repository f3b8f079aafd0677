/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations and counter updates in libspinnic, against the fake
 * NIC (fake_nic.c): PtlCTInc/PtlCTSet visible to the caller's next
 * PtlCTGet at once; PtlTriggered* as a TRIG slot and the operation's,
 * published together; max_triggered_ops (PTL_NO_SPACE, freed by the NIC's
 * trig_done); bad handles; PtlCTCancelTriggered returns only after the
 * NIC consumed it; PtlTriggeredMEAppend's reservation and commands;
 * spin_trig_set_period: the period in the TRIG command, per thread.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_nic.h"
#include "shim_internal.h"

struct fx {
	struct fake_nic f;
	ptl_handle_ni_t ni;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	uint8_t *buf;
};

static int
setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	ptl_md_t md = { .length = 64, .eq_handle = PTL_EQ_NONE,
			.ct_handle = PTL_CT_NONE };

	if (x == NULL || fake_nic_start(&x->f, FAKE_ANSWER) != 0)
		return -1;
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, NULL, &x->ni) != PTL_OK ||
	    PtlCTAlloc(x->ni, &x->ct) != PTL_OK)
		return -1;
	x->buf = spin_host_alloc(64);
	md.start = x->buf;
	if (x->buf == NULL || PtlMDBind(x->ni, &md, &x->md) != PTL_OK)
		return -1;
	*state = x;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *x = *state;
	int bad;

	while (shim_g.init_refs > 0)
		PtlFini();
	fake_nic_stop(&x->f);
	bad = x->f.bad_msgs;
	free(x);
	return bad == 0 ? 0 : -1;
}

static ptl_process_t
phys(ptl_nid_t nid, ptl_pid_t pid)
{
	ptl_process_t p = { .phys = { .nid = nid, .pid = pid } };

	return p;
}

static struct spinnic_cmd_ring *
ring(struct fx *x)
{
	const struct spinnic_region_hdr *h = (const void *)x->f.region;

	return (struct spinnic_cmd_ring *)(x->f.region + h->cmd_off);
}

/* The bug: inc/set went to the NIC and a PtlCTGet right after read the
 * old value. Nothing consumes the fake NIC's ring here. */
static void
test_ct_visible_at_once(void **state)
{
	struct fx *x = *state;
	ptl_ct_event_t inc = { .success = 2, .failure = 1 }, v;
	ptl_ct_event_t set = { .success = 7, .failure = 0 };
	ptl_ct_event_t s2 = { .success = 2 }, f1 = { .failure = 1 };

	/* both fields non-zero: refused (the specification), unchanged */
	assert_int_equal(PtlCTInc(x->ct, inc), PTL_ARG_INVALID);
	assert_int_equal(PtlTriggeredCTInc(x->ct, inc, x->ct, 1),
			 PTL_ARG_INVALID);
	assert_int_equal(PtlCTGet(x->ct, &v), PTL_OK);
	assert_int_equal(v.success, 0);
	assert_int_equal(v.failure, 0);
	assert_int_equal(PtlCTInc(x->ct, s2), PTL_OK);
	assert_int_equal(PtlCTInc(x->ct, f1), PTL_OK);
	assert_int_equal(PtlCTGet(x->ct, &v), PTL_OK);
	assert_int_equal(v.success, 2);
	assert_int_equal(v.failure, 1);
	assert_int_equal(PtlCTWait(x->ct, 3, &v), PTL_OK);
	assert_int_equal(PtlCTSet(x->ct, set), PTL_OK);
	assert_int_equal(PtlCTGet(x->ct, &v), PTL_OK);
	assert_int_equal(v.success, 7);
	assert_int_equal(v.failure, 0);
	assert_int_equal(PtlCTInc(x->ct, s2), PTL_OK);
	assert_int_equal(PtlCTInc(x->ct, f1), PTL_OK);
	assert_int_equal(PtlCTGet(x->ct, &v), PTL_OK);
	assert_int_equal(v.success, 9);
	assert_int_equal(v.failure, 1);
}

static void
test_trig_commands(void **state)
{
	struct fx *x = *state;
	ptl_ct_event_t one = { .success = 1, .failure = 0 };
	struct spinnic_cmd c;

	assert_int_equal(PtlTriggeredPut(x->md, 8, 16, PTL_NO_ACK_REQ,
					 phys(1, 2), 4, 0x55, 32, NULL, 0xd,
					 x->ct, 5),
			 PTL_OK);
	assert_int_equal(ring(x)->head - ring(x)->tail, 2);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_TRIG);
	assert_int_equal(c.length, 5);
	assert_int_equal(c.md, x->f.last[SPINNIC_CTRL_CT_ALLOC].u.ct.ct);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_PUT);
	assert_int_equal(c.local_offset, 8);
	assert_int_equal(c.length, 16);
	assert_int_equal(c.match_bits, 0x55);
	assert_int_equal(PtlTriggeredGet(x->md, 0, 8, phys(1, 2), 4, 0, 0,
					 NULL, x->ct, 0), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_GET);
	assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 1), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_CT_INC);
	assert_int_equal(c.ct_success, 1);
	/* checked like the plain calls, and the trigger CT */
	assert_int_equal(PtlTriggeredPut(x->md, 60, 16, PTL_NO_ACK_REQ,
					 phys(1, 2), 4, 0, 0, NULL, 0, x->ct,
					 1), PTL_ARG_INVALID);
	assert_int_equal(PtlTriggeredPut(x->md, 0, 16, PTL_NO_ACK_REQ,
					 phys(1, 2), 4, 0, 0, NULL, 0, x->md,
					 1), PTL_ARG_INVALID);
	/* an ack with nowhere to land (no EQ, no CT), as PtlPut */
	assert_int_equal(PtlTriggeredPut(x->md, 0, 16, PTL_ACK_REQ,
					 phys(1, 2), 4, 0, 0, NULL, 0, x->ct,
					 1), PTL_ARG_INVALID);
	assert_int_equal(PtlTriggeredCTSet(x->md, one, x->ct, 1),
			 PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&x->f, &c));
}

/* PtlTriggeredMEAppend: the entry reserved by a control ME_APPEND
 * (SPINNIC_CTRL_F_ME_RESERVE), its handle at once, then TRIG + ME_APPEND
 * naming it; PtlTriggeredMEUnlink: TRIG + ME_UNLINK */
static void
test_trig_me(void **state)
{
	struct fx *x = *state;
	struct spinnic_cmd c;
	ptl_handle_me_t h = PTL_INVALID_HANDLE;
	uint32_t nic_me;
	ptl_me_t me;

	memset(&me, 0, sizeof(me));
	me.start = x->buf;
	me.length = 64;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 0x66;
	assert_int_equal(PtlTriggeredMEAppend(x->ni, 4, &me,
					      PTL_PRIORITY_LIST, (void *)0x9,
					      &h, x->ct, 3), PTL_OK);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].flags,
			 SPINNIC_CTRL_F_ME_RESERVE);
	assert_int_equal(x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.match_bits,
			 0x66);
	nic_me = x->f.last[SPINNIC_CTRL_ME_APPEND].u.me.me;
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_TRIG);
	assert_int_equal(c.length, 3);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_ME_APPEND);
	assert_int_equal(c.md, nic_me);
	assert_int_equal(PtlTriggeredMEUnlink(h, x->ct, 4), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.length, 4);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_ME_UNLINK);
	assert_int_equal(c.md, nic_me);
	/* bad trigger counter, no handle pointer, bad ME handle */
	assert_int_equal(PtlTriggeredMEAppend(x->ni, 4, &me,
					      PTL_PRIORITY_LIST, NULL, &h,
					      x->md, 3), PTL_ARG_INVALID);
	assert_int_equal(PtlTriggeredMEAppend(x->ni, 4, &me,
					      PTL_PRIORITY_LIST, NULL, NULL,
					      x->ct, 3), PTL_ARG_INVALID);
	assert_int_equal(PtlTriggeredMEUnlink(x->md, x->ct, 1),
			 PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&x->f, &c));
}

static void *
other_post(void *arg)
{
	struct fx *x = arg;
	ptl_ct_event_t one = { .success = 1, .failure = 0 };

	return (void *)(intptr_t)PtlTriggeredCTInc(x->ct, one, x->ct, 2);
}

/* spin_trig_set_period: the calling thread's posts carry the period in
 * the TRIG command (local_offset); another thread's do not; 0 again
 * gives one-shot posts; no persistent triggered unlink */
static void
test_trig_period(void **state)
{
	struct fx *x = *state;
	ptl_ct_event_t one = { .success = 1, .failure = 0 };
	ptl_handle_me_t h = PTL_INVALID_HANDLE;
	struct spinnic_cmd c;
	pthread_t th;
	void *rc;
	ptl_me_t me;

	assert_int_equal(spin_trig_set_period(PTL_INVALID_HANDLE, 3),
			 PTL_ARG_INVALID);
	assert_int_equal(spin_trig_set_period(x->ni, 7), PTL_OK);
	assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 1), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_TRIG);
	assert_int_equal(c.length, 1);
	assert_int_equal(c.local_offset, 7);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_CT_INC);
	/* another thread: one-shot */
	assert_int_equal(pthread_create(&th, NULL, other_post, x), 0);
	assert_int_equal(pthread_join(th, &rc), 0);
	assert_int_equal((intptr_t)rc, PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_TRIG);
	assert_int_equal(c.length, 2);
	assert_int_equal(c.local_offset, 0);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	/* a persistent append: TRIG with the period, then ME_APPEND */
	memset(&me, 0, sizeof(me));
	me.start = x->buf;
	me.length = 64;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.options = PTL_ME_OP_PUT | PTL_ME_USE_ONCE;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	assert_int_equal(PtlTriggeredMEAppend(x->ni, 4, &me,
					      PTL_PRIORITY_LIST, NULL, &h,
					      x->ct, 3), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_TRIG);
	assert_int_equal(c.local_offset, 7);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_ME_APPEND);
	assert_int_equal(PtlTriggeredMEUnlink(h, x->ct, 4), PTL_ARG_INVALID);
	assert_int_equal(spin_trig_set_period(x->ni, 0), PTL_OK);
	assert_int_equal(PtlTriggeredMEUnlink(h, x->ct, 4), PTL_OK);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.local_offset, 0);
	assert_true(fake_nic_cmd_pop(&x->f, &c));
	assert_int_equal(c.op, SPINNIC_CMD_ME_UNLINK);
	assert_false(fake_nic_cmd_pop(&x->f, &c));
}

static void
test_trig_limit(void **state)
{
	struct fx *x = *state;
	ptl_ct_event_t one = { .success = 1, .failure = 0 };
	ptl_ni_limits_t lim;
	struct spinnic_cmd c;
	int i;

	assert_int_equal(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
				   PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim,
				   &x->ni), PTL_OK);
	assert_int_equal(lim.max_triggered_ops, FAKE_TRIG_MAX);
	for (i = 0; i < FAKE_TRIG_MAX; i++)
		assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 9),
				 PTL_OK);
	assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 9),
			 PTL_NO_SPACE);
	/* the NIC says one left (fired, cancelled or refused) */
	__atomic_fetch_add(&ring(x)->trig_done[0], 1, __ATOMIC_RELEASE);
	assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 9), PTL_OK);
	assert_int_equal(PtlTriggeredCTInc(x->ct, one, x->ct, 9),
			 PTL_NO_SPACE);
	while (fake_nic_cmd_pop(&x->f, &c))
		;
	assert_int_equal(PtlNIFini(x->ni), PTL_OK);
}

static void *
late_consumer(void *arg)
{
	struct fx *x = arg;
	struct spinnic_cmd c;
	struct timespec ts = { .tv_nsec = 50 * 1000000 };

	nanosleep(&ts, NULL);
	while (!fake_nic_cmd_pop(&x->f, &c))
		sched_yield();
	return (void *)(uintptr_t)c.op;
}

static void
test_cancel_waits(void **state)
{
	struct fx *x = *state;
	pthread_t t;
	void *op;

	assert_int_equal(PtlCTCancelTriggered(x->md), PTL_ARG_INVALID);
	assert_int_equal(pthread_create(&t, NULL, late_consumer, x), 0);
	assert_int_equal(PtlCTCancelTriggered(x->ct), PTL_OK);
	/* it returned: the NIC took the command */
	assert_int_equal(ring(x)->head, ring(x)->tail);
	assert_int_equal(pthread_join(t, &op), 0);
	assert_int_equal((uintptr_t)op, SPINNIC_CMD_CT_CANCEL_TRIG);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ct_visible_at_once, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trig_commands, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trig_me, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trig_period, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trig_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel_waits, setup,
						teardown),
	};

	setenv("SPINNIC_REGION_SIZE", "4M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
