/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A lost control message ends a schedule's wait (lib/coll, issue #18's
 * af_xdp hang; doc/NOTES.md "Lost control messages"). Two ranks, each on
 * its own spinnic process linked by memif (SPINNIC_ITEST_LINK=memif, set
 * by meson), the second's spinnic started with a short --peer-timeout-ms.
 * A SPIN_SCHED_DYNAMIC schedule moves 64 KiB from rank 0 to rank 1: every
 * instance after the first opens with rank 0's RTS, a control put with no
 * acknowledgement. One instance completes; then node 1's spinnic is
 * stopped (SIGSTOP: its link goes silent) and rank 0 starts the next
 * instance. Its RTS can never arrive, so nothing will ever complete: its
 * node fails the put once the peer is silent for the peer timeout, and
 * spin_sched_wait_timeout() must return -EIO within seconds of that, not
 * wait out its 60 s limit (-ETIMEDOUT: the old behaviour). Modes (argv[1]):
 *   offload  the schedule on the NIC (triggered RTS)
 *   host     SPIN_SCHED_HOST (the host issues the RTS with PtlPut)
 * Without a link (no memif) the test skips (77).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_coll.h>

#include "coll_kid.h"
#include "harness.h"
#include "kid.h"

#define COLL_PT 7
#define LEN 65536u
#define WAIT_LIMIT_MS 60000u
#define PEER_TIMEOUT "2000"   /* ms, both nodes */

struct karg {
	unsigned rank;
	bool host;
};

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int
kid_rank(struct kid *self, void *arg)
{
	const struct karg *a = arg;
	uint8_t *buf = spin_host_alloc(LEN);
	spin_coll_comm_t *comm;
	ptl_handle_ni_t ni;
	spin_sched_t *s;
	char line[64];
	double t0;
	int rc;

	alarm(0);
	KCHECK(self, buf != NULL, "spin_host_alloc");
	if (coll_kid_comm(self, 2, COLL_PT, 0, &ni, &comm) != 0)
		return 1;
	for (unsigned i = 0; i < LEN; i++)
		buf[i] = a->rank == 0 ? (uint8_t)(i * 7 + 1) : 0;
	KCHECK(self, spin_sched_create(comm, &s) == 0, "sched_create");
	rc = a->rank == 0 ? spin_sched_send(s, buf, LEN, 1, 5) :
			    spin_sched_recv(s, buf, LEN, 0, 5);
	KCHECK(self, rc >= 0, "send/recv: %d", rc);
	rc = spin_sched_compile(s, SPIN_SCHED_DYNAMIC |
			       (a->host ? SPIN_SCHED_HOST : 0));
	KCHECK(self, rc == 0, "compile: %s", strerror(-rc));
	/* the first instance, whole */
	KCHECK(self, spin_sched_start(s) == 0, "start 1");
	rc = spin_sched_wait_timeout(s, WAIT_LIMIT_MS);
	KCHECK(self, rc == 0, "instance 1: %s", strerror(-rc));
	for (unsigned i = 0; i < LEN && a->rank == 1; i++)
		KCHECK(self, buf[i] == (uint8_t)(i * 7 + 1), "byte %u", i);
	kid_say(self, "done 1");
	if (a->rank == 1) {
		/* stays idle while its node is stopped */
		KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0,
		       "no exit line");
		_exit(0);
	}
	KCHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
		     strcmp(line, "go") == 0, "no go line");
	t0 = now_ms();
	KCHECK(self, spin_sched_start(s) == 0, "start 2");
	rc = spin_sched_wait_timeout(s, WAIT_LIMIT_MS);
	kid_say(self, "lost rc %d ms %.0f", rc, now_ms() - t0);
	KCHECK(self, kid_line(self, line, sizeof(line), 120000) == 0,
	       "no exit line");
	/* the communicator's peer is gone: no orderly free */
	_exit(0);
}

int
main(int argc, char **argv)
{
	static struct karg args[2];
	struct kid kids[2];
	char line[128];
	pid_t node1;
	double ms;
	int rc;

	if (argc < 2 || (strcmp(argv[1], "offload") != 0 &&
			 strcmp(argv[1], "host") != 0))
		return 2;
	itest_init("itest_coll_lost", 300);
	if (itest_link_nodes() != 2) {
		fprintf(stderr, "itest_coll_lost: needs SPINNIC_ITEST_LINK "
			"(two spinnic processes): skipped\n");
		return 77;
	}
	kid_line_ms = 120000;
	itest_spinnic_start((const char *const[]){ "--peer-timeout-ms",
						   PEER_TIMEOUT, NULL });
	for (unsigned i = 0; i < 2; i++) {
		args[i] = (struct karg){ .rank = i,
			.host = strcmp(argv[1], "host") == 0 };
		kid_start(&kids[i], i == 0 ? "rank0" : "rank1", i, false,
			  kid_rank, &args[i]);
	}
	coll_kids_map(kids, 2);
	kid_expect(&kids[0], "done 1", line, sizeof(line));
	kid_expect(&kids[1], "done 1", line, sizeof(line));
	node1 = itest_link_pid(1);
	ITEST_CHECK(node1 > 0 && kill(-node1, SIGSTOP) == 0,
		    "cannot stop node 1's spinnic");
	kid_tell(&kids[0], "go");
	kid_expect(&kids[0], "lost ", line, sizeof(line));
	kill(-node1, SIGCONT);
	ITEST_CHECK(sscanf(line, "lost rc %d ms %lf", &rc, &ms) == 2,
		    "rank 0 said \"%s\"", line);
	/* failed by its node after the peer timeout, seen within a slice */
	ITEST_CHECK(rc == -EIO && ms < WAIT_LIMIT_MS / 2,
		    "%s: the wait for a lost RTS returned %d (%s) after %.0f "
		    "ms, wanted -EIO well before %u ms", argv[1], rc,
		    strerror(-rc), ms, WAIT_LIMIT_MS);
	kid_tell(&kids[0], "exit");
	kid_tell(&kids[1], "exit");
	kid_end(&kids[0]);
	kid_end(&kids[1]);
	itest_spinnic_stop();
	printf("itest_coll_lost %s: a lost RTS ended the wait with -EIO after "
	       "%.0f ms\n", argv[1], ms);
	return 0;
}
