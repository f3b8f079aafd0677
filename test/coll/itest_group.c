/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/coll group offload (spin_coll.h spin_group_*, paper 003) on a real
 * spinnic --virtual P (README.md): P forked ranks, one communicator.
 *   itest_group patterns P   alltoall (pairwise with a local barrier per
 *       step, scatter-destination), 3D stencil halos (periodic grid, 6
 *       neighbours) and a ring allgather with a local barrier per step:
 *       each 100 calls (50 of one group, 50 of groups recorded again with
 *       the same signature: cache hits), every call checked byte for
 *       byte, the cache's counters checked; then a changed buffer (a miss)
 *   itest_group evict P      SPINNIC_GROUP_CACHE=2 (meson sets it): three
 *       patterns recorded again in turn: every first call misses, idle
 *       schedules are evicted, results stay right
 *   itest_group misuse P     calls before end, records after it, bad
 *       peers and tags, a receive no rank sends to, lengths that differ,
 *       flags that differ: errors on every rank, never a hang; then a
 *       good group still runs
 * SPINNIC_GROUP_HOST=1: every group SPIN_GROUP_HOST (host-progressed);
 * SPINNIC_GROUP_NOCACHE=1: every group SPIN_GROUP_NOCACHE (no hits);
 * SPINNIC_GROUP_SIMPLE=1: every group SPIN_GROUP_SIMPLE (the baseline);
 * SPINNIC_GROUP_STAGED=1: every group also SPIN_GROUP_STAGED (its sends
 * staged through NIC memory: the spinnic counters must show them).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_coll.h>

#include "coll_kid.h"
#include "harness.h"
#include "kid.h"

#undef KCHECK
#define KCHECK(self, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: fail ", (self)->name); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		kid_say(self, "fail " __VA_ARGS__); \
		return 1; \
	} \
} while (0)

#define MAXP 16
#define COLL_PT 7
#define NCALLS 100

enum mode { M_PATTERNS, M_EVICT, M_MISUSE };
enum pat { P_A2A_PAIR, P_A2A_SCATTER, P_STENCIL, P_RING, P_ECHO, NPAT };

static const char *const pat_name[NPAT] = { "alltoall-pairwise",
	"alltoall-scatter", "stencil", "ring", "stencil-echo" };

struct karg {
	enum mode mode;
	unsigned rank, P;
};

static unsigned gflags;

static void *
xalloc(size_t len)
{
	void *p = spin_host_alloc(len ? len : 1);

	if (p == NULL)
		p = malloc(len ? len : 1);
	return p;
}

static void
xfree(void *p)
{
	if (p != NULL && spin_host_contains(p, 1))
		spin_host_free(p);
	else
		free(p);
}

static uint8_t
val(unsigned pat, unsigned src, unsigned slot, uint64_t inst, size_t k)
{
	uint64_t h = (pat + 1) * 0x9e3779b97f4a7c15ull ^ (src * 0x10001ull) ^
		     (slot * 0x1000193ull) ^ (inst * 0xff51afd7ed558ccdull) ^
		     (k * 0x2545f4914f6cdd1dull);

	h ^= h >> 29;
	return (uint8_t)(h ^ (h >> 17) ^ (h >> 41));
}

/* ---- the patterns: buffers, recording, inputs, checks ------------------- */

struct pbufs {
	enum pat pat;
	unsigned P, r;
	size_t blk;               /* alltoall, ring: bytes per block */
	uint8_t *sb, *rb;         /* alltoall, ring */
	unsigned dims[3];         /* stencil */
	size_t face[3];           /* stencil: bytes per face of each axis */
	uint8_t *sf[6], *rf[6];   /* stencil: send and receive faces */
	uint8_t *ef[6];           /* stencil-echo: own faces sent back */
	unsigned nb[6];           /* stencil: the neighbour in direction d */
};

static void
grid(unsigned P, unsigned d[3])
{
	unsigned i = 0;

	d[0] = d[1] = d[2] = 1;
	/* factors of 2 in turn (P is 2, 4, 8, 16, ...); the rest on x */
	while (P % 2 == 0 && P > 1) {
		d[i % 3] *= 2;
		P /= 2;
		i++;
	}
	d[0] *= P;
}

static int
pb_init(struct pbufs *b, enum pat pat, unsigned P, unsigned r, size_t blk)
{
	memset(b, 0, sizeof(*b));
	b->pat = pat;
	b->P = P;
	b->r = r;
	b->blk = blk;
	if (pat != P_STENCIL && pat != P_ECHO) {
		b->sb = xalloc(pat == P_RING ? blk : P * blk);
		b->rb = xalloc(P * blk);
		return b->sb && b->rb ? 0 : -ENOMEM;
	}
	/* eager on x, rendezvous on y and z (4 KiB switch) */
	b->face[0] = 64;
	b->face[1] = 4000 + blk;
	b->face[2] = 6000 + blk;
	grid(P, b->dims);
	unsigned c[3] = { r % b->dims[0], (r / b->dims[0]) % b->dims[1],
			  r / (b->dims[0] * b->dims[1]) };
	for (unsigned d = 0; d < 6; d++) {
		unsigned a = d / 2, n[3] = { c[0], c[1], c[2] };

		n[a] = (c[a] + (d % 2 ? 1 : b->dims[a] - 1)) % b->dims[a];
		b->nb[d] = n[0] + b->dims[0] * (n[1] + b->dims[1] * n[2]);
		b->sf[d] = xalloc(b->face[a]);
		b->rf[d] = xalloc(b->face[a]);
		b->ef[d] = pat == P_ECHO ? xalloc(b->face[a]) : NULL;
		if (b->sf[d] == NULL || b->rf[d] == NULL ||
		    (pat == P_ECHO && b->ef[d] == NULL))
			return -ENOMEM;
	}
	return 0;
}

static void
pb_free(struct pbufs *b)
{
	xfree(b->sb);
	xfree(b->rb);
	for (unsigned d = 0; d < 6; d++) {
		xfree(b->sf[d]);
		xfree(b->rf[d]);
		xfree(b->ef[d]);
	}
}

/* record the pattern; @return 0 or the failing call's error */
static int
pb_record(const struct pbufs *b, spin_group_t *g)
{
	unsigned P = b->P, r = b->r, s, j;
	size_t blk = b->blk;
	int rc = 0;

	switch (b->pat) {
	case P_A2A_PAIR:
		/* step s: to r + s, from r - s; each step after the last */
		for (s = 0; s < P && rc == 0; s++) {
			unsigned to = (r + s) % P, from = (r + P - s) % P;

			rc = spin_group_send(g, b->sb + to * blk, blk, to, 0);
			if (rc == 0)
				rc = spin_group_recv(g, b->rb + from * blk, blk,
						     from, 0);
			if (rc == 0)
				rc = spin_group_local_barrier(g);
		}
		break;
	case P_A2A_SCATTER:
		for (j = 0; j < P && rc == 0; j++) {
			rc = spin_group_send(g, b->sb + j * blk, blk, j, 1);
			if (rc == 0)
				rc = spin_group_recv(g, b->rb + j * blk, blk, j,
						     1);
		}
		break;
	case P_STENCIL:
	case P_ECHO:
		/* face d goes to the neighbour in direction d with tag d;
		 * rf[d] comes from the one opposite (d ^ 1) with tag d */
		for (j = 0; j < 6 && rc == 0; j++) {
			rc = spin_group_send(g, b->sf[j], b->face[j / 2],
					     b->nb[j], j);
			if (rc == 0)
				rc = spin_group_recv(g, b->rf[j],
						     b->face[j / 2],
						     b->nb[j ^ 1], j);
		}
		if (b->pat != P_ECHO || rc != 0)
			break;
		/* echo: after a local barrier (12 operations on each side:
		 * the join vertex), each received face goes back to its
		 * sender (tag 6 + d), so ef[d] gets this rank's own sf[d]
		 * back from nb[d]; sent before it arrived, it would not */
		rc = spin_group_local_barrier(g);
		for (j = 0; j < 6 && rc == 0; j++) {
			rc = spin_group_send(g, b->rf[j], b->face[j / 2],
					     b->nb[j ^ 1], 6 + j);
			if (rc == 0)
				rc = spin_group_recv(g, b->ef[j],
						     b->face[j / 2],
						     b->nb[j], 6 + j);
		}
		break;
	case P_RING:
		/* allgather on a ring: step s forwards what step s - 1
		 * received, so each step waits for the last (the barrier) */
		for (s = 0; s + 1 < P && rc == 0; s++) {
			unsigned sblk = (r + P - s) % P,
				 rblk = (r + 2 * P - s - 1) % P;

			rc = spin_group_send(g, s == 0 ? b->sb :
					     b->rb + sblk * blk, blk,
					     (r + 1) % P, 2);
			if (rc == 0)
				rc = spin_group_recv(g, b->rb + rblk * blk, blk,
						     (r + P - 1) % P, 2);
			if (rc == 0)
				rc = spin_group_local_barrier(g);
		}
		break;
	default:
		rc = -EINVAL;
	}
	return rc;
}

static void
pb_input(struct pbufs *b, uint64_t inst)
{
	unsigned P = b->P, r = b->r, j, d;
	size_t k;

	switch (b->pat) {
	case P_A2A_PAIR:
	case P_A2A_SCATTER:
		for (j = 0; j < P; j++)
			for (k = 0; k < b->blk; k++)
				b->sb[j * b->blk + k] = val(b->pat, r, j, inst,
							    k);
		memset(b->rb, 0xee, P * b->blk);
		break;
	case P_STENCIL:
	case P_ECHO:
		for (d = 0; d < 6; d++) {
			for (k = 0; k < b->face[d / 2]; k++)
				b->sf[d][k] = val(b->pat, r, d, inst, k);
			memset(b->rf[d], 0xee, b->face[d / 2]);
			if (b->ef[d] != NULL)
				memset(b->ef[d], 0xee, b->face[d / 2]);
		}
		break;
	case P_RING:
		for (k = 0; k < b->blk; k++)
			b->sb[k] = val(b->pat, r, 0, inst, k);
		memset(b->rb, 0xee, P * b->blk);
		break;
	default:
		break;
	}
}

/* @return -1 right, else the first wrong byte's block * 2^32 + offset */
static int64_t
pb_check(const struct pbufs *b, uint64_t inst)
{
	unsigned P = b->P, r = b->r, j, d;
	size_t k;

	switch (b->pat) {
	case P_A2A_PAIR:
	case P_A2A_SCATTER:
		for (j = 0; j < P; j++)
			for (k = 0; k < b->blk; k++)
				if (b->rb[j * b->blk + k] !=
				    val(b->pat, j, r, inst, k))
					return ((int64_t)j << 32) | (int64_t)k;
		break;
	case P_STENCIL:
	case P_ECHO:
		for (d = 0; d < 6; d++)
			for (k = 0; k < b->face[d / 2]; k++) {
				if (b->rf[d][k] !=
				    val(b->pat, b->nb[d ^ 1], d, inst, k))
					return ((int64_t)d << 32) | (int64_t)k;
				if (b->ef[d] != NULL && b->ef[d][k] !=
				    val(b->pat, r, d, inst, k))
					return ((int64_t)(6 + d) << 32) |
					       (int64_t)k;
			}
		break;
	case P_RING:
		for (j = 0; j < P; j++)
			for (k = 0; k < b->blk; k++)
				if (b->rb[j * b->blk + k] !=
				    (j == r ? 0xee : val(b->pat, j, 0, inst, k)))
					return ((int64_t)j << 32) | (int64_t)k;
		break;
	default:
		return 0;
	}
	return -1;
}

/* one call of @p g, waited (odd instances: polled with test, a second
 * call refused meanwhile), checked */
static int
call_check(struct kid *self, spin_group_t *g, struct pbufs *b, uint64_t inst)
{
	int64_t bad;
	int rc;

	pb_input(b, inst);
	rc = spin_group_call(g);
	KCHECK(self, rc == 0, "%s: call %" PRIu64 ": %s", pat_name[b->pat],
	       inst, strerror(-rc));
	if (inst % 2 == 1) {
		bool done = false;

		KCHECK(self, spin_group_call(g) == -EBUSY,
		       "%s: call while running", pat_name[b->pat]);
		while ((rc = spin_group_test(g, &done)) == 0 && !done)
			usleep(20);
	} else {
		rc = spin_group_wait(g);
	}
	KCHECK(self, rc == 0, "%s: wait %" PRIu64 ": %s", pat_name[b->pat],
	       inst, strerror(-rc));
	bad = pb_check(b, inst);
	KCHECK(self, bad < 0, "%s: call %" PRIu64 ": block %u byte %u wrong",
	       pat_name[b->pat], inst, (unsigned)(bad >> 32),
	       (unsigned)(bad & 0xffffffff));
	return 0;
}

static int
new_group(struct kid *self, spin_coll_comm_t *comm, struct pbufs *b,
	  spin_group_t **g_p)
{
	int rc = spin_group_start_flags(comm, gflags, g_p);

	KCHECK(self, rc == 0, "group start: %s", strerror(-rc));
	rc = pb_record(b, *g_p);
	KCHECK(self, rc == 0, "%s: record: %s", pat_name[b->pat],
	       strerror(-rc));
	KCHECK(self, spin_group_end(*g_p) == 0, "end");
	return 0;
}

static size_t
pat_blk(enum pat p)
{
	/* eager, rendezvous, a stencil increment, rendezvous, (stencil) */
	static const size_t blk[NPAT] = { 100, 5000, 16, 4500, 0 };

	return blk[p];
}

static int
run_patterns(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	bool cached = !(gflags & (SPIN_GROUP_NOCACHE | SPIN_GROUP_SIMPLE));
	struct spin_group_stats s0, s1;
	unsigned p, i;

	for (p = 0; p < NPAT; p++) {
		struct pbufs b;
		spin_group_t *g;
		uint64_t inst = 0;

		KCHECK(self, pb_init(&b, p, a->P, a->rank, pat_blk(p)) == 0,
		       "alloc");
		KCHECK(self, spin_group_cache_stats(comm, &s0) == 0, "stats");
		/* one group, called NCALLS / 2 times: the first compiles */
		if (new_group(self, comm, &b, &g) != 0)
			return 1;
		for (i = 0; i < NCALLS / 2; i++)
			if (call_check(self, g, &b, inst++) != 0)
				return 1;
		spin_group_free(g);
		/* NCALLS / 2 groups recorded again, the same signature:
		 * each first call finds the cached schedule */
		for (i = 0; i < NCALLS / 2; i++) {
			if (new_group(self, comm, &b, &g) != 0 ||
			    call_check(self, g, &b, inst++) != 0)
				return 1;
			spin_group_free(g);
		}
		KCHECK(self, spin_group_cache_stats(comm, &s1) == 0, "stats");
		KCHECK(self, s1.calls - s0.calls == NCALLS, "%s: %" PRIu64
		       " calls counted", pat_name[p], s1.calls - s0.calls);
		if (cached) {
			KCHECK(self, s1.first_calls - s0.first_calls ==
			       NCALLS / 2 + 1 && s1.misses - s0.misses == 1 &&
			       s1.hits - s0.hits == NCALLS / 2,
			       "%s: %" PRIu64 " first calls, %" PRIu64
			       " misses, %" PRIu64 " hits", pat_name[p],
			       s1.first_calls - s0.first_calls,
			       s1.misses - s0.misses, s1.hits - s0.hits);
		} else {
			/* uncached: every call compiles; simple: every first
			 * call (later ones rebuild without an agreement) */
			uint64_t want = (gflags & SPIN_GROUP_SIMPLE) ?
					NCALLS / 2 + 1 : NCALLS;

			KCHECK(self, s1.hits == s0.hits && s1.misses -
			       s0.misses == want, "%s: uncached: %" PRIu64
			       " misses, %" PRIu64 " hits", pat_name[p],
			       s1.misses - s0.misses, s1.hits - s0.hits);
		}
		if (a->rank == 0)
			kid_say(self, "info %s P=%u: %u calls, cache hits "
				"%" PRIu64 ", misses %" PRIu64 ", entries %u "
				"(%u idle), triggered ops %u",
				pat_name[p], a->P, NCALLS, s1.hits - s0.hits,
				s1.misses - s0.misses, s1.entries, s1.idle,
				s1.trig_ops);
		/* a changed buffer is another signature: a miss on every
		 * rank (only rank 0's changed: the others hit locally and
		 * the agreement turns it into a miss) */
		if (p == P_A2A_SCATTER && cached) {
			uint8_t *old = b.rb, *nrb = xalloc(a->P * b.blk);

			KCHECK(self, nrb != NULL, "alloc");
			if (a->rank == 0)
				b.rb = nrb;
			if (new_group(self, comm, &b, &g) != 0 ||
			    call_check(self, g, &b, inst++) != 0)
				return 1;
			spin_group_free(g);
			KCHECK(self, spin_group_cache_stats(comm, &s0) == 0,
			       "stats");
			KCHECK(self, s0.misses == s1.misses + 1 &&
			       s0.hits == s1.hits, "changed buffer: misses "
			       "%" PRIu64 " -> %" PRIu64, s1.misses,
			       s0.misses);
			b.rb = old;
			xfree(nrb);
		}
		pb_free(&b);
	}
	return 0;
}

/* SPINNIC_GROUP_CACHE=2: three patterns in turn, recorded again each
 * round; LRU with two places evicts the one needed next */
static int
run_evict(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	struct pbufs b[3];
	struct spin_group_stats s;
	unsigned round, p;
	uint64_t inst = 0;

	bool by_trigs;

	/* SPINNIC_GROUP_CACHE=2, or SPINNIC_GROUP_CACHE_TRIGS=45 at P = 4
	 * (estimates 41, 29 and 43: one fits, no two do) */
	KCHECK(self, spin_group_cache_stats(comm, &s) == 0, "stats");
	by_trigs = s.trig_budget == 45 && a->P == 4;
	KCHECK(self, s.capacity == 2 || by_trigs, "capacity %u, budget %u: "
	       "SPINNIC_GROUP_CACHE=2 or SPINNIC_GROUP_CACHE_TRIGS=45 and "
	       "P = 4 expected", s.capacity, s.trig_budget);
	for (p = 0; p < 3; p++)
		KCHECK(self, pb_init(&b[p], p, a->P, a->rank, pat_blk(p)) == 0,
		       "alloc");
	for (round = 0; round < 5; round++)
		for (p = 0; p < 3; p++) {
			spin_group_t *g;

			if (new_group(self, comm, &b[p], &g) != 0)
				return 1;
			/* a few calls of each: the repeated ones are hits
			 * of nothing, one PtlCTInc each */
			for (unsigned i = 0; i < 3; i++)
				if (call_check(self, g, &b[p], inst++) != 0)
					return 1;
			spin_group_free(g);
			KCHECK(self, spin_group_cache_stats(comm, &s) == 0 &&
			       s.entries <= s.capacity &&
			       s.trig_ops <= s.trig_budget, "entries %u, "
			       "triggered ops %u", s.entries, s.trig_ops);
		}
	KCHECK(self, spin_group_cache_stats(comm, &s) == 0, "stats");
	KCHECK(self, s.misses == 15 && s.hits == 0 &&
	       s.evictions == (by_trigs ? 14 : 13) &&
	       s.calls == 45, "evict: misses %" PRIu64 " hits %" PRIu64
	       " evictions %" PRIu64 " calls %" PRIu64, s.misses, s.hits,
	       s.evictions, s.calls);
	/* the same pattern twice in a row: the second is a hit */
	{
		spin_group_t *g;

		if (new_group(self, comm, &b[2], &g) != 0 ||
		    call_check(self, g, &b[2], inst++) != 0)
			return 1;
		spin_group_free(g);
		KCHECK(self, spin_group_cache_stats(comm, &s) == 0 &&
		       s.hits == 1, "hit after the cycle: %" PRIu64, s.hits);
	}
	/* a group over the budget on rank 0 only: every rank refuses */
	if (by_trigs) {
		static char self_buf[2][40][8];
		spin_group_t *g;
		int rc;

		KCHECK(self, spin_group_start(comm, &g) == 0, "start");
		for (unsigned i = 0; i < 40 && a->rank == 0; i++)
			KCHECK(self, spin_group_send(g, self_buf[0][i], 8, 0,
						     7) == 0 &&
			       spin_group_recv(g, self_buf[1][i], 8, 0, 7) ==
			       0, "record");
		KCHECK(self, spin_group_end(g) == 0, "end");
		rc = spin_group_call(g);
		KCHECK(self, rc == -ENOSPC, "over the budget: call gave %d",
		       rc);
		spin_group_free(g);
		KCHECK(self, spin_group_cache_stats(comm, &s) == 0 &&
		       s.failed == 1, "failed %" PRIu64, s.failed);
	}
	if (a->rank == 0)
		kid_say(self, "info evict P=%u: capacity %u, misses %" PRIu64
			", evictions %" PRIu64 ", hits %" PRIu64 ", refused "
			"%" PRIu64 " (triggered-op budget %u)", a->P,
			s.capacity, s.misses, s.evictions, s.hits, s.failed,
			s.trig_budget);
	for (p = 0; p < 3; p++)
		pb_free(&b[p]);
	return 0;
}

/* hostile SPINNIC_GROUP_CACHE values: the default and a message */
static int
run_env(struct kid *self, spin_coll_comm_t *comm, ptl_handle_ni_t ni)
{
	static const char *const cap[] = { "junk", "0", "-3", "5",
					   "99999999999" };
	static const unsigned want[] = { 64, 64, 64, 5, 64 };
	spin_coll_comm_t *c2;
	struct spin_group_stats st;
	spin_group_t *g;
	int rc;

	(void)comm;
	for (unsigned i = 0; i < sizeof(cap) / sizeof(cap[0]); i++) {
		setenv("SPINNIC_GROUP_CACHE", cap[i], 1);
		rc = spin_coll_comm_create(ni, COLL_PT + 1, &c2);
		KCHECK(self, rc == 0, "second communicator: %s",
		       strerror(-rc));
		KCHECK(self, spin_group_start(c2, &g) == 0, "start");
		KCHECK(self, spin_group_cache_stats(c2, &st) == 0 &&
		       st.capacity == want[i], "SPINNIC_GROUP_CACHE=%s gave %u",
		       cap[i], st.capacity);
		KCHECK(self, spin_group_end(g) == 0 &&
		       spin_group_call(g) == 0 && spin_group_wait(g) == 0,
		       "empty group");
		spin_group_free(g);
		KCHECK(self, spin_group_cache_release(c2) == 0, "release");
		rc = spin_coll_comm_free(c2);
		KCHECK(self, rc == 0, "free: %s", strerror(-rc));
	}
	unsetenv("SPINNIC_GROUP_CACHE");
	return 0;
}

/* misuse: refused on every rank alike, never a hang */
static int
run_misuse(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	spin_group_t *g, *g2;
	char buf[32] = "x", big[64] = { 0 };
	bool done;
	int rc;

	KCHECK(self, spin_group_start(NULL, &g) == -EINVAL, "NULL comm");
	KCHECK(self, spin_group_start_flags(comm, 0x80, &g) == -EINVAL,
	       "flags");
	KCHECK(self, spin_group_start(comm, &g) == 0, "start");
	KCHECK(self, spin_group_send(g, buf, 8, a->P, 0) == -EINVAL, "peer P");
	KCHECK(self, spin_group_recv(g, buf, 8, 0, SPIN_COLL_TAG_MAX) ==
	       -EINVAL, "tag");
	KCHECK(self, spin_group_recv(g, NULL, 8, 0, 0) == -EINVAL, "NULL buf");
	KCHECK(self, spin_group_call(g) == -EINVAL, "call before end");
	KCHECK(self, spin_group_test(g, &done) == -EINVAL, "test before end");
	KCHECK(self, spin_group_wait(g) == -EINVAL, "wait before end");
	KCHECK(self, spin_group_end(g) == 0, "end");
	KCHECK(self, spin_group_end(g) == -EINVAL, "end twice");
	KCHECK(self, spin_group_send(g, buf, 8, 0, 0) == -EINVAL,
	       "send after end");
	KCHECK(self, spin_group_local_barrier(g) == -EINVAL,
	       "barrier after end");
	KCHECK(self, spin_group_wait(g) == 0, "wait before the first call");
	spin_group_free(g);
	spin_group_free(NULL);

	/* a receive no rank sends to: every rank refuses the call */
	KCHECK(self, spin_group_start(comm, &g) == 0, "start");
	if (a->rank == 0)
		KCHECK(self, spin_group_recv(g, buf, 8, 1, 5) == 0, "recv");
	KCHECK(self, spin_group_end(g) == 0, "end");
	rc = spin_group_call(g);
	KCHECK(self, rc == -ENOMSG, "unmatched receive: call gave %d", rc);
	KCHECK(self, spin_group_call(g) == -EINVAL, "failed group called");
	spin_group_free(g);

	/* a send of 8 bytes into a receive of 16 */
	KCHECK(self, spin_group_start(comm, &g) == 0, "start");
	if (a->rank == 0)
		KCHECK(self, spin_group_send(g, buf, 8, a->P - 1, 9) == 0,
		       "send");
	if (a->rank == a->P - 1)
		KCHECK(self, spin_group_recv(g, big, 16, 0, 9) == 0, "recv");
	KCHECK(self, spin_group_end(g) == 0, "end");
	rc = spin_group_call(g);
	KCHECK(self, rc == -ENOMSG, "length mismatch: call gave %d", rc);
	spin_group_free(g);

	/* the flags of one group differ between ranks */
	KCHECK(self, spin_group_start_flags(comm, a->rank == 0 ?
					    SPIN_GROUP_HOST : 0, &g) == 0,
	       "start");
	KCHECK(self, spin_group_end(g) == 0, "end");
	rc = spin_group_call(g);
	KCHECK(self, rc == -EINVAL, "flags differ: call gave %d", rc);
	spin_group_free(g);

	/* then a good group: a ring shift of 32 bytes, twice */
	KCHECK(self, spin_group_start(comm, &g) == 0, "start");
	memset(buf, (int)a->rank + 1, 16);
	KCHECK(self, spin_group_send(g, buf, 16, (a->rank + 1) % a->P, 3) == 0,
	       "send");
	KCHECK(self, spin_group_recv(g, big, 16, (a->rank + a->P - 1) % a->P,
				     3) == 0, "recv");
	KCHECK(self, spin_group_end(g) == 0, "end");
	for (int i = 0; i < 2; i++) {
		memset(big, 0, 16);
		rc = spin_group_call(g);
		KCHECK(self, rc == 0, "good call: %s", strerror(-rc));
		KCHECK(self, spin_group_wait(g) == 0, "good wait");
		KCHECK(self, kid_bytes_all((uint8_t *)big, 16,
			(uint8_t)((a->rank + a->P - 1) % a->P + 1)),
		       "good group: wrong data");
	}
	/* releasing the cache with a live group is refused */
	KCHECK(self, spin_group_cache_release(comm) == -EBUSY,
	       "release with a group");
	KCHECK(self, spin_coll_comm_free(comm) == -EBUSY,
	       "comm free with a cache");
	/* two groups of one signature share a schedule: not at once */
	KCHECK(self, spin_group_start(comm, &g2) == 0, "start");
	KCHECK(self, spin_group_send(g2, buf, 16, (a->rank + 1) % a->P, 3) ==
	       0 && spin_group_recv(g2, big, 16, (a->rank + a->P - 1) % a->P,
				   3) == 0 && spin_group_end(g2) == 0,
	       "record g2");
	KCHECK(self, spin_group_call(g) == 0, "call g");
	KCHECK(self, spin_group_wait(g) == 0, "wait g");
	rc = spin_group_call(g2);
	KCHECK(self, rc == 0, "g2 (a hit): %s", strerror(-rc));
	KCHECK(self, spin_group_wait(g2) == 0, "wait g2");
	spin_group_free(g2);
	spin_group_free(g);
	return 0;
}

/* ---- a rank --------------------------------------------------------------- */

static int
kid_rank(struct kid *self, void *arg)
{
	const struct karg *a = arg;
	spin_coll_comm_t *comm;
	ptl_handle_ni_t ni;
	int rc = 1;

	alarm(0);
	if (getenv("SPINNIC_GROUP_HOST") != NULL)
		gflags |= SPIN_GROUP_HOST;
	if (getenv("SPINNIC_GROUP_NOCACHE") != NULL)
		gflags |= SPIN_GROUP_NOCACHE;
	if (getenv("SPINNIC_GROUP_SIMPLE") != NULL)
		gflags = SPIN_GROUP_SIMPLE;
	if (getenv("SPINNIC_GROUP_STAGED") != NULL)
		gflags |= SPIN_GROUP_STAGED;
	if (coll_kid_comm(self, a->P, COLL_PT, 0, &ni, &comm) != 0)
		return 1;
	switch (a->mode) {
	case M_PATTERNS:
		rc = run_patterns(self, comm, a);
		break;
	case M_EVICT:
		rc = run_evict(self, comm, a);
		break;
	case M_MISUSE:
		rc = run_misuse(self, comm, a);
		if (rc == 0)
			rc = run_env(self, comm, ni);
		break;
	}
	if (rc != 0)
		return rc;
	rc = spin_group_cache_release(comm);
	KCHECK(self, rc == 0, "cache release: %s", strerror(-rc));
	rc = spin_coll_comm_free(comm);
	KCHECK(self, rc == 0, "comm_free: %s", strerror(-rc));
	PtlNIFini(ni);
	PtlFini();
	kid_say(self, "ok");
	return 0;
}

/* ---- the parent ------------------------------------------------------------ */

int
main(int argc, char **argv)
{
	static struct karg args[MAXP];
	static char names[MAXP][16];
	struct kid kids[MAXP];
	char line[256];
	enum mode mode;
	unsigned P, i;

	if (argc < 3)
		return 2;
	P = (unsigned)atoi(argv[2]);
	if (strcmp(argv[1], "patterns") == 0)
		mode = M_PATTERNS;
	else if (strcmp(argv[1], "evict") == 0)
		mode = M_EVICT;
	else if (strcmp(argv[1], "misuse") == 0)
		mode = M_MISUSE;
	else
		return 2;
	if (P < 2 || P > MAXP)
		return 2;
	itest_init("itest_group", 1500);
	kid_line_ms = 600000;
	itest_set_nodes(P);
	itest_spinnic_start((const char *const[]){ "--mbufs", "4096",
						   "--nic-mem", "4M", NULL });
	for (i = 0; i < P; i++) {
		args[i] = (struct karg){ .mode = mode, .rank = i, .P = P };
		snprintf(names[i], sizeof(names[i]), "rank%u", i);
		kid_start(&kids[i], names[i], i, false, kid_rank, &args[i]);
	}
	coll_kids_map(kids, P);
	for (i = 0; i < P; i++) {
		for (;;) {
			kid_expect(&kids[i], "", line, sizeof(line));
			if (strcmp(line, "ok") == 0)
				break;
			ITEST_CHECK(strncmp(line, "info ", 5) == 0,
				    "rank %u: %s", i, line);
			fprintf(stderr, "itest_group: %s\n", line + 5);
		}
		kid_end(&kids[i]);
	}
	itest_spinnic_finish();
	itest_expect_no_leaks();
	if (getenv("SPINNIC_GROUP_STAGED") != NULL) {
		/* the sends were staged, and every copy found room */
		long long staged = 0;

		for (i = 0; i < P; i++) {
			ITEST_CHECK(itest_counter(i, "stage_no_mem") < 0,
				    "node %u: staged sends without room", i);
			staged += itest_counter(i, "stage_puts");
		}
		ITEST_CHECK(staged > 0, "no send was staged");
		fprintf(stderr, "itest_group: %lld staged sends\n", staged);
	}
	if (getenv("SPINNIC_ITEST_FAULTS") != NULL)
		itest_expect_no_drops();
	printf("itest_group %s P=%u: ok\n", argv[1], P);
	return 0;
}
