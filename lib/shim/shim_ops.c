/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data movement: PtlPut and PtlGet through the command ring, and the
 * checked command every data operation starts from (shim_data_cmd).
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

/* An ack needs somewhere to land: a full event an EQ, a counting ack
 * (PTL_CT_ACK_REQ, PTL_OC_ACK_REQ) a CT. */
static bool
ack_possible(const struct shim_md *md, ptl_ack_req_t ack_req)
{
	switch (ack_req) {
	case PTL_ACK_REQ:
		return md->has_eq;
	case PTL_CT_ACK_REQ:
	case PTL_OC_ACK_REQ:
		return md->has_ct;
	default:
		return true;
	}
}

int
shim_data_cmd(uint16_t op, ptl_handle_md_t md_handle, ptl_size_t local_offset,
	      ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	      ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	      ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	      struct spinnic_cmd *cmd_p, struct shim_ni **ni_p,
	      const struct shim_md **md_p)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	o = shim_to_md(md_handle, &ni);
	if (o == NULL || !ack_possible(&o->u.md, ack_req) ||
	    local_offset > o->u.md.length ||
	    length > o->u.md.length - local_offset ||
	    (unsigned)ack_req > PTL_OC_ACK_REQ || pt_index == PTL_PT_ANY ||
	    (ni->limits.max_pt_index >= 0 &&
	     pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) ||
	    (ni->limits.max_msg_size > 0 && length > ni->limits.max_msg_size) ||
	    /* a volatile MD's bytes are copied at the call (shim_cmd_inline) */
	    (op != SPINNIC_CMD_GET && (o->u.md.options & PTL_MD_VOLATILE) &&
	     length > ni->limits.max_volatile_size)) {
		SHIM_DBG("bad MD handle %#llx, range %llu+%llu, ack %d or PT %u",
			 (unsigned long long)md_handle,
			 (unsigned long long)local_offset,
			 (unsigned long long)length, (int)ack_req, pt_index);
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	rc = shim_target(ni, target_id, &cmd.target, 0);
	if (rc != 0)
		return rc;
	cmd.op = op;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	cmd.ack_req = ack_req;
	cmd.local_offset = local_offset;
	cmd.length = length;
	cmd.pt_index = pt_index;
	cmd.match_bits = match_bits;
	cmd.remote_offset = remote_offset;
	cmd.user_ptr = (uint64_t)(uintptr_t)user_ptr;
	cmd.hdr_data = hdr_data;
	*cmd_p = cmd;
	if (ni_p != NULL)
		*ni_p = ni;
	if (md_p != NULL)
		*md_p = &o->u.md;
	return 0;
}

/* Copy [off, off + len) of iovec MD @p md into @p dst. @return 0, or
 * -EINVAL when the entries end before it */
static int
iov_gather(const struct shim_md *md, uint64_t off, void *dst, size_t len)
{
	const ptl_iovec_t *iov = (const ptl_iovec_t *)(uintptr_t)md->start;
	uint8_t *d = dst;
	ptl_size_t i;

	for (i = 0; i < md->entries && len > 0; i++) {
		size_t take;

		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		take = iov[i].iov_len - off < len ? iov[i].iov_len - off : len;
		memcpy(d, (const uint8_t *)iov[i].iov_base + off, take);
		d += take;
		len -= take;
		off = 0;
	}
	return len == 0 ? 0 : -EINVAL;
}

void
shim_cmd_inline(const struct shim_md *md, struct spinnic_cmd *cmd,
		size_t lead)
{
	bool vol = md->options & PTL_MD_VOLATILE;
	const void *src;

	if (cmd->length == 0 || lead + cmd->length > SPINNIC_ATOMIC_OPERAND)
		return;
	if (md->options & PTL_IOVEC) {
		/* the NIC walks the entries itself unless asked to copy */
		if (vol && iov_gather(md, cmd->local_offset,
				      cmd->operand + lead, cmd->length) == 0)
			cmd->flags = SPINNIC_CMD_F_INLINE;
		return;
	}
	src = (const void *)(uintptr_t)(md->start + cmd->local_offset);
	if (!vol && (md->start == 0 || shim_in_region(src, cmd->length)))
		return;
	memcpy(cmd->operand + lead, src, cmd->length);
	cmd->flags = SPINNIC_CMD_F_INLINE;
}

/* Body of PtlPut and PtlGet. @return 0 or a negative errno */
static int
data_op(uint16_t op, ptl_handle_md_t md_handle, ptl_size_t local_offset,
	ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data)
{
	const struct shim_md *md;
	struct spinnic_cmd cmd;
	int rc;

	rc = shim_data_cmd(op, md_handle, local_offset, length, ack_req,
			   target_id, pt_index, match_bits, remote_offset,
			   user_ptr, hdr_data, &cmd, NULL, &md);
	if (rc != 0)
		return rc;
	if (op == SPINNIC_CMD_PUT)
		shim_cmd_inline(md, &cmd, 0);
	return shim_cmd_post(&cmd);
}

int
PtlPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
       ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
       ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
       ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data)
{
	SHIM_ENTER();
	return shim_ptl(data_op(SPINNIC_CMD_PUT, md_handle, local_offset,
				length, ack_req, target_id, pt_index,
				match_bits, remote_offset, user_ptr,
				hdr_data));
}

int
PtlGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
       ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index,
       ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr)
{
	SHIM_ENTER();
	return shim_ptl(data_op(SPINNIC_CMD_GET, md_handle, local_offset,
				length, PTL_NO_ACK_REQ, target_id, pt_index,
				match_bits, remote_offset, user_ptr, 0));
}
