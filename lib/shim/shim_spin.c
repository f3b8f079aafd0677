/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sPIN additions (spin.h): execution contexts, MEs with a context, NIC
 * memory blobs, NIC information. Bytes the NIC copies (handler arguments,
 * blob contents) travel through the region: staged in the heap when the
 * caller's memory is elsewhere.
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

#define STAGE_CHUNK (1u << 20)

int
spin_ctx_install(ptl_handle_ni_t ni_handle, const struct spin_ctx_desc *d,
		 spin_handle_ctx_t *ctx_p)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	void *args = NULL;
	unsigned slot;
	size_t flen;
	ptl_handle_any_t h;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || d == NULL || ctx_p == NULL || d->family == NULL ||
	    (d->args == NULL && d->args_len > 0) || d->args_len > UINT32_MAX ||
	    d->state_len > UINT32_MAX || d->flags != 0 ||
	    (d->policy != SPIN_SCHED_DEFAULT &&
	     d->policy != SPIN_SCHED_BLOCKED_RR) ||
	    (d->policy == SPIN_SCHED_BLOCKED_RR && d->delta_p == 0))
		return PTL_ARG_INVALID;
	flen = strnlen(d->family, SPIN_HANDLER_NAME_MAX);
	if (flen == 0 || flen >= SPIN_HANDLER_NAME_MAX ||
	    flen >= SPINNIC_HANDLER_NAME)
		return PTL_ARG_INVALID;
	if (d->args_len > 0) {
		args = shim_heap_alloc(d->args_len);
		if (args == NULL)
			return PTL_NO_SPACE;
		memcpy(args, d->args, d->args_len);
	}
	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_CTX, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL) {
		shim_heap_free(args);
		return PTL_NO_SPACE;
	}
	shim_ctrl_prep_ctx(&msg, SPINNIC_CTRL_CTX_INSTALL, ni->nic_ni,
			   SPINNIC_HANDLE_NONE);
	memcpy(msg.u.ctx.family, d->family, flen);
	msg.u.ctx.args_off = args != NULL ? shim_region_off(args) : 0;
	msg.u.ctx.args_len = (uint32_t)d->args_len;
	msg.u.ctx.state_len = (uint32_t)d->state_len;
	msg.u.ctx.policy = d->policy == SPIN_SCHED_BLOCKED_RR ?
		SPINNIC_SCHED_BLOCKED_RR : SPINNIC_SCHED_DEFAULT;
	msg.u.ctx.delta_p = d->delta_p;
	msg.u.ctx.nvhpu = d->nvhpu;
	msg.u.ctx.flags = d->flags;
	rc = shim_ctrl_call(&msg);
	/* the NIC copied the arguments during the call */
	shim_heap_free(args);
	if (rc != 0) {
		shim_obj_release(o);
		return shim_ptl(rc);
	}
	o->nic_id = msg.u.ctx.ctx;
	*ctx_p = h;
	return PTL_OK;
}

int
spin_ctx_free(spin_handle_ctx_t ctx)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = shim_to_ctx(ctx, &ni);
	if (o == NULL)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_ctx(&msg, SPINNIC_CTRL_CTX_FREE, ni->nic_ni, o->nic_id);
	rc = shim_ctrl_call(&msg);
	/* spinnic gone: the context goes here all the same */
	if (rc == 0 || rc == -EIO)
		shim_obj_release(o);
	return shim_ptl(rc);
}

int
spin_me_append(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
	       const ptl_me_t *me, ptl_list_t list, spin_handle_ctx_t ctx,
	       void *user_ptr, ptl_handle_me_t *me_p)
{
	SHIM_ENTER();
	return shim_ptl(shim_entry_append(ni_handle, pt_index, me, 0, list,
					  ctx, user_ptr, me_p));
}

int
spin_nicmem_alloc(ptl_handle_ni_t ni_handle, size_t size,
		  spin_handle_nicmem_t *mem_p)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	unsigned slot;
	ptl_handle_any_t h;
	int rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, &slot);
	if (ni == NULL || mem_p == NULL || size == 0)
		return PTL_ARG_INVALID;
	if (shim_g.nic_mem_total > 0 && size > shim_g.nic_mem_total)
		return PTL_NO_SPACE;
	pthread_mutex_lock(&shim_g.lock);
	o = shim_obj_alloc(ni, slot, SHIM_KIND_NICMEM, &h);
	pthread_mutex_unlock(&shim_g.lock);
	if (o == NULL)
		return PTL_NO_SPACE;
	shim_ctrl_prep_nicmem(&msg, SPINNIC_CTRL_NICMEM_ALLOC, ni->nic_ni,
			      SPINNIC_HANDLE_NONE);
	msg.u.nicmem.size = size;
	rc = shim_ctrl_call(&msg);
	if (rc != 0) {
		shim_obj_release(o);
		return shim_ptl(rc);
	}
	o->nic_id = msg.u.nicmem.handle;
	o->u.nicmem.size = size;
	*mem_p = h;
	return PTL_OK;
}

int
spin_nicmem_write(spin_handle_nicmem_t mem, size_t offset, const void *src,
		  size_t len)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	uint8_t *stage = NULL;
	size_t done = 0;
	bool in_region;
	int rc = 0;

	SHIM_ENTER();
	o = shim_to_nicmem(mem, &ni);
	if (o == NULL || (src == NULL && len > 0) || offset > o->u.nicmem.size ||
	    len > o->u.nicmem.size - offset)
		return PTL_ARG_INVALID;
	if (len == 0)
		return PTL_OK;
	in_region = spin_host_contains(src, len);
	if (!in_region) {
		stage = shim_heap_alloc(len < STAGE_CHUNK ? len : STAGE_CHUNK);
		if (stage == NULL)
			return PTL_NO_SPACE;
	}
	while (done < len && rc == 0) {
		size_t n = len - done;
		const uint8_t *p = (const uint8_t *)src + done;

		if (!in_region) {
			if (n > STAGE_CHUNK)
				n = STAGE_CHUNK;
			memcpy(stage, p, n);
			p = stage;
		}
		shim_ctrl_prep_nicmem(&msg, SPINNIC_CTRL_NICMEM_WRITE, ni->nic_ni,
				      o->nic_id);
		msg.u.nicmem.src_off = shim_region_off(p);
		msg.u.nicmem.dst_off = offset + done;
		msg.u.nicmem.len = n;
		rc = shim_ctrl_call(&msg);
		done += n;
	}
	shim_heap_free(stage);
	return shim_ptl(rc);
}

int
spin_nicmem_free(spin_handle_nicmem_t mem)
{
	struct spinnic_ctrl_msg msg;
	struct shim_ni *ni;
	struct shim_obj *o;
	int rc;

	SHIM_ENTER();
	o = shim_to_nicmem(mem, &ni);
	if (o == NULL)
		return PTL_ARG_INVALID;
	shim_ctrl_prep_nicmem(&msg, SPINNIC_CTRL_NICMEM_FREE, ni->nic_ni,
			      o->nic_id);
	rc = shim_ctrl_call(&msg);
	/* spinnic gone: the handle goes here all the same */
	if (rc == 0 || rc == -EIO)
		shim_obj_release(o);
	return shim_ptl(rc);
}

int
spin_nicmem_id(spin_handle_nicmem_t mem, uint32_t *id_p)
{
	struct shim_obj *o;

	SHIM_ENTER();
	o = shim_to_nicmem(mem, NULL);
	if (o == NULL || id_p == NULL)
		return PTL_ARG_INVALID;
	*id_p = o->nic_id;
	return PTL_OK;
}

int
spin_nic_info(ptl_handle_ni_t ni_handle, struct spin_nic_info *info_p)
{
	SHIM_ENTER();
	if (shim_to_ni(ni_handle, NULL) == NULL || info_p == NULL)
		return PTL_ARG_INVALID;
	memset(info_p, 0, sizeof(*info_p));
	info_p->id.phys.nid = shim_g.id.nid;
	info_p->id.phys.pid = shim_g.id.pid;
	info_p->payload_size = shim_g.payload_size;
	info_p->nic_mem_total = shim_g.nic_mem_total;
	info_p->nhpu = shim_g.nhpu;
	info_p->region_size = shim_g.region.size;
	info_p->heap_size = shim_g.region.heap_size;
	return PTL_OK;
}
