/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic not running for four times --peer-timeout-ms (SIGSTOP: an
 * overcommitted host that does not schedule its lcore, as 16 ranks on 2
 * cores did) while node 0 has packets in flight to node 1: when it runs
 * again the peer is not given up (rel_tx.c counts the gap as a stall of
 * its own, not as the peer's silence) and every put completes, every
 * byte checked. Before, the first poll after the stop failed the puts
 * with PTL_NI_UNDELIVERABLE and took a new epoch.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int
main(void)
{
	static const char *const opts[] = {
		"--peer-timeout-ms", "500", "--rto-us", "2000", NULL };
	static const char *const targv[] = {
		"target", "len=1000000", "count=48", NULL };
	struct itest_client t, i;
	char target[64], pt[32], line[256];
	const char *iargv[] = { "put", "len=1000000", "count=48",
				"window=4", target, pt, NULL };
	unsigned nid, pid, ptn, stops;
	long long stalls, fails;
	pid_t sp;
	int st;

	itest_init("itest_stall", 120);
	itest_spinnic_start(opts);
	sp = itest_spinnic_pid();
	itest_client_ready(&t, 1, "target", targv, &nid, &pid, &ptn);
	snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
	snprintf(pt, sizeof(pt), "pt=%u", ptn);
	itest_client_start(&i, 0, "initiator", iargv);
	/* 48 MB four puts at a time: stopped twice mid-stream */
	for (stops = 0; stops < 2; stops++) {
		sleep_ms(100);
		ITEST_CHECK(kill(sp, SIGSTOP) == 0, "SIGSTOP spinnic");
		sleep_ms(2000);
		ITEST_CHECK(kill(sp, SIGCONT) == 0, "SIGCONT spinnic");
	}
	itest_client_expect(&i, "ok", line, sizeof(line), 60000);
	st = itest_client_wait(&i, 5000);
	ITEST_CHECK(st == 0, "initiator exit status %d", st);
	itest_client_expect(&t, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(&t, 5000);
	ITEST_CHECK(st == 0, "target exit status %d", st);
	itest_spinnic_finish();
	stalls = itest_counter(0, "rel_stalls");
	fails = itest_counter(0, "peer_fails");
	fprintf(stderr, "itest_stall: node 0: rel_stalls %lld, peer_fails "
		"%lld\n", stalls, fails);
	ITEST_CHECK(stalls >= 2, "node 0 counted %lld stalls, not the 2 "
		    "stops", stalls);
	ITEST_CHECK(fails <= 0, "node 0 gave a peer up (%lld)", fails);
	itest_expect_no_drops();
	return 0;
}
