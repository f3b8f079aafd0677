/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the Active Access integration tests share (itest_aa.c,
 * itest_aa_flow.c, itest_aa_paths.c): names of the page bits, a log maker,
 * a record counter, where an initiator finds its target, and the check
 * that the NIC logged exactly the records the targets expected.
 */
#ifndef ITEST_AA_H
#define ITEST_AA_H

#include <stdio.h>
#include <stdlib.h>

#include <portals4.h>
#include <spin_aa.h>

#include "harness.h"

#define MATCH 0xaa17ull
#define PG SPIN_AA_PAGE

enum { A_W = SPIN_AA_W, A_R = SPIN_AA_R, A_WL = SPIN_AA_WL,
       A_WLD = SPIN_AA_WLD, A_RL = SPIN_AA_RL, A_RLD = SPIN_AA_RLD };

/* A target's "ready NID PID PT" line, for its initiator. */
struct ini_arg {
	unsigned nid, pid, pt;
};

static inline int
aa_log_new(ptl_handle_ni_t ni, size_t size, unsigned flags,
	   unsigned notify_every, spin_handle_aalog_t *log_p)
{
	struct spin_aa_log_desc d = { .size = size, .flags = flags,
				      .notify_every = notify_every };

	return spin_aa_log_create(ni, &d, log_p);
}

/* spin_aa_log_poll callback: counts records into *(unsigned *)arg. */
static inline int
on_count(void *arg, const struct spin_aa_rec *r)
{
	(void)r;
	(*(unsigned *)arg)++;
	return 0;
}

/*
 * After itest_spinnic_finish(): exactly once at the NIC — node 1 (every
 * target's) logged @p want records, and over a lossy link faults were
 * injected.
 */
static inline void
aa_expect_logged(const char *test, unsigned long want)
{
	long long logged = itest_counter(1, "aa_records");
	long long faults = itest_counter(0, "faults") +
			   itest_counter(1, "faults");

	fprintf(stderr, "%s: %lld records logged, %lu expected; %lld faults "
		"injected\n", test, logged, want, faults);
	ITEST_CHECK(logged == (long long)want, "records logged %lld, want %lu",
		    logged, want);
	ITEST_CHECK(getenv("SPINNIC_ITEST_FAULTS") == NULL || faults > 0,
		    "no fault was injected");
}

#endif
