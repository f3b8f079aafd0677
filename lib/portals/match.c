/* SPDX-License-Identifier: BSD-3-Clause */
/* Target-side matching of message headers, and the end of a match. */
#include <time.h>

#include "ptl_internal.h"

#define UH_REF(slot, gen) (((uint32_t)(gen) << 24) | ((slot) + 1))
#define UH_SLOT(ref) (((ref) & 0xffffffu) - 1)
#define UH_GEN(ref) ((uint8_t)((ref) >> 24))

/* nic->lock held: flow control hit on a PT */
void
ptl_pt_disable_flowctrl(struct ptl_client *c, unsigned kind,
			struct ptl_pt *pt, uint32_t pt_index)
{
	struct spinnic_event ev;

	(void)kind;
	pt->enabled = false;
	PTL_STAT(c->nic, flowctrl);
	ptl_event_init(&ev, SPINNIC_PTL_EVENT_PT_DISABLED, SPINNIC_PTL_NI_OK);
	ev.pt_index = pt_index;
	ptl_eq_post(c, pt->eq, &ev);
}

/* Why ptl_nic_match drops a message: the counter it bumps, the failure
 * and errno it reports, and, for the reasons flow control covers, what
 * they become on a flow-controlled PT (which the drop disables). */
enum match_drop {
	MATCH_DROP_BAD_HDR,
	MATCH_DROP_NO_TARGET,
	MATCH_DROP_BAD_PT,
	MATCH_DROP_TOO_LONG,
	MATCH_DROP_PT_DISABLED,
	MATCH_DROP_NO_MATCH,
	MATCH_DROP_OP,
	MATCH_DROP_PERM,
	MATCH_DROP_UH_FULL,
	MATCH_DROP_EQ_FULL,
};

#define MATCH_STAT(f) (offsetof(struct ptl_nic_stats, f) / sizeof(uint64_t))
#define MATCH_NO_STAT UINT8_MAX
#define MATCH_NO_SR UINT8_MAX

static const struct match_drop_info {
	uint8_t stat;       /* index in struct ptl_nic_stats, or none */
	uint8_t sr;         /* status register besides DROP_COUNT, or none */
	uint8_t fail;
	int err;
	int flow_err;       /* 0: flow control does not apply */
	uint8_t flow_stat;  /* counted as well when it does */
} match_drops[] = {
	[MATCH_DROP_BAD_HDR] = { MATCH_STAT(drop_no_target), MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -EINVAL, 0, MATCH_NO_STAT },
	[MATCH_DROP_NO_TARGET] = { MATCH_STAT(drop_no_target), MATCH_NO_SR,
		SPINNIC_PTL_NI_UNDELIVERABLE, -ESRCH, 0, MATCH_NO_STAT },
	[MATCH_DROP_BAD_PT] = { MATCH_STAT(drop_bad_pt), MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -EINVAL, 0, MATCH_NO_STAT },
	/* longer than the target NI's max_msg_size (its limits) */
	[MATCH_DROP_TOO_LONG] = { MATCH_STAT(drop_too_long), MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -EMSGSIZE, 0, MATCH_NO_STAT },
	[MATCH_DROP_PT_DISABLED] = { MATCH_STAT(drop_pt_disabled),
		MATCH_NO_SR, SPINNIC_PTL_NI_PT_DISABLED, -EAGAIN, 0,
		MATCH_NO_STAT },
	[MATCH_DROP_NO_MATCH] = { MATCH_STAT(drop_no_match), MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -ENOENT, -EAGAIN, MATCH_NO_STAT },
	[MATCH_DROP_OP] = { MATCH_STAT(drop_op),
		SPINNIC_PTL_SR_OPERATION_VIOLATIONS,
		SPINNIC_PTL_NI_OP_VIOLATION, -EPERM, 0, MATCH_NO_STAT },
	[MATCH_DROP_PERM] = { MATCH_STAT(drop_perm),
		SPINNIC_PTL_SR_PERMISSION_VIOLATIONS,
		SPINNIC_PTL_NI_PERM_VIOLATION, -EACCES, 0, MATCH_NO_STAT },
	[MATCH_DROP_UH_FULL] = { MATCH_STAT(drop_uh_full), MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -ENOSPC, -ENOSPC,
		MATCH_STAT(drop_pt_disabled) },
	/* only checked on a flow-controlled PT */
	[MATCH_DROP_EQ_FULL] = { MATCH_NO_STAT, MATCH_NO_SR,
		SPINNIC_PTL_NI_DROPPED, -EAGAIN, -EAGAIN,
		MATCH_STAT(drop_pt_disabled) },
};

static void
match_count(struct ptl_nic *nic, uint8_t stat)
{
	if (stat != MATCH_NO_STAT)
		__atomic_fetch_add((uint64_t *)&nic->stats + stat, 1,
				   __ATOMIC_RELAXED);
}

/* a free slot; the caller checked uh_used < n_uh */
static uint32_t
uh_alloc(struct ptl_ni *ni)
{
	uint32_t i, u = ni->uh_hint;

	for (i = 0; i < ni->n_uh; i++, u++) {
		if (u >= ni->n_uh)
			u = 0;
		if (!ni->uhs[u].used) {
			ni->uh_hint = u + 1;
			return u;
		}
	}
	return PTL_NIL;
}

static uint64_t
match_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The NIC's time for a message, from its match to now, for the target
 * event (spinnic_event.nic_ns): saturated at UINT32_MAX, at least 1 (0
 * means none). */
static uint32_t
match_nic_ns(const struct ptl_match *mt)
{
	uint64_t now = match_now_ns();
	uint64_t d = now > mt->t0_ns ? now - mt->t0_ns : 1;

	return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

int
ptl_nic_match(struct ptl_nic *nic, const struct spinnic_pkt *hdr,
	      struct ptl_match *mt)
{
	const struct match_drop_info *d;
	bool matching, overflow, keep_uh;
	unsigned owed = 0;
	uint64_t loff = 0, mlen = 0;
	struct ptl_client *c;
	struct ptl_ni *ni = NULL;
	struct ptl_pt *pt = NULL;
	struct ptl_me *me = NULL;
	enum match_drop why;
	uint32_t s = PTL_NIL;
	unsigned kind, l;
	uint8_t fail;
	int rc;

	memset(mt, 0, sizeof(*mt));
	mt->t0_ns = match_now_ns();
	/* Any packet of a message may arrive first: each carries the header. */
	if (!(hdr->type == SPINNIC_WIRE_T_DATA ||
	      hdr->type == SPINNIC_WIRE_T_GET) ||
	    hdr->op == 0 || hdr->op >= SPINNIC_WIRE_OP_MAX ||
	    hdr->ni >= SPINNIC_WIRE_NI_KINDS) {
		d = &match_drops[MATCH_DROP_BAD_HDR];
		fail = d->fail;
		rc = d->err;
		goto out_drop;
	}
	ptl_lock(&nic->lock);
	kind = hdr->ni;
	c = hdr->dst.nid == nic->conf.nid &&
	    hdr->dst.pid < nic->conf.max_clients ?
	    nic->clients[hdr->dst.pid] : NULL;
	if (c == NULL || !ptl_client_is_alive(c) || !c->ni[kind].active) {
		why = MATCH_DROP_NO_TARGET;
		goto drop;
	}
	ni = &c->ni[kind];
	matching = !(kind & SPINNIC_WIRE_NI_NO_MATCHING);
	if (hdr->pt_index >= ni->n_pt || !ni->pts[hdr->pt_index].used) {
		why = MATCH_DROP_BAD_PT;
		goto drop;
	}
	pt = &ni->pts[hdr->pt_index];
	if (hdr->msg_len > ni->lim.max_msg_size) {
		why = MATCH_DROP_TOO_LONG;
		goto drop;
	}
	if (!pt->enabled) {
		why = MATCH_DROP_PT_DISABLED;
		goto drop;
	}

	/* priority list, then overflow list; first acceptable entry wins */
	for (l = 0; l < 2 && me == NULL; l++) {
		for (s = pt->list_head[l]; s != PTL_NIL; s = ni->mes[s].next) {
			if (ptl_me_accepts(&ni->mes[s], matching, &hdr->src,
					   hdr->match_bits, hdr->msg_len,
					   hdr->remote_offset, &loff, &mlen)) {
				me = &ni->mes[s];
				break;
			}
		}
	}
	if (me == NULL) {
		why = MATCH_DROP_NO_MATCH;
		goto drop;
	}
	overflow = me->list == SPINNIC_PTL_OVERFLOW_LIST;
	rc = ptl_me_check_perms(me, hdr->op, hdr->uid);
	if (rc < 0) {
		why = rc == -EPERM ? MATCH_DROP_OP : MATCH_DROP_PERM;
		goto drop;
	}
	keep_uh = overflow &&
		  !(me->options & SPINNIC_PTL_ME_UNEXPECTED_HDR_DISABLE);
	if (keep_uh && ni->uh_used >= ni->n_uh) {
		why = MATCH_DROP_UH_FULL;
		goto drop;
	}
	/* flow control: the room for its events is taken now (posted when
	 * it completes: the comm event, an AUTO_UNLINK it may cause) */
	if (pt->options & SPINNIC_PTL_PT_FLOWCTRL) {
		if (!(me->options & SPINNIC_PTL_ME_EVENT_COMM_DISABLE))
			owed++;
		if (((me->options & SPINNIC_PTL_ME_USE_ONCE) ||
		     ((me->options & SPINNIC_PTL_ME_MANAGE_LOCAL) &&
		      me->min_free)) &&
		    !(me->options & SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE))
			owed++;
		rc = ptl_eq_reserve(c, pt->eq, owed);
		if (rc < 0) {
			if (rc == -EAGAIN)
				PTL_STAT(nic, flowctrl_owed);
			why = MATCH_DROP_EQ_FULL;
			goto drop;
		}
	}

	/* matched: fill the self-contained result */
	ptl_client_get(c);
	mt->c = c;
	mt->ni = ptl_handle(kind, PTL_HT_NI, 0, 0);
	mt->me = ptl_handle(kind, PTL_HT_ME, me->gen, s);
	mt->me_slot = s;
	mt->pt_index = hdr->pt_index;
	mt->list = me->list;
	mt->eq = pt->eq;
	mt->ct = me->ct;
	mt->ctx = me->ctx;
	mt->options = me->options;
	mt->user_ptr = me->user_ptr;
	mt->me_start = me->start;
	mt->me_length = me->length;
	mt->local_offset = loff;
	/* an iovec entry: data through its entries at local_offset, the
	 * events' start is the array's address (doc/NOTES.md) */
	mt->iov = me->iov;
	ptl_iovs_get(mt->iov);
	mt->start = me->iov != NULL ? me->start :
		me->start + (loff < me->length ? loff : me->length);
	mt->length = loff < me->length ? me->length - loff : 0;
	mt->rlength = hdr->msg_len;
	mt->mlength = mlen;
	mt->initiator = hdr->src;
	mt->uid = hdr->uid;
	mt->match_bits = hdr->match_bits;
	mt->hdr_data = hdr->hdr_data;
	mt->remote_offset = hdr->remote_offset;
	mt->msg_id = hdr->msg_id;
	mt->op = hdr->op;
	mt->ack_req = (hdr->op != SPINNIC_WIRE_OP_GET &&
		      !(me->options & SPINNIC_PTL_ME_ACK_DISABLE)) ?
		     hdr->ack_req : SPINNIC_PTL_NO_ACK_REQ;
	mt->ni_fail = SPINNIC_PTL_NI_OK;
	mt->atomic_op = hdr->atomic_op;
	mt->atomic_type = hdr->atomic_type;
	mt->eq_owed = (uint8_t)owed;
	if (mlen < hdr->msg_len)
		PTL_STAT(nic, truncated);

	if (me->options & SPINNIC_PTL_ME_MANAGE_LOCAL)
		me->offset = loff + mlen;
	if ((me->options & SPINNIC_PTL_ME_USE_ONCE) ||
	    ((me->options & SPINNIC_PTL_ME_MANAGE_LOCAL) && me->min_free &&
	     me->length - me->offset < me->min_free)) {
		ptl_me_list_remove(ni, pt, s);
		me->auto_unlinked = true;
		mt->unlinked = 1;
		PTL_STAT(nic, auto_unlink);
	}
	me->refs++;
	me->inflight++;

	if (keep_uh) {
		uint32_t u = uh_alloc(ni);
		struct ptl_uh *uh = &ni->uhs[u];

		/* uh_used < n_uh was checked above */
		uh->used = true;
		uh->complete = false;
		uh->claimed = false;
		uh->op = hdr->op;
		uh->fail = SPINNIC_PTL_NI_OK;
		uh->me_slot = s;
		uh->pt_index = hdr->pt_index;
		uh->initiator = hdr->src;
		uh->uid = hdr->uid;
		uh->match_bits = hdr->match_bits;
		uh->hdr_data = hdr->hdr_data;
		uh->rlength = hdr->msg_len;
		uh->mlength = mlen;
		uh->remote_offset = loff;
		uh->start = mt->start;
		uh->next = PTL_NIL;
		uh->prev = pt->uh_tail;
		if (pt->uh_tail != PTL_NIL)
			ni->uhs[pt->uh_tail].next = u;
		else
			pt->uh_head = u;
		pt->uh_tail = u;
		ni->uh_used++;
		me->refs++;
		mt->uh = UH_REF(u, uh->gen);
		PTL_STAT(nic, uh_stored);
	}
	ptl_unlock(&nic->lock);
	if (overflow)
		PTL_STAT(nic, match_overflow);
	else
		PTL_STAT(nic, match_priority);
	return 0;

drop:
	/* the one exit of a dropped message: count the reason, unlock */
	d = &match_drops[why];
	fail = d->fail;
	rc = d->err;
	if (ni != NULL) {
		ni->sr[SPINNIC_PTL_SR_DROP_COUNT]++;
		if (d->sr != MATCH_NO_SR)
			ni->sr[d->sr]++;
	}
	if (d->flow_err != 0 && (pt->options & SPINNIC_PTL_PT_FLOWCTRL)) {
		ptl_pt_disable_flowctrl(c, kind, pt, hdr->pt_index);
		fail = SPINNIC_PTL_NI_PT_DISABLED;
		rc = d->flow_err;
		match_count(nic, d->flow_stat);
	}
	ptl_unlock(&nic->lock);
out_drop:
	match_count(nic, d->stat);
	mt->ni_fail = fail;
	return rc;
}

/* nic->lock held: the unexpected header of a finished message */
static void
match_end_uh(struct ptl_client *c, unsigned kind, const struct ptl_match *mt,
	     uint8_t fail, bool deliver)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_uh *uh;
	uint32_t u = UH_SLOT(mt->uh);

	if (mt->uh == 0 || u >= ni->n_uh)
		return;
	uh = &ni->uhs[u];
	/* removed meanwhile (PT freed, searched and deleted) */
	if (!uh->used || uh->gen != UH_GEN(mt->uh))
		return;
	uh->complete = true;
	uh->fail = fail;
	if (!deliver || fail != SPINNIC_PTL_NI_OK) {
		ptl_uh_remove(c, kind, &ni->pts[uh->pt_index], u);
		return;
	}
	if (uh->claimed) {
		ptl_uh_deliver_claim(c, &ni->pts[uh->pt_index], uh->pt_index,
				     uh);
		ptl_uh_remove(c, kind, &ni->pts[uh->pt_index], u);
	}
}

static void
match_end_me(struct ptl_client *c, unsigned kind, const struct ptl_match *mt)
{
	struct ptl_ni *ni = &c->ni[kind];

	if (!ni->allocated || mt->me_slot >= ni->n_me)
		return;
	ni->mes[mt->me_slot].inflight--;
	ptl_me_put_ref(c, kind, mt->me_slot);
}

void
ptl_match_complete(struct ptl_nic *nic, struct ptl_match *mt, uint8_t ni_fail)
{
	struct ptl_client *c = mt->c;
	unsigned kind = ptl_handle_ni(mt->ni);
	bool ok = ni_fail == SPINNIC_PTL_NI_OK;
	struct spinnic_event ev;
	bool alive;

	if (c == NULL)
		return;
	mt->nic_ns = mt->t0_ns != 0 ? match_nic_ns(mt) : 0;
	/* the ME is released before its events: a client that reads the
	 * event may free what the ME held (its execution context: a
	 * use-once ME is gone by then) */
	ptl_lock(&nic->lock);
	match_end_me(c, kind, mt);
	ptl_unlock(&nic->lock);
	/* the events need only handles (checked by the writers): post them
	 * outside the NIC lock; an unexpected header's bookkeeping (and the
	 * PUT_OVERFLOW it may post) comes after, under it */
	alive = ptl_client_is_alive(c);
	if (alive) {
		if (!(mt->options & SPINNIC_PTL_ME_EVENT_COMM_DISABLE) &&
		    !(ok && (mt->options &
			     SPINNIC_PTL_ME_EVENT_SUCCESS_DISABLE))) {
			ptl_event_init(&ev, ptl_event_kind(mt->op, false),
				       ni_fail);
			ev.start = mt->start;
			ev.user_ptr = mt->user_ptr;
			ev.hdr_data = mt->hdr_data;
			ev.match_bits = mt->match_bits;
			ev.rlength = mt->rlength;
			ev.mlength = mt->mlength;
			ev.remote_offset = mt->local_offset;
			ev.initiator = mt->initiator;
			ev.uid = mt->uid;
			ev.pt_index = mt->pt_index;
			ev.atomic_op = mt->atomic_op;
			ev.atomic_type = mt->atomic_type;
			ev.list = (uint8_t)mt->list;
			ev.nic_ns = mt->nic_ns;
			ptl_eq_post(c, mt->eq, &ev);
		}
		if (mt->options & SPINNIC_PTL_ME_EVENT_CT_COMM)
			ptl_ct_inc(c, mt->ct,
				   ok ? ((mt->options &
					  SPINNIC_PTL_ME_EVENT_CT_BYTES) ?
					 mt->mlength : 1) : 0,
				   ok ? 0 : 1);
		if (mt->unlinked &&
		    !(mt->options & SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE)) {
			ptl_event_init(&ev, SPINNIC_PTL_EVENT_AUTO_UNLINK,
				       SPINNIC_PTL_NI_OK);
			ev.user_ptr = mt->user_ptr;
			ev.pt_index = mt->pt_index;
			ptl_eq_post(c, mt->eq, &ev);
		}
	} else {
		PTL_STAT(nic, inflight_dropped);
	}
	/* after the posts: the room was theirs until now */
	ptl_eq_unreserve(c, mt->eq, mt->eq_owed);
	mt->eq_owed = 0;
	ptl_lock(&nic->lock);
	match_end_uh(c, kind, mt, ni_fail, alive);
	ptl_unlock(&nic->lock);
	ptl_iovs_put(mt->iov);
	mt->iov = NULL;
	mt->c = NULL;
	ptl_client_put(c);
}

void
ptl_match_release(struct ptl_nic *nic, struct ptl_match *mt)
{
	struct ptl_client *c = mt->c;
	unsigned kind = ptl_handle_ni(mt->ni);

	if (c == NULL)
		return;
	ptl_lock(&nic->lock);
	match_end_uh(c, kind, mt, SPINNIC_PTL_NI_DROPPED, false);
	match_end_me(c, kind, mt);
	ptl_unlock(&nic->lock);
	ptl_eq_unreserve(c, mt->eq, mt->eq_owed);
	mt->eq_owed = 0;
	PTL_STAT(nic, inflight_dropped);
	ptl_iovs_put(mt->iov);
	mt->iov = NULL;
	mt->c = NULL;
	ptl_client_put(c);
}

/* ---- a match's data (doc/NOTES.md "iovec MDs and MEs") ---- */

int
ptl_match_access(const struct ptl_match *mt, uint64_t off, void *buf,
		 uint64_t len, bool write)
{
	if (mt->iov != NULL)
		return ptl_iov_access(mt->c, mt->iov->ent, mt->iov->n,
				      mt->local_offset + off, buf, len, write);
	return write ? ptl_host_write(mt->c, mt->start + off, buf, len) :
		       ptl_host_read(mt->c, mt->start + off, buf, len);
}

int
ptl_match_atomic(const struct ptl_match *mt, unsigned op, unsigned type,
		 const void *operand, const void *compare, uint64_t len,
		 void *fetch_out)
{
	const struct ptl_iovs *v = mt->iov;
	size_t esize = ptl_atomic_type_size(type);
	uint64_t off, done;
	unsigned i, pass;
	int rc;

	if (v == NULL)
		return ptl_host_atomic(mt->c, mt->start, op, type, operand,
				       compare, len, fetch_out);
	if (esize == 0 || len % esize != 0)
		return -EINVAL;
	/* pass 0 checks that no element straddles two entries (nothing
	 * applied then), pass 1 applies entry by entry */
	for (pass = 0; pass < 2; pass++) {
		off = mt->local_offset;
		done = 0;
		for (i = 0; i < v->n && done < len; i++) {
			uint64_t take;

			if (off >= v->ent[i].len) {
				off -= v->ent[i].len;
				continue;
			}
			take = v->ent[i].len - off < len - done ?
				v->ent[i].len - off : len - done;
			if (pass == 0 && take % esize != 0) {
				PTL_STAT(mt->c->nic, host_fault);
				return -EINVAL;
			}
			if (pass == 1) {
				rc = ptl_host_atomic(mt->c, v->ent[i].addr + off,
						     op, type,
						     (const uint8_t *)operand +
						     done, compare, take,
						     fetch_out == NULL ? NULL :
						     (uint8_t *)fetch_out + done);
				if (rc < 0)
					return rc;
			}
			done += take;
			off = 0;
		}
		if (done < len)
			return -ERANGE;
	}
	return 0;
}
