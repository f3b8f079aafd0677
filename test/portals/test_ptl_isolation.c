/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Isolation rules of lib/portals. Handles are per client (DESIGN §4): a handle value copied from another
 * client names nothing in this one. Client B presents client A's ME and EQ
 * handles; each request is refused with PTL_ARG_INVALID and A's objects
 * are untouched (A can still use and free them afterwards). The NIC's
 * max_entries is enforced per NI and reported as the actual limit.
 * B cannot free, set or increment A's CTs, nor find, delete or unlink A's
 * unexpected headers and overflow entries with PtlMESearch/PtlMEUnlink;
 * address ranges that wrap are refused at bind/append, memory outside any
 * mapping fails at use (host_fault); every ptl_ni_limits_t field is
 * clamped to the NIC's and one object more than the limit is refused; the
 * live gauges (clients, regions, MEs) return to zero when clients go.
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


static struct ptl_client *
t_client_b(struct t_env *e, uint8_t **rb_p)
{
	struct ptl_client *b;
	uint8_t *rb = t_region_new();

	assert_int_equal(ptl_client_attach(e->nic, rb, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)rb, getpid(),
					   getuid(), SPINNIC_PTL_PID_ANY, &b),
			 0);
	ptl_client_set_release(b, t_region_unmap, NULL);
	*rb_p = rb;
	return b;
}

static void
t_cmd_push(uint8_t *region, const struct spinnic_cmd *cmd)
{
	struct spinnic_cmd_ring *r = (void *)(region + T_CMD_OFF);
	uint32_t h = r->head;

	r->slots[h & (T_CMD_ENTRIES - 1)] = *cmd;
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

/* B presents A's CT handle (free, set, inc) and searches, deletes and
 * unlinks on the PT index where A keeps an unexpected header: B only ever
 * reaches its own objects, A's header and counter are untouched. */
static void
test_foreign_ct_search(void **state)
{
	struct ptl_nic_stats s0, s1;
	struct spinnic_ctrl_msg m;
	struct spinnic_event ev;
	struct spinnic_cmd cmd;
	struct ptl_match mt;
	struct spinnic_pkt h;
	struct ptl_client *b;
	struct spinnic_ct *ct_rec;
	struct ptl_cmd out[4];
	struct t_env e;
	struct t_me over;
	uint32_t ct_a, ni_b, eq_b, me_over;
	uint8_t *rb;

	(void)state;
	t_env_setup(&e);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	ct_a = m.u.ct.ct;
	ct_rec = (struct spinnic_ct *)(e.region + T_CT_OFF);
	/* A: an overflow ME and one unexpected (completed) header in it */
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL;
	over.ignore_bits = ~0ull;
	over.off = T_BUF_OFF + 8192;
	me_over = t_me_append(&e, &over);
	t_hdr(&e, &h, 77, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	assert_int_equal(mt.list, PTL_MATCH_OVERFLOW);
	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	t_ev_drain(&e, T_EQ_OFF);

	b = t_client_b(&e, &rb);
	ni_b = t_ni_init(&e, b, SPINNIC_PTL_NI_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL);
	ptl_nic_stats_get(e.nic, &s0);

	/* B has no PT at A's index yet: search and delete are refused */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni_b;
	m.u.me.pt_index = e.pt;
	m.u.me.list = SPINNIC_PTL_SEARCH_DELETE;
	m.u.me.ignore_bits = ~0ull;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_ME_SEARCH, &m),
			 SPINNIC_PTL_ARG_INVALID);

	/* B frees A's CT by its handle value */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ni_b;
	m.u.ct.ct = ct_a;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* B sets and increments A's CT through its command ring */
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_CT_SET;
	cmd.ni = ni_b;
	cmd.md = ct_a;
	cmd.ct_success = 1000;
	cmd.ct_failure = 1000;
	t_cmd_push(rb, &cmd);
	cmd.op = SPINNIC_CMD_CT_INC;
	t_cmd_push(rb, &cmd);
	assert_int_equal(ptl_cmd_poll(b, out, 4), 0);
	ptl_nic_stats_get(e.nic, &s1);
	assert_int_equal(s1.bad_cmd, s0.bad_cmd + 2);
	assert_int_equal(s1.ct_updates, s0.ct_updates);
	assert_int_equal(ct_rec->success, 0);
	assert_int_equal(ct_rec->failure, 0);

	/* B's own PT at the same index: the search sees B's headers only */
	eq_b = t_eq_alloc(&e, b, ni_b, T_EQ_OFF, 64);
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni_b;
	m.u.pt.eq = eq_b;
	m.u.pt.pt_index = e.pt;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni_b;
	m.u.me.pt_index = e.pt;
	m.u.me.list = SPINNIC_PTL_SEARCH_DELETE;
	m.u.me.ignore_bits = ~0ull;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_ME_SEARCH, &m),
			 SPINNIC_PTL_OK);
	{
		struct spinnic_eq *qb = (struct spinnic_eq *)(rb + T_EQ_OFF);
		struct spinnic_event *sb = &qb->slots[0];

		assert_int_equal(qb->head, 1);
		assert_int_equal(sb->type, SPINNIC_PTL_EVENT_SEARCH);
		assert_int_equal(sb->ni_fail_type, SPINNIC_PTL_NI_NO_MATCH);
	}
	/* B unlinks A's overflow ME by its handle value */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni_b;
	m.u.me.me = me_over;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* nothing reached A's EQ */
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);

	/* A still finds its header (and can delete it), and unlink its ME */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.pt_index = e.pt;
	m.u.me.list = SPINNIC_PTL_SEARCH_DELETE;
	m.u.me.ignore_bits = ~0ull;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_SEARCH, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_OK);
	assert_int_equal(ev.match_bits, 77);
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.me = me_over;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_OK);
	/* A's CT still works */
	cmd.op = SPINNIC_CMD_CT_INC;
	cmd.ni = e.ni;
	cmd.md = ct_a;
	cmd.ct_success = 3;
	cmd.ct_failure = 0;
	t_cmd_push(e.region, &cmd);
	assert_int_equal(ptl_cmd_poll(e.c, out, 4), 0);
	assert_int_equal(ct_rec->success, 3);

	ptl_client_get(b);
	ptl_client_detach(e.nic, b);
	ptl_client_put(b);
	t_env_teardown(&e);
}

/* A range that wraps around the address space is refused at bind and
 * append; memory outside any mapping fails at use (counted), and a range
 * that runs past the region's end is never copied as region memory. */
static void
test_address_ranges(void **state)
{
	struct ptl_nic_stats s0, s1;
	struct spinnic_ctrl_msg m;
	struct t_env e;
	struct t_me me;
	uint8_t buf[64] = { 1 };
	uint64_t hole;
	void *p;

	(void)state;
	t_env_setup(&e);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = e.ni;
	m.u.md.start = UINT64_MAX - 100;
	m.u.md.length = 200;
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.md.start = 1;
	m.u.md.length = UINT64_MAX;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	t_me_default(&me);
	me.off = 0;
	me.length = UINT64_MAX; /* region base + 2^64 - 1 wraps */
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
			 SPINNIC_PTL_ARG_INVALID);

	/* an address no mapping covers: a hole made on purpose */
	p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	munmap(p, 4096);
	hole = (uint64_t)(uintptr_t)p;
	ptl_nic_stats_get(e.nic, &s0);
	assert_int_equal(ptl_host_write(e.c, hole, buf, sizeof(buf)),
			 -EFAULT);
	assert_int_equal(ptl_host_read(e.c, hole, buf, sizeof(buf)),
			 -EFAULT);
	assert_int_equal(ptl_host_write(e.c, UINT64_MAX - 10, buf,
					sizeof(buf)), -EFAULT);
	ptl_nic_stats_get(e.nic, &s1);
	assert_int_equal(s1.host_fault, s0.host_fault + 3);
	/* straddling the region's end: not a region pointer */
	assert_null(ptl_host_ptr(e.c, t_addr(&e, T_REGION_SIZE - 8), 16));
	assert_non_null(ptl_host_ptr(e.c, t_addr(&e, T_REGION_SIZE - 16),
				     16));
	assert_null(ptl_host_ptr(e.c, t_addr(&e, 0) - 1, 2));
	t_env_teardown(&e);
}

static int
t_count_ok(struct t_env *e, struct ptl_client *c, uint16_t op,
	   struct spinnic_ctrl_msg *proto, unsigned max)
{
	struct spinnic_ctrl_msg m;
	unsigned i;

	for (i = 0; i < max; i++) {
		m = *proto;
		if (t_ctrl(e, c, op, &m) != SPINNIC_PTL_OK)
			return m.status;
	}
	return SPINNIC_PTL_OK;
}

/* Every ptl_ni_limits_t field: a desire above the NIC's is clamped to it,
 * a smaller one is granted, and one object more than granted is refused */
static void
test_ni_limits(void **state)
{
	struct ptl_nic_conf cf;
	struct spinnic_ctrl_msg m, p;
	struct spinnic_cmd cmd;
	struct spinnic_event ev;
	struct ptl_match mt;
	struct spinnic_pkt h;
	struct ptl_client *b;
	struct ptl_cmd out[2];
	struct t_env e;
	uint32_t ni_b, eq_b, md_b;
	uint8_t *rb;
	unsigned i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.limits.max_mds = 8;
	cf.limits.max_cts = 8;
	cf.limits.max_eqs = 8;
	cf.limits.max_pt_index = 7;
	cf.limits.max_list_size = 8;
	cf.limits.max_unexpected_headers = 8;
	cf.limits.max_msg_size = 1u << 20;
	t_env_setup_opts(&e, 64, 0, &cf);

	/* A asked for the defaults: it got the NIC's limits */
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	m.u.ni.desired.max_mds = INT32_MAX;
	m.u.ni.desired.max_cts = INT32_MAX;
	m.u.ni.desired.max_eqs = INT32_MAX;
	m.u.ni.desired.max_pt_index = INT32_MAX;
	m.u.ni.desired.max_list_size = INT32_MAX;
	m.u.ni.desired.max_entries = INT32_MAX;
	m.u.ni.desired.max_unexpected_headers = INT32_MAX;
	m.u.ni.desired.max_iovecs = INT32_MAX;
	m.u.ni.desired.max_triggered_ops = INT32_MAX;
	m.u.ni.desired.max_msg_size = UINT64_MAX;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(m.u.ni.actual.max_mds, 8);
	assert_int_equal(m.u.ni.actual.max_cts, 8);
	assert_int_equal(m.u.ni.actual.max_eqs, 8);
	assert_int_equal(m.u.ni.actual.max_pt_index, 7);
	assert_int_equal(m.u.ni.actual.max_list_size, 8);
	assert_int_equal(m.u.ni.actual.max_unexpected_headers, 8);
	assert_int_equal(m.u.ni.actual.max_entries, cf.limits.max_entries);
	assert_int_equal(m.u.ni.actual.max_iovecs, PTL_MAX_IOVECS);
	assert_int_equal(m.u.ni.actual.max_triggered_ops,
			 cf.limits.max_triggered_ops);
	assert_int_equal(m.u.ni.actual.max_msg_size, 1u << 20);

	/* B asks for less than the NIC has and gets exactly that */
	b = t_client_b(&e, &rb);
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	m.u.ni.desired.max_mds = 2;
	m.u.ni.desired.max_cts = 2;
	m.u.ni.desired.max_eqs = 2;
	m.u.ni.desired.max_pt_index = 3;
	m.u.ni.desired.max_list_size = 2;
	m.u.ni.desired.max_entries = 3;
	m.u.ni.desired.max_unexpected_headers = 1;
	m.u.ni.desired.max_msg_size = 4096;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_OK);
	ni_b = m.u.ni.ni;
	assert_int_equal(m.u.ni.actual.max_mds, 2);
	assert_int_equal(m.u.ni.actual.max_cts, 2);
	assert_int_equal(m.u.ni.actual.max_eqs, 2);
	assert_int_equal(m.u.ni.actual.max_pt_index, 3);
	assert_int_equal(m.u.ni.actual.max_list_size, 2);
	assert_int_equal(m.u.ni.actual.max_entries, 3);
	assert_int_equal(m.u.ni.actual.max_unexpected_headers, 1);
	assert_int_equal(m.u.ni.actual.max_msg_size, 4096);

	/* max_eqs */
	eq_b = t_eq_alloc(&e, b, ni_b, T_EQ_OFF, 64);
	memset(&p, 0, sizeof(p));
	p.u.eq.ni = ni_b;
	p.u.eq.ring_off = T_EQ2_OFF;
	p.u.eq.count = 16;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_EQ_ALLOC, &p, 1),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_EQ_ALLOC, &p, 1),
			 SPINNIC_PTL_NO_SPACE);
	/* max_cts */
	memset(&p, 0, sizeof(p));
	p.u.ct.ni = ni_b;
	p.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_CT_ALLOC, &p, 2),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_CT_ALLOC, &p, 1),
			 SPINNIC_PTL_NO_SPACE);
	/* max_mds, and an iovec MD of more than max_iovecs entries is
	 * refused */
	memset(&p, 0, sizeof(p));
	p.u.md.ni = ni_b;
	p.u.md.start = (uint64_t)(uintptr_t)rb + T_BUF_OFF;
	p.u.md.length = 8192;
	p.u.md.eq = eq_b;
	p.u.md.ct = SPINNIC_HANDLE_NONE;
	m = p;
	m.u.md.options = SPINNIC_PTL_IOVEC;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m = p;
	assert_int_equal(t_ctrl(&e, b, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_OK);
	md_b = m.u.md.md;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_MD_BIND, &p, 1),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_MD_BIND, &p, 1),
			 SPINNIC_PTL_NO_SPACE);
	/* max_pt_index: index 4 does not exist, a fifth PT does not fit */
	memset(&p, 0, sizeof(p));
	p.u.pt.ni = ni_b;
	p.u.pt.eq = eq_b;
	p.u.pt.pt_index = 4;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_PT_ALLOC, &p, 1),
			 SPINNIC_PTL_ARG_INVALID);
	p.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_PT_ALLOC, &p, 4),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_PT_ALLOC, &p, 1),
			 SPINNIC_PTL_PT_FULL);
	/* max_list_size per list, then max_entries over all lists */
	memset(&p, 0, sizeof(p));
	p.u.me.ni = ni_b;
	p.u.me.pt_index = 0;
	p.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	p.u.me.start = (uint64_t)(uintptr_t)rb + T_BUF_OFF;
	p.u.me.length = 64;
	p.u.me.options = SPINNIC_PTL_ME_OP_PUT |
			 SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	p.u.me.ct = SPINNIC_HANDLE_NONE;
	p.u.me.ctx = SPINNIC_HANDLE_NONE;
	p.u.me.uid = SPINNIC_PTL_UID_ANY;
	p.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	p.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_ME_APPEND, &p, 2),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_ME_APPEND, &p, 1),
			 SPINNIC_PTL_LIST_TOO_LONG);
	p.u.me.list = SPINNIC_PTL_OVERFLOW_LIST;
	p.u.me.ignore_bits = ~0ull;
	p.u.me.options |= SPINNIC_PTL_ME_MANAGE_LOCAL;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_ME_APPEND, &p, 1),
			 SPINNIC_PTL_OK);
	p.u.me.pt_index = 1;
	assert_int_equal(t_count_ok(&e, b, SPINNIC_CTRL_ME_APPEND, &p, 1),
			 SPINNIC_PTL_NO_SPACE);
	/* max_unexpected_headers: the second unexpected message is dropped */
	memset(&h, 0, sizeof(h));
	h.type = SPINNIC_WIRE_T_DATA;
	h.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	h.op = SPINNIC_WIRE_OP_PUT;
	h.src.nid = 2;
	h.src.pid = 7;
	h.dst = ptl_client_id(b);
	h.pt_index = 0;
	h.match_bits = 1ull << 40; /* no priority entry takes it */
	h.msg_id = 5;
	h.msg_len = 8;
	h.pay_len = 8;
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	assert_int_equal(mt.list, PTL_MATCH_OVERFLOW);
	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	h.msg_id = 6;
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), -ENOSPC);
	/* max_msg_size at the target: one byte more is dropped (the
	 * priority entries of PT 0 take match bits 0) */
	h.msg_id = 7;
	h.match_bits = 0;
	h.msg_len = 4097;
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), -EMSGSIZE);
	assert_int_equal(mt.ni_fail, SPINNIC_PTL_NI_DROPPED);
	h.msg_len = 4096;
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	assert_int_equal(mt.list, PTL_MATCH_PRIORITY);
	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	/* max_msg_size: a put of one byte more fails in a SEND event */
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_PUT;
	cmd.ni = ni_b;
	cmd.md = md_b;
	cmd.length = 4097;
	cmd.target.nid = 1;
	cmd.target.pid = 0;
	t_cmd_push(rb, &cmd);
	cmd.length = 4096;
	t_cmd_push(rb, &cmd);
	assert_int_equal(ptl_cmd_poll(b, out, 2), 1);
	assert_int_equal(out[0].length, 4096);
	{
		struct spinnic_eq *q = (struct spinnic_eq *)(rb + T_EQ_OFF);

		for (i = 0; i < q->head; i++) {
			ev = q->slots[i & q->mask];
			if (ev.type == SPINNIC_PTL_EVENT_SEND)
				break;
		}
		assert_true(i < q->head);
		assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_SEGV);
		assert_int_equal(ev.rlength, 4097);
	}
	ptl_client_get(b);
	ptl_client_detach(e.nic, b);
	ptl_client_put(b);
	t_env_teardown(&e);
}

/* The live gauges follow clients, their regions and MEs, and are zero
 * once every client is gone (spinnic's leak check at exit). */
static void
test_live_gauges(void **state)
{
	struct ptl_nic_stats s;
	struct ptl_match mt;
	struct spinnic_pkt h;
	struct ptl_client *b;
	struct t_env e;
	struct t_me me;
	uint8_t *rb;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	t_me_append(&e, &me);
	me.match_bits = 9;
	t_me_append(&e, &me);
	b = t_client_b(&e, &rb);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.clients_live, 2);
	assert_int_equal(s.regions_live, 2);
	assert_int_equal(s.region_bytes, 2ull * T_REGION_SIZE);
	assert_int_equal(s.mes_live, 2);

	/* a message in flight keeps A, its region and its ME alive */
	t_hdr(&e, &h, 9, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	ptl_client_get(b);
	ptl_client_detach(e.nic, b);
	ptl_client_put(b);
	ptl_client_get(e.c);
	ptl_client_detach(e.nic, e.c);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.clients_live, 1);
	assert_int_equal(s.region_bytes, T_REGION_SIZE);
	assert_int_equal(s.mes_live, 1);
	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.mes_live, 0);
	assert_int_equal(s.clients_live, 1); /* our reference */
	ptl_client_put(e.c);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.clients_live, 0);
	assert_int_equal(s.regions_live, 0);
	assert_int_equal(s.region_bytes, 0);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foreign_handles),
		cmocka_unit_test(test_entry_limit),
		cmocka_unit_test(test_foreign_ct_search),
		cmocka_unit_test(test_address_ranges),
		cmocka_unit_test(test_ni_limits),
		cmocka_unit_test(test_live_gauges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
