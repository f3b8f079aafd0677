/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inbound message table (engine.h): chained hash over a fixed array of
 * entries, two age lists (live, done) and a free list, all by index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct age_list {
	uint32_t head, tail; /* head: oldest */
	uint32_t count;
};

struct spinnic_msgtab {
	uint32_t capacity;
	uint32_t bucket_mask;
	size_t entry_size;
	uint32_t free_head;     /* chained through hnext */
	struct age_list live, done;
	struct spinnic_msgtab_stats st;
	uint32_t *buckets;
	unsigned char *entries;
};

static inline struct spinnic_msg_link *
ent(const struct spinnic_msgtab *t, uint32_t i)
{
	return (struct spinnic_msg_link *)(t->entries + (size_t)i * t->entry_size);
}

static inline uint32_t
ent_index(const struct spinnic_msgtab *t, const void *e)
{
	return (uint32_t)(((const unsigned char *)e - t->entries) / t->entry_size);
}

static inline uint32_t
key_hash(const struct spinnic_msg_key *k)
{
	uint64_t h = k->id * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)k->nid << 32 | k->pid) * 0xc2b2ae3d27d4eb4full;
	h ^= h >> 29;
	return (uint32_t)h;
}

static inline int
key_eq(const struct spinnic_msg_key *a, const struct spinnic_msg_key *b)
{
	return a->id == b->id && a->nid == b->nid && a->pid == b->pid;
}

static void
age_push(struct spinnic_msgtab *t, struct age_list *l, uint32_t i)
{
	struct spinnic_msg_link *e = ent(t, i);

	e->prev = l->tail;
	e->next = MSGTAB_NIL;
	if (l->tail != MSGTAB_NIL)
		ent(t, l->tail)->next = i;
	else
		l->head = i;
	l->tail = i;
	l->count++;
}

static void
age_unlink(struct spinnic_msgtab *t, struct age_list *l, uint32_t i)
{
	struct spinnic_msg_link *e = ent(t, i);

	if (e->prev != MSGTAB_NIL)
		ent(t, e->prev)->next = e->next;
	else
		l->head = e->next;
	if (e->next != MSGTAB_NIL)
		ent(t, e->next)->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = MSGTAB_NIL;
	l->count--;
}

static void
bucket_unlink(struct spinnic_msgtab *t, uint32_t i)
{
	uint32_t *pp = &t->buckets[key_hash(&ent(t, i)->key) & t->bucket_mask];

	while (*pp != MSGTAB_NIL) {
		if (*pp == i) {
			*pp = ent(t, i)->hnext;
			return;
		}
		pp = &ent(t, *pp)->hnext;
	}
}

struct spinnic_msgtab *
spinnic_msgtab_create(uint32_t capacity, size_t entry_size)
{
	struct spinnic_msgtab *t;
	uint32_t nb = 1, i;

	if (capacity == 0 || capacity >= MSGTAB_NIL ||
	    entry_size < sizeof(struct spinnic_msg_link)) {
		errno = EINVAL;
		return NULL;
	}
	/* keep entries aligned like the link (8 bytes) */
	entry_size = (entry_size + 7) & ~(size_t)7;
	while (nb < capacity && nb < (1u << 30))
		nb <<= 1;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->buckets = malloc(sizeof(*t->buckets) * nb);
	t->entries = calloc(capacity, entry_size);
	if (t->buckets == NULL || t->entries == NULL) {
		free(t->entries);
		free(t->buckets);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->capacity = capacity;
	t->bucket_mask = nb - 1;
	t->entry_size = entry_size;
	for (i = 0; i < nb; i++)
		t->buckets[i] = MSGTAB_NIL;
	for (i = 0; i < capacity; i++) {
		ent(t, i)->hnext = i + 1 < capacity ? i + 1 : MSGTAB_NIL;
		ent(t, i)->prev = ent(t, i)->next = MSGTAB_NIL;
	}
	t->free_head = 0;
	t->live.head = t->live.tail = MSGTAB_NIL;
	t->done.head = t->done.tail = MSGTAB_NIL;
	return t;
}

void
spinnic_msgtab_free(struct spinnic_msgtab *t)
{
	if (t == NULL)
		return;
	free(t->entries);
	free(t->buckets);
	free(t);
}

void *
spinnic_msgtab_lookup(struct spinnic_msgtab *t,
		      const struct spinnic_msg_key *key)
{
	uint32_t i = t->buckets[key_hash(key) & t->bucket_mask];

	while (i != MSGTAB_NIL) {
		struct spinnic_msg_link *e = ent(t, i);

		if (key_eq(&e->key, key))
			return e;
		i = e->hnext;
	}
	return NULL;
}

void *
spinnic_msgtab_insert(struct spinnic_msgtab *t,
		      const struct spinnic_msg_key *key, uint64_t now)
{
	struct spinnic_msg_link *e;
	uint32_t i, b;

	if (t->free_head != MSGTAB_NIL) {
		i = t->free_head;
		t->free_head = ent(t, i)->hnext;
	} else if (t->done.head != MSGTAB_NIL) {
		/* forget the oldest finished message */
		i = t->done.head;
		age_unlink(t, &t->done, i);
		bucket_unlink(t, i);
		t->st.recycled++;
	} else {
		t->st.full++;
		return NULL;
	}
	e = ent(t, i);
	memset(e, 0, t->entry_size);
	e->key = *key;
	e->state = SPINNIC_MSG_LIVE;
	e->touched = now;
	b = key_hash(key) & t->bucket_mask;
	e->hnext = t->buckets[b];
	t->buckets[b] = i;
	age_push(t, &t->live, i);
	t->st.inserted++;
	return e;
}

void
spinnic_msgtab_touch(struct spinnic_msgtab *t, void *p, uint64_t now)
{
	struct spinnic_msg_link *e = p;
	uint32_t i = ent_index(t, p);

	e->touched = now;
	if (e->state == SPINNIC_MSG_LIVE && e->next != MSGTAB_NIL) {
		age_unlink(t, &t->live, i);
		age_push(t, &t->live, i);
	}
}

void
spinnic_msgtab_finish(struct spinnic_msgtab *t, void *p)
{
	struct spinnic_msg_link *e = p;
	uint32_t i = ent_index(t, p);

	if (e->state != SPINNIC_MSG_LIVE)
		return;
	age_unlink(t, &t->live, i);
	e->state = SPINNIC_MSG_DONE;
	age_push(t, &t->done, i);
}

void
spinnic_msgtab_remove(struct spinnic_msgtab *t, void *p)
{
	struct spinnic_msg_link *e = p;
	uint32_t i = ent_index(t, p);

	if (e->state == SPINNIC_MSG_FREE)
		return;
	age_unlink(t, e->state == SPINNIC_MSG_LIVE ? &t->live : &t->done, i);
	bucket_unlink(t, i);
	e->state = SPINNIC_MSG_FREE;
	e->hnext = t->free_head;
	t->free_head = i;
}

unsigned
spinnic_msgtab_foreach_live(struct spinnic_msgtab *t, uint64_t older_than,
			    void (*fn)(void *e, void *arg), void *arg)
{
	uint32_t i = t->live.head;
	unsigned n = 0;

	while (i != MSGTAB_NIL) {
		struct spinnic_msg_link *e = ent(t, i);
		uint32_t next = e->next;

		/* the live list is in touch order: stop at the first young one */
		if (older_than != UINT64_MAX && e->touched >= older_than)
			break;
		fn(e, arg);
		n++;
		i = next;
	}
	return n;
}

void
spinnic_msgtab_stats(const struct spinnic_msgtab *t,
		     struct spinnic_msgtab_stats *st_p)
{
	*st_p = t->st;
	st_p->live = t->live.count;
	st_p->done = t->done.count;
}
