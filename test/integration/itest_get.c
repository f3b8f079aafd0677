/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Get: GET event at the target, REPLY event and every byte at the
 * initiator; one-packet and many-packet replies, region and malloc'd
 * memory, and a get from the node itself.
 */
#include <stdio.h>

#include "harness.h"

struct get_case {
	const char *len, *tbuf, *ibuf;
	unsigned tnode;
};

int
main(void)
{
	static const struct get_case cases[] = {
		{ "len=1", "buf=region", "buf=region", 1 },
		{ "len=2048", "buf=malloc", "buf=region", 1 },
		{ "len=1048576", "buf=region", "buf=malloc", 1 },
		{ "len=70000", "buf=region", "buf=region", 0 },
		{ "len=0", "buf=region", "buf=region", 1 },
	};
	unsigned i;

	itest_init("itest_get", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct get_case *c = &cases[i];
		const char *t[] = { "target", "op=get", c->len, c->tbuf,
				    "match=0x1234", "seed=11", NULL };
		const char *in[] = { "get", c->len, c->ibuf, "match=0x1234",
				     "seed=11", NULL };
		char what[96];

		snprintf(what, sizeof(what), "get %s node0<-node%u", c->len,
			 c->tnode);
		itest_run_pair(what, c->tnode, t, 0, in);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
