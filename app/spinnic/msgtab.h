/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file msgtab.h
 * The inbound message table (msgtab.c): a bounded hash of the messages a
 * node receives, with tombstones, per-source limits and packet bitmaps.
 * One inbound role owns a table: no locking. Not installed.
 * The table's bounds and why: doc/NOTES.md, "Message table under a header
 * flood"; its place in the walk: doc/datapath.md.
 */
#ifndef SPINNIC_MSGTAB_H
#define SPINNIC_MSGTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Identity of a message on the wire. */
struct spinnic_msg_key {
	uint32_t nid; /**< source node */
	uint32_t pid; /**< source process */
	uint64_t id;  /**< message id, unique per source node */
};

enum spinnic_msg_state {
	SPINNIC_MSG_FREE = 0,
	SPINNIC_MSG_LIVE,  /**< packets still expected */
	SPINNIC_MSG_DONE,  /**< finished: tombstone */
};

/** Packets of a message seen inline: a 1 MiB put at 2 KiB per packet. */
#define SPINNIC_SEEN_INLINE 512u
/** Packets of one chunk of a packet bitmap past the inline ones (512 B). */
#define SPINNIC_SEEN_CHUNK 4096u

/**
 * Packets of a live message that arrived, by packet index: bits of the
 * first SPINNIC_SEEN_INLINE packets inline, the others in chunks of
 * SPINNIC_SEEN_CHUNK bits allocated when a packet in their range arrives
 * (spinnic_msgtab_seen_reserve).
 */
struct spinnic_seen {
	uint64_t in[SPINNIC_SEEN_INLINE / 64];
	uint64_t **chunk;     /**< chunk k: packets INLINE + k * CHUNK ..., or
				   NULL; slots up to the highest chunk used */
	uint32_t nchunk;      /**< slots of chunk[] */
	uint32_t npkts;       /**< packets of the message */
};

/** Bookkeeping fields of an entry; the data path embeds it first. */
struct spinnic_msg_link {
	struct spinnic_msg_key key;
	uint32_t hnext;       /**< next entry in the bucket, or MSGTAB_NIL */
	uint32_t prev, next;  /**< age list (live or done) */
	uint16_t state;       /**< enum spinnic_msg_state */
	uint16_t flags;       /**< SPINNIC_MSGTAB_F_* given at insert */
	uint64_t touched;     /**< time of the last packet (caller's clock) */
	struct spinnic_seen seen; /**< packets received (live entries) */
};

#define MSGTAB_NIL UINT32_MAX

/** Insert flag: the message came unsequenced (no SPINNIC_WIRE_F_REL), so
 *  anyone on the LAN may have sent it; counted in the unsequenced share
 *  of live entries and of the bitmap budget. */
#define SPINNIC_MSGTAB_F_UNSEQ 1u

struct spinnic_msgtab;

/** Counters of a table. */
struct spinnic_msgtab_stats {
	uint64_t inserted;     /**< messages admitted */
	uint64_t full;         /**< messages refused: every slot live */
	uint64_t share;        /**< messages refused: their source's share of
				    live entries (limits) is used up */
	uint64_t recycled;     /**< tombstones reused for a new message */
	uint64_t live;         /**< live entries now */
	uint64_t done;         /**< tombstones now */
	uint64_t unseq_live;   /**< live entries of unsequenced messages now */
	uint64_t seen_bytes;   /**< packet bitmap memory now (chunks and
				    their slot arrays; inline bits excluded) */
	uint64_t seen_refused; /**< bitmap growths refused: over the limit,
				    or no memory */
};

/** Bounds of a table (spinnic_msgtab_set_limits); 0: no bound. */
struct spinnic_msgtab_limits {
	uint32_t unseq_live;       /**< live entries of unsequenced messages */
	uint32_t nid_live;         /**< live entries of one source nid */
	uint64_t seen_bytes;       /**< packet bitmap memory, all entries */
	uint64_t unseq_seen_bytes; /**< of it, unsequenced entries' */
};

/**
 * Create a table.
 * @param capacity entries (live + tombstones), > 0
 * @param entry_size bytes of one entry, >= sizeof(struct spinnic_msg_link);
 *   the entry starts with a struct spinnic_msg_link
 * @return the table, or NULL with errno EINVAL or ENOMEM
 */
struct spinnic_msgtab *spinnic_msgtab_create(uint32_t capacity,
					     size_t entry_size);

/** Free a table (entries are not visited). */
void spinnic_msgtab_free(struct spinnic_msgtab *t);

/**
 * Find the entry of a message.
 * @return the live or done entry, or NULL when unknown
 */
void *spinnic_msgtab_lookup(struct spinnic_msgtab *t,
			    const struct spinnic_msg_key *key);

/**
 * Bound what sources may hold (a new table has no bounds). Entries already
 * in the table stay.
 * @param l the bounds; a share larger than the capacity is the capacity
 * @return 0, -EINVAL when unseq_seen_bytes exceeds a non-zero seen_bytes
 */
int spinnic_msgtab_set_limits(struct spinnic_msgtab *t,
			      const struct spinnic_msgtab_limits *l);

/**
 * Admit a new message (the key must not be present). The entry past its
 * link is zeroed; its packet bitmap is empty and holds no memory.
 * @param npkts packets of the message (bitmap indices 0 .. npkts - 1)
 * @param flags SPINNIC_MSGTAB_F_* (0 for a sequenced message)
 * @param now caller's clock, stored in touched
 * @return the new live entry, or NULL with errno ENOSPC when every slot is
 *   live, EDQUOT when the source's share (unsequenced, or its nid's) is
 *   used up
 */
void *spinnic_msgtab_insert(struct spinnic_msgtab *t,
			    const struct spinnic_msg_key *key, uint32_t npkts,
			    unsigned flags, uint64_t now);

/** Mark a live entry as just used (keeps it from timing out). */
void spinnic_msgtab_touch(struct spinnic_msgtab *t, void *e, uint64_t now);

/** Turn a live entry into a tombstone (its bitmap memory is released). */
void spinnic_msgtab_finish(struct spinnic_msgtab *t, void *e);

/** Remove an entry (live or done) altogether. */
void spinnic_msgtab_remove(struct spinnic_msgtab *t, void *e);

/** Slow path of spinnic_msgtab_seen_reserve: allocate the chunk of @p i. */
int spinnic_msgtab_seen_grow(struct spinnic_msgtab *t, void *e, uint32_t i);

/* Word of the bitmap holding packet @p i, NULL when not allocated. */
static inline uint64_t *
spinnic_seen_word(const struct spinnic_seen *s, uint32_t i)
{
	uint32_t k;

	if (i < SPINNIC_SEEN_INLINE)
		return (uint64_t *)&s->in[i / 64];
	i -= SPINNIC_SEEN_INLINE;
	k = i / SPINNIC_SEEN_CHUNK;
	if (k >= s->nchunk || s->chunk[k] == NULL)
		return NULL;
	return &s->chunk[k][(i % SPINNIC_SEEN_CHUNK) / 64];
}

/** Has packet @p i of the message arrived? */
static inline bool
spinnic_seen_test(const struct spinnic_seen *s, uint32_t i)
{
	const uint64_t *w = spinnic_seen_word(s, i);

	/* SPINNIC_SEEN_INLINE and _CHUNK are multiples of 64 */
	return w != NULL && (*w >> (i % 64) & 1) != 0;
}

/** Mark packet @p i arrived; its bit must be reserved
 *  (spinnic_msgtab_seen_reserve returned 0). */
static inline void
spinnic_seen_set(struct spinnic_seen *s, uint32_t i)
{
	*spinnic_seen_word(s, i) |= 1ull << (i % 64);
}

/**
 * Make room for packet @p i's bit in a live entry's bitmap: nothing to do
 * for the inline packets or an allocated chunk, else one chunk (and its
 * slot) is allocated within the table's limits.
 * @return 0, -ERANGE @p i is past the message, -ENOMEM over the limits or
 *   out of memory (counted in seen_refused)
 */
static inline int
spinnic_msgtab_seen_reserve(struct spinnic_msgtab *t, void *e, uint32_t i)
{
	const struct spinnic_msg_link *l = e;

	if (i < SPINNIC_SEEN_INLINE && i < l->seen.npkts)
		return 0;
	if (spinnic_seen_word(&l->seen, i) != NULL && i < l->seen.npkts)
		return 0;
	return spinnic_msgtab_seen_grow(t, e, i);
}

/**
 * Visit live entries, oldest first. The callback may finish or remove the
 * entry it is given (and no other).
 * @param older_than only entries touched before this time (UINT64_MAX: all)
 * @return number of entries visited
 */
unsigned spinnic_msgtab_foreach_live(struct spinnic_msgtab *t,
				     uint64_t older_than,
				     void (*fn)(void *e, void *arg), void *arg);

/** Counters of the table. */
void spinnic_msgtab_stats(const struct spinnic_msgtab *t,
			  struct spinnic_msgtab_stats *st_p);

#endif
