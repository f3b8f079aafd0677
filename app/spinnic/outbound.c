/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The outbound role of a node: each poll flushes the TX holds, runs the
 * send side of reliable delivery, sends staged packets of other roles
 * (acks), answers GETs (REPLY packets of reply jobs), progresses streamed
 * and processed puts, then commands. While a queue holds packets nothing
 * new is built for it (backpressure reaches the command rings).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine.h"
#include "outbound_stream.h"
#include "packet.h"

/* How often the outbound engine looks for newly attached clients (a new
 * client's first command waits at most this long). */
#define SCAN_PER_S 200u

/*
 * Staged packets of other roles (acks). A packet that finds
 * no room (its queue or its peer's window is full) waits in eng->tx.staged;
 * those behind it, for other peers, go on. Transport acks come on their
 * own ring and go first: they are what frees the windows, so they must
 * never wait behind packets waiting for a window.
 */
static unsigned
staged_drain(struct spinnic_engine *eng)
{
	struct spinnic_node *node = eng->node;
	struct rte_mbuf *tk[32];
	unsigned n, i, k, done = 0;

	do {
		n = rte_ring_sc_dequeue_burst(eng->tacks, (void **)tk,
					      RTE_DIM(tk), NULL);
		for (i = 0; i < n; i++)
			if (rel_tx_send(eng, tk[i], eng_frame_dst_nid(tk[i]),
					NULL) != 0) {
				/* a later ack says as much */
				eng->tx.stats.tacks_dropped++;
				rte_pktmbuf_free(tk[i]);
			}
		done += n;
	} while (n == RTE_DIM(tk));
	for (;;) {
		unsigned sent = 0;

		for (i = 0, k = 0; i < eng->tx.n_staged; i++) {
			struct rte_mbuf *m = eng->tx.staged[i];

			if (rel_tx_send(eng, m, eng_frame_dst_nid(m), NULL) == 0)
				sent++;
			else
				eng->tx.staged[k++] = m;
		}
		eng->tx.n_staged = k;
		done += sent;
		if (k == RTE_DIM(eng->tx.staged))
			break;
		n = rte_ring_sc_dequeue_burst(node->txr,
					      (void **)(eng->tx.staged + k),
					      RTE_DIM(eng->tx.staged) - k, NULL);
		eng->tx.stats.staged_pkts += n;
		eng->tx.n_staged += n;
		if (n == 0)
			break;
	}
	return done;
}

/* ---- GET replies ---------------------------------------------------------- */

/* Take the head job off the queue. */
static void
job_unlink(struct spinnic_engine *eng, struct reply_job *j)
{
	eng->tx.job_head = j->next;
	if (eng->tx.job_head == NULL)
		eng->tx.job_tail = NULL;
	j->next = NULL;
}

static void
job_end(struct spinnic_engine *eng, struct reply_job *j, uint8_t fail)
{
	job_unlink(eng, j);
	reply_job_end(eng->node->nic, j, fail);
}

/* New GETs to answer (from the inbound role) to the tail of the queue. */
static void
jobs_take(struct spinnic_engine *eng)
{
	struct reply_job *j;
	void *obj;

	while (rte_ring_sc_dequeue(eng->jobs, &obj) == 0) {
		j = obj;
		j->next = NULL;
		if (eng->tx.job_tail != NULL)
			eng->tx.job_tail->next = j;
		else
			eng->tx.job_head = j;
		eng->tx.job_tail = j;
	}
}

/* The head job waits for an Active Access consumer (a flush, or a log
 * without room): to the tail, the others go on. @return false when the
 * jobs left all wait (stop for this round) */
static bool
job_park(struct spinnic_engine *eng, struct reply_job *j,
	 struct reply_job **parked_p)
{
	if (j == *parked_p || j->next == NULL)
		return false;
	if (*parked_p == NULL)
		*parked_p = j;
	job_unlink(eng, j);
	eng->tx.job_tail->next = j;
	eng->tx.job_tail = j;
	return true;
}

static unsigned
replies_poll(struct spinnic_engine *eng, unsigned budget)
{
	struct spinnic_node *node = eng->node;
	struct reply_job *j, *parked = NULL;
	unsigned n = 0;
	bool wait;

	jobs_take(eng);
	while ((j = eng->tx.job_head) != NULL && n < budget) {
		const struct ptl_match *mt = &j->match;

		if (j->abandon) {
			job_end(eng, j, SPINNIC_PTL_NI_UNDELIVERABLE);
			continue;
		}
		if (j->aa_flush) {
			if (!ptl_aa_flush_done(mt->c, j->aa_log,
					       &j->aa_mark)) {
				if (!job_park(eng, j, &parked))
					break;
				continue;
			}
			j->aa_flush = false;
		}
		if (!rel_tx_room(eng, mt->initiator.nid))
			break;
		wait = false;
		do {
			uint64_t left = mt->mlength - j->off;
			uint32_t len = (uint32_t)RTE_MIN(left,
							 (uint64_t)node->payload);
			struct rel_src src = { 0 };
			struct spinnic_pkt p;
			struct rte_mbuf *m;
			uint8_t *pay;
			bool last;
			int rc;

			memset(&p, 0, sizeof(p));
			p.type = SPINNIC_WIRE_T_REPLY;
			p.op = j->op;
			p.ni = j->ni_kind;
			p.src = j->src;
			p.dst = mt->initiator;
			p.pt_index = mt->pt_index;
			p.match_bits = mt->match_bits;
			p.msg_id = mt->msg_id;
			p.msg_len = mt->mlength;
			p.mlength = mt->mlength;
			p.remote_offset = mt->remote_offset;
			spinnic_wire_pkt_seg(&p, j->off, len);
			m = eng_build(node, &p, &pay);
			if (m == NULL) {
				eng->tx.stats.no_mbuf++;
				return n;
			}
			if (j->kept)
				memcpy(pay, j->data + j->off, len);
			rc = len == 0 || j->kept ? 0 :
				ptl_match_access_remote(mt, j->off, pay, len,
							false);
			if (rc == -EAGAIN) {
				/* its records do not fit a log that
				 * back-pressures: read again later */
				rte_pktmbuf_free(m);
				eng->tx.stats.aa_waits++;
				wait = true;
				break;
			}
			if (rc != 0) {
				/* target memory gone: the initiator times out
				 * on the missing bytes; the target learns */
				rte_pktmbuf_free(m);
				eng->tx.stats.read_faults++;
				job_end(eng, j, SPINNIC_PTL_NI_SEGV);
				break;
			}
			/* a resend reads the window again, or keeps a copy
			 * of a kept reply's frame, or of an iovec ME's (its
			 * entries are the match's, not the window entry's) */
			src.c = j->kept || mt->iov != NULL ? NULL : mt->c;
			src.addr = mt->start + j->off;
			src.send_id = 0;
			/* the last packet carries the job: GET event at the
			 * target once every packet is acknowledged (until
			 * then a retransmission may read the window) */
			last = j->off + len == mt->mlength;
			src.job = last ? j : NULL;
			if (last)
				job_unlink(eng, j); /* the packet's now */
			if (rel_tx_send(eng, m, p.dst.nid, &src) != 0) {
				rte_pktmbuf_free(m);
				if (last) {
					/* back at the head of the queue */
					j->next = eng->tx.job_head;
					eng->tx.job_head = j;
					if (eng->tx.job_tail == NULL)
						eng->tx.job_tail = j;
				}
				return n;
			}
			eng->tx.stats.reply_pkts++;
			n++;
			if (last)
				break;
			j->off += len;
		} while (n < budget && rel_tx_room(eng, mt->initiator.nid));
		if (wait) {
			if (!job_park(eng, j, &parked))
				break;
			continue;
		}
		if (eng->tx.job_head == j)
			break;
	}
	return n;
}

/* Peers rel_tx_poll gave up: their operations are failed already, so
 * nothing more of them is built. */
static void
peers_failed(struct spinnic_engine *eng)
{
	struct reply_job *j;
	unsigned i;

	for (i = 0; i < eng->tx.n_failed; i++) {
		uint32_t nid = eng->tx.failed[i];

		eng_commands_peer_failed(eng, nid);
		/* replies to gets of that peer: the rest is not sent */
		for (j = eng->tx.job_head; j != NULL; j = j->next)
			if (j->match.initiator.nid == nid)
				j->abandon = 1;
	}
	eng->tx.n_failed = 0;
}

/* ---- role ------------------------------------------------------------------ */

static void
out_detach_check(struct spinnic_engine *eng)
{
	uint64_t req = __atomic_load_n(&eng->detach_req, __ATOMIC_ACQUIRE);

	if (req == eng->tx.detach_ack)
		return;
	eng_out_detach(eng, eng->detach_pc);
	__atomic_store_n(&eng->tx.detach_ack, req, __ATOMIC_RELEASE);
}

unsigned
spinnic_outbound_poll(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;
	unsigned work = 0;
	uint64_t now;

	out_detach_check(eng);
	now = rte_get_timer_cycles();
	if (now >= eng->tx.next_scan) {
		eng_clients_scan(eng);
		eng->tx.next_scan = now + eng->hz / SCAN_PER_S;
	}
	work += eng_tx_flush(eng);
	work += rel_tx_poll(eng, now);
	if (eng->tx.n_failed > 0)
		peers_failed(eng);
	work += staged_drain(eng);
	work += eng_sput_poll(eng);
	work += replies_poll(eng, ENG_TX_BUDGET);
	work += eng_commands_poll(eng, ENG_TX_BUDGET);
	if (work == 0)
		eng_tx_fault_idle(eng);
	eng_tx_flush(eng);
	return work;
}

void
eng_out_detach(struct spinnic_engine *eng, struct ptl_client *pc)
{
	struct reply_job **pp, *j;

	eng_commands_detach(eng, pc);
	rel_tx_forget(eng, pc, NULL);
	jobs_take(eng);
	eng->tx.job_tail = NULL;
	for (pp = &eng->tx.job_head; (j = *pp) != NULL;) {
		if (j->match.c == pc) {
			*pp = j->next;
			ptl_match_release(eng->node->nic, &j->match);
			eng->tx.stats.detach_drops++;
			free(j);
			continue;
		}
		eng->tx.job_tail = j;
		pp = &j->next;
	}
}

void
eng_out_fini(struct spinnic_engine *eng)
{
	struct reply_job *j;
	unsigned pid;
	void *obj;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++)
		if (eng->tx.clients[pid].op.c != NULL)
			eng_client_forget(eng, &eng->tx.clients[pid]);
	eng_commands_fini(eng);
	/* flushes the inbound role held for message handlers (inbound.c) */
	for (pid = 0; pid < ENG_FLUSH_WAIT; pid++) {
		j = eng->rx.fwait[pid].j;
		if (j == NULL)
			continue;
		ptl_match_release(eng->node->nic, &j->match);
		free(j);
		eng->rx.fwait[pid].j = NULL;
	}
	eng->rx.n_fwait = 0;
	if (eng->jobs != NULL)
		while (rte_ring_sc_dequeue(eng->jobs, &obj) == 0) {
			j = obj;
			ptl_match_release(eng->node->nic, &j->match);
			free(j);
		}
	while ((j = eng->tx.job_head) != NULL) {
		eng->tx.job_head = j->next;
		ptl_match_release(eng->node->nic, &j->match);
		free(j);
	}
	eng->tx.job_tail = NULL;
	eng_sput_fini(eng);
	rel_tx_fini(eng);
	while (eng->tx.n_staged > 0)
		rte_pktmbuf_free(eng->tx.staged[--eng->tx.n_staged]);
	if (eng->tacks != NULL)
		while (rte_ring_sc_dequeue(eng->tacks, &obj) == 0)
			rte_pktmbuf_free(obj);
	eng_tx_fini(eng);
}

/* ---- engine life cycle ---------------------------------------------------- */
