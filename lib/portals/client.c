/* SPDX-License-Identifier: BSD-3-Clause */
/* The NIC object, its counters, and client attach/detach/references. */
#include <stdlib.h>
#include <sys/random.h>

#include "ptl_internal.h"

static const char *const stats_names[] = {
	"match_priority", "match_overflow", "drop_no_target", "drop_bad_pt",
	"drop_pt_disabled", "drop_no_match", "drop_perm", "drop_op",
	"drop_uh_full", "flowctrl", "truncated", "auto_unlink", "uh_stored",
	"uh_claimed", "uh_searched", "eq_posted", "eq_dropped", "eq_bad",
	"ct_updates", "ct_bad", "futex_wakes", "fast_bytes",
	"slow_path_bytes", "slow_path_calls", "host_fault", "dead_client",
	"ctrl_ok", "bad_ctrl", "cmds", "bad_cmd", "cmd_ring_corrupt",
	"ops_started", "ops_full", "ops_unknown", "reply_oob", "attached",
	"detached", "bad_region", "inflight_dropped", "clients_live",
	"regions_live", "region_bytes", "mes_live", "drop_too_long",
	"trig_armed", "trig_fired", "trig_cancelled", "trig_refused",
	"trig_retried", "trig_me_gone", "aa_records", "aa_lost",
	"aa_blocked", "aa_redirected", "aa_log_err", "aa_logs_live",
	"aa_flushes", "aa_backpressure", "aa_handled", "aa_timer_wakes",
	"trig_rearmed", "trig_rearm_ended", "trig_deferred", "trig_me_full",
	"flowctrl_owed", "aa_atomic_waits", "aa_dma_waits",
	"aa_dma_wait_lost", "aa_get_waits", "aa_faults", "aa_faults_lost",
	"aa_faults_read", "aa_iotlb_hits", "aa_iotlb_misses",
	"aa_iotlb_walk_reads", "aa_iotlb_inval",
};
_Static_assert(sizeof(stats_names) / sizeof(stats_names[0]) ==
	       sizeof(struct ptl_nic_stats) / sizeof(uint64_t),
	       "one name per counter");

void
ptl_nic_conf_default(struct ptl_nic_conf *conf_p, uint32_t nid)
{
	memset(conf_p, 0, sizeof(*conf_p));
	conf_p->nid = nid;
	conf_p->max_clients = 64;
	conf_p->max_ops = 65536;
	conf_p->payload_size = 2048;
	conf_p->nic_mem_total = 64ull << 20;
	conf_p->aa_page = SPINNIC_AA_PAGE;
	conf_p->limits.max_entries = 16384;
	conf_p->limits.max_unexpected_headers = 4096;
	conf_p->limits.max_mds = 1024;
	conf_p->limits.max_cts = 1024;
	conf_p->limits.max_eqs = 1024;
	conf_p->limits.max_pt_index = 63;
	conf_p->limits.max_iovecs = PTL_MAX_IOVECS;
	conf_p->limits.max_list_size = 16384;
	conf_p->limits.max_triggered_ops = 1024;
	conf_p->limits.features = 0;
	conf_p->limits.max_msg_size = 1ull << 30;
	/* an atomic is one packet: ptl_nic_create fits these to the
	 * payload size */
	conf_p->limits.max_atomic_size = UINT64_MAX;
	conf_p->limits.max_fetch_atomic_size = UINT64_MAX;
	conf_p->limits.max_waw_ordered_size = UINT64_MAX;
	conf_p->limits.max_war_ordered_size = UINT64_MAX;
	/* PTL_MD_VOLATILE: the bytes travel in the command (inline), a
	 * conditional swap's compare value beside them: 16 + 16 <= 32 */
	conf_p->limits.max_volatile_size = SPINNIC_ATOMIC_OPERAND / 2;
}

/*
 * An atomic is one packet, so that atomicity never spans packets and a
 * fetching one's old values are one REPLY: its sizes are capped at the
 * payload, in whole largest elements (long double complex, 32 bytes).
 * Atomics of one initiator are applied in the order sent (in-order
 * matching), whole packets: write-after-write and write-after-read order
 * hold for the same sizes.
 */
static void
atomic_limits(struct ptl_nic_conf *conf)
{
	uint64_t one = conf->payload_size / SPINNIC_ATOMIC_OPERAND *
		       SPINNIC_ATOMIC_OPERAND;
	struct spinnic_limits *l = &conf->limits;

	if (l->max_atomic_size > one)
		l->max_atomic_size = one;
	if (l->max_fetch_atomic_size > one)
		l->max_fetch_atomic_size = one;
	if (l->max_waw_ordered_size > one)
		l->max_waw_ordered_size = one;
	if (l->max_war_ordered_size > one)
		l->max_war_ordered_size = one;
}

int
ptl_nic_create(const struct ptl_nic_conf *conf, struct ptl_nic **nic_p)
{
	int rc;
	const struct spinnic_limits *l = &conf->limits;
	struct ptl_nic *nic;
	uint32_t i;

	if (conf->max_clients == 0 || conf->max_clients >= SPINNIC_PTL_PID_ANY ||
	    conf->max_ops == 0 || conf->max_ops > PTL_OP_SLOT_MASK ||
	    l->max_entries <= 0 || l->max_entries >= (int32_t)PTL_MAX_OBJS ||
	    l->max_unexpected_headers < 0 ||
	    l->max_unexpected_headers >= (int32_t)PTL_MAX_OBJS ||
	    l->max_mds <= 0 || l->max_mds >= (int32_t)PTL_MAX_OBJS ||
	    l->max_cts <= 0 || l->max_cts >= (int32_t)PTL_MAX_OBJS ||
	    l->max_eqs <= 0 || l->max_eqs >= (int32_t)PTL_MAX_OBJS ||
	    l->max_pt_index < 0 || l->max_pt_index >= 65536 ||
	    l->max_list_size <= 0 || l->max_msg_size == 0 ||
	    l->max_triggered_ops < 0 ||
	    l->max_triggered_ops >= (int32_t)PTL_MAX_OBJS ||
	    l->max_msg_size > SPINNIC_WIRE_MAX_MSG_SIZE ||
	    conf->aa_page < SPINNIC_AA_PAGE ||
	    conf->aa_page > SPINNIC_AA_PAGE_MAX ||
	    !ptl_is_pow2(conf->aa_page)) {
		PTL_LOG(ERR, "nic %u: invalid configuration", conf->nid);
		return -EINVAL;
	}
	nic = calloc(1, sizeof(*nic));
	if (nic == NULL)
		return -ENOMEM;
	rc = ptl_aa_iotlb_init(&nic->aa_tlb, conf->aa_iotlb_entries,
			       conf->aa_iotlb_ways, conf->aa_iotlb_policy);
	if (rc != 0) {
		PTL_LOG(ERR, "nic %u: invalid IOTLB model", conf->nid);
		free(nic);
		return rc;
	}
	/* x86-64 page walk: 4 levels for 4 KiB pages, 3 for 2 MiB, 2 for
	 * 1 GiB; the sizes between walk as the next smaller one */
	nic->aa_walk_levels = conf->aa_page < (2ull << 20) ? 4 :
			      conf->aa_page < (1ull << 30) ? 3 : 2;
	nic->conf = *conf;
	atomic_limits(&nic->conf);
	nic->clients = calloc(conf->max_clients, sizeof(*nic->clients));
	nic->ops = calloc(conf->max_ops, sizeof(*nic->ops));
	nic->op_free = calloc(conf->max_ops, sizeof(*nic->op_free));
	if (nic->clients == NULL || nic->ops == NULL || nic->op_free == NULL) {
		ptl_aa_iotlb_fini(&nic->aa_tlb);
		free(nic->op_free);
		free(nic->ops);
		free(nic->clients);
		free(nic);
		return -ENOMEM;
	}
	/* slot 0 handed out first */
	for (i = 0; i < conf->max_ops; i++)
		nic->op_free[i] = conf->max_ops - 1 - i;
	nic->op_nfree = conf->max_ops;
	nic->op_seq = 1;
	/* without it ids are still unique, only guessable */
	if (getrandom(&nic->op_key, sizeof(nic->op_key), 0) !=
	    (ssize_t)sizeof(nic->op_key))
		nic->op_key = 0;
	*nic_p = nic;
	return 0;
}

void
ptl_nic_destroy(struct ptl_nic *nic)
{
	uint32_t i;

	if (nic == NULL)
		return;
	for (i = 0; i < nic->conf.max_clients; i++)
		if (nic->clients[i] != NULL)
			ptl_client_detach(nic, nic->clients[i]);
	ptl_aa_iotlb_fini(&nic->aa_tlb);
	free(nic->op_free);
	free(nic->ops);
	free(nic->clients);
	free(nic);
}

uint32_t
ptl_nic_nid(const struct ptl_nic *nic)
{
	return nic->conf.nid;
}

void
ptl_nic_stats_get(const struct ptl_nic *nic, struct ptl_nic_stats *stats_p)
{
	const uint64_t *src = (const uint64_t *)&nic->stats;
	uint64_t *dst = (uint64_t *)stats_p;
	size_t i;

	for (i = 0; i < sizeof(*stats_p) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

const char *
ptl_nic_stats_name(unsigned i)
{
	if (i >= sizeof(stats_names) / sizeof(stats_names[0]))
		return NULL;
	return stats_names[i];
}

int
ptl_errno_to_status(int err)
{
	switch (err) {
	case 0:
		return SPINNIC_PTL_OK;
	case -ENOSPC:
	case -ENOMEM:
		return SPINNIC_PTL_NO_SPACE;
	case -EADDRINUSE:
		return SPINNIC_PTL_PID_IN_USE;
	case -EBUSY:
		return SPINNIC_PTL_IN_USE;
	case -E2BIG:
		return SPINNIC_PTL_LIST_TOO_LONG;
	case -ENODEV:
	case -ESHUTDOWN:
		return SPINNIC_PTL_NO_INIT;
	case -EINTR:
		return SPINNIC_PTL_INTERRUPTED;
	case -ECANCELED:
		return SPINNIC_PTL_ABORTED;
	case -EINVAL:
	case -ERANGE:
	case -EBADF:
	case -EBADMSG:
	case -EFAULT:
		return SPINNIC_PTL_ARG_INVALID;
	default:
		return SPINNIC_PTL_FAIL;
	}
}

static int
region_check(const struct spinnic_region_hdr *h, size_t region_size)
{
	uint64_t ring_bytes;

	if (h->magic != SPINNIC_REGION_MAGIC ||
	    h->version != SPINNIC_ABI_VERSION ||
	    h->hdr_size != sizeof(struct spinnic_region_hdr) ||
	    h->size != region_size)
		return -EBADMSG;
	if (h->cmd_off < sizeof(struct spinnic_region_hdr) ||
	    h->cmd_off % 64 != 0 || !ptl_is_pow2(h->cmd_entries) ||
	    h->cmd_entries > (1u << 20))
		return -EBADMSG;
	ring_bytes = sizeof(struct spinnic_cmd_ring) +
		     (uint64_t)h->cmd_entries * sizeof(struct spinnic_cmd);
	if (!ptl_range_ok(h->cmd_off, ring_bytes, region_size))
		return -EBADMSG;
	if (h->heap_size != 0 && !ptl_range_ok(h->heap_off, h->heap_size,
					       region_size))
		return -EBADMSG;
	return 0;
}

int
ptl_client_attach(struct ptl_nic *nic, void *region, size_t region_size,
		  uint64_t base_va, pid_t os_pid, uid_t uid,
		  uint32_t want_pid, struct ptl_client **c_p)
{
	struct spinnic_region_hdr hdr;
	struct ptl_client *c;
	uint32_t pid;
	int rc;

	if (region == NULL || region_size < sizeof(hdr) ||
	    base_va + region_size < base_va || os_pid <= 0) {
		PTL_STAT(nic, bad_region);
		return -EINVAL;
	}
	/* copy the header out before checking it */
	memcpy(&hdr, region, sizeof(hdr));
	rc = region_check(&hdr, region_size);
	if (rc < 0) {
		PTL_STAT(nic, bad_region);
		PTL_LOG(NOTICE, "nic %u: attach of os pid %d refused: bad "
			"region header", nic->conf.nid, (int)os_pid);
		return rc;
	}
	if (want_pid != SPINNIC_PTL_PID_ANY && want_pid >= nic->conf.max_clients)
		return -ERANGE;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->nic = nic;
	c->refs = 1;
	c->alive = 1;
	c->uid = (uint32_t)uid;
	c->os_pid = os_pid;
	c->region = region;
	c->size = region_size;
	c->base_va = base_va;
	c->ring = (struct spinnic_cmd_ring *)((uint8_t *)region + hdr.cmd_off);
	c->cmd_entries = hdr.cmd_entries;
	c->cmd_tail = __atomic_load_n(&c->ring->tail, __ATOMIC_ACQUIRE);

	ptl_lock(&nic->lock);
	if (want_pid != SPINNIC_PTL_PID_ANY) {
		if (nic->clients[want_pid] != NULL) {
			ptl_unlock(&nic->lock);
			free(c);
			return -EADDRINUSE;
		}
		pid = want_pid;
	} else {
		/* pid 0 last: Open MPI reads a physical pid 0 as logical
		 * addressing, so PTL_PID_ANY hands it out only when nothing
		 * else is free (it stays available on request) */
		for (pid = 1; pid < nic->conf.max_clients; pid++)
			if (nic->clients[pid] == NULL)
				break;
		if (pid == nic->conf.max_clients && nic->clients[0] == NULL)
			pid = 0;
		if (pid == nic->conf.max_clients) {
			ptl_unlock(&nic->lock);
			free(c);
			return -ENOSPC;
		}
	}
	c->pid = pid;
	nic->clients[pid] = c;
	ptl_unlock(&nic->lock);
	PTL_STAT(nic, attached);
	PTL_STAT(nic, clients_live);
	PTL_STAT(nic, regions_live);
	PTL_STAT_ADD(nic, region_bytes, region_size);
	*c_p = c;
	return 0;
}

void
ptl_client_set_release(struct ptl_client *c,
		       void (*fn)(void *arg, void *region, size_t size),
		       void *arg)
{
	c->release = fn;
	c->release_arg = arg;
}

void
ptl_client_detach(struct ptl_nic *nic, struct ptl_client *c)
{
	unsigned k;

	ptl_lock(&nic->lock);
	if (!ptl_client_is_alive(c)) {
		ptl_unlock(&nic->lock);
		return;
	}
	__atomic_store_n(&c->alive, 0, __ATOMIC_RELEASE);
	if (c->pid < nic->conf.max_clients && nic->clients[c->pid] == c)
		nic->clients[c->pid] = NULL;
	for (k = 0; k < SPINNIC_WIRE_NI_KINDS; k++)
		if (c->ni[k].active)
			ptl_ni_teardown(c, k);
	ptl_unlock(&nic->lock);
	ptl_op_cancel_client(nic, c);
	PTL_STAT(nic, detached);
	ptl_client_put(c);
}

void
ptl_client_get(struct ptl_client *c)
{
	__atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
}

void
ptl_client_put(struct ptl_client *c)
{
	struct ptl_nic *nic;
	unsigned k;

	if (c == NULL)
		return;
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	nic = c->nic;
	for (k = 0; k < SPINNIC_WIRE_NI_KINDS; k++)
		ptl_ni_free_arrays(&c->ni[k]);
	ptl_aa_client_fini(c);
	if (c->release != NULL)
		c->release(c->release_arg, c->region, c->size);
	PTL_STAT_ADD(nic, region_bytes, -(uint64_t)c->size);
	PTL_STAT_ADD(nic, regions_live, -1ull);
	PTL_STAT_ADD(nic, clients_live, -1ull);
	free(c);
}

struct ptl_client *
ptl_client_lookup(struct ptl_nic *nic, uint32_t pid)
{
	struct ptl_client *c = NULL;

	if (pid >= nic->conf.max_clients)
		return NULL;
	ptl_lock(&nic->lock);
	c = nic->clients[pid];
	if (c != NULL)
		ptl_client_get(c);
	ptl_unlock(&nic->lock);
	return c;
}

struct spinnic_pid
ptl_client_id(const struct ptl_client *c)
{
	struct spinnic_pid id = { .nid = c->nic->conf.nid, .pid = c->pid };

	return id;
}

uint32_t
ptl_client_uid(const struct ptl_client *c)
{
	return c->uid;
}

bool
ptl_client_alive(const struct ptl_client *c)
{
	return ptl_client_is_alive(c);
}

void *
ptl_client_region_ptr(struct ptl_client *c, uint64_t off, uint64_t len)
{
	if (!ptl_range_ok(off, len, c->size))
		return NULL;
	return c->region + off;
}
