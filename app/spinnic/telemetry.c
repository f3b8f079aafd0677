/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Telemetry (DESIGN §9): spinnic's counters and state as /spinnic/...
 * rte_telemetry commands (stats, hpus, clients, mes, handlers,
 * handler_trace, aa), registered by main.c. The callbacks run on the telemetry
 * library's threads, concurrently with every role: relaxed counter loads,
 * locked lib/portals and lib/spin calls, and a read-write lock that keeps
 * the nodes alive. Commands, reply keys, limits and capture:
 * app/spinnic/README.md, "Telemetry".
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "spinnic.h"
#include "auth.h"
#include "engine.h"
#include "ptl_nic.h"
#include "spin_rt.h"
#include "wire.h"

#define LD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* MEs per reply: up to ~550 bytes of JSON each, 16 KiB per reply. */
#define TEL_MES_MAX 24u
/* Families and contexts per reply of /spinnic/handlers (up to ~1.6 KiB
 * of JSON each with four handler kinds). */
#define TEL_HENTRY_MAX 9u
/* Trace entries per reply (~170 bytes each). */
#define TEL_TRACE_MAX 64u

static pthread_rwlock_t tel_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct spinnic *tel_sn;     /* NULL: not answering */
static bool tel_registered;

/* ---- parameters -------------------------------------------------------- */

/*
 * "A[,B[,C]]" into up to @p n unsigned values; missing ones stay
 * UINT_MAX ("all"). NULL or "" is no parameter.
 * @return 0, or -EINVAL for anything else
 */
static int
params_parse(const char *params, unsigned *v, unsigned n)
{
	const char *p = params;
	unsigned i;

	for (i = 0; i < n; i++)
		v[i] = UINT_MAX;
	if (p == NULL || *p == '\0')
		return 0;
	for (i = 0; i < n; i++) {
		unsigned long x;
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno != 0 || x >= UINT_MAX)
			return -EINVAL;
		v[i] = (unsigned)x;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
	return -EINVAL;
}

/* Take the lock and check @p node_sel: NULL when not answering. */
static struct spinnic *
tel_enter(unsigned node_sel)
{
	struct spinnic *sn;

	pthread_rwlock_rdlock(&tel_lock);
	sn = tel_sn;
	if (sn == NULL || (node_sel != UINT_MAX && node_sel >= sn->nb_nodes)) {
		pthread_rwlock_unlock(&tel_lock);
		return NULL;
	}
	return sn;
}

static void
tel_leave(void)
{
	pthread_rwlock_unlock(&tel_lock);
}

/* Add @p c to @p d under @p name (freed with it), or free it. */
static int
dict_add_container(struct rte_tel_data *d, const char *name,
		   struct rte_tel_data *c)
{
	int rc = rte_tel_data_add_dict_container(d, name, c, 0);

	if (rc != 0)
		rte_tel_data_free(c);
	return rc;
}

/* ---- /spinnic/stats ---------------------------------------------------- */

static void
node_stats(struct spinnic_node *node, struct rte_tel_data *d)
{
	const struct spinnic_rx_stats *rx = &node->rx;
	const struct spinnic_tx_stats *tx = &node->tx;
	const struct spinnic_ctrl_stats *cs = &node->ctrl;
	const struct spinnic_engine *eng = node->eng;
	char name[RTE_TEL_MAX_STRING_LEN];
	struct rte_eth_stats es;
	unsigned i;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "nid", node->nid);
	rte_tel_data_add_dict_u64(d, "port", node->port_id);
	rte_tel_data_add_dict_u64(d, "rx_pkts", LD(rx->pkts));
	rte_tel_data_add_dict_u64(d, "rx_bytes", LD(rx->bytes));
	rte_tel_data_add_dict_u64(d, "rx_drops", LD(rx->drops));
	/* drops by reason: the wire parser's, then the engine's */
	for (i = 0; i < SPINNIC_WIRE_DROP_COUNT && i < SPINNIC_RX_DROP_MAX;
	     i++) {
		snprintf(name, sizeof(name), "drop_%s",
			 spinnic_wire_drop_name(
				-(int)(SPINNIC_WIRE_DROP_BASE + i)));
		rte_tel_data_add_dict_u64(d, name, LD(rx->drop[i]));
	}
	for (i = 0; i < ENG_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(d, eng_drop_names[i],
					  eng != NULL ?
					  LD(eng->rx.stats.drop[i]) : 0);
	rte_tel_data_add_dict_u64(d, "matches", LD(rx->matches));
	rte_tel_data_add_dict_u64(d, "no_match", LD(rx->no_match));
	rte_tel_data_add_dict_u64(d, "hers", LD(rx->hers));
	rte_tel_data_add_dict_u64(d, "her_full", LD(rx->her_full));
	rte_tel_data_add_dict_u64(d, "msgs_in", LD(rx->msgs_done));
	rte_tel_data_add_dict_u64(d, "msgs_out", eng != NULL ?
				  LD(eng->tx.stats.puts) +
				  LD(eng->tx.stats.gets) : 0);
	rte_tel_data_add_dict_u64(d, "msgs_failed", eng != NULL ?
				  LD(eng->rx.stats.msgs_failed) : 0);
	rte_tel_data_add_dict_u64(d, "detach_drops", LD(rx->detach_drops));
	rte_tel_data_add_dict_u64(d, "faults", LD(rx->faults));
	rte_tel_data_add_dict_u64(d, "tx_pkts", LD(tx->pkts));
	rte_tel_data_add_dict_u64(d, "tx_bytes", LD(tx->bytes));
	rte_tel_data_add_dict_u64(d, "tx_full", LD(tx->full));
	rte_tel_data_add_dict_u64(d, "tx_cmds", LD(tx->cmds));
	rte_tel_data_add_dict_u64(d, "tx_bad_cmds", LD(tx->bad_cmds));
	rte_tel_data_add_dict_u64(d, "tx_retransmits", LD(tx->retransmits));
	rte_tel_data_add_dict_u64(d, "tx_loopback", LD(tx->loopback));
	/* --wire-key: frames sealed; refused ones are drop_auth/drop_unseq */
	rte_tel_data_add_dict_u64(d, "wire_auth", node->auth != NULL);
	rte_tel_data_add_dict_u64(d, "auth_sealed", node->auth != NULL ?
				  LD(node->auth->sealed) : 0);
	rte_tel_data_add_dict_u64(d, "auth_seal_failed", node->auth != NULL ?
				  LD(node->auth->seal_failed) : 0);
	rte_tel_data_add_dict_u64(d, "peer_fails", eng != NULL ?
				  LD(eng->tx.stats.peer_fails) : 0);
	rte_tel_data_add_dict_u64(d, "clients", LD(cs->clients));
	rte_tel_data_add_dict_u64(d, "attaches", LD(cs->attaches));
	rte_tel_data_add_dict_u64(d, "detaches", LD(cs->detaches));
	rte_tel_data_add_dict_u64(d, "ctrl_msgs", LD(cs->msgs));
	rte_tel_data_add_dict_u64(d, "ctrl_bad_msgs", LD(cs->bad_msgs));
	rte_tel_data_add_dict_u64(d, "ctrl_errors", LD(cs->errors));
	rte_tel_data_add_dict_u64(d, "ctrl_uid_denied", LD(cs->uid_denied));
	rte_tel_data_add_dict_u64(d, "ctrl_orphaned", LD(cs->orphaned));
	rte_tel_data_add_dict_u64(d, "ctrl_region_refused",
				  LD(cs->region_refused));
	rte_tel_data_add_dict_u64(d, "ctrl_batches", LD(cs->batches));
	rte_tel_data_add_dict_u64(d, "ctrl_batch_recs", LD(cs->batch_recs));
	rte_tel_data_add_dict_u64(d, "ctrl_batch_refused",
				  LD(cs->batch_refused));
	rte_tel_data_add_dict_u64(d, "ctrl_batch_rollbacks",
				  LD(cs->batch_rollbacks));
	rte_tel_data_add_dict_u64(d, "ctrl_batch_undo_failed",
				  LD(cs->batch_undo_failed));
	if (rte_eth_stats_get(node->port_id, &es) == 0) {
		rte_tel_data_add_dict_u64(d, "port_ipackets", es.ipackets);
		rte_tel_data_add_dict_u64(d, "port_opackets", es.opackets);
		rte_tel_data_add_dict_u64(d, "port_imissed", es.imissed);
		rte_tel_data_add_dict_u64(d, "port_ierrors", es.ierrors);
		rte_tel_data_add_dict_u64(d, "port_oerrors", es.oerrors);
		rte_tel_data_add_dict_u64(d, "port_rx_nombuf", es.rx_nombuf);
	}
	if (node->pool != NULL) {
		rte_tel_data_add_dict_u64(d, "mbufs_in_use",
			rte_mempool_in_use_count(node->pool));
		rte_tel_data_add_dict_u64(d, "mbufs_total", node->pool->size);
	}
	if (node->nic != NULL) {
		struct ptl_nic_stats ps;
		const uint64_t *v = (const uint64_t *)&ps;
		const char *pn;

		ptl_nic_stats_get(node->nic, &ps);
		for (i = 0; i < sizeof(ps) / sizeof(uint64_t) &&
		     (pn = ptl_nic_stats_name(i)) != NULL; i++) {
			snprintf(name, sizeof(name), "ptl_%s", pn);
			rte_tel_data_add_dict_u64(d, name, v[i]);
		}
	}
	if (node->rt != NULL) {
		struct spin_nicmem_stats nm;
		struct spin_rt_stats rs;

		spin_rt_stats(node->rt, &rs);
		spin_rt_nicmem_stats(node->rt, &nm);
		rte_tel_data_add_dict_u64(d, "spin_msgs_started",
					  rs.msgs_started);
		rte_tel_data_add_dict_u64(d, "spin_msgs_done", rs.msgs_done);
		rte_tel_data_add_dict_u64(d, "spin_msgs_aborted",
					  rs.msgs_aborted);
		rte_tel_data_add_dict_u64(d, "spin_msgs_live", rs.msgs_live);
		rte_tel_data_add_dict_u64(d, "spin_hers_live", rs.hers_live);
		rte_tel_data_add_dict_u64(d, "spin_msg_full", rs.msg_full);
		rte_tel_data_add_dict_u64(d, "spin_her_full", rs.her_full);
		rte_tel_data_add_dict_u64(d, "spin_contexts", rs.ctxs_live);
		rte_tel_data_add_dict_u64(d, "spin_blobs", rs.blobs_live);
		rte_tel_data_add_dict_u64(d, "nic_mem_used", nm.used);
		rte_tel_data_add_dict_u64(d, "nic_mem_total", nm.capacity);
		rte_tel_data_add_dict_u64(d, "nic_mem_largest_free",
					  nm.largest_free);
		rte_tel_data_add_dict_u64(d, "nic_mem_failures", nm.failures);
	}
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char name[32];
	struct spinnic *sn;
	unsigned sel, i;

	(void)cmd;
	if (params_parse(params, &sel, 1) != 0)
		return -EINVAL;
	sn = tel_enter(sel);
	if (sn == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct rte_tel_data *nd;

		if (sel != UINT_MAX && i != sel)
			continue;
		nd = rte_tel_data_alloc();
		if (nd == NULL)
			break;
		node_stats(sn->nodes[i], nd);
		snprintf(name, sizeof(name), "node%u", i);
		dict_add_container(d, name, nd);
	}
	tel_leave();
	return 0;
}

/* ---- /spinnic/hpus ----------------------------------------------------- */

/* The lcore that polls HPU @p hpu of @p node, or -1. */
static int
hpu_lcore(const struct spinnic *sn, const struct spinnic_node *node,
	  unsigned hpu)
{
	unsigned lcore, t;

	RTE_LCORE_FOREACH(lcore) {
		const struct spinnic_lcore *lc = &sn->lcores[lcore];

		for (t = 0; t < lc->nb_tasks; t++)
			if (lc->tasks[t].role == SPINNIC_ROLE_HPU &&
			    lc->tasks[t].node == node && lc->tasks[t].hpu == hpu)
				return (int)lcore;
	}
	return -1;
}

static int
cmd_hpus(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char name[48];
	struct spinnic *sn;
	unsigned sel, i, h;

	(void)cmd;
	if (params_parse(params, &sel, 1) != 0)
		return -EINVAL;
	sn = tel_enter(sel);
	if (sn == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if ((sel != UINT_MAX && i != sel) || node->rt == NULL)
			continue;
		for (h = 0; h < spin_rt_nhpu(node->rt); h++) {
			struct spin_hpu_stats hs;
			struct rte_tel_data *hd;

			if (spin_hpu_stats(node->rt, h, &hs) != 0)
				continue;
			hd = rte_tel_data_alloc();
			if (hd == NULL)
				goto out;
			rte_tel_data_start_dict(hd);
			rte_tel_data_add_dict_int(hd, "lcore",
						  hpu_lcore(sn, node, h));
			rte_tel_data_add_dict_u64(hd, "hers", hs.hers);
			rte_tel_data_add_dict_u64(hd, "hers_header", hs.hdr);
			rte_tel_data_add_dict_u64(hd, "hers_payload", hs.pay);
			rte_tel_data_add_dict_u64(hd, "hers_completion",
						  hs.cmpl);
			rte_tel_data_add_dict_u64(hd, "rc_success",
						  hs.rc[SPIN_SUCCESS]);
			rte_tel_data_add_dict_u64(hd, "rc_drop",
						  hs.rc[SPIN_DROP]);
			rte_tel_data_add_dict_u64(hd, "rc_proceed",
						  hs.rc[SPIN_PROCEED]);
			rte_tel_data_add_dict_u64(hd, "rc_error",
						  hs.rc[SPIN_ERROR]);
			rte_tel_data_add_dict_u64(hd, "skipped", hs.skipped);
			rte_tel_data_add_dict_u64(hd, "dma_bytes_to_host",
						  hs.dma_bytes_to);
			rte_tel_data_add_dict_u64(hd, "dma_bytes_from_host",
						  hs.dma_bytes_from);
			rte_tel_data_add_dict_u64(hd, "dma_ops", hs.dma_ops);
			rte_tel_data_add_dict_u64(hd, "dma_rejects",
						  hs.dma_rejects);
			rte_tel_data_add_dict_u64(hd, "dma_failures",
						  hs.dma_failures);
			rte_tel_data_add_dict_u64(hd, "out_jobs", hs.out_jobs);
			rte_tel_data_add_dict_u64(hd, "out_failures",
						  hs.out_failures);
			rte_tel_data_add_dict_u64(hd, "out_bytes", hs.out_bytes);
			rte_tel_data_add_dict_u64(hd, "vhpu_runs", hs.vhpu_runs);
			rte_tel_data_add_dict_u64(hd, "vhpu_yields",
						  hs.vhpu_yields);
			rte_tel_data_add_dict_u64(hd, "bursts", hs.bursts);
			rte_tel_data_add_dict_u64(hd, "polls", hs.polls);
			rte_tel_data_add_dict_u64(hd, "polls_idle",
						  hs.idle_polls);
			rte_tel_data_add_dict_u64(hd, "polls_busy",
				hs.polls >= hs.idle_polls ?
				hs.polls - hs.idle_polls : 0);
			rte_tel_data_add_dict_u64(hd, "budget_rechecks",
						  hs.budget_rechecks);
			snprintf(name, sizeof(name), "node%u/hpu%u", i, h);
			dict_add_container(d, name, hd);
		}
	}
out:
	tel_leave();
	return 0;
}

/* ---- /spinnic/clients -------------------------------------------------- */

static int
cmd_clients(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char name[48];
	struct spinnic *sn;
	unsigned sel, i, pid;

	(void)cmd;
	if (params_parse(params, &sel, 1) != 0)
		return -EINVAL;
	sn = tel_enter(sel);
	if (sn == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if ((sel != UINT_MAX && i != sel) || node->nic == NULL)
			continue;
		for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
			const struct spinnic_client_stats *cs =
				&node->cl_stats[pid];
			struct ptl_client_info ci;
			struct rte_tel_data *cd;

			if (ptl_client_info_get(node->nic, pid, &ci) != 0)
				continue;
			cd = rte_tel_data_alloc();
			if (cd == NULL)
				goto out;
			rte_tel_data_start_dict(cd);
			rte_tel_data_add_dict_u64(cd, "pid", ci.pid);
			rte_tel_data_add_dict_int(cd, "os_pid", ci.os_pid);
			rte_tel_data_add_dict_u64(cd, "uid", ci.uid);
			rte_tel_data_add_dict_u64(cd, "nis", ci.nis);
			rte_tel_data_add_dict_u64(cd, "ni_mask", ci.ni_mask);
			rte_tel_data_add_dict_u64(cd, "pts", ci.pts);
			rte_tel_data_add_dict_u64(cd, "mes", ci.mes);
			rte_tel_data_add_dict_u64(cd, "mes_priority",
						  ci.mes_priority);
			rte_tel_data_add_dict_u64(cd, "mes_overflow",
						  ci.mes_overflow);
			rte_tel_data_add_dict_u64(cd, "unexpected", ci.uhs);
			rte_tel_data_add_dict_u64(cd, "eqs", ci.eqs);
			rte_tel_data_add_dict_u64(cd, "cts", ci.cts);
			rte_tel_data_add_dict_u64(cd, "mds", ci.mds);
			rte_tel_data_add_dict_u64(cd, "region_size",
						  ci.region_size);
			rte_tel_data_add_dict_u64(cd, "msgs_in",
						  LD(cs->msgs_in));
			rte_tel_data_add_dict_u64(cd, "bytes_in",
						  LD(cs->bytes_in));
			rte_tel_data_add_dict_u64(cd, "ops_out",
						  LD(cs->ops_out));
			rte_tel_data_add_dict_u64(cd, "bytes_out",
						  LD(cs->bytes_out));
			rte_tel_data_add_dict_u64(cd, "bad_msgs",
						  LD(cs->bad_msgs));
			/* the NIC's time per message delivered, without
			 * the wait for its sender (the target event's) */
			rte_tel_data_add_dict_u64(cd, "nic_timed",
						  LD(cs->nic_timed));
			rte_tel_data_add_dict_u64(cd, "nic_ns_mean",
				LD(cs->nic_timed) != 0 ?
				LD(cs->nic_ns_sum) / LD(cs->nic_timed) : 0);
			rte_tel_data_add_dict_u64(cd, "nic_ns_max",
						  LD(cs->nic_ns_max));
			rte_tel_data_add_dict_u64(cd, "drop_count",
						  ci.drop_count);
			rte_tel_data_add_dict_u64(cd, "perm_violations",
						  ci.perm_violations);
			rte_tel_data_add_dict_u64(cd, "op_violations",
						  ci.op_violations);
			rte_tel_data_add_dict_u64(cd, "nic_mem_used",
				node->rt != NULL ?
				spin_rt_nicmem_owner_usage(node->rt, pid) : 0);
			/* 0: no per-client cap (--nic-mem-per-client) */
			rte_tel_data_add_dict_u64(cd, "nic_mem_quota",
				node->sn->cfg.nic_mem_per_client);
			snprintf(name, sizeof(name), "node%u/pid%u", i, pid);
			dict_add_container(d, name, cd);
		}
	}
out:
	tel_leave();
	return 0;
}

/* ---- /spinnic/mes ------------------------------------------------------ */

static void
me_dict(struct spin_rt *rt, const struct ptl_me_info *me,
	struct rte_tel_data *md)
{
	struct spin_ctx_stats cs;

	rte_tel_data_start_dict(md);
	rte_tel_data_add_dict_u64(md, "handle", me->handle);
	rte_tel_data_add_dict_u64(md, "ni", me->ni_kind);
	rte_tel_data_add_dict_u64(md, "pt", me->pt_index);
	rte_tel_data_add_dict_string(md, "list",
		me->list == PTL_MATCH_OVERFLOW ? "overflow" : "priority");
	rte_tel_data_add_dict_u64(md, "match_bits", me->match_bits);
	rte_tel_data_add_dict_u64(md, "ignore_bits", me->ignore_bits);
	rte_tel_data_add_dict_u64(md, "start", me->start);
	rte_tel_data_add_dict_u64(md, "length", me->length);
	rte_tel_data_add_dict_u64(md, "offset", me->offset);
	rte_tel_data_add_dict_u64(md, "min_free", me->min_free);
	rte_tel_data_add_dict_u64(md, "options", me->options);
	/* handles; -1 is none */
	if (me->ctx == SPINNIC_HANDLE_NONE)
		rte_tel_data_add_dict_int(md, "ctx", -1);
	else
		rte_tel_data_add_dict_u64(md, "ctx", me->ctx);
	if (me->ct == SPINNIC_HANDLE_NONE)
		rte_tel_data_add_dict_int(md, "ct", -1);
	else
		rte_tel_data_add_dict_u64(md, "ct", me->ct);
	rte_tel_data_add_dict_u64(md, "uid", me->uid);
	rte_tel_data_add_dict_u64(md, "match_nid", me->match_id.nid);
	rte_tel_data_add_dict_u64(md, "match_pid", me->match_id.pid);
	rte_tel_data_add_dict_u64(md, "inflight", me->inflight);
	/* its execution context, while it lives */
	if (me->ctx != SPINNIC_HANDLE_NONE && rt != NULL &&
	    spin_rt_ctx_stats(rt, me->ctx, &cs) == 0) {
		rte_tel_data_add_dict_u64(md, "ctx_msgs", cs.msgs);
		rte_tel_data_add_dict_u64(md, "ctx_hers", cs.hers);
		rte_tel_data_add_dict_u64(md, "ctx_rc_error",
					  cs.rc[SPIN_ERROR]);
		rte_tel_data_add_dict_u64(md, "ctx_dma_bytes", cs.dma_bytes);
		rte_tel_data_add_dict_u64(md, "ctx_nic_mem", cs.mem_bytes);
	}
}

static int
cmd_mes(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ptl_me_info *mes;
	char name[64];
	struct spinnic *sn;
	unsigned sel[3], i, pid, left = TEL_MES_MAX;
	uint64_t more = 0;

	(void)cmd;
	if (params_parse(params, sel, 3) != 0)
		return -EINVAL;
	if (sel[1] != UINT_MAX && sel[1] >= SPINNIC_CLIENTS_MAX)
		return -EINVAL;
	mes = calloc(TEL_MES_MAX, sizeof(*mes));
	if (mes == NULL)
		return -ENOMEM;
	sn = tel_enter(sel[0]);
	if (sn == NULL) {
		free(mes);
		return -ENODEV;
	}
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];

		if ((sel[0] != UINT_MAX && i != sel[0]) || node->nic == NULL)
			continue;
		for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
			unsigned first = sel[2] != UINT_MAX ? sel[2] : 0;
			unsigned total = 0, k;
			int n;

			if (sel[1] != UINT_MAX && pid != sel[1])
				continue;
			n = ptl_client_me_dump(node->nic, pid, first, mes, left,
					       &total);
			if (n < 0)
				continue;
			if (total > first + (unsigned)n)
				more += total - first - (unsigned)n;
			for (k = 0; k < (unsigned)n; k++) {
				struct rte_tel_data *md = rte_tel_data_alloc();

				if (md == NULL)
					break;
				me_dict(node->rt, &mes[k], md);
				snprintf(name, sizeof(name),
					 "node%u/pid%u/me%u", i, pid,
					 first + k);
				dict_add_container(d, name, md);
			}
			left -= (unsigned)n;
		}
	}
	/* entries left out (16 KiB per reply): page with FIRST */
	rte_tel_data_add_dict_u64(d, "not_shown", more);
	tel_leave();
	free(mes);
	return 0;
}

/* ---- /spinnic/handlers, /spinnic/handler_trace ------------------------- */

/* A family name as a key or value: plugin names are not checked for
 * JSON, so anything but [A-Za-z0-9_.-] becomes '_'. */
static void
name_clean(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i] != '\0'; i++) {
		char ch = src[i];

		dst[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
			ch == '-' ? ch : '_';
	}
	dst[i] = '\0';
}

/* The statistics of a family or context: per kind it has (or ran), then
 * totals; durations in ns. */
static void
hstats_dict(const struct spin_handler_family *fam,
	    const struct spin_handler_stats *s, struct rte_tel_data *d)
{
	static const char *const rcn[4] = { "ok", "drop", "proceed",
					    "error" };
	char key[64];
	unsigned k, r;

	for (k = 0; k < SPIN_HK_COUNT; k++) {
		const struct spin_hkind_stats *h = &s->kind[k];
		const char *kn = spin_hkind_name(k);
		bool has = (k == SPIN_HK_HEADER && fam->header != NULL) ||
			(k == SPIN_HK_PAYLOAD && fam->payload != NULL) ||
			(k == SPIN_HK_COMPLETION && fam->completion != NULL) ||
			(k == SPIN_HK_OUTBOUND && fam->outbound != NULL);

		if (!has && h->calls == 0)
			continue;
		snprintf(key, sizeof(key), "%s_calls", kn);
		rte_tel_data_add_dict_u64(d, key, h->calls);
		for (r = 0; r < 4; r++) {
			snprintf(key, sizeof(key), "%s_%s", kn, rcn[r]);
			rte_tel_data_add_dict_u64(d, key, h->rc[r]);
		}
		snprintf(key, sizeof(key), "%s_mean_ns", kn);
		rte_tel_data_add_dict_u64(d, key, h->timed != 0 ?
			spin_cycles_to_ns(h->cycles / h->timed) : 0);
		snprintf(key, sizeof(key), "%s_p99_ns", kn);
		rte_tel_data_add_dict_u64(d, key,
			spin_cycles_to_ns(spin_hkind_quantile(h, 0.99)));
		snprintf(key, sizeof(key), "%s_max_ns", kn);
		rte_tel_data_add_dict_u64(d, key,
					  spin_cycles_to_ns(h->max_cycles));
		snprintf(key, sizeof(key), "%s_over_budget", kn);
		rte_tel_data_add_dict_u64(d, key, h->over_budget);
	}
	rte_tel_data_add_dict_u64(d, "calls", s->calls);
	rte_tel_data_add_dict_u64(d, "errors", s->errors);
	rte_tel_data_add_dict_u64(d, "over_budget", s->over_budget);
	rte_tel_data_add_dict_u64(d, "dma_bytes_to_host", s->dma_bytes_to);
	rte_tel_data_add_dict_u64(d, "dma_bytes_from_host",
				  s->dma_bytes_from);
	rte_tel_data_add_dict_u64(d, "dma_rejects", s->dma_rejects);
	rte_tel_data_add_dict_u64(d, "dma_failures", s->dma_failures);
	rte_tel_data_add_dict_u64(d, "put_errors", s->put_errors);
}

/* Which entries of /spinnic/handlers go in this reply. */
struct hsel {
	unsigned skip;      /* entries to pass over first (FIRST) */
	unsigned shown;
	uint64_t more;      /* left out */
};

/* @return whether the next entry goes in the reply */
static bool
hsel_take(struct hsel *hs)
{
	if (hs->skip > 0) {
		hs->skip--;
		return false;
	}
	if (hs->shown == TEL_HENTRY_MAX) {
		hs->more++;
		return false;
	}
	return true;
}

/* Node @p i's families that ran a handler, into @p d. */
static void
handlers_families(struct spinnic_node *node, unsigned i,
		  struct rte_tel_data *d, struct hsel *hs)
{
	char name[RTE_TEL_MAX_STRING_LEN], clean[SPINNIC_HANDLER_NAME];
	struct spin_handler_stats s;
	unsigned f;

	for (f = 0; f < spin_rt_nfamilies(node->rt); f++) {
		const struct spin_handler_family *fam =
			spin_rt_family(node->rt, f);
		struct rte_tel_data *fd;

		if (spin_rt_family_stats(node->rt, f, &s) != 0 ||
		    s.calls == 0 || !hsel_take(hs))
			continue;
		fd = rte_tel_data_alloc();
		if (fd == NULL)
			return;
		name_clean(clean, sizeof(clean), fam->name);
		rte_tel_data_start_dict(fd);
		rte_tel_data_add_dict_u64(fd, "index", f);
		rte_tel_data_add_dict_u64(fd, "budget_us",
					  node->sn->cfg.handler_budget_us);
		hstats_dict(fam, &s, fd);
		snprintf(name, sizeof(name), "node%u/family/%s", i, clean);
		dict_add_container(d, name, fd);
		hs->shown++;
	}
}

/* Context @p h of node @p i, into @p d. @return 0, or -1 (gone) */
static int
handlers_ctx(struct spinnic_node *node, unsigned i, uint32_t h,
	     struct rte_tel_data *d)
{
	char name[RTE_TEL_MAX_STRING_LEN], clean[SPINNIC_HANDLER_NAME];
	const struct spin_handler_family *fam;
	struct spin_handler_stats s;
	struct ptl_client_info ci;
	struct spin_ctx_stats cs;
	struct spin_trace_entry te;
	struct rte_tel_data *cd;
	uint64_t head = 0;

	if (spin_rt_ctx_stats(node->rt, h, &cs) != 0 ||
	    spin_rt_ctx_handler_stats(node->rt, h, &s) != 0 ||
	    (fam = spin_rt_family(node->rt, cs.family)) == NULL)
		return -1;
	cd = rte_tel_data_alloc();
	if (cd == NULL)
		return -1;
	name_clean(clean, sizeof(clean), fam->name);
	rte_tel_data_start_dict(cd);
	rte_tel_data_add_dict_u64(cd, "ctx", h);
	rte_tel_data_add_dict_string(cd, "family", clean);
	rte_tel_data_add_dict_u64(cd, "pid", cs.owner);
	rte_tel_data_add_dict_int(cd, "os_pid",
		node->nic != NULL &&
		ptl_client_info_get(node->nic, cs.owner, &ci) == 0 ?
		ci.os_pid : -1);
	rte_tel_data_add_dict_u64(cd, "live", cs.live);
	rte_tel_data_add_dict_u64(cd, "msgs", cs.msgs);
	hstats_dict(fam, &s, cd);
	/* invocations traced so far, -1: no trace */
	if (spin_rt_ctx_trace(node->rt, h, 0, &te, 0, &head) >= 0)
		rte_tel_data_add_dict_u64(cd, "traced", head);
	else
		rte_tel_data_add_dict_int(cd, "traced", -1);
	snprintf(name, sizeof(name), "node%u/ctx%u", i, h);
	dict_add_container(d, name, cd);
	return 0;
}

static int
cmd_handlers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct spinnic *sn;
	unsigned sel[2], i;
	struct hsel hs = { 0 };

	(void)cmd;
	if (params_parse(params, sel, 2) != 0)
		return -EINVAL;
	hs.skip = sel[1] != UINT_MAX ? sel[1] : 0;
	sn = tel_enter(sel[0]);
	if (sn == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		uint32_t pos = 0, h;

		if ((sel[0] != UINT_MAX && i != sel[0]) || node->rt == NULL)
			continue;
		handlers_families(node, i, d, &hs);
		while (spin_rt_ctx_next(node->rt, &pos, &h) == 0)
			if (hsel_take(&hs) && handlers_ctx(node, i, h, d) == 0)
				hs.shown++;
	}
	/* entries left out (16 KiB per reply): page with FIRST */
	rte_tel_data_add_dict_u64(d, "not_shown", hs.more);
	tel_leave();
	return 0;
}

static int
cmd_handler_trace(const char *cmd, const char *params,
		  struct rte_tel_data *d)
{
	static const char *const rcn[4] = { "ok", "drop", "proceed",
					    "error" };
	struct spin_trace_entry *e;
	struct spinnic *sn;
	char name[32];
	unsigned sel[3];
	uint64_t head = 0;
	unsigned size;
	int n, k;

	(void)cmd;
	if (params_parse(params, sel, 3) != 0 || sel[0] == UINT_MAX ||
	    sel[1] == UINT_MAX)
		return -EINVAL;
	e = calloc(TEL_TRACE_MAX, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	sn = tel_enter(sel[0]);
	if (sn == NULL || sn->nodes[sel[0]]->rt == NULL) {
		if (sn != NULL)
			tel_leave();
		free(e);
		return -ENODEV;
	}
	n = spin_rt_ctx_trace(sn->nodes[sel[0]]->rt, sel[1],
			      sel[2] != UINT_MAX ? sel[2] : 0, e,
			      TEL_TRACE_MAX, &head);
	size = sn->cfg.handler_trace;
	tel_leave();
	if (n < 0) {
		free(e);
		return n; /* no such context, or no trace */
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "ctx", sel[1]);
	rte_tel_data_add_dict_u64(d, "head", head);
	rte_tel_data_add_dict_u64(d, "size", size);
	rte_tel_data_add_dict_u64(d, "entries", (uint64_t)n);
	for (k = 0; k < n; k++) {
		struct rte_tel_data *ed = rte_tel_data_alloc();

		if (ed == NULL)
			break;
		rte_tel_data_start_dict(ed);
		rte_tel_data_add_dict_string(ed, "kind",
					     spin_hkind_name(e[k].kind));
		rte_tel_data_add_dict_string(ed, "rc", e[k].rc < 4 ?
					     rcn[e[k].rc] : "?");
		rte_tel_data_add_dict_u64(ed, "msg_id", e[k].msg_id);
		rte_tel_data_add_dict_u64(ed, "src_nid", e[k].src_nid);
		rte_tel_data_add_dict_u64(ed, "offset", e[k].offset);
		rte_tel_data_add_dict_u64(ed, "len", e[k].len);
		rte_tel_data_add_dict_u64(ed, "ns",
					  spin_cycles_to_ns(e[k].cycles));
		rte_tel_data_add_dict_u64(ed, "hpu", e[k].hpu);
		rte_tel_data_add_dict_int(ed, "vhpu",
			e[k].vhpu == SPIN_VHPU_NONE ? -1 : (int)e[k].vhpu);
		rte_tel_data_add_dict_u64(ed, "tsc", e[k].tsc);
		snprintf(name, sizeof(name), "e%" PRIu64, e[k].seq);
		dict_add_container(d, name, ed);
	}
	free(e);
	return 0;
}

/* ---- /spinnic/aa ------------------------------------------------------- */

/* Active Access counters of a node: lib/portals' and the engine's. */
static void
aa_node_dict(struct spinnic_node *node, struct rte_tel_data *d)
{
	const struct spinnic_engine *eng = node->eng;
	struct ptl_nic_stats st;

	ptl_nic_stats_get(node->nic, &st);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "records", st.aa_records);
	rte_tel_data_add_dict_u64(d, "lost", st.aa_lost);
	rte_tel_data_add_dict_u64(d, "blocked", st.aa_blocked);
	rte_tel_data_add_dict_u64(d, "redirected", st.aa_redirected);
	rte_tel_data_add_dict_u64(d, "log_err", st.aa_log_err);
	rte_tel_data_add_dict_u64(d, "logs_live", st.aa_logs_live);
	rte_tel_data_add_dict_u64(d, "flushes", st.aa_flushes);
	rte_tel_data_add_dict_u64(d, "backpressure", st.aa_backpressure);
	rte_tel_data_add_dict_u64(d, "atomic_waits", st.aa_atomic_waits);
	rte_tel_data_add_dict_u64(d, "get_waits", st.aa_get_waits);
	rte_tel_data_add_dict_u64(d, "dma_waits", st.aa_dma_waits);
	rte_tel_data_add_dict_u64(d, "dma_wait_lost", st.aa_dma_wait_lost);
	rte_tel_data_add_dict_u64(d, "handled", st.aa_handled);
	rte_tel_data_add_dict_u64(d, "timer_wakes", st.aa_timer_wakes);
	/* fault logs (E = 0 pages): counts only, the records are their
	 * clients' (spin_aa_fault_read) */
	rte_tel_data_add_dict_u64(d, "faults", st.aa_faults);
	rte_tel_data_add_dict_u64(d, "faults_lost", st.aa_faults_lost);
	rte_tel_data_add_dict_u64(d, "faults_read", st.aa_faults_read);
	/* the IOTLB model (--aa-iotlb; 0 entries: off) */
	rte_tel_data_add_dict_u64(d, "iotlb_entries",
				  node->sn->cfg.aa_iotlb[0]);
	rte_tel_data_add_dict_u64(d, "iotlb_ways", node->sn->cfg.aa_iotlb[1]);
	rte_tel_data_add_dict_string(d, "iotlb_policy",
				     node->sn->cfg.aa_iotlb[2] ? "rnd" : "lru");
	rte_tel_data_add_dict_u64(d, "iotlb_hits", st.aa_iotlb_hits);
	rte_tel_data_add_dict_u64(d, "iotlb_misses", st.aa_iotlb_misses);
	rte_tel_data_add_dict_u64(d, "iotlb_walk_reads",
				  st.aa_iotlb_walk_reads);
	rte_tel_data_add_dict_u64(d, "iotlb_inval", st.aa_iotlb_inval);
	rte_tel_data_add_dict_u64(d, "drop_aa_full", eng != NULL ?
		LD(eng->rx.stats.drop[ENG_DROP_AA_FULL]) : 0);
	rte_tel_data_add_dict_u64(d, "reply_waits", eng != NULL ?
				  LD(eng->tx.stats.aa_waits) : 0);
	rte_tel_data_add_dict_u64(d, "flush_waits", eng != NULL ?
				  LD(eng->rx.stats.aa_flush_waits) : 0);
	rte_tel_data_add_dict_u64(d, "flush_nowait", eng != NULL ?
				  LD(eng->rx.stats.aa_flush_nowait) : 0);
}

static void
aa_log_dict(const struct ptl_aa_log_info *li, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "handle", li->handle);
	rte_tel_data_add_dict_string(d, "mode", li->drop ? "drop" :
				     "backpressure");
	rte_tel_data_add_dict_string(d, "consumer", li->served ? "nic" :
				     "host");
	if (li->served)
		rte_tel_data_add_dict_u64(d, "ctx", li->ctx);
	rte_tel_data_add_dict_u64(d, "size", li->size);
	rte_tel_data_add_dict_u64(d, "records", li->records);
	rte_tel_data_add_dict_u64(d, "lost", li->lost);
	rte_tel_data_add_dict_u64(d, "prod", li->prod);
	rte_tel_data_add_dict_u64(d, "cons", li->cons);
	/* bytes written but not consumed; -1: the client's index is not
	 * one the NIC accepts (the next record stops the log) */
	rte_tel_data_add_dict_int(d, "lag_bytes", li->cons_ok ?
				  (int)RTE_MIN(li->prod - li->cons,
					       (uint64_t)INT_MAX) : -1);
	rte_tel_data_add_dict_u64(d, "held", li->held);
	rte_tel_data_add_dict_u64(d, "err", li->err);
	rte_tel_data_add_dict_u64(d, "notify_every", li->notify_every);
	rte_tel_data_add_dict_u64(d, "notify_us", li->notify_us);
}

static int
cmd_aa(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct ptl_aa_log_info li[SPINNIC_AA_LOGS_MAX];
	char name[64];
	struct spinnic *sn;
	unsigned sel[2], i, pid, n, k;

	(void)cmd;
	if (params_parse(params, sel, 2) != 0)
		return -EINVAL;
	sn = tel_enter(sel[0]);
	if (sn == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (i = 0; i < sn->nb_nodes; i++) {
		struct spinnic_node *node = sn->nodes[i];
		struct rte_tel_data *nd;

		if ((sel[0] != UINT_MAX && i != sel[0]) || node->nic == NULL)
			continue;
		nd = rte_tel_data_alloc();
		if (nd == NULL)
			goto out;
		aa_node_dict(node, nd);
		snprintf(name, sizeof(name), "node%u", i);
		dict_add_container(d, name, nd);
		for (pid = 0; pid < SPINNIC_CLIENTS_MAX; pid++) {
			struct ptl_aa_client_info ci;
			struct rte_tel_data *cd;

			if ((sel[1] != UINT_MAX && pid != sel[1]) ||
			    ptl_client_aa_dump(node->nic, pid, &ci, li,
					       RTE_DIM(li), &n) != 0)
				continue;
			/* clients that never used Active Access: none */
			if (ci.ranges == 0 && ci.logs == 0 && ci.faults == 0 &&
			    ci.fault_lost == 0)
				continue;
			cd = rte_tel_data_alloc();
			if (cd == NULL)
				goto out;
			rte_tel_data_start_dict(cd);
			rte_tel_data_add_dict_u64(cd, "pid", pid);
			rte_tel_data_add_dict_u64(cd, "ranges", ci.ranges);
			rte_tel_data_add_dict_u64(cd, "marked_bytes",
						  ci.marked_bytes);
			rte_tel_data_add_dict_u64(cd, "logs", ci.logs);
			rte_tel_data_add_dict_u64(cd, "faults", ci.faults);
			rte_tel_data_add_dict_u64(cd, "fault_lost",
						  ci.fault_lost);
			rte_tel_data_add_dict_u64(cd, "fault_held",
						  ci.fault_held);
			snprintf(name, sizeof(name), "node%u/pid%u", i, pid);
			dict_add_container(d, name, cd);
			for (k = 0; k < n; k++) {
				struct rte_tel_data *ld = rte_tel_data_alloc();

				if (ld == NULL)
					goto out;
				aa_log_dict(&li[k], ld);
				snprintf(name, sizeof(name),
					 "node%u/pid%u/log%u", i, pid, k);
				dict_add_container(d, name, ld);
			}
		}
	}
out:
	tel_leave();
	return 0;
}

/* ---- setup ------------------------------------------------------------- */

int
spinnic_telemetry_init(struct spinnic *sn)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/spinnic/stats", cmd_stats,
		  "spinnic counters per node. Parameters: node (optional)" },
		{ "/spinnic/hpus", cmd_hpus,
		  "spinnic HPU counters per node and HPU. Parameters: node (optional)" },
		{ "/spinnic/clients", cmd_clients,
		  "spinnic attached clients per node. Parameters: node (optional)" },
		{ "/spinnic/mes", cmd_mes,
		  "spinnic linked MEs of clients. Parameters: node,pid,first (all optional)" },
		{ "/spinnic/handlers", cmd_handlers,
		  "spinnic handler statistics per family and context. Parameters: node,first (optional)" },
		{ "/spinnic/handler_trace", cmd_handler_trace,
		  "spinnic last handler invocations of a context (--handler-trace). Parameters: node,ctx,from (from optional)" },
		{ "/spinnic/aa", cmd_aa,
		  "spinnic Active Access counters per node, marks and access logs per client. Parameters: node,pid (optional)" },
	};
	char path[PATH_MAX];
	const char *dir = rte_eal_get_runtime_dir();
	const char *prefix;
	struct stat st;
	unsigned i;
	int rc;

	if (!tel_registered) {
		for (i = 0; i < RTE_DIM(cmds); i++) {
			rc = rte_telemetry_register_cmd(cmds[i].cmd,
							cmds[i].fn,
							cmds[i].help);
			if (rc != 0) {
				SPINNIC_LOG(ERR, "telemetry: cannot register %s: %s",
					    cmds[i].cmd, strerror(-rc));
				return rc;
			}
		}
		tel_registered = true;
	}
	pthread_rwlock_wrlock(&tel_lock);
	tel_sn = sn;
	pthread_rwlock_unlock(&tel_lock);

	prefix = strrchr(dir, '/');
	prefix = prefix != NULL ? prefix + 1 : dir;
	snprintf(path, sizeof(path), "%s/dpdk_telemetry.v2", dir);
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		SPINNIC_LOG(INFO, "telemetry: %s (dpdk-telemetry.py -f %s; /spinnic/stats, /spinnic/hpus, /spinnic/clients, /spinnic/mes, /spinnic/handlers, /spinnic/handler_trace, /spinnic/aa)",
			    path, prefix);
	else
		SPINNIC_LOG(NOTICE, "telemetry: no socket at %s (EAL --no-telemetry?)",
			    path);
	for (i = 0; i < sn->nb_nodes && sn->cfg.capture; i++) {
		char pname[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(sn->nodes[i]->port_id,
						 pname) != 0)
			continue;
		SPINNIC_LOG(INFO, "capture: node %u: dpdk-dumpcap --file-prefix=%s -i %s",
			    i, prefix, pname);
	}
	return 0;
}

void
spinnic_telemetry_fini(struct spinnic *sn)
{
	(void)sn;
	pthread_rwlock_wrlock(&tel_lock);
	tel_sn = NULL;
	pthread_rwlock_unlock(&tel_lock);
}

/* Unlink the entries of @p dir whose name starts with @p prefix ("" all). */
static void
dir_unlink(const char *dir, const char *prefix)
{
	char path[PATH_MAX];
	struct dirent *e;
	size_t n = strlen(prefix);
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, n) != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     e->d_name) >= sizeof(path))
			continue;
		(void)unlink(path);
	}
	closedir(d);
}

void
spinnic_capture_cleanup(const char *runtime_dir)
{
	char mnt[PATH_MAX], type[64], pfx[NAME_MAX + 8];
	const char *base;
	FILE *f;

	if (runtime_dir == NULL || runtime_dir[0] == '\0')
		return;
	base = strrchr(runtime_dir, '/');
	base = base != NULL ? base + 1 : runtime_dir;
	if (base[0] == '\0')
		return;
	/* hugepage files are <mount>/<prefix>map_<n> (eal_filesystem.h) */
	snprintf(pfx, sizeof(pfx), "%smap_", base);
	f = fopen("/proc/mounts", "r");
	if (f != NULL) {
		char line[PATH_MAX + 256];

		while (fgets(line, sizeof(line), f) != NULL) {
			/* "dev mountpoint type options ..." */
			if (sscanf(line, "%*s %4095s %63s", mnt, type) == 2 &&
			    strcmp(type, "hugetlbfs") == 0)
				dir_unlink(mnt, pfx);
		}
		fclose(f);
	}
	/* config, fbarrays, mp socket: the directory is this process's */
	dir_unlink(runtime_dir, "");
}
