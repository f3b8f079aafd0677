/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inbound message table (msgtab.h): chained hash over a fixed array of
 * entries, two age lists (live, done) and a free list, all by index; live
 * entries counted per source nid (open addressing, linear probing) for the
 * shares; packet bitmaps grown chunk by chunk within a byte budget.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "msgtab.h"

struct age_list {
	uint32_t head, tail; /* head: oldest */
	uint32_t count;
};

/* Live entries of one source nid (live 0: a free slot). */
struct nid_slot {
	uint32_t nid;
	uint32_t live;
};

struct spinnic_msgtab {
	uint32_t capacity;
	uint32_t bucket_mask;
	size_t entry_size;
	uint32_t free_head;     /* chained through hnext */
	struct age_list live, done;
	struct spinnic_msgtab_stats st;
	uint32_t unseq_max, nid_max;            /* shares of live entries */
	uint64_t seen_max, unseq_seen_max;      /* bitmap bytes */
	uint64_t unseq_seen_bytes;
	uint32_t nid_mask;
	struct nid_slot *nids;  /* 2 * buckets slots: never more than half
				   used (a nid per live entry at most) */
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

/* ---- live entries per source nid ---------------------------------------- */

static inline uint32_t
nid_home(const struct spinnic_msgtab *t, uint32_t nid)
{
	uint64_t h = nid * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 32) & t->nid_mask;
}

/* Slot of @p nid, or the free slot where it would go. */
static uint32_t
nid_slot(const struct spinnic_msgtab *t, uint32_t nid)
{
	uint32_t i = nid_home(t, nid);

	while (t->nids[i].live != 0 && t->nids[i].nid != nid)
		i = (i + 1) & t->nid_mask;
	return i;
}

static void
nid_dec(struct spinnic_msgtab *t, uint32_t nid)
{
	uint32_t i = nid_slot(t, nid), j = i, k;

	if (t->nids[i].live == 0 || --t->nids[i].live > 0)
		return;
	/* free slot i: move back any later entry of the run whose home is
	 * not cyclically in (i, j] (backward-shift deletion) */
	for (;;) {
		j = (j + 1) & t->nid_mask;
		if (t->nids[j].live == 0)
			break;
		k = nid_home(t, t->nids[j].nid);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->nids[i] = t->nids[j];
		i = j;
	}
	t->nids[i].live = 0;
}

/* ---- packet bitmaps ------------------------------------------------------- */

static uint64_t
seen_bytes(const struct spinnic_seen *s)
{
	uint64_t n = (uint64_t)s->nchunk * sizeof(s->chunk[0]);
	uint32_t k;

	for (k = 0; k < s->nchunk; k++)
		if (s->chunk[k] != NULL)
			n += SPINNIC_SEEN_CHUNK / 8;
	return n;
}

static void
seen_release(struct spinnic_msgtab *t, struct spinnic_msg_link *e)
{
	struct spinnic_seen *s = &e->seen;
	uint64_t n;
	uint32_t k;

	if (s->chunk == NULL)
		return;
	n = seen_bytes(s);
	for (k = 0; k < s->nchunk; k++)
		free(s->chunk[k]);
	free(s->chunk);
	s->chunk = NULL;
	s->nchunk = 0;
	t->st.seen_bytes -= n;
	if (e->flags & SPINNIC_MSGTAB_F_UNSEQ)
		t->unseq_seen_bytes -= n;
}

static bool
seen_fits(const struct spinnic_msgtab *t, const struct spinnic_msg_link *e,
	  uint64_t more)
{
	if (t->seen_max != 0 && t->st.seen_bytes + more > t->seen_max)
		return false;
	return !(e->flags & SPINNIC_MSGTAB_F_UNSEQ) || t->unseq_seen_max == 0 ||
	       t->unseq_seen_bytes + more <= t->unseq_seen_max;
}

int
spinnic_msgtab_seen_grow(struct spinnic_msgtab *t, void *p, uint32_t i)
{
	struct spinnic_msg_link *e = p;
	struct spinnic_seen *s = &e->seen;
	uint32_t k, slots, total;
	uint64_t more;
	uint64_t *c;

	if (i >= s->npkts)
		return -ERANGE;
	if (spinnic_seen_word(s, i) != NULL)
		return 0;
	k = (i - SPINNIC_SEEN_INLINE) / SPINNIC_SEEN_CHUNK;
	total = (s->npkts - SPINNIC_SEEN_INLINE + SPINNIC_SEEN_CHUNK - 1) /
		SPINNIC_SEEN_CHUNK;
	/* slots up to chunk k, doubled so a message arriving in order grows
	 * them a few times only; never past the message */
	slots = s->nchunk;
	if (k >= slots) {
		slots = slots == 0 ? 1 : slots;
		while (slots <= k)
			slots *= 2;
		if (slots > total)
			slots = total;
	}
	more = SPINNIC_SEEN_CHUNK / 8 +
	       (uint64_t)(slots - s->nchunk) * sizeof(s->chunk[0]);
	if (!seen_fits(t, e, more))
		goto refuse;
	if (slots != s->nchunk) {
		uint64_t **a = realloc(s->chunk, slots * sizeof(a[0]));

		if (a == NULL)
			goto refuse;
		memset(a + s->nchunk, 0, (slots - s->nchunk) * sizeof(a[0]));
		s->chunk = a;
		t->st.seen_bytes += (uint64_t)(slots - s->nchunk) * sizeof(a[0]);
		if (e->flags & SPINNIC_MSGTAB_F_UNSEQ)
			t->unseq_seen_bytes +=
				(uint64_t)(slots - s->nchunk) * sizeof(a[0]);
		s->nchunk = slots;
	}
	c = calloc(SPINNIC_SEEN_CHUNK / 64, sizeof(*c));
	if (c == NULL)
		goto refuse;
	s->chunk[k] = c;
	t->st.seen_bytes += SPINNIC_SEEN_CHUNK / 8;
	if (e->flags & SPINNIC_MSGTAB_F_UNSEQ)
		t->unseq_seen_bytes += SPINNIC_SEEN_CHUNK / 8;
	return 0;
refuse:
	t->st.seen_refused++;
	return -ENOMEM;
}

/* ---- the table ------------------------------------------------------------ */

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
	t->nids = calloc(2 * (size_t)nb, sizeof(*t->nids));
	t->entries = calloc(capacity, entry_size);
	if (t->buckets == NULL || t->nids == NULL || t->entries == NULL) {
		free(t->entries);
		free(t->nids);
		free(t->buckets);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->capacity = capacity;
	t->unseq_max = t->nid_max = capacity;
	t->nid_mask = 2 * nb - 1;
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
	uint32_t i;

	if (t == NULL)
		return;
	for (i = t->live.head; i != MSGTAB_NIL; i = ent(t, i)->next)
		seen_release(t, ent(t, i));
	free(t->entries);
	free(t->nids);
	free(t->buckets);
	free(t);
}

int
spinnic_msgtab_set_limits(struct spinnic_msgtab *t,
			  const struct spinnic_msgtab_limits *l)
{
	if (l->seen_bytes != 0 && l->unseq_seen_bytes > l->seen_bytes)
		return -EINVAL;
	t->unseq_max = l->unseq_live == 0 || l->unseq_live > t->capacity ?
		t->capacity : l->unseq_live;
	t->nid_max = l->nid_live == 0 || l->nid_live > t->capacity ?
		t->capacity : l->nid_live;
	t->seen_max = l->seen_bytes;
	t->unseq_seen_max = l->unseq_seen_bytes;
	return 0;
}

/* An entry leaves the live list: its shares and bitmap memory go back. */
static void
live_leave(struct spinnic_msgtab *t, struct spinnic_msg_link *e)
{
	seen_release(t, e);
	if (e->flags & SPINNIC_MSGTAB_F_UNSEQ)
		t->st.unseq_live--;
	nid_dec(t, e->key.nid);
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
		      const struct spinnic_msg_key *key, uint32_t npkts,
		      unsigned flags, uint64_t now)
{
	struct spinnic_msg_link *e;
	uint32_t i, b, ns;

	/* shares first: a source over its share is told so even when the
	 * table is full as well */
	ns = nid_slot(t, key->nid);
	if (((flags & SPINNIC_MSGTAB_F_UNSEQ) &&
	     t->st.unseq_live >= t->unseq_max) ||
	    t->nids[ns].live >= t->nid_max) {
		t->st.share++;
		errno = EDQUOT;
		return NULL;
	}
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
		errno = ENOSPC;
		return NULL;
	}
	e = ent(t, i);
	memset(e, 0, t->entry_size);
	e->key = *key;
	e->state = SPINNIC_MSG_LIVE;
	e->flags = (uint16_t)(flags & SPINNIC_MSGTAB_F_UNSEQ);
	e->touched = now;
	e->seen.npkts = npkts;
	if (flags & SPINNIC_MSGTAB_F_UNSEQ)
		t->st.unseq_live++;
	/* recycling a tombstone moved no nid slot: ns is still the place */
	t->nids[ns].nid = key->nid;
	t->nids[ns].live++;
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
	live_leave(t, e);
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
	if (e->state == SPINNIC_MSG_LIVE)
		live_leave(t, e);
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
