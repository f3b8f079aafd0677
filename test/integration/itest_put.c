/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Put without a handler, node 0 -> node 1 and node 0 -> node 0, one-packet
 * and many-packet messages, region and malloc'd buffers on both sides:
 * SEND + ACK at the initiator, PUT + CT at the target, every byte checked.
 */
#include <stdio.h>

#include "harness.h"

struct put_case {
	const char *len, *tbuf, *ibuf;
	unsigned tnode;
};

int
main(void)
{
	static const struct put_case cases[] = {
		{ "len=1", "buf=region", "buf=region", 1 },
		{ "len=2048", "buf=region", "buf=region", 1 },
		{ "len=2049", "buf=region", "buf=malloc", 1 },
		{ "len=1048576", "buf=region", "buf=region", 1 },
		{ "len=1048576", "buf=malloc", "buf=malloc", 1 },
		{ "len=0", "buf=region", "buf=region", 1 },
		{ "len=100000", "buf=region", "buf=malloc", 0 }, /* loopback */
	};
	unsigned i;

	itest_init("itest_put", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct put_case *c = &cases[i];
		const char *t[] = { "target", "op=put", c->len, c->tbuf,
				    "count=3", "match=0x77", "seed=5", NULL };
		const char *in[] = { "put", c->len, c->ibuf, "count=3",
				     "match=0x77", "seed=5", NULL };
		char what[96];

		snprintf(what, sizeof(what), "put %s %s->%s node0->node%u",
			 c->len, c->ibuf + 4, c->tbuf + 4, c->tnode);
		itest_run_pair(what, c->tnode, t, 0, in);
	}
	{
		/* a non-matching NI: list entries, no match bits */
		const char *t[] = { "target", "op=put", "len=5000", "ni=nomatch",
				    "seed=12", NULL };
		const char *in[] = { "put", "len=5000", "ni=nomatch", "seed=12",
				     NULL };

		itest_run_pair("put to a list entry (non-matching NI)", 1, t,
			       0, in);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
