/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/coll on a real spinnic --virtual N (README.md): P forked ranks
 * (kid.h) on a logical NI, one communicator.
 *   itest_coll results P [MPI_REF]  every case of coll_cases.c, each
 *       instance checked byte for byte against a direct computation, the
 *       digests of the first and last instances against MPICH's
 *       (mpiexec -n P MPI_REF; skipped with a message without it)
 *   itest_coll quick P              the same cases, a tenth of the
 *       instances, no MPI (the lossy variant)
 *   itest_coll progress P           a rank that makes no library call
 *       between start and wait (it blocks on a pipe until every other
 *       rank completed) does not keep the others from completing
 *   itest_coll random P N           N seeded random schedules
 *   itest_coll order P              SPIN_SCHED_DYNAMIC re-armed, the
 *       sender always first, then the receiver always first (ranks 0, 1)
 *   itest_coll wild P               wildcard receives: the resolution
 *       rule on one schedule (P >= 4), schedules that match nothing
 * SPINNIC_COLL_HOST=1 and SPINNIC_COLL_DYNAMIC=1 add SPIN_SCHED_HOST and
 * SPIN_SCHED_DYNAMIC to every compile (spin_coll_comm_set_sched_flags).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_coll.h>

#include "coll_cases.h"
#include "coll_kid.h"
#include "harness.h"
#include "kid.h"

/* KCHECK, also on stderr: the parent reads the ranks one after the other,
 * so a later rank's reason would otherwise stay unread */
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
#define MAXCASES 256
#define COLL_PT 7
#define SLEEPER 3
#define NPROG 11          /* cases of run_progress */

enum mode { M_RESULTS, M_QUICK, M_PROGRESS, M_RANDOM, M_ORDER, M_SETUP,
	     M_WILD };

struct karg {
	enum mode mode;
	unsigned rank, P, nrand;
};

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

static unsigned
case_instances(const struct coll_case *c, enum mode m)
{
	if (m == M_QUICK)
		return c->instances / 10 > 2 ? c->instances / 10 : 2;
	/* over a port (SPINNIC_ITEST_LINK) at least 20 of every case, the
	 * 64 KiB ones included (MPICH's digests stay those of instance 0
	 * and c->instances - 1; the rest are checked directly); the 1 MiB
	 * ones keep their 3 (20 of them took af_xdp minutes) */
	if (itest_link_nodes() > 0 && c->instances < 20 &&
	    c->size <= 65536)
		return 20;
	return c->instances;
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
build(spin_coll_comm_t *comm, const struct coll_case *c, void *sb, void *rb,
      spin_sched_t **s_p)
{
	switch (c->kind) {
	case CK_BCAST:
		if (c->algo == 3)
			return spin_coll_bcast_pipelined(comm, rb, c->size,
				c->root, SPIN_COLL_BCAST_BINOMIAL, 2, 4096, s_p);
		return spin_coll_bcast(comm, rb, c->size, c->root, c->algo, 3,
				       s_p);
	case CK_BARRIER:
		return spin_coll_barrier(comm, s_p);
	case CK_ALLREDUCE:
		if (c->algo == 3)
			return spin_coll_allreduce_algo(comm, sb, rb, c->size,
				PTL_SUM, PTL_UINT8_T,
				SPIN_COLL_ALLREDUCE_REDUCE_BCAST, s_p);
		if (c->algo == 4)
			return spin_coll_allreduce_algo(comm, sb, rb,
				c->size / 8, PTL_SUM, PTL_UINT64_T,
				SPIN_COLL_ALLREDUCE_REDUCE_BCAST, s_p);
		if (c->algo == 0)
			return spin_coll_allreduce(comm, sb, rb, c->size,
						   PTL_SUM, PTL_UINT8_T, s_p);
		return spin_coll_allreduce(comm, sb, rb, c->size / 8,
					   c->algo == 1 ? PTL_SUM : PTL_MAX,
					   c->algo == 1 ? PTL_UINT64_T :
					   PTL_INT64_T, s_p);
	case CK_ALLTOALL:
		return spin_coll_alltoall(comm, sb, rb, c->size, c->algo, s_p);
	case CK_ALLGATHER:
		return spin_coll_allgather_algo(comm, sb, rb, c->size,
						c->algo, s_p);
	}
	return -EINVAL;
}

/* every case, every instance checked; digests to the parent */
static int
run_results(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	static struct coll_case cases[MAXCASES];
	unsigned n = coll_cases(a->P, cases, MAXCASES), ci;
	char name[96];

	unsigned lo = 0, hi = ~0u, nbuilt = 0;
	double t_build = 0, t_start = 0, t_run = 0, t0;
	uint64_t ninst_all = 0;

	/* SPINNIC_COLL_CASES=LO:HI runs only those (debugging) */
	if (getenv("SPINNIC_COLL_CASES") != NULL)
		(void)sscanf(getenv("SPINNIC_COLL_CASES"), "%u:%u", &lo, &hi);
	KCHECK(self, n <= MAXCASES, "too many cases");
	for (ci = 0; ci < n; ci++) {
		if (ci < lo || ci > hi)
			continue;
		const struct coll_case *c = &cases[ci];
		size_t sl = coll_send_len(c, a->P), rl = coll_recv_len(c, a->P);
		uint8_t *sb = xalloc(sl), *rb = xalloc(rl);
		uint8_t *want = malloc(rl + 1), *scr = malloc(sl + 1);
		unsigned ninst = case_instances(c, a->mode);
		spin_sched_t *s;
		uint64_t i;
		int rc;

		coll_case_name(c, name, sizeof(name));
		KCHECK(self, sb && rb && want && scr, "alloc %s", name);
		t0 = now_us();
		rc = build(comm, c, sb, rb, &s);
		t_build += now_us() - t0;
		nbuilt++;
		KCHECK(self, rc == 0, "%s: build: %s", name, strerror(-rc));
		for (i = 0; i < ninst; i++) {
			coll_input(c, ci, a->rank, i, sb, sl);
			if (c->kind == CK_BCAST && a->rank == c->root)
				memcpy(rb, sb, sl);
			else
				memset(rb, 0xee, rl);
			t0 = now_us();
			rc = spin_sched_start(s);
			t_start += now_us() - t0;
			KCHECK(self, rc == 0, "%s: start %" PRIu64 ": %s",
			       name, i, strerror(-rc));
			if (i % 2 == 1) {
				/* odd instances: poll with test, and a
				 * second start is refused meanwhile */
				bool done = false;

				KCHECK(self, spin_sched_start(s) == -EBUSY,
				       "%s: start while running", name);
				/* (not a busy loop: the NIC shares the two
				 * cores with every rank) */
				while ((rc = spin_sched_test(s, &done)) == 0 &&
				       !done)
					usleep(20);
			} else {
				rc = spin_sched_wait(s);
			}
			t_run += now_us() - t0;
			ninst_all++;
			KCHECK(self, rc == 0, "%s: wait %" PRIu64 ": %s",
			       name, i, strerror(-rc));
			coll_expect(c, ci, a->rank, a->P, i, want, scr);
			if (memcmp(rb, want, rl) != 0) {
				size_t k = 0;

				while (rb[k] == want[k])
					k++;
				KCHECK(self, 0, "%s: instance %" PRIu64
				       ": byte %zu of %zu is %#x, want %#x",
				       name, i, k, rl, rb[k], want[k]);
			}
			if (a->mode == M_RESULTS && COLL_DIGEST_INST(c, i))
				kid_say(self, "dig %u %" PRIu64 " %016" PRIx64,
					ci, i, coll_digest(rb, rl));
		}
		KCHECK(self, spin_sched_instances(s) == ninst, "instances");
		spin_sched_free(s);
		xfree(sb);
		xfree(rb);
		free(want);
		free(scr);
	}
	/* what one rank saw (wall time, shared cores: no assertion) */
	if (a->rank == 0 && nbuilt > 0 && ninst_all > 0)
		fprintf(stderr, "itest_coll: rank 0: %u schedules built "
			"(compile included) in %.0f us each; %" PRIu64
			" instances: start %.1f us, start..wait %.1f us "
			"(means)\n", nbuilt, t_build / nbuilt, ninst_all,
			t_start / (double)ninst_all,
			t_run / (double)ninst_all);
	return 0;
}

/* misuse is refused with an error, never a crash; SPINNIC_COLL_EAGER */
static int
run_api(struct kid *self, spin_coll_comm_t *comm, ptl_handle_ni_t ni,
	const struct karg *a)
{
	static const char *const eager[] = { "junk", "100", "-1", "0x10",
					     "99999999999" };
	static const size_t want[] = { 4096, 100, 4096, 16, 4096 };
	spin_coll_comm_t *c2;
	spin_sched_t *s, *s2;
	double d[4] = { 0 };
	char b[8] = { 0 };
	bool done;
	int x, y, rc;
	unsigned i;

	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	KCHECK(self, spin_sched_send(s, b, 8, a->P, 0) == -EINVAL, "rank P");
	KCHECK(self, spin_sched_recv(s, b, 8, 0, SPIN_COLL_TAG_MAX) ==
	       -EINVAL, "tag");
	KCHECK(self, spin_sched_recv(s, NULL, 8, 0, 0) == -EINVAL, "NULL");
	KCHECK(self, spin_sched_copy(s, b, b + 2, 4) == -EINVAL, "overlap");
	KCHECK(self, spin_sched_reduce(s, d, d + 2, 2, PTL_BXOR, PTL_DOUBLE)
	       == -EINVAL, "BXOR of doubles");
	KCHECK(self, spin_sched_reduce(s, d, d + 2, 2, PTL_SWAP, PTL_DOUBLE)
	       == -EINVAL, "SWAP is not a reduction");
	KCHECK(self, spin_sched_reduce(s, d, d + 2, 2, PTL_SUM,
				       (ptl_datatype_t)99) == -EINVAL, "type");
	x = spin_sched_copy(s, b, b + 4, 4);
	y = spin_sched_copy(s, b + 4, b, 4);
	KCHECK(self, x >= 0 && y >= 0, "copies");
	KCHECK(self, spin_sched_dep(s, x, x) == -EINVAL, "self edge");
	KCHECK(self, spin_sched_dep(s, x, 99) == -EINVAL, "bad id");
	KCHECK(self, spin_sched_start(s) == -EINVAL, "start uncompiled");
	KCHECK(self, spin_sched_test(s, &done) == -EINVAL, "test uncompiled");
	KCHECK(self, spin_sched_dep(s, x, y) == 0 &&
	       spin_sched_dep(s, y, x) == 0, "edges");
	/* the same cycle on every rank: refused before anything collective */
	KCHECK(self, spin_sched_compile(s, 0) == -EINVAL, "cycle compiled");
	KCHECK(self, spin_sched_compile(NULL, 0) == -EINVAL, "NULL");
	KCHECK(self, spin_coll_comm_free(comm) == -EBUSY, "free with a "
	       "schedule left");
	spin_sched_free(s);
	KCHECK(self, spin_coll_bcast(comm, b, 8, a->P, 0, 2, &s2) == -EINVAL,
	       "bcast root P");
	KCHECK(self, spin_coll_bcast(comm, b, 8, 0, SPIN_COLL_BCAST_KNOMIAL,
				     1, &s2) == -EINVAL, "radix 1");
	KCHECK(self, spin_coll_allreduce(comm, d, d, 1, PTL_BAND, PTL_FLOAT,
					 &s2) == -EINVAL, "BAND of floats");
	KCHECK(self, spin_coll_allgather_algo(comm, b, d, 4, 2, &s2) ==
	       -EINVAL, "allgather algo 2");
	/* SPINNIC_COLL_EAGER, hostile values: the default and a message */
	for (i = 0; i < sizeof(eager) / sizeof(eager[0]); i++) {
		setenv("SPINNIC_COLL_EAGER", eager[i], 1);
		rc = spin_coll_comm_create(ni, COLL_PT + 1, &c2);
		KCHECK(self, rc == 0, "second communicator %u: %s", i,
		       strerror(-rc));
		KCHECK(self, spin_coll_comm_eager_max(c2) == want[i],
		       "SPINNIC_COLL_EAGER=%s gave %zu", eager[i],
		       spin_coll_comm_eager_max(c2));
		rc = spin_coll_comm_free(c2);
		KCHECK(self, rc == 0, "free %u: %s", i, strerror(-rc));
	}
	unsetenv("SPINNIC_COLL_EAGER");
	return 0;
}

/* the sleeper starts, then makes no call until the parent says go,
 * which it says once every other rank completed */
static int
run_progress(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	static const struct coll_case cases[] = {
		{ .kind = CK_BCAST, .size = 1000, .root = SLEEPER },
		{ .kind = CK_BCAST, .size = 65536, .root = 0 },
		{ .kind = CK_ALLREDUCE, .algo = 1, .size = 8 * 100 },
		{ .kind = CK_ALLREDUCE, .algo = 1, .size = 65536 },
		{ .kind = CK_ALLTOALL, .algo = 0, .size = 100 },
		{ .kind = CK_ALLTOALL, .algo = 1, .size = 10000 },
		{ .kind = CK_ALLGATHER, .size = 5000 },
		{ .kind = CK_BARRIER },
		{ .kind = CK_ALLREDUCE, .algo = 4, .size = 8 * 1000 },
		{ .kind = CK_BCAST, .algo = 3, .size = 65536, .root = 1 },
		{ .kind = CK_ALLGATHER, .algo = 1, .size = 5000 },
	};
	_Static_assert(sizeof(cases) / sizeof(cases[0]) == NPROG,
		       "the parent counts NPROG cases");
	unsigned ci, i;
	char line[64];

	for (ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
		const struct coll_case *c = &cases[ci];
		size_t sl = coll_send_len(c, a->P), rl = coll_recv_len(c, a->P);
		uint8_t *sb = xalloc(sl), *rb = xalloc(rl);
		uint8_t *want = malloc(rl + 1), *scr = malloc(sl + 1);
		spin_sched_t *s;
		int rc;

		KCHECK(self, sb && rb && want && scr, "alloc");
		rc = build(comm, c, sb, rb, &s);
		KCHECK(self, rc == 0, "progress case %u: %s", ci,
		       strerror(-rc));
		for (i = 0; i < 5; i++) {
			coll_input(c, 100 + ci, a->rank, i, sb, sl);
			if (c->kind == CK_BCAST && a->rank == c->root)
				memcpy(rb, sb, sl);
			else
				memset(rb, 0xee, rl);
			KCHECK(self, spin_sched_start(s) == 0, "start");
			if (a->rank == SLEEPER) {
				kid_say(self, "started");
				/* no library call: the NIC runs our part */
				KCHECK(self, kid_line(self, line, sizeof(line),
						      120000) == 0 &&
				       strcmp(line, "go") == 0, "no go");
				usleep(50000);
			}
			rc = spin_sched_wait(s);
			KCHECK(self, rc == 0, "wait: %s", strerror(-rc));
			coll_expect(c, 100 + ci, a->rank, a->P, i, want, scr);
			KCHECK(self, memcmp(rb, want, rl) == 0,
			       "progress case %u instance %u: wrong data", ci,
			       i);
			kid_say(self, "done");
		}
		spin_sched_free(s);
		xfree(sb);
		xfree(rb);
		free(want);
		free(scr);
	}
	/* a failure surfaces: rank 0 sends to rank 1, which posted no
	 * receive; the put is dropped there, its acknowledgement fails and
	 * wait says so (the others' empty schedules complete). Dynamic
	 * (SPINNIC_COLL_DYNAMIC): the RTS is dropped, no RTR ever comes,
	 * and the instance cannot end: wait_timeout says so */
	bool dyn = getenv("SPINNIC_COLL_DYNAMIC") != NULL;
	int fail_rc = dyn ? -ETIMEDOUT : -EIO;
	unsigned fail_ms = dyn ? 1000 : 60000;

	{
		spin_sched_t *s;
		char b[16] = "unmatched";
		int rc;

		KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
		if (a->rank == 0)
			KCHECK(self, spin_sched_send(s, b, sizeof(b), 1, 77) >= 0,
			       "send");
		KCHECK(self, spin_sched_compile(s, 0) == 0, "compile");
		KCHECK(self, spin_sched_start(s) == 0, "start");
		rc = spin_sched_wait_timeout(s, fail_ms);
		KCHECK(self, rc == (a->rank == 0 ? fail_rc : 0),
		       "unmatched send: wait gave %d", rc);
		spin_sched_free(s);
		KCHECK(self, spin_coll_comm_sync(comm) == 0, "sync");
	}
	/* the same host-progressed (SPIN_SCHED_HOST): the failed counter
	 * ends the instance with the same error, never a wait forever */
	{
		spin_sched_t *s;
		char b[16] = "unmatched";
		int rc;

		KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
		if (a->rank == 0)
			KCHECK(self, spin_sched_send(s, b, sizeof(b), 1, 78) >= 0,
			       "send");
		KCHECK(self, spin_sched_compile(s, SPIN_SCHED_HOST) == 0,
		       "compile host");
		KCHECK(self, spin_sched_start(s) == 0, "start host");
		rc = spin_sched_wait_timeout(s, fail_ms);
		KCHECK(self, rc == (a->rank == 0 ? fail_rc : 0),
		       "unmatched send, host-progressed: wait gave %d", rc);
		spin_sched_free(s);
		KCHECK(self, spin_coll_comm_sync(comm) == 0, "sync");
	}
	return 0;
}

/* ---- random schedules --------------------------------------------------- */

enum { G_MSG, G_COPY, G_REDUCE, G_SUM };

/* gop.wild: the receive's wildcards */
#define W_TAG 1u
#define W_SRC 2u

struct gop {
	int type;
	unsigned a, b;      /* msg: src, dst; copy/reduce/sum: the rank */
	uint32_t tag;
	size_t len;
	int from;           /* earlier message whose received data is used;
			       G_SUM: the group's first message */
	bool acc;           /* msg: added into the receiver's buffer */
	int root;           /* the message whose data this carries */
	/* a group of messages to one rank, of a length no other message
	 * has, received with wildcards: every matching the model allows is
	 * correct, as all carry the same data, or (perm) a G_SUM after them
	 * adds their buffers up, which then hold them in some order */
	unsigned wild;      /* W_TAG | W_SRC */
	bool grouped, perm;
	unsigned gn;        /* G_SUM: the group's size */
};

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* the same ops on every rank: a message's sender and receiver create its
 * vertices in global order, dependencies only point forward in it, so
 * the graph cannot deadlock and the k-th (src, dst, tag) pairs up */
static unsigned
gen_ops(uint64_t seed, unsigned P, struct gop *g, unsigned max)
{
	static const size_t lens[] = { 0, 1, 100, 4095, 4097, 20000 };
	/* group lengths: base + 7 * group, none equal to another group's
	 * or to lens[] (both sides of the eager switch) */
	static const size_t glens[] = { 2, 200, 3000, 6000 };
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	unsigned n = 0, i, j, ngroups = 0;

	while (n < max) {
		unsigned r = (unsigned)(rnd(&x) % 10);
		struct gop o = { .from = -1 };

		if (r == 0 && rnd(&x) % 2 == 0 && n + 5 <= max) {
			unsigned k = 2 + (unsigned)(rnd(&x) % 3), m;
			unsigned mode = (unsigned)(rnd(&x) % 3);
			unsigned b = (unsigned)(rnd(&x) % P);
			unsigned a0 = (unsigned)(rnd(&x) % P);
			uint32_t t0 = (uint32_t)(rnd(&x) % 3);
			bool perm = rnd(&x) % 2 == 0;
			bool acc = !perm && rnd(&x) % 3 == 0;
			size_t len = glens[rnd(&x) % 4] + 7 * ngroups++;
			int first = (int)n;

			for (m = 0; m < k; m++) {
				o = (struct gop){ .type = G_MSG, .from = -1,
					.b = b, .len = len, .acc = acc,
					.grouped = true, .perm = perm,
					.root = perm ? (int)n : first };
				o.a = mode == 0 ? a0 : (unsigned)(rnd(&x) % P);
				o.tag = mode == 1 ? t0 :
					(uint32_t)(rnd(&x) % 3);
				o.wild = mode == 0 ? W_TAG :
					 mode == 1 ? W_SRC : W_TAG | W_SRC;
				/* now and then a specific receive among them */
				if (rnd(&x) % 4 == 0)
					o.wild = 0;
				g[n++] = o;
			}
			if (perm)
				g[n++] = (struct gop){ .type = G_SUM, .a = b,
					.len = len, .from = first, .gn = k,
					.root = -1 };
			continue;
		}

		if (r >= 7) {
			unsigned rank = (unsigned)(rnd(&x) % P);
			int cand = -1;

			for (j = 0; j < n; j++)
				if (g[j].type == G_MSG && g[j].b == rank &&
				    !g[j].acc && !g[j].perm && rnd(&x) % 2)
					cand = (int)j;
			if (cand >= 0) {
				o.type = r == 7 || r == 8 ? G_COPY : G_REDUCE;
				o.a = rank;
				o.from = cand;
				o.len = g[cand].len;
				o.root = g[cand].root;
				g[n++] = o;
				continue;
			}
		}
		o.type = G_MSG;
		o.a = (unsigned)(rnd(&x) % P);
		o.b = (unsigned)(rnd(&x) % P);
		o.tag = (uint32_t)(rnd(&x) % 3);
		o.len = lens[rnd(&x) % 6];
		o.root = (int)n;
		if (rnd(&x) % 5 < 2)
			for (i = 0; i < n; i++)
				/* (not a group's: its length is the
				 * group's alone) */
				if (g[i].type == G_MSG && g[i].b == o.a &&
				    !g[i].acc && !g[i].grouped &&
				    rnd(&x) % 3 == 0) {
					o.from = (int)i;
					o.len = g[i].len;
					o.root = g[i].root;
				}
		o.acc = rnd(&x) % 5 == 0;
		g[n++] = o;
	}
	return n;
}

static void
fill(void *buf, size_t len, uint64_t seed, uint64_t inst, int root)
{
	struct coll_case c = { 0 };

	coll_input(&c, 1000 + (unsigned)root, (unsigned)seed, inst, buf, len);
}

#define GMAX 40

/* A group's buffers hold its messages in some order, and G_SUM @p i
 * their sum. @return 0; 1 (a buffer holds none left); 2 (the sum) */
static int
check_sum(const struct gop *g, uint8_t *const *buf, unsigned i,
	  uint64_t seed, uint64_t inst, uint8_t *want, uint8_t *tmp)
{
	bool used[GMAX] = { false };
	unsigned m, j, k;
	size_t len = g[i].len;

	memset(want, 0, len);
	for (m = 0; m < g[i].gn; m++) {
		const uint8_t *b = buf[g[i].from + (int)m];

		for (j = 0; j < g[i].gn; j++) {
			if (used[j])
				continue;
			fill(tmp, len, seed, inst, g[g[i].from + (int)j].root);
			if (memcmp(tmp, b, len) == 0)
				break;
		}
		if (j == g[i].gn)
			return 1;
		used[j] = true;
		for (k = 0; k < len; k++)
			want[k] = (uint8_t)(want[k] + b[k]);
	}
	return memcmp(buf[i], want, len) == 0 ? 0 : 2;
}

static int
run_random(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	unsigned seed, pass;

	/* pass 0: compiled once, 5 re-armed instances; pass 1: the same
	 * graph with SPIN_SCHED_DYNAMIC (Fig. 6, no barrier at compile),
	 * 100 re-armed instances, each rank starting each after a random
	 * 0-1 ms (the first after 0-2 ms) */
	for (pass = 0; pass < 2; pass++)
	for (seed = 1; seed <= a->nrand; seed++) {
		bool dyn = pass == 1;
		struct gop g[GMAX];
		uint8_t *buf[GMAX] = { 0 }, *sbuf[GMAX] = { 0 };
		int rv[GMAX], last[2 * GMAX], nl = 0;
		unsigned n = gen_ops(seed, a->P, g, GMAX), i, k;
		unsigned ninst = dyn ? 100 : 5;
		uint64_t x = seed * 7919u + a->rank, inst;
		uint8_t *want = malloc(20000), *tmp = malloc(20000);
		spin_sched_t *s;
		int rc, id;

		KCHECK(self, want && tmp, "alloc");
		if (dyn)	/* no wildcard in a dynamic schedule (the k-th
				 * receive of a group meets the k-th send) */
			for (i = 0; i < n; i++)
				g[i].wild = 0;
		rc = spin_sched_create(comm, &s);
		KCHECK(self, rc == 0, "create");
		for (i = 0; i < n; i++) {
			struct gop *o = &g[i];
			int ids[2], nid = 0, j;

			rv[i] = -1;
			if (o->type == G_MSG && o->a == a->rank) {
				const void *from;

				if (o->from >= 0) {
					from = buf[o->from];
				} else {
					sbuf[i] = xalloc(o->len);
					from = sbuf[i];
				}
				id = o->acc ?
				     spin_sched_send_reduce(s, from, o->len,
					PTL_SUM, PTL_UINT8_T, o->b, o->tag) :
				     spin_sched_send(s, from, o->len, o->b,
						     o->tag);
				KCHECK(self, id >= 0, "send");
				if (o->from >= 0)
					KCHECK(self, spin_sched_dep(s,
						rv[o->from], id) == 0, "dep");
				ids[nid++] = id;
			}
			if (o->type == G_MSG && o->b == a->rank) {
				unsigned src = o->wild & W_SRC ?
					       SPIN_SCHED_ANY_SOURCE : o->a;
				uint32_t tag = o->wild & W_TAG ?
					       SPIN_SCHED_ANY_TAG : o->tag;

				buf[i] = xalloc(o->len);
				id = o->acc ?
				     spin_sched_recv_reduce(s, buf[i], o->len,
					PTL_SUM, PTL_UINT8_T, src, tag) :
				     spin_sched_recv(s, buf[i], o->len, src,
						     tag);
				KCHECK(self, id >= 0, "recv");
				rv[i] = id;
				ids[nid++] = id;
			}
			if (o->type == G_SUM && o->a == a->rank) {
				/* buf = the group's buffers added up */
				buf[i] = xalloc(o->len);
				id = spin_sched_copy(s, buf[i], buf[o->from],
						     o->len);
				KCHECK(self, id >= 0 && spin_sched_dep(s,
					rv[o->from], id) == 0, "sum copy");
				for (k = 1; k < o->gn; k++) {
					int prev = id;

					id = spin_sched_reduce(s, buf[i],
						buf[o->from + (int)k], o->len,
						PTL_SUM, PTL_UINT8_T);
					KCHECK(self, id >= 0 &&
					       spin_sched_dep(s, prev, id) ==
					       0 &&
					       spin_sched_dep(s,
						rv[o->from + (int)k], id) == 0,
					       "sum reduce");
				}
				rv[i] = id;
				ids[nid++] = id;
			} else if (o->type != G_MSG && o->a == a->rank) {
				buf[i] = xalloc(o->len);
				if (o->type == G_COPY)
					id = spin_sched_copy(s, buf[i],
							     buf[o->from],
							     o->len);
				else
					id = spin_sched_reduce(s, buf[i],
							       buf[o->from],
							       o->len, PTL_SUM,
							       PTL_UINT8_T);
				KCHECK(self, id >= 0, "local op %u", i);
				KCHECK(self, spin_sched_dep(s, rv[o->from],
							    id) == 0, "dep");
				rv[i] = id;
				ids[nid++] = id;
			}
			/* a few more edges from earlier vertices (none into a
			 * group: its receives may match any of its sends, so
			 * an edge from one member to another could close a
			 * cycle) */
			for (j = 0; j < nid && !o->grouped; j++) {
				if (nl > 0 && rnd(&x) % 3 == 0)
					(void)spin_sched_dep(s,
						last[rnd(&x) % (unsigned)nl],
						ids[j]);
			}
			for (j = 0; j < nid; j++)
				last[nl++] = ids[j];
		}
		rc = spin_sched_compile(s, dyn ? SPIN_SCHED_DYNAMIC : 0);
		KCHECK(self, rc == 0, "random %u: compile: %s", seed,
		       strerror(-rc));
		for (inst = 0; inst < ninst; inst++) {
			for (i = 0; i < n; i++) {
				if (sbuf[i] != NULL)
					fill(sbuf[i], g[i].len, seed, inst,
					     g[i].root);
				if (buf[i] != NULL && (g[i].type == G_REDUCE ||
						       g[i].acc))
					fill(buf[i], g[i].len, seed + 99, inst,
					     (int)i);
				else if (buf[i] != NULL)
					memset(buf[i], 0xee, g[i].len);
			}
			if (dyn)
				usleep((useconds_t)(rnd(&x) %
						    (inst == 0 ? 2000 : 1000)));
			KCHECK(self, spin_sched_start(s) == 0, "start");
			if (dyn && inst % 7 == 3)
				KCHECK(self, spin_sched_start(s) == -EBUSY,
				       "random %u: dynamic start while "
				       "running", seed);
			rc = spin_sched_wait(s);
			KCHECK(self, rc == 0, "random %u%s wait: %s", seed,
			       dyn ? " (dynamic)" : "", strerror(-rc));
			for (i = 0; i < n; i++) {
				if (buf[i] == NULL || g[i].perm)
					continue;
				if (g[i].type == G_SUM) {
					rc = check_sum(g, buf, i, seed, inst,
						       want, tmp);
					KCHECK(self, rc == 0, "random %u "
					       "instance %" PRIu64 ": group "
					       "%d: %s", seed, inst,
					       g[i].from, rc == 1 ?
					       "a buffer holds none of the "
					       "group's messages" :
					       "wrong sum");
					continue;
				}
				fill(want, g[i].len, seed, inst, g[i].root);
				if (g[i].type == G_REDUCE || g[i].acc) {
					fill(tmp, g[i].len, seed + 99, inst,
					     (int)i);
					for (k = 0; k < g[i].len; k++)
						want[k] = (uint8_t)(want[k] +
								    tmp[k]);
				}
				KCHECK(self, memcmp(buf[i], want,
						    g[i].len) == 0,
				       "random %u instance %" PRIu64
				       ": op %u (type %d, %zu bytes) wrong",
				       seed, inst, i, g[i].type, g[i].len);
			}
		}
		KCHECK(self, spin_sched_instances(s) == ninst, "instances");
		/* no barrier between dynamic schedules either: a late RTS or
		 * RTR of this one finds nothing (another schedule tag) */
		spin_sched_free(s);
		for (i = 0; i < n; i++) {
			xfree(buf[i]);
			xfree(sbuf[i]);
		}
		free(want);
		free(tmp);
	}
	return 0;
}

/* ---- dynamic schedules, one side always first ---------------------------- */

#define NORDER 200        /* instances per phase of run_order */
#define ACCLEN 10000      /* its accumulating message, bytes */
#define NCALL 20          /* run_order's schedules built per call */

static const size_t order_lens[] = { 0, 100, 20000, 65536 };
#define NM (sizeof(order_lens) / sizeof(order_lens[0]))

struct obufs {
	uint8_t *buf[NM], *cp, *self_s, *self_r, *acc;
};

/*
 * Rank 0 sends to rank 1 (0, 100, 20000 and 65536 bytes, two tags, the
 * last send after the third, rank 1 copying the second receive), adds
 * ACCLEN bytes into rank 1's (accumulating) and sends itself 300 bytes,
 * compiled with SPIN_SCHED_DYNAMIC.
 */
static int
order_build(struct kid *self, spin_coll_comm_t *comm, unsigned me,
	    const struct obufs *b, spin_sched_t **s_p)
{
	spin_sched_t *s;
	int id[NM], idc, x, y, rc;
	unsigned m;

	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	for (m = 0; m < NM; m++) {
		id[m] = me == 0 ?
			spin_sched_send(s, b->buf[m], order_lens[m], 1, m / 2) :
			spin_sched_recv(s, b->buf[m], order_lens[m], 0, m / 2);
		KCHECK(self, id[m] >= 0, "message %u", m);
	}
	if (me == 0) {
		KCHECK(self, spin_sched_dep(s, id[2], id[3]) == 0, "dep");
		x = spin_sched_send(s, b->self_s, 300, 0, 5);
		y = spin_sched_recv(s, b->self_r, 300, 0, 5);
		KCHECK(self, x >= 0 && y >= 0, "self message");
		KCHECK(self, spin_sched_send_reduce(s, b->acc, ACCLEN,
			PTL_SUM, PTL_UINT8_T, 1, 6) >= 0, "send_reduce");
	} else {
		KCHECK(self, spin_sched_recv_reduce(s, b->acc, ACCLEN,
			PTL_SUM, PTL_UINT8_T, 0, 6) >= 0, "recv_reduce");
		idc = spin_sched_copy(s, b->cp, b->buf[1], 100);
		KCHECK(self, idc >= 0 && spin_sched_dep(s, id[1], idc) == 0,
		       "copy");
	}
	rc = spin_sched_compile(s, SPIN_SCHED_DYNAMIC);
	KCHECK(self, rc == 0, "order: compile: %s", strerror(-rc));
	*s_p = s;
	return 0;
}

/*
 * order_build's schedule, re-armed. Phase 0: in every instance the
 * sender starts first (rank 1 starts only after the parent saw rank 0's
 * start, and 300 us later); phase 1: the receiver first. A fresh
 * schedule per phase, so each phase's first instance takes the other
 * branch of Fig. 6 (an RTS before its entry / the first RTR before its
 * entry) and the steady state sees C counted in both orders. Then, for
 * information, the time of an instance built per call (create, compile,
 * start, wait, free) against a re-armed one (start, wait), back to back.
 */
static int
run_order(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	unsigned phase, m, me = a->rank;
	uint8_t *want = malloc(65536), *tmp = malloc(ACCLEN);
	struct obufs b;
	char line[64];
	double t0, t_call, t_rearm;
	spin_sched_t *s;
	uint64_t inst;
	int rc;

	if (me > 1) {
		free(want);
		free(tmp);
		return 0;
	}
	for (m = 0; m < NM; m++)
		b.buf[m] = xalloc(order_lens[m]);
	b.cp = xalloc(100);
	b.self_s = xalloc(300);
	b.self_r = xalloc(300);
	b.acc = xalloc(ACCLEN);
	KCHECK(self, want && tmp && b.buf[0] && b.buf[1] && b.buf[2] &&
	       b.buf[3] && b.cp && b.self_s && b.self_r && b.acc, "alloc");
	for (phase = 0; phase < 2; phase++) {
		bool first = me == phase;

		if (order_build(self, comm, me, &b, &s) != 0)
			return 1;
		for (inst = 0; inst < NORDER; inst++) {
			for (m = 0; m < NM; m++)
				if (me == 0)
					fill(b.buf[m], order_lens[m],
					     7 + phase, inst, (int)m);
				else
					memset(b.buf[m], 0xee, order_lens[m]);
			if (me == 0) {
				fill(b.self_s, 300, 7 + phase, inst, 99);
				memset(b.self_r, 0xee, 300);
			} else {
				memset(b.cp, 0xee, 100);
			}
			/* the accumulation: rank 0's input into rank 1's */
			fill(b.acc, ACCLEN, 7 + phase, inst, 50 + (int)me);
			if (!first) {
				KCHECK(self, kid_line(self, line, sizeof(line),
						      120000) == 0 &&
				       strcmp(line, "go") == 0, "no go");
				usleep(300);
			}
			KCHECK(self, spin_sched_start(s) == 0, "start");
			if (first)
				kid_say(self, "started");
			rc = spin_sched_wait_timeout(s, 60000);
			KCHECK(self, rc == 0, "order phase %u instance %" PRIu64
			       ": wait: %s", phase, inst, strerror(-rc));
			for (m = 0; m < NM && me == 1; m++) {
				fill(want, order_lens[m], 7 + phase, inst,
				     (int)m);
				KCHECK(self, memcmp(b.buf[m], want,
						    order_lens[m]) == 0,
				       "order phase %u instance %" PRIu64
				       ": message %u wrong", phase, inst, m);
				if (m == 1)
					KCHECK(self, memcmp(b.cp, want, 100) ==
					       0, "order phase %u instance %"
					       PRIu64 ": copy wrong", phase,
					       inst);
			}
			if (me == 1) {
				fill(want, ACCLEN, 7 + phase, inst, 50);
				fill(tmp, ACCLEN, 7 + phase, inst, 51);
				for (m = 0; m < ACCLEN; m++)
					want[m] = (uint8_t)(want[m] + tmp[m]);
				KCHECK(self, memcmp(b.acc, want, ACCLEN) == 0,
				       "order phase %u instance %" PRIu64
				       ": accumulation wrong", phase, inst);
			}
			if (me == 0)
				KCHECK(self, memcmp(b.self_s, b.self_r, 300) ==
				       0, "order phase %u instance %" PRIu64
				       ": self message wrong", phase, inst);
		}
		KCHECK(self, spin_sched_instances(s) == NORDER, "instances");
		spin_sched_free(s);
	}
	/* built per call against re-armed (wall time on shared cores: no
	 * assertion; the results are not checked here) */
	t0 = now_us();
	for (inst = 0; inst < NCALL; inst++) {
		if (order_build(self, comm, me, &b, &s) != 0)
			return 1;
		KCHECK(self, spin_sched_start(s) == 0, "start");
		rc = spin_sched_wait_timeout(s, 60000);
		KCHECK(self, rc == 0, "per call: wait: %s", strerror(-rc));
		spin_sched_free(s);
	}
	t_call = (now_us() - t0) / NCALL;
	if (order_build(self, comm, me, &b, &s) != 0)
		return 1;
	t0 = now_us();
	for (inst = 0; inst < NORDER; inst++) {
		KCHECK(self, spin_sched_start(s) == 0, "start");
		rc = spin_sched_wait_timeout(s, 60000);
		KCHECK(self, rc == 0, "re-armed: wait: %s", strerror(-rc));
	}
	t_rearm = (now_us() - t0) / NORDER;
	spin_sched_free(s);
	if (me == 0)
		fprintf(stderr, "itest_coll: rank 0: dynamic schedule built "
			"per call %.0f us per instance (%d), re-armed %.0f us "
			"(%d; start..wait): ratio %.1f\n", t_call, NCALL,
			t_rearm, NORDER, t_call / t_rearm);
	for (m = 0; m < NM; m++)
		xfree(b.buf[m]);
	xfree(b.cp);
	xfree(b.self_s);
	xfree(b.self_r);
	xfree(b.acc);
	free(want);
	free(tmp);
	return 0;
}

/* ---- setup: control round trips of a compile (batched, issue #18) ------- */

/* Build a binomial bcast of 8 B from root 0 (create, compile with its
 * barrier), counting this process's control round trips; run it twice
 * (a dynamic one re-armed too), checking the bytes. @return 0, 1 said
 * why */
static int
setup_one(struct kid *self, spin_coll_comm_t *comm, const struct karg *a,
	  unsigned flags, uint64_t *rt_p)
{
	uint64_t buf, rt0;
	spin_sched_t *s;
	unsigned runs = 2;
	int rc;

	KCHECK(self, spin_coll_comm_set_sched_flags(comm, flags) == 0,
	       "set_sched_flags");
	rt0 = spin_ctrl_round_trips();
	rc = spin_coll_bcast(comm, &buf, 8, 0, SPIN_COLL_BCAST_BINOMIAL, 2,
			     &s);
	*rt_p = spin_ctrl_round_trips() - rt0;
	KCHECK(self, rc == 0, "bcast build: %s", strerror(-rc));
	for (unsigned i = 0; i < runs; i++) {
		buf = a->rank == 0 ? 0x5eed0000ull + i : 0;
		rc = spin_sched_start(s);
		if (rc == 0)
			rc = spin_sched_wait_timeout(s, 60000);
		KCHECK(self, rc == 0, "bcast run %u: %s", i, strerror(-rc));
		KCHECK(self, buf == 0x5eed0000ull + i,
		       "bcast run %u: rank %u has %#llx", i, a->rank,
		       (unsigned long long)buf);
		/* the root rewrites buf only once every rank has it */
		KCHECK(self, spin_coll_comm_sync(comm) == 0, "sync");
	}
	spin_sched_free(s);
	return spin_coll_comm_set_sched_flags(comm, 0) == 0 ? 0 : 1;
}

/*
 * A P-rank binomial bcast compile creates its objects in one batch: at
 * most 2 control round trips per rank (the barrier makes none), where
 * the unbatched compile (SPINNIC_COLL_BATCH=0) makes one per object;
 * the same for a dynamic one (its entries reserved in the batch). Each
 * schedule runs right either way.
 */
static int
run_setup(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	uint64_t batched, unbatched, dynamic;

	if (setup_one(self, comm, a, 0, &batched) != 0)
		return 1;
	setenv("SPINNIC_COLL_BATCH", "0", 1);
	if (setup_one(self, comm, a, 0, &unbatched) != 0)
		return 1;
	unsetenv("SPINNIC_COLL_BATCH");
	if (setup_one(self, comm, a, SPIN_SCHED_DYNAMIC, &dynamic) != 0)
		return 1;
	KCHECK(self, batched >= 1 && batched <= 2, "rank %u: batched "
	       "compile made %llu control round trips", a->rank,
	       (unsigned long long)batched);
	KCHECK(self, dynamic >= 1 && dynamic <= 2, "rank %u: batched "
	       "dynamic compile made %llu control round trips", a->rank,
	       (unsigned long long)dynamic);
	/* sb MD, start and done, and per vertex two CTs and its entry */
	KCHECK(self, unbatched >= 6 && unbatched > batched, "rank %u: "
	       "unbatched compile made %llu control round trips", a->rank,
	       (unsigned long long)unbatched);
	kid_say(self, "rt %llu %llu %llu", (unsigned long long)batched,
		(unsigned long long)unbatched, (unsigned long long)dynamic);
	return 0;
}

/* ---- wildcard receives -------------------------------------------------- */

/* the sends of run_wild: to rank 0, in creation order at each sender */
static const struct wsend {
	unsigned from;
	uint32_t tag;
	size_t len;
	bool acc;
} wsends[] = {
	{ 1, 5, 8, false },     /* A */
	{ 1, 6, 8, false },     /* B */
	{ 1, 5, 5000, false },  /* C (rendezvous) */
	{ 1, 5, 8, false },     /* D */
	{ 1, 7, 8, false },     /* E */
	{ 2, 5, 8, false },     /* F */
	{ 0, 9, 8, false },     /* G (to itself) */
	{ 2, 5, 8, true },      /* H (accumulating, uint8 SUM) */
	{ 3, 1, 6000, false },  /* I (rendezvous) */
	{ 1, 8, 6000, false },  /* J (rendezvous) */
};
#define NWS (sizeof(wsends) / sizeof(wsends[0]))

/* rank 0's receives, in creation order, and the send each must get:
 * the specific ones first (C, and A: the earliest (1, 5, 8)), then the
 * wildcards in creation order, each taking the earliest remaining send
 * of its length and kind, lower source first: H (the only accumulating
 * one), B (A taken), D, G (rank 0 before rank 1), F (rank 1 has no tag 5
 * of 8 bytes left), E, J, I (rank 1's J taken) */
static const struct wrecv {
	unsigned src;
	uint32_t tag;
	size_t len;
	bool acc;
	char want;
} wrecvs[] = {
	{ SPIN_SCHED_ANY_SOURCE, SPIN_SCHED_ANY_TAG, 8, true, 'H' },
	{ 1, SPIN_SCHED_ANY_TAG, 8, false, 'B' },
	{ 1, 5, 5000, false, 'C' },
	{ 1, 5, 8, false, 'A' },
	{ SPIN_SCHED_ANY_SOURCE, 5, 8, false, 'D' },
	{ SPIN_SCHED_ANY_SOURCE, SPIN_SCHED_ANY_TAG, 8, false, 'G' },
	{ SPIN_SCHED_ANY_SOURCE, 5, 8, false, 'F' },
	{ 1, SPIN_SCHED_ANY_TAG, 8, false, 'E' },
	{ 1, SPIN_SCHED_ANY_TAG, 6000, false, 'J' },
	{ SPIN_SCHED_ANY_SOURCE, SPIN_SCHED_ANY_TAG, 6000, false, 'I' },
};
#define NWR (sizeof(wrecvs) / sizeof(wrecvs[0]))

/* every rank compiles @p s: @p bad_rank's compile fails with @p err, the
 * others' with -ECANCELED (the compile barrier tells them), well within
 * the 30 s a missing peer would cost */
static int
wild_refused(struct kid *self, spin_sched_t *s, const struct karg *a,
	     unsigned bad_rank, int err, const char *what)
{
	double t0 = now_us();
	int rc = spin_sched_compile(s, 0);
	int want = a->rank == bad_rank ? err : -ECANCELED;

	KCHECK(self, rc == want, "%s: compile gave %d (%s), want %d", what,
	       rc, strerror(-rc), want);
	KCHECK(self, now_us() - t0 < 10e6, "%s: compile took %.1f s", what,
	       (now_us() - t0) / 1e6);
	spin_sched_free(s);
	return 0;
}

/* the resolution rule on one schedule, re-armed instances */
static int
wild_rule(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	uint8_t *sb[NWS] = { 0 }, *rb[NWR] = { 0 }, want[6000], ini[8];
	unsigned i, k, inst, ninst = 100;
	double t0;
	spin_sched_t *s;
	int rc;

	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	for (i = 0; i < NWS; i++) {
		const struct wsend *w = &wsends[i];

		if (w->from != a->rank)
			continue;
		sb[i] = xalloc(w->len);
		rc = w->acc ? spin_sched_send_reduce(s, sb[i], w->len, PTL_SUM,
						     PTL_UINT8_T, 0, w->tag) :
			      spin_sched_send(s, sb[i], w->len, 0, w->tag);
		KCHECK(self, rc >= 0, "send %c: %d", 'A' + i, rc);
	}
	for (i = 0; i < NWR && a->rank == 0; i++) {
		const struct wrecv *w = &wrecvs[i];

		rb[i] = xalloc(w->len);
		rc = w->acc ? spin_sched_recv_reduce(s, rb[i], w->len, PTL_SUM,
						     PTL_UINT8_T, w->src,
						     w->tag) :
			      spin_sched_recv(s, rb[i], w->len, w->src,
					      w->tag);
		KCHECK(self, rc >= 0, "recv %u: %d", i, rc);
	}
	t0 = now_us();
	rc = spin_sched_compile(s, 0);
	t0 = now_us() - t0;
	KCHECK(self, rc == 0, "wild compile: %s", strerror(-rc));
	for (inst = 0; inst < ninst; inst++) {
		for (i = 0; i < NWS; i++)
			if (sb[i] != NULL)
				fill(sb[i], wsends[i].len, 77, inst, (int)i);
		for (i = 0; i < NWR; i++)
			if (rb[i] != NULL && wrecvs[i].acc)
				fill(rb[i], wrecvs[i].len, 78, inst, (int)i);
			else if (rb[i] != NULL)
				memset(rb[i], 0xee, wrecvs[i].len);
		KCHECK(self, spin_sched_start(s) == 0, "start");
		rc = spin_sched_wait(s);
		KCHECK(self, rc == 0, "wild instance %u: wait: %s", inst,
		       strerror(-rc));
		for (i = 0; i < NWR && a->rank == 0; i++) {
			const struct wrecv *w = &wrecvs[i];

			fill(want, w->len, 77, inst, w->want - 'A');
			if (w->acc) {
				fill(ini, w->len, 78, inst, (int)i);
				for (k = 0; k < w->len; k++)
					want[k] = (uint8_t)(want[k] + ini[k]);
			}
			KCHECK(self, memcmp(rb[i], want, w->len) == 0,
			       "wild instance %u: receive %u did not get "
			       "send %c", inst, i, w->want);
		}
	}
	KCHECK(self, spin_sched_instances(s) == ninst, "instances");
	spin_sched_free(s);
	for (i = 0; i < NWS; i++)
		xfree(sb[i]);
	for (i = 0; i < NWR; i++)
		xfree(rb[i]);
	if (a->rank == 0)
		fprintf(stderr, "itest_coll: wild: %u receives resolved as the "
			"rule says, %u instances; rank 0's compile %.0f us "
			"(wall time, shared cores)\n", (unsigned)NWR, ninst,
			t0);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* compile time with and without wildcards (printed, not asserted: wall
 * time on shared cores): rank 0 sends 8 bytes to every other rank, which
 * receives it from rank 0 with tag 0, or from any rank with any tag */
static int
wild_cost(struct kid *self, spin_coll_comm_t *comm, const struct karg *a)
{
	enum { N = 21 };
	double t[2][N];
	char buf[MAXP][8], got[8];
	unsigned v, i, r;
	int rc;

	for (v = 0; v < 2; v++)
		for (i = 0; i < N; i++) {
			spin_sched_t *s;
			double t0;

			KCHECK(self, spin_coll_comm_sync(comm) == 0, "sync");
			t0 = now_us();
			KCHECK(self, spin_sched_create(comm, &s) == 0,
			       "create");
			for (r = 1; r < a->P && a->rank == 0; r++) {
				memset(buf[r], (int)r, sizeof(buf[r]));
				KCHECK(self, spin_sched_send(s, buf[r], 8, r,
							     0) >= 0, "send");
			}
			if (a->rank != 0)
				KCHECK(self, spin_sched_recv(s, got, 8,
					v ? SPIN_SCHED_ANY_SOURCE : 0,
					v ? SPIN_SCHED_ANY_TAG : 0) >= 0,
				       "recv");
			rc = spin_sched_compile(s, 0);
			t[v][i] = now_us() - t0;
			KCHECK(self, rc == 0, "cost compile: %s",
			       strerror(-rc));
			memset(got, 0, sizeof(got));
			KCHECK(self, spin_sched_start(s) == 0 &&
			       spin_sched_wait(s) == 0, "cost run");
			KCHECK(self, a->rank == 0 ||
			       kid_bytes_all((uint8_t *)got, 8,
					     (uint8_t)a->rank), "cost data");
			spin_sched_free(s);
		}
	qsort(t[0], N, sizeof(double), cmp_double);
	qsort(t[1], N, sizeof(double), cmp_double);
	if (a->rank == a->P - 1)
		fprintf(stderr, "itest_coll: wild: rank %u's build (create, "
			"compile, barrier), median of %u: %.0f us with a "
			"specific receive, %.0f us with ANY_SOURCE|ANY_TAG "
			"(wall time, shared cores)\n", a->rank, N, t[0][N / 2],
			t[1][N / 2]);
	return 0;
}

/*
 * A hostile send table: on a fresh communicator, rank 1 appends its own
 * entry with the table's match bits (type 7, its rank: coll_match.c)
 * ahead of the library's, so rank 0's reads find it: a slot listing
 * 2^20 + 1 sends, then (the next compile) one whose record is garbage.
 * Rank 0's compile gives -EPROTO, the others' -ECANCELED.
 */
static int
wild_hostile(struct kid *self, ptl_handle_ni_t ni, const struct karg *a)
{
	static uint32_t tab[4 * MAXP + 8 * 4];
	spin_coll_comm_t *c2;
	ptl_handle_me_t h = PTL_INVALID_HANDLE;
	char b[8] = { 0 };
	unsigned round;
	int rc;

	rc = spin_coll_comm_create(ni, COLL_PT + 1, &c2);
	KCHECK(self, rc == 0, "hostile comm: %s", strerror(-rc));
	if (a->rank == 1) {
		ptl_me_t me;

		memset(&me, 0, sizeof(me));
		me.start = tab;
		me.length = sizeof(tab);
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.match_id.rank = PTL_RANK_ANY;
		me.match_bits = (7ull << 61) | (1ull << 36);
		me.options = PTL_ME_OP_GET | PTL_ME_EVENT_COMM_DISABLE |
			     PTL_ME_EVENT_LINK_DISABLE |
			     PTL_ME_EVENT_UNLINK_DISABLE;
		KCHECK(self, PtlMEAppend(ni, COLL_PT + 1, &me,
					 PTL_PRIORITY_LIST, NULL, &h) == PTL_OK,
		       "hostile entry");
	}
	for (round = 0; round < 2; round++) {
		spin_sched_t *s;

		/* rank 0's slot: compile number, first record, count, the
		 * number again (^ a constant); records from 16 * P bytes */
		memset(tab, 0, sizeof(tab));
		tab[0] = round;
		tab[2] = round == 0 ? (1u << 20) + 1 : 1;
		tab[3] = round ^ 0x5e7dab1eu;
		tab[4 * a->P] = 0xdeadbeef;
		KCHECK(self, spin_coll_comm_sync(c2) == 0, "sync");
		KCHECK(self, spin_sched_create(c2, &s) == 0, "create");
		if (a->rank == 0)
			KCHECK(self, spin_sched_recv(s, b, 8,
				SPIN_SCHED_ANY_SOURCE, SPIN_SCHED_ANY_TAG) >= 0,
			       "recv");
		if (a->rank == 2)
			KCHECK(self, spin_sched_send(s, b, 8, 0, 0) >= 0,
			       "send");
		if (wild_refused(self, s, a, 0, -EPROTO, round == 0 ?
				 "a table of 2^20 + 1 sends" :
				 "a garbage record") != 0)
			return 1;
	}
	if (a->rank == 1)
		KCHECK(self, PtlMEUnlink(h) == PTL_OK, "unlink");
	rc = spin_coll_comm_free(c2);
	KCHECK(self, rc == 0, "hostile comm free: %s", strerror(-rc));
	return 0;
}

static int
run_wild(struct kid *self, spin_coll_comm_t *comm, ptl_handle_ni_t ni,
	 const struct karg *a)
{
	char b[16] = "wild";
	spin_sched_t *s;
	int rc;

	KCHECK(self, a->P >= 4, "wild needs 4 ranks");
	if (wild_rule(self, comm, a) != 0)
		return 1;
	if (wild_cost(self, comm, a) != 0)
		return 1;

	/* misuse, refused where it is built */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	KCHECK(self, spin_sched_send(s, b, 8, SPIN_SCHED_ANY_SOURCE, 0) ==
	       -EINVAL, "send to any source");
	KCHECK(self, spin_sched_send(s, b, 8, 0, SPIN_SCHED_ANY_TAG) ==
	       -EINVAL, "send with any tag");
	KCHECK(self, spin_sched_send_reduce(s, b, 8, PTL_SUM, PTL_UINT8_T,
					    SPIN_SCHED_ANY_SOURCE, 0) ==
	       -EINVAL, "send_reduce to any source");
	KCHECK(self, spin_sched_recv(s, b, 8, a->P, 0) == -EINVAL, "src P");
	KCHECK(self, spin_sched_recv(s, b, 8, 0, SPIN_SCHED_ANY_TAG - 1) ==
	       -EINVAL, "tag 2^32 - 2");
	/* Fig. 6 cannot resolve one: every rank alike (local, no barrier) */
	KCHECK(self, spin_sched_recv(s, b, 8, SPIN_SCHED_ANY_SOURCE, 0) >= 0,
	       "recv any");
	KCHECK(self, spin_sched_compile(s, SPIN_SCHED_DYNAMIC) == -ENOTSUP,
	       "dynamic wildcard");
	spin_sched_free(s);
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	KCHECK(self, spin_sched_recv(s, b, 8, 0, SPIN_SCHED_ANY_TAG) >= 0,
	       "recv any tag");
	KCHECK(self, spin_sched_compile(s, SPIN_SCHED_DYNAMIC |
					SPIN_SCHED_HOST) == -ENOTSUP,
	       "dynamic host wildcard");
	spin_sched_free(s);

	/* a receive that matches nothing: compile fails on every rank,
	 * -ENOMSG where it is */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	if (a->rank == 0)
		KCHECK(self, spin_sched_recv(s, b, 8, SPIN_SCHED_ANY_SOURCE,
					     11) >= 0, "recv");
	if (wild_refused(self, s, a, 0, -ENOMSG, "no send at all") != 0)
		return 1;
	/* the only send has another length */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	if (a->rank == 1)
		KCHECK(self, spin_sched_send(s, b, 8, 2, 4) >= 0, "send");
	if (a->rank == 2)
		KCHECK(self, spin_sched_recv(s, b, 16, 1, SPIN_SCHED_ANY_TAG) >=
		       0, "recv");
	if (wild_refused(self, s, a, 2, -ENOMSG, "length differs") != 0)
		return 1;
	/* the specific receive takes the only send, the wildcard none */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	if (a->rank == 2)
		KCHECK(self, spin_sched_send(s, b, 8, 3, 3) >= 0, "send");
	if (a->rank == 3)
		KCHECK(self, spin_sched_recv(s, b, 8, 2, SPIN_SCHED_ANY_TAG) >=
		       0 && spin_sched_recv(s, b + 8, 8, 2, 3) >= 0, "recv");
	if (wild_refused(self, s, a, 3, -ENOMSG, "taken by the specific "
			 "receive") != 0)
		return 1;
	/* a plain send, an accumulating receive: kinds differ */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	if (a->rank == 3)
		KCHECK(self, spin_sched_send(s, b, 8, 1, 3) >= 0, "send");
	if (a->rank == 1)
		KCHECK(self, spin_sched_recv_reduce(s, b, 8, PTL_SUM,
			PTL_UINT8_T, SPIN_SCHED_ANY_SOURCE,
			SPIN_SCHED_ANY_TAG) >= 0, "recv_reduce");
	if (wild_refused(self, s, a, 1, -ENOMSG, "kinds differ") != 0)
		return 1;

	/* after the failures, one that works; a second send nobody
	 * receives fails at wait as before (-EIO), the rest completes */
	KCHECK(self, spin_sched_create(comm, &s) == 0, "create");
	if (a->rank == 1) {
		memcpy(b, "first..\0second.", 16);
		KCHECK(self, spin_sched_send(s, b, 8, 0, 4) >= 0 &&
		       spin_sched_send(s, b + 8, 8, 0, 4) >= 0, "sends");
	}
	if (a->rank == 0)
		KCHECK(self, spin_sched_recv(s, b, 8, SPIN_SCHED_ANY_SOURCE,
					     SPIN_SCHED_ANY_TAG) >= 0, "recv");
	rc = spin_sched_compile(s, 0);
	KCHECK(self, rc == 0, "compile after failures: %s", strerror(-rc));
	KCHECK(self, spin_sched_start(s) == 0, "start");
	rc = spin_sched_wait_timeout(s, 60000);
	KCHECK(self, rc == (a->rank == 1 ? -EIO : 0), "one send unmatched: "
	       "wait gave %d", rc);
	if (a->rank == 0)
		KCHECK(self, memcmp(b, "first..", 8) == 0, "got %.8s", b);
	spin_sched_free(s);
	KCHECK(self, spin_coll_comm_sync(comm) == 0, "sync");
	return wild_hostile(self, ni, a);
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
	/* a 1 MiB reduction is 512 triggered atomics a step (one packet
	 * each): more than the default 1024 in all (spinnic is started with
	 * --max-triggered-ops 8192) */
	if (coll_kid_comm(self, a->P, COLL_PT, 8192, &ni, &comm) != 0)
		return 1;
	/* SPINNIC_COLL_HOST: every schedule host-progressed;
	 * SPINNIC_COLL_DYNAMIC: every schedule Fig. 6 (the same results
	 * expected) */
	if (getenv("SPINNIC_COLL_HOST") != NULL ||
	    getenv("SPINNIC_COLL_DYNAMIC") != NULL)
		KCHECK(self, spin_coll_comm_set_sched_flags(comm,
			(getenv("SPINNIC_COLL_HOST") ? SPIN_SCHED_HOST : 0) |
			(getenv("SPINNIC_COLL_DYNAMIC") ?
			 SPIN_SCHED_DYNAMIC : 0)) == 0, "set_sched_flags");
	KCHECK(self, spin_coll_comm_rank(comm) == a->rank &&
	       spin_coll_comm_size(comm) == a->P, "rank/size");
	switch (a->mode) {
	case M_RESULTS:
	case M_QUICK:
		rc = run_results(self, comm, a);
		break;
	case M_PROGRESS:
		rc = run_api(self, comm, ni, a);
		if (rc == 0)
			rc = run_progress(self, comm, a);
		break;
	case M_RANDOM:
		rc = run_random(self, comm, a);
		break;
	case M_ORDER:
		rc = run_order(self, comm, a);
		break;
	case M_SETUP:
		rc = run_setup(self, comm, a);
		break;
	case M_WILD:
		rc = run_wild(self, comm, ni, a);
		break;
	}
	if (rc != 0)
		return rc;
	rc = spin_coll_comm_free(comm);
	KCHECK(self, rc == 0, "comm_free: %s", strerror(-rc));
	/* every schedule freed: no triggered operation of this process is
	 * left on the NIC (one that fired may still be running: a while) */
	{
		uint64_t pending = 1;

		for (int t = 0; t < 5000 && pending != 0; t++) {
			KCHECK(self, spin_trig_pending(ni, &pending) == PTL_OK,
			       "spin_trig_pending");
			if (pending != 0)
				usleep(1000);
		}
		KCHECK(self, pending == 0, "%" PRIu64 " triggered operations "
		       "left on the NIC after every schedule and the "
		       "communicator were freed", pending);
	}
	PtlNIFini(ni);
	PtlFini();
	kid_say(self, "ok");
	return 0;
}

/* ---- the parent ------------------------------------------------------------ */

struct dig {
	unsigned ci, rank;
	uint64_t inst, d;
};

static struct dig digs[MAXP * MAXCASES * 2];
static unsigned ndigs;

/* mpiexec -n P ref OUT; @return 0 compared, 77 skipped */
static int
mpi_compare(const char *ref, unsigned P)
{
	char out[512], cmd[1200], line[128];
	unsigned matched = 0;
	FILE *f;
	int st;

	if (ref == NULL || access(ref, X_OK) != 0 ||
	    system("command -v mpiexec >/dev/null 2>&1") != 0) {
		fprintf(stderr, "itest_coll: MPI reference skipped: %s\n",
			ref == NULL ? "not built (no MPI found by meson)" :
			"mpiexec or the reference program is missing");
		return 77;
	}
	snprintf(out, sizeof(out), "%s/mpi_ref.txt", itest_dir());
	snprintf(cmd, sizeof(cmd),
		 "timeout 300 mpiexec -n %u %s %s </dev/null >%s/mpi.log 2>&1",
		 P, ref, out, itest_dir());
	st = system(cmd);
	if (st != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/mpi.log >&2", itest_dir());
		(void)!system(cmd);
		itest_fail("mpiexec -n %u: status %d", P, st);
	}
	f = fopen(out, "r");
	ITEST_CHECK(f != NULL, "%s: %s", out, strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned ci, rank, k;
		unsigned long long inst, d;

		ITEST_CHECK(sscanf(line, "%u %llu %u %llx", &ci, &inst, &rank,
				   &d) == 4, "mpi output: %s", line);
		for (k = 0; k < ndigs; k++)
			if (digs[k].ci == ci && digs[k].inst == inst &&
			    digs[k].rank == rank)
				break;
		ITEST_CHECK(k < ndigs, "case %u instance %llu rank %u: no "
			    "spinnic result", ci, inst, rank);
		ITEST_CHECK(digs[k].d == d, "case %u instance %llu rank %u: "
			    "digest %016llx, MPICH %016llx", ci, inst, rank,
			    (unsigned long long)digs[k].d, d);
		matched++;
	}
	fclose(f);
	ITEST_CHECK(matched == ndigs, "MPICH gave %u results, spinnic %u",
		    matched, ndigs);
	fprintf(stderr, "itest_coll: %u results identical to MPICH's "
		"(mpiexec -n %u)\n", matched, P);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct karg args[MAXP];
	struct kid kids[MAXP];
	char line[256];
	static char names[MAXP][16];
	enum mode mode;
	unsigned P, nodes, i, n = 0, inst;

	if (argc < 3)
		return 2;
	P = (unsigned)atoi(argv[2]);
	if (strcmp(argv[1], "results") == 0)
		mode = M_RESULTS;
	else if (strcmp(argv[1], "quick") == 0)
		mode = M_QUICK;
	else if (strcmp(argv[1], "progress") == 0)
		mode = M_PROGRESS;
	else if (strcmp(argv[1], "random") == 0)
		mode = M_RANDOM;
	else if (strcmp(argv[1], "order") == 0)
		mode = M_ORDER;
	else if (strcmp(argv[1], "setup") == 0)
		mode = M_SETUP;
	else if (strcmp(argv[1], "wild") == 0)
		mode = M_WILD;
	else
		return 2;
	if (mode == M_ORDER && atoi(argv[2]) < 2)
		return 2;
	if (P < 1 || P > MAXP)
		return 2;
	itest_init("itest_coll", 1500);
	kid_line_ms = 600000;
	nodes = P;
	if (getenv("SPINNIC_COLL_NODES") != NULL)
		nodes = (unsigned)atoi(getenv("SPINNIC_COLL_NODES"));
	if (nodes < 1 || nodes > P)
		nodes = P;
	/* SPINNIC_ITEST_LINK: two spinnic processes linked by a port, the
	 * ranks alternating between them (nid 0, nid 1) */
	if (itest_link_nodes() > 0)
		nodes = itest_link_nodes();
	itest_set_nodes(nodes);
	/* no handlers: little NIC memory and smaller pools, so 16 nodes fit
	 * in the 512 MiB of ordinary pages spinnic takes when other tests
	 * hold the hugepages (the default pools need 34 MiB a node) */
	itest_spinnic_start((const char *const[]){ "--mbufs", "4096",
						   "--nic-mem", "4M",
						   "--max-triggered-ops", "8192",
						   NULL });
	for (i = 0; i < P; i++) {
		args[i] = (struct karg){ .mode = mode, .rank = i, .P = P,
			.nrand = argc > 3 ? (unsigned)atoi(argv[3]) : 20 };
		/* kid_start keeps the name: one that lives as long */
		snprintf(names[i], sizeof(names[i]), "rank%u", i);
		kid_start(&kids[i], names[i], i % nodes, false, kid_rank,
			  &args[i]);
	}
	coll_kids_map(kids, P);
	if (mode == M_PROGRESS) {
		for (n = 0; n < NPROG; n++)
			for (inst = 0; inst < 5; inst++) {
				kid_expect(&kids[SLEEPER], "started", line,
					   sizeof(line));
				/* every other rank completes while the
				 * sleeper's host does nothing */
				for (i = 0; i < P; i++)
					if (i != SLEEPER)
						kid_expect(&kids[i], "done",
							   line, sizeof(line));
				kid_tell(&kids[SLEEPER], "go");
				kid_expect(&kids[SLEEPER], "done", line,
					   sizeof(line));
			}
		fprintf(stderr, "itest_coll: %u instances completed on %u "
			"ranks while rank %u's host made no call\n",
			NPROG * 5, P - 1, SLEEPER);
	}
	if (mode == M_ORDER) {
		/* phase 0: rank 0 (the sender) starts each instance
		 * first, phase 1 rank 1 (the receiver) */
		for (n = 0; n < 2; n++)
			for (inst = 0; inst < NORDER; inst++) {
				kid_expect(&kids[n], "started", line,
					   sizeof(line));
				kid_tell(&kids[1 - n], "go");
			}
	}
	for (i = 0; i < P; i++) {
		for (;;) {
			unsigned ci;
			unsigned long long in, d;

			kid_expect(&kids[i], "", line, sizeof(line));
			if (strcmp(line, "ok") == 0)
				break;
			if (strncmp(line, "rt ", 3) == 0) {
				fprintf(stderr, "itest_coll: rank %u: control "
					"round trips of a binomial bcast "
					"compile (batched, unbatched, "
					"dynamic batched): %s\n", i, line + 3);
				continue;
			}
			ITEST_CHECK(sscanf(line, "dig %u %llu %llx", &ci, &in,
					   &d) == 3, "rank %u: %s", i, line);
			ITEST_CHECK(ndigs < sizeof(digs) / sizeof(digs[0]),
				    "too many digests");
			digs[ndigs++] = (struct dig){ .ci = ci, .rank = i,
						      .inst = in, .d = d };
		}
		kid_end(&kids[i]);
	}
	itest_spinnic_finish();
	itest_expect_no_leaks();
	/* what took which branch (a first-instance RTS or RTR before its
	 * entry, a surplus RTR: dropped for no match); information only */
	if (mode == M_ORDER)
		fprintf(stderr, "itest_coll: %u instances with the sender "
			"first, %u with the receiver first; drop_no_match: "
			"node 0 %lld, node %u %lld\n", NORDER, NORDER,
			itest_counter(0, "drop_no_match"), 1 % nodes,
			itest_counter(1 % nodes, "drop_no_match"));
	/* over a port: frames crossed the wire both ways, and each node's
	 * frames to itself (ranks sharing it, self-puts) came back through
	 * its loopback, not the wire (spinnic's node->loop) */
	if (itest_link_nodes() > 0) {
		for (i = 0; i < 2; i++) {
			/* rx pkts counts both (the loopback ring fills the
			 * port's bursts); a port's own opackets is 0 on
			 * memif */
			long long lb = itest_counter(i, "loopback");
			long long rx = itest_counter(i, "pkts");

			ITEST_CHECK(lb > 0, "nid %u: no frame looped back to "
				    "itself (%lld)", i, lb);
			ITEST_CHECK(rx - lb > 0, "nid %u: no frame from the "
				    "wire (%lld received, %lld looped back)", i,
				    rx, lb);
			fprintf(stderr, "itest_coll: nid %u: %lld frames from "
				"the wire, %lld looped back to itself\n", i,
				rx - lb, lb);
		}
	}
	/* under injected faults: says how much was lost and resent (a clean
	 * run may drop the host barrier's first puts to a peer that has not
	 * posted its entry yet: they are re-sent, see spin_coll_comm_sync) */
	if (getenv("SPINNIC_ITEST_FAULTS") != NULL)
		itest_expect_no_drops();
	if (mode == M_RESULTS && getenv("SPINNIC_COLL_CASES") == NULL)
		(void)mpi_compare(argc > 3 ? argv[3] : NULL, P);
	printf("itest_coll %s P=%u: ok\n", argv[1], P);
	return 0;
}
