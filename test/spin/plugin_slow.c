/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A handler plugin (spinnic --handlers) whose payload handler is slow on
 * purpose: family "test_slow" sleeps SLOW_NS per packet, then DMAs the
 * packet to the window at its message offset. itest_aa_hflush uses it to
 * have message handlers still running when an active flush arrives.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "spin_handler.h"

#define SLOW_NS 20000000L /* 20 ms per packet */

static int
slow_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	(void)args;
	if (args_len != 0)
		return -EINVAL;
	*state_len_p = 0;
	return 0;
}

static int
slow_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct timespec ts = { 0, SLOW_NS };

	nanosleep(&ts, NULL);
	return spin_dma_to_host(h, pkt->offset, pkt->payload, pkt->len, 0) ==
		0 ? SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family test_slow = {
	.name = "test_slow",
	.payload = slow_payload,
	.init = slow_init,
};

SPIN_HANDLER_PLUGIN(&test_slow);
