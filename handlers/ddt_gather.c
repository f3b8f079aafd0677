/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_gather": the sender-side handler of a processed put (PtlProcessPut,
 * paper 000 §3.1). Each outbound job builds one packet: the blocks of the
 * packet's range of the packed stream are read from the initiator's
 * typed buffer (the job's window, the MD) into the packet payload, one
 * spin_dma_from_host() per block, each bounds-checked against the MD.
 *
 * Arguments: struct spin_ddt_args with strategy SPIN_DDT_HPU_LOCAL (no
 * checkpoints, no statistics): the type blob, count, origin (window offset
 * of the buffer origin) and nslots. The state holds one segment per HPU
 * (slot = HPU id): an HPU id runs on one thread at a time, so its slot is
 * its own, no owner word. A packet at or after the slot's position
 * resumes it (consecutive packets on an HPU cost no seek); a packet behind
 * it resets the segment first. An HPU without a slot (id >= nslots) builds
 * a segment on its stack for the packet.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "spin_handler.h"
#include "spin_handler_args.h"
#include "handlers.h"

/* largest ddt_segment_mem_size() handled (as ddt_general) */
#define GATHER_SEG_MAX 1024u
#define GATHER_SLOTS_MAX 4096u
#define GATHER_SPAN_MAX ((int64_t)1 << 61)

/* state: this header, then nslots slots of slot_size() bytes */
struct gather_state {
	uint64_t view;               /* blob view offset in the args + 1 */
	uint64_t pad[7];
};
static_assert(sizeof(struct gather_state) == 64, "gather state");

struct gather_slot {
	uint64_t ready;              /* seg initialized */
	uint64_t pad;
	uint64_t seg[];              /* ddt_segment_mem_size() bytes */
};

static size_t
slot_size(size_t seg_mem)
{
	return (sizeof(struct gather_slot) + seg_mem + 63) & ~(size_t)63;
}

static int
gather_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_ddt_args *a = args;
	uint64_t seg_mem[GATHER_SEG_MAX / 8], state;
	const struct ddt_blob *b;
	void *copy = NULL;
	const uint8_t *base = args;
	int64_t size, total;
	int rc = -EINVAL;
	size_t mem;

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
	    a->strategy != SPIN_DDT_HPU_LOCAL ||
	    (a->flags & ~SPIN_DDT_F_WALK) != 0 || a->count < 0 ||
	    a->nslots == 0 || a->nslots > GATHER_SLOTS_MAX ||
	    a->origin < -GATHER_SPAN_MAX || a->origin > GATHER_SPAN_MAX ||
	    (a->blob_off & 7) != 0 || a->blob_off < sizeof(*a) ||
	    a->blob_off > args_len || a->blob_len > args_len - a->blob_off ||
	    a->ckpt_count != 0 || a->stats_off != SPIN_DDT_STATS_NONE)
		goto out;
	if (ddt_blob_load(base + a->blob_off, a->blob_len, &b) != 0)
		goto out;
	mem = ddt_segment_mem_size(b);
	size = ddt_blob_size(b);
	if (mem > GATHER_SEG_MAX || size < 0 ||
	    __builtin_mul_overflow(size, a->count, &total) ||
	    total > GATHER_SPAN_MAX ||
	    ddt_segment_init(seg_mem, sizeof(seg_mem), b, a->count) == NULL)
		goto out;
	state = sizeof(struct gather_state) + a->nslots * slot_size(mem);
	if (state > UINT32_MAX)
		goto out;
	*state_len_p = (uint32_t)state;
	rc = 0;
out:
	free(copy);
	return rc;
}

/* The blob in the args, validated once per context (init checked it). */
static const struct ddt_blob *
gather_blob(struct spin_hctx *h)
{
	struct gather_state *st = spin_hctx_state(h);

	return spin_ddt_args_blob(h, &st->view);
}

struct gather_walk {
	struct spin_hctx *h;
	uint8_t *dst;
	int64_t first, last, origin;
	int rc;
};

/* A block of the packet's range: read it from the typed buffer. */
static int
gather_block(void *arg, int64_t buf_off, int64_t len, int64_t stream_off)
{
	struct gather_walk *w = arg;
	int64_t win_off;

	if (len <= 0)
		return 0;
	if (stream_off < w->first || len > w->last - stream_off ||
	    __builtin_add_overflow(w->origin, buf_off, &win_off) ||
	    win_off < 0) {
		w->rc = -ERANGE;
		return 1;
	}
	w->rc = spin_dma_from_host(w->h, (uint64_t)win_off,
				   w->dst + (stream_off - w->first),
				   (size_t)len);
	return w->rc != 0;
}

static int
gather_outbound(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_ddt_args *a = spin_hctx_args(h);
	uint64_t stack[GATHER_SEG_MAX / 8];
	const struct ddt_blob *b = gather_blob(h);
	struct gather_walk w;
	struct ddt_segment *s;
	uint32_t id = spin_hctx_hpu(h);
	int rc;

	if (b == NULL || pkt->offset > (uint64_t)GATHER_SPAN_MAX)
		return SPIN_ERROR;
	if (pkt->len == 0)
		return SPIN_SUCCESS;
	if (id < a->nslots) {
		struct gather_slot *sl = (struct gather_slot *)
			((uint8_t *)spin_hctx_state(h) +
			 sizeof(struct gather_state) +
			 id * slot_size(ddt_segment_mem_size(b)));

		s = (struct ddt_segment *)sl->seg;
		if (!sl->ready) {
			if (ddt_segment_init(sl->seg, GATHER_SEG_MAX, b,
					     a->count) == NULL)
				return SPIN_ERROR;
			ddt_segment_set_walk(s, (a->flags & SPIN_DDT_F_WALK) != 0);
			sl->ready = 1;
		} else if ((int64_t)pkt->offset < ddt_segment_pos(s)) {
			ddt_segment_reset(s);
		}
	} else {
		s = ddt_segment_init(stack, sizeof(stack), b, a->count);
		if (s == NULL)
			return SPIN_ERROR;
		ddt_segment_set_walk(s, (a->flags & SPIN_DDT_F_WALK) != 0);
	}
	w.h = h;
	w.dst = pkt->payload;
	w.first = (int64_t)pkt->offset;
	w.last = (int64_t)(pkt->offset + pkt->len);
	w.origin = a->origin;
	w.rc = 0;
	rc = ddt_segment_blocks(s, w.first, w.last, gather_block, &w);
	return rc == 0 && w.rc == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_ddt_gather = {
	.name = "ddt_gather",
	.init = gather_init,
	.outbound = gather_outbound,
};
