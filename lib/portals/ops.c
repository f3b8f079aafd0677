/* SPDX-License-Identifier: BSD-3-Clause */
/* Initiator-side operation table: message ids, SEND/ACK/REPLY events.
 * A message id is (tag << 24 | slot): O(1) lookup. The tag is a keyed mix
 * of a per-node sequence number, so a blind sender cannot guess the id
 * of an operation in flight (to end it with a forged ACK or REPLY). */
#include <stdlib.h>

#include "ptl_internal.h"

static struct ptl_op *
op_find(struct ptl_nic *nic, uint64_t msg_id)
{
	uint64_t slot = msg_id & PTL_OP_SLOT_MASK;

	if (msg_id == 0 || slot >= nic->conf.max_ops ||
	    nic->ops[slot].msg_id != msg_id)
		return NULL;
	return &nic->ops[slot];
}

/* The 40-bit tag of operation number @p seq (splitmix64 of key + seq). */
static uint64_t
op_tag(const struct ptl_nic *nic, uint64_t seq)
{
	uint64_t z = nic->op_key + seq * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z >> PTL_OP_SLOT_BITS;
}

/* op_lock held: free the slot; the caller drops the client reference */
static void
op_free(struct ptl_nic *nic, struct ptl_op *op)
{
	op->msg_id = 0;
	op->c = NULL;
	nic->op_free[nic->op_nfree++] = (uint32_t)(op - nic->ops);
}

int
ptl_op_start(struct ptl_client *c, const struct ptl_cmd *cmd,
	     uint64_t *msg_id_p)
{
	struct ptl_nic *nic = c->nic;
	struct ptl_op *op;
	uint32_t slot;

	if (!ptl_client_is_alive(c))
		return -ESHUTDOWN;
	ptl_lock(&nic->op_lock);
	if (nic->op_nfree == 0) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, ops_full);
		return -ENOSPC;
	}
	slot = nic->op_free[--nic->op_nfree];
	op = &nic->ops[slot];
	memset(op, 0, sizeof(*op));
	op->msg_id = (op_tag(nic, nic->op_seq++) << PTL_OP_SLOT_BITS) | slot;
	if (op->msg_id == 0)
		op->msg_id = (op_tag(nic, nic->op_seq++) | 1) <<
			PTL_OP_SLOT_BITS;
	op->c = c;
	op->cmd = *cmd;
	ptl_client_get(c);
	*msg_id_p = op->msg_id;
	ptl_unlock(&nic->op_lock);
	PTL_STAT(nic, ops_started);
	return 0;
}

static uint64_t
ct_amount(uint32_t md_options, uint64_t bytes)
{
	return (md_options & SPINNIC_PTL_MD_EVENT_CT_BYTES) ? bytes : 1;
}

static void
op_event(struct ptl_client *c, const struct ptl_cmd *cmd, unsigned type,
	 uint8_t fail, uint64_t mlength, uint8_t list)
{
	struct spinnic_event ev;

	ptl_event_init(&ev, type, fail);
	ev.start = cmd->local_addr;
	ev.user_ptr = cmd->user_ptr;
	ev.hdr_data = cmd->hdr_data;
	ev.match_bits = cmd->match_bits;
	ev.rlength = cmd->length;
	ev.mlength = mlength;
	ev.remote_offset = cmd->remote_offset;
	ev.initiator = cmd->target;
	ev.uid = cmd->uid;
	ev.pt_index = cmd->pt_index;
	ev.list = list;
	ptl_eq_post(c, cmd->eq, &ev);
}

static void
post_send(struct ptl_client *c, const struct ptl_cmd *cmd, uint8_t fail)
{
	bool ok = fail == SPINNIC_PTL_NI_OK;

	if (!(cmd->md_options & SPINNIC_PTL_MD_EVENT_SEND_DISABLE) &&
	    !(ok && (cmd->md_options & SPINNIC_PTL_MD_EVENT_SUCCESS_DISABLE)))
		op_event(c, cmd, SPINNIC_PTL_EVENT_SEND, fail, cmd->length,
			 SPINNIC_PTL_PRIORITY_LIST);
	if (cmd->md_options & SPINNIC_PTL_MD_EVENT_CT_SEND)
		ptl_ct_inc(c, cmd->ct,
			   ok ? ct_amount(cmd->md_options, cmd->length) : 0,
			   ok ? 0 : 1);
}

static void
post_ack(struct ptl_client *c, const struct ptl_cmd *cmd, uint8_t fail,
	 uint64_t mlength, uint8_t list)
{
	bool ok = fail == SPINNIC_PTL_NI_OK;

	if (cmd->ack_req != SPINNIC_PTL_CT_ACK_REQ &&
	    !(ok && (cmd->md_options & SPINNIC_PTL_MD_EVENT_SUCCESS_DISABLE)))
		op_event(c, cmd, SPINNIC_PTL_EVENT_ACK, fail, mlength, list);
	/* counted only where the MD asked for it, whatever ack was
	 * requested (PTL_CT_ACK_REQ only spares the full event) */
	if (cmd->md_options & SPINNIC_PTL_MD_EVENT_CT_ACK)
		ptl_ct_inc(c, cmd->ct,
			   ok ? ct_amount(cmd->md_options, mlength) : 0,
			   ok ? 0 : 1);
}

static void
post_reply(struct ptl_client *c, const struct ptl_cmd *cmd, uint8_t fail,
	   uint64_t mlength)
{
	bool ok = fail == SPINNIC_PTL_NI_OK;

	if (!(ok && (cmd->md_options & SPINNIC_PTL_MD_EVENT_SUCCESS_DISABLE)))
		op_event(c, cmd, SPINNIC_PTL_EVENT_REPLY, fail, mlength,
			 SPINNIC_PTL_PRIORITY_LIST);
	if (cmd->md_options & SPINNIC_PTL_MD_EVENT_CT_REPLY)
		ptl_ct_inc(c, cmd->ct, ok ? ct_amount(cmd->md_options,
						      mlength) : 0,
			   ok ? 0 : 1);
}

/* A put or an atomic without reply: SEND, then ACK if one was asked for. */
static bool
put_like(uint16_t op)
{
	return op == SPINNIC_CMD_PUT || op == SPINNIC_CMD_ATOMIC;
}

/* The REPLY of a fetching atomic goes to its get MD: @p cmd seen from
 * there. */
static struct ptl_cmd
reply_view(const struct ptl_cmd *cmd)
{
	struct ptl_cmd r = *cmd;

	if (ptl_cmd_fetches(cmd->op)) {
		r.md = cmd->get_md;
		r.md_options = cmd->get_md_options;
		r.eq = cmd->get_eq;
		r.ct = cmd->get_ct;
		r.local_addr = cmd->get_addr;
		r.local_offset = cmd->get_offset;
	}
	return r;
}

int
ptl_op_sent(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail)
{
	struct ptl_client *c;
	struct ptl_cmd cmd;
	struct ptl_op *op;
	bool end, acked = false;
	uint8_t ack_fail = 0, ack_list;
	uint64_t ack_mlength = 0;

	ptl_lock(&nic->op_lock);
	op = op_find(nic, msg_id);
	if (op == NULL || op->sent) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, ops_unknown);
		return -ENOENT;
	}
	op->sent = true;
	c = op->c;
	cmd = op->cmd;
	/* an ack, or a fetching atomic's reply, may have come first */
	acked = op->acked;
	ack_fail = op->ack_fail;
	ack_mlength = op->ack_mlength;
	ack_list = op->ack_list;
	if (put_like(cmd.op))
		end = acked || ni_fail != SPINNIC_PTL_NI_OK ||
		      cmd.ack_req == SPINNIC_PTL_NO_ACK_REQ;
	else if (ptl_cmd_fetches(cmd.op))
		end = acked || ni_fail != SPINNIC_PTL_NI_OK;
	else
		end = ni_fail != SPINNIC_PTL_NI_OK;
	if (end)
		op_free(nic, op);
	ptl_unlock(&nic->op_lock);

	if (put_like(cmd.op)) {
		post_send(c, &cmd, ni_fail);
		if (acked)
			post_ack(c, &cmd, ack_fail, ack_mlength, ack_list);
	} else if (ptl_cmd_fetches(cmd.op)) {
		struct ptl_cmd r = reply_view(&cmd);

		post_send(c, &cmd, ni_fail);
		if (acked)
			post_reply(c, &r, ack_fail, ack_mlength);
		else if (ni_fail != SPINNIC_PTL_NI_OK)
			post_reply(c, &r, ni_fail, 0);
	} else if (ni_fail != SPINNIC_PTL_NI_OK) {
		post_reply(c, &cmd, ni_fail, 0);
	}
	if (end)
		ptl_client_put(c);
	return 0;
}

int
ptl_op_ack(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail,
	   uint64_t mlength, uint8_t list)
{
	struct ptl_client *c;
	struct ptl_cmd cmd;
	struct ptl_op *op;

	ptl_lock(&nic->op_lock);
	op = op_find(nic, msg_id);
	if (op == NULL || !put_like(op->cmd.op) || op->acked ||
	    op->cmd.ack_req == SPINNIC_PTL_NO_ACK_REQ) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, ops_unknown);
		return -ENOENT;
	}
	if (!op->sent) {
		/* SEND comes first: keep the ack for ptl_op_sent */
		op->acked = true;
		op->ack_fail = ni_fail;
		op->ack_mlength = mlength;
		op->ack_list = list;
		ptl_unlock(&nic->op_lock);
		return 0;
	}
	c = op->c;
	cmd = op->cmd;
	op_free(nic, op);
	ptl_unlock(&nic->op_lock);
	post_ack(c, &cmd, ni_fail, mlength, list);
	ptl_client_put(c);
	return 0;
}

/* ptl_op_reply, and where the MD is an iovec one: its handle and the
 * offset in its logical bytes (*md_p PTL_NONE: contiguous, *addr_p) */
static int
op_reply_dst(struct ptl_nic *nic, uint64_t msg_id, uint64_t offset,
	     uint64_t len, struct ptl_client **c_p, uint64_t *addr_p,
	     uint32_t *md_p, uint64_t *md_off_p)
{
	struct ptl_op *op;
	struct ptl_cmd r;

	ptl_lock(&nic->op_lock);
	op = op_find(nic, msg_id);
	if (op == NULL || (op->cmd.op != SPINNIC_CMD_GET &&
			   !ptl_cmd_fetches(op->cmd.op)) || op->acked) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, ops_unknown);
		return -ENOENT;
	}
	if (!ptl_range_ok(offset, len, op->cmd.length)) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, reply_oob);
		return -ERANGE;
	}
	ptl_client_get(op->c);
	*c_p = op->c;
	r = reply_view(&op->cmd);
	*addr_p = r.local_addr + offset;
	*md_p = (r.md_options & SPINNIC_PTL_IOVEC) ? r.md : PTL_NONE;
	*md_off_p = r.local_offset + offset;
	ptl_unlock(&nic->op_lock);
	return 0;
}

int
ptl_op_reply(struct ptl_nic *nic, uint64_t msg_id, uint64_t offset,
	     uint64_t len, struct ptl_client **c_p, uint64_t *addr_p)
{
	uint32_t md;
	uint64_t md_off;

	return op_reply_dst(nic, msg_id, offset, len, c_p, addr_p, &md,
			    &md_off);
}

int
ptl_op_reply_write(struct ptl_nic *nic, uint64_t msg_id, uint64_t offset,
		   const void *src, uint64_t len)
{
	struct ptl_client *c;
	uint64_t addr, md_off;
	uint32_t md;
	int rc;

	rc = op_reply_dst(nic, msg_id, offset, len, &c, &addr, &md, &md_off);
	if (rc != 0)
		return rc;
	rc = md == PTL_NONE ? ptl_host_write(c, addr, src, len) :
		ptl_md_access(c, md, md_off, (void *)(uintptr_t)src, len,
			      true);
	ptl_client_put(c);
	return rc;
}

int
ptl_op_reply_done(struct ptl_nic *nic, uint64_t msg_id, uint8_t ni_fail,
		  uint64_t mlength)
{
	struct ptl_client *c;
	struct ptl_cmd cmd;
	struct ptl_op *op;

	ptl_lock(&nic->op_lock);
	op = op_find(nic, msg_id);
	if (op == NULL || (op->cmd.op != SPINNIC_CMD_GET &&
			   !ptl_cmd_fetches(op->cmd.op)) || op->acked) {
		ptl_unlock(&nic->op_lock);
		PTL_STAT(nic, ops_unknown);
		return -ENOENT;
	}
	if (ptl_cmd_fetches(op->cmd.op) && !op->sent) {
		/* SEND comes first: keep the reply for ptl_op_sent */
		op->acked = true;
		op->ack_fail = ni_fail;
		op->ack_mlength = mlength;
		ptl_unlock(&nic->op_lock);
		return 0;
	}
	c = op->c;
	cmd = reply_view(&op->cmd);
	op_free(nic, op);
	ptl_unlock(&nic->op_lock);
	post_reply(c, &cmd, ni_fail, mlength);
	ptl_client_put(c);
	return 0;
}

int
ptl_op_lookup(struct ptl_nic *nic, uint64_t msg_id,
	      struct ptl_op_info *info_p, struct ptl_client **c_p)
{
	struct ptl_op *op;

	ptl_lock(&nic->op_lock);
	op = op_find(nic, msg_id);
	if (op == NULL) {
		ptl_unlock(&nic->op_lock);
		return -ENOENT;
	}
	memset(info_p, 0, sizeof(*info_p));
	info_p->op = op->cmd.op;
	info_p->ack_req = op->cmd.ack_req;
	info_p->ni_kind = op->cmd.ni_kind;
	info_p->initiator = ptl_client_id(op->c);
	info_p->target = op->cmd.target;
	info_p->pt_index = op->cmd.pt_index;
	info_p->uid = op->cmd.uid;
	info_p->local_addr = op->cmd.local_addr;
	info_p->length = op->cmd.length;
	info_p->match_bits = op->cmd.match_bits;
	info_p->remote_offset = op->cmd.remote_offset;
	info_p->hdr_data = op->cmd.hdr_data;
	if (c_p != NULL) {
		ptl_client_get(op->c);
		*c_p = op->c;
	}
	ptl_unlock(&nic->op_lock);
	return 0;
}

void
ptl_op_cancel_client(struct ptl_nic *nic, struct ptl_client *c)
{
	uint32_t i, n = 0;

	ptl_lock(&nic->op_lock);
	for (i = 0; i < nic->conf.max_ops; i++) {
		if (nic->ops[i].msg_id != 0 && nic->ops[i].c == c) {
			op_free(nic, &nic->ops[i]);
			n++;
		}
	}
	ptl_unlock(&nic->op_lock);
	/* the caller still holds the attach reference: no free here */
	__atomic_fetch_sub(&c->refs, n, __ATOMIC_ACQ_REL);
	PTL_STAT_ADD(nic, inflight_dropped, n);
}

unsigned
ptl_op_fail_target(struct ptl_nic *nic, uint32_t nid, uint8_t ni_fail)
{
	struct failed {
		struct ptl_client *c;
		struct ptl_cmd cmd;
		bool sent;
	} *list;
	uint32_t i, n = 0, cap = 0;

	ptl_lock(&nic->op_lock);
	for (i = 0; i < nic->conf.max_ops; i++)
		if (nic->ops[i].msg_id != 0 &&
		    nic->ops[i].cmd.target.nid == nid)
			cap++;
	list = cap > 0 ? malloc(cap * sizeof(*list)) : NULL;
	for (i = 0; list != NULL && i < nic->conf.max_ops; i++) {
		struct ptl_op *op = &nic->ops[i];

		if (op->msg_id == 0 || op->cmd.target.nid != nid)
			continue;
		list[n].c = op->c;
		list[n].cmd = op->cmd;
		list[n].sent = op->sent;
		n++;
		op_free(nic, op);
	}
	ptl_unlock(&nic->op_lock);
	/* events outside the lock; each op's reference goes with it */
	for (i = 0; i < n; i++) {
		struct failed *f = &list[i];

		if (f->cmd.op == SPINNIC_CMD_GET) {
			post_reply(f->c, &f->cmd, ni_fail, 0);
		} else if (ptl_cmd_fetches(f->cmd.op)) {
			struct ptl_cmd r = reply_view(&f->cmd);

			if (!f->sent)
				post_send(f->c, &f->cmd, ni_fail);
			post_reply(f->c, &r, ni_fail, 0);
		} else if (!f->sent) {
			post_send(f->c, &f->cmd, ni_fail);
		} else {
			post_ack(f->c, &f->cmd, ni_fail, 0,
				 SPINNIC_PTL_PRIORITY_LIST);
		}
		ptl_client_put(f->c);
	}
	free(list);
	return n;
}

unsigned
ptl_op_targets(struct ptl_nic *nic, uint32_t *nids, unsigned max)
{
	uint32_t i;
	unsigned n = 0, k;

	ptl_lock(&nic->op_lock);
	for (i = 0; i < nic->conf.max_ops && n < max; i++) {
		uint32_t nid = nic->ops[i].cmd.target.nid;

		if (nic->ops[i].msg_id == 0)
			continue;
		for (k = 0; k < n && nids[k] != nid; k++)
			;
		if (k == n)
			nids[n++] = nid;
	}
	ptl_unlock(&nic->op_lock);
	return n;
}
