/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Outbound engine: command rings -> DATA / GET packets, GET replies, the
 * staging ring of other roles (acks) -> TX queues. Only this role calls
 * rte_eth_tx_burst on a node. A packet the port does not take is held and
 * retried, never dropped; while a queue holds packets nothing new is built
 * for it (backpressure reaches the command rings).
 *
 * Also the engine's life cycle (init, fini, detach handshake, counters).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "auth.h"
#include "engine.h"
#include "outbound_stream.h"
#include "packet.h"

/* How often the outbound engine looks for newly attached clients (a new
 * client's first command waits at most this long). */
#define SCAN_PER_S 200u
#define JOBS_SIZE 1024u
#define DONE_SIZE 4096u

/* ---- packet building ------------------------------------------------------ */

uint32_t
eng_frame_dst_nid(const struct rte_mbuf *m)
{
	uint32_t nid = UINT32_MAX;

	if (rte_pktmbuf_data_len(m) < SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN)
		return UINT32_MAX;
	if (spinnic_wire_ip_nid(spinnic_wire_frame_dst_ip(
			rte_pktmbuf_mtod(m, const void *)), &nid) != 0)
		return UINT32_MAX;
	return nid;
}

struct rte_mbuf *
eng_build(struct spinnic_node *node, const struct spinnic_pkt *p,
	  uint8_t **pay_p)
{
	struct spinnic_wire_addr a;
	struct rte_mbuf *m;
	size_t len = SPINNIC_WIRE_HDR_LEN + p->pay_len;
	char *f;
	int rc;

	m = rte_pktmbuf_alloc(node->pool);
	if (m == NULL)
		return NULL;
	f = rte_pktmbuf_append(m, (uint16_t)len);
	if (len > UINT16_MAX || f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	spinnic_wire_addr_nodes(node->nid, p->dst.nid, node->udp_port, &a);
	rc = spinnic_wire_build(f, len, &a, p);
	if (rc < 0) {
		SPINNIC_LOG(ERR, "node %u: wire build: %s", node->index,
			    strerror(-rc));
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (pay_p != NULL)
		*pay_p = (uint8_t *)f + SPINNIC_WIRE_HDR_LEN;
	return m;
}

/* ---- TX queues ------------------------------------------------------------- */

static unsigned
hold_room(const struct spinnic_engine *eng, uint16_t q)
{
	return ENG_TX_HOLD - eng->hold[q].n;
}

static void
hold_push(struct spinnic_engine *eng, uint16_t q, struct rte_mbuf *m)
{
	struct tx_hold *h = &eng->hold[q];

	h->pkts[(h->head + h->n) % ENG_TX_HOLD] = m;
	h->n++;
}

/* Hand held packets to the port. @return packets sent. */
static unsigned
hold_flush(struct spinnic_engine *eng, uint16_t q)
{
	struct spinnic_node *node = eng->node;
	struct tx_hold *h = &eng->hold[q];
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
			eng->out_stats.held += run - k;
			break;
		}
	}
	if (h->n == 0)
		h->head = 0;
	return sent;
}

/* A sealed packet to its queue; with no room there it is one more loss,
 * which the transport repairs. */
static void
hold_push_or_drop(struct spinnic_engine *eng, uint16_t q, struct rte_mbuf *m)
{
	if (q == UINT16_MAX || hold_room(eng, q) == 0) {
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
		hold_push_or_drop(eng, spinnic_node_txq(eng->node,
					eng_frame_dst_nid(pkts[i])), pkts[i]);
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
	if (eng->fault_tx == NULL)
		hold_push_or_drop(eng, spinnic_node_txq(eng->node, dst_nid), m);
	else
		hold_push_faulty(eng, out,
				 fault_apply(eng->fault_tx, &m, 1, out));
}

bool
eng_tx_hold_room(const struct spinnic_engine *eng, uint32_t dst_nid)
{
	uint16_t q = spinnic_node_txq(eng->node, dst_nid);

	return q == UINT16_MAX || hold_room(eng, q) > ENG_TX_RESERVE;
}

int
eng_tx_send(struct spinnic_engine *eng, struct rte_mbuf *m, uint32_t dst_nid,
	    const struct rel_src *src)
{
	uint16_t q = spinnic_node_txq(eng->node, dst_nid);

	if (q == UINT16_MAX) {
		/* no port reaches that nid: nobody will ever take it */
		eng->out_stats.unreachable++;
		eng->node->tx.full++;
		rte_pktmbuf_free(m);
		if (src != NULL && src->send_id != 0)
			ptl_op_sent(eng->node->nic, src->send_id,
				    SPINNIC_PTL_NI_UNDELIVERABLE);
		if (src != NULL && src->job != NULL)
			eng_reply_job_done(eng, src->job,
					   SPINNIC_PTL_NI_UNDELIVERABLE);
		return 0;
	}
	if (hold_room(eng, q) == 0)
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
eng_tx_room(const struct spinnic_engine *eng, uint32_t dst_nid)
{
	return eng_tx_hold_room(eng, dst_nid) &&
		rel_tx_room(eng, dst_nid, 1);
}

/*
 * Staged packets of other roles (acks, handler puts). A packet that finds
 * no room (its queue or its peer's window is full) waits in eng->staged;
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
			if (eng_tx_send(eng, tk[i], eng_frame_dst_nid(tk[i]),
					NULL) != 0) {
				/* a later ack says as much */
				eng->out_stats.tacks_dropped++;
				rte_pktmbuf_free(tk[i]);
			}
		done += n;
	} while (n == RTE_DIM(tk));
	for (;;) {
		unsigned sent = 0;

		for (i = 0, k = 0; i < eng->n_staged; i++) {
			struct rte_mbuf *m = eng->staged[i];

			if (eng_tx_send(eng, m, eng_frame_dst_nid(m), NULL) == 0)
				sent++;
			else
				eng->staged[k++] = m;
		}
		eng->n_staged = k;
		done += sent;
		if (k == RTE_DIM(eng->staged))
			break;
		n = rte_ring_sc_dequeue_burst(node->txr,
					      (void **)(eng->staged + k),
					      RTE_DIM(eng->staged) - k, NULL);
		eng->out_stats.staged_pkts += n;
		eng->n_staged += n;
		if (n == 0)
			break;
	}
	return done;
}

/* ---- commands ------------------------------------------------------------- */

static void
out_forget(struct spinnic_engine *eng, struct out_client *oc)
{
	if (oc->active || oc->have_cmd)
		eng->out_stats.detach_drops++;
	eng_sput_forget(eng, oc);
	if (oc->c != NULL)
		ptl_client_put(oc->c);
	memset(oc, 0, sizeof(*oc));
}

static void
clients_scan(struct spinnic_engine *eng)
{
	unsigned pid;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
		struct out_client *oc = &eng->out_clients[pid];

		if (oc->c != NULL && !ptl_client_alive(oc->c))
			out_forget(eng, oc);
		if (oc->c == NULL)
			oc->c = ptl_client_lookup(eng->node->nic, pid);
	}
}

/* Build up to @p budget packets of the client's current command. */
static unsigned
cmd_progress(struct spinnic_engine *eng, struct out_client *oc,
	     unsigned budget)
{
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &oc->cmd;
	unsigned n = 0;
	int rc;

	if (cmd->op >= SPINNIC_CMD_SPUT_START)
		return eng_sput_progress(eng, oc, budget);
	if (!oc->active) {
		rc = ptl_op_start(oc->c, cmd, &oc->msg_id);
		if (rc == -ENOSPC) {
			eng->out_stats.ops_full++;
			return 0;
		}
		oc->have_cmd = false;
		if (rc != 0)
			return 0; /* client detached meanwhile */
		oc->active = true;
		oc->off = 0;
		spinnic_client_count(node, ptl_client_id(oc->c).pid, false,
				     cmd->op == SPINNIC_CMD_PUT ?
				     cmd->length : 0);
		if (cmd->op == SPINNIC_CMD_PUT)
			eng->out_stats.puts++;
		else
			eng->out_stats.gets++;
		if (spinnic_node_txq(node, cmd->target.nid) == UINT16_MAX) {
			/* no port reaches that node: fail it now */
			eng->out_stats.unreachable++;
			ptl_op_sent(node->nic, oc->msg_id,
				    SPINNIC_PTL_NI_UNDELIVERABLE);
			oc->active = false;
			return 0;
		}
	}

	if (cmd->op == SPINNIC_CMD_GET) {
		struct spinnic_pkt p;
		struct rte_mbuf *m;

		if (!eng_tx_room(eng, cmd->target.nid))
			return 0;
		eng_pkt_from_cmd(cmd, ptl_client_id(oc->c), oc->msg_id, &p);
		p.type = SPINNIC_WIRE_T_GET;
		p.op = SPINNIC_WIRE_OP_GET;
		p.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
		p.ack_req = SPINNIC_PTL_NO_ACK_REQ;
		m = eng_build(node, &p, NULL);
		if (m == NULL) {
			eng->out_stats.no_mbuf++;
			return 0;
		}
		if (eng_tx_send(eng, m, p.dst.nid, NULL) != 0) {
			rte_pktmbuf_free(m);
			return 0;
		}
		eng->out_stats.get_pkts++;
		ptl_op_sent(node->nic, oc->msg_id, SPINNIC_PTL_NI_OK);
		oc->active = false;
		return 1;
	}

	while (n < budget && eng_tx_room(eng, cmd->target.nid)) {
		uint64_t left = cmd->length - oc->off;
		uint32_t len = (uint32_t)RTE_MIN(left, (uint64_t)node->payload);
		struct rel_src src = { 0 };
		struct spinnic_pkt p;
		struct rte_mbuf *m;
		uint8_t *pay;

		eng_pkt_from_cmd(cmd, ptl_client_id(oc->c), oc->msg_id, &p);
		spinnic_wire_pkt_seg(&p, oc->off, len);
		m = eng_build(node, &p, &pay);
		if (m == NULL) {
			eng->out_stats.no_mbuf++;
			break;
		}
		rc = len == 0 ? 0 :
			ptl_host_read(oc->c, cmd->local_addr + oc->off, pay, len);
		if (rc != 0) {
			/* the MD's memory went away: the put fails here */
			rte_pktmbuf_free(m);
			eng->out_stats.read_faults++;
			ptl_op_sent(node->nic, oc->msg_id, SPINNIC_PTL_NI_SEGV);
			oc->active = false;
			return n;
		}
		src.c = oc->c;
		src.addr = cmd->local_addr + oc->off;
		/* SEND once every packet is acknowledged: until then a
		 * retransmission may read the MD again */
		src.send_id = oc->off + len == cmd->length ? oc->msg_id : 0;
		src.job = NULL;
		if (eng_tx_send(eng, m, p.dst.nid, &src) != 0) {
			rte_pktmbuf_free(m);
			break;
		}
		eng->out_stats.data_pkts++;
		oc->off += len;
		n++;
		if (oc->off == cmd->length) {
			oc->active = false;
			break;
		}
	}
	return n;
}

static unsigned
commands_poll(struct spinnic_engine *eng, unsigned budget)
{
	unsigned done = 0, i;

	/* round-robin over clients, one command step each */
	for (i = 0; i < SPINNIC_CLIENTS_MAX && done < budget; i++) {
		struct out_client *oc;
		unsigned k;

		eng->rr_pid = (eng->rr_pid + 1) % SPINNIC_CLIENTS_MAX;
		oc = &eng->out_clients[eng->rr_pid];
		if (oc->c == NULL)
			continue;
		if (!oc->active && !oc->have_cmd) {
			if (ptl_cmd_poll(oc->c, &oc->cmd, 1) == 0)
				continue;
			eng->node->tx.cmds++;
			oc->have_cmd = true;
		}
		k = cmd_progress(eng, oc, budget - done);
		done += k;
	}
	return done;
}

/* ---- GET replies ---------------------------------------------------------- */

void
eng_reply_job_done(struct spinnic_engine *eng, struct reply_job *j,
		   uint8_t fail)
{
	if (fail == ENG_FAIL_SILENT)
		ptl_match_release(eng->node->nic, &j->match);
	else
		ptl_match_complete(eng->node->nic, &j->match, fail);
	free(j);
}

/* Take the head job off the queue. */
static void
job_unlink(struct spinnic_engine *eng, struct reply_job *j)
{
	eng->job_head = j->next;
	if (eng->job_head == NULL)
		eng->job_tail = NULL;
	j->next = NULL;
}

static void
job_end(struct spinnic_engine *eng, struct reply_job *j, uint8_t fail)
{
	job_unlink(eng, j);
	eng_reply_job_done(eng, j, fail);
}

static unsigned
replies_poll(struct spinnic_engine *eng, unsigned budget)
{
	struct spinnic_node *node = eng->node;
	struct reply_job *j;
	unsigned n = 0;
	void *obj;

	while (rte_ring_sc_dequeue(eng->jobs, &obj) == 0) {
		j = obj;
		j->next = NULL;
		if (eng->job_tail != NULL)
			eng->job_tail->next = j;
		else
			eng->job_head = j;
		eng->job_tail = j;
	}
	while ((j = eng->job_head) != NULL && n < budget) {
		const struct ptl_match *mt = &j->match;

		if (j->abandon) {
			job_end(eng, j, SPINNIC_PTL_NI_UNDELIVERABLE);
			continue;
		}
		if (!eng_tx_room(eng, mt->initiator.nid))
			break;
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
			p.op = SPINNIC_WIRE_OP_GET;
			p.ni = j->ni_kind;
			p.src = ptl_client_id(mt->c);
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
				eng->out_stats.no_mbuf++;
				return n;
			}
			rc = len == 0 ? 0 :
				ptl_host_read(mt->c, mt->start + j->off, pay, len);
			if (rc != 0) {
				/* target memory gone: the initiator times out
				 * on the missing bytes; the target learns */
				rte_pktmbuf_free(m);
				eng->out_stats.read_faults++;
				job_end(eng, j, SPINNIC_PTL_NI_SEGV);
				break;
			}
			src.c = mt->c;
			src.addr = mt->start + j->off;
			src.send_id = 0;
			/* the last packet carries the job: GET event at the
			 * target once every packet is acknowledged (until
			 * then a retransmission may read the window) */
			last = j->off + len == mt->mlength;
			src.job = last ? j : NULL;
			if (last)
				job_unlink(eng, j); /* the packet's now */
			if (eng_tx_send(eng, m, p.dst.nid, &src) != 0) {
				rte_pktmbuf_free(m);
				if (last) {
					/* back at the head of the queue */
					j->next = eng->job_head;
					eng->job_head = j;
					if (eng->job_tail == NULL)
						eng->job_tail = j;
				}
				return n;
			}
			eng->out_stats.reply_pkts++;
			n++;
			if (last)
				break;
			j->off += len;
		} while (n < budget && eng_tx_room(eng, mt->initiator.nid));
		if (eng->job_head == j)
			break;
	}
	return n;
}

void
eng_out_peer_failed(struct spinnic_engine *eng, uint32_t dst_nid)
{
	struct reply_job *j;
	unsigned pid;

	/* their operations are failed already: build nothing more of them */
	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
		struct out_client *oc = &eng->out_clients[pid];

		if (oc->active && oc->cmd.target.nid == dst_nid)
			oc->active = false;
	}
	/* replies to gets of that peer: the rest is not sent */
	for (j = eng->job_head; j != NULL; j = j->next)
		if (j->match.initiator.nid == dst_nid)
			j->abandon = 1;
}

/* ---- role ------------------------------------------------------------------ */

static void
out_detach_check(struct spinnic_engine *eng)
{
	uint64_t req = __atomic_load_n(&eng->detach_req, __ATOMIC_ACQUIRE);

	if (req == eng->detach_out_ack)
		return;
	eng_out_detach(eng, eng->detach_pc);
	__atomic_store_n(&eng->detach_out_ack, req, __ATOMIC_RELEASE);
}

unsigned
spinnic_outbound_poll(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;
	unsigned work = 0;
	uint64_t now;
	uint16_t q;

	out_detach_check(eng);
	now = rte_get_timer_cycles();
	if (now >= eng->next_scan) {
		clients_scan(eng);
		eng->next_scan = now + eng->hz / SCAN_PER_S;
	}
	for (q = 0; q < node->nb_txq; q++)
		work += hold_flush(eng, q);
	work += rel_tx_poll(eng, now);
	work += staged_drain(eng);
	work += eng_sput_poll(eng);
	work += replies_poll(eng, ENG_TX_BUDGET);
	work += commands_poll(eng, ENG_TX_BUDGET);
	if (work == 0 && eng->fault_tx != NULL && eng->fault_tx->nwin > 0) {
		/* idle: packets held back to reorder go now */
		struct rte_mbuf *out[ENG_FAULT_WIN];

		hold_push_faulty(eng, out,
				 fault_apply(eng->fault_tx, NULL, 0, out));
	}
	for (q = 0; q < node->nb_txq; q++)
		hold_flush(eng, q);
	return work;
}

void
eng_out_detach(struct spinnic_engine *eng, struct ptl_client *pc)
{
	struct reply_job **pp, *j;
	unsigned pid;
	void *obj;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++)
		if (eng->out_clients[pid].c == pc)
			out_forget(eng, &eng->out_clients[pid]);
	rel_tx_detach(eng, pc);
	while (rte_ring_sc_dequeue(eng->jobs, &obj) == 0) {
		j = obj;
		j->next = NULL;
		if (eng->job_tail != NULL)
			eng->job_tail->next = j;
		else
			eng->job_head = j;
		eng->job_tail = j;
	}
	eng->job_tail = NULL;
	for (pp = &eng->job_head; (j = *pp) != NULL;) {
		if (j->match.c == pc) {
			*pp = j->next;
			ptl_match_release(eng->node->nic, &j->match);
			eng->out_stats.detach_drops++;
			free(j);
			continue;
		}
		eng->job_tail = j;
		pp = &j->next;
	}
}

void
eng_out_fini(struct spinnic_engine *eng)
{
	struct reply_job *j;
	unsigned pid, q;
	void *obj;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++)
		if (eng->out_clients[pid].c != NULL)
			out_forget(eng, &eng->out_clients[pid]);
	if (eng->jobs != NULL)
		while (rte_ring_sc_dequeue(eng->jobs, &obj) == 0) {
			j = obj;
			ptl_match_release(eng->node->nic, &j->match);
			free(j);
		}
	while ((j = eng->job_head) != NULL) {
		eng->job_head = j->next;
		ptl_match_release(eng->node->nic, &j->match);
		free(j);
	}
	eng->job_tail = NULL;
	eng_sput_fini(eng);
	rel_tx_fini(eng);
	while (eng->n_staged > 0)
		rte_pktmbuf_free(eng->staged[--eng->n_staged]);
	if (eng->tacks != NULL) {
		void *obj;

		while (rte_ring_sc_dequeue(eng->tacks, &obj) == 0)
			rte_pktmbuf_free(obj);
	}
	fault_stage_free(eng->fault_tx);
	eng->fault_tx = NULL;
	for (q = 0; eng->hold != NULL && q < eng->node->nb_txq; q++) {
		struct tx_hold *h = &eng->hold[q];

		while (h->n > 0) {
			rte_pktmbuf_free(h->pkts[h->head]);
			h->head = (h->head + 1) % ENG_TX_HOLD;
			h->n--;
		}
	}
}

bool
spinnic_engine_quiet(const struct spinnic_node *node)
{
	const struct spinnic_engine *eng = node->eng;
	unsigned i, n;

	if (eng == NULL)
		return true;
	if (__atomic_load_n(&eng->n_park, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&eng->n_staged, __ATOMIC_RELAXED) != 0 ||
	    rte_ring_count(eng->tacks) != 0 ||
	    __atomic_load_n(&eng->nb_acks, __ATOMIC_RELAXED) != 0 ||
	    !eng_sput_idle(eng))
		return false;
	for (i = 0; i < node->nb_txq; i++)
		if (__atomic_load_n(&eng->hold[i].n, __ATOMIC_RELAXED) != 0)
			return false;
	n = __atomic_load_n(&eng->n_tx_peers, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		const struct rel_tx *t = eng->tx_peers[i];

		if (__atomic_load_n(&t->base, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&t->next, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* ---- engine life cycle ---------------------------------------------------- */

int
spinnic_engine_init(struct spinnic_node *node)
{
	struct spinnic_engine *eng;
	char name[RTE_RING_NAMESIZE];
	int rc = -ENOMEM;

	eng = rte_zmalloc_socket("spinnic_engine", sizeof(*eng),
				 RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	if (eng == NULL)
		return -ENOMEM;
	eng->node = node;
	eng->hz = rte_get_timer_hz();
	/* one stream per node and direction (--fault-seed) */
	eng->fault_rx = fault_stage_new(
		&node->sn->cfg.faults[SPINNIC_FAULT_RX],
		node->sn->cfg.fault_seed * 2 * SPINNIC_NODES_MAX + node->index,
		node->pool);
	eng->fault_tx = fault_stage_new(
		&node->sn->cfg.faults[SPINNIC_FAULT_TX],
		node->sn->cfg.fault_seed * 2 * SPINNIC_NODES_MAX +
		SPINNIC_NODES_MAX + node->index, node->pool);
	pthread_mutex_init(&eng->detach_lock, NULL);
	eng->hold = rte_zmalloc_socket("spinnic_tx_hold",
				       sizeof(*eng->hold) * node->nb_txq,
				       RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	eng->msgs = spinnic_msgtab_create(ENG_MSGS, sizeof(struct in_msg));
	eng->replies = spinnic_msgtab_create(ENG_REPLIES,
					     sizeof(struct in_reply));
	if (eng->hold == NULL || eng->msgs == NULL || eng->replies == NULL)
		goto fail;
	/* what one source may hold of the inbound tables (NOTES) */
	spinnic_msgtab_set_limits(eng->msgs, &(struct spinnic_msgtab_limits){
		.unseq_live = ENG_MSGS_UNSEQ_MAX,
		.nid_live = ENG_MSGS_NID_MAX,
		.seen_bytes = ENG_MSGS_SEEN_BYTES,
		.unseq_seen_bytes = ENG_MSGS_SEEN_BYTES_UNSEQ });
	spinnic_msgtab_set_limits(eng->replies, &(struct spinnic_msgtab_limits){
		.seen_bytes = ENG_REPLIES_SEEN_BYTES });
	snprintf(name, sizeof(name), "spinnic_done%u", node->index);
	eng->done = rte_ring_create(name, DONE_SIZE, (int)rte_socket_id(),
				    RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "spinnic_jobs%u", node->index);
	eng->jobs = rte_ring_create(name, JOBS_SIZE, (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "spinnic_tacks%u", node->index);
	eng->tacks = rte_ring_create(name, JOBS_SIZE, (int)rte_socket_id(),
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "spinnic_racks%u", node->index);
	eng->rel_acks = rte_ring_create_elem(name, sizeof(struct rel_ack_rec),
					     JOBS_SIZE, (int)rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (eng->done == NULL || eng->jobs == NULL || eng->rel_acks == NULL ||
	    eng->tacks == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	rc = rel_init(eng);
	if (rc != 0)
		goto fail;
	node->eng = eng;
	return 0;
fail:
	SPINNIC_LOG(ERR, "node %u: engine: %s", node->index, strerror(-rc));
	fault_stage_free(eng->fault_rx);
	fault_stage_free(eng->fault_tx);
	rte_ring_free(eng->tacks);
	rte_ring_free(eng->rel_acks);
	rte_ring_free(eng->jobs);
	rte_ring_free(eng->done);
	spinnic_msgtab_free(eng->replies);
	spinnic_msgtab_free(eng->msgs);
	rte_free(eng->hold);
	pthread_mutex_destroy(&eng->detach_lock);
	rte_free(eng);
	return rc;
}

void
spinnic_engine_fini(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;

	if (eng == NULL)
		return;
	eng_in_fini(eng);
	eng_out_fini(eng);
	rte_ring_free(eng->tacks);
	rte_ring_free(eng->rel_acks);
	rte_ring_free(eng->jobs);
	rte_ring_free(eng->done);
	spinnic_msgtab_free(eng->replies);
	spinnic_msgtab_free(eng->msgs);
	rte_free(eng->hold);
	pthread_mutex_destroy(&eng->detach_lock);
	rte_free(eng);
	node->eng = NULL;
}

static bool
lcores_running(const struct spinnic *sn)
{
	unsigned i;

	for (i = 0; i < RTE_MAX_LCORE; i++)
		if (sn->lcores[i].running)
			return true;
	return false;
}

void
spinnic_engine_client_detach(struct spinnic_node *node,
			     const struct spinnic_client *cl)
{
	struct spinnic_engine *eng = node->eng;
	unsigned waited = 0;
	uint64_t req;

	if (eng == NULL || cl->pc == NULL)
		return;
	pthread_mutex_lock(&eng->detach_lock);
	eng->detach_pc = cl->pc;
	req = eng->detach_req + 1;
	__atomic_store_n(&eng->detach_req, req, __ATOMIC_RELEASE);
	/* both roles purge the client on their next poll and say so */
	while (__atomic_load_n(&eng->detach_in_ack, __ATOMIC_ACQUIRE) != req ||
	       __atomic_load_n(&eng->detach_out_ack, __ATOMIC_ACQUIRE) != req) {
		if (!lcores_running(node->sn)) {
			/* nobody polls: we are alone with the state */
			if (eng->detach_out_ack != req) {
				eng_out_detach(eng, cl->pc);
				eng->detach_out_ack = req;
			}
			if (eng->detach_in_ack != req) {
				eng_in_detach(eng, cl->pc);
				eng->detach_in_ack = req;
			}
			break;
		}
		usleep(100);
		if (++waited == 10000)
			SPINNIC_LOG(WARNING, "node %u: detach of Portals pid %u waits: inbound %s (aborted sPIN messages %u, acks held %u), outbound %s",
				    node->index, cl->pid,
				    eng->detach_in_ack == req ? "done" : "busy",
				    __atomic_load_n(&eng->live_aborts,
						    __ATOMIC_RELAXED),
				    __atomic_load_n(&eng->nb_acks,
						    __ATOMIC_RELAXED),
				    eng->detach_out_ack == req ? "done" : "busy");
	}
	eng->detach_pc = NULL;
	pthread_mutex_unlock(&eng->detach_lock);
}

/* Print non-zero counters, several per line, like the portals block. */
struct stat_line {
	FILE *f;
	unsigned n;
};

static void
stat_put(struct stat_line *l, const char *name, uint64_t v)
{
	if (v == 0)
		return;
	fprintf(l->f, "%s%s %" PRIu64, l->n % 6 == 0 ? "    " : " ", name, v);
	if (++l->n % 6 == 0)
		fputc('\n', l->f);
}

/* enum eng_drop, in order */
const char *const eng_drop_names[ENG_DROP_MAX] = {
	"drop_not_me", "drop_no_match", "drop_late", "drop_dup",
	"drop_bad_offset", "drop_inconsistent", "drop_table_full",
	"drop_no_mem", "drop_spin", "drop_unknown_op", "drop_host",
	"drop_rel_dup", "drop_rel_epoch", "drop_rel_beyond",
	"drop_park_full", "drop_unsequenced", "drop_bad_cookie",
	"drop_peers_full", "drop_table_share",
};

void
spinnic_engine_stats_print(const struct spinnic_node *node, FILE *f)
{
	const struct spinnic_engine *eng = node->eng;
	struct stat_line l = { f, 0 };
	const struct eng_in_stats *in;
	const struct eng_out_stats *o;
	struct spinnic_msgtab_stats ms;
	unsigned i;

	if (eng == NULL)
		return;
	in = &eng->in_stats;
	o = &eng->out_stats;
	spinnic_msgtab_stats(eng->msgs, &ms);
	fprintf(f, "  engine:%s\n", ms.inserted == 0 && o->puts == 0 &&
		o->gets == 0 ? " (idle)" : "");
	stat_put(&l, "msgs", ms.inserted);
	stat_put(&l, "live", ms.live);
	stat_put(&l, "tombstones", ms.done);
	stat_put(&l, "msgtab_full", ms.full);
	stat_put(&l, "msgtab_share", ms.share);
	stat_put(&l, "seen_bytes", ms.seen_bytes);
	stat_put(&l, "seen_refused", ms.seen_refused);
	stat_put(&l, "msgs_np", in->msgs_np);
	stat_put(&l, "msgs_spin", in->msgs_spin);
	stat_put(&l, "msgs_failed", in->msgs_failed);
	stat_put(&l, "bytes_np", in->bytes_np);
	stat_put(&l, "acks_sent", in->acks_sent);
	stat_put(&l, "nacks_sent", in->nacks_sent);
	stat_put(&l, "acks_rcvd", in->acks_rcvd);
	stat_put(&l, "nacks_rcvd", in->nacks_rcvd);
	stat_put(&l, "gets_served", in->gets_served);
	stat_put(&l, "replies_done", in->replies_done);
	stat_put(&l, "reply_bytes", in->reply_bytes);
	stat_put(&l, "timeouts", in->timeouts);
	stat_put(&l, "rx_stalls", in->stalls);
	stat_put(&l, "ack_held", in->ack_held);
	for (i = 0; i < ENG_DROP_MAX; i++)
		stat_put(&l, eng_drop_names[i], in->drop[i]);
	stat_put(&l, "puts", o->puts);
	stat_put(&l, "gets", o->gets);
	stat_put(&l, "data_pkts", o->data_pkts);
	stat_put(&l, "get_pkts", o->get_pkts);
	stat_put(&l, "reply_pkts", o->reply_pkts);
	stat_put(&l, "staged_pkts", o->staged_pkts);
	stat_put(&l, "tx_held", o->held);
	stat_put(&l, "no_mbuf", o->no_mbuf);
	stat_put(&l, "ops_full", o->ops_full);
	stat_put(&l, "read_faults", o->read_faults);
	stat_put(&l, "unreachable", o->unreachable);
	stat_put(&l, "out_detach_drops", o->detach_drops);
	stat_put(&l, "tacks_sent", in->tacks_sent);
	stat_put(&l, "tacks_rcvd", in->tacks_rcvd);
	stat_put(&l, "rel_resets", in->rel_resets);
	stat_put(&l, "chal_sent", in->chal_sent);
	stat_put(&l, "chal_limited", in->chal_limited);
	stat_put(&l, "unsequenced_in", in->unsequenced);
	stat_put(&l, "rel_unacked", in->rel_unacked);
	stat_put(&l, "ack_ring_full", in->ack_ring_full);
	stat_put(&l, "parked", in->parked);
	stat_put(&l, "rel_full", o->rel_full);
	stat_put(&l, "rel_acked", o->rel_acked);
	stat_put(&l, "rel_timeouts", o->rel_timeouts);
	stat_put(&l, "rel_probes", o->rel_probes);
	stat_put(&l, "rel_fillers", o->rel_fillers);
	stat_put(&l, "peer_fails", o->peer_fails);
	stat_put(&l, "peer_failed_ops", o->peer_failed_ops);
	stat_put(&l, "peers_full", o->peers_full);
	stat_put(&l, "chal_answered", o->chal_answered);
	stat_put(&l, "chal_ignored", o->chal_ignored);
	stat_put(&l, "tacks_dropped", o->tacks_dropped);
	stat_put(&l, "faults_rx",
		 eng->fault_rx != NULL ? eng->fault_rx->events : 0);
	stat_put(&l, "faults_tx",
		 eng->fault_tx != NULL ? eng->fault_tx->events : 0);
	if (l.n % 6 != 0)
		fputc('\n', f);
	eng_sput_stats_print(eng, f);
}
