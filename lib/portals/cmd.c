/* SPDX-License-Identifier: BSD-3-Clause */
/* Command ring consumer: copy out, validate, resolve (STYLE 8); the
 * resolving step (ptl_cmd_take) is shared with fired triggered ones. */
#include "atomic.h"
#include "atomic_types.h"
#include "ptl_internal.h"
#include "trig.h"

static int cmd_check(struct ptl_client *c, const struct spinnic_cmd *cmd,
		     struct ptl_cmd *out, uint32_t *eq_p);

/* nic->lock held: the fields of SPUT_START, SPUT_STREAM and PROCESS_PUT
 * beyond a PUT's (the outbound engine checks the stream's state and the
 * type); then resolved by cmd_check as a PUT. */
static int
cmd_check_sput(struct ptl_client *c, const struct ptl_ni *ni,
	       const struct ptl_md *md, const struct spinnic_cmd *cmd,
	       struct ptl_cmd *out)
{
	struct spinnic_cmd put = *cmd;
	uint32_t eq;
	int fail;

	/* streamed and processed puts read their pieces at addresses: not
	 * from an iovec MD (doc/NOTES.md "iovec MDs and MEs") */
	if ((md->options & SPINNIC_PTL_IOVEC) ||
	    (cmd->flags & ~(cmd->op == SPINNIC_CMD_SPUT_STREAM ?
			    SPINNIC_CMD_F_EOM : 0u)) != 0 ||
	    (cmd->op != SPINNIC_CMD_PROCESS_PUT &&
	     cmd->stream >= SPINNIC_SPUT_MAX))
		return SPINNIC_PTL_NI_OP_VIOLATION;
	switch (cmd->op) {
	case SPINNIC_CMD_SPUT_START:
		if (cmd->msg_length < cmd->length ||
		    cmd->msg_length > ni->lim.max_msg_size)
			return SPINNIC_PTL_NI_SEGV;
		break;
	case SPINNIC_CMD_SPUT_STREAM:
		break;
	case SPINNIC_CMD_PROCESS_PUT:
		if (cmd->blob_len == 0 || cmd->blob_len > SPINNIC_PROC_BLOB_MAX)
			return SPINNIC_PTL_NI_OP_VIOLATION;
		if (cmd->local_offset > md->length ||
		    cmd->length > ni->lim.max_msg_size)
			return SPINNIC_PTL_NI_SEGV;
		/* the type's span is checked against the MD once loaded */
		put.length = 0;
		break;
	default:
		return SPINNIC_PTL_NI_OP_VIOLATION;
	}
	/* everything else as a PUT */
	put.op = SPINNIC_CMD_PUT;
	put.flags = 0;
	fail = cmd_check(c, &put, out, &eq);
	if (fail != 0)
		return fail;
	out->op = cmd->op;
	out->flags = cmd->flags;
	out->length = cmd->length;
	return 0;
}

/* nic->lock held: the fields of ATOMIC, FETCH_ATOMIC and SWAP beyond a
 * PUT's (resolved already in @p out): operation and datatype, length
 * whole elements within the NI's atomic sizes, the get MD. */
static int
cmd_check_atomic(struct ptl_client *c, const struct ptl_ni *ni,
		 const struct spinnic_cmd *cmd, struct ptl_cmd *out)
{
	size_t esize = ptl_atomic_type_size(cmd->atomic_type);
	bool fetch = cmd->op != SPINNIC_CMD_ATOMIC;
	struct ptl_md *gmd;

	if (!ptl_atomic_valid(cmd->atomic_op, cmd->atomic_type) ||
	    spinnic_atomic_swap_op(cmd->atomic_op) !=
	    (cmd->op == SPINNIC_CMD_SWAP) ||
	    (fetch && cmd->ack_req != SPINNIC_PTL_NO_ACK_REQ))
		return SPINNIC_PTL_NI_OP_VIOLATION;
	if (cmd->length % esize != 0 || cmd->length >
	    (fetch ? ni->lim.max_fetch_atomic_size : ni->lim.max_atomic_size))
		return SPINNIC_PTL_NI_SEGV;
	out->atomic_op = cmd->atomic_op;
	out->atomic_type = cmd->atomic_type;
	if (cmd->op == SPINNIC_CMD_SWAP && cmd->atomic_op != SPINNIC_PTL_SWAP) {
		/* the compare value or mask goes first: one element only */
		if (cmd->length != esize)
			return SPINNIC_PTL_NI_SEGV;
		out->operand_len = (uint8_t)esize;
		memcpy(out->operand, cmd->operand, esize);
	}
	/* inline values follow the compare value */
	if ((cmd->flags & SPINNIC_CMD_F_INLINE) &&
	    out->operand_len + cmd->length > SPINNIC_ATOMIC_OPERAND)
		return SPINNIC_PTL_NI_OP_VIOLATION;
	if (!fetch)
		return 0;
	gmd = ptl_md_get(c, cmd->get_md, NULL);
	if (gmd == NULL || ptl_handle_ni(cmd->get_md) != ptl_handle_ni(cmd->ni))
		return SPINNIC_PTL_NI_OP_VIOLATION;
	if (!ptl_range_ok(cmd->get_offset, cmd->length, gmd->length))
		return SPINNIC_PTL_NI_SEGV;
	out->get_md = cmd->get_md;
	out->get_md_options = gmd->options;
	out->get_eq = gmd->eq;
	out->get_ct = gmd->ct;
	out->get_offset = cmd->get_offset;
	out->get_addr = gmd->start +
		((gmd->options & SPINNIC_PTL_IOVEC) ? 0 : cmd->get_offset);
	return 0;
}

/* nic->lock held: resolve and check a PUT/GET. Returns 0 or the ni_fail of
 * the failure event; *eq_p gets the MD's EQ when the MD is valid. */
static int
cmd_check(struct ptl_client *c, const struct spinnic_cmd *cmd,
	  struct ptl_cmd *out, uint32_t *eq_p)
{
	const struct spinnic_limits *max = &c->nic->conf.limits;
	struct ptl_ni *ni = ptl_ni_get(c, cmd->ni);
	struct ptl_md *md;

	*eq_p = PTL_NONE;
	if (ni == NULL)
		return SPINNIC_PTL_NI_OP_VIOLATION;
	md = ptl_md_get(c, cmd->md, NULL);
	if (md == NULL || ptl_handle_ni(cmd->md) != ptl_handle_ni(cmd->ni))
		return SPINNIC_PTL_NI_OP_VIOLATION;
	*eq_p = md->eq;
	if (ptl_cmd_sput(cmd->op))
		return cmd_check_sput(c, ni, md, cmd, out);
	if ((cmd->flags != 0 && !((cmd->op == SPINNIC_CMD_PUT ||
				   ptl_cmd_atomic(cmd->op)) &&
				  cmd->flags == SPINNIC_CMD_F_INLINE &&
				  cmd->length <= SPINNIC_ATOMIC_OPERAND)) ||
	    cmd->target.pid == SPINNIC_PTL_PID_ANY ||
	    cmd->target.nid == SPINNIC_PTL_NID_ANY ||
	    cmd->pt_index > (uint32_t)max->max_pt_index ||
	    ((cmd->op == SPINNIC_CMD_PUT || ptl_cmd_atomic(cmd->op)) &&
	     cmd->ack_req > SPINNIC_PTL_OC_ACK_REQ))
		return SPINNIC_PTL_NI_OP_VIOLATION;
	if (!ptl_range_ok(cmd->local_offset, cmd->length, md->length) ||
	    cmd->length > ni->lim.max_msg_size)
		return SPINNIC_PTL_NI_SEGV;

	memset(out, 0, sizeof(*out));
	out->op = cmd->op;
	out->ack_req = cmd->op == SPINNIC_CMD_PUT ||
		cmd->op == SPINNIC_CMD_ATOMIC ? (uint8_t)cmd->ack_req :
						SPINNIC_PTL_NO_ACK_REQ;
	out->ni_kind = (uint8_t)ptl_handle_ni(cmd->ni);
	out->ni = cmd->ni;
	out->md = cmd->md;
	out->md_options = md->options;
	out->eq = md->eq;
	out->ct = md->ct;
	out->local_offset = cmd->local_offset;
	/* an iovec MD: data through its entries (ptl_md_access), events
	 * name the array */
	out->local_addr = md->start +
		((md->options & SPINNIC_PTL_IOVEC) ? 0 : cmd->local_offset);
	out->length = cmd->length;
	out->target = cmd->target;
	out->pt_index = cmd->pt_index;
	out->uid = c->uid;
	out->match_bits = cmd->match_bits;
	out->remote_offset = cmd->remote_offset;
	out->user_ptr = cmd->user_ptr;
	out->hdr_data = cmd->hdr_data;
	out->flags = cmd->flags;
	out->stream = cmd->stream;
	out->msg_length = cmd->msg_length;
	out->blob = cmd->blob;
	out->blob_len = cmd->blob_len;
	out->count = cmd->count;
	out->md_start = md->start;
	out->md_length = md->length;
	if (cmd->flags & SPINNIC_CMD_F_INLINE) {
		/* the bytes share the union with the sput fields (a SWAP's
		 * compare value first: cmd_check_atomic) */
		memcpy(out->operand, cmd->operand, SPINNIC_ATOMIC_OPERAND);
		out->stream = 0;
		out->msg_length = 0;
		out->blob = 0;
		out->blob_len = 0;
		out->count = 0;
	}
	if (ptl_cmd_atomic(cmd->op))
		return cmd_check_atomic(c, ni, cmd, out);
	return 0;
}

/* nic->lock held: the CT named by a CT_* command */
static bool
cmd_ct_ok(struct ptl_client *c, const struct spinnic_cmd *cmd)
{
	struct ptl_ni *ni = ptl_ni_get(c, cmd->ni);

	return ni != NULL && cmd->flags == 0 &&
	       ptl_ct_valid(ni, ptl_handle_ni(cmd->ni), cmd->md);
}

/* A counter command, checked then applied. @return 0 or -EAGAIN (lock
 * busy and !wait) */
static int
cmd_ct(struct ptl_client *c, const struct spinnic_cmd *cmd, bool wait)
{
	struct ptl_nic *nic = c->nic;
	bool ok;

	if (!ptl_trig_lock(&nic->lock, wait))
		return -EAGAIN;
	ok = cmd_ct_ok(c, cmd);
	ptl_unlock(&nic->lock);
	if (!ok) {
		PTL_STAT(nic, bad_cmd);
		return 0;
	}
	switch (cmd->op) {
	case SPINNIC_CMD_CT_SET:
		ptl_ct_set(c, cmd->md, cmd->ct_success, cmd->ct_failure);
		break;
	case SPINNIC_CMD_CT_INC:
		ptl_ct_inc(c, cmd->md, cmd->ct_success, cmd->ct_failure);
		break;
	case SPINNIC_CMD_CT_CHECK:
		ptl_trig_check(c, cmd->md);
		break;
	default:
		ptl_trig_cancel(c, cmd->md);
		break;
	}
	return 0;
}

/* ME_APPEND or ME_UNLINK of a reserved or linked entry (behind a TRIG,
 * or alone: the same, now). An entry that is gone is counted, not an
 * error. @return 0 or -EAGAIN (lock busy and !wait) */
static int
cmd_me(struct ptl_client *c, const struct spinnic_cmd *cmd, bool wait)
{
	struct ptl_nic *nic = c->nic;
	int rc = -EINVAL;

	if (!ptl_trig_lock(&nic->lock, wait))
		return -EAGAIN;
	if (cmd->flags == 0 && ptl_ni_get(c, cmd->ni) != NULL &&
	    ptl_handle_type(cmd->md) == PTL_HT_ME &&
	    ptl_handle_ni(cmd->md) == ptl_handle_ni(cmd->ni))
		rc = cmd->op == SPINNIC_CMD_ME_APPEND ?
		     ptl_me_link_reserved(c, cmd->md) :
		     ptl_me_unlink_now(c, cmd->md);
	ptl_unlock(&nic->lock);
	if (rc == -ENOENT)
		PTL_STAT(nic, trig_me_gone);
	else if (rc != 0)
		PTL_STAT(nic, bad_cmd);
	return 0;
}

void
ptl_cmd_fail(struct ptl_client *c, const struct spinnic_cmd *cmd, uint32_t eq,
	     int fail)
{
	struct spinnic_event ev;

	if (eq == PTL_NONE)
		return;
	ptl_event_init(&ev, cmd->op == SPINNIC_CMD_GET ?
			    SPINNIC_PTL_EVENT_REPLY : SPINNIC_PTL_EVENT_SEND,
		       (uint8_t)fail);
	ev.user_ptr = cmd->user_ptr;
	ev.hdr_data = cmd->hdr_data;
	ev.match_bits = cmd->match_bits;
	ev.rlength = cmd->length;
	ev.remote_offset = cmd->remote_offset;
	ev.initiator = cmd->target;
	ev.uid = c->uid;
	ev.pt_index = cmd->pt_index;
	ptl_eq_post(c, eq, &ev);
}

int
ptl_cmd_take(struct ptl_client *c, const struct spinnic_cmd *cmd,
	     struct ptl_cmd *out, bool wait)
{
	struct ptl_nic *nic = c->nic;
	uint32_t eq;
	int fail;

	switch (cmd->op) {
	case SPINNIC_CMD_NOP:
		return 0;
	case SPINNIC_CMD_CT_SET:
	case SPINNIC_CMD_CT_INC:
	case SPINNIC_CMD_CT_CHECK:
	case SPINNIC_CMD_CT_CANCEL_TRIG:
		return cmd_ct(c, cmd, wait);
	case SPINNIC_CMD_ME_APPEND:
	case SPINNIC_CMD_ME_UNLINK:
		return cmd_me(c, cmd, wait);
	case SPINNIC_CMD_PUT:
	case SPINNIC_CMD_GET:
	case SPINNIC_CMD_SPUT_START:
	case SPINNIC_CMD_SPUT_STREAM:
	case SPINNIC_CMD_PROCESS_PUT:
	case SPINNIC_CMD_ATOMIC:
	case SPINNIC_CMD_FETCH_ATOMIC:
	case SPINNIC_CMD_SWAP:
		break;
	default:
		PTL_STAT(nic, bad_cmd);
		return 0;
	}
	if (!ptl_trig_lock(&nic->lock, wait))
		return -EAGAIN;
	fail = cmd_check(c, cmd, out, &eq);
	ptl_unlock(&nic->lock);
	if (fail == 0)
		return 1;
	PTL_STAT(nic, bad_cmd);
	ptl_cmd_fail(c, cmd, eq, fail);
	return 0;
}

unsigned
ptl_cmd_poll(struct ptl_client *c, struct ptl_cmd *out, unsigned n)
{
	struct ptl_nic *nic = c->nic;
	struct spinnic_cmd cmd, op;
	uint32_t head, avail, tail = c->cmd_tail;
	unsigned got = 0, used = 0;

	if (n == 0 || !ptl_client_is_alive(c))
		return 0;
	/* what fired elsewhere and had to wait (lock busy, queue full) */
	ptl_trig_run(c);
	head = __atomic_load_n(&c->ring->head, __ATOMIC_ACQUIRE);
	avail = head - tail;
	if (avail == 0)
		return 0;
	if (avail > c->cmd_entries) {
		/* a producer index we cannot believe: take one ring's worth */
		PTL_STAT(nic, cmd_ring_corrupt);
		avail = c->cmd_entries;
	}
	while (used < avail && got < n) {
		/* copy first: the client may rewrite the slot meanwhile */
		memcpy(&cmd, &c->ring->slots[tail & (c->cmd_entries - 1)],
		       sizeof(cmd));
		if (cmd.op == SPINNIC_CMD_TRIG) {
			/* two slots, published together; alone: refused */
			memset(&op, 0, sizeof(op));
			if (avail - used >= 2)
				memcpy(&op, &c->ring->slots[(tail + 1) &
							    (c->cmd_entries -
							     1)], sizeof(op));
			tail += avail - used >= 2 ? 2 : 1;
			used += avail - used >= 2 ? 2 : 1;
			PTL_STAT(nic, cmds);
			ptl_trig_arm(c, &cmd, &op);
			continue;
		}
		tail++;
		used++;
		PTL_STAT(nic, cmds);
		got += (unsigned)ptl_cmd_take(c, &cmd, &out[got], true);
	}
	c->cmd_tail = tail;
	__atomic_store_n(&c->ring->tail, tail, __ATOMIC_RELEASE);
	return got;
}
