/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Triggered operations of portals4.h: PtlTriggered{Put,Get,Atomic,
 * FetchAtomic,Swap,CTInc,CTSet} (not implemented yet: PTL_FAIL, doc/NOTES.md
 * "Portals 4 completeness"; max_triggered_ops is 0) and
 * PtlCTCancelTriggered, which has nothing to cancel until they exist.
 */
#include <errno.h>

#include "shim_internal.h"

/* A call spinnic does not provide yet: logged, then PTL_FAIL. */
static int
trig_missing(const char *call)
{
	SHIM_DBG("%s: triggered operations are not implemented yet", call);
	return shim_ptl(-ENOSYS);
}

int
PtlTriggeredPut(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		ptl_size_t length, ptl_ack_req_t ack_req,
		ptl_process_t target_id, ptl_pt_index_t pt_index,
		ptl_match_bits_t match_bits, ptl_size_t remote_offset,
		void *user_ptr, ptl_hdr_data_t hdr_data,
		ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	(void)md_handle; (void)local_offset; (void)length; (void)ack_req;
	(void)target_id; (void)pt_index; (void)match_bits;
	(void)remote_offset; (void)user_ptr; (void)hdr_data;
	(void)trig_ct_handle; (void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
}

int
PtlTriggeredGet(ptl_handle_md_t md_handle, ptl_size_t local_offset,
		ptl_size_t length, ptl_process_t target_id,
		ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		ptl_size_t remote_offset, void *user_ptr,
		ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	(void)md_handle; (void)local_offset; (void)length; (void)target_id;
	(void)pt_index; (void)match_bits; (void)remote_offset;
	(void)user_ptr; (void)trig_ct_handle; (void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
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
	(void)md_handle; (void)local_offset; (void)length; (void)ack_req;
	(void)target_id; (void)pt_index; (void)match_bits;
	(void)remote_offset; (void)user_ptr; (void)hdr_data;
	(void)operation; (void)datatype; (void)trig_ct_handle;
	(void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
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
	(void)get_md_handle; (void)local_get_offset; (void)put_md_handle;
	(void)local_put_offset; (void)length; (void)target_id;
	(void)pt_index; (void)match_bits; (void)remote_offset;
	(void)user_ptr; (void)hdr_data; (void)operation; (void)datatype;
	(void)trig_ct_handle; (void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
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
	(void)get_md_handle; (void)local_get_offset; (void)put_md_handle;
	(void)local_put_offset; (void)length; (void)target_id;
	(void)pt_index; (void)match_bits; (void)remote_offset;
	(void)user_ptr; (void)hdr_data; (void)operand; (void)operation;
	(void)datatype; (void)trig_ct_handle; (void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
}

int
PtlTriggeredCTInc(ptl_handle_ct_t ct_handle, ptl_ct_event_t increment,
		  ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	(void)ct_handle; (void)increment; (void)trig_ct_handle;
	(void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
}

int
PtlTriggeredCTSet(ptl_handle_ct_t ct_handle, ptl_ct_event_t new_ct,
		  ptl_handle_ct_t trig_ct_handle, ptl_size_t threshold)
{
	(void)ct_handle; (void)new_ct; (void)trig_ct_handle; (void)threshold;
	SHIM_ENTER();
	return trig_missing(__func__);
}

int
PtlCTCancelTriggered(ptl_handle_ct_t ct_handle)
{
	struct shim_obj *o;

	SHIM_ENTER();
	o = shim_to_ct(ct_handle, NULL);
	if (o == NULL || o->closing)
		return PTL_ARG_INVALID;
	/* every PtlTriggered* call fails: nothing can be waiting on it */
	return PTL_OK;
}
