/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A peer that goes silent (DESIGN §11, issue 5): node 1 hears nothing
 * (--fault-inject rx:loss=100, a partition), so none of node 0's packets
 * is ever acknowledged. After --peer-timeout-ms every operation of node 0
 * towards it fails with PTL_NI_UNDELIVERABLE — puts in flight (SEND or
 * ACK), a get (REPLY), a put whose data all left but whose ack is owed —
 * instead of hanging; spinnic counts the peer failure and leaks nothing.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static void
expect_undeliverable(const char *what, const char *const *argv)
{
	struct itest_client c;
	char line[256];
	int st;

	itest_client_start(&c, 0, what, argv);
	itest_client_expect(&c, "ok", line, sizeof(line), 30000);
	st = itest_client_wait(&c, 5000);
	if (st != 0)
		itest_fail("%s: exit status %d", what, st);
	fprintf(stderr, "itest_peer_gone: %s: %s\n", what, line);
}

int
main(void)
{
	static const char *const opts[] = {
		"--peer-timeout-ms", "300", "--rto-us", "2000",
		"--fault-inject", "rx:loss=100", NULL };
	long long fails, ops;

	itest_init("itest_peer_gone", 90);
	itest_spinnic_start(opts);
	{
		/* four puts of 300 KB in flight, more waiting for a slot */
		const char *in[] = { "put", "target=1:0", "pt=0",
				     "len=300000", "count=8", "window=4",
				     "expect=undeliverable", NULL };

		expect_undeliverable("puts in flight", in);
	}
	{
		const char *in[] = { "get", "target=1:0", "pt=0", "len=5000",
				     "expect=undeliverable", NULL };

		expect_undeliverable("get", in);
	}
	{
		/* a one-packet put: nothing of it is left to resend once the
		 * window failed, the peer is probed for its ack */
		const char *in[] = { "put", "target=1:0", "pt=0", "len=8",
				     "expect=undeliverable", NULL };

		expect_undeliverable("small put", in);
	}
	itest_spinnic_finish();
	fails = itest_counter(0, "peer_fails");
	ops = itest_counter(0, "peer_failed_ops");
	fprintf(stderr, "itest_peer_gone: node 0 gave the peer up %lld "
		"time(s), %lld operation(s) failed\n", fails, ops);
	if (fails < 3 || ops < 10)
		itest_fail("peer_fails %lld, peer_failed_ops %lld: want 3 and "
			   "10 at least", fails, ops);
	return 0;
}
