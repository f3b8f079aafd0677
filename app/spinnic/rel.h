/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file rel.h
 * Reliable delivery (DESIGN §11): the sequence-number window logic, libc
 * only so test/app/test_rel.c drives it directly; rel_rx.c and rel_tx.c
 * use it from the inbound and outbound roles. The protocol:
 * doc/reliable-delivery.md.
 */
#ifndef SPINNIC_REL_H
#define SPINNIC_REL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/** Sequence numbers in flight per peer (sender window = receiver window). */
#define REL_WIN 512u
/** Window slots kept for acks, NACKs and probes (data stops short). */
#define REL_RESERVE 32u
/** Payloads up to this size that cannot be re-read (an inline put, an
 *  atomic's operands) are kept in the window entry, not in a copy of the
 *  frame (an mbuf per packet). */
#define REL_SMALL 32u

/** Serial-number order (RFC 1982 style): a - b as a signed distance. */
static inline int32_t
rel_seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/** Receive window of one peer (inbound role). */
struct rel_rxwin {
	uint32_t epoch;
	uint32_t next;                  /**< every seq below received */
	bool known;                     /**< a packet of this peer was seen */
	uint64_t bits[REL_WIN / 64];    /**< bit seq % REL_WIN, seq >= next */
};

enum rel_verdict {
	REL_NEW,     /**< first copy: process it, then rel_rx_mark() */
	REL_DUP,     /**< already received: drop, ack again */
	REL_OTHER,   /**< not the window's epoch (or no window yet): drop;
		          the epoch is taken only once its sender answered a
		          challenge (rel_rx_accept) */
	REL_BEYOND,  /**< past the window: drop, the sender resends */
};

static inline bool
rel_bit(const uint64_t *bits, uint32_t seq)
{
	uint32_t i = seq % REL_WIN;

	return (bits[i / 64] >> (i % 64)) & 1;
}

/**
 * Classify a sequenced packet. Only the window's own epoch is accepted:
 * a packet of any other epoch, older or newer, may be forged (the epoch
 * is the sender's random session number), so it changes nothing here.
 */
static inline enum rel_verdict
rel_rx_check(const struct rel_rxwin *w, uint32_t epoch, uint32_t seq)
{
	uint32_t d;

	if (!w->known || epoch != w->epoch)
		return REL_OTHER;
	d = seq - w->next;
	if ((int32_t)d < 0)
		return REL_DUP;
	if (d >= REL_WIN)
		return REL_BEYOND;
	return rel_bit(w->bits, seq) ? REL_DUP : REL_NEW;
}

/**
 * Take a verified epoch of the sender: the window restarts at @p base,
 * the first seq the sender still has unacknowledged (every seq below was
 * acknowledged, so received, in an earlier life of this window or by
 * nobody). A window already in @p epoch is left as it is: a repeated or
 * replayed answer must not move it back.
 * @return true when the window changed
 */
static inline bool
rel_rx_accept(struct rel_rxwin *w, uint32_t epoch, uint32_t base)
{
	if (w->known && w->epoch == epoch)
		return false;
	memset(w, 0, sizeof(*w));
	w->known = true;
	w->epoch = epoch;
	w->next = base;
	return true;
}

/** Record a packet rel_rx_check() called REL_NEW as received. */
static inline void
rel_rx_mark(struct rel_rxwin *w, uint32_t seq)
{
	uint32_t i = seq % REL_WIN;

	w->bits[i / 64] |= 1ull << (i % 64);
	while (rel_bit(w->bits, w->next)) {
		i = w->next % REL_WIN;
		w->bits[i / 64] &= ~(1ull << (i % 64));
		w->next++;
	}
}

/**
 * Selective ack: bit i = seq @p base + i received. The bitmap holds only
 * seqs of [next, next + REL_WIN) (marking clears what next passes), so 64
 * bits read from @p base's position are exactly those seqs' bits, a window
 * past the end reading as not received.
 */
static inline uint64_t
rel_rx_sack(const struct rel_rxwin *w, uint32_t base)
{
	uint32_t i = base % REL_WIN, k = i / 64, sh = i % 64;
	uint64_t s = w->bits[k] >> sh;
	uint32_t d = base - w->next;

	if (sh != 0)
		s |= w->bits[(k + 1) % (REL_WIN / 64)] << (64 - sh);
	if (d >= REL_WIN)
		return 0;
	/* positions past the window's end wrap onto its start: masked */
	if (REL_WIN - d < 64)
		s &= (1ull << (REL_WIN - d)) - 1;
	return s;
}

/**
 * Sender side: whether an ack covers @p seq.
 * @return true when @p seq is below @p ack_seq, or its bit of @p sack
 *   (relative to @p sack_base) is set
 */
static inline bool
rel_acked(uint32_t seq, uint32_t ack_seq, uint32_t sack_base, uint64_t sack)
{
	uint32_t d = seq - sack_base;

	if (rel_seq_diff(seq, ack_seq) < 0)
		return true;
	return d < 64 && ((sack >> d) & 1);
}

#endif
