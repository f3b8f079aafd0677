/* SPDX-License-Identifier: BSD-3-Clause */
/* Match list entries: append (with the unexpected-header search), unlink,
 * PtlMESearch, list and reference bookkeeping, entries reserved for
 * triggered appends (linked or unlinked by ring commands). nic->lock held
 * throughout. */
#include "ptl_internal.h"

#define ME_OPTS ((SPINNIC_PTL_ME_LOCAL_INC_UH_RLENGTH << 1) - 1)

unsigned
ptl_event_kind(uint8_t wire_op, bool overflow)
{
	unsigned k;

	switch (wire_op) {
	case SPINNIC_WIRE_OP_GET:
		k = SPINNIC_PTL_EVENT_GET;
		break;
	case SPINNIC_WIRE_OP_ATOMIC:
		k = SPINNIC_PTL_EVENT_ATOMIC;
		break;
	case SPINNIC_WIRE_OP_FETCH_ATOMIC:
	case SPINNIC_WIRE_OP_SWAP:
		k = SPINNIC_PTL_EVENT_FETCH_ATOMIC;
		break;
	default:
		k = SPINNIC_PTL_EVENT_PUT;
		break;
	}
	return overflow ? k + 1 : k;
}

bool
ptl_me_accepts(const struct ptl_me *me, bool matching,
	       const struct spinnic_pid *src, uint64_t match_bits,
	       uint64_t rlength, uint64_t roff, uint64_t *loff_p,
	       uint64_t *mlen_p)
{
	uint64_t loff, avail;

	if (matching) {
		if ((me->match_bits ^ match_bits) & ~me->ignore_bits)
			return false;
		if (me->match_id.nid != SPINNIC_PTL_NID_ANY &&
		    me->match_id.nid != src->nid)
			return false;
		if (me->match_id.pid != SPINNIC_PTL_PID_ANY &&
		    me->match_id.pid != src->pid)
			return false;
	}
	loff = (me->options & SPINNIC_PTL_ME_MANAGE_LOCAL) ? me->offset : roff;
	avail = loff < me->length ? me->length - loff : 0;
	if (rlength > avail && (me->options & SPINNIC_PTL_ME_NO_TRUNCATE))
		return false;
	*loff_p = loff;
	*mlen_p = rlength < avail ? rlength : avail;
	return true;
}

static void
list_append(struct ptl_ni *ni, struct ptl_pt *pt, unsigned l, uint32_t s)
{
	struct ptl_me *me = &ni->mes[s];

	me->list = (uint8_t)l;
	me->prev = pt->list_tail[l];
	me->next = PTL_NIL;
	if (pt->list_tail[l] != PTL_NIL)
		ni->mes[pt->list_tail[l]].next = s;
	else
		pt->list_head[l] = s;
	pt->list_tail[l] = s;
	pt->list_len[l]++;
	me->linked = true;
}

void
ptl_me_list_remove(struct ptl_ni *ni, struct ptl_pt *pt, uint32_t s)
{
	struct ptl_me *me = &ni->mes[s];
	unsigned l = me->list;

	if (me->prev != PTL_NIL)
		ni->mes[me->prev].next = me->next;
	else
		pt->list_head[l] = me->next;
	if (me->next != PTL_NIL)
		ni->mes[me->next].prev = me->prev;
	else
		pt->list_tail[l] = me->prev;
	me->prev = me->next = PTL_NIL;
	pt->list_len[l]--;
	me->linked = false;
}

static void
me_free_slot(struct ptl_nic *nic, struct ptl_me *me)
{
	PTL_STAT_ADD(nic, mes_live, -1ull);
	me->used = false;
	me->linked = false;
	me->gen++;
	/* a match in flight keeps its own reference */
	ptl_iovs_put(me->iov);
	me->iov = NULL;
}

void
ptl_me_put_ref(struct ptl_client *c, unsigned kind, uint32_t slot)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_me *me = &ni->mes[slot];

	if (--me->refs != 0 || me->linked)
		return;
	/* an auto-unlinked overflow buffer is free again */
	if (me->auto_unlinked && me->list == SPINNIC_PTL_OVERFLOW_LIST &&
	    ni->active && me->pt_index < ni->n_pt &&
	    ni->pts[me->pt_index].used &&
	    !(me->options & SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE)) {
		struct spinnic_event ev;

		ptl_event_init(&ev, SPINNIC_PTL_EVENT_AUTO_FREE,
			       SPINNIC_PTL_NI_OK);
		ev.user_ptr = me->user_ptr;
		ev.pt_index = me->pt_index;
		ptl_eq_post(c, ni->pts[me->pt_index].eq, &ev);
	}
	me_free_slot(c->nic, me);
}

void
ptl_uh_remove(struct ptl_client *c, unsigned kind, struct ptl_pt *pt,
	      uint32_t u)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_uh *uh = &ni->uhs[u];

	if (uh->prev != PTL_NIL)
		ni->uhs[uh->prev].next = uh->next;
	else
		pt->uh_head = uh->next;
	if (uh->next != PTL_NIL)
		ni->uhs[uh->next].prev = uh->prev;
	else
		pt->uh_tail = uh->prev;
	uh->used = false;
	uh->gen++;
	ni->uh_used--;
	ptl_me_put_ref(c, kind, uh->me_slot);
}

/* PUT_OVERFLOW (or GET_/ATOMIC_OVERFLOW) for a claimed, complete uh. */
void
ptl_uh_deliver_claim(struct ptl_client *c, struct ptl_pt *pt,
		     uint32_t pt_index, const struct ptl_uh *u)
{
	struct spinnic_event ev;
	bool ok = u->fail == SPINNIC_PTL_NI_OK;

	if (!(u->claim_options & SPINNIC_PTL_ME_EVENT_OVER_DISABLE) &&
	    !(ok && (u->claim_options & SPINNIC_PTL_ME_EVENT_SUCCESS_DISABLE))) {
		ptl_event_init(&ev, ptl_event_kind(u->op, true), u->fail);
		ev.start = u->start;
		ev.user_ptr = u->claim_user_ptr;
		ev.hdr_data = u->hdr_data;
		ev.match_bits = u->match_bits;
		ev.rlength = u->rlength;
		ev.mlength = u->mlength;
		ev.remote_offset = u->remote_offset;
		ev.initiator = u->initiator;
		ev.uid = u->uid;
		ev.pt_index = pt_index;
		ptl_eq_post(c, pt->eq, &ev);
	}
	if (u->claim_options & SPINNIC_PTL_ME_EVENT_CT_OVERFLOW)
		ptl_ct_inc(c, u->claim_ct,
			   ok ? ((u->claim_options &
				  SPINNIC_PTL_ME_EVENT_CT_BYTES) ?
				 u->mlength : 1) : 0,
			   ok ? 0 : 1);
}

int
ptl_me_check_perms(const struct ptl_me *me, uint8_t wire_op, uint32_t uid)
{
	bool need_put = wire_op != SPINNIC_WIRE_OP_GET;
	bool need_get = wire_op == SPINNIC_WIRE_OP_GET ||
			wire_op == SPINNIC_WIRE_OP_FETCH_ATOMIC ||
			wire_op == SPINNIC_WIRE_OP_SWAP;

	if ((need_put && !(me->options & SPINNIC_PTL_ME_OP_PUT)) ||
	    (need_get && !(me->options & SPINNIC_PTL_ME_OP_GET)))
		return -EPERM;
	/* PTL_ME_AUTH_USE_JID: the field is a job id, and every process
	 * of spinnic has none (PTL_JID_NONE, 0): only JID_ANY and NONE let
	 * anyone in */
	if (me->options & SPINNIC_PTL_ME_AUTH_USE_JID)
		return me->uid == SPINNIC_PTL_UID_ANY || me->uid == 0 ? 0 :
			-EACCES;
	if (me->uid != SPINNIC_PTL_UID_ANY && me->uid != uid)
		return -EACCES;
	return 0;
}

/* The data is already placed: bits and ids decide (and, for an entry
 * that will take the message, its permissions; a search only looks). */
static bool
uh_matches(const struct ptl_me *spec, bool matching, const struct ptl_uh *u,
	   bool check_perms)
{
	uint64_t loff, mlen;

	return ptl_me_accepts(spec, matching, &u->initiator, u->match_bits, 0,
			      0, &loff, &mlen) &&
	       (!check_perms || ptl_me_permits(spec, u->op, u->uid));
}

static uint32_t
me_alloc(struct ptl_ni *ni)
{
	uint32_t i, s = ni->me_hint;

	for (i = 0; i < ni->n_me; i++, s++) {
		if (s >= ni->n_me)
			s = 0;
		if (!ni->mes[s].used) {
			ni->me_hint = s + 1;
			return s;
		}
	}
	return PTL_NIL;
}

static void
me_from_ctrl(struct ptl_me *me, const struct spinnic_ctrl_me *r)
{
	me->pt_index = r->pt_index;
	me->options = r->options;
	me->ct = r->ct;
	me->uid = r->uid;
	me->ctx = r->ctx;
	me->match_id = r->match_id;
	me->start = r->start;
	me->length = r->length;
	me->iov = NULL;
	me->offset = 0;
	me->min_free = r->min_free;
	me->match_bits = r->match_bits;
	me->ignore_bits = r->ignore_bits;
	me->user_ptr = r->user_ptr;
	me->refs = 0;
	me->inflight = 0;
	me->auto_unlinked = false;
	me->reserved = false;
	me->prev = me->next = PTL_NIL;
	me->tmpl = PTL_NONE;
	me->copied = false;
}

/* A found header counts on the searching entry's counter as its events
 * would: SEARCH_ONLY as a communication (PTL_ME_EVENT_CT_COMM),
 * SEARCH_DELETE as an overflow delivery (PTL_ME_EVENT_CT_OVERFLOW). */
static void
search_count(struct ptl_client *c, const struct ptl_me *spec, uint32_t op,
	     const struct ptl_uh *uh)
{
	uint32_t want = op == SPINNIC_PTL_SEARCH_DELETE ?
		SPINNIC_PTL_ME_EVENT_CT_OVERFLOW : SPINNIC_PTL_ME_EVENT_CT_COMM;
	bool ok = uh->fail == SPINNIC_PTL_NI_OK;

	if (spec->ct == PTL_NONE || !(spec->options & want))
		return;
	ptl_ct_inc(c, spec->ct,
		   ok ? ((spec->options & SPINNIC_PTL_ME_EVENT_CT_BYTES) ?
			 uh->mlength : 1) : 0, ok ? 0 : 1);
}

static int
me_search(struct ptl_client *c, unsigned kind, struct ptl_pt *pt,
	  const struct spinnic_ctrl_me *r)
{
	struct ptl_ni *ni = &c->ni[kind];
	bool matching = !(kind & SPINNIC_WIRE_NI_NO_MATCHING);
	struct spinnic_event ev;
	struct ptl_me spec;
	unsigned found = 0;
	uint32_t u, next;

	memset(&spec, 0, sizeof(spec));
	me_from_ctrl(&spec, r);
	for (u = pt->uh_head; u != PTL_NIL; u = next) {
		struct ptl_uh *uh = &ni->uhs[u];

		next = uh->next;
		if (uh->claimed || !uh->complete ||
		    !uh_matches(&spec, matching, uh, false))
			continue;
		/* SEARCH_ONLY reports it (SEARCH); SEARCH_DELETE consumes it
		 * as an append would (the overflow event of its op) */
		if (r->list == SPINNIC_PTL_SEARCH_DELETE)
			ptl_event_init(&ev, ptl_event_kind(uh->op, true),
				       uh->fail);
		else
			ptl_event_init(&ev, SPINNIC_PTL_EVENT_SEARCH,
				       SPINNIC_PTL_NI_OK);
		ev.start = uh->start;
		ev.user_ptr = r->user_ptr;
		ev.hdr_data = uh->hdr_data;
		ev.match_bits = uh->match_bits;
		ev.rlength = uh->rlength;
		ev.mlength = uh->mlength;
		ev.remote_offset = uh->remote_offset;
		ev.initiator = uh->initiator;
		ev.uid = uh->uid;
		ev.pt_index = r->pt_index;
		ev.list = SPINNIC_PTL_OVERFLOW_LIST;
		ptl_eq_post(c, pt->eq, &ev);
		search_count(c, &spec, r->list, uh);
		PTL_STAT(c->nic, uh_searched);
		found++;
		if (r->list == SPINNIC_PTL_SEARCH_DELETE)
			ptl_uh_remove(c, kind, pt, u);
		if (r->options & SPINNIC_PTL_ME_USE_ONCE)
			break;
	}
	if (found == 0) {
		ptl_event_init(&ev, SPINNIC_PTL_EVENT_SEARCH,
			       SPINNIC_PTL_NI_NO_MATCH);
		ev.user_ptr = r->user_ptr;
		ev.pt_index = r->pt_index;
		ptl_eq_post(c, pt->eq, &ev);
	}
	return SPINNIC_PTL_OK;
}

/* PTL_ME_LOCAL_INC_UH_RLENGTH on a locally managed entry: a claimed
 * unexpected header takes its rlength of the entry's room (without it,
 * the offset stays: the data lies in the overflow buffer). @return true
 * when the entry is full for its min_free (to be unlinked) */
static bool
me_claim_room(struct ptl_me *me, const struct ptl_uh *uh)
{
	const unsigned both = SPINNIC_PTL_ME_MANAGE_LOCAL |
		SPINNIC_PTL_ME_LOCAL_INC_UH_RLENGTH;

	if ((me->options & both) != both)
		return false;
	me->offset = uh->rlength > me->length - me->offset ? me->length :
		me->offset + uh->rlength;
	return me->min_free != 0 && me->length - me->offset < me->min_free;
}

/* Priority append: claim matching unexpected headers, oldest first.
 * Returns true when the ME is used up: a use-once ME consumed, or a
 * locally managed one out of room (me_claim_room; *full_p set). */
static bool
me_claim_unexpected(struct ptl_client *c, unsigned kind, struct ptl_pt *pt,
		    struct ptl_me *me, bool *full_p)
{
	struct ptl_ni *ni = &c->ni[kind];
	bool matching = !(kind & SPINNIC_WIRE_NI_NO_MATCHING);
	uint32_t u, next;
	bool any = false;

	for (u = pt->uh_head; u != PTL_NIL; u = next) {
		struct ptl_uh *uh = &ni->uhs[u];

		next = uh->next;
		if (uh->claimed || !uh_matches(me, matching, uh, true))
			continue;
		uh->claimed = true;
		uh->claim_ct = me->ct;
		uh->claim_options = me->options;
		uh->claim_user_ptr = me->user_ptr;
		PTL_STAT(c->nic, uh_claimed);
		any = true;
		*full_p = me_claim_room(me, uh);
		if (uh->complete) {
			ptl_uh_deliver_claim(c, pt, me->pt_index, uh);
			ptl_uh_remove(c, kind, pt, u);
		}
		if ((me->options & SPINNIC_PTL_ME_USE_ONCE) || *full_p)
			break;
	}
	return *full_p || (any && (me->options & SPINNIC_PTL_ME_USE_ONCE));
}

/* Link entry @p s (filled and used) as PtlMEAppend does: a priority
 * entry claims matching unexpected headers first; then the list's tail
 * and LINK (unless disabled). */
static void
me_link(struct ptl_client *c, unsigned kind, uint32_t s)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_me *me = &ni->mes[s];
	struct ptl_pt *pt = &ni->pts[me->pt_index];
	struct spinnic_event ev;
	bool full = false;

	if (me->list == SPINNIC_PTL_PRIORITY_LIST &&
	    me_claim_unexpected(c, kind, pt, me, &full)) {
		/* a use-once entry consumed by an unexpected message, or a
		 * locally managed one whose room they took: never linked */
		if (full && !(me->options &
			      SPINNIC_PTL_ME_EVENT_UNLINK_DISABLE)) {
			ptl_event_init(&ev, SPINNIC_PTL_EVENT_AUTO_UNLINK,
				       SPINNIC_PTL_NI_OK);
			ev.user_ptr = me->user_ptr;
			ev.pt_index = me->pt_index;
			ptl_eq_post(c, pt->eq, &ev);
		}
		me_free_slot(c->nic, me);
		return;
	}
	list_append(ni, pt, me->list, s);
	if (me->options & SPINNIC_PTL_ME_EVENT_LINK_DISABLE)
		return;
	ptl_event_init(&ev, SPINNIC_PTL_EVENT_LINK, SPINNIC_PTL_NI_OK);
	ev.user_ptr = me->user_ptr;
	ev.pt_index = me->pt_index;
	ptl_eq_post(c, pt->eq, &ev);
}

/* A reserved entry leaves that state: its place in the list is free */
static void
me_end_reserve(struct ptl_ni *ni, struct ptl_me *me)
{
	ni->pts[me->pt_index].reserved[me->list]--;
	me->reserved = false;
}

/* PtlMEAppend, or with SPINNIC_CTRL_F_ME_RESERVE the reservation of a
 * triggered append (linked later by a ring ME_APPEND) */
static int
me_append(struct ptl_client *c, unsigned kind, uint16_t flags,
	  struct spinnic_ctrl_me *r)
{
	struct ptl_ni *ni = &c->ni[kind];
	struct ptl_pt *pt = &ni->pts[r->pt_index];
	struct ptl_iovs *iov = NULL;
	struct ptl_me *me;
	uint32_t s;
	int rc;

	if ((r->list != SPINNIC_PTL_PRIORITY_LIST &&
	     r->list != SPINNIC_PTL_OVERFLOW_LIST) ||
	    (flags & ~SPINNIC_CTRL_F_ME_RESERVE) != 0)
		return SPINNIC_PTL_ARG_INVALID;
	if (r->ct != PTL_NONE && !ptl_ct_valid(ni, kind, r->ct))
		return SPINNIC_PTL_ARG_INVALID;
	/* PTL_PT_ONLY_USE_ONCE and PTL_PT_ONLY_TRUNCATE are hints (the
	 * specification: the NI may optimize for them); entries of either
	 * kind are taken on such a PT and behave as their own options say.
	 * A reserved entry holds its place in the list. */
	if (pt->list_len[r->list] + pt->reserved[r->list] >=
	    (uint32_t)ni->lim.max_list_size)
		return SPINNIC_PTL_LIST_TOO_LONG;
	if (r->options & SPINNIC_PTL_IOVEC) {
		/* handlers assume one contiguous window: no context on an
		 * iovec entry (doc/NOTES.md "iovec MDs and MEs") */
		if (r->ctx != PTL_NONE)
			return SPINNIC_PTL_ARG_INVALID;
		rc = ptl_iovs_load(c, r->start, r->length,
				   (uint32_t)ni->lim.max_iovecs, &iov);
		if (rc < 0) {
			PTL_DBG("ME append: iovec array refused (%d)", rc);
			return rc == -ENOMEM ? SPINNIC_PTL_NO_SPACE :
					       SPINNIC_PTL_ARG_INVALID;
		}
	}
	s = me_alloc(ni);
	if (s == PTL_NIL) {
		ptl_iovs_put(iov);
		return SPINNIC_PTL_NO_SPACE;
	}
	me = &ni->mes[s];
	me_from_ctrl(me, r);
	if (iov != NULL) {
		me->iov = iov;
		me->length = iov->total;
	}
	me->used = true;
	PTL_STAT(c->nic, mes_live);
	me->linked = false;
	me->list = (uint8_t)r->list;
	r->me = ptl_handle(kind, PTL_HT_ME, me->gen, s);
	if (flags & SPINNIC_CTRL_F_ME_RESERVE) {
		me->reserved = true;
		pt->reserved[r->list]++;
		return SPINNIC_PTL_OK;
	}
	me_link(c, kind, s);
	return SPINNIC_PTL_OK;
}

/* Template @p h (a persistent triggered append's reserved entry) goes:
 * its copies still linked leave their lists, as ptl_me_unlink_now */
static void
me_unlink_copies(struct ptl_client *c, struct ptl_ni *ni, uint32_t h)
{
	uint32_t s;

	for (s = 0; s < ni->n_me; s++) {
		struct ptl_me *me = &ni->mes[s];

		if (!me->used || !me->linked || me->tmpl != h)
			continue;
		ptl_me_list_remove(ni, &ni->pts[me->pt_index], s);
		if (me->refs == 0)
			me_free_slot(c->nic, me);
	}
}

/* The name copies of template @p t (slot of handle @p h) record: its
 * handle as the NIC makes it, whatever bits the caller's had */
static uint32_t
me_tmpl_id(const struct ptl_me *t, uint32_t h)
{
	return ptl_handle(ptl_handle_ni(h), PTL_HT_ME, t->gen,
			  ptl_handle_idx(h));
}

/* A reserved entry @p h ends without being linked (unlink, cancel):
 * its copies too */
static void
me_drop_reserved(struct ptl_client *c, struct ptl_ni *ni, struct ptl_me *me,
		 uint32_t h)
{
	bool copied = me->copied;
	uint32_t id = me_tmpl_id(me, h);

	me_end_reserve(ni, me);
	me_free_slot(c->nic, me);
	if (copied)
		me_unlink_copies(c, ni, id);
}

/* PtlMEUnlink; of a reserved entry, it cancels the append */
static int
me_unlink(struct ptl_client *c, const struct spinnic_ctrl_me *r)
{
	struct ptl_ni *ni;
	struct ptl_me *me = ptl_me_get(c, r->me, &ni);

	if (me != NULL && me->reserved) {
		me_drop_reserved(c, ni, me, r->me);
		return SPINNIC_PTL_OK;
	}
	if (me == NULL || !me->linked)
		return SPINNIC_PTL_ARG_INVALID;
	if (me->inflight != 0)
		return SPINNIC_PTL_IN_USE;
	ptl_me_list_remove(ni, &ni->pts[me->pt_index], ptl_handle_idx(r->me));
	if (me->refs == 0)
		me_free_slot(c->nic, me);
	return SPINNIC_PTL_OK;
}

int
ptl_ctrl_me(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    uint16_t flags, struct spinnic_ctrl_me *r)
{
	struct ptl_ni *ni;
	unsigned kind;

	(void)nic;
	if (op == SPINNIC_CTRL_ME_UNLINK)
		return me_unlink(c, r);
	ni = ptl_ni_get(c, r->ni);
	kind = ptl_handle_ni(r->ni);
	if (ni == NULL || r->pt_index >= ni->n_pt ||
	    !ni->pts[r->pt_index].used ||
	    (r->options & ~(ME_OPTS | (op == SPINNIC_CTRL_ME_APPEND ?
				      SPINNIC_PTL_IOVEC : 0))) ||
	    r->start + r->length < r->start)
		return SPINNIC_PTL_ARG_INVALID;
	if (op == SPINNIC_CTRL_ME_APPEND)
		return me_append(c, kind, flags, r);
	if ((r->list != SPINNIC_PTL_SEARCH_ONLY &&
	     r->list != SPINNIC_PTL_SEARCH_DELETE) ||
	    (r->ct != PTL_NONE && !ptl_ct_valid(ni, kind, r->ct)))
		return SPINNIC_PTL_ARG_INVALID;
	r->me = PTL_NONE;
	return me_search(c, kind, &ni->pts[r->pt_index], r);
}

int
ptl_me_link_reserved(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni;
	struct ptl_me *me = ptl_me_get(c, h, &ni);

	if (me == NULL || !me->reserved)
		return -ENOENT;
	me_end_reserve(ni, me);
	me_link(c, ptl_handle_ni(h), ptl_handle_idx(h));
	return 0;
}

int
ptl_me_link_copy(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni;
	struct ptl_me *t = ptl_me_get(c, h, &ni), *me;
	struct ptl_pt *pt;
	uint32_t s;
	uint8_t gen;

	if (t == NULL || !t->reserved)
		return -ENOENT;
	/* the template keeps its own place: a copy takes one more */
	pt = &ni->pts[t->pt_index];
	if (pt->list_len[t->list] + pt->reserved[t->list] >=
	    (uint32_t)ni->lim.max_list_size)
		return -ENOSPC;
	s = me_alloc(ni);
	if (s == PTL_NIL)
		return -ENOSPC;
	me = &ni->mes[s];
	gen = me->gen;
	*me = *t;
	me->gen = gen;
	me->reserved = false;
	me->linked = false;
	me->auto_unlinked = false;
	me->offset = 0;
	me->refs = 0;
	me->inflight = 0;
	me->prev = me->next = PTL_NIL;
	me->tmpl = me_tmpl_id(t, h);
	me->copied = false;
	ptl_iovs_get(me->iov);
	t->copied = true;
	PTL_STAT(c->nic, mes_live);
	me_link(c, ptl_handle_ni(h), s);
	return 0;
}

int
ptl_me_unlink_now(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni;
	struct ptl_me *me = ptl_me_get(c, h, &ni);

	if (me != NULL && me->reserved) {
		me_drop_reserved(c, ni, me, h);
		return 0;
	}
	if (me == NULL || !me->linked)
		return -ENOENT;
	/* no new matches; messages in flight keep the slot until they end
	 * (ptl_me_put_ref), as for a use-once entry */
	ptl_me_list_remove(ni, &ni->pts[me->pt_index], ptl_handle_idx(h));
	if (me->refs == 0)
		me_free_slot(c->nic, me);
	return 0;
}

void
ptl_me_unreserve(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni;
	struct ptl_me *me = ptl_me_get(c, h, &ni);

	if (me == NULL || !me->reserved)
		return;
	me_drop_reserved(c, ni, me, h);
}

void
ptl_me_unreserve_all(struct ptl_client *c, unsigned kind)
{
	struct ptl_ni *ni = &c->ni[kind];
	uint32_t s;

	for (s = 0; s < ni->n_me; s++) {
		if (!ni->mes[s].used || !ni->mes[s].reserved)
			continue;
		me_end_reserve(ni, &ni->mes[s]);
		me_free_slot(c->nic, &ni->mes[s]);
	}
}

bool
ptl_nic_ctx_in_use(struct ptl_nic *nic, struct ptl_client *c, uint32_t ctx)
{
	bool used = false;
	unsigned k;
	uint32_t s;

	if (ctx == PTL_NONE)
		return false;
	ptl_lock(&nic->lock);
	for (k = 0; k < SPINNIC_WIRE_NI_KINDS && !used; k++) {
		struct ptl_ni *ni = &c->ni[k];

		if (!ni->allocated)
			continue;
		for (s = 0; s < ni->n_me; s++) {
			if (ni->mes[s].used && ni->mes[s].ctx == ctx) {
				used = true;
				break;
			}
		}
	}
	ptl_unlock(&nic->lock);
	return used;
}
