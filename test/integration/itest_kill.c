/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Clients killed (SIGKILL) in the middle of messages: first a sender with
 * 1 MiB puts in flight, then a receiver while puts stream into it, then a
 * receiver whose messages run packet handlers.
 * spinnic must carry on: the dead clients' pids are free again (a new
 * client gets the same pid), a put between surviving clients works, and
 * spinnic stops cleanly and counts what it dropped.
 */
#include <stdio.h>
#include <time.h>

#include "harness.h"

static void
nap_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* A fresh client on @p node must get @p pid (the dead one's, now free). */
static void
expect_pid_reused(unsigned node, unsigned pid)
{
	const char *h[] = { "hold", NULL };
	struct itest_client c;
	unsigned nid, got, pt, tries;

	for (tries = 0; tries < 50; tries++) {
		itest_client_ready(&c, node, "reuse/hold", h, &nid, &got, &pt);
		itest_client_kill(&c);
		if (got == pid)
			return;
		/* the hang-up may not have been handled yet */
		nap_ms(100);
	}
	itest_fail("node %u: pid %u of the killed client never came back "
		   "(last attach got %u)", node, pid, got);
}

int
main(void)
{
	const char *hold_me[] = { "hold", "me=1", "len=1048576", "match=0x42",
				  NULL };
	const char *hold_csum[] = { "hold", "me=1", "len=1048576",
				    "match=0x42", "handler=checksum", NULL };
	struct itest_client rcv, snd;
	char target[64], pt[32], line[256];
	unsigned rnid, rpid, rpt, snid, spid, spt;
	const char *stream[] = { "stream", "len=1048576", "match=0x42", target,
				 pt, NULL };
	long long drops;
	unsigned n;

	itest_init("itest_kill", 60);
	itest_spinnic_start(NULL);

	/* 1. the sender dies with puts in flight */
	itest_client_ready(&rcv, 1, "receiver", hold_me, &rnid, &rpid, &rpt);
	snprintf(target, sizeof(target), "target=%u:%u", rnid, rpid);
	snprintf(pt, sizeof(pt), "pt=%u", rpt);
	itest_client_ready(&snd, 0, "sender", stream, &snid, &spid, &spt);
	itest_client_expect(&snd, "streaming", line, sizeof(line), 10000);
	nap_ms(30);
	itest_client_kill(&snd);
	ITEST_CHECK(itest_spinnic_alive(), "spinnic died with the sender");
	expect_pid_reused(0, spid);

	/* 2. the receiver dies while puts stream into it */
	itest_client_ready(&snd, 0, "sender2", stream, &snid, &spid, &spt);
	itest_client_expect(&snd, "streaming", line, sizeof(line), 10000);
	nap_ms(30);
	itest_client_kill(&rcv);
	nap_ms(200);
	ITEST_CHECK(itest_spinnic_alive(), "spinnic died with the receiver");
	itest_client_kill(&snd);
	expect_pid_reused(1, rpid);

	/* 3. a receiver whose messages run handlers dies mid-stream: the
	 * runtime aborts them and the detach waits for that */
	itest_client_ready(&rcv, 1, "handler receiver", hold_csum, &rnid,
			   &rpid, &rpt);
	snprintf(target, sizeof(target), "target=%u:%u", rnid, rpid);
	snprintf(pt, sizeof(pt), "pt=%u", rpt);
	itest_client_ready(&snd, 0, "sender3", stream, &snid, &spid, &spt);
	itest_client_expect(&snd, "streaming", line, sizeof(line), 10000);
	nap_ms(30);
	itest_client_kill(&rcv);
	nap_ms(200);
	ITEST_CHECK(itest_spinnic_alive(),
		    "spinnic died with the handler receiver");
	itest_client_kill(&snd);
	expect_pid_reused(1, rpid);
	expect_pid_reused(0, spid);

	/* 4. the survivors (new clients) still talk */
	{
		const char *t[] = { "target", "op=put", "len=300000",
				    "buf=region", "seed=8", NULL };
		const char *in[] = { "put", "len=300000", "buf=malloc",
				     "seed=8", NULL };
		const char *tc[] = { "target", "op=put", "len=70000",
				     "buf=region", "handler=checksum",
				     "seed=6", NULL };
		const char *ic[] = { "put", "len=70000", "seed=6", NULL };

		itest_run_pair("put after the kills", 1, t, 0, in);
		itest_run_pair("handler put after the kills", 1, tc, 0, ic);
	}

	itest_spinnic_finish();
	/* the kills hit messages in flight: dropped and counted */
	drops = 0;
	for (n = 0; n < 2; n++) {
		static const char *const names[] = {
			"detach_drops", "inflight_dropped", "read_faults",
			"out_detach_drops", "drop_host", "msgs_failed",
		};
		unsigned k;

		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			long long v = itest_counter(n, names[k]);

			if (v > 0) {
				fprintf(stderr, "itest_kill: node %u %s %lld\n",
					n, names[k], v);
				drops += v;
			}
		}
	}
	if (drops == 0)
		itest_fail("no message in flight was dropped by the kills");
	return 0;
}
