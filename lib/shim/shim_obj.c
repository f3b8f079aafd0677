/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handles and the per-NI object tables behind them.
 */
#include <errno.h>
#include <string.h>

#include "shim_internal.h"

/* ---- handles and tables ------------------------------------------------ */

struct shim_ni *
shim_to_ni(ptl_handle_ni_t h, unsigned *slot_p)
{
	unsigned slot = shim_handle_ni(h);

	if (shim_handle_kind(h) != SHIM_KIND_NI || slot >= SHIM_NI_MAX ||
	    (h & 0xffffffffffffull) != 0 ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return NULL;
	if (slot_p != NULL)
		*slot_p = slot;
	return &shim_g.ni[slot];
}

struct shim_obj *
shim_obj_get(ptl_handle_any_t h, unsigned kind, struct shim_ni **ni_p)
{
	unsigned slot = shim_handle_ni(h);
	uint32_t idx = shim_handle_idx(h);
	struct shim_table *t;
	struct shim_obj *o;

	if (shim_handle_kind(h) != kind || slot >= SHIM_NI_MAX ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return NULL;
	t = &shim_g.ni[slot].tab[kind];
	if (idx >= t->cap)
		return NULL;
	o = &t->objs[idx];
	if (!__atomic_load_n(&o->used, __ATOMIC_ACQUIRE) ||
	    o->gen != shim_handle_gen(h))
		return NULL;
	if (ni_p != NULL)
		*ni_p = &shim_g.ni[slot];
	return o;
}

struct shim_ni *
shim_to_entry_ni(ptl_handle_any_t h, unsigned kind)
{
	unsigned slot = shim_handle_ni(h);

	if (shim_handle_kind(h) != kind || slot >= SHIM_NI_MAX ||
	    __atomic_load_n(&shim_g.ni[slot].refs, __ATOMIC_ACQUIRE) <= 0)
		return NULL;
	return &shim_g.ni[slot];
}

struct shim_obj *
shim_obj_alloc(struct shim_ni *ni, unsigned slot, unsigned kind,
	       ptl_handle_any_t *h_p)
{
	struct shim_table *t = &ni->tab[kind];

	for (uint32_t k = 0; k < t->cap; k++) {
		uint32_t i = (t->hint + k) % t->cap;
		struct shim_obj *o = &t->objs[i];

		if (o->used)
			continue;
		memset(&o->u, 0, sizeof(o->u));
		o->gen++;
		o->closing = 0;
		o->waiters = 0;
		o->nic_id = SPINNIC_HANDLE_NONE;
		__atomic_store_n(&o->used, 1, __ATOMIC_RELEASE);
		t->hint = i + 1;
		*h_p = shim_handle_make(kind, slot, o->gen, i);
		return o;
	}
	return NULL;
}

void
shim_obj_release(struct shim_obj *o)
{
	__atomic_store_n(&o->used, 0, __ATOMIC_RELEASE);
}

int64_t
shim_opt_handle(ptl_handle_any_t h, unsigned kind, unsigned slot)
{
	struct shim_obj *o;

	if ((kind == SHIM_KIND_EQ && h == PTL_EQ_NONE) ||
	    (kind == SHIM_KIND_CT && h == PTL_CT_NONE) ||
	    (kind == SHIM_KIND_CTX && h == SPIN_CTX_NONE))
		return SPINNIC_HANDLE_NONE;
	o = shim_obj_get(h, kind, NULL);
	if (o == NULL || shim_handle_ni(h) != slot || o->closing)
		return -EINVAL;
	return o->nic_id;
}
