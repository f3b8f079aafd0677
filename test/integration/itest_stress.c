/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic in both directions at once, many puts in flight per initiator
 * (each acknowledged), plus a loopback stream and a get stream: the
 * engines must neither lose, duplicate nor deadlock (TX queues full of
 * data while the acks the peer waits for are queued behind them).
 */
#include <stdio.h>

#include "harness.h"

#define STREAMS 4

struct stream {
	const char *name;
	unsigned tnode, inode;
	const char *const *targv, *const *iargv;
	struct itest_client t, i;
	char target[64], pt[32];
};

int
main(void)
{
	static const char *const t_put[] = { "target", "op=put", "len=65536",
					     "count=200", "seed=31", NULL };
	static const char *const t_get[] = { "target", "op=get", "len=200000",
					     "seed=32", NULL };
	struct stream s[STREAMS] = {
		{ .name = "0->1", .tnode = 1, .inode = 0, .targv = t_put },
		{ .name = "1->0", .tnode = 0, .inode = 1, .targv = t_put },
		{ .name = "0->0", .tnode = 0, .inode = 0, .targv = t_put },
		{ .name = "get 1<-0", .tnode = 0, .inode = 1, .targv = t_get },
	};
	char line[256];
	unsigned k, nid, pid, pt;

	itest_init("itest_stress", 60);
	itest_spinnic_start(NULL);
	for (k = 0; k < STREAMS; k++) {
		char name[64];

		snprintf(name, sizeof(name), "%s/target", s[k].name);
		itest_client_ready(&s[k].t, s[k].tnode, s[k].name, s[k].targv,
				   &nid, &pid, &pt);
		snprintf(s[k].target, sizeof(s[k].target), "target=%u:%u", nid,
			 pid);
		snprintf(s[k].pt, sizeof(s[k].pt), "pt=%u", pt);
	}
	for (k = 0; k < STREAMS; k++) {
		const char *put[] = { "put", "len=65536", "count=200",
				      "window=32", "seed=31", "buf=malloc",
				      s[k].target, s[k].pt, NULL };
		const char *get[] = { "get", "len=200000", "seed=32",
				      s[k].target, s[k].pt, NULL };

		itest_client_start(&s[k].i, s[k].inode, s[k].name,
				   s[k].targv == t_get ? get : put);
	}
	for (k = 0; k < STREAMS; k++) {
		itest_client_expect(&s[k].i, "ok", line, sizeof(line), 30000);
		ITEST_CHECK(itest_client_wait(&s[k].i, 5000) == 0,
			    "%s: initiator failed", s[k].name);
		itest_client_expect(&s[k].t, "ok", line, sizeof(line), 30000);
		ITEST_CHECK(itest_client_wait(&s[k].t, 5000) == 0,
			    "%s: target failed", s[k].name);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
