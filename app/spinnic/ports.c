/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: one node per port. --virtual N builds a software switch out of
 * ring-backed ports (rte_eth_from_rings): node j's RX queue is ring j; every
 * port has N TX queues, TX queue j enqueues into ring j. So every node
 * reaches every node by picking the TX queue (spinnic_node_txq()), with
 * N = 2 being the crossed pair of the design. Rings are multi-producer:
 * all ports' TX queue j feed ring j.
 *
 * Otherwise every ethdev the EAL probed (-a, --vdev) is a node with one RX
 * and one TX queue.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "spinnic.h"

#define POOL_CACHE 256u
/* Staging ring of packets built off the outbound lcore (acks, replies). */
#define TXR_SIZE 2048u

/* Rings behind the virtual ports, owned here. */
static struct rte_ring *virt_rings[SPINNIC_NODES_MAX];

static unsigned
pool_size(const struct spinnic_cfg *cfg, unsigned nb_txq)
{
	unsigned n;

	if (cfg->nb_mbufs != 0)
		return cfg->nb_mbufs;
	/* packets parked in the RX ring (a switch ring holds 2 x ring_size;
	 * a real port's RX + TX descriptors as much) + staging ring + HERs
	 * holding packets in place + per-lcore caches (up to 1.5 x size) +
	 * bursts in hand */
	(void)nb_txq;
	n = 2 * cfg->ring_size + TXR_SIZE + SPINNIC_MAX_HERS +
		POOL_CACHE * 3 / 2 * (rte_lcore_count() + 1) + 1024;
	return n;
}

static int
node_pool_create(struct spinnic *sn, struct spinnic_node *node)
{
	const struct spinnic_cfg *cfg = &sn->cfg;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned data_room, n;

	data_room = RTE_PKTMBUF_HEADROOM + SPINNIC_HDR_ROOM + cfg->payload;
	data_room = RTE_ALIGN_CEIL(data_room, RTE_CACHE_LINE_SIZE);
	if (data_room > UINT16_MAX)
		data_room = UINT16_MAX;
	n = pool_size(cfg, node->nb_txq);
	snprintf(name, sizeof(name), "spinnic_pool%u", node->index);
	node->pool = rte_pktmbuf_pool_create(name, n, POOL_CACHE, 0,
					     (uint16_t)data_room,
					     (int)rte_socket_id());
	if (node->pool == NULL) {
		SPINNIC_LOG(ERR, "node %u: mbuf pool of %u x %u bytes: %s",
			    node->index, n, data_room,
			    rte_strerror(rte_errno));
		return -rte_errno;
	}
	node->mbuf_data_room = (uint16_t)data_room;

	snprintf(name, sizeof(name), "spinnic_txr%u", node->index);
	node->txr = rte_ring_create(name, TXR_SIZE, (int)rte_socket_id(),
				    RING_F_SC_DEQ);
	if (node->txr == NULL) {
		SPINNIC_LOG(ERR, "node %u: TX staging ring: %s", node->index,
			    rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

/* Configure, set up queues and start the port of @p node. */
static int
node_port_start(struct spinnic *sn, struct spinnic_node *node)
{
	const struct spinnic_cfg *cfg = &sn->cfg;
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = (uint16_t)cfg->ring_size;
	uint16_t nb_txd = (uint16_t)cfg->ring_size;
	uint16_t port = node->port_id;
	uint32_t frame;
	uint16_t q;
	int rc;

	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u: device info: %s", port,
			    rte_strerror(-rc));
		return rc;
	}
	frame = SPINNIC_HDR_ROOM + cfg->payload;
	if (info.max_rx_pktlen != 0 && info.max_rx_pktlen < frame)
		SPINNIC_LOG(WARNING, "port %u (%s): frames up to %u bytes but --payload %u needs %u: lower --payload",
			    port, info.driver_name, info.max_rx_pktlen,
			    cfg->payload, frame);
	memset(&conf, 0, sizeof(conf));
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	rc = rte_eth_dev_configure(port, 1, node->nb_txq, &conf);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u (%s): configure 1 RX, %u TX queues: %s",
			    port, info.driver_name, node->nb_txq,
			    rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u: descriptors: %s", port,
			    rte_strerror(-rc));
		return rc;
	}
	if (!node->is_virtual) {
		/* best effort: frames of headers + payload */
		uint32_t mtu = frame - RTE_ETHER_HDR_LEN;

		if (info.max_mtu >= mtu && info.min_mtu <= mtu) {
			rc = rte_eth_dev_set_mtu(port, (uint16_t)mtu);
			if (rc != 0)
				SPINNIC_LOG(WARNING, "port %u: MTU %u: %s",
					    port, mtu, rte_strerror(-rc));
		}
	}
	rc = rte_eth_rx_queue_setup(port, SPINNIC_RXQ, nb_rxd,
				    rte_eth_dev_socket_id(port), NULL,
				    node->pool);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u: RX queue: %s", port,
			    rte_strerror(-rc));
		return rc;
	}
	for (q = 0; q < node->nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(port, q, nb_txd,
					    rte_eth_dev_socket_id(port), NULL);
		if (rc != 0) {
			SPINNIC_LOG(ERR, "port %u: TX queue %u: %s", port, q,
				    rte_strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(port);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u: start: %s", port,
			    rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_promiscuous_enable(port);
	if (rc != 0 && rc != -ENOTSUP)
		SPINNIC_LOG(WARNING, "port %u: promiscuous mode: %s", port,
			    rte_strerror(-rc));
	rc = rte_eth_macaddr_get(port, &node->mac);
	if (rc != 0)
		memset(&node->mac, 0, sizeof(node->mac));
	SPINNIC_LOG(INFO, "node %u: nid %" PRIu32 " port %u (%s) MAC " RTE_ETHER_ADDR_PRT_FMT " %u TX queue(s), pool %u mbufs of %u bytes",
		    node->index, node->nid, port, info.driver_name,
		    RTE_ETHER_ADDR_BYTES(&node->mac), node->nb_txq,
		    node->pool->size, node->mbuf_data_room);
	return 0;
}

static struct spinnic_node *
node_new(struct spinnic *sn, unsigned index, uint16_t port, bool virt,
	 uint16_t nb_txq)
{
	struct spinnic_node *node;

	node = rte_zmalloc_socket("spinnic_node", sizeof(*node),
				  RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	if (node == NULL) {
		SPINNIC_LOG(ERR, "node %u: out of memory", index);
		return NULL;
	}
	node->sn = sn;
	node->index = index;
	node->nid = sn->cfg.nid_base + index;
	node->port_id = port;
	node->is_virtual = virt;
	node->nb_txq = nb_txq;
	node->payload = sn->cfg.payload;
	node->udp_port = sn->cfg.udp_port;
	sn->nodes[index] = node;
	sn->nb_nodes = index + 1;
	return node;
}

static int
virtual_ports_init(struct spinnic *sn)
{
	unsigned n = sn->cfg.virtual_nodes, i;
	char name[RTE_RING_NAMESIZE];
	int port, rc;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "spinnic_vring%u", i);
		/* MP enqueue: every port's TX queue i; SC: node i's RX */
		virt_rings[i] = rte_ring_create(name, sn->cfg.ring_size * 2,
						(int)rte_socket_id(),
						RING_F_SC_DEQ);
		if (virt_rings[i] == NULL) {
			SPINNIC_LOG(ERR, "virtual ring %u: %s", i,
				    rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	for (i = 0; i < n; i++) {
		struct spinnic_node *node;

		snprintf(name, sizeof(name), "net_spinnic%u", i);
		port = rte_eth_from_rings(name, &virt_rings[i], 1, virt_rings,
					  n, rte_socket_id());
		if (port < 0) {
			SPINNIC_LOG(ERR, "virtual port %u: %s", i,
				    rte_strerror(rte_errno));
			return -rte_errno;
		}
		node = node_new(sn, i, (uint16_t)port, true, (uint16_t)n);
		if (node == NULL)
			return -ENOMEM;
		rc = node_pool_create(sn, node);
		if (rc == 0)
			rc = node_port_start(sn, node);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
real_ports_init(struct spinnic *sn)
{
	uint16_t port;
	unsigned i = 0;
	int rc;

	RTE_ETH_FOREACH_DEV(port) {
		struct spinnic_node *node;

		if (i == SPINNIC_NODES_MAX) {
			SPINNIC_LOG(ERR, "more than %u ports probed",
				    SPINNIC_NODES_MAX);
			return -E2BIG;
		}
		node = node_new(sn, i, port, false, 1);
		if (node == NULL)
			return -ENOMEM;
		rc = node_pool_create(sn, node);
		if (rc == 0)
			rc = node_port_start(sn, node);
		if (rc != 0)
			return rc;
		i++;
	}
	if (i == 0) {
		SPINNIC_LOG(ERR, "no ports: give the EAL a device (-a PCI, --vdev net_memif0, ...) or use --virtual N");
		return -ENODEV;
	}
	return 0;
}

int
spinnic_ports_init(struct spinnic *sn)
{
	if (sn->cfg.virtual_nodes > 0) {
		if (rte_eth_dev_count_avail() != 0) {
			SPINNIC_LOG(ERR, "--virtual and probed ports (-a, --vdev) exclude each other");
			return -EINVAL;
		}
		return virtual_ports_init(sn);
	}
	return real_ports_init(sn);
}

void
spinnic_ports_fini(struct spinnic *sn)
{
	unsigned i;

	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		int rc;

		if (node == NULL)
			continue;
		rc = rte_eth_dev_stop(node->port_id);
		if (rc != 0 && rc != -ENOTSUP)
			SPINNIC_LOG(WARNING, "port %u: stop: %s",
				    node->port_id, rte_strerror(-rc));
		rte_eth_dev_close(node->port_id);
	}
	/* packets still parked in the switch or staging rings */
	for (i = 0; i < SPINNIC_NODES_MAX; i++) {
		struct rte_mbuf *m;

		if (virt_rings[i] == NULL)
			continue;
		while (rte_ring_dequeue(virt_rings[i], (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(virt_rings[i]);
		virt_rings[i] = NULL;
	}
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		struct rte_mbuf *m;

		if (node == NULL)
			continue;
		if (node->txr != NULL) {
			while (rte_ring_dequeue(node->txr, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(node->txr);
		}
	}
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if (node == NULL)
			continue;
		if (node->pool != NULL &&
		    rte_mempool_in_use_count(node->pool) != 0)
			SPINNIC_LOG(WARNING, "node %u: %u mbufs not returned to the pool",
				    node->index,
				    rte_mempool_in_use_count(node->pool));
		rte_mempool_free(node->pool);
		rte_free(node);
		sn->nodes[i] = NULL;
	}
	sn->nb_nodes = 0;
}
