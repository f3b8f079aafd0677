/* SPDX-License-Identifier: BSD-3-Clause */
/* Portals matching: lists, bits, ids, truncation, unlink, unexpected
 * headers, search, permissions, flow control. */
#include <pthread.h>

#include "ptl_test.h"
#include "ptl_internal.h" /* ptl_me_check_perms */

static void
stats(struct t_env *e, struct ptl_nic_stats *s)
{
	ptl_nic_stats_get(e->nic, s);
}

static void
test_priority_before_overflow(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over, prio;
	struct spinnic_event ev;

	(void)state;
	t_env_setup(&e);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.match_bits = 5;
	over.off = T_BUF_OFF + 8192;
	over.user_ptr = 0xaaa;
	t_me_append(&e, &over);
	t_me_default(&prio);
	prio.match_bits = 5;
	prio.user_ptr = 0xbbb;
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);

	t_hdr(&e, &h, 5, 100);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_PRIORITY);
	assert_int_equal(m.user_ptr, 0xbbb);
	assert_int_equal(m.start, t_addr(&e, T_BUF_OFF));
	assert_int_equal(m.mlength, 100);
	assert_int_equal(m.ack_req, SPINNIC_PTL_ACK_REQ);
	assert_true(m.c == e.c);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_null(m.c);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.user_ptr, 0xbbb);
	assert_int_equal(ev.mlength, 100);
	assert_int_equal(ev.rlength, 100);
	assert_int_equal(ev.match_bits, 5);
	assert_int_equal(ev.hdr_data, 0xdada);
	assert_int_equal(ev.initiator.nid, 2);
	assert_int_equal(ev.initiator.pid, 7);
	assert_int_equal(ev.uid, 1000);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_OK);
	/* persistent: matches again, still priority */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_PRIORITY);
	ptl_match_release(e.nic, &m);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	t_env_teardown(&e);
}

static void
test_ignore_bits(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.match_bits = 0x10;
	me.ignore_bits = 0x0f;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 0x1f, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_release(e.nic, &m);
	t_hdr(&e, &h, 0x13, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_release(e.nic, &m);
	t_hdr(&e, &h, 0x30, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_DROPPED);
	assert_null(m.c);
	stats(&e, &s);
	assert_int_equal(s.drop_no_match, 1);
	assert_int_equal(s.match_priority, 2);
	t_env_teardown(&e);
}

static void
test_match_id(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.match_id.nid = 2;
	me.match_id.pid = 8;
	me.user_ptr = 1;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 0, 8);    /* from 2/7 */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	h.src.pid = 8;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.user_ptr, 1);
	ptl_match_release(e.nic, &m);
	h.src.nid = 3;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	/* nid wildcard, pid fixed */
	me.match_id.nid = SPINNIC_PTL_NID_ANY;
	me.user_ptr = 2;
	t_me_append(&e, &me);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.user_ptr, 2);
	ptl_match_release(e.nic, &m);
	t_env_teardown(&e);
}

static void
test_use_once(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct spinnic_event ev;
	struct spinnic_ctrl_msg um;
	uint32_t hme;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.options |= SPINNIC_PTL_ME_USE_ONCE | SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	me.user_ptr = 0x11;
	hme = t_me_append(&e, &me);
	t_hdr(&e, &h, 0, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.unlinked, 1);
	/* gone from the list: the next message finds nothing */
	{
		struct ptl_match m2;

		assert_int_equal(ptl_nic_match(e.nic, &h, &m2), -ENOENT);
	}
	/* unlinked already: explicit unlink is refused */
	memset(&um, 0, sizeof(um));
	um.u.me.me = hme;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &um),
			 SPINNIC_PTL_ARG_INVALID);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_AUTO_UNLINK);
	assert_int_equal(ev.user_ptr, 0x11);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);

	/* EVENT_UNLINK_DISABLE: no AUTO_UNLINK */
	me.options |= SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE;
	t_me_append(&e, &me);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	t_env_teardown(&e);
}

static void
test_truncate(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.length = 100;
	me.match_bits = 1;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 1, 200);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.rlength, 200);
	assert_int_equal(m.mlength, 100);
	assert_int_equal(m.length, 100);
	ptl_match_release(e.nic, &m);
	/* remote offset inside: mlength is what is left */
	h.remote_offset = 60;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.mlength, 40);
	assert_int_equal(m.local_offset, 60);
	assert_int_equal(m.start, t_addr(&e, T_BUF_OFF + 60));
	ptl_match_release(e.nic, &m);
	/* remote offset past the end: truncated to 0 bytes */
	h.remote_offset = 500;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.mlength, 0);
	assert_int_equal(m.length, 0);
	ptl_match_release(e.nic, &m);
	stats(&e, &s);
	assert_int_equal(s.truncated, 3);

	/* NO_TRUNCATE: too long is no match, fitting still matches */
	me.match_bits = 2;
	me.options |= SPINNIC_PTL_ME_NO_TRUNCATE;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 2, 101);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	t_hdr(&e, &h, 2, 100);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.mlength, 100);
	ptl_match_release(e.nic, &m);
	t_env_teardown(&e);
}

static void
test_manage_local_min_free(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m1, m2, m3;
	struct t_me me;
	struct spinnic_event ev;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.length = 1000;
	me.min_free = 300;
	me.options |= SPINNIC_PTL_ME_MANAGE_LOCAL |
		      SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 0, 400);
	h.remote_offset = 900; /* ignored: offset is managed locally */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m1), 0);
	assert_int_equal(m1.local_offset, 0);
	assert_int_equal(m1.unlinked, 0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), 0);
	assert_int_equal(m2.local_offset, 400);
	assert_int_equal(m2.start, t_addr(&e, T_BUF_OFF + 400));
	/* 200 left < min_free 300: unlinked */
	assert_int_equal(m2.unlinked, 1);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m3), -ENOENT);
	ptl_match_complete(e.nic, &m1, SPINNIC_PTL_NI_OK);
	ptl_match_complete(e.nic, &m2, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.remote_offset, 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.remote_offset, 400);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_AUTO_UNLINK);

	/* manage-local without min_free: truncates at the end */
	me.min_free = 0;
	me.length = 500;
	t_me_append(&e, &me);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m1), 0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), 0);
	assert_int_equal(m2.mlength, 100);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m3), 0);
	assert_int_equal(m3.mlength, 0);
	ptl_match_release(e.nic, &m1);
	ptl_match_release(e.nic, &m2);
	ptl_match_release(e.nic, &m3);
	t_env_teardown(&e);
}

/* Two unexpected puts (300 B, 500 B) in a persistent overflow buffer,
 * then a locally managed priority entry of 1000 B matching both. */
static void
uh_setup(struct t_env *e)
{
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over;

	t_env_setup(e);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL |
			SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	over.off = T_BUF_OFF + 8192;
	over.length = 65536;
	over.ignore_bits = ~0ull;
	t_me_append(e, &over);
	t_hdr(e, &h, 9, 300);
	assert_int_equal(ptl_nic_match(e->nic, &h, &m), 0);
	ptl_match_complete(e->nic, &m, SPINNIC_PTL_NI_OK);
	t_hdr(e, &h, 9, 500);
	assert_int_equal(ptl_nic_match(e->nic, &h, &m), 0);
	ptl_match_complete(e->nic, &m, SPINNIC_PTL_NI_OK);
	t_ev_drain(e, T_EQ_OFF);
}

/* PTL_ME_LOCAL_INC_UH_RLENGTH: a locally managed priority entry that
 * claims unexpected headers when appended advances its local offset by
 * their rlength (without it, by nothing: their data lies in the overflow
 * buffer); with min_free, one left without room is unlinked at once */
static void
test_inc_uh_rlength(void **state)
{
	static const struct {
		unsigned options;
		uint64_t min_free, next_off; /* UINT64_MAX: not linked */
	} cases[] = {
		{ 0, 0, 0 },
		{ SPINNIC_PTL_ME_LOCAL_INC_UH_RLENGTH, 0, 800 },
		{ SPINNIC_PTL_ME_LOCAL_INC_UH_RLENGTH, 300, UINT64_MAX },
	};
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	unsigned i;

	(void)state;
	for (i = 0; i < 3; i++) {
		uh_setup(&e);
		t_me_default(&me);
		me.options |= SPINNIC_PTL_ME_MANAGE_LOCAL | cases[i].options;
		me.length = 1000;
		me.min_free = cases[i].min_free;
		me.match_bits = 9;
		me.user_ptr = 0x90;
		t_me_append(&e, &me);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
		assert_int_equal(ev.rlength, 300);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
		assert_int_equal(ev.rlength, 500);
		t_hdr(&e, &h, 9, 100);
		if (cases[i].next_off == UINT64_MAX) {
			/* 200 B left < min_free 300: AUTO_UNLINK, never
			 * linked; the next put goes to the overflow list */
			assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
					 SPINNIC_PTL_EVENT_AUTO_UNLINK);
			assert_int_equal(ev.user_ptr, 0x90);
			assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
			assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
		} else {
			assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
					 SPINNIC_PTL_EVENT_LINK);
			assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
			assert_int_equal(m.list, PTL_MATCH_PRIORITY);
			assert_int_equal(m.local_offset, cases[i].next_off);
		}
		ptl_match_release(e.nic, &m);
		t_env_teardown(&e);
	}
}

static void
test_unexpected_search(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over, q;
	struct spinnic_event ev;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL;
	over.off = T_BUF_OFF + 8192;
	over.length = 65536;
	over.ignore_bits = ~0ull;
	over.user_ptr = 0x0f;
	t_me_append(&e, &over);
	t_ev_drain(&e, T_EQ_OFF);

	t_hdr(&e, &h, 42, 64);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.user_ptr, 0x0f);

	/* search: wrong bits -> SEARCH with NO_MATCH */
	t_me_default(&q);
	q.list = SPINNIC_PTL_SEARCH_ONLY;
	q.match_bits = 41;
	q.user_ptr = 0x5;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEARCH);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_NO_MATCH);
	assert_int_equal(ev.user_ptr, 0x5);
	/* search only: found, stays */
	q.match_bits = 42;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEARCH);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_OK);
	assert_int_equal(ev.start, t_addr(&e, T_BUF_OFF + 8192));
	assert_int_equal(ev.mlength, 64);
	assert_int_equal(ev.match_bits, 42);
	/* search delete: found, removed, reported as the overflow event
	 * an append would post (a put's: PUT_OVERFLOW) */
	q.list = SPINNIC_PTL_SEARCH_DELETE;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_OK);
	assert_int_equal(ev.mlength, 64);
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_SEARCH);
	assert_int_equal(ev.ni_fail_type, SPINNIC_PTL_NI_NO_MATCH);
	/* a search list value on append, an append list on search */
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &q, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	q.list = SPINNIC_PTL_PRIORITY_LIST;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	stats(&e, &s);
	assert_int_equal(s.uh_stored, 1);
	assert_int_equal(s.uh_searched, 2);
	t_env_teardown(&e);
}

static void
test_priority_append_hits_unexpected(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m, m2;
	struct t_me over, prio;
	struct spinnic_event ev;

	(void)state;
	t_env_setup(&e);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL | SPINNIC_PTL_ME_USE_ONCE;
	over.off = T_BUF_OFF + 8192;
	over.ignore_bits = ~0ull;
	over.user_ptr = 0x0f;
	t_me_append(&e, &over);
	t_ev_drain(&e, T_EQ_OFF);

	/* unexpected message; the use-once overflow buffer unlinks */
	t_hdr(&e, &h, 7, 32);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
	assert_int_equal(m.unlinked, 1);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_AUTO_UNLINK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);

	/* an entry that does not allow puts does not take it */
	t_me_default(&prio);
	prio.options = SPINNIC_PTL_ME_OP_GET | SPINNIC_PTL_ME_USE_ONCE |
		       SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	prio.match_bits = 7;
	{
		uint32_t hg = t_me_append(&e, &prio);
		struct spinnic_ctrl_msg um;

		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
		memset(&um, 0, sizeof(um));
		um.u.me.me = hg;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &um),
				 SPINNIC_PTL_OK);
	}
	/* a priority append with other bits does not take it */
	t_me_default(&prio);
	prio.options |= SPINNIC_PTL_ME_USE_ONCE;
	prio.match_bits = 8;
	prio.user_ptr = 0x80;
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	/* matching use-once append: PUT_OVERFLOW, consumed, buffer freed */
	prio.match_bits = 7;
	prio.user_ptr = 0x70;
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.user_ptr, 0x70);
	assert_int_equal(ev.start, t_addr(&e, T_BUF_OFF + 8192));
	assert_int_equal(ev.mlength, 32);
	assert_int_equal(ev.match_bits, 7);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_AUTO_FREE);
	assert_int_equal(ev.user_ptr, 0x0f);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	/* consumed: a new bits-7 message finds nothing */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);

	/* claimed before the unexpected message completed: the
	 * PUT_OVERFLOW comes at completion */
	over.options &= ~SPINNIC_PTL_ME_USE_ONCE;
	t_me_append(&e, &over);
	t_ev_drain(&e, T_EQ_OFF);
	t_hdr(&e, &h, 9, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
	prio.match_bits = 9;
	prio.user_ptr = 0x90;
	prio.options &= ~SPINNIC_PTL_ME_USE_ONCE; /* persistent: linked */
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_LINK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.user_ptr, 0x90);
	/* the persistent priority entry now takes bits 9 directly */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), 0);
	assert_int_equal(m2.list, PTL_MATCH_PRIORITY);
	assert_int_equal(m2.user_ptr, 0x90);
	ptl_match_release(e.nic, &m2);
	t_env_teardown(&e);
}

static uint64_t
t_status(struct t_env *e, uint32_t reg)
{
	struct spinnic_ctrl_msg r;

	memset(&r, 0, sizeof(r));
	r.u.status.ni = e->ni;
	r.u.status.reg = reg;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_NI_STATUS, &r),
			 SPINNIC_PTL_OK);
	return r.u.status.value;
}

/* PTL_ME_AUTH_USE_JID: the uid field is a job id; spinnic's processes
 * have none (PTL_JID_NONE): an entry for job 5 takes nobody, not even
 * uid 5; one for JID_NONE or JID_ANY takes anyone */
static void
test_auth_jid(void **state)
{
	static const uint32_t jids[] = { 5, 0, SPINNIC_PTL_UID_ANY };
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	unsigned i;

	(void)state;
	t_env_setup(&e);
	for (i = 0; i < 3; i++) {
		t_me_default(&me);
		me.options |= SPINNIC_PTL_ME_AUTH_USE_JID;
		me.uid = jids[i];
		me.match_bits = 10 + i;
		t_me_append(&e, &me);
		t_hdr(&e, &h, 10 + i, 8);
		h.uid = 5;
		if (i == 0) {
			assert_int_equal(ptl_nic_match(e.nic, &h, &m),
					 -EACCES);
			assert_int_equal(m.ni_fail,
					 SPINNIC_PTL_NI_PERM_VIOLATION);
		} else {
			assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
			ptl_match_release(e.nic, &m);
		}
	}
	t_env_teardown(&e);
}

static void
test_permissions(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	me.options = SPINNIC_PTL_ME_OP_GET;
	me.match_bits = 1;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 1, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EPERM);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_OP_VIOLATION);
	/* a get is allowed, and never acked */
	h.type = SPINNIC_WIRE_T_GET;
	h.op = SPINNIC_WIRE_OP_GET;
	h.pay_len = 0;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.ack_req, SPINNIC_PTL_NO_ACK_REQ);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_ACK_DISABLE;
	me.match_bits = 2;
	me.uid = 5;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 2, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EACCES);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_PERM_VIOLATION);
	h.uid = 5;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.ack_req, SPINNIC_PTL_NO_ACK_REQ);
	ptl_match_release(e.nic, &m);
	stats(&e, &s);
	assert_int_equal(s.drop_op, 1);
	assert_int_equal(s.drop_perm, 1);
	/* and the NI's status registers say the same (PtlNIStatus) */
	t_hdr(&e, &h, 3, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ENOENT);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_DROP_COUNT), 3);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_PERMISSION_VIOLATIONS), 1);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_OPERATION_VIOLATIONS), 1);
	{
		struct spinnic_ctrl_msg r;

		memset(&r, 0, sizeof(r));
		r.u.status.ni = e.ni;
		r.u.status.reg = SPINNIC_PTL_SR_LAST;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_STATUS, &r),
				 SPINNIC_PTL_ARG_INVALID);
		r.u.status.ni = e.ni ^ 0x5a5a0000u;
		r.u.status.reg = SPINNIC_PTL_SR_DROP_COUNT;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_NI_STATUS, &r),
				 SPINNIC_PTL_ARG_INVALID);
	}
	t_env_teardown(&e);
}

static void
test_targets_and_pt(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct spinnic_ctrl_msg pm;
	struct ptl_nic_stats s;

	(void)state;
	t_env_setup(&e);
	t_me_default(&me);
	t_me_append(&e, &me);
	t_hdr(&e, &h, 0, 8);
	h.dst.pid = 5;  /* nobody */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ESRCH);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_UNDELIVERABLE);
	t_hdr(&e, &h, 0, 8);
	h.dst.nid = 9;  /* another node */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ESRCH);
	t_hdr(&e, &h, 0, 8);
	h.ni = SPINNIC_WIRE_NI_NO_MATCHING; /* NI not initialized */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ESRCH);
	t_hdr(&e, &h, 0, 8);
	h.pt_index = 40; /* not allocated */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EINVAL);
	h.pt_index = 1000; /* out of range */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EINVAL);
	/* disabled PT */
	memset(&pm, 0, sizeof(pm));
	pm.u.pt.ni = e.ni;
	pm.u.pt.pt_index = e.pt;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_DISABLE, &pm),
			 SPINNIC_PTL_OK);
	t_hdr(&e, &h, 0, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EAGAIN);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_PT_DISABLED);
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ENABLE, &pm),
			 SPINNIC_PTL_OK);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_release(e.nic, &m);
	/* a payload packet that arrives first matches: it carries the header */
	h.flags = SPINNIC_WIRE_F_PAYLOAD;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_release(e.nic, &m);
	stats(&e, &s);
	assert_int_equal(s.drop_no_target, 3);
	assert_int_equal(s.drop_bad_pt, 2);
	assert_int_equal(s.drop_pt_disabled, 1);
	t_env_teardown(&e);
}

static void
test_flow_control(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct spinnic_event ev;
	struct ptl_nic_stats s;
	int i;

	(void)state;
	t_env_setup_opts(&e, 4, SPINNIC_PTL_PT_FLOWCTRL, NULL);
	t_me_default(&me);
	me.match_bits = 1;
	me.options |= SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	t_me_append(&e, &me);
	/* no match on a flow-controlled PT: disabled, PT_DISABLED event */
	t_hdr(&e, &h, 2, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EAGAIN);
	assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_PT_DISABLED);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PT_DISABLED);
	assert_int_equal(ev.pt_index, e.pt);
	t_hdr(&e, &h, 1, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EAGAIN);
	{
		struct spinnic_ctrl_msg pm;

		memset(&pm, 0, sizeof(pm));
		pm.u.pt.ni = e.ni;
		pm.u.pt.pt_index = e.pt;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ENABLE, &pm),
				 SPINNIC_PTL_OK);
	}
	/* EQ of 4 entries: after 3 events the next match trips flow
	 * control, and PT_DISABLED takes the slot kept for it */
	for (i = 0; i < 3; i++) {
		assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
		ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	}
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -EAGAIN);
	stats(&e, &s);
	assert_int_equal(s.flowctrl, 2);
	assert_int_equal(s.eq_dropped, 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PT_DISABLED);
	t_env_teardown(&e);
}

/* Messages matched but not yet completed (staged writes) own their EQ
 * slots: together they cannot overflow the EQ of a flow-controlled PT,
 * the one that would is dropped PT_DISABLED (itest_flowctl, doc/NOTES.md
 * "Open MPI over spinnic") */
static void
test_flow_control_owed(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m[4];
	struct t_me me;
	struct spinnic_event ev;
	struct ptl_nic_stats s;
	int i;

	(void)state;
	t_env_setup_opts(&e, 4, SPINNIC_PTL_PT_FLOWCTRL, NULL);
	t_me_default(&me);
	me.match_bits = 1;
	me.options |= SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	t_me_append(&e, &me);
	t_hdr(&e, &h, 1, 8);
	/* three in flight take the three slots; the fourth, with the ring
	 * still empty, trips flow control */
	for (i = 0; i < 3; i++)
		assert_int_equal(ptl_nic_match(e.nic, &h, &m[i]), 0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m[3]), -EAGAIN);
	assert_int_equal(m[3].ni_fail, SPINNIC_PTL_NI_PT_DISABLED);
	for (i = 0; i < 3; i++)
		ptl_match_complete(e.nic, &m[i], SPINNIC_PTL_NI_OK);
	stats(&e, &s);
	assert_int_equal(s.flowctrl, 1);
	assert_int_equal(s.flowctrl_owed, 1);
	assert_int_equal(s.eq_dropped, 0);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PT_DISABLED);
	for (i = 0; i < 3; i++)
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_PUT);
	{
		struct spinnic_ctrl_msg pm;

		memset(&pm, 0, sizeof(pm));
		pm.u.pt.ni = e.ni;
		pm.u.pt.pt_index = e.pt;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ENABLE, &pm),
				 SPINNIC_PTL_OK);
	}
	/* a released match (its client's detach path) gives its slot back */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m[0]), 0);
	ptl_match_release(e.nic, &m[0]);
	for (i = 0; i < 3; i++)
		assert_int_equal(ptl_nic_match(e.nic, &h, &m[i]), 0);
	for (i = 0; i < 3; i++)
		ptl_match_complete(e.nic, &m[i], SPINNIC_PTL_NI_OK);
	stats(&e, &s);
	assert_int_equal(s.flowctrl, 1);
	assert_int_equal(s.eq_dropped, 0);
	t_env_teardown(&e);
}

static void
test_uh_full(void **state)
{
	struct ptl_nic_conf cf;
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m1, m2;
	struct t_me over;
	struct ptl_nic_stats s;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.limits.max_unexpected_headers = 1;
	t_env_setup_opts(&e, 64, 0, &cf);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL;
	over.ignore_bits = ~0ull;
	t_me_append(&e, &over);
	t_hdr(&e, &h, 3, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m1), 0);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), -ENOSPC);
	assert_int_equal(m2.ni_fail, SPINNIC_PTL_NI_DROPPED);
	/* a failed message leaves no unexpected header behind */
	ptl_match_complete(e.nic, &m1, SPINNIC_PTL_NI_DROPPED);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m2), 0);
	ptl_match_release(e.nic, &m2);
	stats(&e, &s);
	assert_int_equal(s.drop_uh_full, 1);
	assert_int_equal(s.uh_stored, 2);
	t_env_teardown(&e);
}

static void
test_non_matching_ni(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me le;

	(void)state;
	t_env_setup(&e);
	e.ni = t_ni_init(&e, e.c, SPINNIC_PTL_NI_NO_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL);
	e.eq = t_eq_alloc(&e, e.c, e.ni, T_EQ2_OFF, 16);
	e.pt = t_pt_alloc(&e, 0, e.eq);
	t_me_default(&le);
	le.match_bits = 12345; /* ignored on a non-matching NI */
	le.match_id.pid = 99;  /* ignored too */
	le.user_ptr = 0x1e;
	t_me_append(&e, &le);
	t_hdr(&e, &h, 777, 8);
	h.ni = SPINNIC_WIRE_NI_NO_MATCHING;
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.user_ptr, 0x1e);
	assert_int_equal(m.ni, e.ni);
	ptl_match_release(e.nic, &m);
	t_env_teardown(&e);
}

static int released;

/* Matching and the unexpected-header claim use ptl_me_check_perms: every
 * (operation, entry permissions, entry uid, initiator uid) gives the
 * function's outcome on the wire, and the violations are counted. */
static void
test_permissions_one_check(void **state)
{
	static const uint8_t ops[] = {
		SPINNIC_WIRE_OP_PUT, SPINNIC_WIRE_OP_GET,
		SPINNIC_WIRE_OP_ATOMIC, SPINNIC_WIRE_OP_FETCH_ATOMIC,
		SPINNIC_WIRE_OP_SWAP,
	};
	static const uint32_t opts[] = {
		SPINNIC_PTL_ME_OP_PUT, SPINNIC_PTL_ME_OP_GET,
		SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_OP_GET,
	};
	static const uint32_t me_uids[] = { SPINNIC_PTL_UID_ANY, 5 };
	static const uint32_t hdr_uids[] = { 5, 1000 };
	uint64_t n_op = 0, n_perm = 0, n_drop = 0, bits = 0;
	unsigned a, b, u, v;
	struct ptl_nic_stats st;
	struct t_env e;

	(void)state;
	t_env_setup_opts(&e, 1024, 0, NULL);
	for (a = 0; a < 5; a++)
	for (b = 0; b < 3; b++)
	for (u = 0; u < 2; u++)
	for (v = 0; v < 2; v++) {
		struct ptl_me me;
		struct spinnic_pkt h;
		struct ptl_match m;
		struct t_me tm;
		int want;

		memset(&me, 0, sizeof(me));
		me.options = opts[b];
		me.uid = me_uids[u];
		want = ptl_me_check_perms(&me, ops[a], hdr_uids[v]);
		assert_true(want == 0 || want == -EPERM || want == -EACCES);
		assert_int_equal(ptl_me_permits(&me, ops[a], hdr_uids[v]),
				 want == 0);
		t_me_default(&tm);
		tm.options = opts[b] | SPINNIC_PTL_ME_USE_ONCE |
			     SPINNIC_PTL_ME_EVENT_LINK_DISABLE |
			     SPINNIC_PTL_ME_EVENT_COMM_DISABLE |
			     SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE;
		tm.uid = me_uids[u];
		tm.match_bits = ++bits;
		t_me_append(&e, &tm);
		t_hdr(&e, &h, bits, 8);
		h.op = ops[a];
		h.uid = hdr_uids[v];
		if (ops[a] == SPINNIC_WIRE_OP_GET) {
			h.type = SPINNIC_WIRE_T_GET;
			h.pay_len = 0;
		}
		assert_int_equal(ptl_nic_match(e.nic, &h, &m), want);
		if (want == 0) {
			assert_int_equal(m.ni_fail, SPINNIC_PTL_NI_OK);
			ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
			continue;
		}
		n_drop++;
		if (want == -EPERM) {
			n_op++;
			assert_int_equal(m.ni_fail,
					 SPINNIC_PTL_NI_OP_VIOLATION);
		} else {
			n_perm++;
			assert_int_equal(m.ni_fail,
					 SPINNIC_PTL_NI_PERM_VIOLATION);
		}
	}
	assert_true(n_op > 0 && n_perm > 0);
	stats(&e, &st);
	assert_int_equal(st.drop_op, n_op);
	assert_int_equal(st.drop_perm, n_perm);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_DROP_COUNT), n_drop);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_OPERATION_VIOLATIONS),
			 n_op);
	assert_int_equal(t_status(&e, SPINNIC_PTL_SR_PERMISSION_VIOLATIONS),
			 n_perm);
	t_env_teardown(&e);
}

/* An unexpected header is claimed only by an entry that permits it (the
 * same check as matching): a uid mismatch leaves it for the next one. */
static void
test_unexpected_claim_perms(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over, prio;
	struct spinnic_event ev;
	struct ptl_nic_stats st;

	(void)state;
	t_env_setup(&e);
	/* a catch-all overflow buffer keeps the header */
	t_me_default(&over);
	over = (struct t_me){ .list = SPINNIC_PTL_OVERFLOW_LIST,
			      .options = SPINNIC_PTL_ME_OP_PUT |
					 SPINNIC_PTL_ME_MANAGE_LOCAL,
			      .uid = SPINNIC_PTL_UID_ANY, .ct = over.ct,
			      .ctx = over.ctx, .off = T_BUF_OFF + 8192,
			      .length = 4096, .ignore_bits = ~0ull,
			      .match_id = over.match_id };
	t_me_append(&e, &over);
	t_hdr(&e, &h, 9, 16);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	t_ev_drain(&e, T_EQ_OFF);

	/* uid 5 may not take a message from uid 1000 */
	t_me_default(&prio);
	prio.options |= SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	prio.match_bits = 9;
	prio.uid = 5;
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	stats(&e, &st);
	assert_int_equal(st.uh_claimed, 0);
	/* uid 1000 may */
	prio.uid = 1000;
	prio.user_ptr = 0x1000;
	t_me_append(&e, &prio);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
			 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
	assert_int_equal(ev.user_ptr, 0x1000);
	stats(&e, &st);
	assert_int_equal(st.uh_claimed, 1);
	t_env_teardown(&e);
}

static void
count_release(void *arg, void *region, size_t size)
{
	(void)arg;
	released++;
	munmap(region, size);
}

static void
test_detach_inflight(void **state)
{
	struct t_env e;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me me;
	struct ptl_nic_stats s;
	struct spinnic_ctrl_msg um;
	uint32_t hme;

	(void)state;
	t_env_setup(&e);
	ptl_client_set_release(e.c, count_release, NULL);
	t_me_default(&me);
	hme = t_me_append(&e, &me);
	t_hdr(&e, &h, 0, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	/* in flight: unlink refused */
	memset(&um, 0, sizeof(um));
	um.u.me.me = hme;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &um),
			 SPINNIC_PTL_IN_USE);
	released = 0;
	ptl_client_detach(e.nic, e.c);
	assert_int_equal(released, 0);   /* the match holds a reference */
	assert_false(ptl_client_alive(m.c));
	{
		uint8_t b = 1;

		assert_int_equal(ptl_host_write(m.c, m.start, &b, 1),
				 -ESHUTDOWN);
		assert_null(ptl_host_ptr(m.c, m.start, 1));
	}
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	assert_int_equal(released, 1);
	stats(&e, &s);
	assert_int_equal(s.inflight_dropped, 1);
	assert_int_equal(s.detached, 1);
	/* the pid is free again and the node drops the next message */
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), -ESRCH);
	t_env_teardown(&e);
}

struct matcher {
	struct t_env *e;
	int n;
	int matched;
};

static void *
matcher_run(void *arg)
{
	struct matcher *mt = arg;
	struct spinnic_pkt h;
	struct ptl_match m;
	int i;

	for (i = 0; i < mt->n; i++) {
		t_hdr(mt->e, &h, (uint64_t)(i & 3), 64);
		if (ptl_nic_match(mt->e->nic, &h, &m) != 0)
			continue;
		mt->matched++;
		assert_true(m.mlength == 64);
		if (i & 1)
			ptl_match_complete(mt->e->nic, &m, SPINNIC_PTL_NI_OK);
		else
			ptl_match_release(mt->e->nic, &m);
	}
	return NULL;
}

static void
test_concurrent(void **state)
{
	struct t_env e;
	struct matcher mt[2];
	pthread_t th[2];
	struct t_me me, once;
	struct ptl_nic_stats s;
	int i, k;

	(void)state;
	t_env_setup_opts(&e, 1024, 0, NULL);
	t_me_default(&me);
	me.match_bits = 0;
	me.options |= SPINNIC_PTL_ME_EVENT_COMM_DISABLE |
		      SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
	t_me_append(&e, &me);
	for (k = 0; k < 2; k++) {
		mt[k].e = &e;
		mt[k].n = 20000;
		mt[k].matched = 0;
		assert_int_equal(pthread_create(&th[k], NULL, matcher_run,
						&mt[k]), 0);
	}
	/* the control thread appends use-once entries for bits 1..3 and
	 * unlinks what is left of them */
	t_me_default(&once);
	once.options |= SPINNIC_PTL_ME_USE_ONCE |
			SPINNIC_PTL_ME_EVENT_LINK_DISABLE |
			SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE;
	for (i = 0; i < 3000; i++) {
		struct spinnic_ctrl_msg um;
		uint32_t hme;

		once.match_bits = 1 + (uint64_t)(i % 3);
		hme = t_me_append(&e, &once);
		memset(&um, 0, sizeof(um));
		um.u.me.me = hme;
		/* already consumed, in flight, or unlinked here */
		(void)t_ctrl(&e, e.c, SPINNIC_CTRL_ME_UNLINK, &um);
		if ((i & 63) == 0)
			t_ev_drain(&e, T_EQ_OFF);
	}
	for (k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.match_priority,
			 (uint64_t)(mt[0].matched + mt[1].matched));
	assert_true(mt[0].matched >= 5000 && mt[1].matched >= 5000);
	t_env_teardown(&e);
}

/* PTL_PT_ONLY_USE_ONCE and PTL_PT_ONLY_TRUNCATE are hints: a persistent
 * entry, and a NO_TRUNCATE one, are taken on such a PT and stay what
 * their options say (Open MPI's MTL appends both kinds there). */
static void
test_pt_hints(void **state)
{
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_env e;
	struct t_me me;
	uint32_t hme;

	(void)state;
	t_env_setup_opts(&e, 64, SPINNIC_PTL_PT_ONLY_USE_ONCE |
			 SPINNIC_PTL_PT_ONLY_TRUNCATE, NULL);
	t_me_default(&me);
	me.match_bits = 5;
	me.options |= SPINNIC_PTL_ME_NO_TRUNCATE;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, &hme),
			 SPINNIC_PTL_OK);
	/* persistent: matches twice */
	t_hdr(&e, &h, 5, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	t_hdr(&e, &h, 5, 8);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	t_env_teardown(&e);
}

/* A search that finds a header counts on the searching entry's counter:
 * SEARCH_ONLY with PTL_ME_EVENT_CT_COMM, SEARCH_DELETE with
 * PTL_ME_EVENT_CT_OVERFLOW (bytes with CT_BYTES); the other bit does not
 * count. */
static void
test_search_counts(void **state)
{
	struct spinnic_ctrl_msg cm;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct spinnic_ct *rec;
	struct t_me over, q;
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	memset(&cm, 0, sizeof(cm));
	cm.u.ct.ni = e.ni;
	cm.u.ct.ct_off = T_CT_OFF;
	assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_CT_ALLOC, &cm),
			 SPINNIC_PTL_OK);
	rec = (struct spinnic_ct *)(e.region + T_CT_OFF);
	t_me_default(&over);
	over.list = SPINNIC_PTL_OVERFLOW_LIST;
	over.options |= SPINNIC_PTL_ME_MANAGE_LOCAL;
	over.length = 65536;
	over.ignore_bits = ~0ull;
	t_me_append(&e, &over);
	t_hdr(&e, &h, 42, 64);
	assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
	ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
	t_ev_drain(&e, T_EQ_OFF);

	t_me_default(&q);
	q.match_bits = 42;
	q.ct = cm.u.ct.ct;
	q.list = SPINNIC_PTL_SEARCH_ONLY;
	q.options |= SPINNIC_PTL_ME_EVENT_CT_OVERFLOW;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(rec->success, 0);
	q.options ^= SPINNIC_PTL_ME_EVENT_CT_OVERFLOW |
		     SPINNIC_PTL_ME_EVENT_CT_COMM;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(rec->success, 1);
	q.list = SPINNIC_PTL_SEARCH_DELETE;
	q.options ^= SPINNIC_PTL_ME_EVENT_CT_OVERFLOW |
		     SPINNIC_PTL_ME_EVENT_CT_COMM;
	q.options |= SPINNIC_PTL_ME_EVENT_CT_BYTES;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &q, NULL),
			 SPINNIC_PTL_OK);
	assert_int_equal(rec->success, 1 + 64);
	t_env_teardown(&e);
}

/*
 * Use-once entries on the overflow list (Portals 4 §3.12, the overflow
 * list rules): a put takes the entry (PUT with ptl_list overflow, then
 * AUTO_UNLINK) and leaves an unexpected header; the next put finds no
 * entry; a priority append claims the header (PUT_OVERFLOW with where the
 * data lies), after which the entry's memory is free (AUTO_FREE). A get
 * does the same on a fresh use-once overflow entry.
 */
static void
test_overflow_use_once(void **state)
{
	static const uint8_t ops[] = { SPINNIC_WIRE_OP_PUT,
				       SPINNIC_WIRE_OP_GET };
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match m;
	struct t_me over, prio;
	struct t_env e;
	unsigned k;

	(void)state;
	t_env_setup_opts(&e, 64, 0, NULL);
	for (k = 0; k < 2; k++) {
		uint64_t bits = 40 + k;

		t_me_default(&over);
		over.list = SPINNIC_PTL_OVERFLOW_LIST;
		over.options |= SPINNIC_PTL_ME_USE_ONCE;
		over.off = T_BUF_OFF + 8192;
		over.ignore_bits = ~0ull;
		over.user_ptr = 0x0f;
		t_me_append(&e, &over);
		t_ev_drain(&e, T_EQ_OFF);

		t_hdr(&e, &h, bits, 64);
		h.op = ops[k];
		h.msg_id = 100 + k;
		if (ops[k] == SPINNIC_WIRE_OP_GET) {
			h.type = SPINNIC_WIRE_T_GET;
			h.pay_len = 0;
			h.ack_req = SPINNIC_PTL_NO_ACK_REQ;
		}
		assert_int_equal(ptl_nic_match(e.nic, &h, &m), 0);
		assert_int_equal(m.list, PTL_MATCH_OVERFLOW);
		assert_int_equal(m.unlinked, 1);
		ptl_match_complete(e.nic, &m, SPINNIC_PTL_NI_OK);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 ops[k] == SPINNIC_WIRE_OP_GET ?
				 SPINNIC_PTL_EVENT_GET : SPINNIC_PTL_EVENT_PUT);
		assert_int_equal(ev.list, SPINNIC_PTL_OVERFLOW_LIST);
		assert_int_equal(ev.user_ptr, 0x0f);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_AUTO_UNLINK);
		/* the entry is gone: the next message finds nothing */
		h.msg_id = 200 + k;
		assert_true(ptl_nic_match(e.nic, &h, &m) != 0);
		t_ev_drain(&e, T_EQ_OFF);
		/* a priority entry claims the header kept */
		t_me_default(&prio);
		prio.match_bits = bits;
		prio.user_ptr = 0x70;
		prio.options |= SPINNIC_PTL_ME_EVENT_LINK_DISABLE;
		t_me_append(&e, &prio);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 ops[k] == SPINNIC_WIRE_OP_GET ?
				 SPINNIC_PTL_EVENT_GET_OVERFLOW :
				 SPINNIC_PTL_EVENT_PUT_OVERFLOW);
		assert_int_equal(ev.user_ptr, 0x70);
		assert_int_equal(ev.match_bits, bits);
		assert_int_equal(ev.mlength, 64);
		assert_int_equal(ev.start, t_addr(&e, T_BUF_OFF + 8192));
		/* the unlinked overflow entry's memory holds nothing now */
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev),
				 SPINNIC_PTL_EVENT_AUTO_FREE);
		assert_int_equal(ev.user_ptr, 0x0f);
		assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), -1);
	}
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_before_overflow),
		cmocka_unit_test(test_ignore_bits),
		cmocka_unit_test(test_match_id),
		cmocka_unit_test(test_use_once),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_inc_uh_rlength),
		cmocka_unit_test(test_auth_jid),
		cmocka_unit_test(test_manage_local_min_free),
		cmocka_unit_test(test_unexpected_search),
		cmocka_unit_test(test_priority_append_hits_unexpected),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_permissions_one_check),
		cmocka_unit_test(test_unexpected_claim_perms),
		cmocka_unit_test(test_targets_and_pt),
		cmocka_unit_test(test_flow_control),
		cmocka_unit_test(test_flow_control_owed),
		cmocka_unit_test(test_uh_full),
		cmocka_unit_test(test_non_matching_ni),
		cmocka_unit_test(test_detach_inflight),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_pt_hints),
		cmocka_unit_test(test_search_counts),
		cmocka_unit_test(test_overflow_use_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
