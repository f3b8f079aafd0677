/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matching corner cases: an unexpected message lands in an overflow-list
 * ME and is found with PtlMESearch; a put that matches nothing is dropped
 * at the target and the initiator's ACK event says so (ni_fail_type not
 * OK); so does a get of nothing (REPLY), a put to a process that does
 * not exist, and a put to a node no port reaches (SEND); spinnic counts
 * the drops.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

int
main(void)
{
	struct itest_client hold;
	char target[64], pt[32], line[256];
	unsigned nid, pid, ptn;
	long long nm;
	int st;

	itest_init("itest_match", 60);
	itest_spinnic_start(NULL);
	{
		const char *t[] = { "search", "op=put", "len=3000",
				    "match=0x99", "seed=2", NULL };
		const char *in[] = { "put", "len=3000", "match=0x99",
				     "seed=2", NULL };

		itest_run_pair("unexpected message + PtlMESearch", 1, t, 0, in);
	}
	{
		/* a PT with no ME at all */
		const char *h[] = { "hold", NULL };
		const char *in[] = { "put", "len=5000", "expect=fail", target,
				     pt, NULL };
		struct itest_client i;

		itest_client_ready(&hold, 1, "nothing/hold", h, &nid, &pid,
				   &ptn);
		snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
		snprintf(pt, sizeof(pt), "pt=%u", ptn);
		itest_client_start(&i, 0, "nothing/put", in);
		itest_client_expect(&i, "ok", line, sizeof(line), 20000);
		st = itest_client_wait(&i, 5000);
		if (st != 0)
			itest_fail("put to nothing: exit status %d", st);
		/* a get of nothing: REPLY with the reason */
		{
			const char *g[] = { "get", "len=100", "expect=fail",
					    target, pt, NULL };

			itest_client_start(&i, 0, "nothing/get", g);
			itest_client_expect(&i, "ok", line, sizeof(line),
					    20000);
			st = itest_client_wait(&i, 5000);
			if (st != 0)
				itest_fail("get of nothing: exit status %d",
					   st);
		}
		/* both reached the hold client's NI and were dropped there */
		itest_client_say(&hold, "status");
		itest_client_expect(&hold, "status", line, sizeof(line), 10000);
		if (strcmp(line, "status 2 0 0") != 0)
			itest_fail("PtlNIStatus after a put and a get to "
				   "nothing: '%s', want 'status 2 0 0'", line);
		/* a put to a process that does not exist */
		snprintf(target, sizeof(target), "target=%u:%u", nid, 63);
		{
			const char *p[] = { "put", "len=10", "expect=fail",
					    target, pt, NULL };

			itest_client_start(&i, 0, "nothing/nopid", p);
			itest_client_expect(&i, "ok", line, sizeof(line),
					    20000);
			st = itest_client_wait(&i, 5000);
			if (st != 0)
				itest_fail("put to no process: exit status %d",
					   st);
		}
		/* a put to a node no port reaches */
		snprintf(target, sizeof(target), "target=%u:%u", 77, pid);
		{
			const char *p[] = { "put", "len=10", "expect=sendfail",
					    target, pt, NULL };

			itest_client_start(&i, 0, "nothing/nonode", p);
			itest_client_expect(&i, "ok", line, sizeof(line),
					    20000);
			st = itest_client_wait(&i, 5000);
			if (st != 0)
				itest_fail("put to no node: exit status %d",
					   st);
		}
		itest_client_kill(&hold);
	}
	itest_spinnic_finish();
	nm = itest_counter(1, "no_match");
	if (nm < 1)
		itest_fail("node 1 counted %lld unmatched messages", nm);
	return 0;
}
