/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Puts that match an ME with a sPIN execution context:
 *  - checksum: the header handler zeroes the sums, payload handlers add
 *    theirs and copy the payload, the completion handler writes the result
 *    after the data: a wrong order, a lost packet or a completion run
 *    early gives a wrong sum, byte or packet count;
 *  - ddt_vector: the packed stream unpacked into place (vector of doubles,
 *    blocks straddling packets), checked against a host unpack.
 */
#include <stdio.h>

#include "harness.h"

int
main(void)
{
	static const char *const lens[] = { "len=1", "len=2048", "len=5000",
					    "len=1048576", "len=0" };
	unsigned i;

	itest_init("itest_handlers", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const char *t[] = { "target", "op=put", lens[i], "buf=region",
				    "handler=checksum", "count=1", "seed=9",
				    NULL };
		const char *in[] = { "put", lens[i], "buf=region", "count=1",
				     "seed=9", NULL };
		char what[96];

		snprintf(what, sizeof(what), "checksum handler %s", lens[i]);
		itest_run_pair(what, 1, t, 0, in);
	}
	{
		/* 3 doubles of every 7, 1000 blocks: 24000 packed bytes */
		const char *t[] = { "target", "op=put", "len=24000",
				    "buf=region", "handler=vector",
				    "vec=1000,3,7", "seed=3", NULL };
		const char *in[] = { "put", "len=24000", "buf=malloc",
				     "seed=3", NULL };

		itest_run_pair("vector handler 1000x3/7 doubles", 1, t, 0, in);
	}
	{
		/* 1 MiB packed, blocks of 40 bytes: every packet splits one */
		const char *t[] = { "target", "op=put", "len=1048560",
				    "buf=malloc", "handler=vector",
				    "vec=26214,5,9", "seed=4", NULL };
		const char *in[] = { "put", "len=1048560", "buf=region",
				     "seed=4", NULL };

		itest_run_pair("vector handler into malloc'd memory", 1, t, 0,
			       in);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
