/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: message reassembly on the receive side. The data path's
 * reassembly (app/spinnic/inbound.c rx_data/rx_get/rx_reply/rx_ack) works on
 * mbufs inside the DPDK engine and has no entry point that takes parsed
 * packets, so this target drives the same pieces the way inbound.c does,
 * with the real code for each: spinnic_wire_parse, the message table
 * (app/spinnic/msgtab.c) with its shares and its packet bitmaps grown as
 * packets arrive (within a small budget, so refusals are exercised too),
 * ptl_nic_match / ptl_match_complete, host
 * writes through the NIC's IOMMU (ptl_host_write), and the initiator
 * operation table (ptl_op_lookup/ack/reply/reply_done) for ACK, NACK and
 * REPLY streams of operations started at setup.
 *
 * Input: records [u16 len][len bytes: one frame]; len 0 is a clock tick
 * that times out every live message (inbound.c expire_msg). Checked: every
 * byte placed lies inside the matched ME window (and so inside the
 * region), received bytes never exceed the message length, a message
 * completes exactly when all of its bytes came (every packet's bit set),
 * and bitmap memory stays within the table's budget.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msgtab.h"
#include "fuzz_common.h"
#include "wire.h"

#define FZ_PAYLOAD 512u   /* node payload size */
#define FZ_MSGS 64u
#define FZ_REPLIES 16u
#define FZ_SEEN_BYTES 65536u /* bitmap budget of each table */

/* setup objects (fuzz_gen.c builds seeds from the same layout) */
#define FZ_PEER_NID 2u
#define FZ_PEER_PID 3u

/* the seed generator includes this file for rm_setup only */
#define FZ_UNUSED __attribute__((unused))

struct rm_msg {
	struct spinnic_msg_link link; /* first */
	struct ptl_match m;
	uint64_t rlength, got;
	uint8_t matched, fail;
};

struct rm_reply {
	struct spinnic_msg_link link; /* first */
	uint64_t rlength, got;
	uint8_t fail;
};

struct rm {
	struct fz_env e;
	struct fz_objs o;
	struct spinnic_msgtab *msgs, *replies;
	uint64_t now;
	uint64_t completed, dropped;
	uint64_t op_ids[4];     /* of the operations started at setup */
	unsigned nops;
};

static int64_t
pkt_index(const struct spinnic_pkt *p)
{
	uint64_t want;

	if (p->offset % FZ_PAYLOAD != 0)
		return -1;
	want = p->msg_len - p->offset;
	if (want > FZ_PAYLOAD)
		want = FZ_PAYLOAD;
	if (p->pay_len != want)
		return -1;
	return (int64_t)(p->offset / FZ_PAYLOAD);
}

/* inbound.c msg_npkts */
static uint32_t
npkts_of(uint64_t len)
{
	return len == 0 ? 1 : (uint32_t)((len + FZ_PAYLOAD - 1) / FZ_PAYLOAD);
}

static unsigned
flags_of(const struct spinnic_pkt *p)
{
	return p->flags & SPINNIC_WIRE_F_REL ? 0 : SPINNIC_MSGTAB_F_UNSEQ;
}

/* inbound.c msg_pkt_new: new, with room for its bit (then set) */
static bool
pkt_new(struct spinnic_msgtab *t, struct spinnic_msg_link *l, int64_t idx)
{
	struct spinnic_msgtab_stats st;
	bool ok;

	if ((uint64_t)idx >= l->seen.npkts ||
	    spinnic_seen_test(&l->seen, (uint32_t)idx))
		return false;
	ok = spinnic_msgtab_seen_reserve(t, l, (uint32_t)idx) == 0;
	spinnic_msgtab_stats(t, &st);
	FZ_CHECK(st.seen_bytes <= FZ_SEEN_BYTES);
	if (ok) {
		spinnic_seen_set(&l->seen, (uint32_t)idx);
		FZ_CHECK(spinnic_seen_test(&l->seen, (uint32_t)idx));
	}
	return ok;
}

/* a message complete by its bytes has every packet */
static void
check_all_seen(const struct spinnic_msg_link *l)
{
	uint32_t i;

	for (i = 0; i < l->seen.npkts; i++)
		FZ_CHECK(spinnic_seen_test(&l->seen, i));
}

static void
check_match(const struct ptl_match *m)
{
	FZ_CHECK(m->c != NULL);
	FZ_CHECK(m->mlength <= m->rlength && m->mlength <= m->length);
	FZ_CHECK(m->length <= m->me_length);
	FZ_CHECK(m->start >= m->me_start);
	FZ_CHECK(m->start - m->me_start + m->length <= m->me_length);
}

static void
msg_retire(struct rm *r, struct rm_msg *e)
{
	spinnic_msgtab_finish(r->msgs, e);
}

static FZ_UNUSED void
rx_data(struct rm *r, const struct spinnic_pkt *p)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	int64_t idx = pkt_index(p);
	struct rm_msg *e;

	if (idx < 0)
		return;
	e = spinnic_msgtab_lookup(r->msgs, &key);
	if (e != NULL && e->link.state != SPINNIC_MSG_LIVE)
		return;
	if (e == NULL) {
		e = spinnic_msgtab_insert(r->msgs, &key, npkts_of(p->msg_len),
					  flags_of(p), r->now);
		if (e == NULL) {
			FZ_CHECK(errno == ENOSPC || errno == EDQUOT);
			return;
		}
		FZ_CHECK(e->link.seen.chunk == NULL && e->matched == 0);
		e->rlength = p->msg_len;
		/* before matching, as inbound.c: untrackable leaves no trace */
		if (spinnic_msgtab_seen_reserve(r->msgs, e, (uint32_t)idx) != 0) {
			spinnic_msgtab_remove(r->msgs, e);
			return;
		}
		if (ptl_nic_match(r->e.nic, p, &e->m) != 0) {
			FZ_CHECK(e->m.c == NULL);
			spinnic_msgtab_finish(r->msgs, e);
			return;
		}
		check_match(&e->m);
		FZ_CHECK(e->m.rlength == p->msg_len);
		e->matched = 1;
	} else {
		if (p->msg_len != e->rlength)
			return;
		spinnic_msgtab_touch(r->msgs, e, r->now);
	}
	if (!pkt_new(r->msgs, &e->link, idx))
		return;
	if (p->offset < e->m.mlength && p->pay_len > 0) {
		uint64_t n = p->pay_len;

		if (n > e->m.mlength - p->offset)
			n = e->m.mlength - p->offset;
		/* the IOMMU invariant: inside the ME window */
		FZ_CHECK(p->offset + n <= e->m.length);
		FZ_CHECK(e->m.start + p->offset + n <=
			 e->m.me_start + e->m.me_length);
		if (ptl_host_write(e->m.c, e->m.start + p->offset, p->payload,
				   n) != 0)
			e->fail = SPINNIC_PTL_NI_SEGV;
		else
			FZ_CHECK(ptl_host_ptr(e->m.c, e->m.start + p->offset,
					      n) != NULL);
	}
	e->got += p->pay_len;
	FZ_CHECK(e->got <= e->rlength);
	if (e->got == e->rlength) {
		check_all_seen(&e->link);
		ptl_match_complete(r->e.nic, &e->m, e->fail);
		FZ_CHECK(e->m.c == NULL);
		e->matched = 0;
		r->completed++;
		msg_retire(r, e);
		fz_eq_drain(&r->e, FZ_EQ_OFF);
	}
}

static FZ_UNUSED void
rx_get(struct rm *r, const struct spinnic_pkt *p)
{
	static uint8_t data[65536];
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	struct ptl_match m;
	struct rm_msg *e;
	uint64_t n;

	if (spinnic_msgtab_lookup(r->msgs, &key) != NULL)
		return;
	e = spinnic_msgtab_insert(r->msgs, &key, npkts_of(p->msg_len),
				  flags_of(p), r->now);
	if (e == NULL)
		return;
	spinnic_msgtab_finish(r->msgs, e);
	memset(&m, 0, sizeof(m));
	if (ptl_nic_match(r->e.nic, p, &m) != 0)
		return;
	check_match(&m);
	/* what the outbound engine reads to build the reply */
	n = m.mlength < sizeof(data) ? m.mlength : sizeof(data);
	if (n > 0)
		(void)ptl_host_read(m.c, m.start, data, n);
	ptl_match_complete(r->e.nic, &m, SPINNIC_PTL_NI_OK);
	fz_eq_drain(&r->e, FZ_EQ_OFF);
}

static FZ_UNUSED void
rx_reply(struct rm *r, const struct spinnic_pkt *p)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	int64_t idx = pkt_index(p);
	struct rm_reply *s;
	int rc;

	if (idx < 0)
		return;
	s = spinnic_msgtab_lookup(r->replies, &key);
	if (s != NULL && s->link.state != SPINNIC_MSG_LIVE)
		return;
	if (s == NULL) {
		struct ptl_op_info info;

		if (ptl_op_lookup(r->e.nic, p->msg_id, &info, NULL) != 0 ||
		    info.op != SPINNIC_CMD_GET ||
		    info.target.nid != p->src.nid ||
		    info.target.pid != p->src.pid)
			return;
		s = spinnic_msgtab_insert(r->replies, &key,
					  npkts_of(p->msg_len), flags_of(p),
					  r->now);
		if (s == NULL)
			return;
		s->rlength = p->msg_len;
		s->fail = p->fail_type;
		if (spinnic_msgtab_seen_reserve(r->replies, s,
						(uint32_t)idx) != 0) {
			spinnic_msgtab_remove(r->replies, s);
			return;
		}
	} else {
		if (p->msg_len != s->rlength)
			return;
		spinnic_msgtab_touch(r->replies, s, r->now);
	}
	if (!pkt_new(r->replies, &s->link, idx))
		return;
	if (p->pay_len > 0) {
		struct ptl_client *c;
		struct ptl_op_info info;
		uint64_t addr;

		rc = ptl_op_reply(r->e.nic, p->msg_id, p->offset, p->pay_len,
				  &c, &addr);
		if (rc == -ENOENT) {
			spinnic_msgtab_finish(r->replies, s);
			return;
		}
		if (rc == 0) {
			/* inside the get's local buffer */
			FZ_CHECK(ptl_op_lookup(r->e.nic, p->msg_id, &info,
					       NULL) == 0);
			FZ_CHECK(addr >= info.local_addr &&
				 addr - info.local_addr + p->pay_len <=
				 info.length);
			rc = ptl_host_write(c, addr, p->payload, p->pay_len);
			ptl_client_put(c);
		}
		if (rc != 0)
			s->fail = SPINNIC_PTL_NI_SEGV;
	}
	s->got += p->pay_len;
	FZ_CHECK(s->got <= s->rlength);
	if (s->got == s->rlength) {
		check_all_seen(&s->link);
		ptl_op_reply_done(r->e.nic, p->msg_id, s->fail, s->rlength);
		spinnic_msgtab_finish(r->replies, s);
		fz_eq_drain(&r->e, FZ_EQ_OFF);
	}
}

static FZ_UNUSED void
rx_ack(struct rm *r, const struct spinnic_pkt *p)
{
	struct ptl_op_info info;

	if (ptl_op_lookup(r->e.nic, p->msg_id, &info, NULL) != 0 ||
	    info.target.nid != p->src.nid || info.target.pid != p->src.pid)
		return;
	if (info.op == SPINNIC_CMD_GET) {
		if (p->type == SPINNIC_WIRE_T_NACK)
			ptl_op_reply_done(r->e.nic, p->msg_id, p->fail_type, 0);
	} else {
		ptl_op_ack(r->e.nic, p->msg_id, p->fail_type, p->mlength,
			   (uint8_t)p->hdr_data);
	}
	fz_eq_drain(&r->e, FZ_EQ_OFF);
}

static void
expire_msg(void *obj, void *arg)
{
	struct rm_msg *e = obj;
	struct rm *r = arg;

	if (e->matched)
		ptl_match_release(r->e.nic, &e->m);
	e->matched = 0;
	msg_retire(r, e);
	r->dropped++;
}

static void
expire_reply(void *obj, void *arg)
{
	struct rm_reply *s = obj;
	struct rm *r = arg;

	spinnic_msgtab_finish(r->replies, s);
}

static int
me_append(struct rm *r, uint32_t list, uint64_t off, uint64_t len,
	  uint64_t bits, uint32_t options)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.me.ni = r->o.ni;
	m.u.me.pt_index = r->o.pt;
	m.u.me.list = list;
	m.u.me.start = fz_addr(off);
	m.u.me.length = len;
	m.u.me.options = options | SPINNIC_PTL_ME_OP_PUT |
			 SPINNIC_PTL_ME_OP_GET;
	m.u.me.ct = r->o.ct;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.match_bits = bits;
	return fz_ctrl(&r->e, SPINNIC_CTRL_ME_APPEND, &m);
}

/* an outstanding operation of ours (its id is deterministic) */
static int
op_start(struct rm *r, uint32_t md, uint16_t op, uint64_t off, uint64_t len,
	 uint8_t ack_req)
{
	struct ptl_cmd c;
	uint64_t id;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.ack_req = ack_req;
	c.ni = r->o.ni;
	c.md = md;
	c.md_options = 0;
	c.eq = r->o.eq;
	c.ct = SPINNIC_HANDLE_NONE;
	c.local_offset = off;
	c.local_addr = fz_addr(FZ_BUF_OFF + 131072) + off;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.uid = FZ_UID;
	if (ptl_op_start(r->e.c, &c, &id) != 0)
		return -1;
	r->op_ids[r->nops++] = id;
	if (op == SPINNIC_CMD_PUT)
		ptl_op_sent(r->e.nic, id, SPINNIC_PTL_NI_OK);
	return 0;
}

static int
rm_setup(struct rm *r)
{
	struct spinnic_ctrl_msg m;

	memset(r, 0, sizeof(*r));
	if (fz_env_init(&r->e) != 0)
		return -1;
	if (fz_objs_setup(&r->e, &r->o) != 0)
		return -1;
	/* bits 0: 64 KiB; 1: use once, 1000 B; 2: overflow list 64 KiB;
	 * 3: no truncate 256 B; 4: manage local, 8 KiB */
	if (me_append(r, SPINNIC_PTL_PRIORITY_LIST, FZ_BUF_OFF, 65536, 0, 0) ||
	    me_append(r, SPINNIC_PTL_PRIORITY_LIST, FZ_BUF_OFF, 1000, 1,
		      SPINNIC_PTL_ME_USE_ONCE) ||
	    me_append(r, SPINNIC_PTL_OVERFLOW_LIST, FZ_BUF_OFF + 65536, 65536,
		      2, 0) ||
	    me_append(r, SPINNIC_PTL_PRIORITY_LIST, FZ_BUF_OFF, 256, 3,
		      SPINNIC_PTL_ME_NO_TRUNCATE) ||
	    me_append(r, SPINNIC_PTL_PRIORITY_LIST, FZ_BUF_OFF + 4096, 8192, 4,
		      SPINNIC_PTL_ME_MANAGE_LOCAL))
		return -1;
	/* an MD over [BUF + 128 KiB, +64 KiB) for the initiator ops */
	memset(&m, 0, sizeof(m));
	m.u.md.ni = r->o.ni;
	m.u.md.start = fz_addr(FZ_BUF_OFF + 131072);
	m.u.md.length = 65536;
	m.u.md.eq = r->o.eq;
	m.u.md.ct = r->o.ct;
	if (fz_ctrl(&r->e, SPINNIC_CTRL_MD_BIND, &m) != 0)
		return -1;
	/* ops 1..4: get 5000 B, put with ack, get 100 B at offset 60000,
	 * get 0 B (ids as ptl_op_start gives them) */
	if (op_start(r, m.u.md.md, SPINNIC_CMD_GET, 0, 5000, 0) ||
	    op_start(r, m.u.md.md, SPINNIC_CMD_PUT, 0, 3000,
		     SPINNIC_PTL_ACK_REQ) ||
	    op_start(r, m.u.md.md, SPINNIC_CMD_GET, 60000, 100, 0) ||
	    op_start(r, m.u.md.md, SPINNIC_CMD_GET, 0, 0, 0))
		return -1;
	r->msgs = spinnic_msgtab_create(FZ_MSGS, sizeof(struct rm_msg));
	r->replies = spinnic_msgtab_create(FZ_REPLIES,
					   sizeof(struct rm_reply));
	if (r->msgs == NULL || r->replies == NULL)
		return -1;
	/* the engine's shares (ENG_MSGS_* of engine.h), scaled to the table */
	if (spinnic_msgtab_set_limits(r->msgs, &(struct spinnic_msgtab_limits){
			.unseq_live = FZ_MSGS / 8, .nid_live = FZ_MSGS / 4,
			.seen_bytes = FZ_SEEN_BYTES,
			.unseq_seen_bytes = FZ_SEEN_BYTES / 8 }) ||
	    spinnic_msgtab_set_limits(r->replies,
		&(struct spinnic_msgtab_limits){ .seen_bytes = FZ_SEEN_BYTES }))
		return -1;
	fz_eq_drain(&r->e, FZ_EQ_OFF);
	return 0;
}

static void
rm_teardown(struct rm *r)
{
	spinnic_msgtab_foreach_live(r->msgs, UINT64_MAX, expire_msg, r);
	spinnic_msgtab_foreach_live(r->replies, UINT64_MAX, expire_reply, r);
	spinnic_msgtab_free(r->msgs);
	spinnic_msgtab_free(r->replies);
	fz_env_fini(&r->e);
}

#ifndef FZ_REASM_NO_ENTRY
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rm r;
	static uint8_t frame[65536 + 64];
	struct fz_in in = { data, size };
	struct spinnic_pkt p;
	unsigned nrec = 0;

	FZ_CHECK(rm_setup(&r) == 0);
	while (in.n >= 2 && nrec++ < 512) {
		size_t len = (size_t)fz_take(&in, 2);

		r.now++;
		if (len == 0) {
			spinnic_msgtab_foreach_live(r.msgs, r.now, expire_msg,
						    &r);
			spinnic_msgtab_foreach_live(r.replies, r.now,
						    expire_reply, &r);
			continue;
		}
		if (len > in.n)
			len = in.n;
		memcpy(frame, in.p, len);
		in.p += len;
		in.n -= len;
		if (spinnic_wire_parse(frame, len, SPINNIC_WIRE_UDP_PORT,
				       &p) != 0)
			continue;
		if (p.dst.nid != FZ_NID)
			continue;
		switch (p.type) {
		case SPINNIC_WIRE_T_DATA:
			rx_data(&r, &p);
			break;
		case SPINNIC_WIRE_T_GET:
			rx_get(&r, &p);
			break;
		case SPINNIC_WIRE_T_REPLY:
			rx_reply(&r, &p);
			break;
		default:
			rx_ack(&r, &p);
			break;
		}
	}
	rm_teardown(&r);
	return 0;
}
#endif
