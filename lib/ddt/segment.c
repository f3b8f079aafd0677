/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segments: resumable processing of any byte range of the packed stream,
 * over the blob representation (the same code runs on host and NIC).
 *
 * The state is a stack of frames, one per dataloop level: frame d holds the
 * block i and the child copy j being processed in loop d, and the buffer
 * offset of the loop instance's origin; the leaf frame's j is the byte inside
 * its block. Seeking to a stream offset is arithmetic (block sizes, and a
 * binary search on the packed prefix array of indexed loops), so catch-up
 * costs O(depth log blocks) instead of a walk.
 */
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

static inline const struct ddt_dl *loop(const struct ddt_segment *s,
					uint32_t k)
{
	return ddt_dl_at(s->b, k);
}

size_t ddt_seg_size(const struct ddt_blob *b)
{
	return sizeof(struct ddt_seg_state) +
	       (size_t)b->h.depth * sizeof(struct ddt_seg_frame);
}

int ddt_seg_total(const struct ddt_blob *b, int64_t count, int64_t *total_p)
{
	int64_t total, last, a;

	if (count < 0)
		return -EINVAL;
	if (__builtin_mul_overflow(count, b->h.size, &total) ||
	    total > DDT_SPAN_MAX)
		return -DDT_E_OVERFLOW;
	/* every element origin and data byte must stay within the span */
	if (count > 0 &&
	    (__builtin_mul_overflow(count - 1, b->h.extent, &last) ||
	     last > DDT_SPAN_MAX ||
	     __builtin_add_overflow(last, b->h.true_ub, &a) ||
	     a > DDT_SPAN_MAX))
		return -DDT_E_OVERFLOW;
	*total_p = total;
	return 0;
}

/* Set frames d.. from frame d's loop and base, at packed offset r < size
 * of that loop instance. */
static void descend(struct ddt_segment *s, int d, int64_t r)
{
	struct ddt_seg_state *st = &s->st;
	const struct ddt_blob *b = s->b;

	for (;;) {
		struct ddt_seg_frame *f = &st->f[d];
		const struct ddt_dl *l = loop(s, f->loop), *ch = NULL;
		int64_t i, csize;

		if (l->kind <= DDT_DL_BLOCKINDEXED) {
			int64_t bs;

			if (!l->leaf)
				ch = loop(s, l->child);
			csize = ch ? ch->size : 1;
			bs = l->blocklen * csize;
			i = r / bs;
			r -= i * bs;
		} else if (r == 0) {
			i = 0;
		} else {
			const int64_t *pre = ddt_dl_arr(b, l->prefix);
			int64_t lo = 0, hi = l->count - 1;

			/* largest i with pre[i] <= r */
			while (lo < hi) {
				int64_t mid = lo + (hi - lo + 1) / 2;

				if (pre[mid] <= r)
					lo = mid;
				else
					hi = mid - 1;
			}
			i = lo;
			r -= pre[i];
		}
		f->i = i;
		if (l->leaf) {
			f->j = r;
			st->sp = (uint16_t)(d + 1);
			return;
		}
		if (ch == NULL)
			ch = loop(s, ddt_dl_child(b, l, i));
		f->j = r / ch->size;
		r -= f->j * ch->size;
		st->f[d + 1].loop = ddt_dl_child(b, l, i);
		st->f[d + 1].base = f->base + ddt_dl_disp(b, l, i) +
				    f->j * ch->extent;
		d++;
	}
}

void ddt_seg_seek(struct ddt_segment *s, int64_t target)
{
	struct ddt_seg_state *st = &s->st;
	int64_t size = s->b->h.size;

	st->pos = target;
	if (target >= s->total) {
		st->pos = s->total;
		st->elem = st->count;
		st->sp = 0;
		return;
	}
	st->elem = target / size;
	st->f[0].loop = 0;
	st->f[0].base = st->elem * s->b->h.extent;
	descend(s, 0, target - st->elem * size);
}

/* The leaf instance on top is finished: move to the next one. */
static void next_leaf(struct ddt_segment *s)
{
	struct ddt_seg_state *st = &s->st;
	const struct ddt_blob *b = s->b;

	for (int d = st->sp - 2; d >= 0; d--) {
		struct ddt_seg_frame *f = &st->f[d];
		const struct ddt_dl *l = loop(s, f->loop), *ch;
		uint32_t ci;

		if (++f->j == ddt_dl_bl(b, l, f->i)) {
			f->j = 0;
			if (++f->i == l->count)
				continue;
		}
		ci = ddt_dl_child(b, l, f->i);
		ch = loop(s, ci);
		st->f[d + 1].loop = ci;
		st->f[d + 1].base = f->base + ddt_dl_disp(b, l, f->i) +
				    f->j * ch->extent;
		descend(s, d + 1, 0);
		return;
	}
	if (++st->elem == st->count) {
		st->sp = 0;
		return;
	}
	st->f[0].loop = 0;
	st->f[0].base = st->elem * b->h.extent;
	descend(s, 0, 0);
}

void ddt_seg_init(struct ddt_segment *s, const struct ddt_blob *b,
		  int64_t count)
{
	s->b = b;
	s->t = NULL;
	s->state_size = ddt_seg_size(b);
	memset(&s->st, 0, s->state_size);
	s->st.magic = DDT_SEG_MAGIC;
	s->st.checksum = b->h.checksum;
	s->st.nframes = b->h.depth;
	s->st.count = count;
	s->total = count * b->h.size;
	ddt_seg_seek(s, 0);
}

/* One piece: typed buffer offset `off`, `n` bytes, at stream offset pos. */
static inline int emit(int mode, int64_t off, int64_t n, int64_t pos,
		       const uint8_t *src, uint8_t *dst, int64_t src_first,
		       ddt_block_fn fn, void *arg)
{
	switch (mode) {
	case DDT_MODE_UNPACK:
		ddt_copy_small(dst + off, src + (pos - src_first), (size_t)n);
		return 0;
	case DDT_MODE_UNPACK_BOUNDED: {
		struct ddt_bounds *bd = arg;

		if (off < bd->lo || off > bd->hi || n > bd->hi - off) {
			bd->bad = true;
			return 1;
		}
		ddt_copy_small(dst + off, src + (pos - src_first), (size_t)n);
		return 0;
	}
	case DDT_MODE_PACK:
		ddt_copy_small(dst + (pos - src_first), src + off, (size_t)n);
		return 0;
	case DDT_MODE_BLOCKS:
		return fn(arg, off, n, pos);
	case DDT_MODE_VBLOCKS: {
		const struct ddt_vblocks *v = arg;

		return v->fn(v->arg, off, n, pos);
	}
	case DDT_MODE_COUNT: {
		struct ddt_count *c = arg;

		c->n += !(c->any && off == c->end);
		c->end = off + n;
		c->any = true;
		return 0;
	}
	default:
		return 0;
	}
}

/* nb blocks of bl bytes at off + k * stride (k < nb) inside bd's bounds;
 * if not, bd->bad is set. */
static bool
scatter_in(void *arg, int64_t off, int64_t bl, int64_t stride, int64_t nb)
{
	struct ddt_bounds *bd = arg;
	int64_t span, lo, hi;

	if (__builtin_mul_overflow(nb - 1, stride, &span) ||
	    __builtin_add_overflow(off, span, &hi)) {
		bd->bad = true;
		return false;
	}
	lo = span < 0 ? hi : off;
	hi = span < 0 ? off : hi;
	if (lo < bd->lo || hi > bd->hi || bl > bd->hi - hi) {
		bd->bad = true;
		return false;
	}
	return true;
}

/*
 * Process the stream from the current position up to `last` (<= total).
 * Packed bytes live at src (UNPACK) or dst (PACK) indexed by
 * stream offset - src_first. @return 0, or 1 when the callback stopped.
 */
int ddt_seg_run(struct ddt_segment *s, int mode, int64_t last,
		const uint8_t *src, uint8_t *dst, int64_t src_first,
		ddt_block_fn fn, void *arg)
{
	struct ddt_seg_state *st = &s->st;
	const struct ddt_blob *b = s->b;
	int64_t pos = st->pos;
	int stop = 0;

	while (pos < last) {
		struct ddt_seg_frame *f = &st->f[st->sp - 1];
		const struct ddt_dl *l = loop(s, f->loop);
		int64_t i = f->i, off = f->j, avail = last - pos;
		int64_t count = l->count;

		if (mode == DDT_MODE_COUNT && l->kind <= DDT_DL_VECTOR &&
		    off == 0 && avail >= (count - i) * l->blocklen) {
			/* a whole leaf vector at once: blocks only merge at
			 * its start, or all of them when stride == blocklen */
			struct ddt_count *c = arg;
			int64_t nb = count - i, bl = l->blocklen;
			int64_t first = f->base + l->off + i * l->stride;

			c->n += nb - (c->any && first == c->end);
			if (l->stride == bl)
				c->n -= nb - 1;
			c->end = first + (nb - 1) * l->stride + bl;
			c->any = true;
			pos += nb * bl;
			i = count;
		} else if (l->kind <= DDT_DL_VECTOR && mode != DDT_MODE_BLOCKS) {
			int64_t bl = l->blocklen, stride = l->stride;
			int64_t base = f->base + l->off;

			if (off > 0 || avail < bl) {
				int64_t n = bl - off < avail ? bl - off : avail;

				stop = emit(mode, base + i * stride + off, n,
					    pos, src, dst, src_first, fn, arg);
				pos += n;
				avail -= n;
				off += n;
				if (off == bl) {
					off = 0;
					i++;
				}
			}
			if (!stop && off == 0 && i < count && avail > 0) {
				int64_t nb = avail / bl;

				if (nb > count - i)
					nb = count - i;
				if (nb > 0) {
					int64_t boff = base + i * stride;

					if (mode == DDT_MODE_UNPACK)
						ddt_copy_scatter(dst + boff,
							src + (pos - src_first),
							bl, stride, nb);
					else if (mode == DDT_MODE_UNPACK_BOUNDED) {
						if (scatter_in(arg, boff, bl,
							       stride, nb))
							ddt_copy_scatter(
							    dst + boff,
							    src + (pos -
								   src_first),
							    bl, stride, nb);
						else
							stop = 1;
					} else if (mode == DDT_MODE_PACK)
						ddt_copy_gather(
							dst + (pos - src_first),
							src + boff, bl, stride,
							nb);
					else if (mode == DDT_MODE_VBLOCKS)
						stop = ((const struct ddt_vblocks *)
							arg)->sfn(
							((const struct
							  ddt_vblocks *)arg)->arg,
							boff, bl, stride, nb,
							pos);
					pos += nb * bl;
					avail -= nb * bl;
					i += nb;
				}
				if (!stop && i < count && avail > 0) {
					stop = emit(mode, base + i * stride,
						    avail, pos, src, dst,
						    src_first, fn, arg);
					pos += avail;
					off = avail;
					avail = 0;
				}
			}
		} else {
			while (i < count && avail > 0) {
				int64_t bl = ddt_dl_bl(b, l, i);
				int64_t n = bl - off < avail ? bl - off : avail;

				stop = emit(mode, f->base + ddt_dl_disp(b, l, i) +
						  off, n, pos, src, dst,
					    src_first, fn, arg);
				pos += n;
				avail -= n;
				off += n;
				if (off == bl) {
					off = 0;
					i++;
				}
				if (stop)
					break;
			}
		}
		f->i = i;
		f->j = off;
		st->pos = pos;
		if (i == count)
			next_leaf(s);
		if (stop)
			return 1;
	}
	return 0;
}

/* ---- public API ------------------------------------------------------------ */

/* Extra segment flags beyond the copyable state. */
struct ddt_segment_ext {
	bool walk; /* catch up by walking instead of seeking */
};

struct ddt_segment *ddt_segment_create_blob(const struct ddt_blob *b,
					    int64_t count)
{
	struct ddt_segment *s;
	int64_t total;
	int rc;

	if (b == NULL)
		return ddt_err_null(EINVAL);
	rc = ddt_seg_total(b, count, &total);
	if (rc < 0)
		return ddt_err_null(-rc);
	s = calloc(1, ddt_segment_mem_size(b));
	if (s == NULL)
		return ddt_err_null(ENOMEM);
	ddt_seg_init(s, b, count);
	return s;
}

size_t ddt_segment_mem_size(const struct ddt_blob *b)
{
	return sizeof(struct ddt_segment) + ddt_seg_size(b) +
	       sizeof(struct ddt_segment_ext);
}

struct ddt_segment *ddt_segment_init(void *mem, size_t len,
				     const struct ddt_blob *b, int64_t count)
{
	struct ddt_segment *s = mem;
	int64_t total;
	int rc;

	if (mem == NULL || b == NULL || ((uintptr_t)mem & 7) != 0 ||
	    len < ddt_segment_mem_size(b))
		return ddt_err_null(EINVAL);
	rc = ddt_seg_total(b, count, &total);
	if (rc < 0)
		return ddt_err_null(-rc);
	memset(mem, 0, ddt_segment_mem_size(b));
	ddt_seg_init(s, b, count);
	return s;
}

struct ddt_segment *ddt_segment_create(const struct ddt_type *t, int64_t count)
{
	struct ddt_segment *s;

	if (t == NULL)
		return ddt_err_null(EINVAL);
	if (!ddt_is_committed(t))
		return ddt_err_null(DDT_E_NOTCOMMITTED);
	s = ddt_segment_create_blob(ddt_type_blob(t), count);
	if (s != NULL)
		s->t = ddt_ref((struct ddt_type *)t);
	return s;
}

static struct ddt_segment_ext *seg_ext(struct ddt_segment *s)
{
	return (struct ddt_segment_ext *)((uint8_t *)&s->st + s->state_size);
}

void ddt_segment_free(struct ddt_segment *s)
{
	if (s == NULL)
		return;
	ddt_free(s->t);
	free(s);
}

void ddt_segment_reset(struct ddt_segment *s)
{
	ddt_seg_seek(s, 0);
}

int64_t ddt_segment_pos(const struct ddt_segment *s)
{
	return s->st.pos;
}

/**
 * Choose how the segment catches up when asked for a range after its
 * position: by arithmetic seek (default, O(depth log blocks)) or by walking
 * the stream without copying, as MPITypes does (paper 000 §3.2.4).
 * @param s segment
 * @param walk non-zero to walk
 */
void ddt_segment_set_walk(struct ddt_segment *s, int walk)
{
	seg_ext(s)->walk = walk != 0;
}

static int seg_range(struct ddt_segment *s, int mode, int64_t first,
		     int64_t last, const void *src, void *dst,
		     ddt_block_fn fn, void *arg)
{
	if (s == NULL || first < 0 || first > last || last > s->total)
		return -EINVAL;
	if (first != s->st.pos) {
		if (first > s->st.pos && seg_ext(s)->walk)
			ddt_seg_run(s, DDT_MODE_SKIP, first, NULL, NULL, 0,
				    NULL, NULL);
		else
			ddt_seg_seek(s, first);
	}
	return ddt_seg_run(s, mode, last, src, dst, first, fn, arg);
}

int ddt_segment_unpack(struct ddt_segment *s, int64_t first, int64_t last,
		       const void *src, void *dst)
{
	return seg_range(s, DDT_MODE_UNPACK, first, last, src, dst, NULL, NULL);
}

int ddt_segment_unpack_bounded(struct ddt_segment *s, int64_t first,
			       int64_t last, const void *src, void *dst,
			       int64_t lo, int64_t hi)
{
	struct ddt_bounds bd = { lo, hi, false };
	int rc;

	if (lo > hi)
		return -EINVAL;
	rc = seg_range(s, DDT_MODE_UNPACK_BOUNDED, first, last, src, dst,
		       NULL, &bd);
	if (rc < 0)
		return rc;
	return bd.bad ? -ERANGE : 0;
}

int ddt_segment_pack(struct ddt_segment *s, int64_t first, int64_t last,
		     const void *src, void *dst)
{
	return seg_range(s, DDT_MODE_PACK, first, last, src, dst, NULL, NULL);
}

int ddt_segment_blocks(struct ddt_segment *s, int64_t first, int64_t last,
		       ddt_block_fn fn, void *arg)
{
	if (fn == NULL)
		return -EINVAL;
	return seg_range(s, DDT_MODE_BLOCKS, first, last, NULL, NULL, fn, arg);
}

int ddt_segment_blocks_strided(struct ddt_segment *s, int64_t first,
			       int64_t last, ddt_block_fn fn,
			       ddt_strided_fn sfn, void *arg)
{
	struct ddt_vblocks v = { fn, sfn, arg };

	if (fn == NULL || sfn == NULL)
		return -EINVAL;
	return seg_range(s, DDT_MODE_VBLOCKS, first, last, NULL, NULL, NULL,
			 &v);
}

size_t ddt_segment_state_size(const struct ddt_segment *s)
{
	return s->state_size;
}

int ddt_segment_save(const struct ddt_segment *s, void *state, size_t len)
{
	if (s == NULL || state == NULL || len < s->state_size)
		return -EINVAL;
	memcpy(state, &s->st, s->state_size);
	return 0;
}

/* A state from elsewhere (NIC memory, a checkpoint) must describe a real
 * position of this type: check every frame against its parent and the
 * stream position against the frames. */
static int state_check(const struct ddt_segment *s,
		       const struct ddt_seg_state *st)
{
	const struct ddt_blob *b = s->b;
	int64_t pos, base;

	if (st->magic != DDT_SEG_MAGIC || st->checksum != b->h.checksum ||
	    st->nframes != b->h.depth || st->count != s->st.count ||
	    st->sp > st->nframes || st->pos < 0 || st->pos > s->total)
		return -EINVAL;
	if (st->sp == 0)
		return st->pos == s->total && st->elem == st->count ? 0
								    : -EINVAL;
	if (st->elem < 0 || st->elem >= st->count || st->f[0].loop != 0)
		return -EINVAL;
	pos = st->elem * b->h.size;
	base = st->elem * b->h.extent;
	for (int d = 0; d < st->sp; d++) {
		const struct ddt_seg_frame *f = &st->f[d];
		const struct ddt_dl *l = loop(s, f->loop), *ch;
		int64_t bl;

		if (f->base != base || f->i < 0 || f->i >= l->count)
			return -EINVAL;
		bl = ddt_dl_bl(b, l, f->i);
		if (l->kind >= DDT_DL_INDEXED)
			pos += ddt_dl_arr(b, l->prefix)[f->i];
		if (l->leaf) {
			if (d != st->sp - 1 || f->j < 0 || f->j >= bl)
				return -EINVAL;
			if (l->kind <= DDT_DL_BLOCKINDEXED)
				pos += f->i * bl;
			pos += f->j;
			break;
		}
		if (d == st->sp - 1 || f->j < 0 || f->j >= bl)
			return -EINVAL;
		ch = loop(s, ddt_dl_child(b, l, f->i));
		if (l->kind <= DDT_DL_BLOCKINDEXED)
			pos += f->i * bl * ch->size;
		pos += f->j * ch->size;
		base += ddt_dl_disp(b, l, f->i) + f->j * ch->extent;
		if (st->f[d + 1].loop != ddt_dl_child(b, l, f->i))
			return -EINVAL;
	}
	return pos == st->pos ? 0 : -EINVAL;
}

int ddt_segment_restore(struct ddt_segment *s, const void *state, size_t len)
{
	const struct ddt_seg_state *st = state;
	int rc;

	if (s == NULL || state == NULL || len != s->state_size)
		return -EINVAL;
	rc = state_check(s, st);
	if (rc)
		return rc;
	memcpy(&s->st, state, s->state_size);
	return 0;
}
