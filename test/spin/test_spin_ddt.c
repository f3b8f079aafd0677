/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handlers/ datatype families against the typemap reference of
 * test/ddt/ddt_gen.h: random nested types (depth <= 4, up to 256 KiB),
 * every strategy (ddt_vector and ddt_iblock where the type classifies,
 * ddt_general HPU-local, RO-CP and RW-CP at several Δr), packets of 2 KiB
 * in shuffled order through spin_rt with the scheduling the args builder
 * plans, the window compared byte for byte with ddt_ref_unpack() and
 * ddt_unpack(), guards untouched.
 *
 * spin_msg_packet() takes every byte range exactly once (duplicates are
 * the inbound engine's to drop), so duplicates cannot reach a handler
 * within one message. What a duplicate does to handler state (a packet
 * behind a segment that already went past it) is exercised instead by
 * sending each message twice over the same context in a new order: the
 * working copies and HPU-local segments are then ahead of the packets,
 * and the statistics prove the resets from the master copies happened.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "spin_test.h"
#include "spin_handler_args.h"
#include "spin_ddt_args.h"
#include "ddt_gen.h"

#define PP 2048u                /* payload bytes per packet */
#define NHPU 2u

static struct spin_msg_result res;
static uint32_t ndone;

static void
msg_done(void *app_msg, const struct spin_msg_result *r)
{
	res = *r;
	__atomic_fetch_add(&ndone, 1, __ATOMIC_RELEASE);
}

static const struct spin_host_ops ops = {
	.direct = test_direct,
	.dma_write = test_dma_write,
	.dma_read = test_dma_read,
	.msg_done = msg_done,
	.pkt_release = test_pkt_release,
};

/* the runtimes' handler_time_every: 0 (every call timed, each packet
 * alone through payload) or, for the tests run a second time, 4 (most
 * packets polled together go through payload_burst) */
static unsigned rt_every;

static struct spin_rt *
rt_new(void)
{
	struct spin_rt_conf c = {
		.nic_mem = 64 << 20, .nhpu = NHPU, .ops = &ops,
		.families = spin_handler_families,
		.handler_time_every = rt_every,
	};
	struct spin_rt *rt = spin_rt_create(&c);

	assert_non_null(rt);
	return rt;
}

/* destroy @p rt; with bursts asked for, they happened */
static void
rt_done(struct spin_rt *rt)
{
	uint64_t bursts = 0;

	for (unsigned h = 0; h < NHPU; h++) {
		struct spin_hpu_stats hs;

		assert_int_equal(spin_hpu_stats(rt, h, &hs), 0);
		bursts += hs.bursts;
	}
	if (rt_every == 0)
		assert_int_equal(bursts, 0);
	else
		assert_true(bursts > 0);
	spin_rt_destroy(rt);
}

static int
bursts_on(void **state)
{
	RTE_SET_USED(state);
	rt_every = 4;
	return 0;
}

static int
bursts_off(void **state)
{
	RTE_SET_USED(state);
	rt_every = 0;
	return 0;
}

/* one message layout: type, packed stream, reference window */
struct tcase {
	struct ddt_type *t;
	int64_t count;
	uint64_t total;           /* packed bytes */
	int64_t lo;               /* lowest byte touched (window offset 0) */
	uint64_t span;            /* window bytes the type touches */
	uint8_t *packed;
	uint8_t *ref;             /* span bytes */
};

static int
tcase_make(struct tcase *c, struct ddt_type *t, int64_t count, unsigned *seed)
{
	struct ddt_iov *map = NULL;
	int64_t n, hi, i;
	uint8_t *chk;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->count = count;
	assert_int_equal(ddt_commit(t), 0);
	c->total = (uint64_t)(ddt_size(t) * count);
	n = ddt_ref_typemap(t, count, &map);
	assert_true(n >= 0);
	ddt_ref_span(map, n, &c->lo, &hi);
	c->span = (uint64_t)(hi - c->lo);
	if (c->span > (16u << 20)) {
		free(map);
		return -1;
	}
	c->packed = malloc(c->total + 1);
	c->ref = calloc(1, c->span + 1);
	chk = calloc(1, c->span + 1);
	assert_non_null(c->packed);
	assert_non_null(c->ref);
	assert_non_null(chk);
	for (i = 0; i < (int64_t)c->total; i++)
		c->packed[i] = (uint8_t)(rand_r(seed) | 1); /* never 0 */
	ddt_ref_unpack(map, n, c->packed, c->ref - c->lo);
	assert_int_equal(ddt_unpack(t, count, c->packed, chk - c->lo), 0);
	assert_memory_equal(chk, c->ref, c->span);
	free(chk);
	free(map);
	return 0;
}

static void
tcase_free(struct tcase *c)
{
	free(c->packed);
	free(c->ref);
	ddt_free(c->t);
}

/* ---- one context, several messages ---------------------------------------- */

struct run {
	const char *family;
	const void *args;
	uint32_t args_len;
	struct spin_ddt_sched sc;
	int stats;                /* args carry stats_off = span */
	int threads;              /* poll from NHPU threads */
	int nmsg;
	int in_order;             /* deliver in order, not shuffled */
};

struct poller {
	struct spin_rt *rt;
	unsigned hpu;
	volatile int *stop;
};

static void *
poller_main(void *arg)
{
	struct poller *p = arg;

	while (!*p->stop)
		if (spin_hpu_poll(p->rt, p->hpu, 8) == 0)
			sched_yield();
	return NULL;
}

static void
poll_done(struct spin_rt *rt)
{
	unsigned i = 0;

	while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == 0) {
		spin_hpu_poll(rt, i % NHPU, 8);
		assert_true(++i < 100000000);
	}
}

/* deliver every packet once, shuffled; the HPUs are polled by threads
 * (threads) or between packets on this one */
static void
deliver(struct spin_rt *rt, struct spin_msg *m, const struct tcase *c,
	unsigned *seed, int threads, int in_order)
{
	uint32_t npkt = (uint32_t)((c->total + PP - 1) / PP), i;
	uint32_t *order;

	if (npkt == 0)
		npkt = 1; /* an empty message takes one empty packet */
	order = malloc(sizeof(*order) * npkt);
	assert_non_null(order);
	for (i = 0; i < npkt; i++)
		order[i] = i;
	if (!in_order)
		test_shuffle(order, npkt, seed);
	for (i = 0; i < npkt; i++) {
		uint64_t off = (uint64_t)order[i] * PP;
		uint32_t len = (uint32_t)RTE_MIN((uint64_t)PP, c->total - off);
		struct test_pkt *p = test_pkt_new(c->packed + off, len);
		int rc;

		while ((rc = spin_msg_packet(m, p->data, len, off, p)) ==
		       -ENOBUFS) {
			if (threads)
				sched_yield();
			else
				spin_hpu_poll(rt, i % NHPU, 16);
		}
		assert_int_equal(rc, 0);
		if (!threads && !in_order && rand_r(seed) % 3 == 0)
			spin_hpu_poll(rt, rand_r(seed) % NHPU, 4);
	}
	free(order);
}

static void
run_ctx(struct spin_rt *rt, const struct tcase *c, const struct run *r,
	unsigned *seed, struct spin_ddt_stats *stats_p)
{
	struct spin_ctx_conf cc = {
		.family = r->family, .args = r->args, .args_len = r->args_len,
		.policy = r->sc.blocked_rr ? SPINNIC_SCHED_BLOCKED_RR :
			SPINNIC_SCHED_DEFAULT,
		.delta_p = r->sc.delta_p, .nvhpu = r->sc.nvhpu,
	};
	uint64_t win = c->span + (r->stats ? sizeof(*stats_p) : 0);
	volatile int stop = 0;
	struct poller p[NHPU];
	pthread_t th[NHPU];
	uint32_t ctx;
	unsigned i;
	int k;

	assert_int_equal(spin_rt_ctx_create(rt, 1, &cc, &ctx), 0);
	if (r->threads)
		for (i = 0; i < NHPU; i++) {
			p[i] = (struct poller){ rt, i, &stop };
			assert_int_equal(pthread_create(&th[i], NULL,
							poller_main, &p[i]), 0);
		}
	for (k = 0; k < r->nmsg; k++) {
		struct spin_msg_info info = {
			.length = c->total, .pkt_payload = PP,
		};
		struct test_host host;
		struct spin_msg *m;

		test_host_init(&host, win, k & 1);
		ndone = 0;
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, win,
				   (void *)0);
		assert_non_null(m);
		deliver(rt, m, c, seed, r->threads, r->in_order);
		if (r->threads)
			while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == 0)
				sched_yield();
		else
			poll_done(rt);
		if (res.status != SPIN_SUCCESS)
			fprintf(stderr, "%s: status %d errors %u rejects %u\n",
				r->family, res.status, res.handler_errors,
				res.dma_rejects);
		assert_int_equal(res.status, SPIN_SUCCESS);
		assert_int_equal(res.dma_events, 1);
		assert_int_equal(res.dma_bytes, c->total +
				 (r->stats ? sizeof(*stats_p) : 0));
		if (memcmp(test_host_win(&host), c->ref, c->span) != 0) {
			char e[256];

			ddt_print(c->t, e, sizeof(e));
			fprintf(stderr, "%s: %s count %" PRId64 " differs\n",
				r->family, e, c->count);
		}
		assert_memory_equal(test_host_win(&host), c->ref, c->span);
		if (r->stats)
			memcpy(stats_p, test_host_win(&host) + c->span,
			       sizeof(*stats_p));
		test_host_fini(&host);
	}
	if (r->threads) {
		stop = 1;
		for (i = 0; i < NHPU; i++)
			pthread_join(th[i], NULL);
	}
	assert_int_equal(test_pkts_live, 0);
	assert_int_equal(spin_rt_ctx_free(rt, 1, ctx), 0);
}

/* ---- strategies ------------------------------------------------------------ */

static unsigned n_vec, n_iblock, n_general;

static void
run_specialized(struct spin_rt *rt, const struct tcase *c, unsigned *seed)
{
	struct spin_vec_args va;
	struct run r = { .nmsg = 1 };
	ssize_t need;

	if (c->total == 0)
		return;
	if (spin_ddt_vec_args(c->t, c->count, -c->lo, &va) == 0) {
		r.family = "ddt_vector";
		r.args = &va;
		r.args_len = sizeof(va);
		run_ctx(rt, c, &r, seed, NULL);
		n_vec++;
	}
	need = spin_ddt_iblock_args(c->t, c->count, -c->lo, NULL, 0);
	if (need > 0) {
		void *buf = malloc((size_t)need);

		assert_non_null(buf);
		assert_int_equal(spin_ddt_iblock_args(c->t, c->count, -c->lo,
						      buf, (size_t)need), need);
		r.family = "ddt_iblock";
		r.args = buf;
		r.args_len = (uint32_t)need;
		run_ctx(rt, c, &r, seed, NULL);
		free(buf);
		n_iblock++;
	}
}

/* threads: 1 poll from NHPU threads; 2 also install the default policy
 * instead of the planned one (slots then contend: private copies) */
static void
run_general(struct spin_rt *rt, const struct tcase *c, uint32_t strategy,
	    int64_t interval, uint32_t flags, int threads, unsigned *seed)
{
	struct spin_ddt_plan plan = {
		/* threads 2: one HPU-local segment for both HPUs */
		.strategy = strategy, .flags = flags,
		.nhpu = threads == 2 ? 1 : NHPU,
		.pkt_payload = PP, .interval = interval, .origin = -c->lo,
		.stats_off = c->span,
	};
	struct run r = {
		.family = "ddt_general", .stats = 1, .threads = threads,
		.nmsg = 2,
	};
	struct spin_ddt_stats st;
	uint64_t npkt = c->total == 0 ? 1 : (c->total + PP - 1) / PP;
	ssize_t need;
	void *buf;

	need = spin_ddt_general_args(c->t, c->count, &plan, NULL, 0, &r.sc);
	assert_true(need > 0);
	buf = aligned_alloc(8, ((size_t)need + 7) & ~(size_t)7);
	assert_non_null(buf);
	assert_int_equal(spin_ddt_general_args(c->t, c->count, &plan, buf,
					       (size_t)need, &r.sc), need);
	r.args = buf;
	r.args_len = (uint32_t)need;
	if (threads == 2)
		r.sc.blocked_rr = 0;
	run_ctx(rt, c, &r, seed, &st);
	free(buf);
	n_general++;

	assert_int_equal(st.pkts, 2 * npkt);
	if (threads == 2) {
		printf("  %s default policy: %" PRIu64 " of %" PRIu64
		       " packets found their slot taken\n",
		       strategy == SPIN_DDT_RW_CP ? "rw-cp" : "hpu-local",
		       st.busy, st.pkts);
		return;
	}
	/* under the planned blocked-RR no slot is ever found taken */
	if (strategy != SPIN_DDT_RO_CP)
		assert_int_equal(st.busy, 0);
	switch (strategy) {
	case SPIN_DDT_RO_CP:
		assert_int_equal(st.ckpt_copies, 2 * npkt);
		assert_int_equal(st.master_restores, 0);
		break;
	case SPIN_DDT_RW_CP:
		/* message 2 finds every used working copy past its start */
		if (c->total > 0)
			assert_true(st.master_restores >= 1);
		assert_int_equal(st.resets, 0);
		break;
	default:
		/* message 2 starts behind the segments message 1 left */
		if (npkt > NHPU)
			assert_true(st.resets >= 1);
		assert_int_equal(st.ckpt_copies, 0);
		break;
	}
}

static void
run_all(struct spin_rt *rt, const struct tcase *c, unsigned *seed)
{
	static const int64_t ro[] = { PP, 3000, 4 * PP };
	static const int64_t rw[] = { PP, 3 * PP, 8 * PP };
	unsigned i;

	run_specialized(rt, c, seed);
	run_general(rt, c, SPIN_DDT_HPU_LOCAL, 0, 0, 0, seed);
	run_general(rt, c, SPIN_DDT_HPU_LOCAL, 0, SPIN_DDT_F_WALK, 0, seed);
	for (i = 0; i < 3; i++) {
		run_general(rt, c, SPIN_DDT_RO_CP, ro[i], 0, 0, seed);
		run_general(rt, c, SPIN_DDT_RW_CP, rw[i], 0, 0, seed);
	}
	run_general(rt, c, SPIN_DDT_RW_CP, 2 * PP, SPIN_DDT_F_WALK, 0, seed);
}

static void
test_random_types(void **state)
{
	struct spin_rt *rt = rt_new();
	uint64_t gseed = 0x5eed0001;
	unsigned seed = 77, ntypes = 0, tries, maxpk = 0, deep = 0;
	uint64_t bytes = 0;

	for (tries = 0; ntypes < 100 && tries < 1000; tries++) {
		struct ddt_type *t = ddt_gen_random(&gseed, 4, 256 << 10);
		struct tcase c;
		int64_t count, size;

		if (t == NULL)
			continue;
		/* messages of 1 KiB to 512 KiB, most over many packets */
		size = ddt_size(t);
		count = size == 0 ? 1 + rand_r(&seed) % 3 :
			((int64_t)1 << (10 + rand_r(&seed) % 10)) / size;
		if (count < 1)
			count = 1;
		if (tcase_make(&c, t, count, &seed) != 0) {
			ddt_free(t);
			continue;
		}
		run_all(rt, &c, &seed);
		bytes += c.total;
		maxpk = RTE_MAX(maxpk, (unsigned)((c.total + PP - 1) / PP));
		deep += ddt_depth(t) >= 4;
		tcase_free(&c);
		ntypes++;
	}
	printf("  %u random types (%u of depth >= 4), %" PRIu64 " packed bytes,"
	       " up to %u packets; vector %u, iblock %u, general %u runs\n",
	       ntypes, deep, bytes, maxpk, n_vec, n_iblock, n_general);
	assert_int_equal(ntypes, 100);
	rt_done(rt);
}

/* layouts the specialized handlers must take, blocks straddling packets */
static void
test_specialized_types(void **state)
{
	static const char *const exprs[] = {
		"vector(300,3,7)[int32]",
		"hvector(200,5,-40)[int32]",
		"hvector(9,300,-3000)[double]",
		"contig(5000)[uint8]",
		"resized(0,40)[contig(3)[int64]]",
		"indexed_block(3;5,0,12,-4,40)[double]",
		"hindexed_block(2;100,-50,7,1000)[int32]",
		"indexed_block(700;0,2000,-1400)[int32]",
		"indexed_block(1;9,3,0,7,1,5)[uint8]",
	};
	static const int64_t counts[] = { 1, 2, 3, 1, 700, 50, 100, 3, 900 };
	struct spin_rt *rt = rt_new();
	unsigned seed = 3, i, v0 = n_vec, i0 = n_iblock;

	for (i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		struct ddt_type *t = ddt_parse(exprs[i], NULL);
		struct tcase c;

		assert_non_null(t);
		assert_int_equal(tcase_make(&c, t, counts[i], &seed), 0);
		run_specialized(rt, &c, &seed);
		run_general(rt, &c, SPIN_DDT_RW_CP, 2 * PP, 0, 0, &seed);
		tcase_free(&c);
	}
	assert_int_equal(n_vec - v0, 5);
	assert_int_equal(n_iblock - i0, 4);
	rt_done(rt);
}

/* HPU-local and RW-CP with the HPUs polled from two threads */
static void
test_threads(void **state)
{
	struct spin_rt *rt = rt_new();
	struct ddt_type *t = ddt_parse("vector(64,3,4)[struct(1,2;0,8)"
				       "[int32,int16]]", NULL);
	unsigned seed = 11;
	struct tcase c;

	assert_non_null(t);
	assert_int_equal(tcase_make(&c, t, 40, &seed), 0);
	run_general(rt, &c, SPIN_DDT_HPU_LOCAL, 0, 0, 1, &seed);
	run_general(rt, &c, SPIN_DDT_RW_CP, 2 * PP, 0, 1, &seed);
	run_general(rt, &c, SPIN_DDT_RO_CP, 3 * PP, 0, 1, &seed);
	/* not the planned policy: still right, whatever the interleaving */
	run_general(rt, &c, SPIN_DDT_RW_CP, 8 * PP, 0, 2, &seed);
	run_general(rt, &c, SPIN_DDT_HPU_LOCAL, 0, 0, 2, &seed);
	tcase_free(&c);
	rt_done(rt);
}

/*
 * One message in order on one thread: the costs of paper 000 §3.2.4.
 * RW-CP copies each checkpoint once and never catches up (each vHPU
 * finds its working copy where its previous packet left it); RO-CP
 * copies a checkpoint per packet and catches up inside the interval;
 * HPU-local catches up on every packet but the first of the message.
 */
static void
test_inorder_costs(void **state)
{
	struct spin_rt *rt = rt_new();
	struct ddt_type *t = ddt_parse("vector(2100,3,5)[int32]", NULL);
	unsigned seed = 1;
	struct tcase c;
	uint64_t npkt, q = 4, nck;
	struct spin_ddt_plan plan = {
		.nhpu = NHPU, .pkt_payload = PP, .interval = 4 * PP,
		.origin = 0,
	};
	uint32_t strategy;

	assert_non_null(t);
	assert_int_equal(tcase_make(&c, t, 2, &seed), 0);
	npkt = (c.total + PP - 1) / PP;
	nck = (npkt + q - 1) / q;
	assert_true(npkt > 8 && npkt % q != 0);
	for (strategy = SPIN_DDT_HPU_LOCAL; strategy <= SPIN_DDT_RW_CP;
	     strategy++) {
		struct run r = {
			.family = "ddt_general", .stats = 1, .nmsg = 1,
			.in_order = 1,
		};
		struct spin_ddt_stats st;
		ssize_t need;
		void *buf;

		plan.strategy = strategy;
		plan.stats_off = c.span;
		need = spin_ddt_general_args(c.t, c.count, &plan, NULL, 0,
					     &r.sc);
		assert_true(need > 0);
		buf = aligned_alloc(8, ((size_t)need + 7) & ~(size_t)7);
		assert_int_equal(spin_ddt_general_args(c.t, c.count, &plan,
					buf, (size_t)need, &r.sc), need);
		r.args = buf;
		r.args_len = (uint32_t)need;
		run_ctx(rt, &c, &r, &seed, &st);
		free(buf);
		assert_int_equal(st.pkts, npkt);
		assert_int_equal(st.busy, 0);
		assert_int_equal(st.resets, 0);
		assert_int_equal(st.master_restores, 0);
		switch (strategy) {
		case SPIN_DDT_HPU_LOCAL:
			assert_int_equal(r.sc.delta_p, 1);
			assert_int_equal(r.sc.nvhpu, NHPU);
			assert_int_equal(st.catchups, npkt - 1);
			assert_int_equal(st.ckpt_copies, 0);
			break;
		case SPIN_DDT_RO_CP:
			assert_int_equal(r.sc.blocked_rr, 0);
			assert_int_equal(st.ckpt_copies, npkt);
			assert_int_equal(st.catchups, npkt - nck);
			break;
		default:
			assert_int_equal(r.sc.delta_p, q);
			assert_int_equal(st.ckpt_copies, nck);
			assert_int_equal(st.catchups, 0);
			break;
		}
	}
	tcase_free(&c);
	spin_rt_destroy(rt);
}

/* ---- install-time checks ---------------------------------------------------- */

static int
install(struct spin_rt *rt, const char *fam, const void *args, uint32_t len)
{
	struct spin_ctx_conf cc = {
		.family = fam, .args = args, .args_len = len,
	};
	uint32_t h;
	int rc = spin_rt_ctx_create(rt, 1, &cc, &h);

	if (rc == 0)
		assert_int_equal(spin_rt_ctx_free(rt, 1, h), 0);
	return rc;
}

static void
test_hostile_args(void **state)
{
	struct spin_rt *rt = rt_new();
	struct ddt_type *t = ddt_parse("indexed(2,1,3;0,5,9)[vector(3,2,4)"
				       "[int32]]", NULL);
	struct spin_ddt_plan plan = {
		.strategy = SPIN_DDT_RW_CP, .nhpu = NHPU, .pkt_payload = 64,
		.interval = 64, .stats_off = SPIN_DDT_STATS_NONE,
	};
	struct spin_ddt_args *a;
	uint8_t *good, *bad, *odd;
	ssize_t need;
	size_t i;

	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	need = spin_ddt_general_args(t, 4, &plan, NULL, 0, NULL);
	assert_true(need > (ssize_t)sizeof(*a));
	good = aligned_alloc(8, (size_t)need + 8);
	bad = aligned_alloc(8, (size_t)need + 8);
	odd = aligned_alloc(8, (size_t)need + 16);
	assert_int_equal(spin_ddt_general_args(t, 4, &plan, good,
					       (size_t)need, NULL), need);
	/* the args carry checkpoints (read from the args built, not from
	 * bad, which holds nothing yet: it read uninitialized memory) */
	assert_true(((const struct spin_ddt_args *)good)->ckpt_count >= 2);
	a = (struct spin_ddt_args *)bad;
	assert_int_equal(install(rt, "ddt_general", good, (uint32_t)need), 0);
	/* unaligned argument bytes from the control path are fine */
	memcpy(odd + 3, good, (size_t)need);
	assert_int_equal(install(rt, "ddt_general", odd + 3, (uint32_t)need),
			 0);

#define BAD(stmt) do { \
		memcpy(bad, good, (size_t)need); \
		stmt; \
		assert_int_equal(install(rt, "ddt_general", bad, \
					 (uint32_t)need), -EINVAL); \
	} while (0)
	/* every byte of the blob is covered by its checksum */
	for (i = 0; i < ((struct spin_ddt_args *)good)->blob_len; i += 7)
		BAD(bad[a->blob_off + i] ^= 0x40);
	BAD(a->blob_len -= 8);
	BAD(a->blob_off += 4);
	BAD(a->blob_off = need);
	BAD(a->blob_len = UINT64_MAX);
	BAD(a->version = 2);
	BAD(a->strategy = 9);
	BAD(a->flags = 0x80);
	BAD(a->count = 5);
	BAD(a->count = -1);
	BAD(a->origin = INT64_MIN);
	BAD(a->nslots = 3);
	BAD(a->ckpt_count--);
	BAD(a->ckpt_count = UINT64_MAX / 2);
	BAD(a->ckpt_interval *= 2);
	BAD(a->ckpt_interval = 0);
	BAD(a->ckpt_size -= 8);
	BAD(a->ckpt_off = a->blob_off);
	BAD(a->ckpt_off += 1);
	/* a checkpoint somewhere else in the stream, or corrupt */
	BAD(memcpy(bad + a->ckpt_off, bad + a->ckpt_off + a->ckpt_size,
		   a->ckpt_size));
	BAD(bad[a->ckpt_off + a->ckpt_size + 40] ^= 1);
	BAD(bad[a->ckpt_off + a->ckpt_size + 24] ^= 1);
#undef BAD
	assert_int_equal(install(rt, "ddt_general", good, sizeof(*a) - 8),
			 -EINVAL);

	/* iblock */
	{
		struct spin_iblock_args ib[2] = { { 0 } };
		int64_t *d = (int64_t *)&ib[1];

		ib[0] = (struct spin_iblock_args){
			.version = SPIN_IBLOCK_ARGS_VERSION, .blocklen = 8,
			.nblocks = 2, .extent = 64, .nelem = 3, .base = 0,
		};
		d[0] = 0;
		d[1] = 32;
		assert_int_equal(install(rt, "ddt_iblock", ib, 64), 0);
		memcpy(odd + 5, ib, 64);
		assert_int_equal(install(rt, "ddt_iblock", odd + 5, 64), 0);
		assert_int_equal(install(rt, "ddt_iblock", ib, 56), -EINVAL);
		assert_int_equal(install(rt, "ddt_iblock", ib, 72), -EINVAL);
		d[1] = INT64_MAX - 4;
		assert_int_equal(install(rt, "ddt_iblock", ib, 64), -EINVAL);
		d[1] = 32;
		ib[0].nblocks = UINT64_MAX / 4;
		assert_int_equal(install(rt, "ddt_iblock", ib, 64), -EINVAL);
		ib[0].nblocks = 2;
		ib[0].blocklen = 0;
		assert_int_equal(install(rt, "ddt_iblock", ib, 64), -EINVAL);
	}
	free(good);
	free(bad);
	free(odd);
	ddt_free(t);
	spin_rt_destroy(rt);
}

/* more bytes than the type holds, and a window too short: errors */
static void
test_runtime_errors(void **state)
{
	struct spin_rt *rt = rt_new();
	struct ddt_type *t = ddt_parse("vector(10,1,3)[int32]", NULL);
	struct spin_ddt_plan plan = {
		.strategy = SPIN_DDT_RO_CP, .interval = 16,
		.stats_off = SPIN_DDT_STATS_NONE,
	};
	struct spin_ctx_conf cc = { .family = "ddt_general" };
	struct spin_msg_info info = { .length = 44, .pkt_payload = 16 };
	struct test_host host;
	uint8_t data[44], *buf;
	struct spin_msg *m;
	uint32_t ctx;
	ssize_t need;

	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	need = spin_ddt_general_args(t, 1, &plan, NULL, 0, NULL);
	buf = aligned_alloc(8, ((size_t)need + 7) & ~(size_t)7);
	assert_int_equal(spin_ddt_general_args(t, 1, &plan, buf, (size_t)need,
					       NULL), need);
	cc.args = buf;
	cc.args_len = (uint32_t)need;
	assert_int_equal(spin_rt_ctx_create(rt, 1, &cc, &ctx), 0);
	memset(data, 5, sizeof(data));

	/* 40 bytes of type, 44 sent: the last packet fails */
	test_host_init(&host, 112, 1);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 112, (void *)0);
	test_deliver(rt, m, data, 0, 16);
	test_deliver(rt, m, data, 16, 16);
	test_deliver(rt, m, data, 32, 12);
	poll_done(rt);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_int_equal(res.handler_errors, 1);
	test_host_fini(&host);

	/* window of 100 bytes, the type reaches 112: rejected */
	info.length = 40;
	test_host_init(&host, 100, 1);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 100, (void *)0);
	test_deliver(rt, m, data, 0, 40);
	poll_done(rt);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_true(res.dma_rejects >= 1);
	test_host_fini(&host);
	free(buf);
	ddt_free(t);
	spin_rt_destroy(rt);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_specialized_types),
		cmocka_unit_test(test_random_types),
		cmocka_unit_test(test_threads),
		/* the same through payload_burst */
		cmocka_unit_test_setup_teardown(test_specialized_types,
						bursts_on, bursts_off),
		cmocka_unit_test_setup_teardown(test_random_types, bursts_on,
						bursts_off),
		cmocka_unit_test_setup_teardown(test_threads, bursts_on,
						bursts_off),
		cmocka_unit_test(test_inorder_costs),
		cmocka_unit_test(test_hostile_args),
		cmocka_unit_test(test_runtime_errors),
	};

	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
