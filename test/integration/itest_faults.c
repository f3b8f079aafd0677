/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The inbound engine under duplicated and reordered packets (spinnic's RX
 * fault injection, DESIGN §11): a message may be matched on any of its
 * packets, duplicates are recognised and dropped, and every exchange
 * still delivers each byte exactly once, with and without handlers.
 * (Loss is not injected: it needs retransmission.)
 */
#include <stdio.h>

#include "harness.h"

int
main(void)
{
	static const char *const opts[] = { "--rx-dup", "0.05", "--rx-reorder",
					    "8", "--fault-seed", "7", NULL };
	long long faults, dups;

	itest_init("itest_faults", 60);
	itest_spinnic_start(opts);
	{
		const char *t[] = { "target", "op=put", "len=1048576",
				    "count=4", "seed=21", NULL };
		const char *in[] = { "put", "len=1048576", "buf=malloc",
				     "count=4", "seed=21", NULL };

		itest_run_pair("put 4 x 1 MiB", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=put", "len=300000",
				    "handler=checksum", "seed=22", NULL };
		const char *in[] = { "put", "len=300000", "seed=22", NULL };

		itest_run_pair("checksum handler 300000", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=put", "len=480000",
				    "handler=vector", "vec=12000,5,8",
				    "seed=23", NULL };
		const char *in[] = { "put", "len=480000", "seed=23", NULL };

		itest_run_pair("vector handler 480000", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=get", "len=500000",
				    "seed=24", NULL };
		const char *in[] = { "get", "len=500000", "seed=24", NULL };

		itest_run_pair("get 500000", 1, t, 0, in);
	}
	itest_spinnic_finish();
	faults = itest_counter(0, "faults") + itest_counter(1, "faults");
	/* duplicates are caught by sequence number, or (unsequenced or
	 * resent) by the message's packet bitmap */
	dups = itest_counter(0, "drop_dup") + itest_counter(1, "drop_dup") +
		itest_counter(0, "drop_rel_dup") +
		itest_counter(1, "drop_rel_dup");
	fprintf(stderr, "itest_faults: %lld faults injected, %lld duplicates "
		"dropped\n", faults, dups);
	if (faults <= 0 || dups <= 0)
		itest_fail("the fault injection did not happen");
	return 0;
}
