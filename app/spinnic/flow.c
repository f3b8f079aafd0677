/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rte_flow steering for mlx5 ports shared with the kernel (bifurcated
 * mode): ports.c isolates the port before configuring it and, once it is
 * started, adds one rule sending UDP to --udp-port to queue 0 (or RSS over
 * the RX queues). Main lcore, at startup. A port that refuses isolation is
 * an error, never a fall-back to all its traffic. doc/REAL-NIC.md §2.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

#include "spinnic.h"

/* DPDK 22.11's mlx5 PMD registers this driver name for PCI devices. */
#define MLX5_DRIVER "mlx5_pci"

static const char *
flow_error_msg(const struct rte_flow_error *err)
{
	if (err->message != NULL)
		return err->message;
	return "no message from the PMD";
}

/* The PMD's message, and the errno's text when it says something else. */
static const char *
flow_error_why(const struct rte_flow_error *err, int rc, char *buf,
	       size_t len)
{
	const char *msg = flow_error_msg(err);

	if (strcmp(msg, strerror(-rc)) == 0)
		snprintf(buf, len, "%s", msg);
	else
		snprintf(buf, len, "%s (%s)", msg, strerror(-rc));
	return buf;
}

int
spinnic_flow_isolate(struct spinnic_node *node, const char *driver)
{
	const struct spinnic_cfg *cfg = &node->sn->cfg;
	struct rte_flow_error err;
	char why[256];
	bool want;
	int rc;

	node->flow_isolated = false;
	want = cfg->flow_isolate == 1 ||
	       (cfg->flow_isolate < 0 && strcmp(driver, MLX5_DRIVER) == 0);
	if (!want)
		return 0;
	memset(&err, 0, sizeof(err));
	rc = rte_flow_isolate(node->port_id, 1, &err);
	if (rc != 0) {
		rc = rc < 0 ? rc : -EIO;
		SPINNIC_LOG(ERR, "port %u (%s): flow isolated mode refused: %s%s",
			    node->port_id, driver,
			    flow_error_why(&err, rc, why, sizeof(why)),
			    cfg->flow_isolate == 1 ?
			    "; this PMD cannot share the port: drop --flow-isolate" :
			    "; --no-flow-isolate takes the whole port");
		return rc;
	}
	node->flow_isolated = true;
	return 0;
}

int
spinnic_flow_start(struct spinnic_node *node)
{
	struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_udp udp_spec, udp_mask;
	struct rte_flow_item pattern[4];
	struct rte_flow_action_queue queue = { .index = SPINNIC_RXQ };
	struct rte_flow_action_rss rss;
	uint16_t queues[SPINNIC_RXQ_MAX];
	struct rte_flow_action actions[2];
	struct rte_flow_error err;
	const char *what;
	char action[48], why[256];
	uint16_t q;
	int rc;

	if (!node->flow_isolated)
		return 0;
	memset(&udp_spec, 0, sizeof(udp_spec));
	memset(&udp_mask, 0, sizeof(udp_mask));
	udp_spec.hdr.dst_port = rte_cpu_to_be_16(node->udp_port);
	udp_mask.hdr.dst_port = RTE_BE16(0xffff);
	memset(pattern, 0, sizeof(pattern));
	/* no spec: any Ethernet frame, any IPv4 header */
	pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
	pattern[2].spec = &udp_spec;
	pattern[2].mask = &udp_mask;
	pattern[3].type = RTE_FLOW_ITEM_TYPE_END;

	memset(actions, 0, sizeof(actions));
	if (node->nb_rxq > 1) {
		for (q = 0; q < node->nb_rxq; q++)
			queues[q] = q;
		memset(&rss, 0, sizeof(rss));
		rss.func = RTE_ETH_HASH_FUNCTION_DEFAULT;
		rss.level = 0;
		rss.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
		rss.queue_num = node->nb_rxq;
		rss.queue = queues;
		actions[0].type = RTE_FLOW_ACTION_TYPE_RSS;
		actions[0].conf = &rss;
		snprintf(action, sizeof(action), "rss over queues 0-%u",
			 node->nb_rxq - 1u);
	} else {
		actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
		actions[0].conf = &queue;
		snprintf(action, sizeof(action), "queue index %u", SPINNIC_RXQ);
	}
	actions[1].type = RTE_FLOW_ACTION_TYPE_END;

	memset(&err, 0, sizeof(err));
	what = "rte_flow_validate";
	rc = rte_flow_validate(node->port_id, &attr, pattern, actions, &err);
	if (rc == 0) {
		memset(&err, 0, sizeof(err));
		what = "rte_flow_create";
		node->flow = rte_flow_create(node->port_id, &attr, pattern,
					     actions, &err);
		if (node->flow == NULL)
			rc = rte_errno != 0 ? -rte_errno : -EIO;
	}
	if (rc != 0) {
		rc = rc < 0 ? rc : -EIO;
		SPINNIC_LOG(ERR, "port %u: flow rule 'ingress pattern eth / ipv4 / udp dst is %u / end actions %s / end' refused by %s: %s, error type %d",
			    node->port_id, node->udp_port, action, what,
			    flow_error_why(&err, rc, why, sizeof(why)),
			    (int)err.type);
		return rc;
	}
	SPINNIC_LOG(INFO, "port %u: flow isolated; rule: ingress pattern eth / ipv4 / udp dst is %u / end actions %s / end",
		    node->port_id, node->udp_port, action);
	return 0;
}

void
spinnic_flow_stop(struct spinnic_node *node)
{
	struct rte_flow_error err;

	if (node->flow == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if (rte_flow_destroy(node->port_id, node->flow, &err) != 0)
		SPINNIC_LOG(WARNING, "port %u: destroying the flow rule: %s",
			    node->port_id, flow_error_msg(&err));
	node->flow = NULL;
}
