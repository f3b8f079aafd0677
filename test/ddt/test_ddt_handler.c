/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handlers/ddt_general with the type's compiled form in its arguments
 * (SPIN_DDT_F_PROG) against the typemap reference of ddt_gen.h: random
 * nested types, every strategy (HPU-local, RO-CP, RW-CP), 2 KiB packets
 * shuffled through spin_rt on 2 HPUs, each message sent twice over the
 * context (a packet behind one placed before: a duplicate), windows the
 * handler writes directly and windows reached only by DMA (the segments'
 * path), and a window one byte short (the message fails, nothing outside
 * written). Corrupted compiled forms are refused at install.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>

#include "spin_test.h"
#include "spin_handler_args.h"
#include "spin_ddt_args.h"
#include "ddt_gen.h"

#define PP 2048u
#define NHPU 2u
#define NTYPES 150

static struct spin_msg_result res;
static uint32_t ndone;

static void
msg_done(void *app_msg, const struct spin_msg_result *r)
{
	(void)app_msg;
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

struct tcase {
	struct ddt_type *t;
	int64_t count;
	uint64_t total, span;
	int64_t lo;
	uint8_t *packed, *ref;
};

/* @return 0; -1 too large a span for the test */
static int
tcase_make(struct tcase *c, struct ddt_type *t, int64_t count,
	   unsigned *seed)
{
	struct ddt_iov *map = NULL;
	int64_t n, hi;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->count = count;
	assert_int_equal(ddt_commit(t), 0);
	c->total = (uint64_t)(ddt_size(t) * count);
	n = ddt_ref_typemap(t, count, &map);
	assert_true(n >= 0);
	ddt_ref_span(map, n, &c->lo, &hi);
	c->span = (uint64_t)(hi - c->lo);
	if (c->span > (8u << 20) || c->total == 0) {
		free(map);
		return -1;
	}
	c->packed = malloc(c->total);
	c->ref = calloc(1, c->span);
	assert_true(c->packed && c->ref);
	for (uint64_t i = 0; i < c->total; i++)
		c->packed[i] = (uint8_t)(rand_r(seed) | 1);
	ddt_ref_unpack(map, n, c->packed, c->ref - c->lo);
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

/* every packet once, shuffled unless @p in_order, HPUs polled between
 * packets */
static void
deliver(struct spin_rt *rt, struct spin_msg *m, const struct tcase *c,
	int in_order, unsigned *seed)
{
	uint32_t npkt = (uint32_t)((c->total + PP - 1) / PP);
	uint32_t *order = malloc(sizeof(*order) * npkt);

	assert_non_null(order);
	for (uint32_t i = 0; i < npkt; i++)
		order[i] = i;
	if (!in_order)
		test_shuffle(order, npkt, seed);
	for (uint32_t i = 0; i < npkt; i++) {
		uint64_t off = (uint64_t)order[i] * PP;
		uint32_t len = (uint32_t)RTE_MIN((uint64_t)PP, c->total - off);
		struct test_pkt *p = test_pkt_new(c->packed + off, len);
		int rc;

		while ((rc = spin_msg_packet(m, p->data, len, off, p)) ==
		       -ENOBUFS)
			spin_hpu_poll(rt, i % NHPU, 16);
		assert_int_equal(rc, 0);
		if (rand_r(seed) % 3 == 0)
			spin_hpu_poll(rt, rand_r(seed) % NHPU, 4);
	}
	free(order);
}

/* one message into a window of win bytes, compared with the reference
 * when it succeeds and @p check; packets in stream order when @p direct
 * is 2 (a direct window: runs of them go through payload_burst as
 * pieces); @return its status */
static int
one_msg(struct spin_rt *rt, uint32_t ctx, const struct tcase *c,
	uint64_t win, int direct, int check, unsigned *seed)
{
	struct spin_msg_info info = { .length = c->total, .pkt_payload = PP };
	struct test_host host;
	struct spin_msg *m;
	unsigned i = 0;

	test_host_init(&host, win, direct);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, win, NULL);
	assert_non_null(m);
	deliver(rt, m, c, direct == 2, seed);
	while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == 0) {
		spin_hpu_poll(rt, i % NHPU, 8);
		assert_true(++i < 100000000);
	}
	if (res.status == SPIN_SUCCESS && check)
		assert_memory_equal(test_host_win(&host), c->ref, c->span);
	test_host_fini(&host); /* guards untouched */
	return res.status;
}

static void *
general_args(const struct tcase *c, uint32_t strategy, int64_t interval,
	     uint32_t *len_p, struct spin_ddt_sched *sc)
{
	struct spin_ddt_plan p = {
		.strategy = strategy, .flags = SPIN_DDT_F_PROG, .nhpu = NHPU,
		.pkt_payload = PP, .interval = interval, .origin = -c->lo,
		.stats_off = SPIN_DDT_STATS_NONE,
	};
	ssize_t len = spin_ddt_general_args(c->t, c->count, &p, NULL, 0, sc);
	void *buf;

	assert_true(len > 0);
	buf = aligned_alloc(8, ((size_t)len + 7) & ~(size_t)7);
	assert_non_null(buf);
	assert_int_equal(spin_ddt_general_args(c->t, c->count, &p, buf,
					       (size_t)len, sc), len);
	*len_p = (uint32_t)len;
	return buf;
}

static uint32_t
install(struct spin_rt *rt, const void *args, uint32_t len,
	const struct spin_ddt_sched *sc)
{
	struct spin_ctx_conf cc = {
		.family = "ddt_general", .args = args, .args_len = len,
		.policy = sc->blocked_rr ? SPINNIC_SCHED_BLOCKED_RR :
			SPINNIC_SCHED_DEFAULT,
		.delta_p = sc->delta_p, .nvhpu = sc->nvhpu,
	};
	uint32_t ctx;

	assert_int_equal(spin_rt_ctx_create(rt, 1, &cc, &ctx), 0);
	return ctx;
}

static unsigned n_prog;

static void
run_strategy(struct spin_rt *rt, const struct tcase *c, uint32_t strategy,
	     unsigned *seed)
{
	int64_t interval = 1 + rand_r(seed) % (3 * PP);
	const struct spin_ddt_args *a;
	struct spin_ddt_sched sc;
	uint32_t len, ctx;
	void *args = general_args(c, strategy, interval, &len, &sc);

	a = args;
	n_prog += (a->flags & SPIN_DDT_F_PROG) != 0;
	ctx = install(rt, args, len, &sc);
	for (int k = 0; k < 3; k++)
		assert_int_equal(one_msg(rt, ctx, c, c->span, k, 1, seed),
				 SPIN_SUCCESS);
	/* a window one byte short: failed, nothing outside written */
	if (c->span > 1)
		assert_int_not_equal(one_msg(rt, ctx, c, c->span - 1, 1, 1,
					     seed),
				     SPIN_SUCCESS);
	assert_int_equal(test_pkts_live, 0);
	assert_int_equal(spin_rt_ctx_free(rt, 1, ctx), 0);
	free(args);
}

/* @p state: the runtime's handler_time_every; 0 times every call, so
 * every packet goes alone through the payload handler; 4 sends most
 * packets polled together through payload_burst */
static void
test_random_types(void **state)
{
	const unsigned every = *(const unsigned *)*state;
	struct spin_rt_conf conf = {
		.nic_mem = 64 << 20, .nhpu = NHPU, .ops = &ops,
		.families = spin_handler_families,
		.handler_time_every = every,
	};
	struct spin_rt *rt = spin_rt_create(&conf);
	uint64_t gs = 0x7e57d17a, bursts = 0;
	unsigned seed = 7;
	int done = 0;

	assert_non_null(rt);
	n_prog = 0;
	while (done < NTYPES) {
		struct ddt_type *t = ddt_gen_random(&gs, 4, 64 << 10);
		struct tcase c;

		assert_non_null(t);
		if (tcase_make(&c, t, 1 + rand_r(&seed) % 3, &seed) < 0) {
			tcase_free(&c);
			continue;
		}
		for (uint32_t s = SPIN_DDT_HPU_LOCAL; s <= SPIN_DDT_RW_CP; s++)
			run_strategy(rt, &c, s, &seed);
		tcase_free(&c);
		done++;
	}
	/* nearly every type carried its compiled form */
	assert_true(n_prog > 3 * NTYPES * 9 / 10);
	for (unsigned h = 0; h < NHPU; h++) {
		struct spin_hpu_stats hs;

		assert_int_equal(spin_hpu_stats(rt, h, &hs), 0);
		bursts += hs.bursts;
	}
	printf("  handler_time_every %u: %" PRIu64 " burst calls\n", every,
	       bursts);
	if (every == 0)
		assert_int_equal(bursts, 0);
	else
		assert_true(bursts > 100);
	spin_rt_destroy(rt);
}

/* Transposes (FFT2D's columns, one per 2 KiB packet; smaller blocks
 * across packets) through bursts in stream order: the tiles across
 * packets of ddt_prog_unpack_pieces, every strategy, byte for byte. */
static void
test_transpose(void **state)
{
	static const struct { const char *e; int64_t count; } tr[] = {
		{ "contig(128)[resized(0,16)[vector(128,1,1024)"
		  "[double_complex]]]", 1 },
		{ "contig(64)[resized(0,8)[vector(100,1,300)[double]]]", 2 },
		{ "contig(40)[resized(0,4)[hvector(50,1,-2048)[int32]]]", 3 },
	};
	struct spin_rt_conf conf = {
		.nic_mem = 64 << 20, .nhpu = NHPU, .ops = &ops,
		.families = spin_handler_families, .handler_time_every = 4,
	};
	struct spin_rt *rt = spin_rt_create(&conf);
	unsigned seed = 5;
	uint64_t bursts = 0;

	(void)state;
	assert_non_null(rt);
	for (unsigned i = 0; i < sizeof(tr) / sizeof(tr[0]); i++) {
		struct ddt_type *t = ddt_parse(tr[i].e, NULL);
		struct tcase c;

		assert_non_null(t);
		assert_int_equal(tcase_make(&c, t, tr[i].count, &seed), 0);
		for (uint32_t s = SPIN_DDT_HPU_LOCAL; s <= SPIN_DDT_RW_CP; s++)
			run_strategy(rt, &c, s, &seed);
		tcase_free(&c);
	}
	for (unsigned h = 0; h < NHPU; h++) {
		struct spin_hpu_stats hs;

		assert_int_equal(spin_hpu_stats(rt, h, &hs), 0);
		bursts += hs.bursts;
	}
	assert_true(bursts > 10);
	spin_rt_destroy(rt);
}

/* A corrupted compiled form: install refuses it, or (a flip the checks
 * cannot tell from another valid form) the handler still writes only
 * inside the window. */
static void
test_corrupt_prog(void **state)
{
	struct spin_rt_conf conf = {
		.nic_mem = 64 << 20, .nhpu = NHPU, .ops = &ops,
		.families = spin_handler_families,
	};
	struct spin_rt *rt = spin_rt_create(&conf);
	const char *err = NULL;
	struct ddt_type *t = ddt_parse("struct(1,1;0,4096)[indexed_block(3;0,"
				       "7,10)[double],indexed_block(1;1,4,6)"
				       "[int32]]", &err);
	unsigned seed = 11, refused = 0;
	struct spin_ddt_sched sc;
	struct tcase c;
	uint32_t len;
	uint8_t *args;
	uint64_t off;

	(void)state;
	assert_non_null(rt);
	assert_non_null(t);
	assert_int_equal(tcase_make(&c, t, 2, &seed), 0);
	args = general_args(&c, SPIN_DDT_RO_CP, 64, &len, &sc);
	off = spin_ddt_args_prog_off((const struct spin_ddt_args *)args);
	assert_true(off < len);
	for (int k = 0; k < 200; k++) {
		uint64_t at = off + (uint64_t)rand_r(&seed) % (len - off);
		uint8_t bit = (uint8_t)(1u << (rand_r(&seed) % 8));
		struct spin_ctx_conf cc = {
			.family = "ddt_general", .args = args, .args_len = len,
		};
		uint32_t ctx;

		args[at] ^= bit;
		if (spin_rt_ctx_create(rt, 1, &cc, &ctx) != 0) {
			refused++;
		} else {
			one_msg(rt, ctx, &c, c.span, 1, 0, &seed);
			assert_int_equal(spin_rt_ctx_free(rt, 1, ctx), 0);
		}
		args[at] ^= bit;
	}
	assert_true(refused > 100);
	free(args);
	tcase_free(&c);
	spin_rt_destroy(rt);
}

static unsigned every_all = 0, every_4 = 4;

int
main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(test_random_types, &every_all),
		cmocka_unit_test_prestate(test_random_types, &every_4),
		cmocka_unit_test(test_transpose),
		cmocka_unit_test(test_corrupt_prog),
	};

	(void)argc;
	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
