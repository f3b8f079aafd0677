/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isolation rules of lib/portals. Handles are per client (DESIGN §4): a handle value copied from another
 * client names nothing in this one. Client B presents client A's ME and EQ
 * handles; each request is refused with PTL_ARG_INVALID and A's objects
 * are untouched (A can still use and free them afterwards). The NIC's
 * max_entries is enforced per NI and reported as the actual limit.
 */
#include "ptl_test.h"

static void
test_foreign_handles(void **state)
{
	struct spinnic_ctrl_msg m;
	struct ptl_client *b;
	struct ptl_nic_stats s0, s1;
	struct spinnic_event ev;
	struct t_env e;
	struct t_me me;
	uint32_t me_a, ni_b;
	uint8_t *rb;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me_a = t_me_append(&e, &me);

	rb = t_region_new();
	assert_int_equal(ptl_client_attach(e.nic, rb, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)rb, getpid(),
					   getuid(), SPINNIC_PTL_PID_ANY, &b),
			 0);
	ptl_client_set_release(b, t_region_unmap, NULL);
	ni_b = t_ni_init(&e, b, SPINNIC_PTL_NI_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL);
	ptl_nic_stats_get(e.nic, &s0);

	/* B unlinks A's ME by its handle value */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni_b;
	m.u.me.me = me_a;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* B frees A's EQ by its handle value */
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = ni_b;
	m.u.eq.eq = e.eq;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_EQ_FREE, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* B appends to A's PT index: B has no such PT */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni_b;
	m.u.me.pt_index = e.pt;
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = (uint64_t)(uintptr_t)rb + T_BUF_OFF;
	m.u.me.length = 64;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	assert_int_not_equal(t_ctrl(&e, b, SPINNIC_CTRL_ME_APPEND, &m),
			     SPINNIC_PTL_OK);
	ptl_nic_stats_get(e.nic, &s1);
	assert_true(s1.bad_ctrl >= s0.bad_ctrl + 3);

	/* A's objects are intact: its EQ takes events, its ME unlinks once */
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), 0);
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.me = me_a;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_ARG_INVALID);

	ptl_client_get(b);
	ptl_client_detach(e.nic, b);
	ptl_client_put(b);
	t_env_teardown(&e);
}

/* max_entries of the NIC bounds each NI: the actual limit is reported at
 * NI_INIT (a larger desire is clamped) and one ME more is PTL_NO_SPACE */
static void
test_entry_limit(void **state)
{
	struct ptl_nic_conf cf;
	struct spinnic_ctrl_msg m;
	struct ptl_client *b;
	struct t_env e;
	struct t_me me;
	uint32_t h[4];
	uint8_t *rb;
	unsigned i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_entries = 4;
	t_env_setup_opts(&e, 64, 0, &cf);
	t_me_default(&me);
	for (i = 0; i < 4; i++)
		h[i] = t_me_append(&e, &me);
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
			 SPINNIC_PTL_NO_SPACE);
	/* a freed entry can be appended again */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.me = h[2];
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_OK);
	t_me_append(&e, &me);

	/* another client asks for more and is told the real limit */
	rb = t_region_new();
	assert_int_equal(ptl_client_attach(e.nic, rb, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)rb, getpid(),
					   getuid(), SPINNIC_PTL_PID_ANY, &b),
			 0);
	ptl_client_set_release(b, t_region_unmap, NULL);
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	m.u.ni.desired.max_entries = 1000;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(m.u.ni.actual.max_entries, 4);
	assert_int_equal(m.u.ni.actual.max_eqs, cf.limits.max_eqs);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign_handles),
		cmocka_unit_test(test_entry_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
