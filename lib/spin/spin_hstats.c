/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler statistics, budget and trace (spin_rt.h, "handler statistics
 * and trace"). The hot path is count_call() in spin_rt.c: plain
 * increments of the HPU's own family counters and batch; here are the
 * rare paths (flush to a context, over budget, trace) and the readers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "spin_internal.h"

int
spin_hstats_init(struct spin_rt *rt)
{
	const struct spin_handler_family *const *f;
	unsigned i;

	rt->nfam = 0;
	for (f = rt->conf.families; *f != NULL; f++)
		rt->nfam++;
	rt->tsc_hz = rte_get_tsc_hz();
	if (rt->conf.handler_budget_ns == 0 || rt->tsc_hz == 0)
		rt->budget_cyc = UINT64_MAX;
	else
		rt->budget_cyc = (uint64_t)((double)rt->conf.handler_budget_ns *
					    (double)rt->tsc_hz / 1e9);
	/* a family table may be empty: keep one slot so the arrays exist */
	rt->fstat = rte_zmalloc_socket("spin_fstat", (size_t)rt->conf.nhpu *
			RTE_MAX(rt->nfam, 1u) * sizeof(*rt->fstat),
			RTE_CACHE_LINE_SIZE, rt->conf.socket_id);
	rt->flog = rte_zmalloc_socket("spin_flog", RTE_MAX(rt->nfam, 1u) *
			sizeof(*rt->flog), RTE_CACHE_LINE_SIZE,
			rt->conf.socket_id);
	if (rt->fstat == NULL || rt->flog == NULL) {
		spin_hstats_fini(rt);
		return -ENOMEM;
	}
	rt->time_mask = rt->conf.handler_time_every <= 1 ? 0 :
		rte_align32pow2(rt->conf.handler_time_every) - 1;
	/* the untimed calls: checked by their bursts */
	rt->budget_bursts = rt->budget_cyc != UINT64_MAX && rt->time_mask != 0;
	for (i = 0; i < rt->conf.nhpu; i++) {
		rt->hpu[i].fst = &rt->fstat[(size_t)i * rt->nfam];
		rt->hpu[i].time_rnd = 0x9e3779b9u * (i + 1) | 1u;
	}
	return 0;
}

void
spin_hstats_fini(struct spin_rt *rt)
{
	rte_free(rt->fstat);
	rte_free(rt->flog);
	rt->fstat = NULL;
	rt->flog = NULL;
}

uint32_t
spin_ctx_handle(const struct spin_rt *rt, const struct spin_ctx *c)
{
	return (uint32_t)c->o.gen << 16 | (uint32_t)(c - rt->ctxs);
}

/* An HPU's counts @p a to a context's @p dst (relaxed atomics), and
 * @p a zeroed: only what it touched. */
void
spin_hacc_flush(struct spin_hacc *dst, struct spin_hacc *a)
{
	uint64_t m, cur;
	unsigned i;

	for (i = 0; i < RTE_DIM(a->rc); i++)
		if (a->rc[i] != 0) {
			SPIN_ATOMIC_ADD(&dst->rc[i], a->rc[i]);
			a->rc[i] = 0;
		}
	/* untimed calls only (sampled timing): no duration to add */
	if (a->cycles != 0) {
		SPIN_ATOMIC_ADD(&dst->cycles, a->cycles);
		a->cycles = 0;
	}
	if (a->max != 0) {
		cur = SPIN_LOAD(&dst->max);
		while (a->max > cur &&
		       !__atomic_compare_exchange_n(&dst->max, &cur, a->max,
						    true, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
			;
		a->max = 0;
	}
	if (a->over != 0) {
		SPIN_ATOMIC_ADD(&dst->over, a->over);
		a->over = 0;
	}
	for (m = a->hmask; m != 0; m &= m - 1) {
		i = (unsigned)__builtin_ctzll(m);
		SPIN_ATOMIC_ADD(&dst->hist[i], a->hist[i]);
		a->hist[i] = 0;
	}
	a->hmask = 0;
}

/*
 * An invocation longer than the budget: counted for its family and
 * context, logged with both, at most one line per family per second
 * (a CAS on the family's next allowed time picks the HPU that logs; the
 * others count what they did not log, told in the next line).
 */
void
spin_hstats_over_budget(struct spin_exec *x, unsigned kind, uint64_t t1,
			uint64_t dt, struct spin_hacc *ctx_acc)
{
	struct spin_rt *rt = x->rt;
	struct spin_ctx *c = x->ctx;
	struct spin_flog *l = &rt->flog[c->fam_idx];
	uint64_t next = SPIN_LOAD(&l->next_tsc), missed;
	double hz = (double)rt->tsc_hz;

	x->hpu->fst[c->fam_idx].k[kind].over++;
	ctx_acc->over++;
	if (t1 < next ||
	    !__atomic_compare_exchange_n(&l->next_tsc, &next, t1 + rt->tsc_hz,
					 false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		SPIN_ATOMIC_ADD(&l->missed, 1);
		return;
	}
	missed = __atomic_exchange_n(&l->missed, 0, __ATOMIC_RELAXED);
	SPIN_LOG(WARNING, "handler over budget: family %s, %s handler, context %" PRIu32 " of client %" PRIu32 ", %.1f us (budget %.1f us), hpu %" PRIu32 "; %" PRIu64 " more over budget not logged",
		 c->fam->name, spin_hkind_name(kind), spin_ctx_handle(rt, c),
		 c->o.owner, (double)dt * 1e6 / hz,
		 (double)rt->conf.handler_budget_ns / 1e3, x->h.hpu, missed);
}

/*
 * Record an invocation in the context's ring: claim the slot (CAS to
 * BUSY: two writers a lap apart never mix their fields; the one that
 * finds it claimed drops its entry), write it, publish seq.
 */
void
spin_trace_put(struct spin_exec *x, unsigned kind, unsigned rc, uint64_t t0,
	       uint64_t dt, uint64_t off, uint32_t len)
{
	struct spin_ctx *c = x->ctx;
	const struct spin_msg_info *info = x->h.info;
	uint64_t i = __atomic_fetch_add(&c->trace_head, 1, __ATOMIC_RELAXED);
	struct spin_trace_slot *s = &c->trace[i % c->trace_n];
	uint64_t old = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);

	if ((old & SPIN_TRACE_BUSY) ||
	    !__atomic_compare_exchange_n(&s->seq, &old, SPIN_TRACE_BUSY, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	/* the claim before the fields, for a reader checking seq after */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->tsc, t0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cycles, dt, __ATOMIC_RELAXED);
	__atomic_store_n(&s->msg_id, info != NULL ? info->msg_id : 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->offset, off, __ATOMIC_RELAXED);
	__atomic_store_n(&s->len_nid, (uint64_t)len |
			 (uint64_t)(info != NULL ? info->src_nid : 0) << 32,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->kind_rc_hpu, (uint64_t)kind | (uint64_t)rc << 8 |
			 (uint64_t)(x->h.hpu & 0xffff) << 16 |
			 (uint64_t)x->h.vhpu << 32, __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, i + 1, __ATOMIC_RELEASE);
}

/* ---- readers --------------------------------------------------------------- */

const char *
spin_hkind_name(unsigned kind)
{
	static const char *const names[SPIN_HK_COUNT] = {
		"header", "payload", "completion", "outbound",
	};

	return kind < SPIN_HK_COUNT ? names[kind] : "?";
}

uint64_t
spin_hkind_quantile(const struct spin_hkind_stats *k, double q)
{
	uint64_t target, cum = 0, lo, hi, v;
	unsigned b;

	if (k->timed == 0 || !(q > 0.0))
		return 0;
	if (q > 1.0)
		q = 1.0;
	target = (uint64_t)((double)k->timed * q);
	if ((double)target < (double)k->timed * q)
		target++;
	for (b = 0; b < SPIN_HSTAT_BUCKETS; b++) {
		if (k->hist[b] != 0 && cum + k->hist[b] >= target)
			break;
		cum += k->hist[b];
	}
	if (b == SPIN_HSTAT_BUCKETS)
		return k->max_cycles; /* counts read while being added */
	lo = b == 0 ? 0 : 1ull << b;
	hi = b == SPIN_HSTAT_BUCKETS - 1 ? k->max_cycles : 2ull << b;
	if (hi < lo)
		hi = lo;
	v = lo + (uint64_t)((double)(hi - lo) * (double)(target - cum) /
			    (double)k->hist[b]);
	return k->max_cycles != 0 && v > k->max_cycles ? k->max_cycles : v;
}

uint64_t
spin_cycles_to_ns(uint64_t cycles)
{
	uint64_t hz = rte_get_tsc_hz();

	return hz == 0 ? 0 : (uint64_t)((double)cycles * 1e9 / (double)hz);
}

unsigned
spin_rt_nfamilies(const struct spin_rt *rt)
{
	return rt->nfam;
}

const struct spin_handler_family *
spin_rt_family(const struct spin_rt *rt, unsigned fam)
{
	return fam < rt->nfam ? rt->conf.families[fam] : NULL;
}

/* add counters @p a (relaxed loads: another thread writes them) */
static void
hkind_add(struct spin_hkind_stats *k, const struct spin_hacc *a)
{
	uint64_t mx = SPIN_LOAD(&a->max);
	unsigned i;

	for (i = 0; i < 4; i++) {
		uint64_t v = SPIN_LOAD(&a->rc[i]);

		k->rc[i] += v;
		k->calls += v;
	}
	k->cycles += SPIN_LOAD(&a->cycles);
	if (mx > k->max_cycles)
		k->max_cycles = mx;
	k->over_budget += SPIN_LOAD(&a->over);
	for (i = 0; i < SPIN_HSTAT_BUCKETS; i++) {
		uint64_t v = SPIN_LOAD(&a->hist[i]);

		k->hist[i] += v;
		k->timed += v;
	}
}

static void
hstats_totals(struct spin_handler_stats *s)
{
	unsigned k;

	s->calls = s->errors = s->over_budget = 0;
	for (k = 0; k < SPIN_HK_COUNT; k++) {
		s->calls += s->kind[k].calls;
		s->errors += s->kind[k].rc[SPIN_ERROR];
		s->over_budget += s->kind[k].over_budget;
	}
}

int
spin_rt_family_stats(const struct spin_rt *rt, unsigned fam,
		     struct spin_handler_stats *s_p)
{
	unsigned h, k;

	if (fam >= rt->nfam)
		return -EINVAL;
	memset(s_p, 0, sizeof(*s_p));
	for (h = 0; h < rt->conf.nhpu; h++) {
		const struct spin_fstat *f = &rt->hpu[h].fst[fam];

		for (k = 0; k < SPIN_HK_COUNT; k++)
			hkind_add(&s_p->kind[k], &f->k[k]);
		s_p->dma_bytes_to += SPIN_LOAD(&f->dma_to);
		s_p->dma_bytes_from += SPIN_LOAD(&f->dma_from);
		s_p->dma_rejects += SPIN_LOAD(&f->dma_rejects);
		s_p->dma_failures += SPIN_LOAD(&f->dma_failures);
		s_p->put_errors += SPIN_LOAD(&f->put_errors);
	}
	hstats_totals(s_p);
	return 0;
}

int
spin_rt_ctx_handler_stats(struct spin_rt *rt, uint32_t handle,
			  struct spin_handler_stats *s_p)
{
	struct spin_ctx *c = spin_ctx_ref(rt, handle);
	unsigned k;

	if (c == NULL)
		return -ENOENT;
	memset(s_p, 0, sizeof(*s_p));
	for (k = 0; k < SPIN_HK_COUNT; k++)
		hkind_add(&s_p->kind[k], &c->hk[k]);
	s_p->dma_bytes_to = SPIN_LOAD(&c->h_dma_to);
	s_p->dma_bytes_from = SPIN_LOAD(&c->h_dma_from);
	s_p->dma_rejects = SPIN_LOAD(&c->dma_rejects);
	s_p->dma_failures = SPIN_LOAD(&c->h_dma_failures);
	s_p->put_errors = SPIN_LOAD(&c->h_put_errors);
	hstats_totals(s_p);
	spin_ctx_unref(rt, c);
	return 0;
}

/* Copy slot @p s if it holds entry @p seq, whole. */
static bool
trace_copy(const struct spin_trace_slot *s, uint64_t seq,
	   struct spin_trace_entry *e)
{
	uint64_t w5, w6;

	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq)
		return false;
	e->seq = seq;
	e->tsc = __atomic_load_n(&s->tsc, __ATOMIC_RELAXED);
	e->cycles = __atomic_load_n(&s->cycles, __ATOMIC_RELAXED);
	e->msg_id = __atomic_load_n(&s->msg_id, __ATOMIC_RELAXED);
	e->offset = __atomic_load_n(&s->offset, __ATOMIC_RELAXED);
	w5 = __atomic_load_n(&s->len_nid, __ATOMIC_RELAXED);
	w6 = __atomic_load_n(&s->kind_rc_hpu, __ATOMIC_RELAXED);
	/* the fields before the second look at seq */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
		return false;
	e->len = (uint32_t)w5;
	e->src_nid = (uint32_t)(w5 >> 32);
	e->kind = (uint8_t)w6;
	e->rc = (uint8_t)(w6 >> 8);
	e->hpu = (uint16_t)(w6 >> 16);
	e->vhpu = (uint32_t)(w6 >> 32);
	return true;
}

int
spin_rt_ctx_trace(struct spin_rt *rt, uint32_t handle, uint64_t from,
		  struct spin_trace_entry *ents, unsigned n, uint64_t *head_p)
{
	struct spin_ctx *c = spin_ctx_ref(rt, handle);
	uint64_t head, first, seq;
	unsigned got = 0;

	if (c == NULL)
		return -ENOENT;
	if (c->trace == NULL) {
		spin_ctx_unref(rt, c);
		return -ENODATA;
	}
	head = __atomic_load_n(&c->trace_head, __ATOMIC_ACQUIRE);
	/* the oldest entry the ring can still hold */
	first = head > c->trace_n ? head - c->trace_n + 1 : 1;
	if (from == 0)
		from = head >= n ? head - n + 1 : 1;
	if (from < first)
		from = first;
	for (seq = from; seq <= head && got < n; seq++)
		if (trace_copy(&c->trace[(seq - 1) % c->trace_n], seq,
			       &ents[got]))
			got++;
	spin_ctx_unref(rt, c);
	if (head_p != NULL)
		*head_p = head;
	return (int)got;
}

/* ---- printing ------------------------------------------------------------- */

void
spin_rt_handler_stats_print(struct spin_rt *rt, FILE *f)
{
	struct spin_handler_stats s;
	unsigned i, k;

	for (i = 0; i < rt->nfam; i++) {
		if (spin_rt_family_stats(rt, i, &s) != 0 || s.calls == 0)
			continue;
		fprintf(f, "  handlers: %s (budget ",
			rt->conf.families[i]->name);
		if (rt->conf.handler_budget_ns != 0)
			fprintf(f, "%.1f us",
				(double)rt->conf.handler_budget_ns / 1e3);
		else
			fprintf(f, "off");
		fprintf(f, ")\n");
		for (k = 0; k < SPIN_HK_COUNT; k++) {
			const struct spin_hkind_stats *h = &s.kind[k];

			if (h->calls == 0)
				continue;
			fprintf(f, "    %-10s calls %" PRIu64 " ok %" PRIu64
				" drop %" PRIu64 " proceed %" PRIu64 " error %"
				PRIu64 ", mean %" PRIu64 " ns p99 %" PRIu64
				" ns max %" PRIu64 " ns, over_budget %" PRIu64
				"\n", spin_hkind_name(k), h->calls,
				h->rc[SPIN_SUCCESS], h->rc[SPIN_DROP],
				h->rc[SPIN_PROCEED], h->rc[SPIN_ERROR],
				h->timed == 0 ? 0 :
				spin_cycles_to_ns(h->cycles / h->timed),
				spin_cycles_to_ns(spin_hkind_quantile(h, 0.99)),
				spin_cycles_to_ns(h->max_cycles),
				h->over_budget);
		}
		fprintf(f, "    dma %" PRIu64 " B to host, %" PRIu64
			" B from host, rejects %" PRIu64 " failures %" PRIu64
			" put_errors %" PRIu64 "\n", s.dma_bytes_to,
			s.dma_bytes_from, s.dma_rejects, s.dma_failures,
			s.put_errors);
	}
}
