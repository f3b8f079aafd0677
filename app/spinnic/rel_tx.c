/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliable delivery, send side (DESIGN §11): per-peer sequence numbers,
 * windows, retransmission from the packet's source, timers, probes and
 * answers to challenges. Outbound role only; acks and challenges come from
 * the inbound role on eng->rel_acks. The protocol: doc/reliable-delivery.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "engine.h"
#include "packet.h"

#define RTO_SHIFT_MAX 6u

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

/* The send side of @p nid, or NULL */
static struct rel_tx *
peer_find(const struct spinnic_engine *eng, uint32_t nid)
{
	unsigned i;

	for (i = 0; i < eng->tx.n_peers; i++)
		if (eng->tx.peers[i]->nid == nid)
			return eng->tx.peers[i];
	return NULL;
}

static struct rel_tx *
tx_peer(struct spinnic_engine *eng, uint32_t nid, bool create)
{
	uint64_t now, idle = rel_peer_timeout_tsc(eng);
	struct rel_tx *t = peer_find(eng, nid);
	unsigned i;

	if (t != NULL || !create)
		return t;
	if (eng->tx.n_peers < ENG_PEERS) {
		t = rte_zmalloc("spinnic_rel_tx", sizeof(*t),
				RTE_CACHE_LINE_SIZE);
		if (t == NULL)
			return NULL;
		eng->tx.peers[eng->tx.n_peers++] = t;
	} else {
		/* full: reuse a peer with nothing in flight, owing us
		 * nothing, silent for the peer timeout */
		now = rte_get_timer_cycles();
		for (i = 0; i < eng->tx.n_peers; i++) {
			t = eng->tx.peers[i];
			if (t->base == t->next && !t->ops_pending &&
			    now - t->last_tx > idle)
				break;
		}
		if (i == eng->tx.n_peers) {
			eng->tx.stats.peers_full++;
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
		reply_job_end(eng->node->nic, e->job, fail);
	e->job = NULL;
	if (e->c != NULL)
		ptl_client_put(e->c);
	rte_pktmbuf_free(e->copy);
	e->c = NULL;
	e->copy = NULL;
	e->small_kept = 0;
	e->send_id = 0;
	e->acked = 0;
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
		spinnic_wire_seal(f, len, rel_seal_flags(eng), 0, 0);
		return 0;
	}
	t = tx_peer(eng, dst_nid, true);
	if (t == NULL)
		return -ENOSPC; /* no peer slot: again when one frees */
	if (t->next - t->base >= REL_WIN - (data ? REL_RESERVE : 0)) {
		eng->tx.stats.rel_full++;
		return -ENOSPC;
	}
	e = &t->ent[t->next % REL_WIN];
	e->pay_len = len - SPINNIC_WIRE_HDR_LEN;
	e->refill = NULL;
	if (e->pay_len > 0) {
		if (src != NULL && src->refill != NULL) {
			/* re-created by its source (a stream's pieces, a type) */
			e->refill = src->refill;
			e->refill_arg = src->refill_arg;
		} else if (src != NULL && src->c != NULL) {
			ptl_client_get(src->c);
			e->c = src->c;
			e->addr = src->addr;
		} else if (e->pay_len <= REL_SMALL) {
			memcpy(e->small, f + SPINNIC_WIRE_HDR_LEN, e->pay_len);
			e->small_kept = 1;
		} else {
			e->copy = rte_pktmbuf_copy(m, eng->node->pool, 0,
						   UINT32_MAX);
			if (e->copy == NULL) {
				eng->tx.stats.no_mbuf++;
				return -ENOSPC;
			}
		}
	}
	spinnic_wire_seal(f, len, 1 | rel_seal_flags(eng), t->epoch, t->next);
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
			eng->tx.stats.rel_acked++;
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
		eng->tx.stats.no_mbuf++;
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
		if (e->small_kept)
			memcpy(f + SPINNIC_WIRE_HDR_LEN, e->small, e->pay_len);
		else if (e->copy != NULL)
			memcpy(f + SPINNIC_WIRE_HDR_LEN,
			       rte_pktmbuf_mtod_offset(e->copy, uint8_t *,
						       SPINNIC_WIRE_HDR_LEN),
			       e->pay_len);
		else if (e->refill != NULL)
			rc = e->refill(e->refill_arg, msg_id, off, e->pay_len,
				       f + SPINNIC_WIRE_HDR_LEN);
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
			eng->tx.stats.no_mbuf++;
			return -ENOBUFS;
		}
		f = rte_pktmbuf_mtod(m, uint8_t *);
		spinnic_wire_seal(f, rte_pktmbuf_data_len(m), 1 | rel_seal_flags(eng),
				  t->epoch, seq);
		ent_release(eng, e, SPINNIC_PTL_NI_SEGV);
		e->refill = NULL;
		e->pay_len = 0;
		memcpy(e->hdr, f, SPINNIC_WIRE_HDR_LEN);
		eng->tx.stats.rel_fillers++;
	} else {
		/* the bytes are those sent before; the checksum is redone all
		 * the same, so a changed buffer is not dropped forever */
		spinnic_wire_seal(f, rte_pktmbuf_data_len(m), rel_seal_flags(eng),
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
	/* the builders learn it from the poll's caller (rel_tx_poll) */
	if (eng->tx.n_failed < RTE_DIM(eng->tx.failed))
		eng->tx.failed[eng->tx.n_failed++] = t->nid;
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
	eng->tx.stats.peer_fails++;
	eng->tx.stats.peer_failed_ops += n;
}

/* The timer of a peer expired. @return packets sent */
static unsigned
tx_timer(struct spinnic_engine *eng, struct rel_tx *t, uint64_t now,
	 unsigned budget)
{
	uint64_t limit = rel_peer_timeout_tsc(eng);
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
	eng->tx.stats.rel_timeouts++;
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
		eng->tx.stats.chal_ignored++;
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
		eng->tx.stats.no_mbuf++;
		return; /* the peer challenges again */
	}
	if (rel_tx_send(eng, m, t->nid, NULL) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	eng->tx.stats.chal_answered++;
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
	for (i = 0; i < eng->tx.n_peers; i++) {
		struct rel_tx *t = eng->tx.peers[i];

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

	/*
	 * A gap in this engine's own polls is its lcore not running (an
	 * overcommitted host: 16 ranks on 2 cores starved spinnic for
	 * seconds), not its peers' silence: it heard nothing because it did
	 * not listen. Each peer's last progress moves on by the gap, so a
	 * peer is given up only after --peer-timeout-ms of silence while
	 * this engine ran. An idle lcore sleeps at most 1 ms, or
	 * --idle-sleep-us when larger (lcore.c): a gap is over 10 ms and
	 * over 4 such sleeps.
	 */
	uint64_t stall = RTE_MAX(eng->hz / 100, eng->hz * 4 *
				 RTE_MAX(eng->node->sn->cfg.idle_sleep_us,
					 1000u) / 1000000u);

	if (eng->tx.last_poll != 0 && now > eng->tx.last_poll &&
	    now - eng->tx.last_poll > stall) {
		uint64_t gap = now - eng->tx.last_poll;

		for (i = 0; i < eng->tx.n_peers; i++)
			eng->tx.peers[i]->progress += gap;
		eng->tx.stats.rel_stalls++;
	}
	eng->tx.last_poll = now;
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
	if (now >= eng->tx.next_probe_scan) {
		tx_probe_scan(eng);
		eng->tx.next_probe_scan = now + probe;
	}
	for (i = 0; i < eng->tx.n_peers; i++) {
		struct rel_tx *t = eng->tx.peers[i];

		if (t->base != t->next) {
			if (now >= t->timer)
				sent += tx_timer(eng, t, now,
						 ENG_TX_BUDGET - sent);
		} else if (t->ops_pending && now > t->last_tx &&
			   now - t->last_tx > probe &&
			   rel_tx_room(eng, t->nid)) {
			struct rte_mbuf *m = tack_build(eng, t->nid);

			if (m == NULL)
				continue;
			/* sequenced: its ack (or its absence) tells */
			spinnic_wire_seal(rte_pktmbuf_mtod(m, uint8_t *),
					  rte_pktmbuf_data_len(m), 1, 0, 0);
			if (rel_tx_send(eng, m, t->nid, NULL) != 0) {
				rte_pktmbuf_free(m);
				continue;
			}
			eng->tx.stats.rel_probes++;
			sent++;
		}
	}
	return sent;
}


void
rel_tx_fini(struct spinnic_engine *eng)
{
	unsigned i;

	for (i = 0; i < eng->tx.n_peers; i++) {
		struct rel_tx *t = eng->tx.peers[i];

		while (t->base != t->next) {
			ent_release(eng, &t->ent[t->base % REL_WIN],
				    ENG_FAIL_SILENT);
			t->base++;
		}
		rte_free(t);
		eng->tx.peers[i] = NULL;
	}
	eng->tx.n_peers = 0;
}

int
rel_tx_send(struct spinnic_engine *eng, struct rte_mbuf *m, uint32_t dst_nid,
	    const struct rel_src *src)
{
	uint16_t q = spinnic_node_txq(eng->node, dst_nid);

	if (q == UINT16_MAX) {
		/* no port reaches that nid: nobody will ever take it */
		eng->tx.stats.unreachable++;
		eng->node->tx.full++;
		rte_pktmbuf_free(m);
		if (src != NULL && src->send_id != 0)
			ptl_op_sent(eng->node->nic, src->send_id,
				    SPINNIC_PTL_NI_UNDELIVERABLE);
		if (src != NULL && src->job != NULL)
			reply_job_end(eng->node->nic, src->job,
				      SPINNIC_PTL_NI_UNDELIVERABLE);
		return 0;
	}
	if (eng_tx_hold_free(eng, q) == 0)
		return -ENOSPC;
	if (rel_track(eng, m, dst_nid, src) != 0)
		return -ENOSPC;
	eng_tx_push(eng, m, dst_nid);
	return 0;
}

/*
 * Room to build a data packet (request or reply) for @p dst_nid now. The
 * last ENG_TX_RESERVE slots of a queue, and the last REL_RESERVE of a
 * peer's window, are kept for staged acks: a node whose RX waits for its
 * acks to leave must not find its TX queue full of its own data.
 */
bool
rel_tx_room(const struct spinnic_engine *eng, uint32_t dst_nid)
{
	return eng_tx_hold_room(eng, dst_nid) &&
	       rel_tx_window_free(eng, dst_nid, 1) == 1;
}

unsigned
rel_tx_window_free(const struct spinnic_engine *eng, uint32_t dst_nid,
		   unsigned max)
{
	const struct rel_tx *t = peer_find(eng, dst_nid);
	unsigned used;

	if (t == NULL)
		return max;
	used = t->next - t->base;
	return used >= REL_WIN - REL_RESERVE ? 0 :
		RTE_MIN(max, REL_WIN - REL_RESERVE - used);
}

void
rel_tx_forget(struct spinnic_engine *eng, const struct ptl_client *pc,
	      const void *refill_arg)
{
	unsigned i;
	uint32_t seq;

	/* the source's memory is going: packets still in flight become
	 * fillers if they must be resent */
	for (i = 0; i < eng->tx.n_peers; i++) {
		struct rel_tx *t = eng->tx.peers[i];

		for (seq = t->base; seq != t->next; seq++) {
			struct rel_txent *e = &t->ent[seq % REL_WIN];

			if (pc != NULL && e->job != NULL &&
			    e->job->match.c == pc) {
				reply_job_end(eng->node->nic, e->job,
					      ENG_FAIL_SILENT);
				e->job = NULL;
			}
			if (refill_arg != NULL && e->refill != NULL &&
			    e->refill_arg == refill_arg) {
				e->refill = NULL;
				e->send_id = 0;
			}
			if (pc == NULL || e->c != pc)
				continue;
			ptl_client_put(e->c);
			e->c = NULL;
			e->send_id = 0;
		}
	}
}
