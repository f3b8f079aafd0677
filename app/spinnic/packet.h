/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one packet builder (packet.c), and the header fields every packet
 * of an initiator's command carries (inline: per message; the kind flags
 * of wire.h's spinnic_wire_pkt_seg() follow per packet).
 */
#ifndef SPINNIC_PACKET_H
#define SPINNIC_PACKET_H

#include <stdint.h>
#include <string.h>

#include "ptl_nic.h"
#include "wire.h"

struct rte_mbuf;
struct spinnic_node;

/**
 * Build the headers of a packet of @p node into a fresh mbuf with room for
 * p->pay_len payload bytes after them.
 * @param pay_p if not NULL, receives where the payload goes
 * @return the mbuf, or NULL when the pool is empty
 */
struct rte_mbuf *eng_build(struct spinnic_node *node,
			   const struct spinnic_pkt *p, uint8_t **pay_p);
/**
 * Write the headers of packet @p p into the first SPINNIC_WIRE_HDR_LEN
 * bytes of @p m, whose data is exactly headers + p->pay_len payload bytes
 * (written by whoever made the mbuf).
 * @return 0, -EINVAL (the mbuf's length or a field is wrong)
 */
int eng_build_into(struct spinnic_node *node, const struct spinnic_pkt *p,
		   struct rte_mbuf *m);
/** Destination nid of a built frame, UINT32_MAX when it has none. */
uint32_t eng_frame_dst_nid(const struct rte_mbuf *m);

/**
 * Start the packets of command @p cmd: a put's DATA packets (a get
 * request sets type and op itself); offset, pay_len and flags follow per
 * packet (spinnic_wire_pkt_seg()).
 * @param cmd    the command (PUT, GET or a streaming put's)
 * @param src    the initiator
 * @param msg_id the operation's message id
 * @param p_p    filled, every other field zero
 */
static inline void
eng_pkt_from_cmd(const struct ptl_cmd *cmd, struct spinnic_pid src,
		 uint64_t msg_id, struct spinnic_pkt *p_p)
{
	memset(p_p, 0, sizeof(*p_p));
	p_p->type = SPINNIC_WIRE_T_DATA;
	p_p->op = SPINNIC_WIRE_OP_PUT;
	p_p->ni = cmd->ni_kind;
	p_p->ack_req = cmd->ack_req;
	p_p->src = src;
	p_p->dst = cmd->target;
	p_p->pt_index = cmd->pt_index;
	p_p->uid = cmd->uid;
	p_p->match_bits = cmd->match_bits;
	p_p->hdr_data = cmd->hdr_data;
	p_p->msg_id = msg_id;
	p_p->msg_len = cmd->length;
	p_p->remote_offset = cmd->remote_offset;
}

#endif
