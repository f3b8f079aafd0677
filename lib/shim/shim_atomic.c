/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomics of portals4.h: PtlAtomic, PtlFetchAtomic, PtlSwap (not
 * implemented yet: PTL_FAIL, doc/NOTES.md "Portals 4 completeness") and
 * PtlAtomicSync. The NIC side's arithmetic is lib/portals/atomic.c; the
 * command, wire and engine parts are still to come.
 */
#include <errno.h>

#include "shim_internal.h"

/* A call spinnic does not provide yet: logged, then PTL_FAIL (-ENOSYS
 * has no PTL code of its own). */
static int
atomic_missing(const char *call)
{
	SHIM_DBG("%s: not implemented yet", call);
	return shim_ptl(-ENOSYS);
}

int
PtlAtomic(ptl_handle_md_t md_handle, ptl_size_t local_offset,
	  ptl_size_t length, ptl_ack_req_t ack_req, ptl_process_t target_id,
	  ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
	  ptl_size_t remote_offset, void *user_ptr, ptl_hdr_data_t hdr_data,
	  ptl_op_t operation, ptl_datatype_t datatype)
{
	(void)md_handle; (void)local_offset; (void)length; (void)ack_req;
	(void)target_id; (void)pt_index; (void)match_bits;
	(void)remote_offset; (void)user_ptr; (void)hdr_data;
	(void)operation; (void)datatype;
	SHIM_ENTER();
	return atomic_missing(__func__);
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
	(void)get_md_handle; (void)local_get_offset; (void)put_md_handle;
	(void)local_put_offset; (void)length; (void)target_id;
	(void)pt_index; (void)match_bits; (void)remote_offset;
	(void)user_ptr; (void)hdr_data; (void)operation; (void)datatype;
	SHIM_ENTER();
	return atomic_missing(__func__);
}

int
PtlSwap(ptl_handle_md_t get_md_handle, ptl_size_t local_get_offset,
	ptl_handle_md_t put_md_handle, ptl_size_t local_put_offset,
	ptl_size_t length, ptl_process_t target_id, ptl_pt_index_t pt_index,
	ptl_match_bits_t match_bits, ptl_size_t remote_offset,
	void *user_ptr, ptl_hdr_data_t hdr_data, const void *operand,
	ptl_op_t operation, ptl_datatype_t datatype)
{
	(void)get_md_handle; (void)local_get_offset; (void)put_md_handle;
	(void)local_put_offset; (void)length; (void)target_id;
	(void)pt_index; (void)match_bits; (void)remote_offset;
	(void)user_ptr; (void)hdr_data; (void)operand; (void)operation;
	(void)datatype;
	SHIM_ENTER();
	return atomic_missing(__func__);
}

int
PtlAtomicSync(void)
{
	/* the NIC applies an atomic to host memory before its target event
	 * and caches nothing: there is never anything to flush */
	SHIM_ENTER();
	return PTL_OK;
}
