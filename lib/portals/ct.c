/* SPDX-License-Identifier: BSD-3-Clause */
/* Counting events in the client's region; each change offers the CT's
 * triggered operations to trig.c. */
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptl_internal.h"
#include "trig.h"

int
ptl_ctrl_ct(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_ct *r)
{
	struct ptl_ni *ni = ptl_ni_get(c, r->ni);
	unsigned kind = ptl_handle_ni(r->ni);
	struct ptl_ct *ct;
	uint32_t i;

	if (ni == NULL)
		return SPINNIC_PTL_ARG_INVALID;
	if (op == SPINNIC_CTRL_CT_FREE) {
		if (!ptl_ct_valid(ni, kind, r->ct))
			return SPINNIC_PTL_ARG_INVALID;
		ct = &ni->cts[ptl_handle_idx(r->ct)];
		ptl_lock(&ct->lock);
		ptl_trig_drop_locked(c, kind, ct);
		ct->used = false;
		ct->gen++;
		ct->rec = NULL;
		ptl_unlock(&ct->lock);
		return SPINNIC_PTL_OK;
	}
	if (r->ct_off % 64 != 0 ||
	    r->ct_off < sizeof(struct spinnic_region_hdr) ||
	    !ptl_range_ok(r->ct_off, sizeof(struct spinnic_ct), c->size))
		return SPINNIC_PTL_ARG_INVALID;
	for (i = 0; i < ni->n_ct; i++)
		if (!ni->cts[i].used)
			break;
	if (i == ni->n_ct)
		return SPINNIC_PTL_NO_SPACE;
	ct = &ni->cts[i];
	ptl_lock(&ct->lock);
	ct->rec = (struct spinnic_ct *)(c->region + r->ct_off);
	__atomic_store_n(&ct->rec->success, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ct->rec->failure, 0, __ATOMIC_RELEASE);
	ct->used = true;
	ptl_unlock(&ct->lock);
	r->ct = ptl_handle(kind, PTL_HT_CT, ct->gen, i);
	return SPINNIC_PTL_OK;
}

/* nic->lock held */
void
ptl_ct_release_all(struct ptl_client *c, unsigned kind)
{
	struct ptl_ni *ni = &c->ni[kind];
	uint32_t i;

	for (i = 0; i < ni->n_ct; i++) {
		struct ptl_ct *ct = &ni->cts[i];

		if (!ct->used)
			continue;
		ptl_lock(&ct->lock);
		ptl_trig_drop_locked(c, kind, ct);
		ct->used = false;
		ct->gen++;
		ct->rec = NULL;
		ptl_unlock(&ct->lock);
	}
}

static int
ct_update(struct ptl_client *c, uint32_t h, uint64_t success,
	  uint64_t failure, bool set)
{
	struct ptl_nic *nic = c->nic;
	struct ptl_ni *ni = &c->ni[ptl_handle_ni(h)];
	uint32_t i = ptl_handle_idx(h);
	struct spinnic_ct *rec;
	struct ptl_ct *ct;
	bool wake;

	if (h == PTL_NONE)
		return 0;
	if (!ptl_client_is_alive(c)) {
		PTL_STAT(nic, dead_client);
		return -ESHUTDOWN;
	}
	if (ptl_handle_type(h) != PTL_HT_CT || !ni->allocated || i >= ni->n_ct) {
		PTL_STAT(nic, ct_bad);
		return -EBADF;
	}
	ct = &ni->cts[i];
	ptl_lock(&ct->lock);
	if (!ct->used || (ct->gen & PTL_H_GEN_MASK) != ptl_handle_gen(h)) {
		ptl_unlock(&ct->lock);
		PTL_STAT(nic, ct_bad);
		return -EBADF;
	}
	rec = ct->rec;
	if (set) {
		__atomic_store_n(&rec->success, success, __ATOMIC_RELEASE);
		__atomic_store_n(&rec->failure, failure, __ATOMIC_RELEASE);
	} else {
		if (success)
			__atomic_fetch_add(&rec->success, success,
					   __ATOMIC_RELEASE);
		if (failure)
			__atomic_fetch_add(&rec->failure, failure,
					   __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&rec->futex, 1, __ATOMIC_RELEASE);
	wake = __atomic_load_n(&rec->waiters, __ATOMIC_ACQUIRE) != 0;
	ptl_trig_fire_locked(c, ptl_handle_ni(h), ct);
	ptl_unlock(&ct->lock);
	PTL_STAT(nic, ct_updates);
	/* what the update fired goes first; a host asleep on the counter
	 * is woken after, outside the lock (a system call: it cost a
	 * triggered put 2-7x when made before, under the lock) */
	ptl_trig_run(c);
	if (wake) {
		syscall(SYS_futex, (uint32_t *)&rec->futex, FUTEX_WAKE,
			INT_MAX, NULL, NULL, 0);
		PTL_STAT(nic, futex_wakes);
	}
	return 0;
}

int
ptl_ct_inc(struct ptl_client *c, uint32_t ct, uint64_t success,
	   uint64_t failure)
{
	return ct_update(c, ct, success, failure, false);
}

int
ptl_ct_set(struct ptl_client *c, uint32_t ct, uint64_t success,
	   uint64_t failure)
{
	return ct_update(c, ct, success, failure, true);
}
