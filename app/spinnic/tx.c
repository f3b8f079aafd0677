/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The TX path of a node: its sealed frames through the TX fault stage to
 * per-queue holds, and the holds to the port. Outbound role only: the one
 * caller of rte_eth_tx_burst on a node. A packet the port does not take is
 * held and retried, never dropped.
 */
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "auth.h"
#include "engine.h"
#include "packet.h"

unsigned
eng_tx_hold_free(const struct spinnic_engine *eng, uint16_t q)
{
	return ENG_TX_HOLD - eng->tx.hold[q].n;
}

static void
hold_push(struct spinnic_engine *eng, uint16_t q, struct rte_mbuf *m)
{
	struct tx_hold *h = &eng->tx.hold[q];

	h->pkts[(h->head + h->n) % ENG_TX_HOLD] = m;
	h->n++;
}

/* Hand held packets to the port. @return packets sent. */
static unsigned
hold_flush(struct spinnic_engine *eng, uint16_t q)
{
	struct spinnic_node *node = eng->node;
	struct tx_hold *h = &eng->tx.hold[q];
	unsigned sent = 0;

	while (h->n > 0) {
		unsigned run = RTE_MIN(h->n, ENG_TX_HOLD - h->head);
		uint16_t k, i;

		run = RTE_MIN(run, 64u);
		k = rte_eth_tx_burst(node->port_id, q, &h->pkts[h->head],
				     (uint16_t)run);
		for (i = 0; i < k; i++)
			node->tx.bytes += rte_pktmbuf_pkt_len(h->pkts[h->head + i]);
		node->tx.pkts += k;
		h->head = (h->head + k) % ENG_TX_HOLD;
		h->n -= k;
		sent += k;
		if (k < run) {
			eng->tx.stats.held += run - k;
			break;
		}
	}
	if (h->n == 0)
		h->head = 0;
	return sent;
}

/* A sealed packet to its queue (a real port's node to itself: its own
 * RX, through node->loop); with no room there it is one more loss, which
 * the transport repairs. */
static void
hold_push_or_drop(struct spinnic_engine *eng, uint32_t dst_nid,
		  struct rte_mbuf *m)
{
	struct spinnic_node *node = eng->node;
	uint16_t q;

	if (unlikely(dst_nid == node->nid) && node->loop != NULL) {
		if (rte_ring_sp_enqueue(node->loop, m) != 0) {
			node->tx.full++;
			rte_pktmbuf_free(m);
			return;
		}
		node->tx.loopback++;
		return;
	}
	q = spinnic_node_txq(node, dst_nid);
	if (q == UINT16_MAX || eng_tx_hold_free(eng, q) == 0) {
		eng->node->tx.full++;
		rte_pktmbuf_free(m);
		return;
	}
	hold_push(eng, q, m);
}

/* TX fault stage (--fault-inject tx:) in front of the holds: duplicates
 * and packets let out of the reorder window go to their own queues. */
static void
hold_push_faulty(struct spinnic_engine *eng, struct rte_mbuf **pkts,
		 unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		hold_push_or_drop(eng, eng_frame_dst_nid(pkts[i]), pkts[i]);
}

void
eng_tx_push(struct spinnic_engine *eng, struct rte_mbuf *m, uint32_t dst_nid)
{
	struct rte_mbuf *out[2 + ENG_FAULT_WIN];

	/* --wire-key: every finished frame of the node passes here, on its
	 * outbound role only (auth.h); sealed before the wire's faults */
	if (unlikely(eng->node->auth != NULL) &&
	    spinnic_auth_seal(eng->node, m) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (eng->tx.faults == NULL)
		hold_push_or_drop(eng, dst_nid, m);
	else
		hold_push_faulty(eng, out,
				 fault_apply(eng->tx.faults, &m, 1, out));
}

bool
eng_tx_hold_room(const struct spinnic_engine *eng, uint32_t dst_nid)
{
	uint16_t q = spinnic_node_txq(eng->node, dst_nid);

	if (dst_nid == eng->node->nid && eng->node->loop != NULL)
		return rte_ring_free_count(eng->node->loop) > ENG_TX_RESERVE;
	return q == UINT16_MAX || eng_tx_hold_free(eng, q) > ENG_TX_RESERVE;
}

unsigned
eng_tx_flush(struct spinnic_engine *eng)
{
	unsigned q, sent = 0;

	for (q = 0; q < eng->node->nb_txq; q++)
		sent += hold_flush(eng, q);
	return sent;
}

void
eng_tx_fault_idle(struct spinnic_engine *eng)
{
	struct rte_mbuf *out[ENG_FAULT_WIN];

	if (eng->tx.faults == NULL || eng->tx.faults->nwin == 0)
		return;
	/* idle: packets held back to reorder go now */
	hold_push_faulty(eng, out, fault_apply(eng->tx.faults, NULL, 0, out));
}

void
eng_tx_fini(struct spinnic_engine *eng)
{
	unsigned q;

	fault_stage_free(eng->tx.faults);
	eng->tx.faults = NULL;
	for (q = 0; eng->tx.hold != NULL && q < eng->node->nb_txq; q++) {
		struct tx_hold *h = &eng->tx.hold[q];

		while (h->n > 0) {
			rte_pktmbuf_free(h->pkts[h->head]);
			h->head = (h->head + 1) % ENG_TX_HOLD;
			h->n--;
		}
	}
}
