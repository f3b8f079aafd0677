/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports, one node each, set up and torn down by main.c (main lcore):
 * --virtual N builds a software switch of ring-backed ports (node j's RX
 * queue is ring j, TX queue j of every port feeds it: spinnic_node_txq());
 * otherwise every probed ethdev is a node, polled by its inbound role.
 * Ports shared with the kernel (af_xdp's spinnic_cfg map, mlx5 flow
 * isolation via flow.c, --xdp-reset): doc/REAL-NIC.md. Virtual nodes:
 * app/spinnic/README.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#ifdef SPINNIC_HAVE_LIBBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#endif

#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "spinnic.h"
#include "wire.h"

#define POOL_CACHE 256u
/* Staging ring of packets built off the outbound lcore (acks, replies). */
#define TXR_SIZE 2048u
/* frames of a real port's node to itself (node->loop) */
#define LOOP_SIZE 1024u
/* What the XDP program and its config map are called (bpf/spinnic_xdp.c). */
#define XDP_PROG_NAME "spinnic_xdp"
#define XDP_CFG_MAP "spinnic_cfg"
/*
 * XDP_PACKET_HEADROOM: the af_xdp PMD makes the mbufs of the pool its umem
 * and the kernel writes a frame this far past the mbuf headroom, so the
 * data room needs it on top, or every full-size frame is dropped (counted
 * as port imissed).
 */
#define AFXDP_HEADROOM 256u

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
	n = (1 + cfg->rx_queues) * cfg->ring_size + TXR_SIZE + SPINNIC_MAX_HERS +
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
	if (!node->is_virtual) {
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(node->port_id, &info) == 0 &&
		    strcmp(info.driver_name, "net_af_xdp") == 0)
			data_room += AFXDP_HEADROOM;
	}
	data_room = RTE_ALIGN_CEIL(data_room, RTE_CACHE_LINE_SIZE);
	if (data_room > UINT16_MAX)
		data_room = UINT16_MAX;
	n = pool_size(cfg, node->nb_txq) +
	    (node->is_virtual ? 0 : LOOP_SIZE);
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
	if (!node->is_virtual) {
		/* one producer (the outbound role), one consumer (inbound) */
		snprintf(name, sizeof(name), "spinnic_loop%u", node->index);
		node->loop = rte_ring_create(name, LOOP_SIZE,
					     (int)rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (node->loop == NULL) {
			SPINNIC_LOG(ERR, "node %u: loopback ring: %s",
				    node->index, rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	return 0;
}

/* ---- af_xdp ports ---------------------------------------------------------- */

/*
 * RX channels of netdev @p ifname (ETHTOOL_GCHANNELS: combined + rx-only),
 * or a negative errno: drivers without get_channels say -EOPNOTSUPP.
 */
static int
netdev_rx_channels(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) != 0)
		rc = -errno;
	close(fd);
	if (rc != 0)
		return rc;
	return (int)(ch.combined_count + ch.rx_count);
}

#ifdef SPINNIC_HAVE_LIBBPF
/* Name of BPF program @p id into @p name (16 bytes); 0 or -errno. */
static int
xdp_prog_name(uint32_t id, char name[BPF_OBJ_NAME_LEN])
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd, rc;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (rc != 0)
		rc = -errno;
	else
		snprintf(name, BPF_OBJ_NAME_LEN, "%s", info.name);
	close(fd);
	return rc;
}

int
spinnic_xdp_reset(const struct spinnic_cfg *cfg)
{
	static const struct {
		uint32_t flag;
		const char *mode;
	} modes[] = {
		{ XDP_FLAGS_SKB_MODE, "generic" },
		{ XDP_FLAGS_DRV_MODE, "driver" },
		{ XDP_FLAGS_HW_MODE, "offload" },
	};
	unsigned i, m;

	for (i = 0; i < cfg->nb_xdp_reset; i++) {
		const char *ifc = cfg->xdp_reset[i];
		unsigned ifindex = if_nametoindex(ifc);
		unsigned detached = 0;
		int rc;

		if (ifindex == 0) {
			fprintf(stderr, "spinnic: --xdp-reset %s: no such interface (%s)\n",
				ifc, strerror(errno));
			return -ENODEV;
		}
		for (m = 0; m < RTE_DIM(modes); m++) {
			LIBBPF_OPTS(bpf_xdp_query_opts, q);
			char name[BPF_OBJ_NAME_LEN] = "?";
			uint32_t id;

			rc = bpf_xdp_query(ifindex, (int)modes[m].flag, &q);
			if (rc != 0) {
				fprintf(stderr, "spinnic: --xdp-reset %s: XDP query: %s\n",
					ifc, strerror(-rc));
				return rc;
			}
			id = modes[m].flag == XDP_FLAGS_SKB_MODE ? q.skb_prog_id :
			     modes[m].flag == XDP_FLAGS_DRV_MODE ? q.drv_prog_id :
			     q.hw_prog_id;
			if (id == 0)
				continue;
			(void)xdp_prog_name(id, name);
			rc = bpf_xdp_detach((int)ifindex, (int)modes[m].flag,
					    NULL);
			if (rc != 0) {
				fprintf(stderr, "spinnic: --xdp-reset %s: detaching XDP program id %u (%s, %s mode): %s\n",
					ifc, id, name, modes[m].mode,
					strerror(-rc));
				return rc;
			}
			fprintf(stderr, "spinnic: --xdp-reset %s: detached XDP program id %u (%s, %s mode)%s\n",
				ifc, id, name, modes[m].mode,
				strcmp(name, XDP_PROG_NAME) == 0 ? "" :
				": it was not spinnic's");
			detached++;
		}
		{
			LIBBPF_OPTS(bpf_xdp_query_opts, q);

			rc = bpf_xdp_query(ifindex, 0, &q);
			if (rc == 0 && q.attach_mode != XDP_ATTACHED_NONE) {
				fprintf(stderr, "spinnic: --xdp-reset %s: an XDP program is still attached (prog id %u)\n",
					ifc, q.prog_id);
				return -EBUSY;
			}
		}
		if (detached == 0)
			fprintf(stderr, "spinnic: --xdp-reset %s: no XDP program attached\n",
				ifc);
	}
	return 0;
}

/*
 * Write the UDP port into the spinnic_cfg map of the XDP program attached
 * to @p ifindex. @return 0, -ENOENT when the program there is not
 * spinnic's (name in @p name), or another negative errno.
 */
static int
xdp_port_set(unsigned ifindex, uint16_t udp_port, uint32_t *prog_id_p,
	     char name[BPF_OBJ_NAME_LEN])
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info pinfo;
	uint32_t map_ids[64], len, id, i, nb_maps;
	int pfd, rc;

	name[0] = '\0';
	rc = bpf_xdp_query((int)ifindex, 0, &q);
	if (rc != 0)
		return rc;
	/* one mode attached: prog_id; several (never by the PMD): driver's */
	id = q.prog_id != 0 ? q.prog_id : q.drv_prog_id != 0 ? q.drv_prog_id :
	     q.skb_prog_id;
	*prog_id_p = id;
	if (id == 0)
		return -ENOENT;
	pfd = bpf_prog_get_fd_by_id(id);
	if (pfd < 0)
		return -errno;
	memset(&pinfo, 0, sizeof(pinfo));
	len = sizeof(pinfo);
	if (bpf_obj_get_info_by_fd(pfd, &pinfo, &len) != 0) {
		rc = -errno;
		goto out;
	}
	snprintf(name, BPF_OBJ_NAME_LEN, "%s", pinfo.name);
	if (strcmp(pinfo.name, XDP_PROG_NAME) != 0) {
		rc = -ENOENT;
		goto out;
	}
	nb_maps = RTE_MIN(pinfo.nr_map_ids, (uint32_t)RTE_DIM(map_ids));
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.nr_map_ids = nb_maps;
	pinfo.map_ids = (uint64_t)(uintptr_t)map_ids;
	len = sizeof(pinfo);
	if (bpf_obj_get_info_by_fd(pfd, &pinfo, &len) != 0) {
		rc = -errno;
		goto out;
	}
	rc = -ENOENT;
	for (i = 0; i < RTE_MIN(pinfo.nr_map_ids, nb_maps); i++) {
		struct bpf_map_info minfo;
		uint32_t key = 0, val = udp_port, back = 0;
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);

		if (mfd < 0)
			continue;
		memset(&minfo, 0, sizeof(minfo));
		len = sizeof(minfo);
		if (bpf_obj_get_info_by_fd(mfd, &minfo, &len) == 0 &&
		    strcmp(minfo.name, XDP_CFG_MAP) == 0 &&
		    minfo.type == BPF_MAP_TYPE_ARRAY &&
		    minfo.key_size == 4 && minfo.value_size == 4) {
			if (bpf_map_update_elem(mfd, &key, &val, BPF_ANY) != 0 ||
			    bpf_map_lookup_elem(mfd, &key, &back) != 0)
				rc = -errno;
			else
				rc = back == val ? 0 : -EIO;
		}
		close(mfd);
		if (rc != -ENOENT)
			break;
	}
out:
	close(pfd);
	return rc;
}
#else
int
spinnic_xdp_reset(const struct spinnic_cfg *cfg)
{
	if (cfg->nb_xdp_reset == 0)
		return 0;
	fprintf(stderr, "spinnic: --xdp-reset %s: spinnic was built without libbpf (libbpf-dev); use tools/xdp-reset.sh\n",
		cfg->xdp_reset[0]);
	return -ENOTSUP;
}
#endif

/*
 * After start of a net_af_xdp port: point the XDP program at --udp-port
 * (spinnic_cfg key 0) and warn about netdev RX queues without a socket.
 */
static int
afxdp_port_setup(struct spinnic_node *node,
		 const struct rte_eth_dev_info *info)
{
	char ifname[IF_NAMESIZE];
	int ch;

	if (info->if_index == 0 || if_indextoname(info->if_index, ifname) == NULL) {
		SPINNIC_LOG(WARNING, "port %u (net_af_xdp): no interface index: XDP program and queues not checked",
			    node->port_id);
		return 0;
	}
#ifdef SPINNIC_HAVE_LIBBPF
	{
		char name[BPF_OBJ_NAME_LEN];
		uint32_t prog_id = 0;
		int rc = xdp_port_set(info->if_index, node->udp_port, &prog_id,
				      name);

		if (rc == 0) {
			SPINNIC_LOG(INFO, "port %u (net_af_xdp on %s): XDP program " XDP_PROG_NAME " id %u steers UDP port %u (" XDP_CFG_MAP "[0])",
				    node->port_id, ifname, prog_id,
				    node->udp_port);
		} else if (rc == -ENOENT && prog_id != 0 &&
			   strcmp(name, XDP_PROG_NAME) != 0) {
			SPINNIC_LOG(WARNING, "port %u (net_af_xdp on %s): the XDP program is '%s' (id %u), not " XDP_PROG_NAME ": give the PMD xdp_prog=<build>/bpf/spinnic_xdp.o, or the kernel loses this queue's traffic",
				    node->port_id, ifname, name, prog_id);
		} else if (node->udp_port != SPINNIC_WIRE_UDP_PORT) {
			/* the program keeps steering its built-in port */
			SPINNIC_LOG(ERR, "port %u (net_af_xdp on %s): cannot set --udp-port %u in the XDP program's " XDP_CFG_MAP " (prog id %u): %s",
				    node->port_id, ifname, node->udp_port,
				    prog_id, strerror(-rc));
			return rc;
		} else {
			SPINNIC_LOG(WARNING, "port %u (net_af_xdp on %s): XDP program's " XDP_CFG_MAP " not set (prog id %u): %s; it steers its built-in port",
				    node->port_id, ifname, prog_id,
				    strerror(-rc));
		}
	}
#else
	if (node->udp_port != SPINNIC_WIRE_UDP_PORT)
		SPINNIC_LOG(WARNING, "port %u (net_af_xdp on %s): built without libbpf: set --udp-port %u in the XDP program by hand (bpftool map update name " XDP_CFG_MAP " ..., doc/REAL-NIC.md)",
			    node->port_id, ifname, node->udp_port);
#endif
	ch = netdev_rx_channels(ifname);
	if (ch > (int)node->nb_rxq)
		SPINNIC_LOG(WARNING, "port %u (net_af_xdp on %s): the interface has %d RX queues, spinnic binds %u: spinnic packets RSS puts on another queue go to the kernel; steer UDP port %u to start_queue (ethtool -N %s flow-type udp4 dst-port %u action Q) or ethtool -L %s combined %u",
			    node->port_id, ifname, ch, node->nb_rxq,
			    node->udp_port, ifname, node->udp_port, ifname,
			    node->nb_rxq);
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
	node->nb_rxq = node->is_virtual ? 1 : (uint16_t)cfg->rx_queues;
	if (node->nb_rxq > info.max_rx_queues) {
		SPINNIC_LOG(ERR, "port %u (%s): --rx-queues %u but the port has at most %u RX queues%s",
			    port, info.driver_name, node->nb_rxq,
			    info.max_rx_queues,
			    strcmp(info.driver_name, "net_af_xdp") == 0 ?
			    " (af_xdp: raise the queue_count devarg)" : "");
		return -EINVAL;
	}
	if (node->nb_rxq > 1) {
		/* spread spinnic's UDP flows; an isolated port's rule
		 * (flow.c) names the same hash */
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP &
			info.flow_type_rss_offloads;
		if (conf.rx_adv_conf.rss_conf.rss_hf != 0)
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	}
	/* before configure: mlx5 takes isolation only on an idle port */
	rc = spinnic_flow_isolate(node, info.driver_name);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_configure(port, node->nb_rxq, node->nb_txq, &conf);
	if (rc != 0) {
		SPINNIC_LOG(ERR, "port %u (%s): configure %u RX, %u TX queues: %s",
			    port, info.driver_name, node->nb_rxq,
			    node->nb_txq, rte_strerror(-rc));
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
	for (q = 0; q < node->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nb_rxd,
					    rte_eth_dev_socket_id(port), NULL,
					    node->pool);
		if (rc != 0) {
			/* the PMD loads its XDP program here */
			SPINNIC_LOG(ERR, "port %u: RX queue %u: %s%s", port, q,
				    rte_strerror(-rc),
				    strcmp(info.driver_name, "net_af_xdp") == 0 ?
				    " (af_xdp: an XDP program already on the interface? --xdp-reset IFACE detaches it, doc/REAL-NIC.md)" :
				    "");
			return rc;
		}
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
	rc = spinnic_flow_start(node);
	if (rc != 0)
		return rc;
	if (strcmp(info.driver_name, "net_af_xdp") == 0) {
		rc = afxdp_port_setup(node, &info);
		if (rc != 0)
			return rc;
	}
	rc = rte_eth_macaddr_get(port, &node->mac);
	if (rc != 0)
		memset(&node->mac, 0, sizeof(node->mac));
	SPINNIC_LOG(INFO, "node %u: nid %" PRIu32 " port %u (%s) MAC " RTE_ETHER_ADDR_PRT_FMT " %u RX, %u TX queue(s)%s, pool %u mbufs of %u bytes",
		    node->index, node->nid, port, info.driver_name,
		    RTE_ETHER_ADDR_BYTES(&node->mac), node->nb_rxq,
		    node->nb_txq, node->flow_isolated ? ", flow isolated" : "",
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
		if (sn->cfg.rx_queues > 1) {
			SPINNIC_LOG(ERR, "--rx-queues %u: virtual nodes have one RX ring each; it applies to probed ports",
				    sn->cfg.rx_queues);
			return -EINVAL;
		}
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
	bool afxdp[SPINNIC_NODES_MAX] = { false };
	unsigned i;

	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		struct rte_eth_dev_info info;
		int rc;

		if (node == NULL)
			continue;
		afxdp[i] = !node->is_virtual &&
			rte_eth_dev_info_get(node->port_id, &info) == 0 &&
			strcmp(info.driver_name, "net_af_xdp") == 0;
		spinnic_flow_stop(node);
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
		if (node->loop != NULL) {
			while (rte_ring_dequeue(node->loop, (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(node->loop);
			node->loop = NULL;
		}
	}
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if (node == NULL)
			continue;
		if (node->pool != NULL && afxdp[i] &&
		    rte_mempool_in_use_count(node->pool) != 0)
			/* 22.11's PMD leaves the mbufs of its fill ring (the
			 * umem is the pool) when it closes: not ours */
			SPINNIC_LOG(INFO, "node %u: %u mbufs kept by the af_xdp PMD's fill ring at close",
				    node->index,
				    rte_mempool_in_use_count(node->pool));
		else if (node->pool != NULL &&
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
