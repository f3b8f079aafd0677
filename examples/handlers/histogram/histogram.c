/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "histogram": a packet filter that also counts. Every packet's bytes are
 * histogrammed into NIC memory; packets matching the filter of the
 * arguments are dropped, the others go on to the host buffer unchanged;
 * when the message is complete the histogram is written to the host,
 * right after the message.
 *
 * Where each callback runs and what it touches:
 *  - init: spinnic's control thread, at spin_ctx_install(): checks the
 *    client's arguments and sizes the state (struct histogram_result,
 *    zeroed at install).
 *  - payload: an HPU, once per packet; packets run at the same time on
 *    several HPUs and in any order. Reads the packet (in NIC packet
 *    memory), counts into a local histogram, then adds it to the state
 *    with NIC-memory atomics: one per byte value seen, not one per byte.
 *    Returns SPIN_DROP (the packet goes nowhere) or SPIN_PROCEED (the NIC
 *    copies it to the ME's buffer at its offset: the non-processing path,
 *    as if there were no handler).
 *  - completion: an HPU, once, after every payload handler returned and
 *    every copy finished: DMAs the state to the host buffer.
 * No header handler: the counts add up over every message of the
 * context. Two messages in flight at once on the same context would see
 * each other's counts in their result.
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags spinnic-handler) ...
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <spin_handler.h>

#include "histogram.h"

#define OFF_KEPT offsetof(struct histogram_result, pkts_kept)
#define OFF_DROPPED offsetof(struct histogram_result, pkts_dropped)

static int
hist_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct histogram_args *a = args;

	if (args_len != sizeof(*a) || a->version != HISTOGRAM_ARGS_VERSION ||
	    (a->drop_value & ~a->drop_mask) != 0 || a->pad != 0)
		return -EINVAL; /* spin_ctx_install() fails: PTL_ARG_INVALID */
	*state_len_p = sizeof(struct histogram_result);
	return 0;
}

static int
hist_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct histogram_args *a = spin_hctx_args(h);
	uint32_t bins[256] = { 0 }, w, j;
	int drop = 0;

	for (j = 0; j < pkt->len; j++)
		bins[pkt->payload[j]]++;
	for (j = 0; j < 256; j++)
		if (bins[j] != 0 &&
		    spin_nic_fetch_add(h, j * sizeof(uint64_t), bins[j],
				       NULL) != 0)
			return SPIN_ERROR;

	if (a->drop_mask != 0 && pkt->len >= 4) {
		memcpy(&w, pkt->payload, 4); /* little-endian, like x86 */
		drop = (w & a->drop_mask) == a->drop_value;
	}
	if (spin_nic_fetch_add(h, drop ? OFF_DROPPED : OFF_KEPT, 1, NULL) != 0)
		return SPIN_ERROR;
	return drop ? SPIN_DROP : SPIN_PROCEED;
}

static int
hist_completion(const struct spin_done *done, struct spin_hctx *h)
{
	/* every payload handler returned: the counts of this message are
	 * all in; the window must hold length + sizeof(result) bytes, else
	 * the DMA is refused (-ERANGE) and the message fails */
	if (spin_dma_to_host(h, done->info->length, spin_hctx_state(h),
			     sizeof(struct histogram_result), 0) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static const struct spin_handler_family histogram_family = {
	.name = HISTOGRAM_FAMILY,
	.init = hist_init,
	.payload = hist_payload,
	.completion = hist_completion,
};

/* what spinnic --handlers looks up in this shared object */
SPIN_HANDLER_PLUGIN(&histogram_family);
