/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one packet builder: a struct spinnic_pkt -> an mbuf with every
 * header, room for its payload after them. Called by whoever makes
 * packets (commands, streams, replies, reliable delivery, acks), on the
 * inbound, outbound and HPU lcores; it writes nothing of the engine.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "engine.h"
#include "packet.h"

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

int
eng_build_into(struct spinnic_node *node, const struct spinnic_pkt *p,
	       struct rte_mbuf *m)
{
	struct spinnic_wire_addr a;
	uint32_t len = rte_pktmbuf_data_len(m);
	int rc;

	if (len != SPINNIC_WIRE_HDR_LEN + (uint64_t)p->pay_len)
		return -EINVAL;
	spinnic_wire_addr_nodes(node->nid, p->dst.nid, node->udp_port, &a);
	rc = spinnic_wire_build(rte_pktmbuf_mtod(m, void *), len, &a, p);
	if (rc < 0) {
		SPINNIC_LOG(ERR, "node %u: wire build: %s", node->index,
			    strerror(-rc));
		return rc;
	}
	return 0;
}

struct rte_mbuf *
eng_build(struct spinnic_node *node, const struct spinnic_pkt *p,
	  uint8_t **pay_p)
{
	size_t len = SPINNIC_WIRE_HDR_LEN + p->pay_len;
	struct rte_mbuf *m;
	char *f;

	if (len > UINT16_MAX)
		return NULL;
	m = rte_pktmbuf_alloc(node->pool);
	if (m == NULL)
		return NULL;
	f = rte_pktmbuf_append(m, (uint16_t)len);
	if (f == NULL || eng_build_into(node, p, m) != 0) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	if (pay_p != NULL)
		*pay_p = (uint8_t *)f + SPINNIC_WIRE_HDR_LEN;
	return m;
}
