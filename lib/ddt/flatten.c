/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * iovec flattening, block counting, layout classification and structural
 * equality.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

struct seg_buf {
	struct ddt_segment s;
	struct ddt_seg_frame f[DDT_MAX_DEPTH + 1];
};

struct flat {
	struct ddt_iov *iov;
	int64_t n;
	int64_t total;
	int64_t end; /* end of the last block */
};

static int flat_cb(void *arg, int64_t off, int64_t len, int64_t stream_off)
{
	struct flat *f = arg;

	(void)stream_off;
	if (f->total > 0 && off == f->end) {
		if (f->total <= f->n)
			f->iov[f->total - 1].len += len;
	} else {
		if (f->total < f->n)
			f->iov[f->total] = (struct ddt_iov){ off, len };
		f->total++;
	}
	f->end = off + len;
	return 0;
}

static int64_t blob_flatten(const struct ddt_blob *b, int64_t count,
			    struct ddt_iov *iov, int64_t n)
{
	struct flat f = { iov, iov ? n : 0, 0, 0 };
	struct seg_buf sb;
	int64_t total;
	int rc;

	rc = ddt_seg_total(b, count, &total);
	if (rc)
		return rc;
	if (b->h.depth > DDT_MAX_DEPTH + 1)
		return -DDT_E_BLOB;
	ddt_seg_init(&sb.s, b, count);
	if (iov == NULL || n == 0) {
		struct ddt_count c = { 0, 0, false };

		ddt_seg_run(&sb.s, DDT_MODE_COUNT, total, NULL, NULL, 0, NULL,
			    &c);
		return c.n;
	}
	ddt_seg_run(&sb.s, DDT_MODE_BLOCKS, total, NULL, NULL, 0, flat_cb, &f);
	return f.total;
}

int64_t ddt_blob_count_blocks(const struct ddt_blob *b, int64_t count)
{
	return blob_flatten(b, count, NULL, 0);
}

/* The type's blob, or a temporary one (freed by the caller) if the type is
 * not committed. */
static int get_blob(const struct ddt_type *t, const struct ddt_blob **b_p,
		    void **tmp_p)
{
	size_t len;
	int rc;

	*tmp_p = NULL;
	if (ddt_is_committed(t)) {
		*b_p = ddt_type_blob(t);
		return 0;
	}
	rc = ddt_build_blob(t, tmp_p, &len);
	if (rc)
		return rc;
	*b_p = *tmp_p;
	return 0;
}

int64_t ddt_flatten(const struct ddt_type *t, int64_t count,
		    struct ddt_iov *iov, int64_t n)
{
	const struct ddt_blob *b;
	void *tmp;
	int64_t r;
	int rc;

	if (t == NULL || count < 0 || n < 0)
		return -EINVAL;
	rc = get_blob(t, &b, &tmp);
	if (rc)
		return rc;
	r = blob_flatten(b, count, iov, n);
	free(tmp);
	return r;
}

int64_t ddt_count_blocks(const struct ddt_type *t, int64_t count)
{
	return ddt_flatten(t, count, NULL, 0);
}

int ddt_classify(const struct ddt_type *t, int64_t count,
		 struct ddt_class_info *info_p)
{
	const struct ddt_blob *b;
	const struct ddt_dl *l;
	struct ddt_class_info *c = info_p;

	if (t == NULL || info_p == NULL || count < 0)
		return -EINVAL;
	if (!ddt_is_committed(t))
		return -DDT_E_NOTCOMMITTED;
	b = ddt_type_blob(t);
	l = ddt_dl_at(b, 0);
	memset(c, 0, sizeof(*c));
	c->extent = b->h.extent;
	c->cls = DDT_CLASS_GENERAL;
	if (b->h.size == 0) {
		c->cls = DDT_CLASS_CONTIG;
		return 0;
	}
	if (!l->leaf)
		return 0;
	switch (l->kind) {
	case DDT_DL_CONTIG:
		c->blocklen = l->blocklen;
		c->nblocks = 1;
		c->first_off = l->off;
		c->stride = c->extent;
		c->cls = c->extent == l->blocklen || count <= 1
				 ? DDT_CLASS_CONTIG : DDT_CLASS_VECTOR;
		break;
	case DDT_DL_VECTOR:
		c->cls = DDT_CLASS_VECTOR;
		c->blocklen = l->blocklen;
		c->stride = l->stride;
		c->nblocks = l->count;
		c->first_off = l->off;
		break;
	case DDT_DL_BLOCKINDEXED:
		if (l->off != 0)
			break;
		c->cls = DDT_CLASS_INDEXED_BLOCK;
		c->blocklen = l->blocklen;
		c->nblocks = l->count;
		c->displs = ddt_dl_arr(b, l->displs);
		c->first_off = c->displs[0];
		break;
	default:
		break;
	}
	return 0;
}

const char *ddt_class_name(enum ddt_class c)
{
	switch (c) {
	case DDT_CLASS_CONTIG: return "contig";
	case DDT_CLASS_VECTOR: return "vector";
	case DDT_CLASS_INDEXED_BLOCK: return "indexed-block";
	case DDT_CLASS_GENERAL: return "general";
	}
	return "unknown";
}

static bool same_arr(const int64_t *x, const int64_t *y, int64_t n)
{
	if (x == NULL || y == NULL)
		return x == y;
	return memcmp(x, y, (size_t)n * sizeof(*x)) == 0;
}

/* Same constructors with the same arguments (dup is transparent). Also
 * decides for types too large to flatten. */
static bool same_tree(const struct ddt_type *a, const struct ddt_type *b)
{
	while (a->comb == DDT_COMBINER_DUP)
		a = a->types[0];
	while (b->comb == DDT_COMBINER_DUP)
		b = b->types[0];
	if (a == b)
		return true;
	if (a->comb != b->comb || a->base != b->base || a->count != b->count ||
	    a->blocklen != b->blocklen || a->stride != b->stride ||
	    a->order != b->order || a->rlb != b->rlb ||
	    a->rextent != b->rextent || a->ntypes != b->ntypes)
		return false;
	if (a->comb == DDT_COMBINER_NAMED)
		return true;
	if (!same_arr(a->blocklens, b->blocklens, a->count) ||
	    !same_arr(a->displs, b->displs, a->count))
		return false;
	if (a->comb == DDT_COMBINER_SUBARRAY &&
	    (!same_arr(a->sizes, b->sizes, a->count) ||
	     !same_arr(a->subsizes, b->subsizes, a->count) ||
	     !same_arr(a->starts, b->starts, a->count)))
		return false;
	for (int64_t i = 0; i < a->ntypes; i++)
		if (!same_tree(a->types[i], b->types[i]))
			return false;
	return true;
}

/* Blocks of one chunk of the packed stream. */
struct eq_blocks {
	struct ddt_iov *v;
	int64_t n, cap;
};

static int eq_collect(void *arg, int64_t buf_off, int64_t len,
		      int64_t stream_off)
{
	struct eq_blocks *b = arg;

	(void)stream_off;
	if (b->n == b->cap)
		return 1;
	b->v[b->n].off = buf_off;
	b->v[b->n].len = len;
	b->n++;
	return 0;
}

/* Both lists cover the same stream bytes: do they put them at the same
 * buffer offsets? (Blocks may be split differently.) */
static int eq_same_map(const struct eq_blocks *x, const struct eq_blocks *y)
{
	int64_t i = 0, j = 0, oi = 0, oj = 0;

	while (i < x->n && j < y->n) {
		int64_t n = x->v[i].len - oi < y->v[j].len - oj ?
			    x->v[i].len - oi : y->v[j].len - oj;

		if (x->v[i].off + oi != y->v[j].off + oj)
			return 0;
		oi += n;
		oj += n;
		if (oi == x->v[i].len)
			i++, oi = 0;
		if (oj == y->v[j].len)
			j++, oj = 0;
	}
	return i == x->n && j == y->n;
}

#define EQ_CHUNK ((int64_t)64 * 1024)
#define EQ_MAX_WALK ((int64_t)16 << 30)

/* Walk both block streams chunk by chunk, in bounded memory. */
static int eq_walk(const struct ddt_blob *a, const struct ddt_blob *b,
		   int64_t size)
{
	struct eq_blocks x = { .cap = EQ_CHUNK }, y = { .cap = EQ_CHUNK };
	struct ddt_segment *sa, *sb;
	int64_t pos;
	int rc = 1;

	if (size > EQ_MAX_WALK)
		return -E2BIG;
	sa = ddt_segment_create_blob(a, 1);
	sb = ddt_segment_create_blob(b, 1);
	x.v = malloc(EQ_CHUNK * sizeof(*x.v));
	y.v = malloc(EQ_CHUNK * sizeof(*y.v));
	if (sa == NULL || sb == NULL || x.v == NULL || y.v == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (pos = 0; pos < size && rc == 1; pos += EQ_CHUNK) {
		int64_t end = size - pos < EQ_CHUNK ? size : pos + EQ_CHUNK;

		/* a chunk of EQ_CHUNK bytes has at most EQ_CHUNK blocks */
		x.n = y.n = 0;
		if (ddt_segment_blocks(sa, pos, end, eq_collect, &x) != 0 ||
		    ddt_segment_blocks(sb, pos, end, eq_collect, &y) != 0) {
			rc = -EINVAL;
			break;
		}
		rc = eq_same_map(&x, &y);
	}
out:
	free(x.v);
	free(y.v);
	ddt_segment_free(sa);
	ddt_segment_free(sb);
	return rc;
}

int ddt_equal(const struct ddt_type *a, const struct ddt_type *b)
{
	const struct ddt_blob *ba, *bb;
	void *ta = NULL, *tb = NULL;
	size_t la;
	int rc;

	if (a == NULL || b == NULL)
		return 0;
	if (a == b)
		return 1;
	if (a->size != b->size || a->lb != b->lb || a->ub != b->ub ||
	    a->dlb != b->dlb || a->dub != b->dub)
		return 0;
	if (same_tree(a, b))
		return 1;
	rc = get_blob(a, &ba, &ta);
	if (rc == 0)
		rc = get_blob(b, &bb, &tb);
	if (rc == 0) {
		/* the same normalized dataloops: equal without a walk */
		la = (size_t)ba->h.len;
		rc = la == (size_t)bb->h.len && memcmp(ba, bb, la) == 0 ? 1 :
		     eq_walk(ba, bb, a->size);
	}
	free(ta);
	free(tb);
	return rc;
}
