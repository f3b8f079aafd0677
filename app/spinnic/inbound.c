/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inbound engine, a node's inbound role (lcore.c polls spinnic_inbound_poll):
 * RX burst -> parse -> by kind: DATA to the message table and the sPIN or
 * non-processing path, GET to a reply job for the outbound role, REPLY
 * into our get's MD, ACK/NACK ending our put. A resource short right now
 * stalls the burst instead of dropping it (backpressure). Also
 * spinnic_engine_host_ops, the sPIN runtime's way to host memory.
 * The walk: doc/datapath.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "auth.h"
#include "engine.h"
#include "packet.h"

#define EXPIRE_PER_S 10u

/* Result of handling one packet. */
enum rx_res {
	RX_DONE,   /* consumed (kept, placed or dropped) */
	RX_STALL,  /* not now: keep it and the rest of the burst */
};

void
eng_in_drop(struct spinnic_engine *eng, struct rte_mbuf *m, enum eng_drop why)
{
	/* short of a slot or memory now: not acknowledged, so resent */
	if (why == ENG_DROP_TABLE_FULL || why == ENG_DROP_TABLE_SHARE ||
	    why == ENG_DROP_NO_MEM || why == ENG_DROP_AA_FULL)
		eng->rx.transient = true;
	eng->rx.stats.drop[why]++;
	eng->node->rx.drops++;
	rte_pktmbuf_free(m);
}

/* ---- acks ------------------------------------------------------------------ */

static unsigned
acks_flush(struct spinnic_engine *eng)
{
	unsigned n;

	if (eng->rx.n_acks == 0)
		return 0;
	n = rte_ring_mp_enqueue_burst(eng->node->txr, (void **)eng->rx.acks,
				      eng->rx.n_acks, NULL);
	if (n > 0 && n < eng->rx.n_acks)
		memmove(eng->rx.acks, eng->rx.acks + n,
			(eng->rx.n_acks - n) * sizeof(eng->rx.acks[0]));
	eng->rx.n_acks -= n;
	return n;
}

/*
 * ACK (fail == OK) or NACK to the initiator of a put or get.
 * @param req the request's header (any packet of it)
 */
static void
ack_send(struct spinnic_engine *eng, const struct spinnic_pkt *req,
	 uint8_t fail, uint64_t mlength, bool nack)
{
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	/* an unsequenced request (a generator's: no session) gets none: a
	 * sequenced ack would open a session with whatever nid it claims */
	if (!(req->flags & SPINNIC_WIRE_F_REL))
		return;
	memset(&p, 0, sizeof(p));
	p.type = nack ? SPINNIC_WIRE_T_NACK : SPINNIC_WIRE_T_ACK;
	p.op = req->op;
	p.ni = req->ni;
	p.fail_type = fail;
	p.src.nid = eng->node->nid;
	p.src.pid = req->dst.pid;
	p.dst = req->src;
	p.pt_index = req->pt_index;
	p.match_bits = req->match_bits;
	p.msg_id = req->msg_id;
	p.msg_len = req->msg_len;
	p.mlength = mlength;
	/* an ACK says which list took the message (its event's ptl_list:
	 * msg_complete passes it in hdr_data); a NACK took none */
	p.hdr_data = nack ? SPINNIC_PTL_PRIORITY_LIST : req->hdr_data;
	m = eng_build(eng->node, &p, NULL);
	if (m == NULL) {
		/* the pool is empty: counted, the initiator times out */
		eng->rx.stats.drop[ENG_DROP_NO_MEM]++;
		return;
	}
	if (nack)
		eng->rx.stats.nacks_sent++;
	else
		eng->rx.stats.acks_sent++;
	/* room was reserved before the packet was taken (ack_room) */
	if (eng_in_stage(eng, m) != 0) {
		eng->rx.stats.drop[ENG_DROP_NO_MEM]++;
		rte_pktmbuf_free(m);
	}
}

/* an ack slot for one more request (a staged write holds one: its
 * message's ack goes when it is flushed) */
static bool
ack_room(const struct spinnic_engine *eng)
{
	return eng->rx.n_acks + eng->rx.n_wb < ENG_ACK_HOLD;
}

int
eng_in_stage(struct spinnic_engine *eng, struct rte_mbuf *m)
{
	if (eng->rx.n_acks == 0 && rte_ring_mp_enqueue(eng->node->txr, m) == 0)
		return 0;
	if (!ack_room(eng))
		return -ENOSPC;
	eng->rx.acks[eng->rx.n_acks++] = m;
	eng->rx.stats.ack_held++;
	return 0;
}

/* ---- message completion ------------------------------------------------- */

/* Does the message hold a match (between matching and DONE)? */
static bool
msg_matched(const struct in_msg *e)
{
	return e->state != MSG_S_NEW && e->state != MSG_S_DONE;
}

/* An sPIN message an active flush waited for is finished (fwait_poll
 * sends the flush's reply once none is left). */
static void
fwait_release(struct spinnic_engine *eng, struct in_msg *e)
{
	unsigned b;

	for (b = 0; b < ENG_FLUSH_WAIT; b++)
		if ((e->fwait_mask & (1u << b)) && eng->rx.fwait[b].left > 0)
			eng->rx.fwait[b].left--;
	e->fwait_mask = 0;
}

static void
msg_retire(struct spinnic_engine *eng, struct in_msg *e)
{
	if (e->fwait_mask != 0)
		fwait_release(eng, e);
	e->state = MSG_S_DONE;
	spinnic_msgtab_finish(eng->rx.msgs, e);
}

/* Complete a message: target event, CT, ACK. */
static void
msg_complete(struct spinnic_engine *eng, struct in_msg *e, uint8_t fail)
{
	struct spinnic_pkt req;
	uint8_t ack_req = e->match.ack_req;
	uint64_t mlength = e->match.mlength;

	/* the reply goes back from what the first packet said */
	memset(&req, 0, sizeof(req));
	req.op = e->match.op;
	req.ni = 0;
	req.src = e->match.initiator;
	req.dst.nid = eng->node->nid;
	req.dst.pid = ptl_client_id(e->match.c).pid;
	req.pt_index = e->match.pt_index;
	req.match_bits = e->match.match_bits;
	req.msg_id = e->match.msg_id;
	req.msg_len = e->s.rlength;
	req.hdr_data = e->match.list;
	req.flags = e->unseq ? 0 : SPINNIC_WIRE_F_REL;
	ptl_match_complete(eng->node->nic, &e->match, fail);
	if (fail != SPINNIC_PTL_NI_OK) {
		eng->rx.stats.msgs_failed++;
	} else {
		spinnic_client_count(eng->node, req.dst.pid, true, mlength);
		spinnic_client_nic_time(eng->node, req.dst.pid,
					e->match.nic_ns);
	}
	eng->node->rx.msgs_done++;
	if (ack_req != SPINNIC_PTL_NO_ACK_REQ)
		ack_send(eng, &req, fail, fail == SPINNIC_PTL_NI_OK ? mlength : 0,
			 false);
	msg_retire(eng, e);
}

/* Forget a message without events (detach, timeout). */
static void
msg_abandon(struct spinnic_engine *eng, struct in_msg *e)
{
	if (msg_matched(e))
		ptl_match_release(eng->node->nic, &e->match);
	msg_retire(eng, e);
}

static uint8_t
spin_fail(const struct spin_msg_result *r)
{
	if (r->status == SPIN_SUCCESS)
		return SPINNIC_PTL_NI_OK;
	if (r->dma_rejects > 0 || r->dma_failures > 0)
		return SPINNIC_PTL_NI_SEGV;
	return SPINNIC_PTL_NI_DROPPED;
}

/*
 * A finished sPIN message whose client holds handler records on the NIC
 * (a full Active Access log, doc/NOTES.md "handler records wait on the
 * NIC"): its ack waits until they are in the log, as a put's ack waits
 * for its record, so that an initiator that saw the ack can tell the
 * consumer that everything it sent is there.
 */
static void
held_push(struct spinnic_engine *eng, struct in_msg *e)
{
	e->state = MSG_S_SPIN_HELD;
	e->held_next = NULL;
	if (eng->rx.held_tail != NULL)
		eng->rx.held_tail->held_next = e;
	else
		eng->rx.held_head = e;
	eng->rx.held_tail = e;
}

/* A finished sPIN message ends: forgotten when it was aborted (a detach
 * or its timeout), else completed (target event, CT, ACK). */
static void
spin_msg_end(struct spinnic_engine *eng, struct in_msg *e)
{
	if (e->state == MSG_S_SPIN_ABORT_DETACH)
		eng->rx.live_aborts--;
	if (e->state == MSG_S_SPIN_ABORT_DETACH ||
	    e->state == MSG_S_SPIN_ABORT_TIMEOUT)
		msg_abandon(eng, e);
	else
		msg_complete(eng, e, spin_fail(&e->res));
}

/* Messages the sPIN runtime finished (msg_done). */
static unsigned
done_drain(struct spinnic_engine *eng)
{
	void *objs[32];
	unsigned n, i, total = 0;

	do {
		/* every completion may send an ack: keep room for them */
		unsigned room = RTE_MIN(32u, ENG_ACK_HOLD - eng->rx.n_acks);

		n = room == 0 ? 0 :
			rte_ring_sc_dequeue_burst(eng->done, objs, room, NULL);
		for (i = 0; i < n; i++) {
			struct in_msg *e = objs[i];

			if (e->state != MSG_S_SPIN_ABORT_DETACH &&
			    e->state != MSG_S_SPIN_ABORT_TIMEOUT) {
				eng->rx.stats.msgs_spin++;
				if (ptl_aa_backlogged(e->match.c)) {
					held_push(eng, e);
					continue;
				}
			}
			spin_msg_end(eng, e);
		}
		total += n;
	} while (n == 32);
	return total;
}

/* Finished messages whose client held Active Access records: complete
 * those whose client holds none now, forget those whose client left. */
static unsigned
held_poll(struct spinnic_engine *eng)
{
	struct in_msg *e, *next, *prev = NULL;
	unsigned n = 0;
	uint64_t gen;

	if (eng->rx.held_head == NULL)
		return 0;
	/* nothing changed since the last scan: no need to look (a client
	 * that keeps its log full must not cost the others a scan per poll) */
	gen = ptl_aa_unheld(eng->node->nic);
	if (gen == eng->rx.held_gen && !eng->rx.held_rescan)
		return 0;
	eng->rx.held_gen = gen;
	eng->rx.held_rescan = false;
	for (e = eng->rx.held_head; e != NULL; e = next) {
		next = e->held_next;
		if (e->state == MSG_S_SPIN_HELD &&
		    ptl_aa_backlogged(e->match.c)) {
			prev = e;
			continue;
		}
		if (e->state == MSG_S_SPIN_HELD &&
		    eng->rx.n_acks >= ENG_ACK_HOLD) {
			/* no ack room: look again next poll */
			eng->rx.held_rescan = true;
			prev = e;
			continue;
		}
		if (prev != NULL)
			prev->held_next = next;
		else
			eng->rx.held_head = next;
		if (next == NULL)
			eng->rx.held_tail = prev;
		e->held_next = NULL;
		spin_msg_end(eng, e);
		n++;
	}
	return n;
}

unsigned
spinnic_inbound_done(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;
	unsigned n = done_drain(eng);

	if (n != 0)
		acks_flush(eng);
	return n;
}

/* ---- writes outside the region, batched ------------------------------------ */

/*
 * A put packet bound for a client's memory outside its region costs a
 * process_vm_writev (a system call, pages pinned) on its own; staged, the
 * burst's packets for one client go in one call (doc/NOTES.md "Batched
 * writes"). A staged packet is accounted for (seen, bytes got) at once;
 * its write, its message's completion (events, counter, ACK) and its
 * mbuf's release wait for wb_flush, which runs before anything else that
 * could see client memory or post an event: another kind of packet, a
 * put that is not staged, the end of the burst.
 */
static void
wb_stage(struct spinnic_engine *eng, struct in_msg *e, struct rte_mbuf *m,
	 const uint8_t *pay, uint64_t addr, uint32_t len, bool last)
{
	struct in_wb *w = &eng->rx.wb[eng->rx.n_wb++];

	w->e = e;
	w->m = m;
	w->pay = pay;
	w->addr = addr;
	w->len = len;
	w->last = last;
}

/* Write staged entries [i, j) of one client, one call; entry by entry
 * when that fails, to fail only the messages whose memory is bad. */
static void
wb_write(struct spinnic_engine *eng, unsigned i, unsigned j)
{
	struct ptl_host_iov iov[ENG_RX_BURST];
	struct ptl_client *c = eng->rx.wb[i].e->match.c;
	unsigned k;

	k = i;
	do { /* i < j */
		iov[k - i].addr = eng->rx.wb[k].addr;
		iov[k - i].buf = (void *)(uintptr_t)eng->rx.wb[k].pay;
		iov[k - i].len = eng->rx.wb[k].len;
	} while (++k < j);
	if (ptl_host_writev(c, iov, j - i) == 0) {
		for (k = i; k < j; k++)
			eng->rx.stats.bytes_np += eng->rx.wb[k].len;
		return;
	}
	for (k = i; k < j; k++) {
		if (ptl_host_write(c, iov[k - i].addr, iov[k - i].buf,
				   iov[k - i].len) != 0) {
			eng->rx.stats.drop[ENG_DROP_HOST]++;
			eng->rx.wb[k].e->s.fail = SPINNIC_PTL_NI_SEGV;
		} else {
			eng->rx.stats.bytes_np += eng->rx.wb[k].len;
		}
	}
}

static void
wb_flush(struct spinnic_engine *eng)
{
	unsigned n = eng->rx.n_wb, i, j;

	if (n == 0)
		return;
	eng->rx.stats.wb_flushes++;
	eng->rx.stats.wb_pkts += n;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n &&
		     eng->rx.wb[j].e->match.c == eng->rx.wb[i].e->match.c; j++)
			;
		wb_write(eng, i, j);
	}
	/* the acks these completions send have their slots (ack_room) */
	eng->rx.n_wb = 0;
	for (i = 0; i < n; i++) {
		struct in_wb *w = &eng->rx.wb[i];

		rte_pktmbuf_free(w->m);
		if (w->last) {
			eng->rx.stats.msgs_np++;
			msg_complete(eng, w->e, w->e->s.fail);
		}
	}
}

/* ---- packets of a message --------------------------------------------------- */

/* Packet index, or -1 when the packet does not sit where packets sit. */
static int64_t
pkt_index(const struct spinnic_node *node, const struct spinnic_pkt *p)
{
	uint64_t want;

	if (p->offset % node->payload != 0)
		return -1;
	want = RTE_MIN((uint64_t)node->payload, p->msg_len - p->offset);
	if (p->pay_len != want)
		return -1;
	return (int64_t)(p->offset / node->payload);
}

/* Packets of a message of @p len bytes (a zero-byte message has one). */
static uint32_t
msg_npkts(const struct spinnic_node *node, uint64_t len)
{
	/* len <= SPINNIC_WIRE_MAX_MSG_SIZE, payload >= 64: fits */
	return len == 0 ? 1 : (uint32_t)((len + node->payload - 1) /
					 node->payload);
}

/* A new message in @p t (eng->rx.msgs or eng->rx.replies), its packet @p idx
 * given room; NULL when refused (the packet dropped and counted). */
static void *
msg_insert(struct spinnic_engine *eng, struct spinnic_msgtab *t,
	   struct rte_mbuf *m, const struct spinnic_pkt *p, int64_t idx,
	   uint64_t now)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	unsigned flags = p->flags & SPINNIC_WIRE_F_REL ? 0 :
		SPINNIC_MSGTAB_F_UNSEQ;
	void *e;
	int rc;

	e = spinnic_msgtab_insert(t, &key, msg_npkts(eng->node, p->msg_len),
				  flags, now);
	if (e == NULL) {
		eng_in_drop(eng, m, errno == EDQUOT ? ENG_DROP_TABLE_SHARE :
			    ENG_DROP_TABLE_FULL);
		return NULL;
	}
	/* before matching: a message that cannot be tracked leaves no
	 * trace, so its packets come again (not acknowledged) */
	rc = idx < 0 ? 0 : spinnic_msgtab_seen_reserve(t, e, (uint32_t)idx);
	if (rc != 0) {
		spinnic_msgtab_remove(t, e);
		eng_in_drop(eng, m, rc == -ERANGE ? ENG_DROP_BAD_OFFSET :
			    ENG_DROP_NO_MEM);
		return NULL;
	}
	return e;
}

/* Is packet @p idx new to a live entry, with room for its bit? Else the
 * packet is dropped (duplicate, or no memory to track it). */
static bool
msg_pkt_new(struct spinnic_engine *eng, struct spinnic_msgtab *t,
	    struct spinnic_msg_link *l, struct rte_mbuf *m, int64_t idx)
{
	if ((uint64_t)idx >= l->seen.npkts ||
	    spinnic_seen_test(&l->seen, (uint32_t)idx)) {
		eng_in_drop(eng, m, ENG_DROP_DUP);
		return false;
	}
	if (spinnic_msgtab_seen_reserve(t, l, (uint32_t)idx) != 0) {
		eng_in_drop(eng, m, ENG_DROP_NO_MEM);
		return false;
	}
	return true;
}

/* May this packet start a stream not in the table? (else it is dropped) */
typedef bool stream_admit_fn(struct spinnic_engine *eng,
			     const struct spinnic_pkt *p);

/*
 * The per-packet step that DATA and REPLY share: the packet sits where
 * packets sit; its message is live, or new and then inserted into @p t
 * (after @p admit, when given), else late; it says the same msg_len as
 * the first packet; the packet is new to it (the message touched).
 * @param fresh_p true when this packet inserted the entry
 * @param idx_p the packet's index
 * @return the entry (struct in_stream first), or NULL when the packet
 *   was dropped and counted
 */
static struct in_stream *
stream_accept(struct spinnic_engine *eng, struct spinnic_msgtab *t,
	      stream_admit_fn *admit, struct rte_mbuf *m,
	      const struct spinnic_pkt *p, uint64_t now, bool *fresh_p,
	      uint32_t *idx_p)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	int64_t idx = pkt_index(eng->node, p);
	struct in_stream *s;

	if (idx < 0) {
		eng_in_drop(eng, m, ENG_DROP_BAD_OFFSET);
		return NULL;
	}
	*idx_p = (uint32_t)idx;
	s = spinnic_msgtab_lookup(t, &key);
	if (s != NULL && s->link.state != SPINNIC_MSG_LIVE) {
		eng_in_drop(eng, m, ENG_DROP_LATE);
		return NULL;
	}
	if (s == NULL) {
		if (admit != NULL && !admit(eng, p)) {
			eng_in_drop(eng, m, ENG_DROP_UNKNOWN_OP);
			return NULL;
		}
		/* its bit reserved: new to the entry */
		s = msg_insert(eng, t, m, p, idx, now);
		if (s == NULL)
			return NULL;
		s->rlength = p->msg_len;
		*fresh_p = true;
		return s;
	}
	if (p->msg_len != s->rlength) {
		eng_in_drop(eng, m, ENG_DROP_INCONSISTENT);
		return NULL;
	}
	spinnic_msgtab_touch(t, s, now);
	if (!msg_pkt_new(eng, t, &s->link, m, idx))
		return NULL;
	*fresh_p = false;
	return s;
}

/* Start the sPIN side of a matched message. @return RX_DONE or RX_STALL */
static enum rx_res
msg_spin_start(struct spinnic_engine *eng, struct in_msg *e,
	       const struct spinnic_pkt *p)
{
	struct spin_msg_info info;

	memset(&info, 0, sizeof(info));
	info.src_nid = p->src.nid;
	info.src_pid = p->src.pid;
	info.uid = p->uid;
	info.pt_index = p->pt_index;
	info.match_bits = p->match_bits;
	info.hdr_data = p->hdr_data;
	info.length = e->match.mlength;
	info.remote_offset = p->remote_offset;
	info.msg_id = p->msg_id;
	info.op = p->op;
	info.pkt_payload = eng->node->payload;
	e->sm = spin_msg_start(eng->node->rt, e->match.ctx, &info, e->match.c,
			       e->match.start, e->match.length, e);
	if (e->sm != NULL) {
		e->state = MSG_S_SPIN;
		return RX_DONE;
	}
	if (errno == ENOBUFS) {
		eng->node->rx.her_full++;
		return RX_STALL;
	}
	/* the context went away: the message fails */
	return RX_DONE;
}

/* The failure a remote access's error reports to the initiator. */
static uint8_t
aa_fail(int rc)
{
	if (rc == -EPERM)
		return SPINNIC_PTL_NI_PERM_VIOLATION; /* a marked page refused */
	if (rc == -ENOSPC)
		return SPINNIC_PTL_NI_DROPPED; /* redirected into a full log */
	return SPINNIC_PTL_NI_SEGV;
}

static enum rx_res
rx_data(struct spinnic_engine *eng, struct rte_mbuf *m,
	const struct spinnic_pkt *p, uint64_t now)
{
	struct spinnic_node *node = eng->node;
	struct in_msg *e;
	uint32_t idx;
	bool fresh;
	int rc;

	e = (struct in_msg *)stream_accept(eng, eng->rx.msgs, NULL, m, p, now,
					   &fresh, &idx);
	if (e == NULL)
		return RX_DONE;
	if (fresh) {
		/* first packet of the message to arrive: match it */
		e->eng = eng;
		e->unseq = !(p->flags & SPINNIC_WIRE_F_REL);
		rc = ptl_nic_match(node->nic, p, &e->match);
		if (rc != 0) {
			wb_flush(eng); /* the NACK after earlier ACKs */
			node->rx.no_match++;
			if (p->ack_req != SPINNIC_PTL_NO_ACK_REQ)
				ack_send(eng, p, e->match.ni_fail, 0, true);
			/* tombstone: the rest of the message is late */
			msg_retire(eng, e);
			eng_in_drop(eng, m, ENG_DROP_NO_MATCH);
			return RX_DONE;
		}
		node->rx.matches++;
		e->state = e->match.ctx != SPINNIC_HANDLE_NONE ?
			MSG_S_SPIN_WAIT : MSG_S_NP;
	}

	if (e->state != MSG_S_NP) {
		uint64_t mlen = e->match.mlength, off = p->offset, len;
		bool deliver;

		/* handler records wait on the NIC for room in one of the
		 * client's Active Access logs: its sPIN packets wait too
		 * (not acknowledged, so resent), which slows their senders
		 * as a full log slows puts */
		if (ptl_aa_backlogged(e->match.c)) {
			eng_in_drop(eng, m, ENG_DROP_AA_FULL);
			return RX_DONE;
		}
		wb_flush(eng); /* handlers may read what they wrote */
		if (e->state == MSG_S_SPIN_WAIT) {
			if (msg_spin_start(eng, e, p) == RX_STALL)
				return RX_STALL;
			if (e->sm == NULL) {
				eng_in_drop(eng, m, ENG_DROP_SPIN);
				msg_complete(eng, e, SPINNIC_PTL_NI_DROPPED);
				return RX_DONE;
			}
		}
		/* bytes past mlength (truncation) are not the handlers' */
		len = off >= mlen ? 0 : RTE_MIN((uint64_t)p->pay_len, mlen - off);
		deliver = e->state == MSG_S_SPIN &&
			(len > 0 || (mlen == 0 && !e->zero_sent));
		if (deliver) {
			rc = spin_msg_packet(e->sm, p->payload, (uint32_t)len,
					     off, m);
			if (rc == -ENOBUFS) {
				/* the packet comes back next poll */
				node->rx.her_full++;
				return RX_STALL;
			}
			if (rc != 0) {
				eng_in_drop(eng, m, ENG_DROP_SPIN);
			} else {
				node->rx.hers++;
				e->spin_bytes += len;
				e->zero_sent = true;
				/* the runtime has every byte: msg_done
				 * finishes it, e->sm is no longer ours */
				if (e->spin_bytes == mlen) {
					e->sm = NULL;
					e->state = MSG_S_SPIN_FED;
				}
			}
		} else {
			rte_pktmbuf_free(m);
		}
		spinnic_seen_set(&e->s.link.seen, idx);
		e->s.got += p->pay_len;
		return RX_DONE;
	}

	/* non-processing path: copy into the ME window; outside the
	 * client's region, staged and written with the burst's others */
	if (p->offset < e->match.mlength && p->pay_len > 0 &&
	    e->match.iov == NULL) {
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)p->pay_len,
					       e->match.mlength - p->offset);
		uint64_t addr = e->match.start + p->offset;

		/* a client with Active Access marks: each packet checked
		 * and logged on its own (ptl_match_access_remote) */
		if (ptl_host_ptr(e->match.c, addr, n) == NULL &&
		    !ptl_aa_active(e->match.c)) {
			spinnic_seen_set(&e->s.link.seen, idx);
			e->s.got += p->pay_len;
			wb_stage(eng, e, m, p->payload, addr, n,
				 e->s.got == e->s.rlength);
			return RX_DONE;
		}
	}
	wb_flush(eng);
	if (p->offset < e->match.mlength && p->pay_len > 0) {
		uint64_t n = RTE_MIN((uint64_t)p->pay_len,
				     e->match.mlength - p->offset);

		/* duplicates are gone: marked pages log this packet once */
		rc = ptl_match_access_remote(&e->match, p->offset,
					     (void *)(uintptr_t)p->payload, n,
					     true);
		if (rc == -EAGAIN) {
			/* a full log that back-pressures: nothing applied,
			 * the packet not acknowledged, so resent */
			eng_in_drop(eng, m, ENG_DROP_AA_FULL);
			return RX_DONE;
		}
		if (rc != 0) {
			eng->rx.stats.drop[ENG_DROP_HOST]++;
			if (e->s.fail == SPINNIC_PTL_NI_OK)
				e->s.fail = aa_fail(rc);
		} else {
			eng->rx.stats.bytes_np += n;
		}
	}
	spinnic_seen_set(&e->s.link.seen, idx);
	e->s.got += p->pay_len;
	rte_pktmbuf_free(m);
	if (e->s.got == e->s.rlength) {
		eng->rx.stats.msgs_np++;
		msg_complete(eng, e, e->s.fail);
	}
	return RX_DONE;
}

/* ---- atomics (target side) --------------------------------------------------- */

/*
 * A fetching atomic's old values go back as a reply job whose data is
 * kept (a lost REPLY is resent from it, never re-read: the target has
 * changed); the FETCH_ATOMIC event at the target follows its last
 * packet's acknowledgement, as a GET's does.
 */
static struct reply_job *
fetch_job(const struct spinnic_pkt *p, uint64_t mlength)
{
	struct reply_job *j = calloc(1, sizeof(*j) + mlength);

	if (j != NULL) {
		j->ni_kind = p->ni;
		j->op = p->op;
		j->kept = true;
	}
	return j;
}

/*
 * An atomic request: one packet (wire.c refuses others), matched like a
 * put, applied to the ME's memory at once (ptl_host_atomic), ATOMIC event
 * and ack as a put's; a fetching one answers with the old values. PtlSwap
 * with a compare value or mask sends it before the values: it is not the
 * message's (rlength, mlength and the match count only the values).
 */
static enum rx_res
rx_atomic(struct spinnic_engine *eng, struct rte_mbuf *m,
	  const struct spinnic_pkt *p, uint64_t now)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	bool fetch = p->op != SPINNIC_WIRE_OP_ATOMIC;
	size_t esize = ptl_atomic_type_size(p->atomic_type);
	uint32_t lead = p->op == SPINNIC_WIRE_OP_SWAP &&
		p->atomic_op != SPINNIC_PTL_SWAP ? (uint32_t)esize : 0;
	struct spinnic_pkt q = *p;
	struct reply_job *j = NULL;
	struct in_msg *e;
	uint64_t mlen;
	uint8_t fail;
	int rc;

	if (p->pay_len < lead || p->pay_len != p->msg_len) {
		eng_in_drop(eng, m, ENG_DROP_INCONSISTENT);
		return RX_DONE;
	}
	e = spinnic_msgtab_lookup(eng->rx.msgs, &key);
	if (e != NULL && !(e->aa_wait && e->state == MSG_S_NP)) {
		eng_in_drop(eng, m, ENG_DROP_LATE);
		return RX_DONE;
	}
	if (fetch && rte_ring_free_count(eng->jobs) == 0)
		return RX_STALL;
	q.msg_len -= lead;
	q.pay_len -= lead;
	q.payload += lead;
	if (e != NULL) {
		/* the resend of an atomic parked for a full log: matched */
		spinnic_msgtab_touch(eng->rx.msgs, e, now);
		mlen = e->match.mlength;
		goto apply;
	}
	e = msg_insert(eng, eng->rx.msgs, m, p, -1, now);
	if (e == NULL)
		return RX_DONE;
	e->eng = eng;
	e->unseq = !(p->flags & SPINNIC_WIRE_F_REL);
	if (ptl_nic_match(eng->node->nic, &q, &e->match) != 0) {
		eng->node->rx.no_match++;
		if (fetch || p->ack_req != SPINNIC_PTL_NO_ACK_REQ)
			ack_send(eng, p, e->match.ni_fail, 0, true);
		msg_retire(eng, e);
		eng_in_drop(eng, m, ENG_DROP_NO_MATCH);
		return RX_DONE;
	}
	eng->node->rx.matches++;
	/* whole elements of what the ME holds (truncation) */
	mlen = e->match.mlength / esize * esize;
	e->match.mlength = mlen;
apply:
	if (fetch && (j = fetch_job(p, mlen)) == NULL) {
		/* no memory for the old values: the initiator hears why */
		ack_send(eng, p, SPINNIC_PTL_NI_DROPPED, 0, true);
		ptl_match_complete(eng->node->nic, &e->match,
				   SPINNIC_PTL_NI_DROPPED);
		msg_retire(eng, e);
		eng_in_drop(eng, m, ENG_DROP_NO_MEM);
		return RX_DONE;
	}
	rc = ptl_match_check_remote(&e->match, mlen, true, fetch);
	if (rc == -EAGAIN) {
		/*
		 * A back-pressuring Active Access log lacks room for the
		 * records: nothing applied, the packet not acknowledged (so
		 * resent, later ones of its sender held behind it) and the
		 * match kept (timeout and detach release it as a put's).
		 */
		free(j);
		e->aa_wait = true;
		e->state = MSG_S_NP;
		eng_in_drop(eng, m, ENG_DROP_AA_FULL);
		return RX_DONE;
	}
	e->aa_wait = false;
	e->state = MSG_S_NEW;
	if (rc != 0)
		fail = SPINNIC_PTL_NI_PERM_VIOLATION; /* a marked page refused */
	else
		fail = ptl_match_atomic(&e->match, p->atomic_op, p->atomic_type,
					q.payload, lead != 0 ? p->payload : NULL,
					mlen, fetch ? j->data : NULL) == 0 ?
			SPINNIC_PTL_NI_OK : SPINNIC_PTL_NI_SEGV;
	if (fail != SPINNIC_PTL_NI_OK)
		eng->rx.stats.drop[ENG_DROP_HOST]++;
	eng->rx.stats.atomics++;
	e->s.got = p->pay_len;
	rte_pktmbuf_free(m);
	if (!fetch) {
		msg_complete(eng, e, fail);
		return RX_DONE;
	}
	/* the request is one packet: its entry only recognises duplicates */
	msg_retire(eng, e);
	if (fail != SPINNIC_PTL_NI_OK) {
		ack_send(eng, p, fail, 0, true);
		ptl_match_complete(eng->node->nic, &e->match, fail);
		free(j);
		return RX_DONE;
	}
	j->match = e->match;
	j->src = ptl_client_id(j->match.c);
	/* the old values are kept: the FETCH_ATOMIC event need not wait
	 * for the reply's acknowledgement (nothing reads the ME again) */
	ptl_match_complete(eng->node->nic, &j->match, SPINNIC_PTL_NI_OK);
	/* free count checked above; single producer */
	rte_ring_sp_enqueue(eng->jobs, j);
	return RX_DONE;
}

/* ---- GET requests (target side) ---------------------------------------------- */

/*
 * A get from a client of this node (to itself, or to a neighbour): its
 * GET event would otherwise follow the REPLY's acknowledgement, so come
 * after the initiator's REPLY on the same node, whereas the target read
 * the data first. Up to ENG_GET_KEEP_MAX, the data is copied now, the
 * reply sent (and resent) from the copy, and the GET event posted at once
 * (doc/NOTES.md "A get to oneself"). @return the job to queue
 */
static struct reply_job *
get_keep(struct spinnic_engine *eng, struct reply_job *j)
{
	uint64_t mlen = j->match.mlength;
	struct reply_job *k;

	/* an active flush waits on the client; marked memory is read and
	 * logged packet by packet when the reply is built */
	if (mlen > ENG_GET_KEEP_MAX || j->aa_flush ||
	    ptl_aa_active(j->match.c))
		return j;
	k = realloc(j, sizeof(*j) + mlen);
	if (k == NULL)
		return j;
	if (mlen > 0 && ptl_match_access(&k->match, 0, k->data, mlen,
					 false) != 0)
		return k; /* read again when built: it fails there */
	k->kept = true;
	ptl_match_complete(eng->node->nic, &k->match, SPINNIC_PTL_NI_OK);
	return k;
}

/* ---- active flush behind message handlers ----------------------------------- */

struct fwait_arg {
	const struct spinnic_pkt *p;    /* the flush's GET */
	const struct ptl_client *c;     /* its target */
	unsigned bit;
	uint32_t n;
};

/* A message of the flush's initiator to the same client whose handlers
 * may still run: the flush waits for it. */
static void
fwait_mark(void *obj, void *arg)
{
	struct fwait_arg *a = arg;
	struct in_msg *e = obj;

	if (e->s.link.key.nid != a->p->src.nid ||
	    e->s.link.key.pid != a->p->src.pid || e->match.c != a->c ||
	    (e->state != MSG_S_SPIN_WAIT && e->state != MSG_S_SPIN &&
	     e->state != MSG_S_SPIN_FED && e->state != MSG_S_SPIN_HELD))
		return;
	e->fwait_mask |= (uint16_t)(1u << a->bit);
	a->n++;
}

/*
 * An active flush (paper 004 §3.6) covers what its initiator sent before
 * it: in-order matching delivered every earlier packet, and a
 * non-processing put is logged on arrival, but an sPIN message's
 * handlers (their DMAs, hence their records) may still run on the HPUs.
 * The reply job is held until every such message of the initiator to
 * this client finished; its log mark is taken then (fwait_poll), so the
 * handlers' records are covered too. @return true when held
 */
static bool
fwait_hold(struct spinnic_engine *eng, struct reply_job *j,
	   const struct spinnic_pkt *p)
{
	struct fwait_arg a = { .p = p, .c = j->match.c };
	unsigned b;

	for (b = 0; b < ENG_FLUSH_WAIT; b++)
		if (eng->rx.fwait[b].j == NULL)
			break;
	if (b == ENG_FLUSH_WAIT) {
		/* every slot taken: answered without waiting (counted) */
		eng->rx.stats.aa_flush_nowait++;
		return false;
	}
	a.bit = b;
	spinnic_msgtab_foreach_live(eng->rx.msgs, UINT64_MAX, fwait_mark, &a);
	if (a.n == 0)
		return false;
	eng->rx.fwait[b].j = j;
	eng->rx.fwait[b].left = a.n;
	eng->rx.n_fwait++;
	eng->rx.stats.aa_flush_waits++;
	return true;
}

/* Held flushes whose messages finished: the log mark now, then the job
 * to the outbound role. */
static unsigned
fwait_poll(struct spinnic_engine *eng)
{
	unsigned b, n = 0;

	if (eng->rx.n_fwait == 0)
		return 0;
	for (b = 0; b < ENG_FLUSH_WAIT; b++) {
		struct reply_job *j = eng->rx.fwait[b].j;

		if (j == NULL || eng->rx.fwait[b].left > 0 ||
		    rte_ring_free_count(eng->jobs) == 0)
			continue;
		j->aa_flush = ptl_match_flush_mark(&j->match,
						   j->match.mlength,
						   &j->aa_log, &j->aa_mark);
		/* free count checked above; single producer */
		rte_ring_sp_enqueue(eng->jobs, j);
		eng->rx.fwait[b].j = NULL;
		eng->rx.n_fwait--;
		n++;
	}
	return n;
}

static enum rx_res
rx_get(struct spinnic_engine *eng, struct rte_mbuf *m,
       const struct spinnic_pkt *p, uint64_t now)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };
	struct reply_job *j;
	struct in_msg *e;
	int rc;

	e = spinnic_msgtab_lookup(eng->rx.msgs, &key);
	if (e != NULL && !(e->aa_wait && e->state == MSG_S_NP)) {
		eng_in_drop(eng, m, ENG_DROP_LATE);
		return RX_DONE;
	}
	if (rte_ring_free_count(eng->jobs) == 0)
		return RX_STALL;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return RX_STALL;
	if (e != NULL) {
		/* the resend of a get parked for a full log: matched */
		spinnic_msgtab_touch(eng->rx.msgs, e, now);
		j->match = e->match;
		goto check;
	}
	e = msg_insert(eng, eng->rx.msgs, m, p, -1, now);
	if (e == NULL) {
		free(j);
		return RX_DONE;
	}
	e->eng = eng;
	rc = ptl_nic_match(eng->node->nic, p, &j->match);
	if (rc != 0) {
		/* a request is one packet: its entry only recognises
		 * duplicates */
		msg_retire(eng, e);
		eng->node->rx.no_match++;
		ack_send(eng, p, j->match.ni_fail, 0, true);
		free(j);
		eng_in_drop(eng, m, ENG_DROP_NO_MATCH);
		return RX_DONE;
	}
	eng->node->rx.matches++;
check:
	rc = ptl_match_check_remote(&j->match, j->match.mlength, false, false);
	if (rc == -EAGAIN) {
		/* a refused get's records do not fit a back-pressuring log:
		 * parked as an atomic is (rx_atomic), the match kept */
		e->match = j->match;
		e->aa_wait = true;
		e->state = MSG_S_NP;
		free(j);
		eng_in_drop(eng, m, ENG_DROP_AA_FULL);
		return RX_DONE;
	}
	e->aa_wait = false;
	msg_retire(eng, e);
	if (rc != 0) {
		/* a marked page with R=0: nothing of the window is sent */
		ack_send(eng, p, SPINNIC_PTL_NI_PERM_VIOLATION, 0, true);
		ptl_match_complete(eng->node->nic, &j->match,
				   SPINNIC_PTL_NI_PERM_VIOLATION);
		free(j);
		eng->rx.stats.drop[ENG_DROP_HOST]++;
		rte_pktmbuf_free(m);
		return RX_DONE;
	}
	eng->rx.stats.gets_served++;
	j->aa_flush = ptl_match_flush_mark(&j->match, j->match.mlength,
					   &j->aa_log, &j->aa_mark);
	j->ni_kind = p->ni;
	j->op = SPINNIC_WIRE_OP_GET;
	j->src = ptl_client_id(j->match.c);
	if (j->aa_flush && fwait_hold(eng, j, p)) {
		rte_pktmbuf_free(m);
		return RX_DONE;
	}
	if (p->src.nid == eng->node->nid)
		j = get_keep(eng, j);
	/* free count checked above; single producer */
	rte_ring_sp_enqueue(eng->jobs, j);
	rte_pktmbuf_free(m);
	return RX_DONE;
}

/* ---- replies and acks (initiator side) ------------------------------------------ */

/* Only the node and process a get of ours went to may answer it. */
static bool
reply_admit(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	struct ptl_op_info info;

	return ptl_op_lookup(eng->node->nic, p->msg_id, &info, NULL) == 0 &&
		(info.op == SPINNIC_CMD_GET || ptl_cmd_fetches(info.op)) &&
		info.target.nid == p->src.nid &&
		info.target.pid == p->src.pid;
}

static enum rx_res
rx_reply(struct spinnic_engine *eng, struct rte_mbuf *m,
	 const struct spinnic_pkt *p, uint64_t now)
{
	struct spinnic_node *node = eng->node;
	struct in_reply *r;
	uint32_t idx;
	bool fresh;
	int rc;

	r = (struct in_reply *)stream_accept(eng, eng->rx.replies, reply_admit,
					     m, p, now, &fresh, &idx);
	if (r == NULL)
		return RX_DONE;
	if (fresh)
		r->s.fail = p->fail_type;
	spinnic_seen_set(&r->s.link.seen, idx);
	if (p->pay_len > 0) {
		/* into the MD: through its entries when it is an iovec MD */
		rc = ptl_op_reply_write(node->nic, p->msg_id, p->offset,
					p->payload, p->pay_len);
		if (rc == -ENOENT) {
			/* not a get of ours (any more): forget the stream */
			spinnic_msgtab_finish(eng->rx.replies, r);
			eng_in_drop(eng, m, ENG_DROP_UNKNOWN_OP);
			return RX_DONE;
		}
		if (rc != 0) {
			eng->rx.stats.drop[ENG_DROP_HOST]++;
			r->s.fail = SPINNIC_PTL_NI_SEGV;
		} else {
			eng->rx.stats.reply_bytes += p->pay_len;
		}
	}
	r->s.got += p->pay_len;
	rte_pktmbuf_free(m);
	if (r->s.got == r->s.rlength) {
		ptl_op_reply_done(node->nic, p->msg_id, r->s.fail,
				  r->s.rlength);
		eng->rx.stats.replies_done++;
		spinnic_msgtab_finish(eng->rx.replies, r);
	}
	return RX_DONE;
}

static enum rx_res
rx_ack(struct spinnic_engine *eng, struct rte_mbuf *m,
       const struct spinnic_pkt *p)
{
	struct spinnic_node *node = eng->node;
	struct ptl_op_info info;
	int rc;

	if (p->type == SPINNIC_WIRE_T_ACK)
		eng->rx.stats.acks_rcvd++;
	else
		eng->rx.stats.nacks_rcvd++;
	rc = ptl_op_lookup(node->nic, p->msg_id, &info, NULL);
	if (rc == 0 && info.target.nid == p->src.nid &&
	    info.target.pid == p->src.pid) {
		if (info.op == SPINNIC_CMD_GET || ptl_cmd_fetches(info.op))
			/* a get, or fetching atomic, that failed at the
			 * target: REPLY with why */
			rc = p->type == SPINNIC_WIRE_T_NACK ?
				ptl_op_reply_done(node->nic, p->msg_id,
						  p->fail_type, 0) : -ENOENT;
		else
			rc = ptl_op_ack(node->nic, p->msg_id, p->fail_type,
					p->mlength, p->hdr_data ==
					SPINNIC_PTL_OVERFLOW_LIST ?
					SPINNIC_PTL_OVERFLOW_LIST :
					SPINNIC_PTL_PRIORITY_LIST);
	} else {
		rc = -ENOENT;
	}
	if (rc != 0) {
		eng_in_drop(eng, m, ENG_DROP_UNKNOWN_OP);
		return RX_DONE;
	}
	rte_pktmbuf_free(m);
	return RX_DONE;
}

/* ---- role -------------------------------------------------------------------- */

static enum rx_res
rx_kind(struct spinnic_engine *eng, struct rte_mbuf *m,
	const struct spinnic_pkt *p, uint64_t now)
{
	/* staged writes (wb_flush) before anything but another put */
	if (p->type != SPINNIC_WIRE_T_DATA || p->op != SPINNIC_WIRE_OP_PUT)
		wb_flush(eng);
	switch (p->type) {
	case SPINNIC_WIRE_T_DATA:
		if (p->op != SPINNIC_WIRE_OP_PUT)
			return rx_atomic(eng, m, p, now);
		return rx_data(eng, m, p, now);
	case SPINNIC_WIRE_T_GET:
		return rx_get(eng, m, p, now);
	case SPINNIC_WIRE_T_REPLY:
		return rx_reply(eng, m, p, now);
	case SPINNIC_WIRE_T_TACK:
		/* a probe (sequenced): only its sequence number matters */
		rte_pktmbuf_free(m);
		return RX_DONE;
	default:
		return rx_ack(eng, m, p);
	}
}

/* Is a copy of this packet (same sender, epoch and seq) parked? */
static bool
parked_already(const struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	unsigned i;

	for (i = 0; i < eng->rx.n_park; i++)
		if (eng->rx.park[i].seq == p->seq &&
		    eng->rx.park[i].nid == p->src.nid &&
		    eng->rx.park[i].epoch == p->epoch)
			return true;
	return false;
}

/* Would this packet match a new message (and so must come in order)? */
static bool
starts_match(struct spinnic_engine *eng, const struct spinnic_pkt *p)
{
	struct spinnic_msg_key key = { p->src.nid, p->src.pid, p->msg_id };

	if (p->type == SPINNIC_WIRE_T_GET)
		return true;
	return p->type == SPINNIC_WIRE_T_DATA &&
		spinnic_msgtab_lookup(eng->rx.msgs, &key) == NULL;
}

static enum rx_res
rx_one(struct spinnic_engine *eng, struct rte_mbuf *m, uint64_t now)
{
	struct spinnic_node *node = eng->node;
	struct spinnic_pkt p;
	enum eng_drop why;
	enum rx_res res;
	int rc;

	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		eng_in_drop(eng, m, ENG_DROP_NO_MEM);
		return RX_DONE;
	}
	/* --wire-key: the MAC is checked first (auth.h) */
	rc = spinnic_wire_parse_auth(rte_pktmbuf_mtod(m, const void *),
				     rte_pktmbuf_data_len(m), node->udp_port,
				     spinnic_auth_rx(node), &p);
	if (rc != 0) {
		unsigned r = (unsigned)(-rc - SPINNIC_WIRE_DROP_BASE);

		if (r < SPINNIC_RX_DROP_MAX)
			node->rx.drop[r]++;
		node->rx.drops++;
		rte_pktmbuf_free(m);
		return RX_DONE;
	}
	if (p.dst.nid != node->nid) {
		eng_in_drop(eng, m, ENG_DROP_NOT_ME);
		return RX_DONE;
	}
	if (p.type == SPINNIC_WIRE_T_TACK &&
	    !(p.flags & SPINNIC_WIRE_F_REL)) {
		/* a transport ack: for the outbound role */
		rel_rx_tack(eng, &p);
		rte_pktmbuf_free(m);
		return RX_DONE;
	}
	if (p.type == SPINNIC_WIRE_T_CHAL ||
	    p.type == SPINNIC_WIRE_T_CHAL_ACK) {
		/* the session handshake (rel_rx.c) */
		why = rel_rx_handshake(eng, &p);
		if (why != ENG_KEEP)
			eng_in_drop(eng, m, why);
		else
			rte_pktmbuf_free(m);
		return RX_DONE;
	}
	/* a request may make an ack: room for one first (acks and replies
	 * make none, so they always pass: what a stalled peer waits for) */
	if ((p.type == SPINNIC_WIRE_T_DATA || p.type == SPINNIC_WIRE_T_GET) &&
	    !ack_room(eng))
		return RX_STALL;
	why = rel_rx_begin(eng, &p);
	if (why != ENG_KEEP) {
		eng_in_drop(eng, m, why);
		return RX_DONE;
	}
	if (!rel_rx_in_order(eng, &p) && starts_match(eng, &p)) {
		/*
		 * Matching in order (Portals: messages from one initiator
		 * are matched in the order sent): a message may match only
		 * once every earlier packet of its sender arrived, so an
		 * earlier message still missing its packets cannot be
		 * overtaken. Parked until the hole fills (up to ENG_PARK,
		 * a sender's whole window); not acknowledged meanwhile.
		 */
		if (parked_already(eng, &p)) {
			/* a resend of a packet parked already: one copy */
			eng_in_drop(eng, m, ENG_DROP_REL_DUP);
		} else if (eng->rx.n_park < ENG_PARK) {
			struct park_ent *pe = &eng->rx.park[eng->rx.n_park++];

			if (eng->rx.n_park == 1)
				eng->rx.park_tsc = now;
			pe->m = m;
			pe->nid = p.src.nid;
			pe->epoch = p.epoch;
			pe->seq = p.seq;
			eng->rx.stats.parked++;
		} else {
			/* not acknowledged: the sender resends it */
			eng->rx.stats.rel_unacked++;
			eng->rx.stats.drop[ENG_DROP_PARK_FULL]++;
			node->rx.drops++;
			rte_pktmbuf_free(m);
		}
		return RX_DONE;
	}
	res = rx_kind(eng, m, &p, now);
	if (res == RX_DONE)
		rel_rx_end(eng, &p);
	return res;
}

/* Parked packets whose turn came (rx_one parks them again otherwise). */
static unsigned
park_drain(struct spinnic_engine *eng, uint64_t now)
{
	static __thread struct park_ent pk[ENG_PARK];
	unsigned n = eng->rx.n_park, i;

	/* only when some sender's window moved: nothing else can free one */
	if (n == 0 || eng->rx.park_seen == eng->rx.rel_moves)
		return 0;
	eng->rx.park_seen = eng->rx.rel_moves;
	eng->rx.park_tsc = now;
	memcpy(pk, eng->rx.park, n * sizeof(pk[0]));
	eng->rx.n_park = 0;
	for (i = 0; i < n; i++) {
		if (rx_one(eng, pk[i].m, now) == RX_STALL) {
			/* keep it and the rest, in order */
			memmove(eng->rx.park + (n - i), eng->rx.park,
				eng->rx.n_park * sizeof(pk[0]));
			memcpy(eng->rx.park, pk + i, (n - i) * sizeof(pk[0]));
			eng->rx.n_park += n - i;
			break;
		}
	}
	return n - eng->rx.n_park;
}

static void
expire_msg(void *obj, void *arg)
{
	struct spinnic_engine *eng = arg;
	struct in_msg *e = obj;

	switch (e->state) {
	case MSG_S_SPIN:
		/* the runtime holds it: abort, msg_done releases it */
		spin_msg_abort(e->sm);
		e->sm = NULL;
		e->state = MSG_S_SPIN_ABORT_TIMEOUT;
		eng->rx.stats.timeouts++;
		return;
	case MSG_S_SPIN_FED:
	case MSG_S_SPIN_ABORT_TIMEOUT:
	case MSG_S_SPIN_ABORT_DETACH:
		/* msg_done ends it */
		return;
	case MSG_S_SPIN_HELD:
		/* held_poll ends it: once the client's records are in (a
		 * consumer that never comes back: its detach) */
		return;
	default:
		eng->rx.stats.timeouts++;
		msg_abandon(eng, e);
	}
}

/* Unsequenced, one packet of several, idle ENG_MSG_UNSEQ_IDLE_MS: most
 * likely a forged header holding a slot of the unsequenced share. */
static void
expire_unseq(void *obj, void *arg)
{
	struct spinnic_engine *eng = arg;
	struct in_msg *e = obj;

	if ((e->s.link.flags & SPINNIC_MSGTAB_F_UNSEQ) &&
	    e->s.got <= eng->node->payload && e->s.got < e->s.rlength)
		expire_msg(obj, arg);
}

static void
expire_reply(void *obj, void *arg)
{
	struct spinnic_engine *eng = arg;
	struct in_reply *r = obj;

	/* the rest of the reply never came: the get fails */
	eng->rx.stats.timeouts++;
	ptl_op_reply_done(eng->node->nic, r->s.link.key.id,
			  SPINNIC_PTL_NI_DROPPED, r->s.got);
	spinnic_msgtab_finish(eng->rx.replies, r);
}

struct purge_arg {
	struct spinnic_engine *eng;
	struct ptl_client *pc;
};

static void
purge_msg(void *obj, void *arg)
{
	struct purge_arg *a = arg;
	struct in_msg *e = obj;

	if (!msg_matched(e) || e->match.c != a->pc ||
	    e->state == MSG_S_SPIN_ABORT_TIMEOUT ||
	    e->state == MSG_S_SPIN_ABORT_DETACH)
		return;
	a->eng->node->rx.detach_drops++;
	if (e->state == MSG_S_SPIN_HELD) {
		/* on rx.held: held_poll forgets it */
		e->state = MSG_S_SPIN_ABORT_DETACH;
		a->eng->rx.live_aborts++;
		a->eng->rx.held_rescan = true;
		return;
	}
	if (e->state == MSG_S_SPIN || e->state == MSG_S_SPIN_FED) {
		/* the runtime holds it: msg_done releases it */
		if (e->state == MSG_S_SPIN)
			spin_msg_abort(e->sm);
		e->sm = NULL;
		e->state = MSG_S_SPIN_ABORT_DETACH;
		a->eng->rx.live_aborts++;
		return;
	}
	msg_abandon(a->eng, e);
}

void
eng_in_detach(struct spinnic_engine *eng, struct ptl_client *pc)
{
	struct purge_arg a = { eng, pc };

	spinnic_msgtab_foreach_live(eng->rx.msgs, UINT64_MAX, purge_msg, &a);
}

static void
in_detach_check(struct spinnic_engine *eng)
{
	uint64_t req = __atomic_load_n(&eng->detach_req, __ATOMIC_ACQUIRE);

	if (req == eng->rx.detach_ack)
		return;
	if (eng->rx.detach_seen != req) {
		eng_in_detach(eng, eng->detach_pc);
		eng->rx.detach_seen = req;
	}
	/* done once the runtime returned every aborted message */
	if (eng->rx.live_aborts == 0)
		__atomic_store_n(&eng->rx.detach_ack, req, __ATOMIC_RELEASE);
}

unsigned
spinnic_inbound_poll(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;
	unsigned work = 0;
	uint64_t now;

	work += done_drain(eng);
	work += held_poll(eng);
	work += fwait_poll(eng);
	in_detach_check(eng);
	work += acks_flush(eng);
	now = rte_get_timer_cycles();
	if (now >= eng->rx.next_expire) {
		uint64_t old = now - eng->hz * ENG_MSG_TIMEOUT_S;

		if (now > eng->hz * ENG_MSG_TIMEOUT_S) {
			/* parked for a hole that never filled (its sender
			 * is gone): their messages are lost anyway */
			if (eng->rx.n_park > 0 && eng->rx.park_tsc < old)
				while (eng->rx.n_park > 0)
					eng_in_drop(eng, eng->rx.park[--eng->rx.n_park].m,
					     ENG_DROP_PARK_FULL);
			spinnic_msgtab_foreach_live(eng->rx.msgs, old, expire_msg,
						    eng);
			spinnic_msgtab_foreach_live(eng->rx.replies, old,
						    expire_reply, eng);
		}
		if (now > eng->hz / 1000 * ENG_MSG_UNSEQ_IDLE_MS)
			spinnic_msgtab_foreach_live(eng->rx.msgs, now - eng->hz /
				1000 * ENG_MSG_UNSEQ_IDLE_MS, expire_unseq, eng);
		eng->rx.next_expire = now + eng->hz / EXPIRE_PER_S;
	}
	if (eng->rx.burst_i == eng->rx.burst_n) {
		uint16_t q = SPINNIC_RXQ;
		unsigned i;

		/* --rx-queues: one burst per round, the queues in turn (this
		 * role is the only reader of the node's queues) */
		if (node->nb_rxq > 1) {
			q = node->rxq_next;
			node->rxq_next = q + 1u == node->nb_rxq ? 0 :
				(uint16_t)(q + 1u);
		}
		eng->rx.burst_i = 0;
		eng->rx.burst_n = rte_eth_rx_burst(node->port_id, q, eng->rx.burst,
					     ENG_RX_BURST);
		/* a real port's frames to itself (node->loop), in the same
		 * burst: the same checks, faults and counters as the wire's */
		if (node->loop != NULL && eng->rx.burst_n < ENG_RX_BURST)
			eng->rx.burst_n += rte_ring_sc_dequeue_burst(
				node->loop,
				(void **)&eng->rx.burst[eng->rx.burst_n],
				ENG_RX_BURST - eng->rx.burst_n, NULL);
		for (i = 0; i < eng->rx.burst_n; i++)
			node->rx.bytes += rte_pktmbuf_pkt_len(eng->rx.burst[i]);
		node->rx.pkts += eng->rx.burst_n;
		if (eng->rx.faults != NULL) {
			/* loss, duplicates, corruption, reordering (DESIGN
			 * §11); an empty burst lets the window go */
			struct rte_mbuf *in[ENG_RX_BURST];
			uint64_t ev = eng->rx.faults->events;

			memcpy(in, eng->rx.burst, eng->rx.burst_n * sizeof(in[0]));
			eng->rx.burst_n = fault_apply(eng->rx.faults, in, eng->rx.burst_n,
						eng->rx.burst);
			node->rx.faults += eng->rx.faults->events - ev;
		}
	}
	while (eng->rx.burst_i < eng->rx.burst_n) {
		if (rx_one(eng, eng->rx.burst[eng->rx.burst_i], now) == RX_STALL) {
			eng->rx.stats.stalls++;
			break;
		}
		eng->rx.burst_i++;
		work++;
	}
	if (eng->rx.burst_i == eng->rx.burst_n)
		work += park_drain(eng, now);
	wb_flush(eng);
	work += rel_rx_acks(eng, rte_get_timer_cycles());
	return work;
}

static void
release_fini(void *obj, void *arg)
{
	struct in_msg *e = obj;

	/* the runtime goes without msg_done: nothing to wait for */
	e->sm = NULL;
	msg_abandon(arg, e);
}

void
eng_in_fini(struct spinnic_engine *eng)
{
	void *obj;

	while (eng->done != NULL && rte_ring_sc_dequeue(eng->done, &obj) == 0)
		msg_abandon(eng, obj);
	while (eng->rx.burst_i < eng->rx.burst_n)
		rte_pktmbuf_free(eng->rx.burst[eng->rx.burst_i++]);
	while (eng->rx.n_acks > 0)
		rte_pktmbuf_free(eng->rx.acks[--eng->rx.n_acks]);
	while (eng->rx.n_park > 0)
		rte_pktmbuf_free(eng->rx.park[--eng->rx.n_park].m);
	fault_stage_free(eng->rx.faults);
	eng->rx.faults = NULL;
	rel_rx_fini(eng);
	/* the runtime is destroyed without msg_done: release everything */
	if (eng->rx.msgs != NULL)
		spinnic_msgtab_foreach_live(eng->rx.msgs, UINT64_MAX, release_fini,
					    eng);
}

/* ---- host operations of the sPIN runtime ---------------------------------------- */
