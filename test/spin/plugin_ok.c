/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A handler plugin (spinnic --handlers), built like one out of tree: it
 * includes spin_handler.h only and links nothing. Family "test_count":
 * payload handlers copy their packet to the window at its message offset
 * and count packets, bytes and the sum of the bytes in the context state;
 * the header handler counts messages; the completion handler writes a
 * struct test_count_result right after the message's data (the window
 * must hold length + 40 bytes). test/integration/itest_plugins.c checks
 * it byte for byte.
 */
#include <errno.h>
#include <stdint.h>

#include "spin_handler.h"

#define TEST_COUNT_MAGIC 0x544e554f43545354ull /* "TSTCOUNT" */

/* state words */
enum { TC_MSGS = 0, TC_PKTS = 8, TC_BYTES = 16, TC_SUM = 24, TC_STATE = 32 };

/* what the completion handler writes after the data */
struct test_count_result {
	uint64_t magic;
	uint64_t msgs;
	uint64_t pkts;
	uint64_t bytes;
	uint64_t sum;
};

static int
tc_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	(void)args;
	if (args_len != 0)
		return -EINVAL;
	*state_len_p = TC_STATE;
	return 0;
}

static int
tc_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	(void)hdr;
	return spin_nic_fetch_add(h, TC_MSGS, 1, NULL) == 0 ?
		SPIN_SUCCESS : SPIN_ERROR;
}

static int
tc_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < pkt->len; i++)
		sum += pkt->payload[i];
	if (spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				SPIN_DMA_NO_EVENT) != 0 ||
	    spin_nic_fetch_add(h, TC_PKTS, 1, NULL) != 0 ||
	    spin_nic_fetch_add(h, TC_BYTES, pkt->len, NULL) != 0 ||
	    spin_nic_fetch_add(h, TC_SUM, sum, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static int
tc_completion(const struct spin_done *done, struct spin_hctx *h)
{
	struct test_count_result r;

	r.magic = TEST_COUNT_MAGIC;
	/* fetch_add of 0: an atomic read */
	if (spin_nic_fetch_add(h, TC_MSGS, 0, &r.msgs) != 0 ||
	    spin_nic_fetch_add(h, TC_PKTS, 0, &r.pkts) != 0 ||
	    spin_nic_fetch_add(h, TC_BYTES, 0, &r.bytes) != 0 ||
	    spin_nic_fetch_add(h, TC_SUM, 0, &r.sum) != 0)
		return SPIN_ERROR;
	if (r.pkts != done->npkts || r.bytes != done->bytes)
		return SPIN_ERROR;
	return spin_dma_to_host(h, spin_hctx_info(h)->length, &r, sizeof(r),
				0) == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family test_count = {
	.name = "test_count",
	.header = tc_header,
	.payload = tc_payload,
	.completion = tc_completion,
	.init = tc_init,
};

SPIN_HANDLER_PLUGIN(&test_count);
