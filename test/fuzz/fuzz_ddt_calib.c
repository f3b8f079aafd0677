/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the typed-receive calibration cache file
 * (lib/shim/shim_ddt_calib.c), read from disk by every process that uses
 * the aware chooser. The input is the file's bytes, for the key of the
 * seeds. Any input: a reason in range, never a crash; an accepted file has
 * every value finite and in range, a host cost, and formats back to a file
 * that parses to the same table.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "shim_ddt_calib.h"

#define KEY 0x0123456789abcdefull

static void
cost_ok(const struct shim_ddt_cost *k)
{
	FZ_CHECK(isfinite(k->msg_ns) && k->msg_ns >= 0.0 &&
		 k->msg_ns <= SHIM_CALIB_MSG_MAX);
	FZ_CHECK(isfinite(k->byte_ns) && k->byte_ns >= 0.0 &&
		 k->byte_ns <= SHIM_CALIB_UNIT_MAX);
	FZ_CHECK(isfinite(k->block_ns) && k->block_ns >= 0.0 &&
		 k->block_ns <= SHIM_CALIB_UNIT_MAX);
	FZ_CHECK(isfinite(k->pkt_ns) && k->pkt_ns >= 0.0 &&
		 k->pkt_ns <= SHIM_CALIB_UNIT_MAX);
	FZ_CHECK(isfinite(k->out_block_ns) && k->out_block_ns >= 0.0 &&
		 k->out_block_ns <= SHIM_CALIB_UNIT_MAX);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[SHIM_CALIB_FILE_MAX];
	struct shim_calib c, d;
	enum shim_calib_err why;
	unsigned i;
	int n;

	why = shim_calib_parse((const char *)data, size, KEY, &c);
	FZ_CHECK((unsigned)why < SHIM_CALIB_E_COUNT);
	if (why != SHIM_CALIB_OK)
		return 0;
	FZ_CHECK(c.key == KEY);
	FZ_CHECK(c.payload >= 1 && c.costs.nhpu >= 1);
	FZ_CHECK(c.costs.s[SPIN_TYPE_HOST].valid);
	for (i = 0; i < SPIN_TYPE_COUNT; i++)
		cost_ok(&c.costs.s[i]);
	n = shim_calib_format(&c, buf, sizeof(buf));
	FZ_CHECK(n > 0);
	FZ_CHECK(shim_calib_parse(buf, (size_t)n, KEY, &d) == SHIM_CALIB_OK);
	FZ_CHECK(memcmp(&c.costs, &d.costs, sizeof(c.costs)) == 0);
	return 0;
}
