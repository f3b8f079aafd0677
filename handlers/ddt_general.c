/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_general": payload handlers for any datatype, on lib/ddt segments
 * over the type blob in the context's arguments (paper 000 §3.2.4). The
 * segment gives the buffer offset of every block of the packet's stream
 * range, the payload gives the bytes: one non-blocking DMA without event
 * per run of adjacent blocks, one strided DMA per run of equal blocks at
 * a constant distance (a vector's blocks), and the completion handler's zero-byte DMA
 * with event signals the host (§3.2.2). Strategies (struct spin_ddt_args):
 *
 *  - HPU-local: a segment per vHPU (or per HPU without blocked-RR) in the
 *    state; each packet catches its segment up, or resets it when the
 *    packet is behind it.
 *  - RO-CP: the nearest checkpoint at or before the packet is copied into
 *    a segment on the handler's stack; nothing is written back.
 *  - RW-CP: a working copy per checkpoint in the state, owned by the one
 *    vHPU that runs the checkpoint's packet sequence; it is progressed in
 *    place, and restored from the master copy (the checkpoint in the
 *    args, never written) when a packet of the sequence is behind it:
 *    out-of-order packets, a message that uses the context again.
 *
 * With SPIN_DDT_F_PROG the arguments also carry the type's compiled form
 * (lib/ddt prog.c, checked at install): a packet is placed through it
 * straight into a directly addressable window, resuming at its offset by
 * arithmetic, no segment, checkpoint or slot; the strategy above places
 * only packets with runs outside the window (or with no direct window).
 *
 * Every slot (HPU-local segment, RW-CP working copy) has an owner word
 * taken with a CAS: under the planned blocked-RR it is always free, and if
 * the client installed another policy a handler that finds it taken works
 * on a private copy instead, so the result never depends on scheduling.
 * Messages may share the context (a segment position is per type, not
 * per message).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "spin_handler.h"
#include "spin_handler_args.h"
#include "spin_ddt_args.h"
#include "handlers.h"

/* largest ddt_segment_mem_size() handled (depth 16 takes under 600) */
#define GEN_SEG_MAX 1024u
#define GEN_SLOTS_MAX (1u << 20)
#define GEN_SPAN_MAX ((int64_t)1 << 61)

/* state: this header, then nslots slots of slot_size bytes */
struct gen_state {
	uint64_t view;               /* blob view offset in the args + 1 */
	struct spin_ddt_stats stats; /* counted with relaxed atomics */
	uint64_t pad;
};
static_assert(sizeof(struct gen_state) == 64, "gen state");

struct gen_slot {
	uint64_t owner;              /* 0 free, 1 taken */
	uint64_t ready;              /* seg initialized */
	uint64_t seg[];              /* ddt_segment_mem_size() bytes */
};

static size_t
slot_size(size_t seg_mem)
{
	return (sizeof(struct gen_slot) + seg_mem + 63) & ~(size_t)63;
}

/* The context's counters, or NULL when the client asked for none. */
static struct spin_ddt_stats *
stats_of(struct spin_hctx *h)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	struct gen_state *st = spin_hctx_state(h);

	return a->stats_off == SPIN_DDT_STATS_NONE ? NULL : &st->stats;
}

static void
stat_add(struct spin_hctx *h, uint64_t *counter)
{
	if (spin_hctx_nhpu(h) == 1)
		(*counter)++;
	else
		__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* count one event in field @p f of struct spin_ddt_stats */
#define STAT_INC(h, f) do { \
	struct spin_ddt_stats *s_ = stats_of(h); \
	if (s_ != NULL) \
		stat_add((h), &s_->f); \
} while (0)

/* Check one checkpoint array against the type: every state restores and
 * sits at its stream offset. */
static int
gen_check_ckpts(const struct spin_ddt_args *a, uint32_t args_len,
		const uint8_t *base, const struct ddt_blob *b, int64_t total)
{
	uint64_t seg_mem[GEN_SEG_MAX / 8];
	struct ddt_segment *s;
	uint64_t n, i, end;

	s = ddt_segment_init(seg_mem, sizeof(seg_mem), b, a->count);
	if (s == NULL || a->ckpt_interval == 0 ||
	    a->ckpt_interval > (uint64_t)GEN_SPAN_MAX ||
	    a->ckpt_size != ddt_segment_state_size(s))
		return -EINVAL;
	n = total == 0 ? 1 : ((uint64_t)total - 1) / a->ckpt_interval + 1;
	if (a->ckpt_count != n || (a->ckpt_off & 7) != 0 ||
	    a->ckpt_off < sizeof(*a) ||
	    __builtin_mul_overflow(n, a->ckpt_size, &end) ||
	    __builtin_add_overflow(end, a->ckpt_off, &end) ||
	    end > args_len ||
	    (end > a->blob_off && a->ckpt_off < a->blob_off + a->blob_len))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const uint8_t *ck = base + a->ckpt_off + i * a->ckpt_size;

		if (ddt_segment_restore(s, ck, a->ckpt_size) != 0 ||
		    (uint64_t)ddt_segment_pos(s) != i * a->ckpt_interval)
			return -EINVAL;
	}
	return 0;
}

/* The compiled form after the checkpoints (or the blob) is the blob's. */
static int
gen_check_prog(const struct spin_ddt_args *a, uint32_t args_len,
	       const uint8_t *base, const struct ddt_blob *b)
{
	uint64_t off;

	/* blob and checkpoints are bounded by args_len (checked before) */
	off = spin_ddt_args_prog_off(a);
	if (off >= args_len)
		return -EINVAL;
	return ddt_prog_check(base + off, args_len - off, b);
}

static int
gen_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_ddt_args *a = args;
	uint64_t seg_mem[GEN_SEG_MAX / 8], state, nslots = 0;
	const struct ddt_blob *b;
	struct ddt_segment *s;
	void *copy = NULL;
	const uint8_t *base = args;
	size_t mem;
	int64_t total;
	int rc = -EINVAL;

	if (args_len < sizeof(*a))
		return -EINVAL;
	/* the control path may hand us unaligned bytes: blobs need 8 */
	if (((uintptr_t)args & 7) != 0) {
		copy = malloc(args_len);
		if (copy == NULL)
			return -ENOMEM;
		memcpy(copy, args, args_len);
		base = copy;
		a = copy;
	}
	if (a->version != SPIN_DDT_ARGS_VERSION ||
	    (a->flags & ~(SPIN_DDT_F_WALK | SPIN_DDT_F_PROG)) != 0 ||
	    a->count < 0 ||
	    a->origin < -GEN_SPAN_MAX || a->origin > GEN_SPAN_MAX ||
	    (a->blob_off & 7) != 0 || a->blob_off < sizeof(*a) ||
	    a->blob_off > args_len || a->blob_len > args_len - a->blob_off)
		goto out;
	/* bounded before any multiplication */
	if (a->ckpt_off > args_len || a->ckpt_size > args_len ||
	    a->ckpt_count > args_len)
		goto out;
	if (ddt_blob_load(base + a->blob_off, a->blob_len, &b) != 0)
		goto out;
	mem = ddt_segment_mem_size(b);
	if (mem > GEN_SEG_MAX)
		goto out;
	s = ddt_segment_init(seg_mem, sizeof(seg_mem), b, a->count);
	if (s == NULL)
		goto out;
	total = a->count * ddt_blob_size(b);
	switch (a->strategy) {
	case SPIN_DDT_HPU_LOCAL:
		if (a->nslots == 0 || a->nslots > GEN_SLOTS_MAX ||
		    a->ckpt_count != 0)
			goto out;
		nslots = a->nslots;
		break;
	case SPIN_DDT_RO_CP:
	case SPIN_DDT_RW_CP:
		if (a->nslots != 0 || gen_check_ckpts(a, args_len, base, b, total) != 0)
			goto out;
		if (a->strategy == SPIN_DDT_RW_CP)
			nslots = a->ckpt_count;
		break;
	default:
		goto out;
	}
	if ((a->flags & SPIN_DDT_F_PROG) && gen_check_prog(a, args_len, base, b))
		goto out;
	state = sizeof(struct gen_state) + nslots * slot_size(mem);
	if (nslots > GEN_SLOTS_MAX || state > UINT32_MAX)
		goto out;
	*state_len_p = (uint32_t)state;
	rc = 0;
out:
	free(copy);
	return rc;
}

const struct ddt_blob *
spin_ddt_args_blob(struct spin_hctx *h, uint64_t *view)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	const uint8_t *args = spin_hctx_args(h);
	uint64_t v = __atomic_load_n(view, __ATOMIC_ACQUIRE);
	const struct ddt_blob *b;

	if (v == 0) {
		if (ddt_blob_load(args + a->blob_off, a->blob_len, &b) != 0)
			return NULL;
		v = (uint64_t)((const uint8_t *)b - args) + 1;
		__atomic_store_n(view, v, __ATOMIC_RELEASE);
	}
	return (const struct ddt_blob *)(args + v - 1);
}

static const struct ddt_blob *
gen_blob(struct spin_hctx *h)
{
	struct gen_state *st = spin_hctx_state(h);

	return spin_ddt_args_blob(h, &st->view);
}

/*
 * DMA of the blocks of one packet: a pending run of k pieces of n bytes
 * each, taken one after the other from the payload and written stride
 * apart (k == 1: one piece, which grows while blocks continue it in both
 * the buffer and the payload); issued as one DMA, or one strided DMA
 * (k > 1), when a block does not continue it.
 */
struct gen_dma {
	struct spin_hctx *h;
	const uint8_t *payload;
	int64_t first;      /* stream offset of payload[0] */
	int64_t origin;
	int64_t dst, src, n; /* pending run: first piece, piece bytes */
	int64_t stride;
	uint64_t k;         /* pieces, 0: none */
	int err;
};

static int
gen_flush(struct gen_dma *d)
{
	int rc;

	if (d->k == 0)
		return 0;
	if (d->k == 1)
		rc = d->dst < 0 ? -ERANGE :
			spin_dma_to_host_nb(d->h, (uint64_t)d->dst,
					    d->payload + d->src, (size_t)d->n,
					    SPIN_DMA_NO_EVENT);
	else
		rc = d->dst < 0 ||
			d->dst + (int64_t)(d->k - 1) * d->stride < 0 ? -ERANGE :
			spin_dma_to_host_strided_nb(d->h, (uint64_t)d->dst,
						    d->stride,
						    d->payload + d->src,
						    (size_t)d->n, d->k,
						    SPIN_DMA_NO_EVENT);
	if (rc != 0) {
		d->err = 1;
		return 1;
	}
	d->k = 0;
	return 0;
}

static int
gen_block(void *arg, int64_t buf_off, int64_t len, int64_t stream_off)
{
	struct gen_dma *d = arg;
	int64_t dst = d->origin + buf_off, src = stream_off - d->first;

	if (d->k == 1 && dst == d->dst + d->n && src == d->src + d->n) {
		d->n += len;
		return 0;
	}
	if (d->k != 0 && len == d->n &&
	    src == d->src + (int64_t)d->k * d->n) {
		if (d->k == 1) {
			d->stride = dst - d->dst;
			d->k = 2;
			return 0;
		}
		if (dst == d->dst + (int64_t)d->k * d->stride) {
			d->k++;
			return 0;
		}
	}
	if (gen_flush(d) != 0)
		return 1;
	d->dst = dst;
	d->src = src;
	d->n = len;
	d->k = 1;
	return 0;
}

/* nb whole blocks of a vector leaf (ddt_segment_blocks_strided) */
static int
gen_strided(void *arg, int64_t buf_off, int64_t bl, int64_t stride,
	    int64_t nb, int64_t stream_off)
{
	struct gen_dma *d = arg;
	int64_t dst = d->origin + buf_off, src = stream_off - d->first;

	if (nb == 1 || stride == bl)
		return gen_block(arg, buf_off, nb * bl, stream_off);
	/* they continue the pending run's progression */
	if (d->k != 0 && bl == d->n && src == d->src + (int64_t)d->k * d->n &&
	    (d->k == 1 ? dst - d->dst == stride :
	     stride == d->stride &&
	     dst == d->dst + (int64_t)d->k * d->stride)) {
		d->stride = stride;
		d->k += (uint64_t)nb;
		return 0;
	}
	if (gen_flush(d) != 0)
		return 1;
	d->dst = dst;
	d->src = src;
	d->n = bl;
	d->stride = stride;
	d->k = (uint64_t)nb;
	return 0;
}

static int
gen_run(struct ddt_segment *s, const struct spin_pkt *pkt,
	struct spin_hctx *h)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	struct gen_dma d = {
		.h = h, .payload = pkt->payload, .first = (int64_t)pkt->offset,
		.origin = a->origin,
	};
	uint64_t win_len;
	int64_t lo, hi;
	uint8_t *win;
	int rc;

	win = spin_dma_window(h, &win_len);
	if (win != NULL && win_len <= INT64_MAX &&
	    !__builtin_sub_overflow(0, a->origin, &lo) &&
	    !__builtin_sub_overflow((int64_t)win_len, a->origin, &hi)) {
		/* the blocks placed straight by the type, every one checked
		 * against the window, no call per block */
		rc = ddt_segment_unpack_bounded(s, d.first,
						d.first + pkt->len,
						pkt->payload,
						(void *)((uintptr_t)win +
							 (uintptr_t)a->origin),
						lo, hi);
		if (rc == 0) {
			spin_dma_account(h, pkt->len, 1, SPIN_DMA_NO_EVENT);
			return SPIN_SUCCESS;
		}
		if (rc != -ERANGE)
			return SPIN_ERROR;
		/* a block outside the window: the DMA path below writes
		 * what is inside and rejects the rest, as always */
	}
	rc = ddt_segment_blocks_strided(s, d.first, d.first + pkt->len,
					gen_block, gen_strided, &d);
	if (rc < 0 || d.err || gen_flush(&d) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

/* checkpoint index of a packet */
static uint64_t
gen_ckpt_idx(const struct spin_ddt_args *a, uint64_t off)
{
	uint64_t i;

	if (a->ckpt_count <= 1)
		return 0; /* one checkpoint: no division per packet */
	i = off / a->ckpt_interval;
	return i < a->ckpt_count ? i : a->ckpt_count - 1;
}

/* Restore checkpoint idx into the segment at @p mem (the handler's stack,
 * or a working copy; @p fresh: mem holds no segment yet). */
static struct ddt_segment *
gen_from_ckpt(struct spin_hctx *h, const struct ddt_blob *b, void *mem,
	      bool fresh, uint64_t idx)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	const uint8_t *ck = (const uint8_t *)a + a->ckpt_off +
		idx * a->ckpt_size;
	struct ddt_segment *s = mem;

	if (fresh) {
		s = ddt_segment_init(mem, ddt_segment_mem_size(b), b,
				     a->count);
		if (s == NULL)
			return NULL;
		ddt_segment_set_walk(s, (a->flags & SPIN_DDT_F_WALK) != 0);
	}
	if (ddt_segment_restore(s, ck, a->ckpt_size) != 0)
		return NULL;
	STAT_INC(h, ckpt_copies);
	return s;
}

static int gen_ro_cp(const struct spin_pkt *pkt, struct spin_hctx *h,
		     const struct ddt_blob *b);

/* the slot is another HPU's: work on a private copy (RW-CP: of the
 * master checkpoint, as RO-CP; HPU-local: from the start) */
static int
gen_private(const struct spin_pkt *pkt, struct spin_hctx *h,
	    const struct ddt_blob *b)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	uint64_t mem[GEN_SEG_MAX / 8];
	struct ddt_segment *s;

	STAT_INC(h, busy);
	if (a->strategy == SPIN_DDT_RW_CP)
		return gen_ro_cp(pkt, h, b);
	s = ddt_segment_init(mem, sizeof(mem), b, a->count);
	if (s == NULL)
		return SPIN_ERROR;
	ddt_segment_set_walk(s, (a->flags & SPIN_DDT_F_WALK) != 0);
	return gen_run(s, pkt, h);
}

static struct gen_slot *
gen_slot(struct spin_hctx *h, const struct ddt_blob *b, uint64_t i)
{
	return (struct gen_slot *)((uint8_t *)spin_hctx_state(h) +
		sizeof(struct gen_state) +
		i * slot_size(ddt_segment_mem_size(b)));
}

/* With one HPU no other handler runs meanwhile: plain accesses (a locked
 * instruction per packet would also wait for the previous packet's
 * stores to drain). */
static bool
slot_take(struct spin_hctx *h, struct gen_slot *sl)
{
	uint64_t free_ = 0;

	if (spin_hctx_nhpu(h) == 1) {
		if (sl->owner != 0)
			return false;
		sl->owner = 1;
		return true;
	}
	return __atomic_compare_exchange_n(&sl->owner, &free_, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void
slot_give(struct spin_hctx *h, struct gen_slot *sl)
{
	if (spin_hctx_nhpu(h) == 1)
		sl->owner = 0;
	else
		__atomic_store_n(&sl->owner, 0, __ATOMIC_RELEASE);
}

static int
gen_hpu_local(const struct spin_pkt *pkt, struct spin_hctx *h,
	      const struct ddt_blob *b)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	uint32_t id = spin_hctx_vhpu(h);
	struct ddt_segment *s;
	struct gen_slot *sl;
	int64_t pos;
	int rc;

	if (id == SPIN_VHPU_NONE)
		id = spin_hctx_hpu(h);
	sl = gen_slot(h, b, id % a->nslots);
	if (!slot_take(h, sl))
		return gen_private(pkt, h, b);
	s = (struct ddt_segment *)sl->seg;
	if (!sl->ready) {
		if (ddt_segment_init(sl->seg, GEN_SEG_MAX, b, a->count) ==
		    NULL) {
			slot_give(h, sl);
			return SPIN_ERROR;
		}
		ddt_segment_set_walk(s, (a->flags & SPIN_DDT_F_WALK) != 0);
		sl->ready = 1;
	}
	pos = ddt_segment_pos(s);
	if ((int64_t)pkt->offset < pos) {
		ddt_segment_reset(s); /* then catch up from 0 */
		STAT_INC(h, resets);
	}
	if ((int64_t)pkt->offset > ddt_segment_pos(s))
		STAT_INC(h, catchups);
	rc = gen_run(s, pkt, h);
	slot_give(h, sl);
	return rc;
}

static int
gen_ro_cp(const struct spin_pkt *pkt, struct spin_hctx *h,
	  const struct ddt_blob *b)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	uint64_t mem[GEN_SEG_MAX / 8];
	struct ddt_segment *s;

	s = gen_from_ckpt(h, b, mem, true, gen_ckpt_idx(a, pkt->offset));
	if (s == NULL)
		return SPIN_ERROR;
	if ((int64_t)pkt->offset > ddt_segment_pos(s))
		STAT_INC(h, catchups);
	return gen_run(s, pkt, h);
}

static int
gen_rw_cp(const struct spin_pkt *pkt, struct spin_hctx *h,
	  const struct ddt_blob *b)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	uint64_t idx = gen_ckpt_idx(a, pkt->offset);
	struct ddt_segment *s;
	struct gen_slot *sl;
	int rc;

	sl = gen_slot(h, b, idx);
	if (!slot_take(h, sl))
		return gen_private(pkt, h, b);
	s = (struct ddt_segment *)sl->seg;
	if (!sl->ready || (int64_t)pkt->offset < ddt_segment_pos(s)) {
		/* first use, or the working copy is past this packet */
		if (sl->ready)
			STAT_INC(h, master_restores);
		if (gen_from_ckpt(h, b, sl->seg, !sl->ready, idx) == NULL) {
			sl->ready = 0;
			slot_give(h, sl);
			return SPIN_ERROR;
		}
		sl->ready = 1;
	}
	if ((int64_t)pkt->offset > ddt_segment_pos(s))
		STAT_INC(h, catchups);
	rc = gen_run(s, pkt, h);
	slot_give(h, sl);
	return rc;
}

/* the packet the strategy's way (segments, checkpoints) */
static int
gen_strategy(const struct spin_pkt *pkt, struct spin_hctx *h,
	     const struct ddt_blob *b)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);

	switch (a->strategy) {
	case SPIN_DDT_HPU_LOCAL:
		return gen_hpu_local(pkt, h, b);
	case SPIN_DDT_RO_CP:
		return gen_ro_cp(pkt, h, b);
	default:
		return gen_rw_cp(pkt, h, b);
	}
}

/* where the compiled form places packets of a burst straight into the
 * window (prog NULL: it does not) */
struct gen_place {
	const uint8_t *prog;
	uint8_t *dst;          /* window + origin */
	int64_t lo, hi;
	uint64_t bytes, n;     /* placed, to account once */
};

/* one packet of a burst: through the form, else the strategy's way */
static int
gen_burst_one(const struct spin_pkt *pkt, struct spin_hctx *h,
	      const struct ddt_blob *b, struct gen_place *pl)
{
	int64_t first = (int64_t)pkt->offset, last = first + pkt->len;

	if (pl->prog != NULL && pkt->len > 0 &&
	    ddt_prog_unpack_bounded(pl->prog, first, last, pkt->payload,
				    pl->dst, pl->lo, pl->hi) == last) {
		pl->bytes += pkt->len;
		pl->n++;
		return SPIN_SUCCESS;
	}
	return gen_strategy(pkt, h, b);
}

/*
 * A burst of packets of one message: the arguments, the blob and (with
 * the compiled form) the window looked up once, one DMA account for all.
 * Packets that follow each other in the stream go through the form
 * together (ddt_prog_unpack_pieces: a transpose is written in tiles
 * across them, each line once); a packet the form does not place goes
 * the strategy's way, in order.
 */
static void
gen_payload_burst(const struct spin_pkt *pkts, unsigned n, int *rc,
		  struct spin_hctx *h)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	const struct ddt_blob *b = gen_blob(h);
	struct ddt_piece pc[SPIN_PAYLOAD_BURST_MAX];
	struct gen_place pl = { .prog = NULL };
	uint64_t total, win_len;
	unsigned i, j, t;
	uint8_t *win;

	if (b == NULL) {
		for (i = 0; i < n; i++)
			rc[i] = SPIN_ERROR;
		return;
	}
	total = (uint64_t)a->count * (uint64_t)ddt_blob_size(b);
	if (a->flags & SPIN_DDT_F_PROG) {
		win = spin_dma_window(h, &win_len);
		if (win != NULL && win_len <= INT64_MAX &&
		    !__builtin_sub_overflow(0, a->origin, &pl.lo) &&
		    !__builtin_sub_overflow((int64_t)win_len, a->origin,
					    &pl.hi)) {
			pl.prog = (const uint8_t *)a +
				spin_ddt_args_prog_off(a);
			pl.dst = (uint8_t *)((uintptr_t)win +
					     (uintptr_t)a->origin);
		}
	}
	for (i = 0; i < n; i = j) {
		int64_t reached;

		if (pkts[i].offset > total ||
		    pkts[i].len > total - pkts[i].offset) {
			rc[i] = SPIN_ERROR; /* more bytes than the type holds */
			j = i + 1;
			continue;
		}
		/* the packets that continue it in the stream */
		for (j = i + 1; j < n && pl.prog != NULL && pkts[i].len > 0 &&
		     pkts[j].len > 0 &&
		     pkts[j].offset == pkts[j - 1].offset + pkts[j - 1].len &&
		     pkts[j].len <= total - pkts[j].offset; j++)
			;
		if (j - i == 1) {
			if (i + 2 < n)
				handlers_prefetch(&pkts[i + 2]);
			STAT_INC(h, pkts);
			rc[i] = gen_burst_one(&pkts[i], h, b, &pl);
			continue;
		}
		for (t = i; t < j; t++) {
			pc[t - i] = (struct ddt_piece){ pkts[t].payload,
							pkts[t].len };
			STAT_INC(h, pkts);
		}
		reached = ddt_prog_unpack_pieces(pl.prog,
						 (int64_t)pkts[i].offset,
						 pc, j - i, pl.dst, pl.lo,
						 pl.hi);
		for (t = i; t < j; t++) {
			if ((int64_t)(pkts[t].offset + pkts[t].len) <=
			    reached) {
				pl.bytes += pkts[t].len;
				pl.n++;
				rc[t] = SPIN_SUCCESS;
			} else if ((int64_t)pkts[t].offset < reached) {
				/* cut inside: all of it the strategy's way */
				rc[t] = gen_strategy(&pkts[t], h, b);
			} else {
				rc[t] = gen_burst_one(&pkts[t], h, b, &pl);
			}
		}
	}
	if (pl.n != 0)
		spin_dma_account(h, pl.bytes, pl.n, SPIN_DMA_NO_EVENT);
}

/* one packet: a burst of one (the window looked up, the form tried, the
 * strategy's way otherwise) */
static int
gen_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	int rc;

	gen_payload_burst(pkt, 1, &rc, h);
	return rc;
}

static int
gen_completion(const struct spin_done *done, struct spin_hctx *h)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	const struct gen_state *st = spin_hctx_state(h);

	if (a->stats_off != SPIN_DDT_STATS_NONE) {
		const struct spin_ddt_stats *c = &st->stats;
		struct spin_ddt_stats s = {
			.pkts = __atomic_load_n(&c->pkts, __ATOMIC_RELAXED),
			.catchups = __atomic_load_n(&c->catchups,
						    __ATOMIC_RELAXED),
			.resets = __atomic_load_n(&c->resets,
						  __ATOMIC_RELAXED),
			.ckpt_copies = __atomic_load_n(&c->ckpt_copies,
						       __ATOMIC_RELAXED),
			.master_restores = __atomic_load_n(
				&c->master_restores, __ATOMIC_RELAXED),
			.busy = __atomic_load_n(&c->busy, __ATOMIC_RELAXED),
		};

		if (spin_dma_to_host(h, a->stats_off, &s, sizeof(s),
				     SPIN_DMA_NO_EVENT) != 0)
			return SPIN_ERROR;
	}
	return spin_dma_to_host_nb(h, 0, NULL, 0, 0) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_ddt_general = {
	.name = "ddt_general",
	.payload = gen_payload,
	.payload_burst = gen_payload_burst,
	.completion = gen_completion,
	.init = gen_init,
};
