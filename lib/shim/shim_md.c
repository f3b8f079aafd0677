/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory descriptors.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shim_internal.h"

/* ---- memory descriptors ------------------------------------------------- */

/* the NIC copies ptl_iovec_t arrays as struct ptl_iov_ent {addr, len} */
static_assert(sizeof(ptl_iovec_t) == 16 &&
	      offsetof(ptl_iovec_t, iov_len) == 8,
	      "ptl_iovec_t is the NIC's {addr, len}");
static_assert(SPIN_MD_STAGE == SPINNIC_PTL_MD_STAGE &&
	      (SPIN_MD_STAGE & PTL_MD_OPTIONS_MASK) == 0, "SPIN_MD_STAGE");

int
shim_mem_bytes(const struct shim_ni *ni, const void *start, ptl_size_t length,
	       unsigned int options, uint64_t *bytes_p)
{
	const ptl_iovec_t *iov = start;
	uint64_t sum = 0;

	if ((options & PTL_IOVEC) == 0) {
		/* start 0, length PTL_SIZE_MAX: all of memory, as every
		 * Portals MPI binds its MDs (each access is checked where it
		 * lands: the region, or the process's own memory) */
		if ((uint64_t)(uintptr_t)start + length <
		    (uint64_t)(uintptr_t)start)
			return -EINVAL;
		*bytes_p = length;
		return 0;
	}
	if (start == NULL || length == 0 || (ni->limits.max_iovecs > 0 &&
	    length > (ptl_size_t)ni->limits.max_iovecs))
		return -EINVAL;
	for (ptl_size_t i = 0; i < length; i++) {
		if ((iov[i].iov_base == NULL && iov[i].iov_len > 0) ||
		    iov[i].iov_len > INT64_MAX - sum)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	*bytes_p = sum;
	return 0;
}

int
PtlMDBind(ptl_handle_ni_t ni_handle, const ptl_md_t *md,
	  ptl_handle_md_t *md_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	int64_t eq, ct;
	uint64_t bytes;
	ptl_handle_any_t h;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || md == NULL || md_handle == NULL ||
	    (md->options & ~(PTL_MD_OPTIONS_MASK | SPIN_MD_STAGE)) != 0)
		return PTL_ARG_INVALID;
	eq = shim_opt_handle(md->eq_handle, SHIM_KIND_EQ, slot);
	ct = shim_opt_handle(md->ct_handle, SHIM_KIND_CT, slot);
	if (shim_mem_bytes(ni, md->start, md->length, md->options,
			   &bytes) != 0 || eq < 0 || ct < 0)
		return PTL_ARG_INVALID;

	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_MD, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL)
		return PTL_NO_SPACE;
	shim_ctrl_prep_ni(&msg, SPINNIC_CTRL_MD_BIND, ni->nic_ni);
	msg.u.md.start = (uint64_t)(uintptr_t)md->start;
	msg.u.md.length = md->length;
	msg.u.md.options = md->options;
	msg.u.md.eq = (uint32_t)eq;
	msg.u.md.ct = (uint32_t)ct;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		shim_obj_release(o);
		return shim_ptl(rc);
	}
	o->nic_id = msg.u.md.md;
	o->u.md.start = (uint64_t)(uintptr_t)md->start;
	o->u.md.length = bytes;
	o->u.md.entries = (md->options & PTL_IOVEC) ? md->length : 0;
	o->u.md.options = md->options;
	o->u.md.has_eq = eq != SPINNIC_HANDLE_NONE;
	o->u.md.has_ct = ct != SPINNIC_HANDLE_NONE;
	*md_handle = h;
	return PTL_OK;
}

int
PtlMDRelease(ptl_handle_md_t md_handle)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = shim_to_md(md_handle, &ni);
	if (o == NULL)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_md(&msg, SPINNIC_CTRL_MD_RELEASE, ni->nic_ni, o->nic_id);
	rc = shim_ctrl_call(&msg);
	/* spinnic gone: the MD goes here all the same */
	if (rc == 0 || rc == -EIO)
		shim_obj_release(o);
	return shim_ptl(rc);
}
