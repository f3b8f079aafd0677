/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's life cycle: init and fini of a node's engine (while its
 * roles are stopped), the client detach handshake with both roles (control
 * thread), whether it is quiet, and its counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "engine.h"
#include "outbound_stream.h"

#define JOBS_SIZE 1024u
/* handler puts (and next, triggered operations) in the submit queue */
#define SUBMIT_SIZE 1024u
#define DONE_SIZE 4096u

bool
spinnic_engine_quiet(const struct spinnic_node *node)
{
	const struct spinnic_engine *eng = node->eng;
	unsigned i, n;

	if (eng == NULL)
		return true;
	if (__atomic_load_n(&eng->rx.n_park, __ATOMIC_RELAXED) != 0 ||
	    __atomic_load_n(&eng->tx.n_staged, __ATOMIC_RELAXED) != 0 ||
	    rte_ring_count(eng->tacks) != 0 ||
	    rte_ring_count(eng->submit) != 0 ||
	    __atomic_load_n(&eng->tx.sub, __ATOMIC_RELAXED) != NULL ||
	    __atomic_load_n(&eng->rx.n_acks, __ATOMIC_RELAXED) != 0 ||
	    !eng_sput_idle(eng))
		return false;
	for (i = 0; i < node->nb_txq; i++)
		if (__atomic_load_n(&eng->tx.hold[i].n, __ATOMIC_RELAXED) != 0)
			return false;
	n = __atomic_load_n(&eng->tx.n_peers, __ATOMIC_ACQUIRE);
	for (i = 0; i < n; i++) {
		const struct rel_tx *t = eng->tx.peers[i];

		if (__atomic_load_n(&t->base, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&t->next, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/* What spinnic_engine_init allocates (fault stages apart). */
static void
engine_free(struct spinnic_engine *eng)
{
	rte_ring_free(eng->submit);
	rte_mempool_free(eng->ops);
	rte_ring_free(eng->tacks);
	rte_ring_free(eng->rel_acks);
	rte_ring_free(eng->jobs);
	rte_ring_free(eng->done);
	spinnic_msgtab_free(eng->rx.replies);
	spinnic_msgtab_free(eng->rx.msgs);
	rte_free(eng->tx.hold);
	pthread_mutex_destroy(&eng->detach_lock);
	rte_free(eng);
}

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
	eng->rx.faults = fault_stage_new(
		&node->sn->cfg.faults[SPINNIC_FAULT_RX],
		node->sn->cfg.fault_seed * 2 * SPINNIC_NODES_MAX + node->index,
		node->pool);
	eng->tx.faults = fault_stage_new(
		&node->sn->cfg.faults[SPINNIC_FAULT_TX],
		node->sn->cfg.fault_seed * 2 * SPINNIC_NODES_MAX +
		SPINNIC_NODES_MAX + node->index, node->pool);
	pthread_mutex_init(&eng->detach_lock, NULL);
	eng->tx.hold = rte_zmalloc_socket("spinnic_tx_hold",
				       sizeof(*eng->tx.hold) * node->nb_txq,
				       RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	eng->rx.msgs = spinnic_msgtab_create(ENG_MSGS, sizeof(struct in_msg));
	eng->rx.replies = spinnic_msgtab_create(ENG_REPLIES,
					     sizeof(struct in_reply));
	if (eng->tx.hold == NULL || eng->rx.msgs == NULL || eng->rx.replies == NULL)
		goto fail;
	/* what one source may hold of the inbound tables (NOTES) */
	spinnic_msgtab_set_limits(eng->rx.msgs, &(struct spinnic_msgtab_limits){
		.unseq_live = ENG_MSGS_UNSEQ_MAX,
		.nid_live = ENG_MSGS_NID_MAX,
		.seen_bytes = ENG_MSGS_SEEN_BYTES,
		.unseq_seen_bytes = ENG_MSGS_SEEN_BYTES_UNSEQ });
	spinnic_msgtab_set_limits(eng->rx.replies, &(struct spinnic_msgtab_limits){
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
	snprintf(name, sizeof(name), "spinnic_sub%u", node->index);
	eng->submit = rte_ring_create(name, SUBMIT_SIZE, (int)rte_socket_id(),
				      RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "spinnic_ops%u", node->index);
	eng->ops = rte_mempool_create(name, SUBMIT_SIZE - 1,
				      sizeof(struct out_sub), 0, 0, NULL, NULL,
				      NULL, NULL, (int)rte_socket_id(), 0);
	snprintf(name, sizeof(name), "spinnic_racks%u", node->index);
	eng->rel_acks = rte_ring_create_elem(name, sizeof(struct rel_ack_rec),
					     JOBS_SIZE, (int)rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (eng->done == NULL || eng->jobs == NULL || eng->rel_acks == NULL ||
	    eng->tacks == NULL || eng->submit == NULL || eng->ops == NULL) {
		rc = -rte_errno;
		goto fail;
	}
	rc = rel_init(eng);
	if (rc != 0)
		goto fail;
	node->eng = eng;
	ptl_nic_set_originate(node->nic, eng_originate, eng);
	return 0;
fail:
	SPINNIC_LOG(ERR, "node %u: engine: %s", node->index, strerror(-rc));
	fault_stage_free(eng->rx.faults);
	fault_stage_free(eng->tx.faults);
	engine_free(eng);
	return rc;
}

void
spinnic_engine_fini(struct spinnic_node *node)
{
	struct spinnic_engine *eng = node->eng;

	if (eng == NULL)
		return;
	ptl_nic_set_originate(node->nic, NULL, NULL);
	eng_in_fini(eng);
	eng_out_fini(eng);
	engine_free(eng);
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
	while (__atomic_load_n(&eng->rx.detach_ack, __ATOMIC_ACQUIRE) != req ||
	       __atomic_load_n(&eng->tx.detach_ack, __ATOMIC_ACQUIRE) != req) {
		if (!lcores_running(node->sn)) {
			/* nobody polls: we are alone with the state */
			if (eng->tx.detach_ack != req) {
				eng_out_detach(eng, cl->pc);
				eng->tx.detach_ack = req;
			}
			if (eng->rx.detach_ack != req) {
				eng_in_detach(eng, cl->pc);
				eng->rx.detach_ack = req;
			}
			break;
		}
		usleep(100);
		if (++waited == 10000)
			SPINNIC_LOG(WARNING, "node %u: detach of Portals pid %u waits: inbound %s (aborted sPIN messages %u, acks held %u), outbound %s",
				    node->index, cl->pid,
				    eng->rx.detach_ack == req ? "done" : "busy",
				    __atomic_load_n(&eng->rx.live_aborts,
						    __ATOMIC_RELAXED),
				    __atomic_load_n(&eng->rx.n_acks,
						    __ATOMIC_RELAXED),
				    eng->tx.detach_ack == req ? "done" : "busy");
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
	"drop_peers_full", "drop_aa_full", "drop_table_share",
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
	in = &eng->rx.stats;
	o = &eng->tx.stats;
	spinnic_msgtab_stats(eng->rx.msgs, &ms);
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
	stat_put(&l, "wb_flushes", in->wb_flushes);
	stat_put(&l, "wb_pkts", in->wb_pkts);
	stat_put(&l, "acks_sent", in->acks_sent);
	stat_put(&l, "nacks_sent", in->nacks_sent);
	stat_put(&l, "acks_rcvd", in->acks_rcvd);
	stat_put(&l, "nacks_rcvd", in->nacks_rcvd);
	stat_put(&l, "gets_served", in->gets_served);
	stat_put(&l, "aa_flush_waits", in->aa_flush_waits);
	stat_put(&l, "aa_flush_nowait", in->aa_flush_nowait);
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
	stat_put(&l, "stage_puts", o->stage_puts);
	stat_put(&l, "stage_bytes", o->stage_bytes);
	stat_put(&l, "stage_no_mem", o->stage_no_mem);
	stat_put(&l, "aa_reply_waits", o->aa_waits);
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
	stat_put(&l, "rel_stalls", o->rel_stalls);
	stat_put(&l, "peers_full", o->peers_full);
	stat_put(&l, "chal_answered", o->chal_answered);
	stat_put(&l, "chal_ignored", o->chal_ignored);
	stat_put(&l, "tacks_dropped", o->tacks_dropped);
	stat_put(&l, "submitted", o->submitted);
	stat_put(&l, "atomics", o->atomics);
	stat_put(&l, "faults_rx",
		 eng->rx.faults != NULL ? eng->rx.faults->events : 0);
	stat_put(&l, "faults_tx",
		 eng->tx.faults != NULL ? eng->tx.faults->events : 0);
	if (l.n % 6 != 0)
		fputc('\n', f);
	eng_sput_stats_print(eng, f);
}
