/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * List entries: MEs (matching NIs) and LEs (non-matching NIs).
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

#define ME_OPTIONS PTL_ME_OPTIONS_MASK
#define LE_OPTIONS PTL_LE_OPTIONS_MASK

/* ---- list entries ------------------------------------------------------- */

int
shim_entry_fill(struct shim_ni *ni, unsigned slot, ptl_pt_index_t pt_index,
	   const ptl_me_t *me, int is_le, ptl_handle_any_t ctx_h, void *user_ptr,
	   struct spinnic_ctrl_me *m)
{
	unsigned int mask = is_le ? LE_OPTIONS : ME_OPTIONS;
	int64_t ct, ctx;
	uint64_t bytes;
	int rc;

	if ((me->options & ~mask) != 0 || pt_index == PTL_PT_ANY ||
	    !shim_pt_index_ok(ni, pt_index) ||
	    shim_mem_bytes(ni, me->start, me->length, me->options,
			   &bytes) != 0)
		return -EINVAL;
	ct = shim_opt_handle(me->ct_handle, SHIM_KIND_CT, slot);
	ctx = shim_opt_handle(ctx_h, SHIM_KIND_CTX, slot);
	if (ct < 0 || ctx < 0)
		return -EINVAL;
	m->pt_index = pt_index;
	m->me = SPINNIC_HANDLE_NONE;
	m->start = (uint64_t)(uintptr_t)me->start;
	m->length = me->length;
	m->options = me->options;
	m->ct = (uint32_t)ct;
	m->uid = me->uid;
	m->ctx = (uint32_t)ctx;
	m->user_ptr = (uint64_t)(uintptr_t)user_ptr;
	if (is_le) {
		m->match_id.nid = PTL_NID_ANY;
		m->match_id.pid = PTL_PID_ANY;
		return 0;
	}
	rc = shim_target(ni, me->match_id, &m->match_id, 1);
	if (rc != 0)
		return rc;
	m->match_bits = me->match_bits;
	m->ignore_bits = me->ignore_bits;
	m->min_free = me->min_free;
	return 0;
}

int
shim_entry_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		  const ptl_me_t *me, int is_le, ptl_list_t list,
		  ptl_handle_any_t ctx_h, void *user_ptr,
		  ptl_handle_any_t *h_p)
{
	return shim_entry_append_flags(ni_handle, pt_index, me, is_le, list,
				       ctx_h, user_ptr, 0, h_p);
}

int
shim_entry_append_flags(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
			const ptl_me_t *me, int is_le, ptl_list_t list,
			ptl_handle_any_t ctx_h, void *user_ptr, uint16_t flags,
			ptl_handle_any_t *h_p)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int rc;

	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || me == NULL || h_p == NULL ||
	    (list != PTL_PRIORITY_LIST && list != PTL_OVERFLOW_LIST) ||
	    ((ni->options & PTL_NI_NO_MATCHING) != 0) != (is_le != 0))
		return -EINVAL;
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_ME_APPEND, ni->nic_ni);
	rc = shim_entry_fill(ni, slot, pt_index, me, is_le, ctx_h, user_ptr,
			&msg.u.me);
	if (rc != 0)
		return rc;
	msg.u.me.list = list;
	msg.flags = flags;
	rc = shim_ctrl_call(&msg);
	if (rc != 0)
		return rc;
	*h_p = shim_handle_make(is_le ? SHIM_KIND_LE : SHIM_KIND_ME, slot, 0,
				msg.u.me.me);
	return 0;
}

int
shim_entry_unlink(ptl_handle_any_t h, unsigned kind)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;

	ni = shim_to_entry_ni(h, kind);
	if (ni == NULL)
		return -EINVAL;
	shim_ctrl_prep_me(&msg, SPINNIC_CTRL_ME_UNLINK, ni->nic_ni,
			  shim_handle_idx(h));
	return shim_ctrl_call(&msg);
}

/* @return 0 or a negative errno */
static int
entry_search(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	     const ptl_me_t *me, int is_le, ptl_search_op_t op,
	     void *user_ptr)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	unsigned slot;
	int rc;

	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || me == NULL ||
	    (op != PTL_SEARCH_ONLY && op != PTL_SEARCH_DELETE) ||
	    ((ni->options & PTL_NI_NO_MATCHING) != 0) != (is_le != 0))
		return -EINVAL;
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_ME_SEARCH, ni->nic_ni);
	rc = shim_entry_fill(ni, slot, pt_index, me, is_le, SPIN_CTX_NONE, user_ptr,
			&msg.u.me);
	if (rc != 0)
		return rc;
	msg.u.me.list = op;
	return shim_ctrl_call(&msg);
}

/* ptl_le_t as a ptl_me_t without matching */
static ptl_me_t
le_to_me(const ptl_le_t *le)
{
	ptl_me_t me = {
		.start = le->start, .length = le->length,
		.ct_handle = le->ct_handle, .uid = le->uid,
		.options = le->options,
	};

	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	return me;
}

int
PtlMEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_me_t *me, ptl_list_t ptl_list, void *user_ptr,
	    ptl_handle_me_t *me_handle)
{
	SHIM_ENTER();
	return shim_ptl(shim_entry_append(ni_handle, pt_index, me, 0, ptl_list,
					  SPIN_CTX_NONE, user_ptr, me_handle));
}

int
PtlMEUnlink(ptl_handle_me_t me_handle)
{
	SHIM_ENTER();
	return shim_ptl(shim_entry_unlink(me_handle, SHIM_KIND_ME));
}

int
PtlMESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_me_t *me, ptl_search_op_t ptl_search_op, void *user_ptr)
{
	SHIM_ENTER();
	return shim_ptl(entry_search(ni_handle, pt_index, me, 0,
				     ptl_search_op, user_ptr));
}

int
PtlLEAppend(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_le_t *le, ptl_list_t ptl_list, void *user_ptr,
	    ptl_handle_le_t *le_handle)
{
	ptl_me_t me;

	SHIM_ENTER();
	if (le == NULL)
		return PTL_ARG_INVALID;
	me = le_to_me(le);
	return shim_ptl(shim_entry_append(ni_handle, pt_index, &me, 1,
					  ptl_list, SPIN_CTX_NONE, user_ptr,
					  le_handle));
}

int
PtlLEUnlink(ptl_handle_le_t le_handle)
{
	SHIM_ENTER();
	return shim_ptl(shim_entry_unlink(le_handle, SHIM_KIND_LE));
}

int
PtlLESearch(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	    const ptl_le_t *le, ptl_search_op_t ptl_search_op, void *user_ptr)
{
	ptl_me_t me;

	SHIM_ENTER();
	if (le == NULL)
		return PTL_ARG_INVALID;
	me = le_to_me(le);
	return shim_ptl(entry_search(ni_handle, pt_index, &me, 1,
				     ptl_search_op, user_ptr));
}
