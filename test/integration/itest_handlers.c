/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Puts that match an ME with a sPIN execution context:
 *  - checksum: the header handler zeroes the sums, payload handlers add
 *    theirs and copy the payload, the completion handler writes the result
 *    after the data: a wrong order, a lost packet or a completion run
 *    early gives a wrong sum, byte or packet count;
 *  - ddt_vector: the packed stream unpacked into place (vector of doubles,
 *    blocks straddling packets), checked against a host unpack.
 * Written with the harness's typed clients (harness.h, struct itest_pair).
 */
#include <inttypes.h>
#include <stdio.h>

#include "harness.h"

int
main(void)
{
	static const uint64_t lens[] = { 1, 2048, 5000, 1048576, 0 };
	unsigned i;

	itest_init("itest_handlers", 60);
	itest_spinnic_start(NULL);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const struct itest_pair p = {
			.msg = { .len = lens[i], .count = 1, .seed = 9 },
			.tnode = 1, .t.handler = "checksum",
		};
		char what[96];

		snprintf(what, sizeof(what), "checksum handler len=%" PRIu64,
			 lens[i]);
		itest_pair_run(what, &p);
	}
	/* 3 doubles of every 7, 1000 blocks: 24000 packed bytes */
	itest_pair_run("vector handler 1000x3/7 doubles",
		       &(struct itest_pair){
			       .msg = { .len = 24000, .seed = 3 },
			       .tnode = 1,
			       .t = { .handler = "vector",
				      .vec = { 1000, 3, 7 } },
			       .i.buf = ITEST_BUF_MALLOC });
	/* 1 MiB packed, blocks of 40 bytes: every packet splits one */
	itest_pair_run("vector handler into malloc'd memory",
		       &(struct itest_pair){
			       .msg = { .len = 1048560, .seed = 4 },
			       .tnode = 1,
			       .t = { .buf = ITEST_BUF_MALLOC,
				      .handler = "vector",
				      .vec = { 26214, 5, 9 } } });
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
