/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable delivery (DESIGN §11): per-peer sequence numbers, windows,
 * retransmission from host memory, timers and the CHAL/CHAL_ACK session
 * handshake. The send side runs in each node's outbound role (called from
 * outbound.c), the receive side in its inbound role (inbound.c); acks cross
 * between them on eng->rel_acks. The protocol: doc/reliable-delivery.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
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
#include "outbound_stream.h"

/* challenges sent per second at most (GCRA), and their burst */
#define CHAL_RATE 20000u
#define CHAL_BURST 64u
/* a cookie holds for the time slot it was made in and the next one */
#define COOKIE_SLOT_MS 1024u
#define ACK_EVERY 16u
#define ACK_DELAY_US 20u
#define ACK_LAST_US 3u
#define RTO_SHIFT_MAX 6u

/* ---- send side ------------------------------------------------------------- */

/* Keyed: no UDP checksum, the MAC sealed at TX covers the bytes. */
static inline int
seal_flags(const struct spinnic_engine *eng)
{
	return eng->node->auth != NULL ? SPINNIC_WIRE_SEAL_NO_CSUM : 0;
}

/* A random 32-bit number, nonzero and not @p old. */
static uint32_t
epoch_new(uint32_t old)
{
	uint32_t e = 0;

	while (e == 0 || e == old)
		if (getrandom(&e, sizeof(e), 0) != (ssize_t)sizeof(e))
			/* no entropy source (cannot happen after rel_init):
			 * still a new epoch, if a guessable one */
			e = (old + (uint32_t)rte_get_timer_cycles()) | 1u;
	return e;
}

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
		eng->rel_mac = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac); /* the context holds its own reference */
	if (eng->rel_mac != NULL &&
	    EVP_MAC_init(eng->rel_mac, secret, sizeof(secret), params) == 1)
		rc = 0;
	OPENSSL_cleanse(secret, sizeof(secret));
	if (rc != 0) {
		SPINNIC_LOG(ERR, "node %u: HMAC-SHA256 for session cookies: not available from libcrypto",
			    eng->node->index);
		EVP_MAC_CTX_free(eng->rel_mac);
		eng->rel_mac = NULL;
	}
	return rc;
}

static uint64_t
peer_timeout_tsc(const struct spinnic_engine *eng)
{
	return eng->hz * eng->node->sn->cfg.peer_timeout_ms / 1000u;
}

static struct rel_tx *
tx_peer(struct spinnic_engine *eng, uint32_t nid, bool create)
{
	uint64_t now, idle = peer_timeout_tsc(eng);
	struct rel_tx *t;
	unsigned i;

	for (i = 0; i < eng->n_tx_peers; i++)
		if (eng->tx_peers[i]->nid == nid)
			return eng->tx_peers[i];
	if (!create)
		return NULL;
	if (eng->n_tx_peers < ENG_PEERS) {
		t = rte_zmalloc("spinnic_rel_tx", sizeof(*t),
				RTE_CACHE_LINE_SIZE);
		if (t == NULL)
			return NULL;
		eng->tx_peers[eng->n_tx_peers++] = t;
	} else {
		/* full: reuse a peer with nothing in flight, owing us
		 * nothing, silent for the peer timeout */
		now = rte_get_timer_cycles();
		for (i = 0; i < eng->n_tx_peers; i++) {
			t = eng->tx_peers[i];
			if (t->base == t->next && !t->ops_pending &&
			    now - t->last_tx > idle)
				break;
		}
		if (i == eng->n_tx_peers) {
			eng->out_stats.peers_full++;
			return NULL;
		}
		SPINNIC_LOG(DEBUG, "node %u: peer slot of nid %" PRIu32 " (idle) reused for nid %" PRIu32,
			    eng->node->index, t->nid, nid);
		t->base = t->next = t->high = 0;
		t->backoff = 0;
		t->kick = false;
	}
	t->nid = nid;
	t->epoch = epoch_new(t->epoch);
	t->last_tx = rte_get_timer_cycles();
	return t;
}

static uint64_t
rto_of(const struct spinnic_engine *eng, const struct rel_tx *t)
{
	uint64_t rto = eng->hz * eng->node->sn->cfg.rto_us / 1000000u;

	return (rto == 0 ? 1 : rto) << RTE_MIN(t->backoff, RTO_SHIFT_MAX);
}

/*
 * @param fail SPINNIC_PTL_NI_OK: acknowledged, post what waited for it;
 *   another value: the peer was given up (its operations are failed
 *   already, a reply's GET event carries @p fail); ENG_FAIL_SILENT: no event
 */
static void
ent_release(struct spinnic_engine *eng, struct rel_txent *e, uint8_t fail)
{
	if (e->send_id != 0 && fail == SPINNIC_PTL_NI_OK)
		ptl_op_sent(eng->node->nic, e->send_id, SPINNIC_PTL_NI_OK);
	if (e->job != NULL)
		eng_reply_job_done(eng, e->job, fail);
	e->job = NULL;
	if (e->c != NULL)
		ptl_client_put(e->c);
	rte_pktmbuf_free(e->copy);
	e->c = NULL;
	e->copy = NULL;
	e->send_id = 0;
	e->acked = 0;
}

bool
rel_tx_room(const struct spinnic_engine *eng, uint32_t dst_nid, unsigned need)
{
	unsigned i;

	for (i = 0; i < eng->n_tx_peers; i++) {
		const struct rel_tx *t = eng->tx_peers[i];

		if (t->nid == dst_nid)
			return t->next - t->base + need <= REL_WIN - REL_RESERVE;
	}
	return true;
}

int
rel_track(struct spinnic_engine *eng, struct rte_mbuf *m, uint32_t dst_nid,
	  const struct rel_src *src)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	uint8_t type = spinnic_wire_frame_type(f);
	/* requests and their data leave the window's last slots to acks */
	bool data = type == SPINNIC_WIRE_T_DATA || type == SPINNIC_WIRE_T_GET ||
		type == SPINNIC_WIRE_T_REPLY;
	struct rel_txent *e;
	struct rel_tx *t;
	uint64_t now;

	if ((type == SPINNIC_WIRE_T_TACK &&
	     !(spinnic_wire_frame_flags(f) & SPINNIC_WIRE_F_REL)) ||
	    type == SPINNIC_WIRE_T_CHAL || type == SPINNIC_WIRE_T_CHAL_ACK) {
		/* plain transport acks and the handshake are not themselves
		 * acknowledged */
		spinnic_wire_seal(f, len, seal_flags(eng), 0, 0);
		return 0;
	}
	t = tx_peer(eng, dst_nid, true);
	if (t == NULL)
		return -ENOSPC; /* no peer slot: again when one frees */
	if (t->next - t->base >= REL_WIN - (data ? REL_RESERVE : 0)) {
		eng->out_stats.rel_full++;
		return -ENOSPC;
	}
	e = &t->ent[t->next % REL_WIN];
	e->pay_len = len - SPINNIC_WIRE_HDR_LEN;
	e->sput = NULL;
	if (e->pay_len > 0) {
		if (src != NULL && src->sput != NULL) {
			/* re-created from the client's pieces or by its type */
			e->sput = src->sput;
		} else if (src != NULL && src->c != NULL) {
			ptl_client_get(src->c);
			e->c = src->c;
			e->addr = src->addr;
		} else {
			e->copy = rte_pktmbuf_copy(m, eng->node->pool, 0,
						   UINT32_MAX);
			if (e->copy == NULL) {
				eng->out_stats.no_mbuf++;
				return -ENOSPC;
			}
		}
	}
	spinnic_wire_seal(f, len, 1 | seal_flags(eng), t->epoch, t->next);
	memcpy(e->hdr, f, SPINNIC_WIRE_HDR_LEN);
	e->send_id = src != NULL ? src->send_id : 0;
	e->job = src != NULL ? src->job : NULL;
	now = rte_get_timer_cycles();
	e->first = e->sent = now;
	e->tries = 0;
	e->acked = 0;
	if (t->base == t->next) {
		/* the window was empty: the clocks start now */
		t->backoff = 0;
		t->progress = now;
		t->timer = now + rto_of(eng, t);
		t->high = t->next;
	}
	t->next++;
	t->last_tx = now;
	return 0;
}

/* Slide the window over acknowledged entries. */
static void
tx_advance(struct spinnic_engine *eng, struct rel_tx *t)
{
	while (t->base != t->next) {
		struct rel_txent *e = &t->ent[t->base % REL_WIN];

		if (!e->acked)
			break;
		ent_release(eng, e, SPINNIC_PTL_NI_OK);
		t->base++;
	}
}

static void
tx_ack(struct spinnic_engine *eng, const struct rel_ack_rec *r)
{
	struct rel_tx *t = tx_peer(eng, r->nid, false);
	bool news = false;
	uint32_t seq, end;

	if (t == NULL || r->epoch != t->epoch ||
	    rel_seq_diff(r->ack_seq, t->next) > 0)
		return; /* another epoch, or acks what was never sent */
	/* the cumulative part, then the selective block */
	end = rel_seq_diff(r->sack_base + 64, t->next) < 0 ? r->sack_base + 64 :
		t->next;
	if (rel_seq_diff(end, t->base) <= 0)
		return; /* nothing in flight it speaks of */
	for (seq = t->base; seq != end; seq++) {
		struct rel_txent *e = &t->ent[seq % REL_WIN];

		if (!e->acked &&
		    rel_acked(seq, r->ack_seq, r->sack_base, r->sack)) {
			e->acked = 1;
			eng->out_stats.rel_acked++;
			news = true;
			if (rel_seq_diff(seq + 1, t->high) > 0)
				t->high = seq + 1;
		}
	}
	tx_advance(eng, t);
	if (news) {
		uint64_t now = rte_get_timer_cycles();

		t->progress = now;
		t->backoff = 0;
		t->timer = now + rto_of(eng, t);
	}
}

/* Build a probe or filler: a sequenced TACK. */
static struct rte_mbuf *
tack_build(struct spinnic_engine *eng, uint32_t dst_nid)
{
	struct spinnic_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = eng->node->nid;
	p.dst.nid = dst_nid;
	return eng_build(eng->node, &p, NULL);
}

/*
 * Resend an entry. Its payload is re-read; when the source is gone (the
 * client detached or unmapped the buffer) the entry becomes a filler, a
 * probe with the same sequence number, so the peer's window moves on; a
 * put of ours then fails (SEGV) rather than waiting for an ack that will
 * not come.
 */
static int
tx_resend(struct spinnic_engine *eng, struct rel_tx *t, uint32_t seq)
{
	struct rel_txent *e = &t->ent[seq % REL_WIN];
	uint64_t msg_id = spinnic_wire_frame_msg_id(e->hdr);
	uint64_t off = spinnic_wire_frame_offset(e->hdr);
	struct rte_mbuf *m;
	uint8_t *f;
	int rc = 0;

	m = rte_pktmbuf_alloc(eng->node->pool);
	if (m == NULL) {
		eng->out_stats.no_mbuf++;
		return -ENOBUFS;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(SPINNIC_WIRE_HDR_LEN +
							 e->pay_len));
	if (f == NULL) {
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memcpy(f, e->hdr, SPINNIC_WIRE_HDR_LEN);
	if (e->pay_len > 0) {
		if (e->copy != NULL)
			memcpy(f + SPINNIC_WIRE_HDR_LEN,
			       rte_pktmbuf_mtod_offset(e->copy, uint8_t *,
						       SPINNIC_WIRE_HDR_LEN),
			       e->pay_len);
		else if (e->sput != NULL)
			rc = eng_sput_refill(eng, e->sput, msg_id, off,
					     e->pay_len, f + SPINNIC_WIRE_HDR_LEN);
		else if (e->c == NULL || !ptl_client_alive(e->c))
			rc = -ESHUTDOWN;
		else
			rc = ptl_host_read(e->c, e->addr,
					   f + SPINNIC_WIRE_HDR_LEN, e->pay_len);
	}
	if (rc != 0) {
		rte_pktmbuf_free(m);
		SPINNIC_LOG(DEBUG, "node %u: resend of seq %u to nid %u (msg %#" PRIx64 " offset %" PRIu64 "): payload gone (%s), a filler goes",
			    eng->node->index, seq, t->nid, msg_id, off,
			    strerror(-rc));
		if (spinnic_wire_frame_type(e->hdr) == SPINNIC_WIRE_T_DATA &&
		    rc != -ESHUTDOWN)
			ptl_op_sent(eng->node->nic, msg_id,
				    SPINNIC_PTL_NI_SEGV);
		m = tack_build(eng, t->nid);
		if (m == NULL) {
			eng->out_stats.no_mbuf++;
			return -ENOBUFS;
		}
		f = rte_pktmbuf_mtod(m, uint8_t *);
		spinnic_wire_seal(f, rte_pktmbuf_data_len(m), 1 | seal_flags(eng),
				  t->epoch, seq);
		ent_release(eng, e, SPINNIC_PTL_NI_SEGV);
		e->sput = NULL;
		e->pay_len = 0;
		memcpy(e->hdr, f, SPINNIC_WIRE_HDR_LEN);
		eng->out_stats.rel_fillers++;
	} else {
		/* the bytes are those sent before; the checksum is redone all
		 * the same, so a changed buffer is not dropped forever */
		spinnic_wire_seal(f, rte_pktmbuf_data_len(m), seal_flags(eng),
				  0, 0);
	}
	eng_tx_push(eng, m, t->nid);
	eng->node->tx.retransmits++;
	return 0;
}

/* Resend @p seq when the TX hold has room. @return 0, -ENOSPC */
static int
ent_resend(struct spinnic_engine *eng, struct rel_tx *t, uint32_t seq,
	   uint64_t now)
{
	struct rel_txent *e = &t->ent[seq % REL_WIN];

	if (!eng_tx_hold_room(eng, t->nid) || tx_resend(eng, t, seq) != 0)
		return -ENOSPC;
	e->sent = now;
	if (e->tries < UINT8_MAX)
		e->tries++;
	return 0;
}

/* Give a silent peer up. */
static void
tx_peer_fail(struct spinnic_engine *eng, struct rel_tx *t, uint64_t now)
{
	struct spinnic_node *node = eng->node;
	unsigned n;

	n = ptl_op_fail_target(node->nic, t->nid, SPINNIC_PTL_NI_UNDELIVERABLE);
	eng_out_peer_failed(eng, t->nid);
	while (t->base != t->next) {
		ent_release(eng, &t->ent[t->base % REL_WIN],
			    SPINNIC_PTL_NI_UNDELIVERABLE);
		t->base++;
	}
	SPINNIC_LOG(WARNING, "node %u: peer nid %" PRIu32 " silent for %u ms: %u operation(s) failed (PTL_NI_UNDELIVERABLE), new epoch",
		    node->index, t->nid, node->sn->cfg.peer_timeout_ms, n);
	t->epoch = epoch_new(t->epoch);
	t->base = t->next = t->high = 0;
	t->ops_pending = false;
	t->kick = false;
	t->last_tx = now;
	eng->out_stats.peer_fails++;
	eng->out_stats.peer_failed_ops += n;
}

/* The timer of a peer expired. @return packets sent */
static unsigned
tx_timer(struct spinnic_engine *eng, struct rel_tx *t, uint64_t now,
	 unsigned budget)
{
	uint64_t limit = peer_timeout_tsc(eng);
	unsigned n = 0;
	uint32_t seq;
	bool holes;

	/* progress may be later than @p now: an ack of this same poll */
	if (now > t->progress && now - t->progress > limit) {
		tx_peer_fail(eng, t, now);
		return 0;
	}
	if (t->kick) {
		/* the peer just took our epoch: what it dropped before goes
		 * again, all of it, at once */
		for (seq = t->base; seq != t->next && n < budget; seq++) {
			struct rel_txent *e = &t->ent[seq % REL_WIN];

			if (e->acked || rel_seq_diff(seq, t->kick_seq) < 0)
				continue;
			if (ent_resend(eng, t, seq, now) != 0)
				break;
			n++;
		}
		t->kick_seq = seq;
		t->kick = seq != t->next;
		t->timer = t->kick ? now : now + rto_of(eng, t);
		return n;
	}
	eng->out_stats.rel_timeouts++;
	/* missing for sure: below what was acknowledged after it */
	holes = rel_seq_diff(t->high, t->base) > 0;
	for (seq = t->base; seq != t->next && n < budget; seq++) {
		struct rel_txent *e = &t->ent[seq % REL_WIN];

		if (e->acked)
			continue;
		if (holes && rel_seq_diff(seq, t->high) >= 0)
			break;
		if (ent_resend(eng, t, seq, now) != 0)
			break;
		n++;
		if (!holes)
			break; /* only the oldest: the peer may just be slow */
	}
	if (t->backoff < RTO_SHIFT_MAX)
		t->backoff++;
	t->timer = now + rto_of(eng, t);
	return n;
}

/* A peer asks whether we send to it in @p r->epoch: answer only when we
 * do, with where our window starts. */
static void
tx_chal(struct spinnic_engine *eng, const struct rel_ack_rec *r, uint64_t now)
{
	struct rel_tx *t = tx_peer(eng, r->nid, false);
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	if (t == NULL || t->epoch != r->epoch) {
		/* forged, or of an epoch we gave up: nothing to say */
		eng->out_stats.chal_ignored++;
		return;
	}
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_CHAL_ACK;
	p.src.nid = eng->node->nid;
	p.dst.nid = t->nid;
	p.ack_epoch = t->epoch;
	p.ack_seq = t->base;
	p.hdr_data = r->cookie;
	m = eng_build(eng->node, &p, NULL);
	if (m == NULL) {
		eng->out_stats.no_mbuf++;
		return; /* the peer challenges again */
	}
	if (eng_tx_send(eng, m, t->nid, NULL) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	eng->out_stats.chal_answered++;
	/* at most once per timeout period: a replayed challenge must not
	 * make us resend our window again and again */
	if (t->base != t->next && !t->kick &&
	    now - t->last_kick > rto_of(eng, t)) {
		t->kick = true;
		t->kick_seq = t->base;
		t->last_kick = now;
		t->timer = now;
	}
}

/* Which peers owe us an ack or a reply: probed when nothing of ours is in
 * flight to them. */
static void
tx_probe_scan(struct spinnic_engine *eng)
{
	uint32_t nids[ENG_PEERS];
	unsigned n, i, k;

	n = ptl_op_targets(eng->node->nic, nids, ENG_PEERS);
	for (i = 0; i < eng->n_tx_peers; i++) {
		struct rel_tx *t = eng->tx_peers[i];

		t->ops_pending = false;
		for (k = 0; k < n; k++)
			if (nids[k] == t->nid)
				t->ops_pending = true;
	}
}

unsigned
rel_tx_poll(struct spinnic_engine *eng, uint64_t now)
{
	uint64_t probe = eng->hz * eng->node->sn->cfg.peer_timeout_ms / 4000u;
	struct rel_ack_rec recs[32];
	unsigned n, i, sent = 0;

	do {
		n = rte_ring_sc_dequeue_burst_elem(eng->rel_acks, recs,
						   sizeof(recs[0]), 32, NULL);
		for (i = 0; i < n; i++) {
			if (recs[i].kind == REL_REC_CHAL)
				tx_chal(eng, &recs[i], now);
			else
				tx_ack(eng, &recs[i]);
		}
	} while (n == 32);
	if (now >= eng->next_probe_scan) {
		tx_probe_scan(eng);
		eng->next_probe_scan = now + probe;
	}
	for (i = 0; i < eng->n_tx_peers; i++) {
		struct rel_tx *t = eng->tx_peers[i];

		if (t->base != t->next) {
			if (now >= t->timer)
				sent += tx_timer(eng, t, now,
						 ENG_TX_BUDGET - sent);
		} else if (t->ops_pending && now > t->last_tx &&
			   now - t->last_tx > probe &&
			   eng_tx_room(eng, t->nid)) {
			struct rte_mbuf *m = tack_build(eng, t->nid);

			if (m == NULL)
				continue;
			/* sequenced: its ack (or its absence) tells */
			spinnic_wire_seal(rte_pktmbuf_mtod(m, uint8_t *),
					  rte_pktmbuf_data_len(m), 1, 0, 0);
			if (eng_tx_send(eng, m, t->nid, NULL) != 0) {
				rte_pktmbuf_free(m);
				continue;
			}
			eng->out_stats.rel_probes++;
			sent++;
		}
	}
	return sent;
}

void
rel_tx_detach(struct spinnic_engine *eng, struct ptl_client *pc)
{
	unsigned i;
	uint32_t seq;

	/* its memory is going: packets still in flight become fillers if
	 * they must be resent */
	for (i = 0; i < eng->n_tx_peers; i++) {
		struct rel_tx *t = eng->tx_peers[i];

		for (seq = t->base; seq != t->next; seq++) {
			struct rel_txent *e = &t->ent[seq % REL_WIN];

			if (e->job != NULL && e->job->match.c == pc) {
				eng_reply_job_done(eng, e->job, ENG_FAIL_SILENT);
				e->job = NULL;
			}
			if (e->sput != NULL && e->sput->c == pc) {
				/* its streams go with it: a filler if resent */
				e->sput = NULL;
				e->send_id = 0;
			}
			if (e->c != pc)
				continue;
			ptl_client_put(e->c);
			e->c = NULL;
			/* no source: resent as a filler */
			e->send_id = 0;
		}
	}
}

void
rel_tx_fini(struct spinnic_engine *eng)
{
	unsigned i;

	for (i = 0; i < eng->n_tx_peers; i++) {
		struct rel_tx *t = eng->tx_peers[i];

		while (t->base != t->next) {
			ent_release(eng, &t->ent[t->base % REL_WIN],
				    ENG_FAIL_SILENT);
			t->base++;
		}
		rte_free(t);
		eng->tx_peers[i] = NULL;
	}
	eng->n_tx_peers = 0;
}

/* ---- receive side ------------------------------------------------------------ */

/* The receive side of @p nid, or NULL when none was made. */
static struct rel_rx *
rx_find(const struct spinnic_engine *eng, uint32_t nid)
{
	unsigned i;

	for (i = 0; i < eng->n_rx_peers; i++)
		if (eng->rx_peers[i]->nid == nid)
			return eng->rx_peers[i];
	return NULL;
}

static struct rel_rx *
rx_peer(struct spinnic_engine *eng, uint32_t nid, uint64_t now)
{
	struct rel_rx *r = rx_find(eng, nid);
	unsigned i, old = UINT_MAX;

	if (r != NULL)
		return r;
	if (eng->n_rx_peers < ENG_PEERS) {
		r = rte_zmalloc("spinnic_rel_rx", sizeof(*r),
				RTE_CACHE_LINE_SIZE);
		if (r == NULL)
			return NULL;
		eng->rx_peers[eng->n_rx_peers++] = r;
	} else {
		/* full: the longest silent peer, if silent for the peer
		 * timeout (its sender gave it up or has nothing for us) */
		for (i = 0; i < eng->n_rx_peers; i++)
			if (now - eng->rx_peers[i]->last_rx >
			    peer_timeout_tsc(eng) &&
			    (old == UINT_MAX ||
			     eng->rx_peers[i]->last_rx <
			     eng->rx_peers[old]->last_rx))
				old = i;
		if (old == UINT_MAX)
			return NULL;
		r = eng->rx_peers[old];
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
	if (EVP_MAC_init(eng->rel_mac, NULL, 0, NULL) != 1 ||
	    EVP_MAC_update(eng->rel_mac, in, sizeof(in)) != 1 ||
	    EVP_MAC_final(eng->rel_mac, out, &len, sizeof(out)) != 1 ||
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
	for (i = 0; i < RTE_DIM(eng->chal_recent); i++)
		if (eng->chal_recent[i].nid == nid &&
		    eng->chal_recent[i].epoch == epoch &&
		    now - eng->chal_recent[i].tsc < rto)
			return;
	if (eng->chal_next < now)
		eng->chal_next = now;
	if (eng->chal_next - now > gap * CHAL_BURST) {
		eng->in_stats.chal_limited++;
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
	eng->chal_next += gap;
	eng->in_stats.chal_sent++;
	i = eng->chal_slot++ % RTE_DIM(eng->chal_recent);
	eng->chal_recent[i].nid = nid;
	eng->chal_recent[i].epoch = epoch;
	eng->chal_recent[i].tsc = now;
}

void
rel_rx_handshake(struct spinnic_engine *eng, struct rte_mbuf *m,
		 const struct spinnic_pkt *p)
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
			eng->in_stats.ack_ring_full++;
		rte_pktmbuf_free(m);
		return;
	}
	r = rx_find(eng, p->src.nid);
	held = held_epoch(r);
	if (r != NULL && r->win.known && held == p->ack_epoch) {
		/* a later answer of a question answered already */
		rte_pktmbuf_free(m);
		return;
	}
	slot = cookie_slot();
	if (p->hdr_data == 0 ||
	    (p->hdr_data != cookie_of(eng, p->src.nid, p->ack_epoch, held,
				      slot) &&
	     p->hdr_data != cookie_of(eng, p->src.nid, p->ack_epoch, held,
				      slot - 1))) {
		/* not the answer to a challenge of ours, or a late one */
		eng_in_drop(eng, m, ENG_DROP_BAD_COOKIE);
		return;
	}
	now = rte_get_timer_cycles();
	if (r == NULL)
		r = rx_peer(eng, p->src.nid, now);
	if (r == NULL) {
		eng_in_drop(eng, m, ENG_DROP_PEERS_FULL);
		return;
	}
	if (rel_rx_accept(&r->win, p->ack_epoch, p->ack_seq)) {
		eng->in_stats.rel_resets++;
		r->pending = 0;
		r->ack_now = false;
		r->last_rx = now;
		eng->rel_moves++; /* parked packets of it may go */
		SPINNIC_LOG(DEBUG, "node %u: nid %" PRIu32 " verified in epoch %#" PRIx32 " from seq %" PRIu32,
			    eng->node->index, p->src.nid, p->ack_epoch,
			    p->ack_seq);
	}
	rte_pktmbuf_free(m);
}

bool
rel_rx_unsequenced(struct spinnic_engine *eng, struct rte_mbuf *m,
		   const struct spinnic_pkt *p)
{
	/* data of a node that has no session with us (a generator); a
	 * node with one sends everything sequenced, so an unsequenced
	 * packet in its name is forged */
	if (p->type == SPINNIC_WIRE_T_DATA && rx_find(eng, p->src.nid) == NULL) {
		eng->in_stats.unsequenced++;
		return true;
	}
	eng_in_drop(eng, m, ENG_DROP_UNSEQUENCED);
	return false;
}

bool
rel_rx_begin(struct spinnic_engine *eng, struct rte_mbuf *m,
	     const struct spinnic_pkt *p)
{
	struct rel_rx *r;

	eng->transient = false;
	if (!(p->flags & SPINNIC_WIRE_F_REL))
		return rel_rx_unsequenced(eng, m, p);
	r = rx_find(eng, p->src.nid);
	switch (r == NULL ? REL_OTHER :
		rel_rx_check(&r->win, p->epoch, p->seq)) {
	case REL_NEW:
		return true;
	case REL_DUP:
		r->ack_now = true;
		eng_in_drop(eng, m, ENG_DROP_REL_DUP);
		return false;
	case REL_OTHER:
		/* a new sender, a restarted one, or a forgery: only the
		 * node at that nid's address can answer */
		chal_send(eng, p->src.nid, p->epoch, r);
		eng_in_drop(eng, m, ENG_DROP_REL_EPOCH);
		return false;
	default:
		eng_in_drop(eng, m, ENG_DROP_REL_BEYOND);
		return false;
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
	if (eng->transient) {
		/* dropped for want of a slot or memory: let it come again */
		eng->in_stats.rel_unacked++;
		return;
	}
	r = rx_find(eng, p->src.nid);
	if (r == NULL)
		return;
	now = rte_get_timer_cycles();
	r->last_rx = now;
	if (r->win.next == p->seq)
		eng->rel_moves++; /* parked packets may go now */
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

	eng->in_stats.tacks_rcvd++;
	if (rte_ring_sp_enqueue_elem(eng->rel_acks, &rec, sizeof(rec)) != 0)
		eng->in_stats.ack_ring_full++;
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
	eng->in_stats.tacks_sent++;
	return 0;
}

unsigned
rel_rx_acks(struct spinnic_engine *eng, uint64_t now)
{
	unsigned i, n = 0;

	for (i = 0; i < eng->n_rx_peers; i++) {
		struct rel_rx *r = eng->rx_peers[i];
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

	for (i = 0; i < eng->n_rx_peers; i++) {
		rte_free(eng->rx_peers[i]);
		eng->rx_peers[i] = NULL;
	}
	eng->n_rx_peers = 0;	EVP_MAC_CTX_free(eng->rel_mac);
	eng->rel_mac = NULL;
}
