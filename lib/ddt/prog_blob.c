/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The compiled form (prog.c) as pointer-free bytes for NIC memory: written
 * by ddt_prog_serialize() on the host, checked once by ddt_prog_check()
 * against the validated blob it was compiled from (every op, array and
 * span recomputed with checked arithmetic), then run per packet by
 * ddt_prog_unpack_bounded(), which resumes at any stream offset and writes
 * only repetitions of blocks that lie inside the caller's bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

static size_t prog_bytes(int64_t nops, int64_t narr)
{
	return sizeof(struct ddt_prog_hdr) +
	       (size_t)nops * sizeof(struct ddt_op) +
	       (size_t)(nops + 1 + narr) * sizeof(int64_t);
}

ssize_t ddt_prog_serialize(const struct ddt_type *t, void *buf, size_t len)
{
	const struct ddt_prog *pg;
	struct ddt_prog_hdr h;
	uint8_t *p = buf;
	size_t need;

	if (t == NULL || ((uintptr_t)buf & 7) != 0)
		return -EINVAL;
	if (!ddt_is_committed(t))
		return -DDT_E_NOTCOMMITTED;
	pg = __atomic_load_n(&t->prog, __ATOMIC_ACQUIRE);
	if (pg == NULL)
		return -ENOENT;
	need = prog_bytes(pg->nops, pg->narr);
	if (buf == NULL)
		return (ssize_t)need;
	if (len < need)
		return -ENOSPC;
	h = (struct ddt_prog_hdr){
		.magic = DDT_PROG_MAGIC, .checksum = pg->checksum,
		.len = need, .nops = pg->nops, .narr = pg->narr,
		.size = pg->size, .extent = pg->extent, .m_size = pg->m_size,
	};
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, pg->ops, (size_t)pg->nops * sizeof(*pg->ops));
	p += (size_t)pg->nops * sizeof(*pg->ops);
	memcpy(p, pg->pre, (size_t)(pg->nops + 1) * sizeof(int64_t));
	p += (size_t)(pg->nops + 1) * sizeof(int64_t);
	if (pg->narr > 0)
		memcpy(p, pg->arr, (size_t)pg->narr * sizeof(int64_t));
	return (ssize_t)need;
}

/* the view of checked (or trusted) bytes */
static void prog_view(const void *buf, struct ddt_prog *pg)
{
	const struct ddt_prog_hdr *h = buf;

	pg->size = h->size;
	pg->extent = h->extent;
	pg->nops = h->nops;
	pg->narr = h->narr;
	pg->ops = (struct ddt_op *)(uintptr_t)(h + 1);
	pg->pre = (int64_t *)(pg->ops + h->nops);
	pg->arr = pg->pre + h->nops + 1;
	pg->m_size = h->m_size;
	pg->checksum = h->checksum;
}

static bool in_span(int64_t v)
{
	return v >= -DDT_SPAN_MAX && v <= DDT_SPAN_MAX;
}

/* a + b * c within ±2^61 */
static bool span_mad(int64_t a, int64_t b, int64_t c, int64_t *r_p)
{
	int64_t m;

	return !__builtin_mul_overflow(b, c, &m) && in_span(m) &&
	       !__builtin_add_overflow(a, m, r_p) && in_span(*r_p);
}

/* displacement k of an IDX or IDXV op whose arrays start at d */
static int64_t op_disp(const int64_t *d, const struct ddt_op *o, int64_t k)
{
	int32_t v;

	if (!o->d32)
		return d[k];
	memcpy(&v, (const uint8_t *)d + 4 * k, sizeof(v));
	return v;
}

/* blocks and typed span of one repetition of op o */
static int op_check(const struct ddt_prog *pg, const struct ddt_op *o)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN, last, rs = 0;
	const int64_t *d;

	if (o->n < 1 || o->n2 < 1 || !in_span(o->off) ||
	    !in_span(o->stride) || !in_span(o->stride2) || o->arr < 0 ||
	    o->kern >= DDT_KERN_COUNT || o->d32 > 1 ||
	    (o->d32 && (o->kind != DDT_OP_IDX || o->kern == 0)))
		return -EINVAL;
	if (o->kind == DDT_OP_VEC) {
		if (o->bl < 1 || !span_mad(0, o->n - 1, o->stride, &last) ||
		    !span_mad(o->bl, 1, last > 0 ? last : 0, &hi) ||
		    !span_mad(0, o->n, o->bl, &rs))
			return -EINVAL;
		lo = last < 0 ? last : 0;
	} else if (o->kind == DDT_OP_IDX || o->kind == DDT_OP_IDXV) {
		int64_t w = o->kind == DDT_OP_IDX ? 1 : 3;
		/* slots the arrays take: d32 packs two per slot */
		int64_t need = o->d32 ? o->n / 2 + o->n % 2 : o->n;

		if (need > (pg->narr - o->arr - (w == 3)) / w ||
		    (o->kind == DDT_OP_IDX && o->bl < 1) ||
		    (o->kind == DDT_OP_IDXV && (o->bl != 0 || o->kern != 0)))
			return -EINVAL;
		d = pg->arr + o->arr;
		for (int64_t k = 0; k < o->n; k++) {
			int64_t bl = w == 1 ? o->bl : d[o->n + k], end;
			int64_t dk = op_disp(d, o, k);

			if (bl < 1 || !in_span(dk) ||
			    !span_mad(dk, 1, bl, &end) ||
			    (w == 3 && d[2 * o->n + k] != rs) ||
			    !span_mad(rs, 1, bl, &rs))
				return -EINVAL;
			lo = dk < lo ? dk : lo;
			hi = end > hi ? end : hi;
		}
		if (w == 3 && d[3 * o->n] != rs)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (o->kern != 0 && ddt_prog_kern_bl(o->kern) != o->bl)
		return -EINVAL;
	if (o->rsize != rs || o->tlo != lo || o->thi != hi ||
	    o->m_bl != ddt_prog_recip_of(o->bl) ||
	    o->m_rs != ddt_prog_recip_of(o->rsize) ||
	    !span_mad(0, o->n2 - 1, o->stride2, &last))
		return -EINVAL;
	return 0;
}

int ddt_prog_check(const void *buf, size_t len, const struct ddt_blob *b)
{
	const struct ddt_prog_hdr *h = buf;
	struct ddt_prog pg;
	int64_t at = 0;

	if (buf == NULL || b == NULL || ((uintptr_t)buf & 7) != 0 ||
	    len < sizeof(*h))
		return -EINVAL;
	if (h->magic != DDT_PROG_MAGIC || h->checksum != b->h.checksum ||
	    h->size != b->h.size || h->extent != b->h.extent ||
	    h->m_size != ddt_prog_recip_of(h->size) ||
	    h->nops < 1 || h->nops > (int64_t)(len / sizeof(struct ddt_op)) ||
	    h->narr < 0 || h->narr > (int64_t)(len / sizeof(int64_t)) ||
	    h->len > len || h->len != prog_bytes(h->nops, h->narr))
		return -EINVAL;
	prog_view(buf, &pg);
	if (pg.pre[0] != 0)
		return -EINVAL;
	for (int64_t o = 0; o < pg.nops; o++) {
		const struct ddt_op *op = &pg.ops[o];

		if (op_check(&pg, op) != 0 ||
		    !span_mad(at, op->n2, op->rsize, &at) || pg.pre[o + 1] != at)
			return -EINVAL;
	}
	return at == pg.size ? 0 : -EINVAL;
}

int64_t ddt_prog_unpack_bounded(const void *buf, int64_t first, int64_t last,
				const void *src, void *dst, int64_t lo,
				int64_t hi)
{
	struct ddt_bounds bd = { lo, hi, false };
	struct ddt_prog pg;

	prog_view(buf, &pg);
	return ddt_prog_range(&pg, first, last, dst, (uint8_t *)src, true,
			      &bd);
}

int64_t ddt_prog_unpack_pieces(const void *buf, int64_t first,
			       const struct ddt_piece *pc, unsigned n,
			       void *dst, int64_t lo, int64_t hi)
{
	struct ddt_bounds bd = { lo, hi, false };
	struct ddt_prog pg;

	prog_view(buf, &pg);
	return ddt_prog_range_pieces(&pg, first, pc, n, dst, &bd);
}
