/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_iblock": the indexed-block specialized payload handler (paper 000
 * §3.2.3): equal blocks at arbitrary displacements, the displacement list
 * in the context's arguments (NIC memory). Blocks are equal, so the first
 * block of a packet is found by arithmetic (block = stream offset /
 * blocklen), no search; a packet may start and end inside a block, and the
 * type may repeat (nelem elements extent apart). Pieces whose destinations
 * continue each other are merged into one non-blocking DMA without event;
 * the completion handler's zero-byte DMA with event signals the host.
 */
#include <errno.h>

#include "spin_handler.h"
#include "spin_handler_args.h"
#include "handlers.h"

static int
ib_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	struct spin_iblock_args hdr, *a = &hdr;
	const uint8_t *d = (const uint8_t *)args + sizeof(*a);
	uint64_t elem, total, span, t, maxd = 0, i;

	if (args_len < sizeof(*a))
		return -EINVAL;
	/* the control path may hand us unaligned bytes */
	__builtin_memcpy(&hdr, args, sizeof(hdr));
	if (a->version != SPIN_IBLOCK_ARGS_VERSION ||
	    a->flags != 0 || a->blocklen == 0 || a->nblocks == 0 ||
	    a->nelem == 0 ||
	    a->nblocks > (args_len - sizeof(*a)) / sizeof(int64_t) ||
	    args_len != sizeof(*a) + a->nblocks * sizeof(int64_t))
		return -EINVAL;
	for (i = 0; i < a->nblocks; i++) {
		int64_t v;

		__builtin_memcpy(&v, d + i * sizeof(v), sizeof(v));
		if (handlers_mag(v) > maxd)
			maxd = handlers_mag(v);
	}
	/* packed size and every window offset computed fit in int64 */
	if (__builtin_mul_overflow(a->blocklen, a->nblocks, &elem) ||
	    __builtin_mul_overflow(elem, a->nelem, &total) ||
	    __builtin_mul_overflow(a->nelem - 1, handlers_mag(a->extent), &t) ||
	    __builtin_add_overflow(t, maxd, &span) ||
	    __builtin_add_overflow(span, handlers_mag(a->base), &span) ||
	    __builtin_add_overflow(span, a->blocklen, &span) ||
	    span > (uint64_t)INT64_MAX || total > (uint64_t)INT64_MAX)
		return -EINVAL;
	return 0;
}

static int
ib_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_iblock_args *a = spin_hctx_args(h);
	const int64_t *displs = (const int64_t *)(a + 1);
	uint64_t blocklen = a->blocklen, nblocks = a->nblocks;
	uint64_t elem_bytes = blocklen * nblocks, left = pkt->len, e, q, b, r;
	const uint8_t *src = pkt->payload, *run_src = src;
	int64_t run_dst = 0, run_n = 0;

	e = handlers_div_rem(pkt->offset, elem_bytes, &q);
	b = handlers_div_rem(q, blocklen, &r);
	while (left != 0) {
		uint64_t n = blocklen - r;
		int64_t dst;

		if (e >= a->nelem)
			return SPIN_ERROR; /* more bytes than the type holds */
		if (n > left)
			n = left;
		dst = a->base + (int64_t)e * a->extent + displs[b] +
			(int64_t)r;
		if (run_n != 0 && dst == run_dst + run_n) {
			run_n += (int64_t)n;
		} else {
			if (run_n != 0 &&
			    (run_dst < 0 ||
			     spin_dma_to_host_nb(h, (uint64_t)run_dst, run_src,
						 (size_t)run_n,
						 SPIN_DMA_NO_EVENT) != 0))
				return SPIN_ERROR;
			run_dst = dst;
			run_src = src;
			run_n = (int64_t)n;
		}
		src += n;
		left -= n;
		r = 0;
		if (++b == nblocks) {
			b = 0;
			e++;
		}
	}
	if (run_n != 0 &&
	    (run_dst < 0 ||
	     spin_dma_to_host_nb(h, (uint64_t)run_dst, run_src, (size_t)run_n,
				 SPIN_DMA_NO_EVENT) != 0))
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static int
ib_completion(const struct spin_done *done, struct spin_hctx *h)
{
	return spin_dma_to_host_nb(h, 0, NULL, 0, 0) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_ddt_iblock = {
	.name = "ddt_iblock",
	.payload = ib_payload,
	.completion = ib_completion,
	.init = ib_init,
};
