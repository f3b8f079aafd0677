/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "ddt_iovec": the Portals iovec baseline of paper 000 (Fig. 16). The
 * client flattens the type into (stream offset, buffer offset, length)
 * blocks held in a NIC memory blob; each payload handler binary-searches
 * the list for the block holding its packet's first byte and scatters the
 * payload block by block from there, so packets may come in any order and
 * blocks may straddle packets. Pieces whose destinations continue each
 * other are merged into one non-blocking DMA without event; the
 * completion handler's zero-byte DMA with event signals the host.
 *
 * The list is the client's and is read, not trusted: a missing or short
 * blob, or blocks that do not continue each other in the stream, fail the
 * packet; the DMAs are bounds-checked against the window by the runtime.
 */
#include <errno.h>

#include "spin_handler.h"
#include "spin_handler_args.h"

static int
iov_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	struct spin_iovec_args a;

	(void)state_len_p;
	if (args_len != sizeof(a))
		return -EINVAL;
	/* the control path may hand us unaligned bytes */
	__builtin_memcpy(&a, args, sizeof(a));
	if (a.version != SPIN_IOVEC_ARGS_VERSION || a.flags != 0 ||
	    a.pad != 0 || a.total > (uint64_t)INT64_MAX ||
	    a.nent > a.total ||
	    a.origin < -((int64_t)1 << 62) || a.origin > ((int64_t)1 << 62))
		return -EINVAL;
	return 0;
}

/* Last entry whose stream offset is <= off (entries sorted by soff). */
static uint64_t
iov_find(const struct spin_iovec_ent *e, uint64_t n, uint64_t off)
{
	uint64_t lo = 0, hi = n;

	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (e[mid].soff <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int
iov_flush(struct spin_hctx *h, int64_t dst, const uint8_t *src, uint64_t n)
{
	if (n == 0)
		return 0;
	if (dst < 0)
		return -ERANGE;
	return spin_dma_to_host_nb(h, (uint64_t)dst, src, (size_t)n,
				   SPIN_DMA_NO_EVENT);
}

static int
iov_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_iovec_args *a = spin_hctx_args(h);
	const struct spin_iovec_ent *e;
	const uint8_t *src = pkt->payload, *run_src = src;
	uint64_t left = pkt->len, pos = pkt->offset, blen, i, run_n = 0;
	int64_t run_dst = 0;

	if (left == 0)
		return SPIN_SUCCESS;
	if (pos > a->total || left > a->total - pos)
		return SPIN_ERROR; /* more bytes than the type holds */
	e = spin_nicmem_map(h, a->list, &blen);
	if (e == NULL || blen / sizeof(*e) < a->nent || a->nent == 0)
		return SPIN_ERROR;
	i = iov_find(e, a->nent, pos);
	while (left != 0) {
		uint64_t r, n;
		int64_t dst;

		if (i >= a->nent || e[i].soff > pos || e[i].len == 0 ||
		    pos - e[i].soff >= e[i].len || e[i].len > a->total)
			return SPIN_ERROR; /* list does not cover pos */
		r = pos - e[i].soff;
		n = e[i].len - r;
		if (n > left)
			n = left;
		if (__builtin_add_overflow(a->origin, e[i].off, &dst) ||
		    __builtin_add_overflow(dst, (int64_t)r, &dst))
			return SPIN_ERROR;
		if (run_n != 0 && dst == run_dst + (int64_t)run_n) {
			run_n += n;
		} else {
			if (iov_flush(h, run_dst, run_src, run_n) != 0)
				return SPIN_ERROR;
			run_dst = dst;
			run_src = src;
			run_n = n;
		}
		src += n;
		pos += n;
		left -= n;
		i++;
	}
	return iov_flush(h, run_dst, run_src, run_n) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

static int
iov_completion(const struct spin_done *done, struct spin_hctx *h)
{
	(void)done;
	return spin_dma_to_host_nb(h, 0, NULL, 0, 0) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_ddt_iovec = {
	.name = "ddt_iovec",
	.payload = iov_payload,
	.completion = iov_completion,
	.init = iov_init,
};
