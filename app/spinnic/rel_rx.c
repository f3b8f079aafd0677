/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable delivery, receive side (DESIGN §11): per-peer receive windows,
 * transport acks, and sessions by challenge (CHAL with an HMAC cookie,
 * CHAL_ACK taken only with our cookie). Inbound role only; it returns
 * verdicts, the caller drops. The protocol: doc/reliable-delivery.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "engine.h"
#include "packet.h"

/* challenges sent per second at most (GCRA), and their burst */
#define CHAL_RATE 20000u
#define CHAL_BURST 64u
/* a cookie holds for the time slot it was made in and the next one */
#define COOKIE_SLOT_MS 1024u
#define ACK_EVERY 16u
#define ACK_DELAY_US 20u
#define ACK_LAST_US 3u

int
rel_init(struct spinnic_engine *eng)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	uint8_t secret[32];
	EVP_MAC *mac;
	int rc = -EIO;

	if (getrandom(secret, sizeof(secret), 0) != (ssize_t)sizeof(secret)) {
		SPINNIC_LOG(ERR, "node %u: getrandom: %s", eng->node->index,
			    strerror(errno));
		return -EIO;
	}
	/* fetched and keyed once: a cookie then costs one HMAC, not a
	 * provider lookup (~5x), whatever a flood of answers asks for */
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (mac != NULL)
		eng->rx.mac = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac); /* the context holds its own reference */
	if (eng->rx.mac != NULL &&
	    EVP_MAC_init(eng->rx.mac, secret, sizeof(secret), params) == 1)
		rc = 0;
	OPENSSL_cleanse(secret, sizeof(secret));
	if (rc != 0) {
		SPINNIC_LOG(ERR, "node %u: HMAC-SHA256 for session cookies: not available from libcrypto",
			    eng->node->index);
		EVP_MAC_CTX_free(eng->rx.mac);
		eng->rx.mac = NULL;
	}
	return rc;
}

/* The receive side of @p nid, or NULL when none was made. */
static struct rel_rx *
rx_find(const struct spinnic_engine *eng, uint32_t nid)
{
	unsigned i;

	for (i = 0; i < eng->rx.n_peers; i++)
		if (eng->rx.peers[i]->nid == nid)
			return eng->rx.peers[i];
	return NULL;
}

static struct rel_rx *
rx_peer(struct spinnic_engine *eng, uint32_t nid, uint64_t now)
{
	struct rel_rx *r = rx_find(eng, nid);
	unsigned i, old = UINT_MAX;

	if (r != NULL)
		return r;
	if (eng->rx.n_peers < ENG_PEERS) {
		r = rte_zmalloc("spinnic_rel_rx", sizeof(*r),
				RTE_CACHE_LINE_SIZE);
		if (r == NULL)
			return NULL;
		eng->rx.peers[eng->rx.n_peers++] = r;
	} else {
		/* full: the longest silent peer, if silent for the peer
		 * timeout (its sender gave it up or has nothing for us) */
		for (i = 0; i < eng->rx.n_peers; i++)
			if (now - eng->rx.peers[i]->last_rx >
			    rel_peer_timeout_tsc(eng) &&
			    (old == UINT_MAX ||
			     eng->rx.peers[i]->last_rx <
			     eng->rx.peers[old]->last_rx))
				old = i;
		if (old == UINT_MAX)
			return NULL;
		r = eng->rx.peers[old];
		SPINNIC_LOG(DEBUG, "node %u: receive slot of nid %" PRIu32 " (idle) reused for nid %" PRIu32,
			    eng->node->index, r->nid, nid);
		memset(r, 0, sizeof(*r));
	}
	r->nid = nid;
	r->last_rx = now;
	return r;
}

/* Time slot of a cookie. */
static uint64_t
cookie_slot(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u) /
		COOKIE_SLOT_MS;
}

/*
 * The cookie of a challenge: HMAC-SHA256 under this engine's secret of the
 * nid, the epoch claimed, the epoch our window holds (0: none; an answer
 * is good only while nothing changed) and the time slot.
 * @return the cookie, 0 on a failure of the library (no answer matches)
 */
static uint64_t
cookie_of(struct spinnic_engine *eng, uint32_t nid, uint32_t epoch,
	  uint32_t held, uint64_t slot)
{
	uint8_t in[20], out[32];
	uint64_t c = 0;
	size_t len = 0;
	unsigned i;

	memcpy(in, &nid, 4);
	memcpy(in + 4, &epoch, 4);
	memcpy(in + 8, &held, 4);
	memcpy(in + 12, &slot, 8);
	/* a NULL key restarts the HMAC with the key rel_init set */
	if (EVP_MAC_init(eng->rx.mac, NULL, 0, NULL) != 1 ||
	    EVP_MAC_update(eng->rx.mac, in, sizeof(in)) != 1 ||
	    EVP_MAC_final(eng->rx.mac, out, &len, sizeof(out)) != 1 ||
	    len < 8)
		return 0;
	for (i = 0; i < 8; i++)
		c = c << 8 | out[i];
	return c == 0 ? 1 : c;
}

static uint32_t
held_epoch(const struct rel_rx *r)
{
	return r != NULL && r->win.known ? r->win.epoch : 0;
}

/* Ask @p nid whether it sends in @p epoch (rate-limited, GCRA). */
static void
chal_send(struct spinnic_engine *eng, uint32_t nid, uint32_t epoch,
	  const struct rel_rx *r)
{
	uint64_t now = rte_get_timer_cycles();
	uint64_t gap = eng->hz / CHAL_RATE;
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	uint64_t rto = eng->hz * eng->node->sn->cfg.rto_us / 1000000u;
	unsigned i;

	/* the sender resends after its RTO: one question per RTO is enough
	 * (a window's worth of packets arrives before the answer) */
	for (i = 0; i < RTE_DIM(eng->rx.chal_recent); i++)
		if (eng->rx.chal_recent[i].nid == nid &&
		    eng->rx.chal_recent[i].epoch == epoch &&
		    now - eng->rx.chal_recent[i].tsc < rto)
			return;
	if (eng->rx.chal_next < now)
		eng->rx.chal_next = now;
	if (eng->rx.chal_next - now > gap * CHAL_BURST) {
		eng->rx.stats.chal_limited++;
		return;
	}
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_CHAL;
	p.src.nid = eng->node->nid;
	p.dst.nid = nid;
	p.ack_epoch = epoch;
	p.hdr_data = cookie_of(eng, nid, epoch, held_epoch(r), cookie_slot());
	if (p.hdr_data == 0)
		return;
	m = eng_build(eng->node, &p, NULL);
	if (m == NULL)
		return; /* the pool is empty: the sender resends, we ask again */
	if (rte_ring_sp_enqueue(eng->tacks, m) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	eng->rx.chal_next += gap;
	eng->rx.stats.chal_sent++;
	i = eng->rx.chal_slot++ % RTE_DIM(eng->rx.chal_recent);
	eng->rx.chal_recent[i].nid = nid;
	eng->rx.chal_recent[i].epoch = epoch;
	eng->rx.chal_recent[i].tsc = now;
}

enum eng_drop
rel_rx_handshake(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	uint64_t now, slot;
	struct rel_rx *r;
	uint32_t held;

	if (p->type == SPINNIC_WIRE_T_CHAL) {
		struct rel_ack_rec rec = {
			.kind = REL_REC_CHAL,
			.nid = p->src.nid,
			.epoch = p->ack_epoch,
			.cookie = p->hdr_data,
		};

		/* the outbound role knows our epochs */
		if (rte_ring_sp_enqueue_elem(eng->rel_acks, &rec,
					     sizeof(rec)) != 0)
			eng->rx.stats.ack_ring_full++;
		return ENG_KEEP;
	}
	r = rx_find(eng, p->src.nid);
	held = held_epoch(r);
	if (r != NULL && r->win.known && held == p->ack_epoch)
		return ENG_KEEP; /* a later answer of a question answered */
	slot = cookie_slot();
	if (p->hdr_data == 0 ||
	    (p->hdr_data != cookie_of(eng, p->src.nid, p->ack_epoch, held,
				      slot) &&
	     p->hdr_data != cookie_of(eng, p->src.nid, p->ack_epoch, held,
				      slot - 1)))
		/* not the answer to a challenge of ours, or a late one */
		return ENG_DROP_BAD_COOKIE;
	now = rte_get_timer_cycles();
	if (r == NULL)
		r = rx_peer(eng, p->src.nid, now);
	if (r == NULL)
		return ENG_DROP_PEERS_FULL;
	if (rel_rx_accept(&r->win, p->ack_epoch, p->ack_seq)) {
		eng->rx.stats.rel_resets++;
		r->pending = 0;
		r->ack_now = false;
		r->last_rx = now;
		eng->rx.rel_moves++; /* parked packets of it may go */
		SPINNIC_LOG(DEBUG, "node %u: nid %" PRIu32 " verified in epoch %#" PRIx32 " from seq %" PRIu32,
			    eng->node->index, p->src.nid, p->ack_epoch,
			    p->ack_seq);
	}
	return ENG_KEEP;
}

/*
 * An unsequenced packet: data of a node that has no session with us (a
 * generator) is taken; a node with one sends everything sequenced, so an
 * unsequenced packet in its name is forged.
 */
static enum eng_drop
rx_unsequenced(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	if (p->type == SPINNIC_WIRE_T_DATA && rx_find(eng, p->src.nid) == NULL) {
		eng->rx.stats.unsequenced++;
		return ENG_KEEP;
	}
	return ENG_DROP_UNSEQUENCED;
}

enum eng_drop
rel_rx_begin(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	struct rel_rx *r;

	eng->rx.transient = false;
	if (!(p->flags & SPINNIC_WIRE_F_REL))
		return rx_unsequenced(eng, p);
	r = rx_find(eng, p->src.nid);
	switch (r == NULL ? REL_OTHER :
		rel_rx_check(&r->win, p->epoch, p->seq)) {
	case REL_NEW:
		return ENG_KEEP;
	case REL_DUP:
		r->ack_now = true;
		return ENG_DROP_REL_DUP;
	case REL_OTHER:
		/* a new sender, a restarted one, or a forgery: only the
		 * node at that nid's address can answer */
		chal_send(eng, p->src.nid, p->epoch, r);
		return ENG_DROP_REL_EPOCH;
	default:
		return ENG_DROP_REL_BEYOND;
	}
}

bool
rel_rx_in_order(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	const struct rel_rx *r;

	if (!(p->flags & SPINNIC_WIRE_F_REL))
		return true;
	r = rx_find(eng, p->src.nid);
	return r == NULL || r->win.next == p->seq;
}

void
rel_rx_end(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	struct rel_rx *r;
	uint64_t now, due;

	if (!(p->flags & SPINNIC_WIRE_F_REL))
		return;
	if (eng->rx.transient) {
		/* dropped for want of a slot or memory: let it come again */
		eng->rx.stats.rel_unacked++;
		return;
	}
	r = rx_find(eng, p->src.nid);
	if (r == NULL)
		return;
	now = rte_get_timer_cycles();
	r->last_rx = now;
	if (r->win.next == p->seq)
		eng->rx.rel_moves++; /* parked packets may go now */
	rel_rx_mark(&r->win, p->seq);
	if (r->pending++ == 0)
		r->due = now + eng->hz * ACK_DELAY_US / 1000000u;
	/* the last packet of a message: the sender's SEND (or the target's
	 * GET event) waits for its ack; soon, but after the work the message
	 * itself started (its handlers, its events) on lcores that may be
	 * shared */
	due = now + eng->hz * ACK_LAST_US / 1000000u;
	if ((p->flags & SPINNIC_WIRE_F_COMPLETION) && due < r->due)
		r->due = due;
	if (p->type == SPINNIC_WIRE_T_TACK)
		r->ack_now = true; /* a probe: answer at once */
}

void
rel_rx_tack(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	struct rel_ack_rec rec = {
		.nid = p->src.nid,
		.epoch = p->ack_epoch,
		.ack_seq = p->ack_seq,
		.sack_base = p->sack_base,
		.sack = p->sack,
	};

	eng->rx.stats.tacks_rcvd++;
	if (rte_ring_sp_enqueue_elem(eng->rel_acks, &rec, sizeof(rec)) != 0)
		eng->rx.stats.ack_ring_full++;
}

/* One TACK: the cumulative ack and the 64 seqs from @p base. */
static int
tack_send(struct spinnic_engine *eng, const struct rel_rx *r, uint32_t base)
{
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = eng->node->nid;
	p.dst.nid = r->nid;
	p.ack_epoch = r->win.epoch;
	p.ack_seq = r->win.next;
	p.sack_base = base;
	p.sack = rel_rx_sack(&r->win, base);
	m = eng_build(eng->node, &p, NULL);
	if (m == NULL)
		return -ENOBUFS; /* the pool is empty: next poll */
	/* their own ring: never behind packets that wait for a window */
	if (rte_ring_sp_enqueue(eng->tacks, m) != 0) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	eng->rx.stats.tacks_sent++;
	return 0;
}

unsigned
rel_rx_acks(struct spinnic_engine *eng, uint64_t now)
{
	unsigned i, n = 0;

	for (i = 0; i < eng->rx.n_peers; i++) {
		struct rel_rx *r = eng->rx.peers[i];
		uint32_t base;

		if (!(r->ack_now || r->pending >= ACK_EVERY ||
		      (r->pending > 0 && now >= r->due)))
			continue;
		if (tack_send(eng, r, r->win.next + 1) != 0)
			break;
		n++;
		/* past a hole: every further block with a packet in it */
		for (base = r->win.next + 65; base - r->win.next < REL_WIN;
		     base += 64) {
			if (rel_rx_sack(&r->win, base) == 0)
				continue;
			if (tack_send(eng, r, base) != 0)
				break;
			n++;
		}
		r->pending = 0;
		r->ack_now = false;
	}
	return n;
}

void
rel_rx_fini(struct spinnic_engine *eng)
{
	unsigned i;

	for (i = 0; i < eng->rx.n_peers; i++) {
		rte_free(eng->rx.peers[i]);
		eng->rx.peers[i] = NULL;
	}
	eng->rx.n_peers = 0;	EVP_MAC_CTX_free(eng->rx.mac);
	eng->rx.mac = NULL;
}
