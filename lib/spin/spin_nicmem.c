/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NIC memory: one fixed arena (the emulated SRAM), first-fit over a sorted
 * list of free extents kept outside the arena (so capacity is exactly what
 * clients can use), neighbours coalesced on free, 64-B granularity, one
 * spinlock. Every allocation is charged to an owner (client id).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spin_internal.h"

int
spin_arena_init(struct spin_arena *a, uint64_t cap, unsigned max_allocs,
		unsigned max_owners, uint64_t per_owner_cap)
{
	memset(a, 0, sizeof(*a));
	rte_spinlock_init(&a->lock);
	cap &= ~(uint64_t)(SPIN_ALIGN - 1);
	if (cap == 0 || max_owners == 0)
		return -EINVAL;
	a->base = aligned_alloc(SPIN_ALIGN, cap);
	/* free extents never outnumber live allocations + 1 */
	a->free_max = max_allocs + 1;
	a->free = calloc(a->free_max, sizeof(*a->free));
	a->owners = calloc(max_owners, sizeof(*a->owners));
	if (a->base == NULL || a->free == NULL || a->owners == NULL) {
		spin_arena_fini(a);
		return -ENOMEM;
	}
	a->cap = cap;
	a->max_owners = max_owners;
	a->per_owner_cap = per_owner_cap;
	a->free[0] = (struct spin_extent){ .off = 0, .len = cap };
	a->nfree = 1;
	return 0;
}

void
spin_arena_fini(struct spin_arena *a)
{
	free(a->base);
	free(a->free);
	free(a->owners);
	a->base = NULL;
	a->free = NULL;
	a->owners = NULL;
}

static struct spin_owner_acct *
arena_owner(struct spin_arena *a, uint32_t owner, bool create)
{
	struct spin_owner_acct *slot = NULL;
	unsigned i;

	for (i = 0; i < a->max_owners; i++) {
		struct spin_owner_acct *o = &a->owners[i];

		if (o->nobj != 0 && o->owner == owner)
			return o;
		if (o->nobj == 0 && slot == NULL)
			slot = o;
	}
	if (!create || slot == NULL)
		return NULL;
	slot->owner = owner;
	slot->bytes = 0;
	return slot;
}

static int
arena_alloc(struct spin_arena *a, uint32_t owner, uint64_t size,
	    uint64_t *off_p, bool zero)
{
	struct spin_owner_acct *o;
	unsigned i;
	int rc = -ENOMEM;

	if (size == 0 || size > a->cap)
		goto fail_unlocked;
	size = spin_round(size);
	rte_spinlock_lock(&a->lock);
	o = arena_owner(a, owner, true);
	if (o == NULL) {
		rc = -ENOSPC;
		goto fail;
	}
	if (a->per_owner_cap != 0 && o->bytes + size > a->per_owner_cap)
		goto fail;
	for (i = 0; i < a->nfree; i++) {
		struct spin_extent *e = &a->free[i];

		if (e->len < size)
			continue;
		*off_p = e->off;
		e->off += size;
		e->len -= size;
		if (e->len == 0) {
			memmove(e, e + 1, (a->nfree - i - 1) * sizeof(*e));
			a->nfree--;
		}
		o->nobj++;
		o->bytes += size;
		a->used += size;
		a->allocs++;
		rte_spinlock_unlock(&a->lock);
		if (zero)
			memset(a->base + *off_p, 0, size);
		return 0;
	}
fail:
	a->failures++;
	rte_spinlock_unlock(&a->lock);
	return rc;
fail_unlocked:
	__atomic_fetch_add(&a->failures, 1, __ATOMIC_RELAXED);
	return rc;
}

int
spin_arena_alloc(struct spin_arena *a, uint32_t owner, uint64_t size,
		 uint64_t *off_p)
{
	return arena_alloc(a, owner, size, off_p, true);
}

void
spin_arena_free(struct spin_arena *a, uint32_t owner, uint64_t off,
		uint64_t size)
{
	struct spin_owner_acct *o;
	unsigned lo = 0, hi, i;
	bool merge_prev, merge_next;

	size = spin_round(size);
	rte_spinlock_lock(&a->lock);
	/* first extent after off */
	hi = a->nfree;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (a->free[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	merge_prev = i > 0 && a->free[i - 1].off + a->free[i - 1].len == off;
	merge_next = i < a->nfree && off + size == a->free[i].off;
	if (merge_prev && merge_next) {
		a->free[i - 1].len += size + a->free[i].len;
		memmove(&a->free[i], &a->free[i + 1],
			(a->nfree - i - 1) * sizeof(a->free[0]));
		a->nfree--;
	} else if (merge_prev) {
		a->free[i - 1].len += size;
	} else if (merge_next) {
		a->free[i].off = off;
		a->free[i].len += size;
	} else {
		RTE_VERIFY(a->nfree < a->free_max);
		memmove(&a->free[i + 1], &a->free[i],
			(a->nfree - i) * sizeof(a->free[0]));
		a->free[i] = (struct spin_extent){ .off = off, .len = size };
		a->nfree++;
	}
	o = arena_owner(a, owner, false);
	if (o != NULL) {
		o->bytes -= size;
		o->nobj--;
	}
	a->used -= size;
	a->frees++;
	rte_spinlock_unlock(&a->lock);
}

uint64_t
spin_arena_owner_bytes(struct spin_arena *a, uint32_t owner)
{
	struct spin_owner_acct *o;
	uint64_t n;

	rte_spinlock_lock(&a->lock);
	o = arena_owner(a, owner, false);
	n = o != NULL ? o->bytes : 0;
	rte_spinlock_unlock(&a->lock);
	return n;
}

uint64_t
spin_rt_nicmem_owner_usage(struct spin_rt *rt, uint32_t owner)
{
	return spin_arena_owner_bytes(&rt->arena, owner);
}

void
spin_rt_nicmem_stats(struct spin_rt *rt, struct spin_nicmem_stats *s_p)
{
	struct spin_arena *a = &rt->arena;
	unsigned i;

	memset(s_p, 0, sizeof(*s_p));
	rte_spinlock_lock(&a->lock);
	s_p->capacity = a->cap;
	s_p->used = a->used;
	for (i = 0; i < a->nfree; i++)
		if (a->free[i].len > s_p->largest_free)
			s_p->largest_free = a->free[i].len;
	s_p->allocs = a->allocs;
	s_p->frees = a->frees;
	s_p->failures = a->failures;
	rte_spinlock_unlock(&a->lock);
}

void *
spin_rt_stage_alloc(struct spin_rt *rt, uint32_t owner, uint64_t size)
{
	uint64_t off;
	int rc = arena_alloc(&rt->arena, owner, size, &off, false);

	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	return rt->arena.base + off;
}

void
spin_rt_stage_free(struct spin_rt *rt, uint32_t owner, void *p, uint64_t size)
{
	if (p != NULL)
		spin_arena_free(&rt->arena, owner,
				(uint64_t)((uint8_t *)p - rt->arena.base), size);
}
