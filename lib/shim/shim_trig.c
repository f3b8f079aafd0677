/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations of portals4.h: PtlTriggered{Put,Get,Atomic,
 * FetchAtomic,Swap,CTInc,CTSet} post a TRIG command (trigger CT,
 * threshold) followed by the plain operation's command, checked as the
 * plain call checks it; the NIC keeps it until the CT's success + failure
 * reaches the threshold (lib/portals/trig.c). PtlCTCancelTriggered waits
 * until the NIC acted on it. spin.h's PtlTriggeredMEAppend reserves its
 * entry first (control ME_APPEND, SPINNIC_CTRL_F_ME_RESERVE) and triggers
 * a ring ME_APPEND naming it; PtlTriggeredMEUnlink triggers ME_UNLINK.
 * doc/NOTES.md "Triggered operations". spin_trig_set_period makes the
 * calling thread's later posts on an NI persistent (the TRIG command's
 * local_offset; a persistent append links a copy of its reserved entry
 * per firing): doc/NOTES.md "Re-arming triggered operations".
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

/* spin_trig_set_period: per thread, per NI slot; 0: one-shot posts */
static _Thread_local ptl_size_t trig_period[SHIM_NI_MAX];

int
spin_trig_set_period(ptl_handle_ni_t ni_handle, ptl_size_t period)
{
	unsigned slot;

	SHIM_ENTER();
	if (shim_to_ni(ni_handle, &slot) == NULL)
		return PTL_ARG_INVALID;
	trig_period[slot] = period;
	return PTL_OK;
}

int
spin_trig_pending(ptl_handle_ni_t ni_handle, uint64_t *pending_p)
{
	unsigned slot;
	uint32_t end;

	SHIM_ENTER();
	if (pending_p == NULL || shim_to_ni(ni_handle, &slot) == NULL)
		return PTL_ARG_INVALID;
	/* what was posted before is acted on (cancels, frees) */
	pthread_mutex_lock(&shim_g.cmd_lock);
	end = shim_g.cmd_head;
	pthread_mutex_unlock(&shim_g.cmd_lock);
	if (shim_cmd_sync(end) != 0)
		return PTL_FAIL;
	*pending_p = __atomic_load_n(&shim_g.trig_posted[slot],
				     __ATOMIC_ACQUIRE) -
		__atomic_load_n(&shim_g.region.ring->trig_done[slot],
				__ATOMIC_ACQUIRE);
	return PTL_OK;
}

/* The calling thread's period on NI @p ni */
static ptl_size_t
trig_period_of(const struct shim_ni *ni)
{
	return trig_period[ni - shim_g.ni];
}

/* Take one of NI slot @p k's max_triggered_ops. @return 0 or -ENOMEM */
static int
trig_reserve(const struct shim_ni *ni, unsigned k)
{
	uint64_t posted = __atomic_fetch_add(&shim_g.trig_posted[k], 1,
					     __ATOMIC_ACQ_REL);
	uint64_t done = __atomic_load_n(&shim_g.region.ring->trig_done[k],
					__ATOMIC_ACQUIRE);

	if (ni->limits.max_triggered_ops > 0 &&
	    posted - done < (uint64_t)ni->limits.max_triggered_ops)
		return 0;
	__atomic_fetch_sub(&shim_g.trig_posted[k], 1, __ATOMIC_RELEASE);
	SHIM_DBG("max_triggered_ops (%d) pending",
		 ni->limits.max_triggered_ops);
	return -ENOMEM;
}

int
shim_trig_post(const struct spinnic_cmd *op, ptl_handle_ct_t trig_ct,
	       ptl_size_t threshold)
{
	struct spinnic_cmd cmds[2];
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned k;
	int rc;

	o = shim_to_ct(trig_ct, &ni);
	if (o == NULL || o->closing || ni->nic_ni != op->ni) {
		SHIM_DBG("bad trigger CT %#llx", (unsigned long long)trig_ct);
		return -EINVAL;
	}
	/* the NI's slot is the NIC's NI kind (SPINNIC_WIRE_NI_* bits) */
	k = (unsigned)(ni - shim_g.ni);
	rc = trig_reserve(ni, k);
	if (rc != 0)
		return rc;
	memset(&cmds[0], 0, sizeof(cmds[0]));
	cmds[0].op = SPINNIC_CMD_TRIG;
	cmds[0].ni = op->ni;
	cmds[0].md = o->nic_id;
	cmds[0].length = threshold;
	cmds[0].local_offset = trig_period[k];
	cmds[1] = *op;
	rc = shim_cmd_post_n(cmds, 2, NULL);
	if (rc != 0)
		__atomic_fetch_sub(&shim_g.trig_posted[k], 1, __ATOMIC_RELEASE);
	return rc;
}

/* Body of the triggered atomics: the atomic's command
 * (shim_atomic_cmd), posted behind its trigger. @return 0 or a negative
 * errno */
static int
trig_atomic(uint16_t op, ptl_handle_md_t put_md, ptl_size_t put_offset,
	    ptl_handle_md_t get_md, ptl_size_t get_offset, ptl_size_t length,
	    ptl_ack_req_t ack_req, ptl_process_t target_id,
	    ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	    ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	    const void *operand, ptl_op_t operation, ptl_datatype_t datatype,
	    ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	struct spinnic_cmd cmd;
	int rc = shim_atomic_cmd(op, put_md, put_offset, get_md, get_offset,
				 length, ack_req, target_id, pt_index,
				 match_bits, remote_offset, user_ptr,
				 hdr_data, operand, operation, datatype,
				 &cmd, NULL);

	return rc != 0 ? rc : shim_trig_post(&cmd, trig_ct_handle, threshold);
}

/* Body of PtlTriggeredPut and PtlTriggeredGet. @return 0 or a negative
 * errno */
static int
trig_data(uint16_t op, ptl_handle_md_t md_handle, ptl_size_t local_offset,
	  ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	  ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	  ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	  ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	struct spinnic_cmd cmd;
	int rc = shim_data_cmd(op, md_handle, local_offset, length, ack_req,
			       target_id, pt_index, match_bits, remote_offset,
			       user_ptr, hdr_data, &cmd, NULL, NULL);

	return rc != 0 ? rc : shim_trig_post(&cmd, trig_ct_handle, threshold);
}

int
PtlTriggeredPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		ptl_size_t length, ptl_ack_req_t ack_req,
		ptl_process_t target_id, ptl_pt_index_t pt_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		void *user_ptr, ptl_hdr_data_t hdr_data,
		ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_data(SPINNIC_CMD_PUT, md_handle, local_offset,
				  length, ack_req, target_id, pt_index,
				  match_bits, remote_offset, user_ptr,
				  hdr_data, trig_ct_handle, threshold));
}

int
PtlTriggeredGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		ptl_size_t length, ptl_process_t target_id,
		ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		ptl_size_t remote_offset, void *user_ptr,
		ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_data(SPINNIC_CMD_GET, md_handle, local_offset,
				  length, PTL_NO_ACK_REQ, target_id, pt_index,
				  match_bits, remote_offset, user_ptr, 0,
				  trig_ct_handle, threshold));
}

int
PtlTriggeredAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		   ptl_size_t length, ptl_ack_req_t ack_req,
		   ptl_process_t target_id, ptl_pt_index_t pt_index,
		   ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		   void *user_ptr, ptl_hdr_data_t hdr_data,
		   ptl_op_t operation, ptl_datatype_t datatype,
		   ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_atomic(SPINNIC_CMD_ATOMIC, md_handle,
				    local_offset, PTL_INVALID_HANDLE, 0,
				    length, ack_req, target_id, pt_index,
				    match_bits, remote_offset, user_ptr,
				    hdr_data, NULL, operation, datatype,
				    trig_ct_handle, threshold));
}

int
PtlTriggeredFetchAtomic(ptl_handle_md_t get_md_handle,
			ptl_size_t local_get_offset,
			ptl_handle_md_t put_md_handle,
			ptl_size_t local_put_offset, ptl_size_t length,
			ptl_process_t target_id, ptl_pt_index_t pt_index,
			ptl_match_bits_t match_bits, ptl_size_t remote_offset,
			void *user_ptr, ptl_hdr_data_t hdr_data,
			ptl_op_t operation, ptl_datatype_t datatype,
			ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_atomic(SPINNIC_CMD_FETCH_ATOMIC, put_md_handle,
				    local_put_offset, get_md_handle,
				    local_get_offset, length, PTL_NO_ACK_REQ,
				    target_id, pt_index, match_bits,
				    remote_offset, user_ptr, hdr_data, NULL,
				    operation, datatype, trig_ct_handle,
				    threshold));
}

int
PtlTriggeredSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
		 ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
		 ptl_size_t length, ptl_process_t target_id,
		 ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		 ptl_size_t remote_offset, void *user_ptr,
		 ptl_hdr_data_t hdr_data, const void *operand,
		 ptl_op_t operation, ptl_datatype_t datatype,
		 ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_atomic(SPINNIC_CMD_SWAP, put_md_handle,
				    local_put_offset, get_md_handle,
				    local_get_offset, length, PTL_NO_ACK_REQ,
				    target_id, pt_index, match_bits,
				    remote_offset, user_ptr, hdr_data, operand,
				    operation, datatype, trig_ct_handle,
				    threshold));
}

/* Body of PtlTriggeredCTInc and PtlTriggeredCTSet: a CT_INC or CT_SET
 * the NIC applies when it fires. @return 0 or a negative errno */
static int
trig_ct(uint16_t op, ptl_handle_ct_t ct_handle, ptl_ct_event_t v,
	ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;

	o = shim_to_ct(ct_handle, &ni);
	if (o == NULL || o->closing ||
	    (op == SPINNIC_CMD_CT_INC && !shim_ct_inc_ok(v))) {
		SHIM_DBG("bad CT %#llx or increment", (unsigned long long)ct_handle);
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = op;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	cmd.ct_success = v.success;
	cmd.ct_failure = v.failure;
	return shim_trig_post(&cmd, trig_ct_handle, threshold);
}

int
PtlTriggeredCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment,
		  ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_ct(SPINNIC_CMD_CT_INC, ct_handle, increment,
				trig_ct_handle, threshold));
}

int
PtlTriggeredCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct,
		  ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_ct(SPINNIC_CMD_CT_SET, ct_handle, new_ct,
				trig_ct_handle, threshold));
}

/* TRIG + ME_APPEND naming reserved entry @p h. @return 0 or a negative
 * errno */
static int
trig_me_link(ptl_handle_me_t h, ptl_handle_ct_t trig_ct_handle,
	     ptl_size_t threshold)
{
	/* NULL when the handle is bad, or another thread finalized the NI
	 * meanwhile */
	struct shim_ni *me_ni = shim_to_entry_ni(h, SHIM_KIND_ME);
	struct spinnic_cmd cmd;

	if (me_ni == NULL)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_ME_APPEND;
	cmd.ni = me_ni->nic_ni;
	cmd.md = shim_handle_idx(h);
	return shim_trig_post(&cmd, trig_ct_handle, threshold);
}

int
spin_triggered_me_link(ptl_handle_me_t me_handle,
		       ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_me_link(me_handle, trig_ct_handle, threshold));
}

/* Body of PtlTriggeredMEAppend: reserve the entry (a control round
 * trip: the handle exists from here on), then TRIG + ME_APPEND naming it;
 * a refused post gives the entry back. @return 0 or a negative errno */
static int
trig_me_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	       const ptl_me_t *me, ptl_list_t list, void *user_ptr,
	       ptl_handle_me_t *me_handle, ptl_handle_ct_t trig_ct_handle,
	       ptl_size_t threshold)
{
	struct shim_ni *ni;
	ptl_handle_me_t h;
	int rc;

	if (me_handle == NULL || shim_to_ct(trig_ct_handle, &ni) == NULL)
		return -EINVAL;
	rc = shim_entry_append_flags(ni_handle, pt_index, me, 0, list,
				     SPIN_CTX_NONE, user_ptr,
				     SPINNIC_CTRL_F_ME_RESERVE, &h);
	if (rc != 0)
		return rc;
	rc = trig_me_link(h, trig_ct_handle, threshold);
	if (rc != 0) {
		(void)shim_entry_unlink(h, SHIM_KIND_ME);
		return rc;
	}
	*me_handle = h;
	return 0;
}

int
PtlTriggeredMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		     const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
		     ptl_handle_me_t *me_handle, ptl_handle_ct_t trig_ct_handle,
		     ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_me_append(ni_handle, pt_index, me, ptl_list,
				       user_ptr, me_handle, trig_ct_handle,
				       threshold));
}

/* Body of PtlTriggeredMEUnlink. @return 0 or a negative errno */
static int
trig_me_unlink(ptl_handle_me_t me_handle, ptl_handle_ct_t trig_ct_handle,
	       ptl_size_t threshold)
{
	struct shim_ni *ni = shim_to_entry_ni(me_handle, SHIM_KIND_ME);
	struct spinnic_cmd cmd;

	if (ni == NULL)
		return -EINVAL;
	if (trig_period_of(ni) != 0) {
		SHIM_DBG("persistent triggered ME unlink: not supported");
		return -EINVAL;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_ME_UNLINK;
	cmd.ni = ni->nic_ni;
	cmd.md = shim_handle_idx(me_handle);
	return shim_trig_post(&cmd, trig_ct_handle, threshold);
}

int
PtlTriggeredMEUnlink(ptl_handle_me_t me_handle,
		     ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	SHIM_ENTER();
	return shim_ptl(trig_me_unlink(me_handle, trig_ct_handle, threshold));
}

/* @return 0 or a negative errno */
static int
ct_cancel(ptl_handle_ct_t ct_handle)
{
	struct spinnic_cmd cmd;
	struct shim_ni *ni;
	struct shim_obj *o;
	uint32_t end;
	int rc;

	o = shim_to_ct(ct_handle, &ni);
	if (o == NULL || o->closing)
		return -EINVAL;
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_CT_CANCEL_TRIG;
	cmd.ni = ni->nic_ni;
	cmd.md = o->nic_id;
	rc = shim_cmd_post_n(&cmd, 1, &end);
	/* "upon return": the NIC acted on it, and on every TRIG before it */
	return rc != 0 ? rc : shim_cmd_sync(end);
}

int
PtlCTCancelTriggered(ptl_handle_ct_t ct_handle)
{
	SHIM_ENTER();
	return shim_ptl(ct_cancel(ct_handle));
}
