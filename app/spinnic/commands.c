/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commands: every initiator operation becomes packets here. Clients'
 * command rings and the engine's submit queue (handler puts; eng_submit)
 * are drained round robin into one progress step that builds the packets
 * with the one builder (packet.c). Outbound role only, but eng_submit,
 * which any lcore (HPUs) may call.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "engine.h"
#include "outbound_stream.h"
#include "packet.h"

void
eng_client_forget(struct spinnic_engine *eng, struct out_client *oc)
{
	if (oc->op.active || oc->op.have_cmd)
		eng->tx.stats.detach_drops++;
	eng_sput_forget(eng, oc);
	eng_op_unstage(eng, &oc->op);
	if (oc->op.c != NULL)
		ptl_client_put(oc->op.c);
	memset(oc, 0, sizeof(*oc));
}

void
eng_clients_scan(struct spinnic_engine *eng)
{
	unsigned pid;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
		struct out_client *oc = &eng->tx.clients[pid];

		if (oc->op.c != NULL && !ptl_client_alive(oc->op.c))
			eng_client_forget(eng, oc);
		if (oc->op.c == NULL)
			oc->op.c = ptl_client_lookup(eng->node->nic, pid);
	}
}

/*
 * Start operation @p op: its message id and counters. @return 0 (packets
 * to build), -EAGAIN (the op table is full: again later) or -ENOENT (it
 * ended already: its client detached, or no port reaches its target)
 */
static int
op_start(struct spinnic_engine *eng, struct out_op *op, bool client)
{
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &op->cmd;
	int rc;

	rc = ptl_op_start(op->c, cmd, &op->msg_id);
	if (rc == -ENOSPC) {
		eng->tx.stats.ops_full++;
		return -EAGAIN;
	}
	op->have_cmd = false;
	if (rc != 0)
		return -ENOENT; /* client detached meanwhile */
	op->active = true;
	op->off = 0;
	RTE_ASSERT(op->stage == NULL);
	if (client) {
		spinnic_client_count(node, ptl_client_id(op->c).pid, false,
				     cmd->op == SPINNIC_CMD_PUT ?
				     cmd->length : 0);
		if (cmd->op == SPINNIC_CMD_PUT)
			eng->tx.stats.puts++;
		else if (cmd->op == SPINNIC_CMD_GET)
			eng->tx.stats.gets++;
		else
			eng->tx.stats.atomics++;
	} else {
		eng->tx.stats.submitted++;
	}
	if (spinnic_node_txq(node, cmd->target.nid) == UINT16_MAX) {
		/* no port reaches that node: fail it now */
		eng->tx.stats.unreachable++;
		ptl_op_sent(node->nic, op->msg_id, SPINNIC_PTL_NI_UNDELIVERABLE);
		op->active = false;
		return -ENOENT;
	}
	return 0;
}

/* The request packet of a get. @return packets built (0 or 1) */
static unsigned
get_progress(struct spinnic_engine *eng, struct out_op *op)
{
	struct spinnic_node *node = eng->node;
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	if (!rel_tx_room(eng, op->cmd.target.nid))
		return 0;
	eng_pkt_from_cmd(&op->cmd, ptl_client_id(op->c), op->msg_id, &p);
	p.type = SPINNIC_WIRE_T_GET;
	p.op = SPINNIC_WIRE_OP_GET;
	p.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	p.ack_req = SPINNIC_PTL_NO_ACK_REQ;
	m = eng_build(node, &p, NULL);
	if (m == NULL) {
		eng->tx.stats.no_mbuf++;
		return 0;
	}
	if (rel_tx_send(eng, m, p.dst.nid, NULL) != 0) {
		rte_pktmbuf_free(m);
		return 0;
	}
	eng->tx.stats.get_pkts++;
	ptl_op_sent(node->nic, op->msg_id, SPINNIC_PTL_NI_OK);
	op->active = false;
	return 1;
}

/*
 * The one packet of an atomic: the operand first when there is one (the
 * compare value or mask of PtlSwap), then the values read from the MD.
 * Its frame is kept for a resend (rel_tx.c): the request is what was
 * sent, whatever the MD holds by then. @return packets built (0 or 1)
 */
static unsigned
atomic_progress(struct spinnic_engine *eng, struct out_op *op)
{
	static const uint8_t wire_op[] = {
		[SPINNIC_CMD_ATOMIC] = SPINNIC_WIRE_OP_ATOMIC,
		[SPINNIC_CMD_FETCH_ATOMIC] = SPINNIC_WIRE_OP_FETCH_ATOMIC,
		[SPINNIC_CMD_SWAP] = SPINNIC_WIRE_OP_SWAP,
	};
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &op->cmd;
	uint32_t len = (uint32_t)(cmd->operand_len + cmd->length);
	/* SEND once the request is acknowledged */
	struct rel_src src = { .send_id = op->msg_id };
	struct spinnic_pkt p;
	struct rte_mbuf *m;
	uint8_t *pay;
	int rc;

	if (!rel_tx_room(eng, cmd->target.nid))
		return 0;
	eng_pkt_from_cmd(cmd, ptl_client_id(op->c), op->msg_id, &p);
	p.op = wire_op[cmd->op];
	p.atomic_op = cmd->atomic_op;
	p.atomic_type = cmd->atomic_type;
	p.msg_len = len;
	spinnic_wire_pkt_seg(&p, 0, len);
	m = eng_build(node, &p, &pay);
	if (m == NULL) {
		eng->tx.stats.no_mbuf++;
		return 0;
	}
	/* inline: the values came with the command, after the operand */
	memcpy(pay, cmd->operand, cmd->operand_len +
	       ((cmd->flags & SPINNIC_CMD_F_INLINE) ? cmd->length : 0));
	rc = cmd->length == 0 || (cmd->flags & SPINNIC_CMD_F_INLINE) ? 0 :
		(cmd->md_options & SPINNIC_PTL_IOVEC) ?
		ptl_md_access(op->c, cmd->md, cmd->local_offset,
			      pay + cmd->operand_len, cmd->length, false) :
		ptl_host_read(op->c, cmd->local_addr, pay + cmd->operand_len,
			      cmd->length);
	if (rc != 0) {
		rte_pktmbuf_free(m);
		eng->tx.stats.read_faults++;
		ptl_op_sent(node->nic, op->msg_id, SPINNIC_PTL_NI_SEGV);
		op->active = false;
		return 0;
	}
	if (rel_tx_send(eng, m, p.dst.nid, &src) != 0) {
		rte_pktmbuf_free(m);
		return 0;
	}
	eng->tx.stats.data_pkts++;
	op->active = false;
	return 1;
}

/* ---- staged puts (SPIN_MD_STAGE) ----------------------------------------- */

/* Bytes of a staged put copied per visit: the copy of a large message
 * does not hold the outbound lcore from other clients for long. */
#define ENG_STAGE_CHUNK (256u * 1024)

static bool
put_staged(const struct out_op *op)
{
	return op->cmd.op == SPINNIC_CMD_PUT && op->pay == NULL &&
	       (op->cmd.md_options & SPINNIC_PTL_MD_STAGE) &&
	       !(op->cmd.flags & SPINNIC_CMD_F_INLINE) && op->cmd.length > 0;
}

void
eng_op_unstage(struct spinnic_engine *eng, struct out_op *op)
{
	if (op->stage == NULL)
		return;
	spin_rt_stage_free(eng->node->rt, ptl_client_id(op->c).pid, op->stage,
			   op->cmd.length);
	op->stage = NULL;
	op->staged = 0;
}

/*
 * Copy the next piece of staged put @p op from the initiator's memory into
 * its NIC-memory copy (allocated at the first piece). Nothing is sent
 * before the last byte is in: the DPU's store and forward.
 * @return 0 all copied; -EAGAIN more to copy (next visit); -ENOMEM no NIC
 *   memory; else the host read's error
 */
static int
put_stage(struct spinnic_engine *eng, struct out_op *op)
{
	const struct ptl_cmd *cmd = &op->cmd;
	uint64_t n;
	int rc;

	if (op->stage == NULL) {
		op->stage = spin_rt_stage_alloc(eng->node->rt,
						ptl_client_id(op->c).pid,
						cmd->length);
		if (op->stage == NULL) {
			eng->tx.stats.stage_no_mem++;
			return -ENOMEM;
		}
		op->staged = 0;
		eng->tx.stats.stage_puts++;
	}
	n = RTE_MIN(cmd->length - op->staged, (uint64_t)ENG_STAGE_CHUNK);
	rc = (cmd->md_options & SPINNIC_PTL_IOVEC) ?
		ptl_md_access(op->c, cmd->md, cmd->local_offset + op->staged,
			      op->stage + op->staged, n, false) :
		ptl_host_read(op->c, cmd->local_addr + op->staged,
			      op->stage + op->staged, n);
	if (rc != 0)
		return rc;
	op->staged += n;
	eng->tx.stats.stage_bytes += n;
	return op->staged == cmd->length ? 0 : -EAGAIN;
}

/*
 * The packet [off, off + len) of put @p op with its payload: the one an
 * HPU built (op->pay), or read from the initiator's memory now.
 * @return the packet, or NULL (*rc: -ENOBUFS no mbuf, or the host read's
 *   error)
 */
static struct rte_mbuf *
put_packet(struct spinnic_engine *eng, struct out_op *op, uint32_t len,
	   struct rel_src *src, int *rc)
{
	struct spinnic_node *node = eng->node;
	struct spinnic_pkt p;
	struct rte_mbuf *m;
	uint8_t *pay;

	eng_pkt_from_cmd(&op->cmd, ptl_client_id(op->c), op->msg_id, &p);
	spinnic_wire_pkt_seg(&p, op->off, len);
	*rc = -ENOBUFS;
	if (op->pay != NULL) {
		/* bytes copied when it was submitted: kept by rel_tx.c */
		m = op->pay[op->off / node->payload];
		if (eng_build_into(node, &p, m) != 0)
			return NULL;
		op->pay[op->off / node->payload] = NULL;
		return m;
	}
	m = eng_build(node, &p, &pay);
	if (m == NULL)
		return NULL;
	if (op->cmd.flags & SPINNIC_CMD_F_INLINE) {
		/* the bytes came with the command (one packet: length <=
		 * SPINNIC_ATOMIC_OPERAND); a resend uses the copy rel_tx.c
		 * keeps */
		memcpy(pay, op->cmd.operand + op->off, len);
		*rc = 0;
		return m;
	}
	if (op->stage != NULL) {
		/* from its copy in NIC memory; a retransmission sends the
		 * copy rel_tx.c keeps of the frame (src->c NULL) */
		memcpy(pay, op->stage + op->off, len);
		*rc = 0;
		return m;
	}
	if (op->cmd.md_options & SPINNIC_PTL_IOVEC) {
		/* through the MD's entries; a retransmission sends the copy
		 * rel_tx.c keeps of the frame (src->c NULL): it needs no MD
		 * then (doc/NOTES.md "iovec MDs and MEs") */
		*rc = len == 0 ? 0 :
			ptl_md_access(op->c, op->cmd.md,
				      op->cmd.local_offset + op->off, pay, len,
				      false);
		if (*rc != 0) {
			rte_pktmbuf_free(m);
			return NULL;
		}
		return m;
	}
	*rc = len == 0 ? 0 :
		ptl_host_read(op->c, op->cmd.local_addr + op->off, pay, len);
	if (*rc != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	/* a retransmission reads the MD again */
	src->c = op->c;
	src->addr = op->cmd.local_addr + op->off;
	return m;
}

/*
 * Up to @p budget packets of a put whose bytes lie in client memory
 * outside its region: built first, their payloads read with one
 * process_vm_readv (ptl_host_readv), then sent in order (a system call per
 * packet otherwise: doc/NOTES.md "Message rate"). @return packets sent;
 * *fallback_p set when the read failed, for the packet-by-packet path to
 * find which packet's memory is bad
 */
static unsigned
put_batch(struct spinnic_engine *eng, struct out_op *op, unsigned budget,
	  bool *fallback_p)
{
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &op->cmd;
	struct ptl_host_iov iov[ENG_PUT_BATCH];
	struct rte_mbuf *ms[ENG_PUT_BATCH];
	uint64_t off = op->off;
	unsigned k = 0, n, i;
	/* no more than the window takes now: none read in vain */
	unsigned max = rel_tx_window_free(eng, cmd->target.nid,
					  RTE_MIN(budget, ENG_PUT_BATCH));

	while (k < max && off < cmd->length) {
		uint32_t len = (uint32_t)RTE_MIN(cmd->length - off,
						 (uint64_t)node->payload);
		struct spinnic_pkt p;
		uint8_t *pay;

		eng_pkt_from_cmd(cmd, ptl_client_id(op->c), op->msg_id, &p);
		spinnic_wire_pkt_seg(&p, off, len);
		ms[k] = eng_build(node, &p, &pay);
		if (ms[k] == NULL) {
			eng->tx.stats.no_mbuf++;
			break;
		}
		iov[k].addr = cmd->local_addr + off;
		iov[k].buf = pay;
		iov[k].len = len;
		off += len;
		k++;
	}
	if (k > 0 && ptl_host_readv(op->c, iov, k) != 0) {
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(ms[i]);
		*fallback_p = true;
		return 0;
	}
	for (i = 0; i < k; i++) {
		struct rel_src src = {
			.c = op->c,
			.addr = iov[i].addr,
			.send_id = op->off + iov[i].len == cmd->length ?
				op->msg_id : 0,
		};

		if (!rel_tx_room(eng, cmd->target.nid) ||
		    rel_tx_send(eng, ms[i], cmd->target.nid, &src) != 0)
			break;
		eng->tx.stats.data_pkts++;
		op->off += iov[i].len;
	}
	n = i;
	/* built and read but no room left: built again next time */
	for (; i < k; i++)
		rte_pktmbuf_free(ms[i]);
	if (op->off == cmd->length)
		op->active = false;
	return n;
}

/* Build up to @p budget packets of a put. @return packets built */
static unsigned
put_progress(struct spinnic_engine *eng, struct out_op *op, unsigned budget)
{
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &op->cmd;
	unsigned n = 0;
	bool fallback = false;
	int rc;

	if (put_staged(op) && op->staged < cmd->length) {
		rc = put_stage(eng, op);
		if (rc == -EAGAIN)
			return 1; /* a piece copied: work done */
		if (rc != 0) {
			eng_op_unstage(eng, op);
			if (rc != -ENOMEM)
				eng->tx.stats.read_faults++;
			ptl_op_sent(node->nic, op->msg_id,
				    rc == -ENOMEM ? SPINNIC_PTL_NI_DROPPED :
						    SPINNIC_PTL_NI_SEGV);
			op->active = false;
			return 0;
		}
	}
	/* several packets from outside the region: one read for a batch */
	if (op->pay == NULL && op->stage == NULL && budget > 1 &&
	    !(cmd->flags & SPINNIC_CMD_F_INLINE) &&
	    !(cmd->md_options & SPINNIC_PTL_IOVEC) &&
	    cmd->length - op->off > node->payload &&
	    ptl_host_ptr(op->c, cmd->local_addr + op->off,
			 cmd->length - op->off) == NULL) {
		n = put_batch(eng, op, budget, &fallback);
		if (!fallback)
			return n;
	}
	while (n < budget && rel_tx_room(eng, cmd->target.nid)) {
		uint32_t len = (uint32_t)RTE_MIN(cmd->length - op->off,
						 (uint64_t)node->payload);
		/* SEND once every packet is acknowledged */
		struct rel_src src = {
			.send_id = op->off + len == cmd->length ? op->msg_id : 0,
		};
		struct rte_mbuf *m = put_packet(eng, op, len, &src, &rc);

		if (m == NULL && rc == -ENOBUFS) {
			eng->tx.stats.no_mbuf++;
			break;
		}
		if (m == NULL) {
			/* the MD's memory went away: the put fails here */
			eng->tx.stats.read_faults++;
			ptl_op_sent(node->nic, op->msg_id, SPINNIC_PTL_NI_SEGV);
			op->active = false;
			eng_op_unstage(eng, op);
			break;
		}
		if (rel_tx_send(eng, m, cmd->target.nid, &src) != 0) {
			if (op->pay != NULL)
				/* headers are written again next time */
				op->pay[op->off / node->payload] = m;
			else
				rte_pktmbuf_free(m);
			break;
		}
		eng->tx.stats.data_pkts++;
		op->off += len;
		n++;
		if (op->off == cmd->length) {
			op->active = false;
			eng_op_unstage(eng, op);
			break;
		}
	}
	return n;
}

/* Start @p op if it is not, then build up to @p budget of its packets.
 * @return packets built */
static unsigned
op_progress(struct spinnic_engine *eng, struct out_op *op, bool client,
	    unsigned budget)
{
	if (!op->active && op_start(eng, op, client) != 0)
		return 0;
	if (op->cmd.op == SPINNIC_CMD_GET)
		return get_progress(eng, op);
	if (ptl_cmd_atomic(op->cmd.op))
		return atomic_progress(eng, op);
	return put_progress(eng, op, budget);
}

/* ---- the submit queue --------------------------------------------------- */

static void
sub_free(struct spinnic_engine *eng, struct out_sub *sub)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(sub->pay); i++)
		if (sub->pay[i] != NULL)
			rte_pktmbuf_free(sub->pay[i]);
	eng_op_unstage(eng, &sub->op);
	if (sub->op.c != NULL)
		ptl_client_put(sub->op.c);
	rte_mempool_put(eng->ops, sub);
}

/* Payload mbufs of @p sub, headroom left for the headers: the HPU copies
 * the handler's bytes, which do not outlive its call. */
static int
sub_copy(struct spinnic_node *node, struct out_sub *sub, const void *src,
	 uint64_t len)
{
	uint64_t off = 0;
	unsigned i = 0;

	do {
		uint32_t n = (uint32_t)RTE_MIN(len - off,
					       (uint64_t)node->payload);
		struct rte_mbuf *m = rte_pktmbuf_alloc(node->pool);
		char *d = m == NULL ? NULL :
			rte_pktmbuf_append(m, (uint16_t)(SPINNIC_WIRE_HDR_LEN +
							 n));

		if (d == NULL) {
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
		memcpy(d + SPINNIC_WIRE_HDR_LEN, (const uint8_t *)src + off, n);
		sub->pay[i++] = m;
		off += n;
	} while (off < len);
	sub->op.pay = sub->pay;
	return 0;
}

int
eng_submit(struct spinnic_engine *eng, struct ptl_client *c,
	   const struct ptl_cmd *cmd, const void *src)
{
	struct spinnic_node *node = eng->node;
	uint64_t npkts = cmd->length == 0 ? 1 :
		(cmd->length + node->payload - 1) / node->payload;
	struct out_sub *sub;
	void *obj;

	/* bytes to copy: a put that fits; else any command but streams */
	if (src != NULL ? cmd->op != SPINNIC_CMD_PUT || npkts > ENG_HPUT_PKTS :
			  ptl_cmd_sput(cmd->op))
		return -EINVAL;
	if (rte_mempool_get(eng->ops, &obj) != 0)
		return -ENOBUFS;
	sub = obj;
	memset(sub, 0, sizeof(*sub));
	sub->op.cmd = *cmd;
	sub->op.have_cmd = true;
	ptl_client_get(c);
	sub->op.c = c;
	if ((src != NULL && sub_copy(node, sub, src, cmd->length) != 0) ||
	    rte_ring_mp_enqueue(eng->submit, sub) != 0) {
		sub_free(eng, sub);
		return -ENOBUFS;
	}
	return 0;
}

/* Submitted operations, one at a time in order. @return packets built */
static unsigned
subs_poll(struct spinnic_engine *eng, unsigned budget)
{
	unsigned done = 0;
	void *obj;

	while (done < budget) {
		struct out_sub *sub = eng->tx.sub;

		if (sub == NULL) {
			if (rte_ring_sc_dequeue(eng->submit, &obj) != 0)
				break;
			sub = eng->tx.sub = obj;
		}
		if (sub->op.have_cmd && !ptl_client_alive(sub->op.c)) {
			eng->tx.stats.detach_drops++;
			sub->op.have_cmd = false;
		} else {
			done += op_progress(eng, &sub->op, false,
					    budget - done);
		}
		if (sub->op.active || sub->op.have_cmd)
			break; /* waits for room */
		eng->tx.sub = NULL;
		sub_free(eng, sub);
	}
	return done;
}

void
eng_commands_fini(struct spinnic_engine *eng)
{
	void *obj;

	if (eng->tx.sub != NULL)
		sub_free(eng, eng->tx.sub);
	eng->tx.sub = NULL;
	while (eng->submit != NULL && rte_ring_sc_dequeue(eng->submit, &obj) == 0)
		sub_free(eng, obj);
}

/* ---- clients' commands -------------------------------------------------- */

unsigned
eng_commands_poll(struct spinnic_engine *eng, unsigned budget)
{
	unsigned done, i;

	/* operations of the engine first, up to half the budget */
	done = subs_poll(eng, budget / 2);
	/* round-robin over clients, up to ENG_CMD_QUANTUM packets or
	 * commands each: a client's run of small operations goes out in one
	 * visit (one packet per round would make every operation wait for a
	 * whole lcore round: doc/NOTES.md "Commands per visit") */
	for (i = 0; i < SPINNIC_CLIENTS_MAX && done < budget; i++) {
		unsigned q = RTE_MIN(budget - done, ENG_CMD_QUANTUM);
		unsigned spent = 0, steps = 0;
		struct out_client *oc;

		eng->tx.rr_pid = (eng->tx.rr_pid + 1) % SPINNIC_CLIENTS_MAX;
		oc = &eng->tx.clients[eng->tx.rr_pid];
		if (oc->op.c == NULL)
			continue;
		do {
			if (!oc->op.active && !oc->op.have_cmd) {
				if (ptl_cmd_poll(oc->op.c, &oc->op.cmd, 1) == 0)
					break;
				eng->node->tx.cmds++;
				oc->op.have_cmd = true;
			}
			if (ptl_cmd_sput(oc->op.cmd.op)) {
				/* takes its own run of commands */
				spent += eng_sput_progress(eng, oc, q - spent);
				break;
			}
			spent += op_progress(eng, &oc->op, true, q - spent);
			/* on while the operation finished (not waiting for
			 * room, a buffer or the rest of its packets) */
		} while (!oc->op.active && !oc->op.have_cmd && spent < q &&
			 ++steps < q);
		done += spent;
	}
	return done;
}

void
eng_commands_peer_failed(struct spinnic_engine *eng, uint32_t dst_nid)
{
	unsigned pid;

	/* their operations are failed already: build nothing more of them */
	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
		struct out_op *op = &eng->tx.clients[pid].op;

		if (op->active && op->cmd.target.nid == dst_nid) {
			op->active = false;
			eng_op_unstage(eng, op);
		}
	}
	if (eng->tx.sub != NULL && eng->tx.sub->op.active &&
	    eng->tx.sub->op.cmd.target.nid == dst_nid) {
		eng->tx.sub->op.active = false;
		eng_op_unstage(eng, &eng->tx.sub->op);
	}
}

void
eng_commands_detach(struct spinnic_engine *eng, struct ptl_client *pc)
{
	unsigned pid;

	for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++)
		if (eng->tx.clients[pid].op.c == pc)
			eng_client_forget(eng, &eng->tx.clients[pid]);
	/* queued ones are dropped when they come up (client not alive) */
	if (eng->tx.sub != NULL && eng->tx.sub->op.c == pc) {
		if (eng->tx.sub->op.active || eng->tx.sub->op.have_cmd)
			eng->tx.stats.detach_drops++;
		sub_free(eng, eng->tx.sub);
		eng->tx.sub = NULL;
	}
}

/* Triggered operations that fired (lib/portals trig.c): started as the
 * engine's own, their bytes read from the MD when the packets are built. */
int
eng_originate(void *arg, struct ptl_client *c, const struct ptl_cmd *cmd)
{
	return eng_submit(arg, c, cmd, NULL);
}
