/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Put without a handler, node 0 -> node 1 and node 0 -> node 0, one-packet
 * and many-packet messages, region and malloc'd buffers on both sides:
 * SEND + ACK at the initiator, PUT + CT at the target, every byte checked.
 * Written with the harness's typed clients (harness.h, struct itest_pair).
 */
#include <inttypes.h>
#include <stdio.h>

#include "harness.h"

#define R ITEST_BUF_REGION
#define M ITEST_BUF_MALLOC

struct put_case {
	uint64_t len;
	enum itest_buf tbuf, ibuf;
	unsigned tnode;
};

int
main(void)
{
	static const struct put_case cases[] = {
		{ 1, R, R, 1 },
		{ 2048, R, R, 1 },
		{ 2049, R, M, 1 },
		{ 1048576, R, R, 1 },
		{ 1048576, M, M, 1 },
		{ 0, R, R, 1 },
		{ 100000, R, M, 0 }, /* loopback */
	};
	static const char *const buf_name[] = { [R] = "region",
						[M] = "malloc" };
	unsigned i;

	itest_init("itest_put", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct put_case *c = &cases[i];
		const struct itest_pair p = {
			.msg = { .op = ITEST_PUT, .len = c->len, .count = 3,
				 .match = 0x77, .seed = 5 },
			.tnode = c->tnode, .t.buf = c->tbuf,
			.inode = 0, .i.buf = c->ibuf,
		};
		char what[96];

		snprintf(what, sizeof(what),
			 "put len=%" PRIu64 " %s->%s node0->node%u", c->len,
			 buf_name[c->ibuf], buf_name[c->tbuf], c->tnode);
		itest_pair_run(what, &p);
	}
	/* a non-matching NI: list entries, no match bits */
	itest_pair_run("put to a list entry (non-matching NI)",
		       &(struct itest_pair){
			       .msg = { .len = 5000, .nomatch = true,
					.seed = 12 },
			       .tnode = 1, .inode = 0 });
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
