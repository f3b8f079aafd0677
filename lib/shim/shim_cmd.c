/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command ring: single producer (this process, serialized by
 * cmd_lock), single consumer (the NIC). A command is written into its slot
 * and published by a release store of head; a full ring is waited out
 * (spin, then yield), never dropped.
 */
#include <sched.h>
#include <string.h>

#include "shim_internal.h"

#define FULL_SPINS 256
#define FULL_YIELDS_PER_CHECK 1024

int
shim_cmd_post(const struct spinnic_cmd *cmd)
{
	struct spinnic_cmd_ring *ring = shim_g.region.ring;
	uint32_t head, n = SHIM_CMD_ENTRIES;
	unsigned waits = 0;

	pthread_mutex_lock(&shim_g.cmd_lock);
	if (shim_g.dead || shim_g.fd < 0) {
		pthread_mutex_unlock(&shim_g.cmd_lock);
		return PTL_FAIL;
	}
	head = shim_g.cmd_head;
	while (head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) >= n) {
		if (waits < FULL_SPINS) {
			shim_cpu_relax();
		} else {
			sched_yield();
			if ((waits - FULL_SPINS) % FULL_YIELDS_PER_CHECK == 0 &&
			    shim_ctrl_gone()) {
				pthread_mutex_unlock(&shim_g.cmd_lock);
				return PTL_FAIL;
			}
		}
		waits++;
	}
	ring->slots[head & (n - 1)] = *cmd;
	shim_g.cmd_head = head + 1;
	__atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shim_g.cmd_lock);
	return PTL_OK;
}

static int
data_op(uint16_t op, ptl_handle_md_t md_handle, ptl_size_t local_offset,
	ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(md_handle, SHIM_KIND_MD, &ni);
	if (o == NULL || local_offset > o->u.md.length ||
	    length > o->u.md.length - local_offset ||
	    (unsigned)ack_req > PTL_OC_ACK_REQ || pt_index == PTL_PT_ANY ||
	    (ni->limits.max_pt_index >= 0 &&
	     pt_index > (ptl_pt_index_t)ni->limits.max_pt_index) ||
	    (ni->limits.max_msg_size > 0 && length > ni->limits.max_msg_size)) {
		SHIM_DBG("bad MD handle %#llx, range %llu+%llu, ack %d or PT %u",
			 (unsigned long long)md_handle,
			 (unsigned long long)local_offset,
			 (unsigned long long)length, (int)ack_req, pt_index);
		return PTL_ARG_INVALID;
	}
	memset(&cmd, 0, sizeof(cmd));
	rc = shim_target(ni, target_id, &cmd.target, 0);
	if (rc != PTL_OK)
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
	return shim_cmd_post(&cmd);
}

int
PtlPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
       ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
       ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
       ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data)
{
	return data_op(SPINNIC_CMD_PUT, md_handle, local_offset, length,
		       ack_req, target_id, pt_index, match_bits, remote_offset,
		       user_ptr, hdr_data);
}

int
PtlGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
       ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index,
       ptl_match_bits_t match_bits, ptl_size_t remote_offset, void *user_ptr)
{
	return data_op(SPINNIC_CMD_GET, md_handle, local_offset, length,
		       PTL_NO_ACK_REQ, target_id, pt_index, match_bits,
		       remote_offset, user_ptr, 0);
}

static int
ct_op(uint16_t op, ptl_handle_ct_t ct_handle, ptl_ct_event_t v)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;

	if (shim_ready() != PTL_OK)
		return PTL_NO_INIT;
	o = shim_obj_get(ct_handle, SHIM_KIND_CT, &ni);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = op;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	cmd.ct_success = v.success;
	cmd.ct_failure = v.failure;
	return shim_cmd_post(&cmd);
}

int
PtlCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct)
{
	return ct_op(SPINNIC_CMD_CT_SET, ct_handle, new_ct);
}

int
PtlCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment)
{
	return ct_op(SPINNIC_CMD_CT_INC, ct_handle, increment);
}
