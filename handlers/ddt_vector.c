/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_vector": the vector-specialized payload handler of paper 000
 * (Listing 1), complete: a packet's byte range of the packed stream may
 * start and end inside a block (blocks straddle packets, block size need
 * not divide the payload size), and the type may repeat (nelem elements
 * extent apart). A block cut by the packet's start or end is one
 * non-blocking DMA without event, the whole blocks of one element in the
 * packet one strided DMA (spin_dma_to_host_strided_nb) without event, or,
 * for blocks under 64 B that are not a power of two (12, 24, 48 ...) into
 * a directly addressable window, one ddt_copy_strided() (lib/ddt's inline
 * kernels) checked at both ends and accounted once per packet;
 * the completion handler's zero-byte DMA with event signals the host that
 * the message is unpacked (§3.2.2).
 */
#include <errno.h>
#include <stdbool.h>

#include "ddt.h"
#include "spin_handler.h"
#include "spin_handler_args.h"
#include "handlers.h"

static int
vec_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_vec_args *a = args;
	uint64_t elem, total, span, t;

	if (args_len != sizeof(*a) || a->version != SPIN_VEC_ARGS_VERSION ||
	    a->flags != 0 || a->blocklen == 0 || a->count == 0 ||
	    a->nelem == 0)
		return -EINVAL;
	/* packed size and every offset the handler computes fit in int64 */
	if (__builtin_mul_overflow(a->blocklen, a->count, &elem) ||
	    __builtin_mul_overflow(elem, a->nelem, &total) ||
	    __builtin_mul_overflow(a->count - 1, handlers_mag(a->stride),
				   &span) ||
	    __builtin_mul_overflow(a->nelem - 1, handlers_mag(a->extent), &t) ||
	    __builtin_add_overflow(span, t, &span) ||
	    __builtin_add_overflow(span, handlers_mag(a->base), &span) ||
	    __builtin_add_overflow(span, a->blocklen, &span) ||
	    span > (uint64_t)INT64_MAX)
		return -EINVAL;
	return 0;
}

/* Blocks up to this size that are not a power of two go straight into a
 * directly addressable window with lib/ddt's strided kernels (inline, no
 * call per block). The runtime's strided DMA copies powers of two with
 * constant-size moves and larger blocks with libc's memcpy, both measured
 * as fast or faster (128 B: AVX-512 memcpy beat 16-byte moves by ~20%). */
#define VEC_INLINE_MAX 63u

struct vec_out {
	struct spin_hctx *h;
	uint8_t *win;         /* NULL: DMAs only */
	uint64_t win_len;
	bool looked;          /* win asked for (only for small blocks) */
	uint64_t bytes, ops;  /* written straight, to account once */
};

/* k blocks of bl bytes (k > 1: stride apart) from src at window offset
 * dst. @return 0, or -1 (a block outside the window: rejected) */
static inline int
vec_put(struct vec_out *o, int64_t dst, int64_t stride, const uint8_t *src,
	uint64_t bl, uint64_t k)
{
	int64_t last = dst + (int64_t)(k - 1) * stride;

	if (dst < 0 || last < 0)
		return -1;
	/* larger blocks: the runtime's strided DMA, one memcpy per block
	 * either way and measured faster (no window lookup) */
	if (bl > VEC_INLINE_MAX || (bl & (bl - 1)) == 0)
		goto dma;
	if (!o->looked) {
		o->win = spin_dma_window(o->h, &o->win_len);
		o->looked = true;
	}
	if (o->win != NULL && (uint64_t)dst <= o->win_len &&
	    bl <= o->win_len - (uint64_t)dst &&
	    (uint64_t)last <= o->win_len &&
	    bl <= o->win_len - (uint64_t)last) {
		ddt_copy_strided(o->win + dst, src, (int64_t)bl, stride,
				 (int64_t)k);
		o->bytes += bl * k;
		o->ops += k;
		return 0;
	}
dma:
	if (k == 1)
		return spin_dma_to_host_nb(o->h, (uint64_t)dst, src, bl,
					   SPIN_DMA_NO_EVENT) == 0 ? 0 : -1;
	return spin_dma_to_host_strided_nb(o->h, (uint64_t)dst, stride, src,
					   bl, k, SPIN_DMA_NO_EVENT) == 0 ?
		0 : -1;
}

static int
vec_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_vec_args *a = spin_hctx_args(h);
	uint64_t blocklen = a->blocklen, count = a->count, nelem = a->nelem;
	int64_t stride = a->stride, extent = a->extent;
	const uint8_t *src = pkt->payload;
	uint64_t left = pkt->len, elem_bytes, e, q, b, r;
	struct vec_out o = { .h = h };
	int rc = SPIN_SUCCESS;

	/* adjacent blocks are one block, adjacent elements one element */
	if (stride == (int64_t)blocklen) {
		blocklen *= count;
		count = 1;
		if (extent == (int64_t)blocklen) {
			blocklen *= nelem;
			nelem = 1;
		}
	}
	elem_bytes = blocklen * count;
	e = handlers_div_rem(pkt->offset, elem_bytes, &q);
	b = handlers_div_rem(q, blocklen, &r);
	while (left != 0) {
		uint64_t n, k;
		int64_t dst;

		if (e >= nelem) {
			rc = SPIN_ERROR; /* more bytes than the type holds */
			break;
		}
		dst = a->base + (int64_t)e * extent + (int64_t)b * stride +
			(int64_t)r;
		if (r != 0 || left < blocklen) {
			/* a block cut by the packet's start or end */
			n = blocklen - r;
			if (n > left)
				n = left;
			k = 1;
			if (vec_put(&o, dst, stride, src, n, 1) != 0) {
				rc = SPIN_ERROR;
				break;
			}
		} else {
			/* whole blocks of this element: one strided copy */
			k = count - b;
			if (k > left / blocklen)
				k = left / blocklen;
			n = k * blocklen;
			if (vec_put(&o, dst, stride, src, blocklen, k) != 0) {
				rc = SPIN_ERROR;
				break;
			}
		}
		src += n;
		left -= n;
		r = 0;
		b += k;
		if (b == count) {
			b = 0;
			e++;
		}
	}
	if (o.ops != 0)
		spin_dma_account(h, o.bytes, o.ops, SPIN_DMA_NO_EVENT);
	return rc;
}

/* a burst of packets of one message: each as vec_payload, the next
 * ones' payloads prefetched as the runtime does one by one */
static void
vec_payload_burst(const struct spin_pkt *pkts, unsigned n, int *rc,
		  struct spin_hctx *h)
{
	for (unsigned i = 0; i < n; i++) {
		if (i + 2 < n)
			handlers_prefetch(&pkts[i + 2]);
		rc[i] = vec_payload(&pkts[i], h);
	}
}

static int
vec_completion(const struct spin_done *done, struct spin_hctx *h)
{
	return spin_dma_to_host_nb(h, 0, NULL, 0, 0) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_ddt_vector = {
	.name = "ddt_vector",
	.payload = vec_payload,
	.payload_burst = vec_payload_burst,
	.completion = vec_completion,
	.init = vec_init,
};
