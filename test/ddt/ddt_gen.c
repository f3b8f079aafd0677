/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Random datatype generator and brute-force typemap reference for tests.
 * The reference only uses ddt_get_contents(), ddt_size() and ddt_extent():
 * it never touches the dataloops it is used to check.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_gen.h"

uint64_t ddt_gen_rand(uint64_t *seed)
{
	uint64_t x = *seed ? *seed : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*seed = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* uniform in [0, n) (n > 0) */
static int64_t rnd(uint64_t *s, int64_t n)
{
	return n <= 1 ? 0 : (int64_t)(ddt_gen_rand(s) % (uint64_t)n);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void shuffle(uint64_t *s, int64_t *v, int64_t n)
{
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = rnd(s, i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

static struct ddt_type *base(uint64_t *s, int64_t budget)
{
	for (int tries = 0; tries < 8; tries++) {
		struct ddt_type *t = ddt_base((enum ddt_base)rnd(s,
							DDT_BASE_COUNT));

		if (ddt_size(t) <= budget)
			return t;
	}
	return ddt_base(DDT_BYTE);
}

/* Keep the data inside [lb, ub) so consecutive elements never overlap
 * (a resized member can leave data outside). */
static struct ddt_type *fix_bounds(struct ddt_type *t)
{
	int64_t lb, ub;
	struct ddt_type *r;

	if (t == NULL || ddt_size(t) == 0)
		return t;
	lb = min64(ddt_lb(t), ddt_data_lb(t));
	ub = max64(ddt_ub(t), ddt_data_lb(t) + ddt_data_extent(t));
	if (lb == ddt_lb(t) && ub == ddt_ub(t))
		return t;
	r = ddt_resized(lb, ub - lb, t);
	ddt_free(t);
	return r;
}

static int64_t gap(uint64_t *s, int64_t ext)
{
	return rnd(s, 2) ? 0 : rnd(s, ext / 2 + 2);
}

static struct ddt_type *gen(uint64_t *s, int depth, int64_t budget);

static struct ddt_type *gen_struct(uint64_t *s, int depth, int64_t budget)
{
	int64_t n = 1 + rnd(s, 4), bl[4], d[4], perm[4], cur;
	struct ddt_type *m[4] = { 0 }, *t = NULL;

	for (int64_t i = 0; i < n; i++) {
		bl[i] = rnd(s, 12) ? 1 + rnd(s, 3) : 0;
		m[i] = gen(s, depth - 1, max64(1, budget / (n * 3)));
		if (m[i] == NULL)
			goto out;
		perm[i] = i;
	}
	shuffle(s, perm, n);
	cur = -rnd(s, 3) * 8;
	for (int64_t k = 0; k < n; k++) {
		int64_t i = perm[k], ext = ddt_extent(m[i]);

		cur += gap(s, ext);
		d[i] = cur - ddt_lb(m[i]);
		cur += bl[i] * ext;
	}
	t = ddt_struct(n, bl, d, m);
out:
	for (int64_t i = 0; i < n; i++)
		ddt_free(m[i]);
	return t;
}

static struct ddt_type *gen(uint64_t *s, int depth, int64_t budget)
{
	struct ddt_type *c, *t = NULL;
	int64_t csize, ext, maxn, n, bl, stride;
	int64_t bls[8], dis[8], perm[8];
	int k;

	if (depth <= 0 || budget < 8 || rnd(s, 8) == 0)
		return base(s, budget);
	k = (int)rnd(s, 11);
	if (k == 7)
		return fix_bounds(gen_struct(s, depth, budget));
	c = gen(s, depth - 1, max64(1, budget / (1 + rnd(s, 6))));
	if (c == NULL)
		return NULL;
	csize = max64(1, ddt_size(c));
	ext = ddt_extent(c);
	maxn = max64(1, budget / csize);
	switch (k) {
	case 0:
		t = ddt_contiguous(rnd(s, 30) ? 1 + rnd(s, min64(maxn, 8)) : 0,
				   c);
		break;
	case 1:
	case 2:
		n = rnd(s, 30) ? 1 + rnd(s, min64(maxn, 6)) : 0;
		bl = rnd(s, 20) ? 1 + rnd(s, min64(maxn / max64(n, 1), 4))
			       : 0;
		if (k == 1) {
			stride = bl + rnd(s, 3);
			if (rnd(s, 3) == 0)
				stride = -stride;
			t = ddt_vector(n, bl, stride, c);
		} else {
			stride = bl * ext + gap(s, ext);
			if (rnd(s, 3) == 0)
				stride = -stride;
			t = ddt_hvector(n, bl, stride, c);
		}
		break;
	case 3:
	case 4:
	case 5:
	case 6: {
		int64_t maxbl = 1 + rnd(s, 3), w, shift;
		bool hbytes = k == 4 || k == 6;

		n = rnd(s, 30) ? 1 + rnd(s, min64(maxn, 8)) : 0;
		maxbl = min64(maxbl, max64(1, maxn / max64(n, 1)));
		bl = 1 + rnd(s, maxbl);
		for (int64_t i = 0; i < n; i++) {
			bls[i] = rnd(s, 6) ? 1 + rnd(s, maxbl) : 0;
			perm[i] = i;
		}
		shuffle(s, perm, n);
		shift = rnd(s, n + 1);
		/* one slot per block, in shuffled order */
		w = hbytes ? maxbl * ext + gap(s, ext) : maxbl + rnd(s, 2);
		for (int64_t i = 0; i < n; i++)
			dis[i] = (perm[i] - shift) * w;
		if (k == 3)
			t = ddt_indexed(n, bls, dis, c);
		else if (k == 4)
			t = ddt_hindexed(n, bls, dis, c);
		else if (k == 5)
			t = ddt_indexed_block(n, min64(bl, maxbl), dis, c);
		else
			t = ddt_hindexed_block(n, min64(bl, maxbl), dis, c);
		break;
	}
	case 8: {
		int nd = 1 + (int)rnd(s, 3);
		int64_t sz[3], sub[3], st[3], left = maxn;

		for (int i = 0; i < nd; i++) {
			sz[i] = 1 + rnd(s, 5);
			sub[i] = rnd(s, 30) ? 1 + rnd(s, min64(sz[i], max64(1,
								left))) : 0;
			if (sub[i] > sz[i])
				sub[i] = sz[i];
			left = max64(1, left / max64(1, sub[i]));
			st[i] = rnd(s, sz[i] - sub[i] + 1);
		}
		t = ddt_subarray(nd, sz, sub, st,
				 rnd(s, 2) ? DDT_ORDER_C : DDT_ORDER_FORTRAN, c);
		break;
	}
	case 9: {
		int64_t lb = ddt_lb(c) - gap(s, ext);

		t = ddt_resized(lb, ddt_ub(c) + gap(s, ext) - lb, c);
		break;
	}
	default:
		t = ddt_dup(c);
		break;
	}
	ddt_free(c);
	return fix_bounds(t);
}

struct ddt_type *ddt_gen_random(uint64_t *seed, int max_depth,
				int64_t max_size_bytes)
{
	if (seed == NULL || max_depth < 0 || max_size_bytes < 1) {
		errno = EINVAL;
		return NULL;
	}
	return gen(seed, max_depth, max_size_bytes);
}

/* ---- reference --------------------------------------------------------- */

struct refmap {
	struct ddt_iov *v;
	int64_t n, cap;
	int err;
};

static void push(struct refmap *m, int64_t off, int64_t len)
{
	if (m->err)
		return;
	if (m->n == m->cap) {
		int64_t nc = m->cap ? m->cap * 2 : 64;
		struct ddt_iov *nv = realloc(m->v, (size_t)nc * sizeof(*nv));

		if (nv == NULL) {
			m->err = -ENOMEM;
			return;
		}
		m->v = nv;
		m->cap = nc;
	}
	m->v[m->n++] = (struct ddt_iov){ off, len };
}

static void walk(struct refmap *m, const struct ddt_type *t, int64_t base)
{
	struct ddt_contents c;
	int64_t ext;

	ddt_get_contents(t, &c);
	ext = c.types != NULL && c.types[0] != NULL ? ddt_extent(c.types[0])
						    : 0;
	switch (c.combiner) {
	case DDT_COMBINER_NAMED:
		push(m, base, ddt_size(t));
		break;
	case DDT_COMBINER_DUP:
	case DDT_COMBINER_RESIZED:
		walk(m, c.types[0], base);
		break;
	case DDT_COMBINER_CONTIGUOUS:
		for (int64_t i = 0; i < c.count; i++)
			walk(m, c.types[0], base + i * ext);
		break;
	case DDT_COMBINER_VECTOR:
	case DDT_COMBINER_HVECTOR: {
		int64_t sb = c.combiner == DDT_COMBINER_VECTOR ? c.stride * ext
							       : c.stride;

		for (int64_t i = 0; i < c.count; i++)
			for (int64_t j = 0; j < c.blocklen; j++)
				walk(m, c.types[0], base + i * sb + j * ext);
		break;
	}
	case DDT_COMBINER_INDEXED:
	case DDT_COMBINER_HINDEXED:
	case DDT_COMBINER_INDEXED_BLOCK:
	case DDT_COMBINER_HINDEXED_BLOCK: {
		bool units = c.combiner == DDT_COMBINER_INDEXED ||
			     c.combiner == DDT_COMBINER_INDEXED_BLOCK;

		for (int64_t i = 0; i < c.count; i++) {
			int64_t bl = c.blocklens ? c.blocklens[i] : c.blocklen;
			int64_t d = units ? c.displs[i] * ext : c.displs[i];

			for (int64_t j = 0; j < bl; j++)
				walk(m, c.types[0], base + d + j * ext);
		}
		break;
	}
	case DDT_COMBINER_STRUCT:
		for (int64_t i = 0; i < c.count; i++) {
			int64_t e = ddt_extent(c.types[i]);

			for (int64_t j = 0; j < c.blocklens[i]; j++)
				walk(m, c.types[i], base + c.displs[i] + j * e);
		}
		break;
	case DDT_COMBINER_SUBARRAY: {
		int nd = (int)c.count;
		int64_t idx[DDT_MAX_DEPTH] = { 0 }, mul[DDT_MAX_DEPTH];
		int64_t acc = ext;
		bool any = true;

		/* element stride of each dimension, fastest dimension first */
		for (int k = 0; k < nd; k++) {
			int d = c.order == DDT_ORDER_C ? nd - 1 - k : k;

			mul[d] = acc;
			acc *= c.sizes[d];
			if (c.subsizes[d] == 0)
				any = false;
		}
		while (any) {
			int64_t off = base;
			int k;

			for (int d = 0; d < nd; d++)
				off += (c.starts[d] + idx[d]) * mul[d];
			walk(m, c.types[0], off);
			/* increment, fastest dimension first */
			for (k = 0; k < nd; k++) {
				int d = c.order == DDT_ORDER_C ? nd - 1 - k : k;

				if (++idx[d] < c.subsizes[d])
					break;
				idx[d] = 0;
			}
			if (k == nd)
				break;
		}
		break;
	}
	}
}

int64_t ddt_ref_typemap(const struct ddt_type *t, int64_t count,
			struct ddt_iov **out_p)
{
	struct refmap m = { 0 };

	if (t == NULL || out_p == NULL || count < 0)
		return -EINVAL;
	for (int64_t e = 0; e < count; e++)
		walk(&m, t, e * ddt_extent(t));
	if (m.err) {
		free(m.v);
		return m.err;
	}
	*out_p = m.v;
	return m.n;
}

int64_t ddt_ref_merge(struct ddt_iov *map, int64_t n)
{
	int64_t w = 0;

	for (int64_t i = 0; i < n; i++) {
		if (map[i].len == 0)
			continue;
		if (w > 0 && map[w - 1].off + map[w - 1].len == map[i].off) {
			map[w - 1].len += map[i].len;
			continue;
		}
		map[w++] = map[i];
	}
	return w;
}

void ddt_ref_span(const struct ddt_iov *map, int64_t n, int64_t *lo_p,
		  int64_t *hi_p)
{
	int64_t lo = 0, hi = 0;

	for (int64_t i = 0; i < n; i++) {
		if (i == 0 || map[i].off < lo)
			lo = map[i].off;
		if (i == 0 || map[i].off + map[i].len > hi)
			hi = map[i].off + map[i].len;
	}
	*lo_p = lo;
	*hi_p = hi;
}

void ddt_ref_pack(const struct ddt_iov *map, int64_t n, const void *typed,
		  void *packed)
{
	const char *t = typed;
	char *p = packed;

	for (int64_t i = 0; i < n; i++) {
		memcpy(p, t + map[i].off, (size_t)map[i].len);
		p += map[i].len;
	}
}

void ddt_ref_unpack(const struct ddt_iov *map, int64_t n, const void *packed,
		    void *typed)
{
	const char *p = packed;
	char *t = typed;

	for (int64_t i = 0; i < n; i++) {
		memcpy(t + map[i].off, p, (size_t)map[i].len);
		p += map[i].len;
	}
}
