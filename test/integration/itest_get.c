/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Get: GET event at the target, REPLY event and every byte at the
 * initiator; one-packet and many-packet replies, region and malloc'd
 * memory, and a get from the node itself. Written with the harness's
 * typed clients (harness.h, struct itest_pair).
 */
#include <inttypes.h>
#include <stdio.h>

#include "harness.h"

#define R ITEST_BUF_REGION
#define M ITEST_BUF_MALLOC

struct get_case {
	uint64_t len;
	enum itest_buf tbuf, ibuf;
	unsigned tnode;
};

int
main(void)
{
	static const struct get_case cases[] = {
		{ 1, R, R, 1 },
		{ 2048, M, R, 1 },
		{ 1048576, R, M, 1 },
		{ 70000, R, R, 0 },
		{ 0, R, R, 1 },
	};
	unsigned i;

	itest_init("itest_get", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct get_case *c = &cases[i];
		const struct itest_pair p = {
			.msg = { .op = ITEST_GET, .len = c->len,
				 .match = 0x1234, .seed = 11 },
			.tnode = c->tnode, .t.buf = c->tbuf,
			.inode = 0, .i.buf = c->ibuf,
		};
		char what[96];

		snprintf(what, sizeof(what), "get len=%" PRIu64
			 " node0<-node%u", c->len, c->tnode);
		itest_pair_run(what, &p);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
