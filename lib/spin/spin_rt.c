/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sPIN runtime: messages, HERs and their scheduling on HPUs.
 *
 * Ordering (DESIGN §6) rests on one counter per message, `pending`: one
 * reference per queued or running HER, one per vHPU that is queued or
 * running, one per DMA in flight, and while bytes are still to arrive the
 * arrival bias SPIN_ARRIVAL_BIAS, which also stands for the payload HERs
 * of the packets delivered so far (no atomic per packet on the inbound
 * side): the last byte (or an abort) swaps it for their count, npkts_in,
 * and each payload HER drops one reference when done. The
 * header HER is queued at start; payload HERs arriving before the header
 * handler returned wait on the message's pend list; when `pending` drops
 * to zero the completion HER is queued (or the message finished directly).
 *
 * Default policy: payload HERs go to one MPMC ring any HPU takes from.
 * Blocked-RR: the packet with index i belongs to sequence i / Δp, sequence
 * s to vHPU s mod nv. A vHPU has its own FIFO; it sits in the MPMC vHPU
 * run ring at most once (state QUEUED) and runs on at most one HPU
 * (RUNNING); it yields (IDLE) when its FIFO is empty and is queued again
 * when a packet for it arrives (paper 000 §3.2.1).
 *
 * Outbound jobs (sender-side handlers) take a third MPMC ring, out_q;
 * an HPU runs them after the HERs it found, within the same budget, and
 * puts them on out_done (multi-producer, single consumer: the submitter).
 * Both rings hold every job that can be out (out_live <= max_out_jobs,
 * checked at submit), so an HPU never waits to hand one back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "spin_internal.h"

RTE_LOG_REGISTER_IMPL(spin_logtype, SPINNIC_LIB, NOTICE);

#define SPIN_BURST 32u
/* `pending` while packets arrive: more than any message's packets */
#define SPIN_ARRIVAL_BIAS (1u << 31)
/* payload bytes of the next HER prefetched */
#define SPIN_PREFETCH_MAX 1024u
/* HERs of a burst ahead of the running one whose payload is prefetched */
#define SPIN_PREFETCH_AHEAD 2u

static struct rte_ring *
ring_new(const char *name, unsigned count, int socket)
{
	ssize_t sz = rte_ring_get_memsize_elem(sizeof(void *),
					       rte_align32pow2(count + 1));
	struct rte_ring *r;

	if (sz < 0)
		return NULL;
	r = rte_zmalloc_socket(name, sz, RTE_CACHE_LINE_SIZE, socket);
	if (r == NULL)
		return NULL;
	/* not registered in the ring list: names need not be unique */
	if (rte_ring_init(r, name, count, RING_F_EXACT_SZ) != 0) {
		rte_free(r);
		return NULL;
	}
	return r;
}

bool spin_pool_fifo;

/* a free list of @p count objects, empty */
static int
pool_init(struct spin_pool *p, const char *name, unsigned count, int socket)
{
	memset(p, 0, sizeof(*p));
	if (spin_pool_fifo) {
		p->r = ring_new(name, count, socket);
		return p->r != NULL ? 0 : -ENOMEM;
	}
	rte_spinlock_init(&p->lock);
	p->cap = count;
	p->obj = rte_zmalloc_socket(name, (size_t)count * sizeof(void *),
				    RTE_CACHE_LINE_SIZE, socket);
	return p->obj != NULL ? 0 : -ENOMEM;
}

static void
pool_fini(struct spin_pool *p)
{
	rte_free(p->r);
	rte_free(p->obj);
	p->r = NULL;
	p->obj = NULL;
}

static int
conf_check(struct spin_rt_conf *c)
{
	const struct spin_handler_family *const *f, *const *g;

	if (c->nic_mem == 0)
		c->nic_mem = 16u << 20;
	if (c->nhpu == 0)
		c->nhpu = 1;
	if (c->max_msgs == 0)
		c->max_msgs = 256;
	if (c->max_hers == 0)
		c->max_hers = 8192;
	if (c->max_ctxs == 0)
		c->max_ctxs = 1024;
	if (c->max_blobs == 0)
		c->max_blobs = 1024;
	if (c->max_owners == 0)
		c->max_owners = 64;
	if (c->max_vhpus == 0)
		c->max_vhpus = 64;
	if (c->max_out_jobs == 0)
		c->max_out_jobs = 1024;
	if (c->pkt_payload == 0)
		c->pkt_payload = 2048;
	if (c->handler_time_every > (1u << 20)) {
		SPIN_LOG(ERR, "handler timing of one call in %u (max 2^20)",
			 c->handler_time_every);
		return -EINVAL;
	}
	if (c->handler_trace > SPIN_TRACE_MAX) {
		SPIN_LOG(ERR, "handler trace of %u entries (max %u)",
			 c->handler_trace, SPIN_TRACE_MAX);
		return -EINVAL;
	}
	if (c->socket_id == 0)
		c->socket_id = SOCKET_ID_ANY;
	if (c->nhpu > SPIN_RT_HPUS_MAX || c->max_ctxs > SPIN_IDX_MAX ||
	    c->max_blobs > SPIN_IDX_MAX || c->max_msgs > (1u << 20) ||
	    c->max_hers > (1u << 24) || c->max_vhpus > 4096 ||
	    c->max_out_jobs > (1u << 20) ||
	    (uint64_t)c->max_msgs * c->max_vhpus > (1u << 24)) {
		SPIN_LOG(ERR, "configuration out of range");
		return -EINVAL;
	}
	if (c->ops == NULL || c->ops->dma_write == NULL ||
	    c->ops->dma_read == NULL || c->ops->msg_done == NULL ||
	    c->ops->pkt_release == NULL) {
		SPIN_LOG(ERR, "host ops incomplete");
		return -EINVAL;
	}
	if (c->families == NULL) {
		SPIN_LOG(ERR, "no handler family table");
		return -EINVAL;
	}
	for (f = c->families; *f != NULL; f++) {
		const struct spin_handler_family *h = *f;
		const char *why;

		if (spin_family_check(h, &why) != 0) {
			SPIN_LOG(ERR, "handler family %u: %s",
				 (unsigned)(f - c->families), why);
			return -EINVAL;
		}
		for (g = c->families; g != f; g++)
			if (strcmp((*g)->name, h->name) == 0) {
				SPIN_LOG(ERR, "handler family %s twice",
					 h->name);
				return -EINVAL;
			}
	}
	return 0;
}

struct spin_rt *
spin_rt_create(const struct spin_rt_conf *conf)
{
	struct spin_rt *rt;
	unsigned i;
	int rc;

	rt = rte_zmalloc("spin_rt", sizeof(*rt), RTE_CACHE_LINE_SIZE);
	if (rt == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rt->conf = *conf;
	rc = conf_check(&rt->conf);
	if (rc != 0)
		goto fail_conf;
	rt->ops = *rt->conf.ops;
	rc = spin_arena_init(&rt->arena, rt->conf.nic_mem,
			     rt->conf.max_ctxs + rt->conf.max_blobs,
			     rt->conf.max_owners, rt->conf.nic_mem_per_owner);
	if (rc != 0)
		goto fail_conf;
	rc = spin_objs_init(rt);
	if (rc != 0)
		goto fail_objs;
	rc = spin_hstats_init(rt);
	if (rc != 0)
		goto fail_hstats;
	rc = -ENOMEM;
	rt->msgs = rte_zmalloc_socket("spin_msgs",
			rt->conf.max_msgs * sizeof(*rt->msgs),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	rt->vhpus = rte_zmalloc_socket("spin_vhpus", (size_t)rt->conf.max_msgs *
			rt->conf.max_vhpus * sizeof(*rt->vhpus),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	rt->hers = rte_zmalloc_socket("spin_hers",
			rt->conf.max_hers * sizeof(*rt->hers),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	pool_init(&rt->msg_pool, "spin_msgp", rt->conf.max_msgs,
		  rt->conf.socket_id);
	pool_init(&rt->her_pool, "spin_herp", rt->conf.max_hers,
		  rt->conf.socket_id);
	/* every payload HER plus header and completion of every message */
	rt->her_q = ring_new("spin_herq",
			     rt->conf.max_hers + 2 * rt->conf.max_msgs,
			     rt->conf.socket_id);
	rt->vhpu_q = ring_new("spin_vhpuq",
			      rt->conf.max_msgs * rt->conf.max_vhpus,
			      rt->conf.socket_id);
	rt->out_q = ring_new("spin_outq", rt->conf.max_out_jobs,
			     rt->conf.socket_id);
	rt->out_done = ring_new("spin_outd", rt->conf.max_out_jobs,
				rt->conf.socket_id);
	if (rt->msgs == NULL || rt->vhpus == NULL || rt->hers == NULL ||
	    (rt->msg_pool.r == NULL && rt->msg_pool.obj == NULL) ||
	    (rt->her_pool.r == NULL && rt->her_pool.obj == NULL) ||
	    rt->her_q == NULL || rt->vhpu_q == NULL || rt->out_q == NULL ||
	    rt->out_done == NULL)
		goto fail_mem;
	for (i = 0; i < rt->conf.max_msgs; i++) {
		struct spin_msg_int *m = &rt->msgs[i];

		m->rt = rt;
		m->slot = i;
		m->vhpu = &rt->vhpus[(size_t)i * rt->conf.max_vhpus];
		rte_spinlock_init(&m->lock);
	}
	/* taken in slot order at first, from either kind of pool */
	for (i = 0; i < rt->conf.max_msgs; i++)
		spin_pool_put(&rt->msg_pool, &rt->msgs[spin_pool_fifo ? i :
				rt->conf.max_msgs - 1 - i]);
	for (i = 0; i < rt->conf.max_hers; i++)
		spin_pool_put(&rt->her_pool, &rt->hers[spin_pool_fifo ? i :
				rt->conf.max_hers - 1 - i]);
	SPIN_LOG(DEBUG, "runtime: %u HPUs, %" PRIu64 " B NIC memory",
		 rt->conf.nhpu, rt->arena.cap);
	return rt;

fail_mem:
	rte_free(rt->out_done);
	rte_free(rt->out_q);
	rte_free(rt->vhpu_q);
	rte_free(rt->her_q);
	pool_fini(&rt->her_pool);
	pool_fini(&rt->msg_pool);
	rte_free(rt->hers);
	rte_free(rt->vhpus);
	rte_free(rt->msgs);
	spin_hstats_fini(rt);
fail_hstats:
	spin_objs_fini(rt);
fail_objs:
	spin_arena_fini(&rt->arena);
fail_conf:
	rte_free(rt);
	errno = -rc;
	return NULL;
}

static void her_put(struct spin_rt *rt, struct spin_her *her);

void
spin_rt_destroy(struct spin_rt *rt)
{
	void *p;
	unsigned i;

	if (rt == NULL)
		return;
	/* packets still referenced by queued HERs go back to the app */
	while (rte_ring_dequeue(rt->her_q, &p) == 0) {
		struct spin_her *her = p;

		if (her->kind == SPIN_HER_PAYLOAD)
			her_put(rt, her);
	}
	while (rte_ring_dequeue(rt->vhpu_q, &p) == 0) {
		struct spin_vhpu *v = p;

		while (v->head != NULL) {
			struct spin_her *her = v->head;

			v->head = her->next;
			her_put(rt, her);
		}
	}
	for (i = 0; i < rt->conf.max_msgs; i++) {
		struct spin_msg_int *m = &rt->msgs[i];

		while (m->pend_head != NULL) {
			struct spin_her *her = m->pend_head;

			m->pend_head = her->next;
			if (her->kind == SPIN_HER_PAYLOAD)
				her_put(rt, her);
		}
	}
	/* outbound jobs still out are the app's memory: not touched (their
	 * context references go with the tables) */
	rte_free(rt->out_done);
	rte_free(rt->out_q);
	rte_free(rt->vhpu_q);
	rte_free(rt->her_q);
	pool_fini(&rt->her_pool);
	pool_fini(&rt->msg_pool);
	rte_free(rt->hers);
	rte_free(rt->vhpus);
	rte_free(rt->msgs);
	spin_hstats_fini(rt);
	spin_objs_fini(rt);
	spin_arena_fini(&rt->arena);
	rte_free(rt);
}

unsigned
spin_rt_nhpu(const struct spin_rt *rt)
{
	return rt->conf.nhpu;
}

/* ---- messages -------------------------------------------------------------- */

/* release a payload HER and its packet */
static void
her_put(struct spin_rt *rt, struct spin_her *her)
{
	rt->ops.pkt_release(her->cookie);
	spin_pool_put(&rt->her_pool, her);
}

static void
msg_finish(struct spin_msg_int *m)
{
	struct spin_rt *rt = m->rt;
	struct spin_msg_result r;
	uint32_t fl = __atomic_load_n(&m->flags, __ATOMIC_ACQUIRE);

	r = m->res;
	r.flags = fl;
	r.bytes = m->bytes_in;
	r.npkts = m->npkts_in;
	if (fl & SPIN_MF_DROPPED)
		r.status = SPIN_DROP;
	else if (r.handler_errors || r.dma_rejects || r.dma_failures)
		r.status = SPIN_ERROR;
	else
		r.status = SPIN_SUCCESS;
	if (fl & SPIN_MF_ABORTED)
		SPIN_ATOMIC_ADD(&rt->msgs_aborted, 1);
	SPIN_ATOMIC_ADD(&rt->msgs_done, 1);
	rt->ops.msg_done(m->app_msg, &r);
	spin_ctx_unref(rt, m->ctx);
	m->ctx = NULL;
	spin_pool_put(&rt->msg_pool, m);
}

/*
 * Drop one `pending` reference; the last one queues the completion HER,
 * which runs the completion handler (if any and wanted) and msg_done on an
 * HPU, never on the inbound engine's thread.
 */
static void
msg_put_n(struct spin_msg_int *m, uint32_t n)
{
	if (__atomic_sub_fetch(&m->pending, n, __ATOMIC_ACQ_REL) != 0)
		return;
	m->cmpl_her.kind = SPIN_HER_COMPLETION;
	m->cmpl_her.m = m;
	rte_ring_enqueue(m->rt->her_q, &m->cmpl_her);
}

/* ---- the HPU's batch (spin_internal.h) ---------------------------------------- */

/* packets of the batch back to the app, their HERs to the pool */
static void
batch_release(struct spin_rt *rt, struct spin_batch *b)
{
	unsigned i;

	if (rt->ops.pkt_release_burst != NULL) {
		rt->ops.pkt_release_burst(b->cookies, b->nrel);
	} else {
		for (i = 0; i < b->nrel; i++)
			rt->ops.pkt_release(b->cookies[i]);
	}
	/* the pool holds every HER: never full */
	spin_pool_put_bulk(&rt->her_pool, (void **)b->rel, b->nrel);
	b->nrel = 0;
}

/*
 * Give the batch to its message: packets released first, then counters
 * to the message and its context, then the `pending` references, so that
 * msg_done (after the last reference) sees every count and every packet
 * of the message was released before it.
 */
void
spin_batch_flush(struct spin_rt *rt, struct spin_hpu *hpu)
{
	struct spin_batch *b = &hpu->b;
	struct spin_msg_int *m = b->m;
	struct spin_ctx *c;
	uint32_t puts;
	unsigned i;

	if (m == NULL)
		return;
	c = m->ctx;
	if (b->nrel != 0)
		batch_release(rt, b);
	if (b->dma_bytes != 0) {
		SPIN_ATOMIC_ADD(&m->res.dma_bytes, b->dma_bytes);
		SPIN_ATOMIC_ADD(&c->dma_bytes, b->dma_bytes);
		b->dma_bytes = 0;
	}
	if (b->dma_events != 0) {
		SPIN_ATOMIC_ADD(&m->res.dma_events, b->dma_events);
		b->dma_events = 0;
	}
	if (b->kmask != 0) {
		for (i = 0; i < RTE_DIM(b->hk); i++)
			if (b->kmask & (1u << i))
				spin_hacc_flush(&c->hk[i], &b->hk[i]);
		b->kmask = 0;
		if (b->h_dma_to != 0)
			SPIN_ATOMIC_ADD(&c->h_dma_to, b->h_dma_to);
		if (b->h_dma_from != 0)
			SPIN_ATOMIC_ADD(&c->h_dma_from, b->h_dma_from);
		b->h_dma_to = b->h_dma_from = 0;
	}
	puts = b->puts;
	b->puts = 0;
	b->m = NULL;
	if (puts != 0)
		msg_put_n(m, puts);
}

/* a payload HER of @p m done on this HPU: release it and its reference */
static void
batch_her_done(struct spin_rt *rt, struct spin_hpu *hpu,
	       struct spin_msg_int *m, struct spin_her *her)
{
	struct spin_batch *b = spin_batch_for(rt, hpu, m);

	if (b->nrel == SPIN_REL_BURST)
		batch_release(rt, b);
	b->rel[b->nrel] = her;
	b->cookies[b->nrel] = her->cookie;
	b->nrel++;
	b->puts++;
}

static struct spin_vhpu *
vhpu_of(struct spin_msg_int *m, const struct spin_her *her)
{
	uint64_t seq = spin_div(spin_pkt_index(m, her->offset), m->delta_p,
				m->dp_log2);

	return &m->vhpu[m->nv_log2 != SPIN_NOT_POW2 ? seq & (m->nv - 1) :
			seq % m->nv];
}

/* append the chain first..last (in order) to vHPU @p v, schedule it */
static void
vhpu_append(struct spin_msg_int *m, struct spin_vhpu *v,
	    struct spin_her *first, struct spin_her *last)
{
	bool sched = false;

	last->next = NULL;
	rte_spinlock_lock(&v->lock);
	if (v->tail != NULL)
		v->tail->next = first;
	else
		v->head = first;
	v->tail = last;
	if (v->state == SPIN_VHPU_IDLE) {
		v->state = SPIN_VHPU_QUEUED;
		sched = true;
		/* an active vHPU keeps the message (and itself) alive */
		__atomic_fetch_add(&m->pending, 1, __ATOMIC_RELAXED);
	}
	rte_spinlock_unlock(&v->lock);
	if (sched)
		rte_ring_enqueue(m->rt->vhpu_q, v);
}

/* queue a HER whose header dependency is satisfied */
static void
her_dispatch(struct spin_msg_int *m, struct spin_her *her)
{
	if (her->kind != SPIN_HER_PAYLOAD || m->nv == 0) {
		rte_ring_enqueue(m->rt->her_q, her);
		return;
	}
	vhpu_append(m, vhpu_of(m, her), her, her);
}

struct spin_msg *
spin_msg_start(struct spin_rt *rt, uint32_t ctx,
	       const struct spin_msg_info *info, void *host,
	       uint64_t win_addr, uint64_t win_len, void *app_msg)
{
	struct spin_msg_int *m;
	struct spin_ctx *c;
	void *p;
	unsigned i;

	c = spin_ctx_ref(rt, ctx);
	if (c == NULL) {
		errno = ENOENT;
		return NULL;
	}
	if (spin_pool_get_burst(&rt->msg_pool, &p, 1) == 0) {
		spin_ctx_unref(rt, c);
		SPIN_ATOMIC_ADD(&rt->msg_full, 1);
		errno = ENOBUFS;
		return NULL;
	}
	m = p;
	m->ctx = c;
	m->host = host;
	m->app_msg = app_msg;
	m->win_addr = win_addr;
	m->win_len = win_len;
	m->info = *info;
	m->pkt_payload = info->pkt_payload ? info->pkt_payload :
		rt->conf.pkt_payload;
	m->info.pkt_payload = m->pkt_payload;
	m->pp_log2 = spin_log2_or_none(m->pkt_payload);
	m->bytes_in = 0;
	m->npkts_in = 0;
	m->arrival_held = true;
	m->flags = 0;
	m->pend_head = m->pend_tail = NULL;
	memset(&m->res, 0, sizeof(m->res));
	m->pay_errors = 0;
	m->nv = 0;
	if (c->policy == SPINNIC_SCHED_BLOCKED_RR) {
		uint64_t npkts = (info->length + m->pkt_payload - 1) /
			m->pkt_payload;
		uint64_t nseq = (RTE_MAX(npkts, (uint64_t)1) + c->delta_p - 1) /
			c->delta_p;

		m->delta_p = c->delta_p;
		m->nv = c->nvhpu != 0 ? c->nvhpu :
			(uint32_t)RTE_MIN(nseq, rt->conf.max_vhpus);
		m->dp_log2 = spin_log2_or_none(m->delta_p);
		m->nv_log2 = spin_log2_or_none(m->nv);
		for (i = 0; i < m->nv; i++) {
			struct spin_vhpu *v = &m->vhpu[i];

			rte_spinlock_init(&v->lock);
			v->state = SPIN_VHPU_IDLE;
			v->id = i;
			v->m = m;
			v->head = v->tail = NULL;
		}
	}
	SPIN_ATOMIC_ADD(&c->msgs, 1);
	SPIN_ATOMIC_ADD(&rt->msgs_started, 1);
	if (c->fam->header != NULL) {
		m->hdr_done = false;
		m->pending = SPIN_ARRIVAL_BIAS + 1; /* + header HER */
		m->hdr_her.kind = SPIN_HER_HEADER;
		m->hdr_her.m = m;
		rte_ring_enqueue(rt->her_q, &m->hdr_her);
	} else {
		m->hdr_done = true;
		m->pending = SPIN_ARRIVAL_BIAS;
	}
	return (struct spin_msg *)m;
}

int
spin_msg_packet(struct spin_msg *msg, const void *payload, uint32_t len,
		uint64_t offset, void *pkt_cookie)
{
	const struct spin_pkt_in p = {
		.payload = payload, .cookie = pkt_cookie, .offset = offset,
		.len = len,
	};
	int err;

	spin_msg_packet_burst(msg, &p, 1, &err);
	return err;
}

/*
 * No more packets: the arrival bias gives way to one reference per HER
 * delivered (some may have run already, each dropped one).
 */
static void
arrival_end(struct spin_msg_int *m)
{
	m->arrival_held = false;
	msg_put_n(m, SPIN_ARRIVAL_BIAS - m->npkts_in);
}

/* queue HERs of one message whose packets were taken, in order */
static void
hers_queue(struct spin_msg_int *m, struct spin_her **hers, unsigned n)
{
	bool wait = false;
	unsigned i;

	if (!__atomic_load_n(&m->hdr_done, __ATOMIC_ACQUIRE)) {
		rte_spinlock_lock(&m->lock);
		wait = !m->hdr_done;
		if (wait) {
			for (i = 0; i < n; i++) {
				if (m->pend_tail != NULL)
					m->pend_tail->next = hers[i];
				else
					m->pend_head = hers[i];
				m->pend_tail = hers[i];
			}
		}
		rte_spinlock_unlock(&m->lock);
	}
	if (wait)
		return;
	if (m->nv == 0) {
		/* sized for every HER: never short */
		rte_ring_enqueue_bulk(m->rt->her_q, (void **)hers, n, NULL);
		return;
	}
	/* blocked-RR: packets of one vHPU in a row go in one append */
	for (i = 0; i < n;) {
		struct spin_vhpu *v = vhpu_of(m, hers[i]);
		unsigned j = i + 1;

		while (j < n && vhpu_of(m, hers[j]) == v) {
			hers[j - 1]->next = hers[j];
			j++;
		}
		vhpu_append(m, v, hers[i], hers[j - 1]);
		i = j;
	}
}

unsigned
spin_msg_packet_burst(struct spin_msg *msg, const struct spin_pkt_in *pkts,
		      unsigned n, int *err_p)
{
	struct spin_msg_int *m = (struct spin_msg_int *)msg;
	struct spin_rt *rt = m->rt;
	const uint64_t length = m->info.length;
	struct spin_her *hers[SPIN_BURST];
	unsigned done = 0;
	int err = 0;

	while (done < n && err == 0) {
		unsigned want = RTE_MIN(n - done, SPIN_BURST), k, g, i;
		uint64_t bytes = m->bytes_in;
		uint32_t room = SPIN_ARRIVAL_BIAS - 1 - m->npkts_in;
		bool full = !m->arrival_held, bad = false;

		/* the prefix of packets that fit the message */
		for (k = 0; k < want; k++) {
			const struct spin_pkt_in *d = &pkts[done + k];

			if (full || k == room || d->offset > length ||
			    d->len > length - d->offset ||
			    (d->len == 0) != (length == 0)) {
				bad = true;
				break;
			}
			bytes += d->len;
			full = bytes >= length;
		}
		g = k == 0 ? 0 : spin_pool_get_burst(&rt->her_pool,
						     (void **)hers, k);
		for (i = 0; i < g; i++) {
			const struct spin_pkt_in *d = &pkts[done + i];
			struct spin_her *her = hers[i];

			her->next = NULL;
			her->m = m;
			her->payload = d->payload;
			her->cookie = d->cookie;
			her->offset = d->offset;
			her->len = d->len;
			her->kind = SPIN_HER_PAYLOAD;
			m->bytes_in += d->len;
		}
		if (g != 0) {
			/* the arrival bias covers the new HERs' references */
			m->npkts_in += g;
			hers_queue(m, hers, g);
			done += g;
			if (m->bytes_in >= length)
				arrival_end(m);
		}
		if (g < k) {
			SPIN_ATOMIC_ADD(&rt->her_full, 1);
			err = -ENOBUFS;
		} else if (bad) {
			SPIN_ATOMIC_ADD(&rt->pkt_rejects, 1);
			err = -EINVAL;
		}
	}
	if (err_p != NULL)
		*err_p = err;
	return done;
}

void
spin_msg_abort(struct spin_msg *msg)
{
	struct spin_msg_int *m = (struct spin_msg_int *)msg;

	__atomic_fetch_or(&m->flags, SPIN_MF_ABORTED, __ATOMIC_RELEASE);
	if (m->arrival_held)
		arrival_end(m);
}

/* ---- HPUs -------------------------------------------------------------------- */

/* The handler call of context @p c over window [win_addr, +win_len) of
 * @p host: for message @p m, or (m NULL) an outbound job. */
static inline void
exec_setup(struct spin_exec *x, struct spin_rt *rt, struct spin_ctx *c,
	   struct spin_msg_int *m, void *host, uint64_t win_addr,
	   uint64_t win_len, const struct spin_msg_info *info,
	   struct spin_hpu *hpu, unsigned hpu_id, uint32_t vhpu)
{
	uint8_t *mem = rt->arena.base + c->o.mem_off;

	x->h.win_addr = win_addr;
	x->h.win_len = win_len;
	x->h.args = c->args_len ? mem : NULL;
	x->h.args_len = c->args_len;
	x->h.state = c->state_len ? mem + spin_round(c->args_len) : NULL;
	x->h.state_len = c->state_len;
	x->h.hpu = hpu_id;
	x->h.nhpu = rt->conf.nhpu;
	x->h.vhpu = vhpu;
	x->h.info = info;
	x->rt = rt;
	x->m = m;
	x->ctx = c;
	x->host = host;
	x->hpu = hpu;
	x->nblobs = 0;
	x->access = false;
	x->err = false;
	x->dma_err = 0;
	x->dma_events = 0;
	x->dma_inflight = 0;
	x->dma_bytes = 0;
	x->dma_from = 0;
	x->win_map = SPIN_WIN_UNMAPPED;
	x->win_base = NULL;
}

static void
exec_init(struct spin_exec *x, struct spin_rt *rt, struct spin_msg_int *m,
	  struct spin_hpu *hpu, unsigned hpu_id, uint32_t vhpu)
{
	exec_setup(x, rt, m->ctx, m, m->host, m->win_addr, m->win_len,
		   &m->info, hpu, hpu_id, vhpu);
}

static unsigned
rc_index(int rc)
{
	return rc >= SPIN_SUCCESS && rc <= SPIN_ERROR ? (unsigned)rc :
		SPIN_ERROR;
}

/*
 * Count one handler invocation of kind @p kind with outcome @p rc that ran
 * from @p t0 to @p t1 (rte_rdtsc() around the callback): the family's
 * counters of this HPU; the context's in the HPU's batch (a message) or
 * outbound accumulator (a job; the caller set hpu->oa.c); the budget; the
 * trace. Before spin_exec_release(), which moves x->dma_bytes away.
 */
static inline void
count_call(struct spin_exec *x, unsigned kind, unsigned rc, uint64_t t0,
	   uint64_t t1, uint64_t off, uint32_t len)
{
	struct spin_hpu *hpu = x->hpu;
	struct spin_ctx *c = x->ctx;
	struct spin_fstat *f = &hpu->fst[c->fam_idx];
	uint64_t dt = (int64_t)(t1 - t0) > 0 ? t1 - t0 : 0;
	unsigned bk = spin_hist_bucket(dt);
	struct spin_hacc *ca;

	spin_hacc_add(&f->k[kind], rc, dt, bk);
	f->dma_to += x->dma_bytes;
	f->dma_from += x->dma_from;
	if (x->m != NULL) {
		struct spin_batch *b = spin_batch_for(x->rt, hpu, x->m);

		ca = &b->hk[kind];
		b->kmask |= 1u << kind;
		b->h_dma_to += x->dma_bytes;
		b->h_dma_from += x->dma_from;
	} else {
		ca = &hpu->oa.a;
		hpu->oa.h_dma_from += x->dma_from;
	}
	spin_hacc_add(ca, rc, dt, bk);
	ca->hmask |= 1ull << bk;
	if (unlikely(dt > x->rt->budget_cyc))
		spin_hstats_over_budget(x, kind, t1, dt, ca);
	if (unlikely(c->trace != NULL))
		spin_trace_put(x, kind, rc, t0, dt, off, len);
}

/*
 * Count @p n payload invocations that were not timed (one call of the
 * payload handler, n = 1, or of payload_burst), outcomes rc[]: each
 * outcome and the call's DMA bytes where count_call() puts them, no
 * duration, histogram or budget.
 */
static inline void
count_untimed(struct spin_exec *x, const unsigned *rc, unsigned n)
{
	struct spin_hpu *hpu = x->hpu;
	struct spin_fstat *f = &hpu->fst[x->ctx->fam_idx];
	struct spin_batch *b = spin_batch_for(x->rt, hpu, x->m);
	uint64_t to = x->dma_bytes, from = x->dma_from;
	unsigned i;

	for (i = 0; i < n; i++) {
		f->k[SPIN_HK_PAYLOAD].rc[rc[i]]++;
		b->hk[SPIN_HK_PAYLOAD].rc[rc[i]]++;
	}
	b->kmask |= 1u << SPIN_HK_PAYLOAD;
	/*
	 * Scalar loads, one per field: the handler's DMAs just stored each
	 * with its own 8-byte store, and one 16-byte load of both (what the
	 * compiler makes of the two sums) cannot be forwarded from them
	 * (a store-forwarding stall, ~10% of a 2 KiB packet's time here).
	 */
	f->dma_to += to;
	b->h_dma_to += to;
	if (unlikely(from != 0)) {
		f->dma_from += from;
		b->h_dma_from += from;
	}
}

/*
 * Whether this payload invocation is timed: every one with time_mask 0
 * (conf.handler_time_every 0 or 1), a trace, or after a burst over the
 * budget (hpu->time_all), else when the HPU's xorshift32 draws 0 under
 * the mask: random, so that a message of N packets does not have the
 * same packet timed every time.
 */
static inline bool
payload_timed(const struct spin_rt *rt, struct spin_hpu *hpu,
	      const struct spin_ctx *c)
{
	uint32_t r;

	if (rt->time_mask == 0 || c->trace != NULL)
		return true;
	if (unlikely(hpu->time_all != 0)) {
		hpu->time_all--;
		return true;
	}
	r = hpu->time_rnd;
	r ^= r << 13;
	r ^= r >> 17;
	r ^= r << 5;
	hpu->time_rnd = r;
	return (r & rt->time_mask) == 0;
}

/* the HPU's counters of a header, payload or completion handler */
static inline void
count_rc(struct spin_exec *x, unsigned rc)
{
	x->hpu->st.rc[rc]++;
	x->hpu->st.hers++;
}

static void
run_header(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	   struct spin_msg_int *m)
{
	struct spin_her *her, *next;
	struct spin_exec x;

	if (__atomic_load_n(&m->flags, __ATOMIC_ACQUIRE) & SPIN_MF_ABORTED) {
		hpu->st.skipped++;
	} else {
		struct spin_hdr hdr = { .info = &m->info };
		uint64_t t0, t1;
		unsigned rc;

		exec_init(&x, rt, m, hpu, hpu_id, SPIN_VHPU_NONE);
		t0 = rte_rdtsc();
		rc = rc_index(m->ctx->fam->header(&hdr, &x.h));
		t1 = rte_rdtsc();
		if (x.err && rc == SPIN_SUCCESS)
			rc = SPIN_ERROR;
		count_call(&x, SPIN_HK_HEADER, rc, t0, t1, 0,
			   (uint32_t)RTE_MIN(m->info.length, UINT32_MAX));
		spin_exec_release(&x);
		count_rc(&x, rc);
		hpu->st.hdr++;
		if (rc == SPIN_ERROR)
			SPIN_ATOMIC_ADD(&m->res.handler_errors, 1);
		else if (rc == SPIN_DROP)
			__atomic_fetch_or(&m->flags, SPIN_MF_DROPPED,
					  __ATOMIC_RELEASE);
		else if (rc == SPIN_PROCEED)
			__atomic_fetch_or(&m->flags, SPIN_MF_PROCEED,
					  __ATOMIC_RELEASE);
	}
	rte_spinlock_lock(&m->lock);
	__atomic_store_n(&m->hdr_done, true, __ATOMIC_RELEASE);
	her = m->pend_head;
	m->pend_head = m->pend_tail = NULL;
	rte_spinlock_unlock(&m->lock);
	for (; her != NULL; her = next) {
		next = her->next;
		her_dispatch(m, her);
	}
	spin_batch_for(rt, hpu, m)->puts++;
}

/*
 * What follows a payload outcome @p rc of @p her: the non-processing
 * path for SPIN_PROCEED, the message's counters, the HER done. @p x is
 * the call's context, released.
 */
static inline void
payload_outcome(struct spin_rt *rt, struct spin_hpu *hpu,
		struct spin_exec *x, struct spin_msg_int *m,
		struct spin_her *her, unsigned rc)
{
	hpu->st.pay++;
	switch (rc) {
	case SPIN_PROCEED:
		/* the non-processing path: payload to the window at offset */
		SPIN_ATOMIC_ADD(&m->res.proceed_pkts, 1);
		x->err = false;
		spin_dma_write_win(x, her->offset, her->payload, her->len,
				   SPIN_DMA_NO_EVENT);
		spin_exec_release(x);
		if (x->err)
			SPIN_ATOMIC_ADD(&m->pay_errors, 1);
		break;
	case SPIN_DROP:
		SPIN_ATOMIC_ADD(&m->res.dropped_pkts, 1);
		break;
	case SPIN_ERROR:
		SPIN_ATOMIC_ADD(&m->res.handler_errors, 1);
		SPIN_ATOMIC_ADD(&m->pay_errors, 1);
		break;
	default:
		break;
	}
	batch_her_done(rt, hpu, m, her);
}

static inline struct spin_pkt
pkt_of(const struct spin_msg_int *m, const struct spin_her *her)
{
	return (struct spin_pkt){
		.payload = her->payload,
		.len = her->len,
		.index = (uint32_t)spin_pkt_index(m, her->offset),
		.offset = her->offset,
		.info = &m->info,
	};
}

/*
 * One payload HER through the family's payload handler. @p timed: 1 time
 * the call, 0 not, -1 payload_timed() decides (when there is a call).
 */
static void
run_payload(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	    struct spin_her *her, uint32_t vhpu, int timed)
{
	struct spin_msg_int *m = her->m;
	uint32_t fl = __atomic_load_n(&m->flags, __ATOMIC_ACQUIRE);
	spin_payload_fn fn = m->ctx->fam->payload;
	struct spin_exec x;
	unsigned rc;

	if (fl & (SPIN_MF_ABORTED | SPIN_MF_DROPPED)) {
		hpu->st.skipped++;
		batch_her_done(rt, hpu, m, her);
		return;
	}
	exec_init(&x, rt, m, hpu, hpu_id, vhpu);
	if (fn != NULL && !(fl & SPIN_MF_PROCEED)) {
		struct spin_pkt pkt = pkt_of(m, her);
		uint64_t t0, t1;

		if (timed < 0)
			timed = payload_timed(rt, hpu, m->ctx);
		if (timed) {
			t0 = rte_rdtsc();
			rc = rc_index(fn(&pkt, &x.h));
			t1 = rte_rdtsc();
			if (x.err && rc == SPIN_SUCCESS)
				rc = SPIN_ERROR;
			count_call(&x, SPIN_HK_PAYLOAD, rc, t0, t1,
				   her->offset, her->len);
		} else {
			rc = rc_index(fn(&pkt, &x.h));
			if (x.err && rc == SPIN_SUCCESS)
				rc = SPIN_ERROR;
			count_untimed(&x, &rc, 1);
		}
		spin_exec_release(&x);
		count_rc(&x, rc);
	} else {
		/* no payload handler or header said proceed */
		rc = SPIN_PROCEED;
	}
	payload_outcome(rt, hpu, &x, m, her, rc);
}

/*
 * Whether payload HERs of @p m may go through its family's payload_burst
 * now: the family has one, calls are sampled (with every call timed, or a
 * trace, each goes alone), and no flag changes the path.
 */
static inline bool
burst_ok(const struct spin_rt *rt, const struct spin_msg_int *m)
{
	const struct spin_ctx *c = m->ctx;

	return c->fam->payload_burst != NULL && rt->time_mask != 0 &&
	       c->trace == NULL &&
	       !(__atomic_load_n(&m->flags, __ATOMIC_ACQUIRE) &
		 (SPIN_MF_ABORTED | SPIN_MF_DROPPED | SPIN_MF_PROCEED));
}

/*
 * Payload HERs hers[0..n) of one message (2 <= n <= SPIN_PAYLOAD_BURST_MAX,
 * burst_ok) in one payload_burst call: one context, one count of its DMAs,
 * each packet's outcome counted and followed as run_payload's.
 */
static void
run_payload_burst(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
		  struct spin_her *const *hers, unsigned n, uint32_t vhpu)
{
	struct spin_msg_int *m = hers[0]->m;
	struct spin_pkt pkts[SPIN_PAYLOAD_BURST_MAX];
	int rcs[SPIN_PAYLOAD_BURST_MAX];
	unsigned rc[SPIN_PAYLOAD_BURST_MAX];
	struct spin_exec x;
	unsigned i;

	RTE_VERIFY(n >= 2 && n <= SPIN_PAYLOAD_BURST_MAX);
	exec_init(&x, rt, m, hpu, hpu_id, vhpu);
	for (i = 0; i < n; i++) {
		pkts[i] = pkt_of(m, hers[i]);
		rcs[i] = SPIN_ERROR;
	}
	m->ctx->fam->payload_burst(pkts, n, rcs, &x.h);
	for (i = 0; i < n; i++) {
		rc[i] = rc_index(rcs[i]);
		if (x.err && rc[i] == SPIN_SUCCESS)
			rc[i] = SPIN_ERROR;
	}
	count_untimed(&x, rc, n);
	spin_exec_release(&x);
	for (i = 0; i < n; i++) {
		count_rc(&x, rc[i]);
		payload_outcome(rt, hpu, &x, m, hers[i], rc[i]);
	}
	hpu->st.bursts++;
}

/*
 * Payload HERs hers[0..n) of one message, in this order (burst_ok): in
 * payload_burst calls of up to SPIN_PAYLOAD_BURST_MAX, each run cut
 * before a packet the runtime times, which goes alone through payload.
 */
static void
run_payload_run(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
		struct spin_her *const *hers, unsigned n, uint32_t vhpu)
{
	unsigned i = 0;

	while (i < n) {
		unsigned j = i;
		bool timed = false;

		while (j < n && j - i < SPIN_PAYLOAD_BURST_MAX) {
			timed = payload_timed(rt, hpu, hers[j]->m->ctx);
			if (timed)
				break;
			j++;
		}
		if (j - i >= 2)
			run_payload_burst(rt, hpu, hpu_id, hers + i, j - i,
					  vhpu);
		else if (j - i == 1)
			run_payload(rt, hpu, hpu_id, hers[i], vhpu, 0);
		if (timed)
			run_payload(rt, hpu, hpu_id, hers[j++], vhpu, 1);
		i = j;
	}
}

static void
run_completion(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	       struct spin_msg_int *m)
{
	uint32_t fl = __atomic_load_n(&m->flags, __ATOMIC_ACQUIRE);
	struct spin_done d;
	struct spin_exec x;
	uint64_t t0, t1;
	unsigned rc;

	/* the counters of the message's last HERs, before msg_done */
	spin_batch_flush(rt, hpu);
	if (m->ctx->fam->completion == NULL ||
	    (fl & (SPIN_MF_ABORTED | SPIN_MF_DROPPED | SPIN_MF_PROCEED))) {
		msg_finish(m);
		return;
	}
	d = (struct spin_done){
		.info = &m->info,
		.bytes = m->bytes_in,
		.npkts = m->npkts_in,
		.errors = __atomic_load_n(&m->pay_errors, __ATOMIC_ACQUIRE),
		.dropped = __atomic_load_n(&m->res.dropped_pkts,
					   __ATOMIC_ACQUIRE),
	};
	exec_init(&x, rt, m, hpu, hpu_id, SPIN_VHPU_NONE);
	t0 = rte_rdtsc();
	rc = rc_index(m->ctx->fam->completion(&d, &x.h));
	t1 = rte_rdtsc();
	if (x.err && rc == SPIN_SUCCESS)
		rc = SPIN_ERROR;
	count_call(&x, SPIN_HK_COMPLETION, rc, t0, t1, 0,
		   (uint32_t)RTE_MIN(m->bytes_in, UINT32_MAX));
	/* waits for the handler's DMAs */
	spin_exec_release(&x);
	count_rc(&x, rc);
	hpu->st.cmpl++;
	if (rc == SPIN_ERROR)
		SPIN_ATOMIC_ADD(&m->res.handler_errors, 1);
	spin_batch_flush(rt, hpu);
	msg_finish(m);
}

/*
 * Prefetch the payload of the HER that runs next while this one runs: a
 * packet's bytes are cold (written by the NIC, or by the inbound engine
 * on another core) and the hardware prefetcher starts anew at each one.
 */
static inline void
her_prefetch(const struct spin_her *her)
{
	const uint8_t *p, *end;

	if (her->kind != SPIN_HER_PAYLOAD)
		return;
	p = her->payload;
	end = p + RTE_MIN(her->len, SPIN_PREFETCH_MAX);
	for (; p < end; p += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(p);
}

static void
run_her(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	struct spin_her *her)
{
	switch (her->kind) {
	case SPIN_HER_HEADER:
		run_header(rt, hpu, hpu_id, her->m);
		break;
	case SPIN_HER_PAYLOAD:
		run_payload(rt, hpu, hpu_id, her, SPIN_VHPU_NONE, -1);
		break;
	default:
		run_completion(rt, hpu, hpu_id, her->m);
		break;
	}
}

/* run vHPU @p v on this HPU for up to @p budget packets */
static unsigned
run_vhpu(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	 struct spin_vhpu *v, unsigned budget)
{
	struct spin_msg_int *m = v->m;
	struct spin_her *her, *last, *next;
	unsigned n = 0, k;
	bool requeue = false;

	hpu->st.vhpu_runs++;
	rte_spinlock_lock(&v->lock);
	RTE_VERIFY(v->state == SPIN_VHPU_QUEUED);
	v->state = SPIN_VHPU_RUNNING;
	for (;;) {
		her = v->head;
		if (her == NULL) {
			v->state = SPIN_VHPU_IDLE;
			hpu->st.vhpu_yields++;
			break;
		}
		if (n == budget) {
			/* budget spent: back to the run queue, keep the order */
			v->state = SPIN_VHPU_QUEUED;
			requeue = true;
			break;
		}
		/* take the packets queued now (up to the budget), in order,
		 * and run them without the lock */
		for (last = her, k = 1; k < budget - n && last->next != NULL;
		     k++)
			last = last->next;
		v->head = last->next;
		if (v->head == NULL)
			v->tail = NULL;
		last->next = NULL;
		rte_spinlock_unlock(&v->lock);
		/* the vHPU's own pending reference keeps m alive here */
		while (her != NULL) {
			struct spin_her *run[SPIN_PAYLOAD_BURST_MAX];
			unsigned r = 0;

			if (!burst_ok(rt, m)) {
				next = her->next;
				if (next != NULL)
					her_prefetch(next);
				run_payload(rt, hpu, hpu_id, her, v->id, -1);
				her = next;
				continue;
			}
			/* in the vHPU's order, through payload_burst */
			for (; her != NULL && r < SPIN_PAYLOAD_BURST_MAX;
			     her = her->next)
				run[r++] = her;
			if (her != NULL)
				her_prefetch(her);
			run_payload_run(rt, hpu, hpu_id, run, r, v->id);
		}
		n += k;
		rte_spinlock_lock(&v->lock);
	}
	rte_spinlock_unlock(&v->lock);
	if (requeue)
		rte_ring_enqueue(rt->vhpu_q, v);
	else
		spin_batch_for(rt, hpu, m)->puts++;
	return n;
}

/* ---- outbound jobs --------------------------------------------------------- */

unsigned
spin_out_submit_burst(struct spin_rt *rt, struct spin_out_job *const *jobs,
		      unsigned n, int *err_p)
{
	uint32_t room = rt->conf.max_out_jobs -
		__atomic_load_n(&rt->out_live, __ATOMIC_RELAXED);
	bool full = false;
	unsigned i, k = 0;
	int err = 0;

	if (n > room) {
		n = room;
		full = true;
	}
	for (i = 0; i < n; i++) {
		struct spin_out_job *j = jobs[i];
		struct spin_ctx *c;

		if (j->len != 0 && j->dst == NULL) {
			err = -EINVAL;
			break;
		}
		c = spin_ctx_ref(rt, j->ctx);
		if (c == NULL)
			err = -ENOENT;
		else if (!__atomic_load_n(&c->o.live, __ATOMIC_ACQUIRE))
			err = -ENOENT;
		else if (c->fam->outbound == NULL)
			err = -ENOTSUP;
		if (err != 0) {
			if (c != NULL)
				spin_ctx_unref(rt, c);
			break;
		}
		j->rt_priv = c;
		j->status = 0;
		j->hpu = UINT32_MAX;
	}
	if (err != 0) {
		SPIN_ATOMIC_ADD(&rt->out_rejects, 1);
	} else if (full) {
		err = -ENOBUFS;
		SPIN_ATOMIC_ADD(&rt->out_full, 1);
	}
	if (i > 0) {
		/* both rings hold max_out_jobs: room is certain */
		__atomic_fetch_add(&rt->out_live, i, __ATOMIC_RELAXED);
		k = rte_ring_mp_enqueue_burst(rt->out_q,
					      (void *const *)(uintptr_t)jobs, i,
					      NULL);
		RTE_VERIFY(k == i);
		SPIN_ATOMIC_ADD(&rt->out_submitted, k);
	}
	if (err_p != NULL)
		*err_p = err;
	return k;
}

int
spin_out_submit(struct spin_rt *rt, struct spin_out_job *job)
{
	int err;

	return spin_out_submit_burst(rt, &job, 1, &err) == 1 ? 0 : err;
}

unsigned
spin_out_done_burst(struct spin_rt *rt, struct spin_out_job **jobs_p,
		    unsigned n)
{
	unsigned k = rte_ring_sc_dequeue_burst(rt->out_done, (void **)jobs_p,
					       n, NULL);

	if (k != 0)
		__atomic_fetch_sub(&rt->out_live, k, __ATOMIC_RELAXED);
	return k;
}

/* The outbound jobs' handler counts of hpu->oa.c to the context. */
static void
oacc_flush(struct spin_hpu *hpu)
{
	struct spin_oacc *oa = &hpu->oa;

	if (oa->c == NULL)
		return;
	spin_hacc_flush(&oa->c->hk[SPIN_HK_OUTBOUND], &oa->a);
	if (oa->h_dma_from != 0)
		SPIN_ATOMIC_ADD(&oa->c->h_dma_from, oa->h_dma_from);
	oa->h_dma_from = 0;
	oa->c = NULL;
}

/* Run one outbound job: the context's sender-side handler over the job's
 * read-only window. The job keeps its context reference (run_outs). */
static void
run_out(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	struct spin_out_job *j)
{
	struct spin_ctx *c = j->rt_priv;
	struct spin_out_pkt pkt = {
		.payload = j->dst,
		.len = j->len,
		.offset = j->offset,
		.info = j->info,
	};
	struct spin_exec x;
	uint64_t t0, t1;
	unsigned rc;

	if (hpu->oa.c != c) {
		oacc_flush(hpu);
		hpu->oa.c = c;
	}
	exec_setup(&x, rt, c, NULL, j->host, j->win_addr, j->win_len, j->info,
		   hpu, hpu_id, SPIN_VHPU_NONE);
	t0 = rte_rdtsc();
	rc = rc_index(c->fam->outbound(&pkt, &x.h));
	t1 = rte_rdtsc();
	count_call(&x, SPIN_HK_OUTBOUND,
		   x.err && rc == SPIN_SUCCESS ? SPIN_ERROR : rc, t0, t1,
		   j->offset, j->len);
	spin_exec_release(&x);
	if (x.err)
		j->status = x.dma_err;
	else if (rc != SPIN_SUCCESS)
		j->status = -EPROTO;
	else
		j->status = 0;
	j->hpu = hpu_id;
	hpu->st.out_jobs++;
	hpu->st.rc[rc]++;
	if (j->status != 0)
		hpu->st.out_failures++;
	else
		hpu->st.out_bytes += j->len;
}

int
spin_rt_access_run(struct spin_rt *rt, unsigned hpu_id, uint32_t owner,
		   uint32_t handle, void *host, uint64_t win_addr,
		   uint64_t win_len, const struct spin_access *a)
{
	struct spin_hpu *hpu;
	struct spin_exec x;
	struct spin_ctx *c;
	unsigned rc;

	if (hpu_id >= rt->conf.nhpu)
		return -EINVAL;
	hpu = &rt->hpu[hpu_id];
	c = spin_ctx_ref(rt, handle);
	if (c == NULL)
		return -ENOENT;
	if (!__atomic_load_n(&c->o.live, __ATOMIC_ACQUIRE) ||
	    c->o.owner != owner) {
		spin_ctx_unref(rt, c);
		return -ENOENT;         /* gone, or not the caller's */
	}
	if (c->fam->access == NULL) {
		spin_ctx_unref(rt, c);
		return -ENOTSUP;
	}
	exec_setup(&x, rt, c, NULL, host, win_addr, win_len, NULL, hpu, hpu_id,
		   SPIN_VHPU_NONE);
	x.access = true;
	rc = rc_index(c->fam->access(a, &x.h));
	if (x.err && rc == SPIN_SUCCESS)
		rc = SPIN_ERROR;
	spin_exec_release(&x);
	hpu->st.rc[rc]++;
	hpu->st.hers++;
	spin_ctx_unref(rt, c);
	return (int)rc;
}

/* Run up to @p budget outbound jobs; hand them back in bursts. */
static unsigned
run_outs(struct spin_rt *rt, struct spin_hpu *hpu, unsigned hpu_id,
	 unsigned budget)
{
	void *burst[SPIN_BURST];
	unsigned k, i;

	k = rte_ring_mc_dequeue_burst(rt->out_q, burst,
				      RTE_MIN(budget, SPIN_BURST), NULL);
	if (k == 0)
		return 0;
	for (i = 0; i < k; i++)
		run_out(rt, hpu, hpu_id, burst[i]);
	/* the counts in before the jobs let their contexts go */
	oacc_flush(hpu);
	for (i = 0; i < k; i++) {
		struct spin_out_job *j = burst[i];
		struct spin_ctx *c = j->rt_priv;

		j->rt_priv = NULL;
		spin_ctx_unref(rt, c);
	}
	RTE_VERIFY(rte_ring_mp_enqueue_burst(rt->out_done, burst, k, NULL) ==
		   k);
	return k;
}

/*
 * The budget for untimed payload calls: a burst (one turn of
 * spin_hpu_poll's loop) that began at @p t0 and took longer than the
 * budget may hold a call over it; time the HPU's next SPIN_BUDGET_RECHECK
 * payload calls. @return the end of the burst, the next one's start
 */
static inline uint64_t
burst_check(const struct spin_rt *rt, struct spin_hpu *hpu, uint64_t t0)
{
	uint64_t t1 = rte_rdtsc();

	if (unlikely(t1 - t0 > rt->budget_cyc)) {
		hpu->time_all = SPIN_BUDGET_RECHECK;
		hpu->st.budget_rechecks++;
	}
	return t1;
}

unsigned
spin_hpu_poll(struct spin_rt *rt, unsigned hpu_id, unsigned budget)
{
	struct spin_hpu *hpu = &rt->hpu[hpu_id];
	void *burst[SPIN_BURST];
	unsigned n = 0, k, i;
	uint64_t t = rt->budget_bursts ? rte_rdtsc() : 0;

	RTE_VERIFY(hpu_id < rt->conf.nhpu);
	hpu->st.polls++;
	while (n < budget) {
		unsigned before = n;
		void *v;

		k = rte_ring_mc_dequeue_burst(rt->her_q, burst,
					      RTE_MIN(budget - n, SPIN_BURST),
					      NULL);
		for (i = 0; i < k && i < SPIN_PREFETCH_AHEAD; i++)
			her_prefetch(burst[i]);
		for (i = 0; i < k;) {
			struct spin_her *her = burst[i];
			unsigned j = i + 1;

			if (i + SPIN_PREFETCH_AHEAD < k)
				her_prefetch(burst[i + SPIN_PREFETCH_AHEAD]);
			/* packets of one message in a row: one burst call */
			if (her->kind == SPIN_HER_PAYLOAD &&
			    burst_ok(rt, her->m))
				while (j < k && j - i < SPIN_PAYLOAD_BURST_MAX &&
				       ((struct spin_her *)burst[j])->kind ==
				       SPIN_HER_PAYLOAD &&
				       ((struct spin_her *)burst[j])->m ==
				       her->m)
					j++;
			if (j - i == 1) {
				run_her(rt, hpu, hpu_id, her);
			} else {
				unsigned t;

				/* the handler prefetches inside its burst */
				for (t = j; t < k && t < j + SPIN_PREFETCH_AHEAD;
				     t++)
					her_prefetch(burst[t]);
				run_payload_run(rt, hpu, hpu_id,
						(struct spin_her **)burst + i,
						j - i, SPIN_VHPU_NONE);
			}
			i = j;
		}
		n += k;
		if (n < budget && rte_ring_mc_dequeue(rt->vhpu_q, &v) == 0)
			n += run_vhpu(rt, hpu, hpu_id, v, budget - n);
		if (n < budget)
			n += run_outs(rt, hpu, hpu_id, budget - n);
		if (rt->budget_bursts)
			t = burst_check(rt, hpu, t);
		if (n == before) {
			if (hpu->b.m == NULL)
				break;
			/* idle: hand the batch over now; its last reference
			 * queues a completion HER this call can still run */
			spin_batch_flush(rt, hpu);
		}
	}
	/* nothing deferred outlives the call */
	spin_batch_flush(rt, hpu);
	if (n == 0)
		hpu->st.idle_polls++;
	return n;
}

/* ---- counters -------------------------------------------------------------- */

int
spin_hpu_stats(const struct spin_rt *rt, unsigned hpu,
	       struct spin_hpu_stats *s_p)
{
	if (hpu >= rt->conf.nhpu)
		return -EINVAL;
	*s_p = rt->hpu[hpu].st;
	return 0;
}

void
spin_rt_stats(struct spin_rt *rt, struct spin_rt_stats *s_p)
{
	unsigned i;

	memset(s_p, 0, sizeof(*s_p));
	s_p->msgs_started = SPIN_LOAD(&rt->msgs_started);
	s_p->msgs_done = SPIN_LOAD(&rt->msgs_done);
	s_p->msgs_aborted = SPIN_LOAD(&rt->msgs_aborted);
	s_p->msg_full = SPIN_LOAD(&rt->msg_full);
	s_p->her_full = SPIN_LOAD(&rt->her_full);
	s_p->pkt_rejects = SPIN_LOAD(&rt->pkt_rejects);
	s_p->out_submitted = SPIN_LOAD(&rt->out_submitted);
	s_p->out_full = SPIN_LOAD(&rt->out_full);
	s_p->out_rejects = SPIN_LOAD(&rt->out_rejects);
	s_p->out_live = SPIN_LOAD(&rt->out_live);
	s_p->msgs_live = rt->conf.max_msgs - spin_pool_count(&rt->msg_pool);
	s_p->hers_live = rt->conf.max_hers - spin_pool_count(&rt->her_pool);
	for (i = 0; i < rt->conf.max_ctxs; i++)
		s_p->ctxs_live += SPIN_LOAD(&rt->ctxs[i].o.refs) != 0;
	for (i = 0; i < rt->conf.max_blobs; i++)
		s_p->blobs_live += SPIN_LOAD(&rt->blobs[i].o.refs) != 0;
}

void
spin_rt_stats_print(struct spin_rt *rt, FILE *f)
{
	struct spin_nicmem_stats nm;
	struct spin_rt_stats s;
	unsigned i;

	spin_rt_stats(rt, &s);
	spin_rt_nicmem_stats(rt, &nm);
	fprintf(f, "  spin: msgs started %" PRIu64 " done %" PRIu64
		" aborted %" PRIu64 " live %u, msg_full %" PRIu64
		" her_full %" PRIu64 " pkt_rejects %" PRIu64 "\n",
		s.msgs_started, s.msgs_done, s.msgs_aborted, s.msgs_live,
		s.msg_full, s.her_full, s.pkt_rejects);
	if (s.out_submitted != 0 || s.out_full != 0 || s.out_rejects != 0)
		fprintf(f, "  spin: outbound jobs submitted %" PRIu64
			" out %u, full %" PRIu64 " rejects %" PRIu64 "\n",
			s.out_submitted, s.out_live, s.out_full,
			s.out_rejects);
	fprintf(f, "  spin: contexts %u blobs %u, NIC memory %" PRIu64 "/%"
		PRIu64 " B (largest free %" PRIu64 ", failures %" PRIu64 ")\n",
		s.ctxs_live, s.blobs_live, nm.used, nm.capacity,
		nm.largest_free, nm.failures);
	for (i = 0; i < rt->conf.nhpu; i++) {
		const struct spin_hpu_stats *h = &rt->hpu[i].st;

		fprintf(f, "  hpu %u: hers %" PRIu64 " (hdr %" PRIu64
			" pay %" PRIu64 " cmpl %" PRIu64 ") rc ok %" PRIu64
			" drop %" PRIu64 " proceed %" PRIu64 " err %" PRIu64
			" skipped %" PRIu64 " dma %" PRIu64 " B to, %" PRIu64
			" B from, rejects %" PRIu64 " failures %" PRIu64
			" vhpu runs %" PRIu64 " yields %" PRIu64
			" bursts %" PRIu64 "\n", i,
			h->hers, h->hdr, h->pay, h->cmpl, h->rc[0], h->rc[1],
			h->rc[2], h->rc[3], h->skipped, h->dma_bytes_to,
			h->dma_bytes_from, h->dma_rejects, h->dma_failures,
			h->vhpu_runs, h->vhpu_yields, h->bursts);
		if (h->out_jobs != 0)
			fprintf(f, "  hpu %u: outbound jobs %" PRIu64
				" failures %" PRIu64 " bytes %" PRIu64 "\n", i,
				h->out_jobs, h->out_failures, h->out_bytes);
	}
}
