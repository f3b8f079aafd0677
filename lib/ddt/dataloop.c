/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Commit: type tree -> normalized dataloops -> one pointer-free blob.
 * Load: validation of a blob that may come from anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

/* ---- in-memory dataloop tree ------------------------------------------- */

struct node {
	int kind;
	bool leaf;
	int64_t count, blocklen, stride, off;
	int64_t *displs, *blocklens;
	struct node **children;
	struct node *child;
	int64_t size, extent, tlb, tub;
	int depth;
	int64_t idx;       /* serialization index, -1 until placed */
	bool visiting;
};

struct memo {
	const struct ddt_type *t;
	struct node *n;
};

struct bctx {
	void **allocs;
	size_t nallocs, cap;
	struct memo memo[256];
	int nmemo;
	int err;           /* first error (negative) */
	struct node **order;
	int64_t norder, ordcap;
};

static void *ctx_alloc(struct bctx *c, size_t sz)
{
	void *p;

	if (c->err)
		return NULL;
	if (c->nallocs == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		void **na = realloc(c->allocs, ncap * sizeof(*na));

		if (na == NULL)
			goto nomem;
		c->allocs = na;
		c->cap = ncap;
	}
	p = calloc(1, sz ? sz : 1);
	if (p == NULL)
		goto nomem;
	c->allocs[c->nallocs++] = p;
	return p;
nomem:
	c->err = -ENOMEM;
	return NULL;
}

static void ctx_free(struct bctx *c)
{
	for (size_t i = 0; i < c->nallocs; i++)
		free(c->allocs[i]);
	free(c->allocs);
	free(c->order);
}

static struct node *node_new(struct bctx *c, int kind, bool leaf)
{
	struct node *n = ctx_alloc(c, sizeof(*n));

	if (n == NULL)
		return NULL;
	n->kind = kind;
	n->leaf = leaf;
	n->idx = -1;
	return n;
}

static struct node *node_copy(struct bctx *c, const struct node *o)
{
	struct node *n = ctx_alloc(c, sizeof(*n));

	if (n == NULL)
		return NULL;
	*n = *o;
	n->idx = -1;
	return n;
}

static int64_t *arr_new(struct bctx *c, int64_t n)
{
	return ctx_alloc(c, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
}

static inline int64_t n_bl(const struct node *n, int64_t i)
{
	return n->kind <= DDT_DL_BLOCKINDEXED ? n->blocklen : n->blocklens[i];
}

static inline int64_t n_disp(const struct node *n, int64_t i)
{
	return n->kind <= DDT_DL_VECTOR ? n->off + i * n->stride
					: n->off + n->displs[i];
}

static inline struct node *n_child(const struct node *n, int64_t i)
{
	return n->kind == DDT_DL_STRUCT ? n->children[i] : n->child;
}

static bool in_span(int64_t v)
{
	return v <= DDT_SPAN_MAX && v >= -DDT_SPAN_MAX;
}

/*
 * Size, data span and depth of a loop from its blocks and children. Shared
 * by the builder and the blob validator's arithmetic (ddt_dl_span below).
 * @return 0, -DDT_E_OVERFLOW
 */
static int span_block(int64_t d, int64_t bl, int64_t csize, int64_t ctlb,
		      int64_t ctub, int64_t cext, int64_t *size, int64_t *lo,
		      int64_t *hi, bool *any)
{
	int64_t s, a, b, span;

	if (__builtin_mul_overflow(bl, csize, &s) ||
	    __builtin_add_overflow(*size, s, size) ||
	    __builtin_mul_overflow(bl - 1, cext, &span) ||
	    __builtin_add_overflow(d, ctlb, &a) ||
	    __builtin_add_overflow(d, ctub, &b))
		return -DDT_E_OVERFLOW;
	if (span < 0 ? __builtin_add_overflow(a, span, &a)
		     : __builtin_add_overflow(b, span, &b))
		return -DDT_E_OVERFLOW;
	if (!*any || a < *lo)
		*lo = a;
	if (!*any || b > *hi)
		*hi = b;
	*any = true;
	return 0;
}

static int node_finish(struct node *n)
{
	int64_t size = 0, lo = 0, hi = 0;
	bool any = false;
	int rc = 0, depth = 0;

	for (int64_t i = 0; i < n->count && rc == 0; i++) {
		int64_t d, bl = n_bl(n, i);
		const struct node *ch = n->leaf ? NULL : n_child(n, i);

		/* a vector's extremes are its first and last blocks */
		if (n->kind == DDT_DL_VECTOR && i == 1 && n->count > 2)
			i = n->count - 1;
		if (n->kind <= DDT_DL_VECTOR) {
			if (__builtin_mul_overflow(i, n->stride, &d) ||
			    __builtin_add_overflow(d, n->off, &d))
				return -DDT_E_OVERFLOW;
		} else {
			if (__builtin_add_overflow(n->displs[i], n->off, &d))
				return -DDT_E_OVERFLOW;
		}
		if (ch == NULL) {
			rc = span_block(d, 1, bl, 0, bl, 0, &size, &lo, &hi,
					&any);
		} else {
			rc = span_block(d, bl, ch->size, ch->tlb, ch->tub,
					ch->extent, &size, &lo, &hi, &any);
			if (ch->depth > depth)
				depth = ch->depth;
		}
	}
	if (rc)
		return rc;
	if (n->kind == DDT_DL_VECTOR && n->count > 2) {
		int64_t per;

		/* only first and last were summed */
		if (__builtin_mul_overflow(size / 2, n->count, &per))
			return -DDT_E_OVERFLOW;
		size = per;
	}
	n->size = size;
	n->tlb = any ? lo : 0;
	n->tub = any ? hi : 0;
	n->depth = depth + 1;
	if (!in_span(size) || !in_span(n->tlb) || !in_span(n->tub) ||
	    !in_span(n->extent) || !in_span(n->off) || !in_span(n->stride))
		return -DDT_E_OVERFLOW;
	return 0;
}

/* ---- normalization -------------------------------------------------------- */

static bool single_leaf(const struct node *c)
{
	return c->leaf && c->kind == DDT_DL_CONTIG;
}

/* contiguous non-leaf run: CONTIG at off 0 whose extent is exactly its copies */
static bool dense_contig(const struct node *c)
{
	return !c->leaf && c->kind == DDT_DL_CONTIG && c->off == 0 &&
	       c->extent == c->blocklen * c->child->extent;
}

static void make_contig(struct node *n, int64_t bl, int64_t off)
{
	n->kind = DDT_DL_CONTIG;
	n->count = 1;
	n->blocklen = bl;
	n->stride = 0;
	n->off = off;
	n->displs = n->blocklens = NULL;
	n->children = NULL;
}

static void make_vector(struct node *n, int64_t count, int64_t bl,
			int64_t stride, int64_t off)
{
	n->kind = DDT_DL_VECTOR;
	n->count = count;
	n->blocklen = bl;
	n->stride = stride;
	n->off = off;
	n->displs = n->blocklens = NULL;
	n->children = NULL;
}

/* Merge adjacent blocks of an (indexed-like) node in place; `unit` is the
 * byte distance per blocklen unit (1 for leaves, child extent otherwise). */
static void merge_blocks(struct node *n, int64_t unit)
{
	int64_t w = 0;

	for (int64_t i = 0; i < n->count; i++) {
		int64_t d = n->displs[i], bl = n->blocklens[i];

		if (w > 0 && n->displs[w - 1] + n->blocklens[w - 1] * unit == d) {
			n->blocklens[w - 1] += bl;
			continue;
		}
		n->displs[w] = d;
		n->blocklens[w] = bl;
		w++;
	}
	n->count = w;
}

/* INDEXED (displs relative to off, already with off folded in) ->
 * CONTIG / VECTOR / BLOCKINDEXED when regular. */
static void index_simplify(struct node *n, int64_t unit)
{
	bool same = true, regular = true;

	n->kind = DDT_DL_INDEXED;
	merge_blocks(n, unit);
	if (n->count == 1) {
		make_contig(n, n->blocklens[0], n->displs[0]);
		return;
	}
	for (int64_t i = 1; i < n->count; i++) {
		if (n->blocklens[i] != n->blocklens[0])
			same = false;
		if (n->displs[i] - n->displs[i - 1] != n->displs[1] - n->displs[0])
			regular = false;
	}
	if (!same || n->count == 0)
		return;
	if (regular) {
		make_vector(n, n->count, n->blocklens[0],
			    n->displs[1] - n->displs[0], n->displs[0]);
		return;
	}
	n->kind = DDT_DL_BLOCKINDEXED;
	n->blocklen = n->blocklens[0];
	n->blocklens = NULL;
}

/* Expand any block layout into explicit (displ, blocklen) arrays. */
static int to_indexed(struct bctx *c, struct node *n)
{
	int64_t *d, *b;

	if (n->kind == DDT_DL_INDEXED || n->kind == DDT_DL_STRUCT)
		return 0;
	d = arr_new(c, n->count);
	b = arr_new(c, n->count);
	if (d == NULL || b == NULL)
		return c->err;
	for (int64_t i = 0; i < n->count; i++) {
		d[i] = n_disp(n, i);
		b[i] = n_bl(n, i);
	}
	n->displs = d;
	n->blocklens = b;
	n->off = 0;
	n->kind = DDT_DL_INDEXED;
	return 0;
}

static struct node *empty_node(struct bctx *c)
{
	struct node *n = node_new(c, DDT_DL_INDEXED, true);

	if (n != NULL)
		n->count = 0;
	return n;
}

static int leaf_normalize(struct bctx *c, struct node *n)
{
	if (n->kind == DDT_DL_VECTOR) {
		if (n->count == 1)
			make_contig(n, n->blocklen, n->off);
		else if (n->stride == n->blocklen)
			make_contig(n, n->count * n->blocklen, n->off);
		return 0;
	}
	if (n->kind == DDT_DL_CONTIG)
		return 0;
	if (to_indexed(c, n))
		return c->err;
	index_simplify(n, 1);
	if (n->kind == DDT_DL_VECTOR)
		return leaf_normalize(c, n);
	return 0;
}

/* Blocks of b > 1 copies of one leaf block (L bytes, extent E != L): make
 * each block one copy of a leaf vector (b, L, E), so the engine runs the
 * copies in its tight vector loop. */
static struct node *split_copies(struct bctx *c, struct node *n)
{
	struct node *ch = n->child, *v;
	int64_t b = n->blocklen;

	if (!single_leaf(ch) || b <= 1 || ch->extent == ch->blocklen)
		return n;
	v = node_new(c, DDT_DL_VECTOR, true);
	if (v == NULL)
		return NULL;
	make_vector(v, b, ch->blocklen, ch->extent, ch->off);
	v->extent = b * ch->extent;
	if (node_finish(v)) {
		c->err = -DDT_E_OVERFLOW;
		return NULL;
	}
	n->child = v;
	n->blocklen = 1;
	return n;
}

/* Normalize a freshly built node whose children are final. May return a
 * different node. Sets c->err on failure. */
static struct node *normalize(struct bctx *c, struct node *n)
{
	struct node *ch;
	int64_t w = 0;

	if (n->leaf)
		goto leaf;
	/* drop empty blocks */
	if (n->kind == DDT_DL_INDEXED || n->kind == DDT_DL_STRUCT ||
	    n->kind == DDT_DL_BLOCKINDEXED) {
		if (n->kind == DDT_DL_BLOCKINDEXED && n->blocklen == 0)
			return empty_node(c);
		if (to_indexed(c, n))
			return NULL;
		for (int64_t i = 0; i < n->count; i++) {
			if (n->blocklens[i] == 0 || n_child(n, i)->size == 0)
				continue;
			n->displs[w] = n->displs[i];
			n->blocklens[w] = n->blocklens[i];
			if (n->kind == DDT_DL_STRUCT)
				n->children[w] = n->children[i];
			w++;
		}
		n->count = w;
		if (w == 0)
			return empty_node(c);
		if (n->kind == DDT_DL_STRUCT) {
			bool same = true, leafs = true;

			for (int64_t i = 0; i < n->count; i++) {
				const struct node *k = n->children[i];

				if (k != n->children[0])
					same = false;
				if (!single_leaf(k) ||
				    (k->extent != k->blocklen &&
				     n->blocklens[i] != 1))
					leafs = false;
			}
			if (leafs) {
				for (int64_t i = 0; i < n->count; i++) {
					const struct node *k = n->children[i];

					n->displs[i] += k->off;
					n->blocklens[i] *= k->blocklen;
				}
				n->kind = DDT_DL_INDEXED;
				n->leaf = true;
				n->children = NULL;
				goto leaf;
			}
			if (!same)
				return n;
			n->child = n->children[0];
			n->children = NULL;
			n->kind = DDT_DL_INDEXED;
		}
	} else if (n->count == 0 || n->blocklen == 0 || n->child->size == 0) {
		return empty_node(c);
	}
	ch = n->child;
	/* child is one leaf block of L bytes at o: become a leaf */
	if (single_leaf(ch)) {
		int64_t L = ch->blocklen, o = ch->off, E = ch->extent;

		if (n->kind == DDT_DL_CONTIG) {
			if (E == L)
				make_contig(n, n->blocklen * L, n->off + o);
			else
				make_vector(n, n->blocklen, L, E, n->off + o);
			n->leaf = true;
			goto leaf;
		}
		if (n->kind == DDT_DL_VECTOR && (n->blocklen == 1 || E == L)) {
			make_vector(n, n->count, n->blocklen * L, n->stride,
				    n->off + o);
			n->leaf = true;
			goto leaf;
		}
		if (n->kind == DDT_DL_INDEXED) {
			bool ones = true;

			for (int64_t i = 0; i < n->count; i++)
				if (n->blocklens[i] != 1)
					ones = false;
			if (E == L || ones) {
				for (int64_t i = 0; i < n->count; i++) {
					n->displs[i] += o;
					n->blocklens[i] *= L;
				}
				n->leaf = true;
				goto leaf;
			}
		}
	}
	/* contiguous run of the grandchild: fold into our blocklen */
	if (dense_contig(ch)) {
		int64_t m = ch->blocklen;

		if (n->kind == DDT_DL_INDEXED) {
			for (int64_t i = 0; i < n->count; i++)
				n->blocklens[i] *= m;
		} else {
			n->blocklen *= m;
		}
		n->child = ch->child;
		return normalize(c, n);
	}
	if (n->kind == DDT_DL_INDEXED) {
		index_simplify(n, ch->extent);
		if (n->kind == DDT_DL_CONTIG || n->kind == DDT_DL_VECTOR)
			return normalize(c, n);
		if (n->kind == DDT_DL_BLOCKINDEXED)
			return split_copies(c, n);
		return n;
	}
	if (n->kind == DDT_DL_VECTOR) {
		if (n->count == 1) {
			make_contig(n, n->blocklen, n->off);
			return normalize(c, n);
		}
		if (n->stride == n->blocklen * ch->extent) {
			make_contig(n, n->count * n->blocklen, n->off);
			return normalize(c, n);
		}
		if (n->blocklen == 1 && ch->leaf && ch->kind == DDT_DL_VECTOR &&
		    n->stride == ch->count * ch->stride) {
			/* rows of a vector that continue its stride */
			make_vector(n, n->count * ch->count, ch->blocklen,
				    ch->stride, n->off + ch->off);
			n->leaf = true;
			goto leaf;
		}
		return split_copies(c, n);
	}
	/* CONTIG */
	if (n->blocklen == 1) {
		struct node *k = node_copy(c, ch);

		if (k == NULL)
			return NULL;
		if (k->kind >= DDT_DL_BLOCKINDEXED && n->off != 0) {
			/* fold the offset into (a copy of) the displacements,
			 * so indexed leaves keep off == 0 */
			int64_t *d = arr_new(c, k->count);

			if (d == NULL)
				return NULL;
			for (int64_t i = 0; i < k->count; i++)
				d[i] = k->displs[i] + k->off + n->off;
			k->displs = d;
			k->off = 0;
		} else {
			k->off += n->off;
		}
		k->extent = n->extent;
		if (node_finish(k)) {
			c->err = -DDT_E_OVERFLOW;
			return NULL;
		}
		return k;
	}
	/* contig of a leaf vector that continues its stride */
	if (ch->leaf && ch->kind == DDT_DL_VECTOR &&
	    ch->extent == ch->count * ch->stride) {
		int64_t cnt = n->blocklen * ch->count;

		make_vector(n, cnt, ch->blocklen, ch->stride, n->off + ch->off);
		n->leaf = true;
		n->child = NULL;
		goto leaf;
	}
	return n;
leaf:
	n->child = NULL;
	if (leaf_normalize(c, n))
		return NULL;
	return n;
}

/* ---- type -> dataloops --------------------------------------------------- */

static struct node *build(struct bctx *c, const struct ddt_type *t);

static struct node *build_one(struct bctx *c, const struct ddt_type *t)
{
	struct node *n, *ch;
	int64_t ext;

	switch (t->comb) {
	case DDT_COMBINER_NAMED:
		n = node_new(c, DDT_DL_CONTIG, true);
		if (n != NULL)
			make_contig(n, t->size, 0);
		return n;
	case DDT_COMBINER_DUP:
	case DDT_COMBINER_RESIZED:
	case DDT_COMBINER_SUBARRAY:
		ch = build(c, t->comb == DDT_COMBINER_SUBARRAY ? t->inner
							       : t->types[0]);
		if (ch == NULL)
			return NULL;
		n = node_copy(c, ch);
		return n;
	default:
		break;
	}
	if (t->comb == DDT_COMBINER_STRUCT) {
		n = node_new(c, DDT_DL_STRUCT, false);
		if (n == NULL)
			return NULL;
		n->count = t->count;
		n->displs = arr_new(c, t->count);
		n->blocklens = arr_new(c, t->count);
		n->children = ctx_alloc(c, (size_t)(t->count ? t->count : 1) *
					   sizeof(*n->children));
		if (c->err)
			return NULL;
		for (int64_t i = 0; i < t->count; i++) {
			n->displs[i] = t->displs[i];
			n->blocklens[i] = t->blocklens[i];
			n->children[i] = build(c, t->types[i]);
			if (n->children[i] == NULL)
				return NULL;
		}
		return n;
	}
	ch = build(c, t->types[0]);
	if (ch == NULL)
		return NULL;
	ext = t->types[0]->ub - t->types[0]->lb;
	switch (t->comb) {
	case DDT_COMBINER_CONTIGUOUS:
		n = node_new(c, DDT_DL_CONTIG, false);
		if (n != NULL)
			make_contig(n, t->count, 0);
		break;
	case DDT_COMBINER_VECTOR:
	case DDT_COMBINER_HVECTOR:
		n = node_new(c, DDT_DL_VECTOR, false);
		if (n != NULL)
			make_vector(n, t->count, t->blocklen,
				    t->comb == DDT_COMBINER_VECTOR
					    ? t->stride * ext : t->stride, 0);
		break;
	default: /* indexed family */
		n = node_new(c, DDT_DL_INDEXED, false);
		if (n == NULL)
			break;
		n->count = t->count;
		n->displs = arr_new(c, t->count);
		n->blocklens = arr_new(c, t->count);
		if (c->err)
			return NULL;
		for (int64_t i = 0; i < t->count; i++) {
			bool ext_units = t->comb == DDT_COMBINER_INDEXED ||
					 t->comb == DDT_COMBINER_INDEXED_BLOCK;

			n->displs[i] = ext_units ? t->displs[i] * ext
						 : t->displs[i];
			n->blocklens[i] = t->blocklens != NULL ? t->blocklens[i]
							       : t->blocklen;
		}
		break;
	}
	if (n != NULL)
		n->child = ch;
	return n;
}

static struct node *build(struct bctx *c, const struct ddt_type *t)
{
	struct node *n;

	for (int i = 0; i < c->nmemo; i++)
		if (c->memo[i].t == t)
			return c->memo[i].n;
	n = build_one(c, t);
	if (n == NULL)
		goto err;
	n->extent = t->ub - t->lb;
	/* elementary types and copies of finished nodes are already normal */
	if (t->comb == DDT_COMBINER_NAMED || t->comb == DDT_COMBINER_DUP ||
	    t->comb == DDT_COMBINER_RESIZED || t->comb == DDT_COMBINER_SUBARRAY)
		goto done;
	/* children final: normalize and compute size and span */
	n = normalize(c, n);
	if (n == NULL)
		goto err;
	n->extent = t->ub - t->lb;
done:
	if (node_finish(n)) {
		c->err = -DDT_E_OVERFLOW;
		return NULL;
	}
	if (c->nmemo < (int)(sizeof(c->memo) / sizeof(c->memo[0])))
		c->memo[c->nmemo++] = (struct memo){ t, n };
	return n;
err:
	if (!c->err)
		c->err = -ENOMEM;
	return NULL;
}

/* ---- serialization ----------------------------------------------------- */

static int order_push(struct bctx *c, struct node *n)
{
	if (c->norder == c->ordcap) {
		int64_t ncap = c->ordcap ? c->ordcap * 2 : 16;
		struct node **no = realloc(c->order, (size_t)ncap * sizeof(*no));

		if (no == NULL)
			return -ENOMEM;
		c->order = no;
		c->ordcap = ncap;
	}
	c->order[c->norder++] = n;
	return 0;
}

/* post-order DFS (depth is bounded by DDT_MAX_DEPTH) */
static int postorder(struct bctx *c, struct node *n)
{
	if (n->idx != -1)
		return 0;
	n->idx = -2;
	for (int64_t i = 0; !n->leaf && i < n->count; i++) {
		int rc = postorder(c, n_child(n, i));

		if (rc)
			return rc;
		if (n->kind != DDT_DL_STRUCT)
			break;
	}
	return order_push(c, n);
}

uint32_t ddt_blob_checksum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t h = 2166136261u;
	size_t cs = offsetof(struct ddt_blob_hdr, checksum);

	for (size_t i = 0; i < len; i++) {
		uint8_t v = (i >= cs && i < cs + 4) ? 0 : p[i];

		h = (h ^ v) * 16777619u;
	}
	return h;
}

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

int ddt_build_blob(const struct ddt_type *t, void **blob_p, size_t *len_p)
{
	struct bctx c = { 0 };
	struct node *root;
	struct ddt_blob_hdr *h;
	size_t len, pos;
	uint8_t *blob;
	int64_t n;
	int rc;

	root = build(&c, t);
	if (root == NULL) {
		rc = c.err ? c.err : -ENOMEM;
		goto out;
	}
	if (!in_span(t->lb) || !in_span(t->ub - t->lb)) {
		rc = -DDT_E_OVERFLOW;
		goto out;
	}
	if (root->depth > DDT_MAX_DEPTH) {
		rc = -DDT_E_DEPTH;
		goto out;
	}
	rc = postorder(&c, root);
	if (rc)
		goto out;
	n = c.norder;
	/* reverse post-order: parents before children, root first */
	for (int64_t i = 0; i < n; i++)
		c.order[n - 1 - i]->idx = i;
	len = sizeof(*h) + (size_t)n * sizeof(struct ddt_dl);
	for (int64_t i = 0; i < n; i++) {
		const struct node *k = c.order[i];
		size_t cnt = (size_t)k->count;

		if (k->kind >= DDT_DL_BLOCKINDEXED)
			len += cnt * 8;
		if (k->kind >= DDT_DL_INDEXED)
			len += cnt * 8 + (cnt + 1) * 8;
		if (k->kind == DDT_DL_STRUCT)
			len += align8(cnt * 4);
	}
	if (len > UINT32_MAX) {
		rc = -DDT_E_OVERFLOW;
		goto out;
	}
	blob = aligned_alloc(8, align8(len));
	if (blob == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memset(blob, 0, len);
	h = (struct ddt_blob_hdr *)blob;
	pos = sizeof(*h) + (size_t)n * sizeof(struct ddt_dl);
	for (int64_t i = 0; i < n; i++) {
		const struct node *k = c.order[n - 1 - i];
		struct ddt_dl *l = (struct ddt_dl *)(blob + sizeof(*h)) + i;

		l->kind = (uint8_t)k->kind;
		l->leaf = k->leaf;
		l->depth = (uint16_t)k->depth;
		l->count = k->count;
		l->blocklen = k->kind <= DDT_DL_BLOCKINDEXED ? k->blocklen : 0;
		l->stride = k->kind == DDT_DL_VECTOR ? k->stride : 0;
		l->off = k->off;
		l->size = k->size;
		l->extent = k->extent;
		l->tlb = k->tlb;
		l->tub = k->tub;
		if (!k->leaf && k->kind != DDT_DL_STRUCT)
			l->child = (uint32_t)k->child->idx;
		if (k->kind >= DDT_DL_BLOCKINDEXED) {
			l->displs = (uint32_t)pos;
			if (k->count > 0)
				memcpy(blob + pos, k->displs,
				       (size_t)k->count * 8);
			pos += (size_t)k->count * 8;
		}
		if (k->kind >= DDT_DL_INDEXED) {
			int64_t *pre;

			l->blocklens = (uint32_t)pos;
			if (k->count > 0)
				memcpy(blob + pos, k->blocklens,
				       (size_t)k->count * 8);
			pos += (size_t)k->count * 8;
			l->prefix = (uint32_t)pos;
			pre = (int64_t *)(blob + pos);
			pre[0] = 0;
			for (int64_t j = 0; j < k->count; j++) {
				const struct node *ch =
					k->leaf ? NULL : n_child(k, j);

				pre[j + 1] = pre[j] + k->blocklens[j] *
						(ch ? ch->size : 1);
			}
			pos += (size_t)(k->count + 1) * 8;
		}
		if (k->kind == DDT_DL_STRUCT) {
			uint32_t *ch = (uint32_t *)(blob + pos);

			l->children = (uint32_t)pos;
			for (int64_t j = 0; j < k->count; j++)
				ch[j] = (uint32_t)k->children[j]->idx;
			pos += align8((size_t)k->count * 4);
		}
	}
	h->magic = DDT_BLOB_MAGIC;
	h->version = DDT_BLOB_VERSION;
	h->depth = (uint16_t)root->depth;
	h->nloops = (uint32_t)n;
	h->len = len;
	h->size = root->size;
	h->extent = t->ub - t->lb;
	h->lb = t->lb;
	h->true_lb = root->tlb;
	h->true_ub = root->tub;
	h->checksum = ddt_blob_checksum(blob, len);
	*blob_p = blob;
	*len_p = len;
	rc = 0;
out:
	ctx_free(&c);
	return rc;
}

/* ---- validation ---------------------------------------------------------- */

static __thread char blob_err[128];

/** Reason the last ddt_blob_load() of this thread rejected a blob. */
const char *ddt_blob_error(void)
{
	return blob_err;
}

#define REJECT(...)                                                 \
	do {                                                        \
		snprintf(blob_err, sizeof(blob_err), __VA_ARGS__);  \
		return -DDT_E_BLOB;                                 \
	} while (0)

static bool arr_ok(const struct ddt_blob_hdr *h, size_t table_end,
		   uint32_t off, int64_t n, size_t esz)
{
	uint64_t bytes;

	if (off < table_end || off > h->len || off % esz != 0 || n < 0)
		return false;
	if (__builtin_mul_overflow((uint64_t)n, esz, &bytes))
		return false;
	return bytes <= h->len - off;
}

static int check_loop(const struct ddt_blob *b, size_t table_end, uint32_t k)
{
	const struct ddt_blob_hdr *h = &b->h;
	const struct ddt_dl *l = ddt_dl_at(b, k);
	int64_t size = 0, lo = 0, hi = 0;
	const int64_t *pre = NULL;
	bool any = false, indexed;
	int depth = 0;

	if (l->kind < DDT_DL_CONTIG || l->kind > DDT_DL_STRUCT || l->leaf > 1)
		REJECT("loop %u: bad kind", k);
	if (l->leaf && l->kind == DDT_DL_STRUCT)
		REJECT("loop %u: leaf struct", k);
	if (l->count < 0 || (l->count == 0 && k != 0) ||
	    (l->kind == DDT_DL_CONTIG && l->count != 1))
		REJECT("loop %u: bad count", k);
	if (l->kind <= DDT_DL_BLOCKINDEXED && l->blocklen <= 0)
		REJECT("loop %u: bad blocklen", k);
	if (!in_span(l->off) || !in_span(l->stride) || l->extent < 0 ||
	    !in_span(l->extent))
		REJECT("loop %u: value out of range", k);
	indexed = l->kind >= DDT_DL_INDEXED;
	if (l->kind >= DDT_DL_BLOCKINDEXED &&
	    !arr_ok(h, table_end, l->displs, l->count, 8))
		REJECT("loop %u: displacements out of range", k);
	if (indexed && (!arr_ok(h, table_end, l->blocklens, l->count, 8) ||
			!arr_ok(h, table_end, l->prefix, l->count + 1, 8)))
		REJECT("loop %u: arrays out of range", k);
	if (l->kind == DDT_DL_STRUCT &&
	    !arr_ok(h, table_end, l->children, l->count, 4))
		REJECT("loop %u: children out of range", k);
	if (!l->leaf && l->kind != DDT_DL_STRUCT &&
	    (l->child <= k || l->child >= h->nloops))
		REJECT("loop %u: child index %u", k, l->child);
	if (indexed) {
		pre = ddt_dl_arr(b, l->prefix);
		if (pre[0] != 0)
			REJECT("loop %u: prefix", k);
	}
	for (int64_t i = 0; i < l->count; i++) {
		int64_t d, bl = ddt_dl_bl(b, l, i), psz = 0;
		const struct ddt_dl *ch = NULL;

		if (l->kind == DDT_DL_VECTOR && i == 1 && l->count > 2)
			i = l->count - 1;
		if (bl <= 0)
			REJECT("loop %u: block %ld empty", k, (long)i);
		if (l->kind >= DDT_DL_BLOCKINDEXED) {
			d = ddt_dl_arr(b, l->displs)[i];
			if (!in_span(d))
				REJECT("loop %u: displacement", k);
			d += l->off;
		} else if (__builtin_mul_overflow(i, l->stride, &d) ||
			   __builtin_add_overflow(d, l->off, &d)) {
			REJECT("loop %u: stride overflow", k);
		}
		if (!l->leaf) {
			uint32_t ci = ddt_dl_child(b, l, i);

			if (ci <= k || ci >= h->nloops)
				REJECT("loop %u: child index %u", k, ci);
			ch = ddt_dl_at(b, ci);
			if (ch->depth > depth)
				depth = ch->depth;
			if (ch->size <= 0)
				REJECT("loop %u: empty child", k);
		}
		if (indexed)
			psz = size;
		if (ch == NULL ? span_block(d, 1, bl, 0, bl, 0, &size, &lo, &hi,
					    &any)
			       : span_block(d, bl, ch->size, ch->tlb, ch->tub,
					    ch->extent, &size, &lo, &hi, &any))
			REJECT("loop %u: overflow", k);
		if (!in_span(size) || !in_span(lo) || !in_span(hi))
			REJECT("loop %u: span too large", k);
		if (indexed && (pre[i] != psz || pre[i + 1] != size))
			REJECT("loop %u: prefix", k);
	}
	if (l->kind == DDT_DL_VECTOR && l->count > 2 &&
	    __builtin_mul_overflow(size / 2, l->count, &size))
		REJECT("loop %u: size overflow", k);
	if (!in_span(size))
		REJECT("loop %u: size", k);
	if (size != l->size || (any ? lo : 0) != l->tlb ||
	    (any ? hi : 0) != l->tub)
		REJECT("loop %u: size or span mismatch", k);
	if (l->depth != depth + 1 || l->depth > DDT_MAX_DEPTH)
		REJECT("loop %u: depth", k);
	return 0;
}

int ddt_blob_load(const void *buf, size_t len, const struct ddt_blob **view_p)
{
	const struct ddt_blob *b = buf;
	const struct ddt_blob_hdr *h = buf;
	const struct ddt_dl *root;
	size_t table_end;

	if (buf == NULL || view_p == NULL || ((uintptr_t)buf & 7) != 0)
		return -EINVAL;
	blob_err[0] = 0;
	if (len < sizeof(*h))
		REJECT("truncated header");
	if (h->magic != DDT_BLOB_MAGIC)
		REJECT("bad magic");
	if (h->version != DDT_BLOB_VERSION)
		REJECT("unsupported version %u", h->version);
	if (h->len < sizeof(*h))
		REJECT("bad length %lu", (unsigned long)h->len);
	if (h->len > len || h->len > UINT32_MAX)
		REJECT("truncated: %lu of %lu bytes", (unsigned long)len,
		       (unsigned long)h->len);
	if (h->nloops == 0 ||
	    h->nloops > (h->len - sizeof(*h)) / sizeof(struct ddt_dl))
		REJECT("bad loop count");
	if (ddt_blob_checksum(buf, h->len) != h->checksum)
		REJECT("checksum mismatch");
	table_end = sizeof(*h) + (size_t)h->nloops * sizeof(struct ddt_dl);
	/* children have larger indices: validate them first */
	for (uint32_t k = h->nloops; k-- > 0;) {
		int rc = check_loop(b, table_end, k);

		if (rc)
			return rc;
	}
	root = ddt_dl_at(b, 0);
	if (h->size != root->size || h->true_lb != root->tlb ||
	    h->true_ub != root->tub || h->depth != root->depth)
		REJECT("header does not match root loop");
	if (h->extent < 0 || !in_span(h->extent) || !in_span(h->lb))
		REJECT("header values out of range");
	*view_p = b;
	return 0;
}

int64_t ddt_blob_size(const struct ddt_blob *b)
{
	return b->h.size;
}

int64_t ddt_blob_extent(const struct ddt_blob *b)
{
	return b->h.extent;
}

/* ---- blob -> type ---------------------------------------------------------- */

static struct ddt_type *loop_type(const struct ddt_blob *b, uint32_t k);

static struct ddt_type *loop_type_raw(const struct ddt_blob *b,
				      const struct ddt_dl *l)
{
	struct ddt_type *byte = ddt_base(DDT_BYTE), *ch = NULL, *t;
	int64_t n = l->count;

	if (l->kind == DDT_DL_STRUCT) {
		struct ddt_type **tv = calloc((size_t)(n ? n : 1), sizeof(*tv));
		int64_t *d = malloc((size_t)(n ? n : 1) * 8);

		t = NULL;
		if (tv == NULL || d == NULL) {
			errno = ENOMEM;
			goto sout;
		}
		for (int64_t i = 0; i < n; i++) {
			tv[i] = loop_type(b, ddt_dl_child(b, l, i));
			if (tv[i] == NULL)
				goto sout;
			d[i] = ddt_dl_disp(b, l, i);
		}
		t = ddt_struct(n, ddt_dl_arr(b, l->blocklens), d, tv);
sout:
		for (int64_t i = 0; tv != NULL && i < n; i++)
			ddt_free(tv[i]);
		free(tv);
		free(d);
		return t;
	}
	if (!l->leaf) {
		ch = loop_type(b, l->child);
		if (ch == NULL)
			return NULL;
	} else {
		ch = byte;
	}
	switch (l->kind) {
	case DDT_DL_CONTIG:
		t = ddt_hindexed_block(1, l->blocklen, &l->off, ch);
		break;
	case DDT_DL_VECTOR: {
		struct ddt_type *v = ddt_hvector(l->count, l->blocklen,
						 l->stride, ch);

		t = v ? ddt_hindexed_block(1, 1, &l->off, v) : NULL;
		ddt_free(v);
		break;
	}
	default: {
		int64_t *d = malloc((size_t)(n ? n : 1) * 8);

		t = NULL;
		if (d == NULL) {
			errno = ENOMEM;
			break;
		}
		for (int64_t i = 0; i < n; i++)
			d[i] = ddt_dl_disp(b, l, i);
		if (l->kind == DDT_DL_BLOCKINDEXED)
			t = ddt_hindexed_block(n, l->blocklen, d, ch);
		else
			t = ddt_hindexed(n, ddt_dl_arr(b, l->blocklens), d, ch);
		free(d);
		break;
	}
	}
	if (ch != byte)
		ddt_free(ch);
	return t;
}

static struct ddt_type *loop_type(const struct ddt_blob *b, uint32_t k)
{
	const struct ddt_dl *l = ddt_dl_at(b, k);
	struct ddt_type *r, *t = loop_type_raw(b, l);

	if (t == NULL)
		return NULL;
	r = ddt_resized(0, l->extent, t);
	ddt_free(t);
	return r;
}

struct ddt_type *ddt_blob_to_type(const struct ddt_blob *b)
{
	struct ddt_type *t, *r;

	if (b == NULL)
		return ddt_err_null(EINVAL);
	/* one loop level becomes up to three type levels: no depth limit */
	ddt_depth_check(false);
	t = loop_type_raw(b, ddt_dl_at(b, 0));
	r = t ? ddt_resized(b->h.lb, b->h.extent, t) : NULL;
	ddt_depth_check(true);
	ddt_free(t);
	return r;
}
