/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --fault-inject (app/spinnic/options.c) and reliable delivery (rel.c):
 * malformed specifications are refused before the EAL; loss, duplication,
 * corruption and reordering injected on both RX and TX are repaired by
 * retransmission, with every byte delivered exactly once, and the counters
 * show each mechanism at work (corrupted frames dropped by the checksum,
 * duplicates by sequence number, losses resent).
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

/* A reliable-delivery option with a bad value: refused before the EAL. */
static void
expect_opt_refused(const char *opt, const char *val)
{
	const char *a[] = { "--", "--virtual", "2", opt, val, NULL };
	int st = itest_spinnic_run(a, 30000);

	if (st != 2 || strstr(itest_spinnic_log(), opt) == NULL)
		itest_fail("%s %s: status %d, want 2 and a line naming it\n%s",
			   opt, val, st, itest_spinnic_log());
	fprintf(stderr, "itest_fault_inject: %s %s refused\n", opt, val);
}

/* a counter of both nodes; one a node never printed (never hit) is 0 */
static long long
both(const char *name)
{
	long long a = itest_counter(0, name), b = itest_counter(1, name);

	return (a > 0 ? a : 0) + (b > 0 ? b : 0);
}

int
main(void)
{
	static const char *const opts[] = {
		"--fault-inject", "rx:loss=3,dup=5,corrupt=2,reorder=10",
		"--fault-inject", "tx:loss=3,dup=1,corrupt=2,reorder=4",
		"--fault-seed", "9", NULL };
	long long faults, dups, resent, csum;

	itest_init("itest_fault_inject", 90);
	expect_refused("loss=150");
	expect_refused("dup=");
	expect_refused("jitter=1");
	expect_refused("");
	expect_refused("tx:");
	expect_refused("rx:reorder=2.5");
	expect_refused("reorder=33");
	expect_refused("tx:loss=60,dup=50");
	expect_refused("xx:loss=1");
	expect_opt_refused("--peer-timeout-ms", "5");
	expect_opt_refused("--peer-timeout-ms", "soon");
	expect_opt_refused("--rto-us", "0");
	expect_opt_refused("--rx-reorder", "0.5");

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
	{
		const char *t[] = { "target", "op=put", "len=300000",
				    "handler=checksum", "seed=33", NULL };
		const char *in[] = { "put", "len=300000", "seed=33", NULL };

		itest_run_pair("checksum handler 300000", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=put", "len=100",
				    "count=200", "seed=34", NULL };
		const char *in[] = { "put", "len=100", "count=200",
				     "seed=34", NULL };

		itest_run_pair("put 200 x 100 B", 1, t, 0, in);
	}
	itest_spinnic_finish();
	faults = both("faults_rx") + both("faults_tx");
	dups = both("drop_rel_dup");
	resent = both("retransmits");
	csum = both("udp_csum") + both("ip_csum");
	fprintf(stderr, "itest_fault_inject: %lld faults injected, %lld "
		"duplicates dropped, %lld corrupted frames dropped, %lld "
		"packets resent\n", faults, dups, csum, resent);
	if (faults <= 0 || dups <= 0 || resent <= 0 || csum <= 0)
		itest_fail("a fault or its repair did not happen");
	return 0;
}
