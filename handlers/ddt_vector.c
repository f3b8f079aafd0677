/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_vector": the vector-specialized payload handler of paper 000
 * (Listing 1), complete: a packet's byte range of the packed stream may
 * start and end inside a block (blocks straddle packets, block size need
 * not divide the payload size), and the type may repeat (nelem elements
 * extent apart). A block cut by the packet's start or end is one
 * non-blocking DMA without event, the whole blocks of one element in the
 * packet one strided DMA (spin_dma_to_host_strided_nb) without event; the completion handler's zero-byte DMA with event signals the
 * host that the message is unpacked (§3.2.2).
 */
#include <errno.h>

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

static int
vec_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_vec_args *a = spin_hctx_args(h);
	uint64_t blocklen = a->blocklen, count = a->count, nelem = a->nelem;
	int64_t stride = a->stride, extent = a->extent;
	const uint8_t *src = pkt->payload;
	uint64_t left = pkt->len, elem_bytes, e, q, b, r;

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

		if (e >= nelem)
			return SPIN_ERROR; /* more bytes than the type holds */
		dst = a->base + (int64_t)e * extent + (int64_t)b * stride +
			(int64_t)r;
		if (r != 0 || left < blocklen) {
			/* a block cut by the packet's start or end */
			n = blocklen - r;
			if (n > left)
				n = left;
			if (dst < 0 ||
			    spin_dma_to_host_nb(h, (uint64_t)dst, src, n,
						SPIN_DMA_NO_EVENT) != 0)
				return SPIN_ERROR;
			k = 1;
		} else {
			/* whole blocks of this element: one strided DMA */
			k = count - b;
			if (k > left / blocklen)
				k = left / blocklen;
			n = k * blocklen;
			if (dst < 0 || dst + (int64_t)(k - 1) * stride < 0 ||
			    spin_dma_to_host_strided_nb(h, (uint64_t)dst, stride,
							src, blocklen, k,
							SPIN_DMA_NO_EVENT) != 0)
				return SPIN_ERROR;
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
	return SPIN_SUCCESS;
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
	.completion = vec_completion,
	.init = vec_init,
};
