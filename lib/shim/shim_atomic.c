/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomics of portals4.h: PtlAtomic, PtlFetchAtomic, PtlSwap through the
 * command ring (one packet each; the target NIC applies them, with
 * lib/portals/atomic.c), and PtlAtomicSync. Arguments are checked here
 * against the specification's table of operations and datatypes
 * (atomic_types.h, the one the NIC checks with).
 */
#include <errno.h>
#include <string.h>

#include "atomic_types.h"
#include "shim_internal.h"

int
shim_atomic_cmd(uint16_t op, ptl_handle_md_t put_md, ptl_size_t put_offset,
		ptl_handle_md_t get_md, ptl_size_t get_offset,
		ptl_size_t length, ptl_ack_req_t ack_req,
		ptl_process_t target_id, ptl_pt_index_t pt_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		void *user_ptr, ptl_hdr_data_t hdr_data, const void *operand,
		ptl_op_t operation, ptl_datatype_t datatype,
		struct spinnic_cmd *cmd_p, const struct shim_md **md_p)
{
	size_t esize = spinnic_atomic_size((unsigned)datatype);
	bool fetch = op != SPINNIC_CMD_ATOMIC;
	struct spinnic_cmd cmd;
	struct shim_ni *ni, *gni;
	struct shim_obj *g;
	ptl_size_t max;
	int rc;

	if (!spinnic_atomic_valid((unsigned)operation, (unsigned)datatype) ||
	    spinnic_atomic_swap_op((unsigned)operation) !=
	    (op == SPINNIC_CMD_SWAP)) {
		SHIM_DBG("operation %d not valid on datatype %d here",
			 (int)operation, (int)datatype);
		return -EINVAL;
	}
	rc = shim_data_cmd(op, put_md, put_offset, length, ack_req, target_id,
			   pt_index, match_bits, remote_offset, user_ptr,
			   hdr_data, &cmd, &ni, md_p);
	if (rc != 0)
		return rc;
	max = fetch ? ni->limits.max_fetch_atomic_size :
		      ni->limits.max_atomic_size;
	if (length % esize != 0 || length > max ||
	    (op == SPINNIC_CMD_SWAP && operation != PTL_SWAP &&
	     length != esize)) {
		SHIM_DBG("atomic of %llu bytes: whole %zu-byte elements, at most %llu (one for a conditional swap or MSWAP)",
			 (unsigned long long)length, esize,
			 (unsigned long long)max);
		return -EINVAL;
	}
	cmd.atomic_op = (uint8_t)operation;
	cmd.atomic_type = (uint8_t)datatype;
	if (!fetch) {
		*cmd_p = cmd;
		return 0;
	}
	g = shim_to_md(get_md, &gni);
	if (g == NULL || gni != ni || get_offset > g->u.md.length ||
	    length > g->u.md.length - get_offset) {
		SHIM_DBG("bad get MD %#llx or range %llu+%llu",
			 (unsigned long long)get_md,
			 (unsigned long long)get_offset,
			 (unsigned long long)length);
		return -EINVAL;
	}
	cmd.get_md = g->nic_id;
	cmd.get_offset = get_offset;
	if (op == SPINNIC_CMD_SWAP && operation != PTL_SWAP) {
		if (operand == NULL)
			return -EINVAL;
		memcpy(cmd.operand, operand, esize);
	}
	*cmd_p = cmd;
	return 0;
}

/* Build, then post. @return 0 or a negative errno */
static int
atomic_cmd(uint16_t op, ptl_handle_md_t put_md, ptl_size_t put_offset,
	   ptl_handle_md_t get_md, ptl_size_t get_offset, ptl_size_t length,
	   ptl_ack_req_t ack_req, ptl_process_t target_id,
	   ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	   ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	   const void *operand, ptl_op_t operation, ptl_datatype_t datatype)
{
	const struct shim_md *md;
	struct spinnic_cmd cmd;
	int rc = shim_atomic_cmd(op, put_md, put_offset, get_md, get_offset,
				 length, ack_req, target_id, pt_index,
				 match_bits, remote_offset, user_ptr,
				 hdr_data, operand, operation, datatype,
				 &cmd, &md);

	if (rc != 0)
		return rc;
	shim_cmd_inline(md, &cmd, op == SPINNIC_CMD_SWAP &&
			operation != PTL_SWAP ?
			spinnic_atomic_size((unsigned)datatype) : 0);
	return shim_cmd_post(&cmd);
}

int
PtlAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	  ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	  ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	  ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	  ptl_op_t operation, ptl_datatype_t datatype)
{
	SHIM_ENTER();
	return shim_ptl(atomic_cmd(SPINNIC_CMD_ATOMIC, md_handle, local_offset,
				   PTL_INVALID_HANDLE, 0, length, ack_req,
				   target_id, pt_index, match_bits,
				   remote_offset, user_ptr, hdr_data, NULL,
				   operation, datatype));
}

int
PtlFetchAtomic(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
	       ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
	       ptl_size_t length, ptl_process_t target_id,
	       ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	       ptl_size_t remote_offset, void *user_ptr,
	       ptl_hdr_data_t hdr_data, ptl_op_t operation,
	       ptl_datatype_t datatype)
{
	SHIM_ENTER();
	return shim_ptl(atomic_cmd(SPINNIC_CMD_FETCH_ATOMIC, put_md_handle,
				   local_put_offset, get_md_handle,
				   local_get_offset, length, PTL_NO_ACK_REQ,
				   target_id, pt_index, match_bits,
				   remote_offset, user_ptr, hdr_data, NULL,
				   operation, datatype));
}

int
PtlSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
	ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
	ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index,
	ptl_match_bits_t match_bits, ptl_size_t remote_offset,
	void *user_ptr, ptl_hdr_data_t hdr_data, const void *operand,
	ptl_op_t operation, ptl_datatype_t datatype)
{
	SHIM_ENTER();
	return shim_ptl(atomic_cmd(SPINNIC_CMD_SWAP, put_md_handle,
				   local_put_offset, get_md_handle,
				   local_get_offset, length, PTL_NO_ACK_REQ,
				   target_id, pt_index, match_bits,
				   remote_offset, user_ptr, hdr_data, operand,
				   operation, datatype));
}

int
PtlAtomicSync(void)
{
	/* the NIC applies an atomic to host memory before its target event
	 * and caches nothing: there is never anything to flush */
	SHIM_ENTER();
	return PTL_OK;
}
