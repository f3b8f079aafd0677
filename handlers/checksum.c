/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "checksum": proves the pipeline. Header handler zeroes the sums, payload
 * handlers add theirs with NIC-memory atomics (order does not matter) and
 * optionally copy the payload to the host, the completion handler writes
 * the result to the host window.
 */
#include <errno.h>
#include <string.h>

#include "spin_handler.h"
#include "spin_handler_args.h"

enum { CS_SUM = 0, CS_WSUM = 8, CS_BYTES = 16, CS_PKTS = 24, CS_STATE = 32 };

static int
csum_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_csum_args *a = args;

	if (args_len != sizeof(*a) || a->version != SPIN_CSUM_ARGS_VERSION ||
	    (a->flags & ~SPIN_CSUM_F_COPY) != 0)
		return -EINVAL;
	*state_len_p = CS_STATE;
	return 0;
}

static int
csum_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	memset(spin_hctx_state(h), 0, CS_STATE);
	return SPIN_SUCCESS;
}

static int
csum_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_csum_args *a = spin_hctx_args(h);
	uint64_t s = 0, w = 0;
	uint32_t j;

	for (j = 0; j < pkt->len; j++) {
		s += pkt->payload[j];
		w += (uint64_t)j * pkt->payload[j];
	}
	/* Σ (offset + j + 1)·b = (offset + 1)·Σ b + Σ j·b */
	w += (pkt->offset + 1) * s;
	if (spin_nic_fetch_add(h, CS_SUM, s, NULL) != 0 ||
	    spin_nic_fetch_add(h, CS_WSUM, w, NULL) != 0 ||
	    spin_nic_fetch_add(h, CS_BYTES, pkt->len, NULL) != 0 ||
	    spin_nic_fetch_add(h, CS_PKTS, 1, NULL) != 0)
		return SPIN_ERROR;
	if ((a->flags & SPIN_CSUM_F_COPY) &&
	    spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				SPIN_DMA_NO_EVENT) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static int
csum_completion(const struct spin_done *done, struct spin_hctx *h)
{
	const struct spin_csum_args *a = spin_hctx_args(h);
	const uint64_t *st = spin_hctx_state(h);
	struct spin_csum_result r = {
		.sum = __atomic_load_n(&st[CS_SUM / 8], __ATOMIC_ACQUIRE),
		.wsum = __atomic_load_n(&st[CS_WSUM / 8], __ATOMIC_ACQUIRE),
		.bytes = __atomic_load_n(&st[CS_BYTES / 8], __ATOMIC_ACQUIRE),
		.pkts = __atomic_load_n(&st[CS_PKTS / 8], __ATOMIC_ACQUIRE),
	};
	uint64_t off = a->result_off == SPIN_CSUM_RESULT_AFTER ?
		done->info->length : a->result_off;

	if (spin_dma_to_host(h, off, &r, sizeof(r), 0) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

const struct spin_handler_family spin_handlers_checksum = {
	.name = "checksum",
	.header = csum_header,
	.payload = csum_payload,
	.completion = csum_completion,
	.init = csum_init,
};
