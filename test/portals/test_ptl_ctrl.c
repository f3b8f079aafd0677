/* SPDX-License-Identifier: BSD-3-Clause */
/* Attach, control-message validation, command ring, initiator ops. */
#include "ptl_test.h"

static void
test_attach_validation(void **state)
{
	struct ptl_nic_conf cf;
	struct ptl_nic *nic;
	struct ptl_client *c, *c2;
	struct spinnic_region_hdr *h;
	struct ptl_nic_stats s;
	uint8_t *r;
	uint64_t va;
	pid_t me = getpid();

	(void)state;
	ptl_nic_conf_default(&cf, 3);
	cf.max_clients = 2;
	assert_int_equal(ptl_nic_create(&cf, &nic), 0);
	r = t_region_new();
	h = (struct spinnic_region_hdr *)r;
	va = (uint64_t)(uintptr_t)r;
#define BAD(field, val) do { \
		t_region_init(r, T_REGION_SIZE); \
		h->field = val; \
		assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, \
						   me, 0, SPINNIC_PTL_PID_ANY, \
						   &c), -EBADMSG); \
	} while (0)
	BAD(magic, 1);
	BAD(version, SPINNIC_ABI_VERSION + 1);
	BAD(hdr_size, 32);
	BAD(size, T_REGION_SIZE * 2);
	BAD(cmd_off, 0);
	BAD(cmd_off, 4100);            /* unaligned */
	BAD(cmd_off, T_REGION_SIZE - 64); /* ring past the end */
	BAD(cmd_off, ~0ull - 63);      /* wraps */
	BAD(cmd_entries, 0);
	BAD(cmd_entries, 12);
	BAD(heap_off, T_REGION_SIZE);
#undef BAD
	t_region_init(r, T_REGION_SIZE);
	assert_int_equal(ptl_client_attach(nic, r, 32, va, me, 0,
					   SPINNIC_PTL_PID_ANY, &c), -EINVAL);
	assert_int_equal(ptl_client_attach(nic, NULL, T_REGION_SIZE, va, me, 0,
					   SPINNIC_PTL_PID_ANY, &c), -EINVAL);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, ~0ull - 10,
					   me, 0, SPINNIC_PTL_PID_ANY, &c),
			 -EINVAL);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, me, 0,
					   2, &c), -ERANGE);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, me, 0,
					   1, &c), 0);
	assert_int_equal(ptl_client_id(c).pid, 1);
	assert_int_equal(ptl_client_id(c).nid, 3);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, me, 0,
					   1, &c2), -EADDRINUSE);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, me, 0,
					   SPINNIC_PTL_PID_ANY, &c2), 0);
	assert_int_equal(ptl_client_id(c2).pid, 0);
	assert_int_equal(ptl_client_attach(nic, r, T_REGION_SIZE, va, me, 0,
					   SPINNIC_PTL_PID_ANY, &c), -ENOSPC);
	ptl_nic_stats_get(nic, &s);
	assert_int_equal(s.bad_region, 11 + 3);
	assert_int_equal(s.attached, 2);
	/* lookup takes a reference */
	c = ptl_client_lookup(nic, 0);
	assert_ptr_equal(c, c2);
	ptl_client_put(c);
	assert_null(ptl_client_lookup(nic, 5));
	ptl_nic_destroy(nic);
	munmap(r, T_REGION_SIZE);
}

static void
test_ctrl_validation(void **state)
{
	struct t_env e;
	struct spinnic_ctrl_msg m;
	struct ptl_client *c2;
	uint8_t *r2;
	uint32_t eq2;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	/* not ours */
	memset(&m, 0, sizeof(m));
	m.version = SPINNIC_ABI_VERSION;
	m.op = SPINNIC_CTRL_CTX_INSTALL;
	assert_int_equal(ptl_nic_ctrl(e.nic, e.c, &m, &m), -EOPNOTSUPP);
	m.op = SPINNIC_CTRL_NICMEM_WRITE;
	assert_int_equal(ptl_nic_ctrl(e.nic, e.c, &m, &m), -EOPNOTSUPP);
	/* version, unknown op */
	memset(&m, 0, sizeof(m));
	m.version = SPINNIC_ABI_VERSION + 1;
	m.op = SPINNIC_CTRL_NI_INIT;
	m.seq = 42;
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	assert_int_equal(ptl_nic_ctrl(e.nic, e.c, &m, &m), 0);
	assert_int_equal(m.status, SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(m.seq, 42);
	memset(&m, 0, sizeof(m));
	assert_int_equal(t_ctrl(&e, e.c, 999, &m), SPINNIC_PTL_ARG_INVALID);
	/* NI options */
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_NO_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL |
			 (1u << 9);
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* second init of the same NI: same handle, limits */
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	m.u.ni.desired.max_entries = 1 << 30; /* clamped */
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(m.u.ni.ni, e.ni);
	assert_int_equal(m.u.ni.actual.max_entries, 16384);
	assert_int_equal(m.u.ni.actual.max_pt_index, 63);

	/* EQ: count, alignment, bounds, bad NI */
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = e.ni;
	m.u.eq.ring_off = T_EQ2_OFF;
	m.u.eq.count = 12;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.count = 0;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.count = 16;
	m.u.eq.ring_off = T_EQ2_OFF + 8;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.ring_off = T_REGION_SIZE - 1024; /* entries past the end */
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.ring_off = 0; /* over the region header */
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.ring_off = T_EQ2_OFF;
	m.u.eq.ni = e.ni + 1;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.eq.ni = SPINNIC_HANDLE_NONE;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* CT bounds */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct_off = T_REGION_SIZE - 32;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.ct.ct_off = ~0ull - 63;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.ct.ct = 0x12345;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_ARG_INVALID);

	/* PT: range, in use, EQ needed, options, bad EQ, free with entries */
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = e.ni;
	m.u.pt.eq = SPINNIC_HANDLE_NONE;
	m.u.pt.pt_index = 64;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.pt.pt_index = e.pt;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_PT_IN_USE);
	m.u.pt.pt_index = 5;
	m.u.pt.options = SPINNIC_PTL_PT_FLOWCTRL;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_PT_EQ_NEEDED);
	m.u.pt.options = 1u << 7;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.pt.options = 0;
	m.u.pt.eq = e.eq ^ 0x5;  /* no such EQ */
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	{
		struct t_me me;

		t_me_default(&me);
		t_me_append(&e, &me);
		memset(&m, 0, sizeof(m));
		m.u.pt.ni = e.ni;
		m.u.pt.pt_index = e.pt;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_FREE, &m),
				 SPINNIC_PTL_PT_IN_USE);
		m.u.pt.pt_index = 33;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_FREE, &m),
				 SPINNIC_PTL_ARG_INVALID);
		/* ME: options, list, CT, pt, wrapping range */
		me.options = 1u << 25;
		assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
				 SPINNIC_PTL_ARG_INVALID);
		t_me_default(&me);
		me.list = 7;
		assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
				 SPINNIC_PTL_ARG_INVALID);
		t_me_default(&me);
		me.ct = e.eq; /* an EQ handle as CT */
		assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
				 SPINNIC_PTL_ARG_INVALID);
		t_me_default(&me);
		me.length = ~0ull;
		assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
				 SPINNIC_PTL_ARG_INVALID);
		t_me_default(&me);
		memset(&m, 0, sizeof(m));
		m.u.me.me = 0xdeadbeef;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
				 SPINNIC_PTL_ARG_INVALID);
	}

	/* MD: bad options, bad EQ, wrapping range */
	memset(&m, 0, sizeof(m));
	m.u.md.ni = e.ni;
	m.u.md.start = t_addr(&e, T_BUF_OFF);
	m.u.md.length = 100;
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	m.u.md.options = 1u << 20;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.md.options = 0;
	m.u.md.eq = 77;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.start = ~0ull - 10;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_ARG_INVALID);
	m.u.md.start = 0;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_RELEASE, &m),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_RELEASE, &m),
			 SPINNIC_PTL_ARG_INVALID);

	/* wrong client: another client's EQ handle means nothing here */
	r2 = t_region_new();
	assert_int_equal(ptl_client_attach(e.nic, r2, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)r2, getpid(), 0,
					   SPINNIC_PTL_PID_ANY, &c2), 0);
	ptl_client_set_release(c2, t_region_unmap, NULL);
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = e.ni;    /* c2 has no NI yet */
	m.u.eq.ring_off = T_EQ2_OFF;
	m.u.eq.count = 8;
	assert_int_equal(t_ctrl(&e, c2, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	eq2 = t_eq_alloc(&e, e.c, e.ni, T_EQ2_OFF, 8); /* e.c's second EQ */
	assert_int_equal(t_ni_init(&e, c2, SPINNIC_PTL_NI_MATCHING |
				   SPINNIC_PTL_NI_PHYSICAL), e.ni);
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = e.ni;
	m.u.pt.eq = eq2;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	assert_int_equal(t_ctrl(&e, c2, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* detached client: refused */
	ptl_client_get(c2);
	ptl_client_detach(e.nic, c2);
	m.u.pt.eq = SPINNIC_HANDLE_NONE;
	assert_int_equal(t_ctrl(&e, c2, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_NO_INIT);
	ptl_client_put(c2);

	/* NI_FINI frees the NI's objects */
	memset(&m, 0, sizeof(m));
	m.u.ni.ni = e.ni;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_FINI, &m),
			 SPINNIC_PTL_OK); /* refs 2 -> 1 */
	{
		struct spinnic_event ev;

		memset(&ev, 0, sizeof(ev));
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), 0);
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_FINI, &m),
				 SPINNIC_PTL_OK);
		assert_int_equal(ptl_eq_post(e.c, e.eq, &ev), -EBADF);
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_FINI, &m),
				 SPINNIC_PTL_ARG_INVALID);
	}
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.bad_ctrl >= 30);
	t_env_teardown(&e);
}

/* ---- command ring ---- */

static struct spinnic_cmd_ring *
ring(struct t_env *e)
{
	return (struct spinnic_cmd_ring *)(e->region + T_CMD_OFF);
}

static struct spinnic_cmd *
push(struct t_env *e)
{
	struct spinnic_cmd_ring *r = ring(e);
	struct spinnic_cmd *c = &r->slots[r->head & (T_CMD_ENTRIES - 1)];

	memset(c, 0, sizeof(*c));
	return c;
}

static void
commit(struct t_env *e)
{
	__atomic_store_n(&ring(e)->head, ring(e)->head + 1, __ATOMIC_RELEASE);
}

static uint32_t
md_bind(struct t_env *e, uint64_t off, uint64_t len, uint32_t eq,
	uint32_t ct, uint32_t options)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.md.ni = e->ni;
	m.u.md.start = t_addr(e, off);
	m.u.md.length = len;
	m.u.md.eq = eq;
	m.u.md.ct = ct;
	m.u.md.options = options;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_MD_BIND, &m),
			 SPINNIC_PTL_OK);
	return m.u.md.md;
}

static void
put_cmd(struct t_env *e, struct spinnic_cmd *c, uint32_t md, uint64_t off,
	uint64_t len)
{
	c->op = SPINNIC_CMD_PUT;
	c->ni = e->ni;
	c->md = md;
	c->ack_req = SPINNIC_PTL_ACK_REQ;
	c->local_offset = off;
	c->length = len;
	c->target.nid = 2;
	c->target.pid = 3;
	c->pt_index = 4;
	c->match_bits = 0x77;
	c->remote_offset = 8;
	c->user_ptr = 0xabc;
	c->hdr_data = 0xd;
}

static void
test_cmd_ring(void **state)
{
	struct t_env e;
	struct ptl_cmd out[8];
	struct spinnic_event ev;
	struct ptl_nic_stats s;
	struct spinnic_ct *rec;
	struct spinnic_ctrl_msg m;
	uint32_t md, md_noeq, ct;

	(void)state;
	t_env_setup(&e);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	ct = m.u.ct.ct;
	rec = (struct spinnic_ct *)(e.region + T_CT_OFF);
	md = md_bind(&e, T_BUF_OFF, 1000, e.eq, ct, 0);
	md_noeq = md_bind(&e, T_BUF_OFF, 1000, SPINNIC_HANDLE_NONE,
			  SPINNIC_HANDLE_NONE, 0);
	assert_int_equal(ptl_cmd_poll(e.c, out, 8), 0);

	put_cmd(&e, push(&e), md, 100, 900);              /* ok */
	commit(&e);
	put_cmd(&e, push(&e), md, 100, 901);              /* past MD */
	commit(&e);
	put_cmd(&e, push(&e), md_noeq, ~0ull - 5, 10);    /* wraps, no EQ */
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 1);
	ring(&e)->slots[(ring(&e)->head) & 15].op = 77;   /* unknown op */
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 1);
	ring(&e)->slots[(ring(&e)->head) & 15].md = e.eq; /* not an MD */
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 1);
	ring(&e)->slots[(ring(&e)->head) & 15].target.pid =
		SPINNIC_PTL_PID_ANY;
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 1);
	ring(&e)->slots[(ring(&e)->head) & 15].ack_req = 9;
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 1);
	ring(&e)->slots[(ring(&e)->head) & 15].pt_index = 64;
	commit(&e);
	{
		struct spinnic_cmd *c = push(&e);  /* CT_INC applied here */

		c->op = SPINNIC_CMD_CT_INC;
		c->ni = e.ni;
		c->md = ct;
		c->ct_success = 5;
		c->ct_failure = 1;
		commit(&e);
		c = push(&e);
		c->op = SPINNIC_CMD_NOP;
		commit(&e);
		c = push(&e);
		put_cmd(&e, c, md, 0, 0);
		c->op = SPINNIC_CMD_GET;
		c->ack_req = 77;    /* ignored for a get */
		commit(&e);
		c = push(&e);
		c->op = SPINNIC_CMD_CT_SET;
		c->ni = e.ni;
		c->md = md;         /* an MD as CT: rejected */
		commit(&e);
	}
	assert_int_equal(ptl_cmd_poll(e.c, out, 8), 2);
	assert_int_equal(ring(&e)->tail, ring(&e)->head);
	assert_int_equal(out[0].op, SPINNIC_CMD_PUT);
	assert_int_equal(out[0].local_addr, t_addr(&e, T_BUF_OFF + 100));
	assert_int_equal(out[0].length, 900);
	assert_int_equal(out[0].eq, e.eq);
	assert_int_equal(out[0].ct, ct);
	assert_int_equal(out[0].target.pid, 3);
	assert_int_equal(out[0].ack_req, SPINNIC_PTL_ACK_REQ);
	assert_int_equal(out[0].ni_kind, 0);
	assert_int_equal(out[0].user_ptr, 0xabc);
	assert_int_equal(out[0].uid, ptl_client_uid(e.c));
	assert_int_equal(out[1].op, SPINNIC_CMD_GET);
	assert_int_equal(out[1].ack_req, SPINNIC_PTL_NO_ACK_REQ);
	assert_int_equal(rec->success, 5);
	assert_int_equal(rec->failure, 1);
	/* failure events for the bad commands whose MD has an EQ */
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_SEGV);
	assert_int_equal(ev.user_ptr, 0xabc);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_OP_VIOLATION);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.cmds, 12);
	assert_int_equal(s.bad_cmd, 8);

	/* out[] is bounded by n; the rest stays in the ring */
	put_cmd(&e, push(&e), md, 0, 10);
	commit(&e);
	put_cmd(&e, push(&e), md, 0, 20);
	commit(&e);
	assert_int_equal(ptl_cmd_poll(e.c, out, 1), 1);
	assert_int_equal(out[0].length, 10);
	assert_int_equal(ptl_cmd_poll(e.c, out, 1), 1);
	assert_int_equal(out[0].length, 20);
	/* a producer index we cannot believe: one ring's worth, counted */
	ring(&e)->head += 1000;
	assert_true(ptl_cmd_poll(e.c, out, 8) <= 8);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.cmd_ring_corrupt, 1);
	t_env_teardown(&e);
}

/* ---- initiator operations ---- */

static void
test_ops(void **state)
{
	struct t_env e;
	struct ptl_cmd out[2];
	struct spinnic_event ev;
	struct ptl_client *c;
	struct ptl_op_info info;
	struct ptl_nic_stats s;
	uint64_t id, id2, addr;
	uint32_t md;

	(void)state;
	t_env_setup(&e);
	md = md_bind(&e, T_BUF_OFF, 1000, e.eq, SPINNIC_HANDLE_NONE, 0);
	put_cmd(&e, push(&e), md, 0, 500);
	commit(&e);
	assert_int_equal(ptl_cmd_poll(e.c, out, 2), 1);

	/* put with ack: SEND then ACK */
	assert_int_equal(ptl_op_start(e.c, &out[0], &id), 0);
	assert_int_equal(ptl_op_start(e.c, &out[0], &id2), 0);
	assert_int_not_equal(id, id2);
	assert_int_equal(ptl_op_lookup(e.nic, id, &info, NULL), 0);
	assert_int_equal(info.length, 500);
	assert_int_equal(info.initiator.pid, ptl_client_id(e.c).pid);
	assert_int_equal(ptl_op_sent(e.nic, id, SPINNIC_PTL_NI_OK), 0);
	assert_int_equal(ptl_op_sent(e.nic, id, SPINNIC_PTL_NI_OK), -ENOENT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(ev.mlength, 500);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(ptl_op_ack(e.nic, id, SPINNIC_PTL_NI_OK, 300, 0), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_ACK);
	assert_int_equal(ev.mlength, 300);
	assert_int_equal(ev.user_ptr, 0xabc);
	assert_int_equal(ptl_op_ack(e.nic, id, SPINNIC_PTL_NI_OK, 300, 0), -ENOENT);
	assert_int_equal(ptl_op_lookup(e.nic, id, &info, NULL), -ENOENT);
	/* ack before the SEND: delivered after it */
	assert_int_equal(ptl_op_ack(e.nic, id2, SPINNIC_PTL_NI_PT_DISABLED, 0, 0),
			 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(ptl_op_sent(e.nic, id2, SPINNIC_PTL_NI_OK), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEND);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_ACK);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_PT_DISABLED);

	/* get: reply bounds, REPLY event */
	out[0].op = SPINNIC_CMD_GET;
	out[0].ack_req = SPINNIC_PTL_NO_ACK_REQ;
	assert_int_equal(ptl_op_start(e.c, &out[0], &id), 0);
	assert_int_equal(ptl_op_ack(e.nic, id, 0, 0, 0), -ENOENT);
	assert_int_equal(ptl_op_reply(e.nic, id, 400, 100, &c, &addr), 0);
	assert_ptr_equal(c, e.c);
	assert_int_equal(addr, t_addr(&e, T_BUF_OFF + 400));
	ptl_client_put(c);
	assert_int_equal(ptl_op_reply(e.nic, id, 400, 101, &c, &addr), -ERANGE);
	assert_int_equal(ptl_op_reply(e.nic, id, ~0ull, 2, &c, &addr), -ERANGE);
	assert_int_equal(ptl_op_sent(e.nic, id, SPINNIC_PTL_NI_OK), 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	assert_int_equal(ptl_op_reply_done(e.nic, id, SPINNIC_PTL_NI_OK, 500),
			 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_REPLY);
	assert_int_equal(ev.mlength, 500);
	assert_int_equal(ptl_op_reply(e.nic, id, 0, 1, &c, &addr), -ENOENT);
	assert_int_equal(ptl_op_reply_done(e.nic, 12345, 0, 0), -ENOENT);
	assert_int_equal(ptl_op_reply_done(e.nic, 0, 0, 0), -ENOENT);

	/* detach cancels outstanding ops */
	out[0].op = SPINNIC_CMD_PUT;
	out[0].ack_req = SPINNIC_PTL_ACK_REQ;
	assert_int_equal(ptl_op_start(e.c, &out[0], &id), 0);
	ptl_client_detach(e.nic, e.c);
	assert_int_equal(ptl_op_sent(e.nic, id, SPINNIC_PTL_NI_OK), -ENOENT);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.inflight_dropped, 1);
	assert_int_equal(s.reply_oob, 2);
	t_env_teardown(&e);
}

/* A counting ack (PTL_CT_ACK_REQ) counts only on an MD that asked for
 * ack counting (PTL_MD_EVENT_CT_ACK); a full ack on such an MD counts
 * too, and its ACK event says which list the put landed on. */
static void
test_ct_ack(void **state)
{
	static const uint32_t opts[] = { 0, SPINNIC_PTL_MD_EVENT_CT_ACK };
	static const uint32_t acks[] = { SPINNIC_PTL_CT_ACK_REQ,
					 SPINNIC_PTL_ACK_REQ };
	struct spinnic_ctrl_msg m;
	struct spinnic_event ev;
	struct spinnic_ct *rec;
	struct ptl_cmd out[1];
	struct t_env e;
	unsigned i, k;
	uint64_t id;

	(void)state;
	t_env_setup(&e);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	rec = (struct spinnic_ct *)(e.region + T_CT_OFF);
	for (i = 0; i < 2; i++) {
		uint32_t md = md_bind(&e, T_BUF_OFF, 1000, e.eq, m.u.ct.ct,
				      opts[i]);

		for (k = 0; k < 2; k++) {
			uint64_t before = rec->success;
			struct spinnic_cmd *c = push(&e);

			put_cmd(&e, c, md, 0, 10);
			c->ack_req = acks[k];
			commit(&e);
			assert_int_equal(ptl_cmd_poll(e.c, out, 1), 1);
			assert_int_equal(ptl_op_start(e.c, &out[0], &id), 0);
			assert_int_equal(ptl_op_sent(e.nic, id,
						     SPINNIC_PTL_NI_OK), 0);
			assert_int_equal(ptl_op_ack(e.nic, id,
						    SPINNIC_PTL_NI_OK, 10,
						    SPINNIC_PTL_OVERFLOW_LIST),
					 0);
			assert_int_equal(rec->success - before, i == 1);
			assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
					 SPINNIC_PTL_EVENT_SEND);
			if (acks[k] != SPINNIC_PTL_ACK_REQ)
				continue;
			/* the list the put landed on (Open MPI's MTL reads
			 * it to tell an unexpected message) */
			assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
					 SPINNIC_PTL_EVENT_ACK);
			assert_int_equal(ev.list, SPINNIC_PTL_OVERFLOW_LIST);
		}
	}
	t_env_teardown(&e);
}

static void
test_ops_full(void **state)
{
	struct ptl_nic_conf cf;
	struct t_env e;
	struct ptl_cmd cmd;
	uint64_t ids[4], id;
	int i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 4;
	t_env_setup_opts(&e, 64, 0, &cf);
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_PUT;
	cmd.eq = SPINNIC_HANDLE_NONE;
	cmd.ct = SPINNIC_HANDLE_NONE;
	for (i = 0; i < 4; i++)
		assert_int_equal(ptl_op_start(e.c, &cmd, &ids[i]), 0);
	assert_int_equal(ptl_op_start(e.c, &cmd, &id), -ENOSPC);
	/* a put without ack ends at SEND; its slot comes back with a new id */
	assert_int_equal(ptl_op_sent(e.nic, ids[2], SPINNIC_PTL_NI_OK), 0);
	assert_int_equal(ptl_op_start(e.c, &cmd, &id), 0);
	assert_int_not_equal(id, ids[2]);
	assert_int_equal(id & 0xffffff, ids[2] & 0xffffff);
	assert_int_equal(ptl_op_sent(e.nic, ids[2], SPINNIC_PTL_NI_OK), -ENOENT);
	t_env_teardown(&e);
}

static void
test_errno_map(void **state)
{
	(void)state;
	assert_int_equal(ptl_errno_to_status(0), SPINNIC_PTL_OK);
	assert_int_equal(ptl_errno_to_status(-EADDRINUSE),
			 SPINNIC_PTL_PID_IN_USE);
	assert_int_equal(ptl_errno_to_status(-ENOSPC), SPINNIC_PTL_NO_SPACE);
	assert_int_equal(ptl_errno_to_status(-EBADMSG),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(ptl_errno_to_status(-EIO), SPINNIC_PTL_FAIL);
	assert_string_equal(ptl_nic_stats_name(0), "match_priority");
	assert_null(ptl_nic_stats_name(sizeof(struct ptl_nic_stats) / 8));
}

/* ---- BATCH (ptl_nic_ctrl_batch) -------------------------------------- */

#define T_BATCH_OFF (T_BUF_OFF + 64u * 1024)

struct t_brun {
	struct t_env *e;
	unsigned calls;
};

static void
t_brun(void *arg, const struct spinnic_ctrl_msg *req,
       struct spinnic_ctrl_msg *rep)
{
	struct t_brun *b = arg;

	b->calls++;
	assert_int_equal(ptl_nic_ctrl(b->e->nic, b->e->c, req, rep), 0);
}

static void
t_rec(struct t_env *e, struct spinnic_ctrl_msg *r, uint16_t op)
{
	memset(r, 0, sizeof(*r));
	r->version = SPINNIC_ABI_VERSION;
	r->op = op;
	r->u.ni.ni = e->ni;
	switch (op) {
	case SPINNIC_CTRL_CT_ALLOC:
		r->u.ct.ct_off = T_CT_OFF + 64 * (1 + (r - (struct
			spinnic_ctrl_msg *)(e->region + T_BATCH_OFF)));
		break;
	case SPINNIC_CTRL_MD_BIND:
		r->u.md.start = t_addr(e, T_BUF_OFF);
		r->u.md.length = 4096;
		r->u.md.eq = SPINNIC_HANDLE_NONE;
		r->u.md.ct = SPINNIC_HANDLE_NONE;
		break;
	case SPINNIC_CTRL_ME_APPEND:
		r->u.me.pt_index = e->pt;
		r->u.me.list = SPINNIC_PTL_PRIORITY_LIST;
		r->u.me.start = t_addr(e, T_BUF_OFF + 8192);
		r->u.me.length = 4096;
		r->u.me.options = SPINNIC_PTL_ME_OP_PUT;
		r->u.me.ct = SPINNIC_HANDLE_NONE;
		r->u.me.uid = SPINNIC_PTL_UID_ANY;
		r->u.me.ctx = SPINNIC_HANDLE_NONE;
		r->u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
		r->u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
		break;
	default:
		break;
	}
}

static int
t_batch(struct t_env *e, uint32_t count, struct ptl_batch_stats *st,
	uint32_t *failed)
{
	struct spinnic_ctrl_msg m, rep;
	struct t_brun b = { .e = e };

	memset(&m, 0, sizeof(m));
	m.version = SPINNIC_ABI_VERSION;
	m.op = SPINNIC_CTRL_BATCH;
	m.u.batch.off = T_BATCH_OFF;
	m.u.batch.count = count;
	memcpy(&rep, &m, sizeof(rep));
	/* the lone path leaves BATCH to its caller */
	assert_int_equal(ptl_nic_ctrl(e->nic, e->c, &m, &rep), -EOPNOTSUPP);
	ptl_nic_ctrl_batch(e->c, &m, &rep, t_brun, &b, st);
	*failed = rep.u.batch.failed;
	if (rep.status == SPINNIC_PTL_OK)
		assert_int_equal(rep.u.batch.done, count);
	return rep.status;
}

/* records applied in order, references, a failing record undoing what
 * came before, a free by reference not undone twice, whole batches
 * refused */
static void
test_batch(void **state)
{
	struct t_env e;
	struct spinnic_ctrl_msg *r, m;
	struct ptl_batch_stats st = { 0 };
	uint32_t f, ct, md, me;

	(void)state;
	t_env_setup(&e);
	r = (struct spinnic_ctrl_msg *)(e.region + T_BATCH_OFF);
	/* CT, MD and ME counting into it */
	t_rec(&e, &r[0], SPINNIC_CTRL_CT_ALLOC);
	t_rec(&e, &r[1], SPINNIC_CTRL_MD_BIND);
	r[1].u.md.ct = SPINNIC_BATCH_REF(0);
	t_rec(&e, &r[2], SPINNIC_CTRL_ME_APPEND);
	r[2].u.me.ct = SPINNIC_BATCH_REF(0);
	assert_int_equal(t_batch(&e, 3, &st, &f), SPINNIC_PTL_OK);
	assert_int_equal(f, SPINNIC_HANDLE_NONE);
	ct = r[0].u.ct.ct;
	md = r[1].u.md.md;
	me = r[2].u.me.me;
	assert_int_equal(r[1].u.md.ct, ct);
	assert_int_equal(r[2].u.me.ct, ct);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r[i].status, SPINNIC_PTL_OK);
	assert_int_equal(st.recs, 3);
	assert_int_equal(st.refused + st.rollbacks, 0);
	/* the same again, then an MD naming the entry as its counter: the
	 * batch stops at 2 and the CT and entry are gone again */
	t_rec(&e, &r[0], SPINNIC_CTRL_CT_ALLOC);
	t_rec(&e, &r[1], SPINNIC_CTRL_ME_APPEND);
	r[1].u.me.ct = SPINNIC_BATCH_REF(0);
	t_rec(&e, &r[2], SPINNIC_CTRL_MD_BIND);
	r[2].u.md.ct = SPINNIC_BATCH_REF(1);
	assert_int_equal(t_batch(&e, 3, &st, &f), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(f, 2);
	assert_int_equal(r[0].status, SPINNIC_PTL_ABORTED);
	assert_int_equal(r[1].status, SPINNIC_PTL_ABORTED);
	assert_int_equal(r[2].status, SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(st.rollbacks, 1);
	assert_int_equal(st.undo_failed, 0);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct = r[0].u.ct.ct;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m),
			 SPINNIC_PTL_ARG_INVALID);
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.me = r[1].u.me.me;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m),
			 SPINNIC_PTL_ARG_INVALID);
	/* a CT freed by reference, then a failure: nothing undone twice */
	t_rec(&e, &r[0], SPINNIC_CTRL_CT_ALLOC);
	t_rec(&e, &r[1], SPINNIC_CTRL_CT_FREE);
	r[1].u.ct.ct = SPINNIC_BATCH_REF(0);
	t_rec(&e, &r[2], SPINNIC_CTRL_ME_APPEND);
	r[2].u.me.pt_index = e.pt + 1; /* never allocated */
	assert_int_not_equal(t_batch(&e, 3, &st, &f), SPINNIC_PTL_OK);
	assert_int_equal(f, 2);
	assert_int_equal(st.undo_failed, 0);
	/* refused as a whole: no record read */
	st.recs = 0;
	assert_int_equal(t_batch(&e, 0, &st, &f), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(t_batch(&e, SPINNIC_CTRL_BATCH_MAX + 1, &st, &f),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(f, SPINNIC_HANDLE_NONE);
	assert_int_equal(st.recs, 0);
	/* what the first batch made is still there and frees */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = e.ni;
	m.u.me.me = me;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &m), 0);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = e.ni;
	m.u.md.md = md;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_RELEASE, &m), 0);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = e.ni;
	m.u.ct.ct = ct;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_FREE, &m), 0);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_validation),
		cmocka_unit_test(test_ctrl_validation),
		cmocka_unit_test(test_cmd_ring),
		cmocka_unit_test(test_ops),
		cmocka_unit_test(test_ops_full),
		cmocka_unit_test(test_ct_ack),
		cmocka_unit_test(test_errno_map),
		cmocka_unit_test(test_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
