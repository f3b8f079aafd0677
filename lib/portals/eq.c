/* SPDX-License-Identifier: BSD-3-Clause */
/* Event queues in the client's region: allocation and the event writer. */
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ptl_internal.h"

#define EQ_MAX_COUNT (1u << 20)

/* Wake every waiter on a futex word of the shared mapping (not private:
 * the client waits on its own mapping of the same memfd). */
static void
futex_wake_shared(struct ptl_nic *nic, volatile uint32_t *word,
		  volatile uint32_t *waiters)
{
	__atomic_fetch_add(word, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(waiters, __ATOMIC_ACQUIRE) == 0)
		return;
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL,
		0);
	PTL_STAT(nic, futex_wakes);
}

int
ptl_ctrl_eq(struct ptl_nic *nic, struct ptl_client *c, uint16_t op,
	    struct spinnic_ctrl_eq *r)
{
	struct ptl_ni *ni;
	struct ptl_eq *eq;
	unsigned kind;
	uint64_t bytes;
	uint32_t i;

	if (op == SPINNIC_CTRL_EQ_FREE) {
		ni = ptl_ni_get(c, r->ni);
		kind = ptl_handle_ni(r->ni);
		if (ni == NULL || !ptl_eq_valid(ni, kind, r->eq))
			return SPINNIC_PTL_ARG_INVALID;
		eq = &ni->eqs[ptl_handle_idx(r->eq)];
		ptl_lock(&eq->lock);
		eq->used = false;
		eq->gen++;
		eq->ring = NULL;
		ptl_unlock(&eq->lock);
		return SPINNIC_PTL_OK;
	}
	ni = ptl_ni_get(c, r->ni);
	kind = ptl_handle_ni(r->ni);
	if (ni == NULL || !ptl_is_pow2(r->count) || r->count > EQ_MAX_COUNT ||
	    r->ring_off % 64 != 0 ||
	    r->ring_off < sizeof(struct spinnic_region_hdr))
		return SPINNIC_PTL_ARG_INVALID;
	bytes = sizeof(struct spinnic_eq) +
		(uint64_t)r->count * sizeof(struct spinnic_event);
	if (!ptl_range_ok(r->ring_off, bytes, c->size))
		return SPINNIC_PTL_ARG_INVALID;
	for (i = 0; i < ni->n_eq; i++)
		if (!ni->eqs[i].used)
			break;
	if (i == ni->n_eq)
		return SPINNIC_PTL_NO_SPACE;
	eq = &ni->eqs[i];
	ptl_lock(&eq->lock);
	eq->ring = (struct spinnic_eq *)(c->region + r->ring_off);
	eq->count = r->count;
	/* start where the consumer is */
	eq->head = __atomic_load_n(&eq->ring->tail, __ATOMIC_ACQUIRE);
	eq->owed = 0;
	eq->ring->mask = r->count - 1;
	__atomic_store_n(&eq->ring->dropped, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&eq->ring->head, eq->head, __ATOMIC_RELEASE);
	eq->used = true;
	ptl_unlock(&eq->lock);
	r->eq = ptl_handle(kind, PTL_HT_EQ, eq->gen, i);
	return SPINNIC_PTL_OK;
}

/* nic->lock held */
void
ptl_eq_release_all(struct ptl_ni *ni)
{
	uint32_t i;

	for (i = 0; i < ni->n_eq; i++) {
		struct ptl_eq *eq = &ni->eqs[i];

		if (!eq->used)
			continue;
		ptl_lock(&eq->lock);
		eq->used = false;
		eq->gen++;
		eq->ring = NULL;
		ptl_unlock(&eq->lock);
	}
}

static struct ptl_eq *
eq_lookup(struct ptl_client *c, uint32_t h)
{
	struct ptl_ni *ni = &c->ni[ptl_handle_ni(h)];
	uint32_t i = ptl_handle_idx(h);

	if (ptl_handle_type(h) != PTL_HT_EQ || !ni->allocated || i >= ni->n_eq)
		return NULL;
	return &ni->eqs[i];
}

/*
 * Flow control: room for @p n more events of a message matched now, its
 * events posted when it completes (later: staged writes, handlers). The
 * room is reserved until ptl_eq_unreserve(), so messages matched before
 * the first completes cannot together overflow the EQ (the event of one
 * of them would be dropped while its initiator is told it was delivered).
 * The last slot is kept for the PT_DISABLED event that flow control posts
 * (the specification reserves it).
 * @return 0; -ENOSPC when the EQ has no such room (the PT is to be
 *   disabled); -EAGAIN when it would have without the room reserved
 */
int
ptl_eq_reserve(struct ptl_client *c, uint32_t h, unsigned n)
{
	struct ptl_eq *eq;
	int rc = 0;

	if (h == PTL_NONE || n == 0 || (eq = eq_lookup(c, h)) == NULL)
		return 0;
	ptl_lock(&eq->lock);
	if (eq->used && (eq->gen & PTL_H_GEN_MASK) == ptl_handle_gen(h)) {
		uint32_t tail = __atomic_load_n(&eq->ring->tail,
						__ATOMIC_ACQUIRE);
		uint64_t busy = (uint64_t)(uint32_t)(eq->head - tail) +
				eq->owed + n;

		if (busy <= eq->count - 1)
			eq->owed += n;
		else
			rc = busy - eq->owed <= eq->count - 1 ? -EAGAIN :
			     -ENOSPC;
	}
	ptl_unlock(&eq->lock);
	return rc;
}

/* The events of a ptl_eq_reserve() were posted (or never will be). An EQ
 * freed or reallocated meanwhile started again from 0. */
void
ptl_eq_unreserve(struct ptl_client *c, uint32_t h, unsigned n)
{
	struct ptl_eq *eq;

	if (h == PTL_NONE || n == 0 || (eq = eq_lookup(c, h)) == NULL)
		return;
	ptl_lock(&eq->lock);
	if (eq->used && (eq->gen & PTL_H_GEN_MASK) == ptl_handle_gen(h))
		eq->owed = eq->owed >= n ? eq->owed - n : 0;
	ptl_unlock(&eq->lock);
}

int
ptl_eq_post(struct ptl_client *c, uint32_t h, const struct spinnic_event *ev)
{
	struct ptl_nic *nic = c->nic;
	struct spinnic_event *slot;
	struct ptl_eq *eq;
	uint32_t tail, head;

	if (h == PTL_NONE)
		return 0;
	if (!ptl_client_is_alive(c)) {
		PTL_STAT(nic, dead_client);
		return -ESHUTDOWN;
	}
	eq = eq_lookup(c, h);
	if (eq == NULL) {
		PTL_STAT(nic, eq_bad);
		return -EBADF;
	}
	ptl_lock(&eq->lock);
	if (!eq->used || (eq->gen & PTL_H_GEN_MASK) != ptl_handle_gen(h)) {
		ptl_unlock(&eq->lock);
		PTL_STAT(nic, eq_bad);
		return -EBADF;
	}
	head = eq->head;
	tail = __atomic_load_n(&eq->ring->tail, __ATOMIC_ACQUIRE);
	/* full, or a consumer index we cannot believe: drop, touch nothing
	 * but the dropped counter */
	if (head - tail >= eq->count) {
		__atomic_fetch_add(&eq->ring->dropped, 1, __ATOMIC_RELEASE);
		futex_wake_shared(nic, &eq->ring->futex, &eq->ring->waiters);
		ptl_unlock(&eq->lock);
		PTL_STAT(nic, eq_dropped);
		return -ENOBUFS;
	}
	slot = &eq->ring->slots[head & (eq->count - 1)];
	memcpy(slot, ev, offsetof(struct spinnic_event, seq));
	__atomic_store_n(&slot->seq, head + 1, __ATOMIC_RELEASE);
	eq->head = head + 1;
	__atomic_store_n(&eq->ring->head, head + 1, __ATOMIC_RELEASE);
	futex_wake_shared(nic, &eq->ring->futex, &eq->ring->waiters);
	ptl_unlock(&eq->lock);
	PTL_STAT(nic, eq_posted);
	return 0;
}
