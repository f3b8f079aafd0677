/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checkpoints: segment snapshots every Δr bytes of the packed stream, and
 * the checkpoint-interval model of paper 000 §3.2.4.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

struct ddt_ckpt_set {
	struct ddt_type *t;   /* reference: keeps the blob alive */
	int64_t count;
	int64_t interval;
	int64_t n;
	size_t size;          /* one state */
	uint8_t *states;      /* n * size bytes */
};

struct ddt_ckpt_set *ddt_ckpt_create(const struct ddt_type *t, int64_t count,
				     int64_t interval)
{
	struct ddt_ckpt_set *c;
	struct ddt_segment *s;
	int64_t total;

	if (t == NULL || interval <= 0 || count < 0)
		return ddt_err_null(EINVAL);
	s = ddt_segment_create(t, count);
	if (s == NULL)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto nomem;
	total = s->total;
	c->n = total == 0 ? 1 : (total - 1) / interval + 1;
	c->size = ddt_segment_state_size(s);
	c->states = malloc((size_t)c->n * c->size);
	if (c->states == NULL)
		goto nomem;
	c->t = ddt_ref((struct ddt_type *)t);
	c->count = count;
	c->interval = interval;
	for (int64_t i = 0; i < c->n; i++) {
		ddt_seg_seek(s, i * interval);
		ddt_segment_save(s, c->states + (size_t)i * c->size, c->size);
	}
	ddt_segment_free(s);
	return c;
nomem:
	if (c != NULL)
		free(c->states);
	free(c);
	ddt_segment_free(s);
	return ddt_err_null(ENOMEM);
}

void ddt_ckpt_free(struct ddt_ckpt_set *c)
{
	if (c == NULL)
		return;
	ddt_free(c->t);
	free(c->states);
	free(c);
}

int64_t ddt_ckpt_count(const struct ddt_ckpt_set *c)
{
	return c->n;
}

int64_t ddt_ckpt_interval(const struct ddt_ckpt_set *c)
{
	return c->interval;
}

size_t ddt_ckpt_size(const struct ddt_ckpt_set *c)
{
	return c->size;
}

int64_t ddt_ckpt_find(const struct ddt_ckpt_set *c, int64_t off)
{
	int64_t i;

	if (c == NULL || off < 0)
		return -EINVAL;
	i = off / c->interval;
	return i < c->n ? i : c->n - 1;
}

int ddt_ckpt_restore(const struct ddt_ckpt_set *c, int64_t idx,
		     struct ddt_segment *s)
{
	if (c == NULL || s == NULL || idx < 0 || idx >= c->n)
		return -EINVAL;
	return ddt_segment_restore(s, c->states + (size_t)idx * c->size,
				   c->size);
}

const void *ddt_ckpt_state(const struct ddt_ckpt_set *c, int64_t idx)
{
	if (c == NULL || idx < 0 || idx >= c->n)
		return NULL;
	return c->states + (size_t)idx * c->size;
}

/*
 * Checkpoint interval, paper 000 §3.2.4 (RW-CP). With k = pkt_payload,
 * n_pkt = ceil(m/k), P = hpus and q = ceil(Δr/k) (we only return Δr = q·k):
 *
 *  (1) scheduling overhead within ε of the processing time:
 *        T_pkt + q·(P−1)·T_pkt ≤ ε·ceil(n_pkt/P)·T_PH(γ)
 *      → q ≤ q_eps = floor((ε·ceil(n_pkt/P)·T_PH − T_pkt) / ((P−1)·T_pkt))
 *        (P = 1: the overhead does not depend on q, q_eps = n_pkt)
 *  (2) checkpoints fit in NIC memory: (n_pkt·k/Δr)·C ≤ M_NIC, counted
 *      exactly as ceil(n_pkt/q)·C ≤ M_NIC
 *      → q ≥ q_mem = ceil(n_pkt / floor(M_NIC/C))
 *  (3) packets buffered while the first vHPUs start fit the packet buffer:
 *        min(T_PH·k/T_pkt, Δr) ≤ B_pkt
 *      → when T_PH·k/T_pkt > B_pkt, q ≤ q_buf = floor(B_pkt/k)
 *
 * Among the Δr meeting (1) and (3) we take the largest, i.e. the fewest
 * checkpoints (least NIC memory and host creation time) that still keep the
 * overhead under ε; this is why the paper's Fig. 13b shows faster handlers
 * (larger blocks) getting smaller intervals. q is capped at n_pkt (one
 * checkpoint per message) and at least 1. Memory (2) is a hard limit: if the
 * chosen q needs more checkpoints than fit, q is raised to q_mem and the
 * ε bound is given up. If not even one checkpoint fits, -ENOSPC.
 */
int64_t ddt_ckpt_select_interval(const struct ddt_ckpt_model *m)
{
	int64_t k, npkt, q, q_mem, maxck;
	double proc, q_eps;

	if (m == NULL || !(m->epsilon > 0) || m->hpus == 0 ||
	    m->pkt_payload == 0 || !(m->t_pkt > 0) || !(m->t_ph >= 0) ||
	    m->ckpt_size == 0 || m->msg_size < 0)
		return -EINVAL;
	k = m->pkt_payload;
	npkt = m->msg_size == 0 ? 1 : (m->msg_size - 1) / k + 1;
	maxck = (int64_t)(m->nic_mem / m->ckpt_size);
	if (maxck < 1)
		return -ENOSPC;
	q_mem = (npkt - 1) / maxck + 1;

	/* (1) */
	proc = m->epsilon * (double)((npkt - 1) / m->hpus + 1) * m->t_ph;
	if (m->hpus == 1) {
		q = npkt;
	} else {
		q_eps = floor((proc - m->t_pkt) /
			      ((double)(m->hpus - 1) * m->t_pkt));
		if (q_eps < 1)
			q = 1;
		else if (q_eps > (double)npkt)
			q = npkt;
		else
			q = (int64_t)q_eps;
	}
	/* (3) */
	if (m->pkt_buf > 0 && m->t_ph * (double)k / m->t_pkt >
				      (double)m->pkt_buf) {
		int64_t q_buf = (int64_t)(m->pkt_buf / (uint64_t)k);

		if (q > q_buf)
			q = q_buf > 0 ? q_buf : 1;
	}
	/* (2) */
	if (q < q_mem)
		q = q_mem;
	return q * k;
}
