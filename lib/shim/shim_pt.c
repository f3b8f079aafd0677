/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Portal table entries.
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

/* ---- portal table ------------------------------------------------------- */

int
PtlPTAlloc(ptl_handle_ni_t ni_handle, unsigned int options,
	   ptl_handle_eq_t eq_handle, ptl_pt_index_t pt_index_req,
	   ptl_pt_index_t *pt_index)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int64_t eq;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || pt_index == NULL || (options & ~PTL_PT_ALLOC_OPTIONS_MASK) != 0 ||
	    (pt_index_req != PTL_PT_ANY && !shim_pt_index_ok(ni, pt_index_req)))
		return PTL_ARG_INVALID;
	eq = shim_opt_handle(eq_handle, SHIM_KIND_EQ, slot);
	if (eq < 0)
		return PTL_ARG_INVALID;
	if ((options & PTL_PT_FLOWCTRL) != 0 && eq == SPINNIC_HANDLE_NONE)
		return PTL_PT_EQ_NEEDED;
	shim_ctrl_prep_pt(&msg, SPINNIC_CTRL_PT_ALLOC, ni->nic_ni,
			  pt_index_req);
	msg.u.pt.options = options;
	msg.u.pt.eq = (uint32_t)eq;
	rc = shim_ctrl_call(&msg);
	if (rc == 0)
		*pt_index = msg.u.pt.pt_index;
	return shim_ptl(rc);
}

/* @return 0 or a negative errno */
static int
pt_op(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index, uint16_t op)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;

	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || pt_index == PTL_PT_ANY ||
	    !shim_pt_index_ok(ni, pt_index))
		return -EINVAL;
	shim_ctrl_prep_pt(&msg, op, ni->nic_ni, pt_index);
	return shim_ctrl_call(&msg);
}

int
PtlPTFree(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	SHIM_ENTER();
	return shim_ptl(pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_FREE));
}

int
PtlPTDisable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	SHIM_ENTER();
	return shim_ptl(pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_DISABLE));
}

int
PtlPTEnable(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index)
{
	SHIM_ENTER();
	return shim_ptl(pt_op(ni_handle, pt_index, SPINNIC_CTRL_PT_ENABLE));
}
