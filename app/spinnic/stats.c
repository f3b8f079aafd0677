/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters: per node (port, engines, Portals, sPIN runtime, control) and
 * per lcore, printed every --stats-interval and at exit. Reads are
 * relaxed: every counter has one writer.
 */
#include <inttypes.h>
#include <stdio.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "spinnic.h"
#include "auth.h"
#include "ptl_nic.h"
#include "spin_rt.h"
#include "wire.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * What clients still hold on this node: all zero once every client
 * detached and every in-flight reference went (leak check at exit).
 */
static void
live_print(struct spinnic_node *node, FILE *f)
{
	struct spin_nicmem_stats nm = { 0 };
	struct ptl_nic_stats ps = { 0 };
	struct spin_rt_stats rs = { 0 };

	if (node->nic != NULL)
		ptl_nic_stats_get(node->nic, &ps);
	if (node->rt != NULL) {
		spin_rt_nicmem_stats(node->rt, &nm);
		spin_rt_stats(node->rt, &rs);
	}
	fprintf(f, "  live: clients_live %" PRIu64 " regions_live %" PRIu64 " region_bytes %" PRIu64 " mes_live %" PRIu64 " nic_mem_used %" PRIu64 " ctxs_live %u blobs_live %u mbufs_in_use %u aa_logs_live %" PRIu64 "\n",
		ps.clients_live, ps.regions_live, ps.region_bytes,
		ps.mes_live, nm.used, rs.ctxs_live, rs.blobs_live,
		node->pool != NULL ? rte_mempool_in_use_count(node->pool) : 0,
		ps.aa_logs_live);
}

static void
node_print(struct spinnic_node *node, FILE *f)
{
	const struct spinnic_rx_stats *rx = &node->rx;
	const struct spinnic_tx_stats *tx = &node->tx;
	const struct spinnic_ctrl_stats *cs = &node->ctrl;
	struct rte_eth_stats es;
	unsigned i;

	fprintf(f, "node %u (nid %" PRIu32 ", port %u):\n", node->index,
		node->nid, node->port_id);
	fprintf(f, "  rx: pkts %" PRIu64 " bytes %" PRIu64 " drops %" PRIu64 " matches %" PRIu64 " no_match %" PRIu64 " hers %" PRIu64 " her_full %" PRIu64 " msgs_done %" PRIu64 " detach_drops %" PRIu64 " faults %" PRIu64 "\n",
		LD(rx->pkts), LD(rx->bytes), LD(rx->drops), LD(rx->matches),
		LD(rx->no_match), LD(rx->hers), LD(rx->her_full),
		LD(rx->msgs_done), LD(rx->detach_drops), LD(rx->faults));
	for (i = 0; i < SPINNIC_RX_DROP_MAX; i++) {
		uint64_t v = LD(rx->drop[i]);

		if (v == 0)
			continue;
		if (i < SPINNIC_WIRE_DROP_COUNT)
			fprintf(f, "    drop %s %" PRIu64 "\n",
				spinnic_wire_drop_name(
					-(int)(SPINNIC_WIRE_DROP_BASE + i)),
				v);
		else
			fprintf(f, "    drop engine%u %" PRIu64 "\n", i, v);
	}
	fprintf(f, "  tx: pkts %" PRIu64 " bytes %" PRIu64 " full %" PRIu64 " cmds %" PRIu64 " bad_cmds %" PRIu64 " retransmits %" PRIu64 " loopback %" PRIu64 "\n",
		LD(tx->pkts), LD(tx->bytes), LD(tx->full), LD(tx->cmds),
		LD(tx->bad_cmds), LD(tx->retransmits), LD(tx->loopback));
	if (node->auth != NULL)
		fprintf(f, "  auth: sealed %" PRIu64 " seal_failed %" PRIu64 "\n",
			LD(node->auth->sealed), LD(node->auth->seal_failed));
	fprintf(f, "  ctrl: clients %" PRIu64 " attaches %" PRIu64 " detaches %" PRIu64 " msgs %" PRIu64 " bad_msgs %" PRIu64 " errors %" PRIu64 " uid_denied %" PRIu64 " orphaned %" PRIu64 " region_refused %" PRIu64 "\n",
		LD(cs->clients), LD(cs->attaches), LD(cs->detaches),
		LD(cs->msgs), LD(cs->bad_msgs), LD(cs->errors),
		LD(cs->uid_denied), LD(cs->orphaned), LD(cs->region_refused));
	fprintf(f, "  ctrl: batches %" PRIu64 " batch_recs %" PRIu64 " batch_refused %" PRIu64 " batch_rollbacks %" PRIu64 " batch_undo_failed %" PRIu64 "\n",
		LD(cs->batches), LD(cs->batch_recs), LD(cs->batch_refused),
		LD(cs->batch_rollbacks), LD(cs->batch_undo_failed));
	live_print(node, f);
	if (rte_eth_stats_get(node->port_id, &es) == 0)
		fprintf(f, "  port: ipackets %" PRIu64 " opackets %" PRIu64 " imissed %" PRIu64 " ierrors %" PRIu64 " oerrors %" PRIu64 " rx_nombuf %" PRIu64 "\n",
			es.ipackets, es.opackets, es.imissed, es.ierrors,
			es.oerrors, es.rx_nombuf);
	if (node->pool != NULL)
		fprintf(f, "  mbufs: in_use %u of %u\n",
			rte_mempool_in_use_count(node->pool),
			node->pool->size);
	if (node->nic != NULL) {
		struct ptl_nic_stats ps;
		const uint64_t *v = (const uint64_t *)&ps;
		const char *name;
		int col = 0;

		ptl_nic_stats_get(node->nic, &ps);
		fprintf(f, "  portals:");
		for (i = 0; (name = ptl_nic_stats_name(i)) != NULL &&
		     i < sizeof(ps) / sizeof(uint64_t); i++) {
			if (v[i] == 0)
				continue;
			if (col++ % 6 == 0)
				fprintf(f, "\n   ");
			fprintf(f, " %s %" PRIu64, name, v[i]);
		}
		fprintf(f, col == 0 ? " (all zero)\n" : "\n");
	}
	if (node->rt != NULL)
		spin_rt_stats_print(node->rt, f);
	if (node->eng != NULL)
		spinnic_engine_stats_print(node, f);
	/* last: counter names above stay the first of their node */
	if (node->rt != NULL)
		spin_rt_handler_stats_print(node->rt, f);
}

void
spinnic_stats_print(struct spinnic *sn, FILE *f)
{
	uint64_t hz = rte_get_tsc_hz();
	unsigned i, lcore;

	fprintf(f, "--- spinnic counters (%.1f s) ---\n",
		hz != 0 ? (double)(rte_rdtsc() - sn->start_tsc) / (double)hz :
		0.0);
	for (i = 0; i < sn->nb_nodes; i++)
		node_print(sn->nodes[i], f);
	RTE_LCORE_FOREACH(lcore) {
		const struct spinnic_lcore *lc = &sn->lcores[lcore];

		fprintf(f, "lcore %u: tasks %u rounds %" PRIu64 " work %" PRIu64 " idle_rounds %" PRIu64 " sleeps %" PRIu64 "\n",
			lcore, lc->nb_tasks, LD(lc->rounds), LD(lc->work),
			LD(lc->idle_rounds), LD(lc->sleeps));
	}
}

void
spinnic_client_stats_reset(struct spinnic_node *node, uint32_t pid)
{
	struct spinnic_client_stats *cs;

	if (pid >= SPINNIC_CLIENTS_MAX)
		return;
	cs = &node->cl_stats[pid];
	__atomic_store_n(&cs->msgs_in, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->bytes_in, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->ops_out, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->bytes_out, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->bad_msgs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->nic_timed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->nic_ns_sum, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&cs->nic_ns_max, 0, __ATOMIC_RELAXED);
}
