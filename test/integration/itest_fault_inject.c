/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --fault-inject (app/spinnic/options.c): the percentage form of the RX
 * fault injection. Malformed specifications and the parts that need
 * retransmission (tx:, corrupt=) are refused before the EAL; a valid one
 * injects duplication and reordering that the inbound engine absorbs, with
 * every byte delivered exactly once.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void
expect_refused(const char *spec)
{
	const char *a[] = { "--", "--virtual", "2", "--fault-inject", spec,
			    NULL };
	int st = itest_spinnic_run(a, 30000);

	if (st != 2 || strstr(itest_spinnic_log(), "--fault-inject:") == NULL)
		itest_fail("--fault-inject %s: status %d, want 2 and a "
			   "--fault-inject line\n%s", spec, st,
			   itest_spinnic_log());
	fprintf(stderr, "itest_fault_inject: '%s' refused\n", spec);
}

int
main(void)
{
	static const char *const opts[] = { "--fault-inject",
					    "rx:dup=5,reorder=10",
					    "--fault-seed", "9", NULL };
	long long faults, dups;

	itest_init("itest_fault_inject", 60);
	expect_refused("tx:loss=1");
	expect_refused("corrupt=1");
	expect_refused("loss=150");
	expect_refused("dup=");
	expect_refused("jitter=1");
	expect_refused("");

	itest_spinnic_start(opts);
	{
		const char *t[] = { "target", "op=put", "len=1048576",
				    "count=2", "seed=31", NULL };
		const char *in[] = { "put", "len=1048576", "buf=malloc",
				     "count=2", "seed=31", NULL };

		itest_run_pair("put 2 x 1 MiB", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=get", "len=300000",
				    "seed=32", NULL };
		const char *in[] = { "get", "len=300000", "seed=32", NULL };

		itest_run_pair("get 300000", 1, t, 0, in);
	}
	itest_spinnic_finish();
	faults = itest_counter(0, "faults") + itest_counter(1, "faults");
	dups = itest_counter(0, "drop_dup") + itest_counter(1, "drop_dup");
	fprintf(stderr, "itest_fault_inject: %lld faults injected, %lld "
		"duplicates dropped\n", faults, dups);
	if (faults <= 0 || dups <= 0)
		itest_fail("the fault injection did not happen");
	return 0;
}
