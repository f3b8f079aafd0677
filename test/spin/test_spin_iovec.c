/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handlers/ddt_iovec.c: the iovec baseline against the typemap reference
 * of test/ddt/ddt_gen.h. Random nested types (depth <= 4) and layouts
 * whose blocks straddle packets are flattened by spin_ddt_iovec_args()
 * into a NIC memory blob and received through spin_rt with packets of
 * several sizes in shuffled order; the window is compared byte for byte
 * with ddt_ref_unpack(), guards untouched. Then the errors: bad argument
 * blocks refused at install, and at run time a missing or short blob, a
 * list with a hole, more bytes than the type holds, and a window too
 * short each fail the message without writing outside the window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "spin_test.h"
#include "spin_handler_args.h"
#include "spin_ddt_args.h"
#include "ddt_gen.h"

#define NHPU 2u
#define OWNER 1u

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

static struct spin_rt *
rt_new(void)
{
	struct spin_rt_conf c = {
		.nic_mem = 64 << 20, .nhpu = NHPU, .ops = &ops,
		.families = spin_handler_families,
	};
	struct spin_rt *rt = spin_rt_create(&c);

	assert_non_null(rt);
	return rt;
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

/* an iovec context for @p count of @p t, the list in a new blob */
struct ictx {
	uint32_t ctx, blob;
	int has_blob;
	uint64_t nent;
};

static void
ictx_make(struct spin_rt *rt, const struct ddt_type *t, int64_t count,
	  int64_t origin, struct ictx *x)
{
	struct spin_iovec_args a;
	struct spin_ctx_conf cc = { .family = "ddt_iovec" };
	struct spin_iovec_ent *list = NULL;
	ssize_t need;

	memset(x, 0, sizeof(*x));
	need = spin_ddt_iovec_args(t, count, origin, 0, &a, NULL, 0);
	assert_true(need >= 0);
	if (need > 0) {
		list = malloc((size_t)need);
		assert_non_null(list);
		assert_int_equal(spin_rt_nicmem_alloc(rt, OWNER,
						      (uint64_t)need,
						      &x->blob), 0);
		x->has_blob = 1;
		assert_int_equal(spin_ddt_iovec_args(t, count, origin, x->blob,
						     &a, list, (size_t)need),
				 need);
		assert_int_equal(spin_rt_nicmem_write(rt, OWNER, x->blob, 0,
						      list, (uint64_t)need),
				 0);
		free(list);
	}
	assert_int_equal(a.total, (uint64_t)(ddt_size(t) * count));
	x->nent = a.nent;
	cc.args = &a;
	cc.args_len = sizeof(a);
	assert_int_equal(spin_rt_ctx_create(rt, OWNER, &cc, &x->ctx), 0);
}

static void
ictx_free(struct spin_rt *rt, struct ictx *x)
{
	assert_int_equal(spin_rt_ctx_free(rt, OWNER, x->ctx), 0);
	if (x->has_blob)
		assert_int_equal(spin_rt_nicmem_free(rt, OWNER, x->blob), 0);
}

/* send @p total bytes of @p data in packets of @p pp, shuffled unless
 * in_order, into a window of @p win bytes; returns with the result in res */
static void
send_msg(struct spin_rt *rt, uint32_t ctx, const uint8_t *data,
	 uint64_t total, uint32_t pp, struct test_host *host, uint64_t win,
	 unsigned *seed, int in_order)
{
	struct spin_msg_info info = { .length = total, .pkt_payload = pp };
	uint32_t npkt = total == 0 ? 1 : (uint32_t)((total + pp - 1) / pp), i;
	uint32_t *order = malloc(sizeof(*order) * npkt);
	struct spin_msg *m;

	assert_non_null(order);
	for (i = 0; i < npkt; i++)
		order[i] = i;
	if (!in_order)
		test_shuffle(order, npkt, seed);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, host, TEST_ADDR, win, (void *)0);
	assert_non_null(m);
	for (i = 0; i < npkt; i++) {
		uint64_t off = (uint64_t)order[i] * pp;
		uint32_t len = (uint32_t)RTE_MIN((uint64_t)pp, total - off);

		test_deliver(rt, m, data, off, len);
		if (rand_r(seed) % 3 == 0)
			spin_hpu_poll(rt, rand_r(seed) % NHPU, 4);
	}
	poll_done(rt);
	free(order);
}

/* receive count of t through ddt_iovec; @return 0, -1 span too large */
static int
check_type(struct spin_rt *rt, struct ddt_type *t, int64_t count,
	   uint32_t pp, unsigned *seed, uint64_t *nent_p)
{
	struct ddt_iov *map = NULL;
	struct test_host host;
	uint64_t total, span, i;
	uint8_t *packed, *ref;
	int64_t n, lo, hi;
	struct ictx x;

	n = ddt_ref_typemap(t, count, &map);
	assert_true(n >= 0);
	ddt_ref_span(map, n, &lo, &hi);
	span = (uint64_t)(hi - lo);
	if (span > (16u << 20)) {
		free(map);
		return -1;
	}
	total = (uint64_t)(ddt_size(t) * count);
	packed = malloc(total + 1);
	ref = calloc(1, span + 1);
	assert_non_null(packed);
	assert_non_null(ref);
	for (i = 0; i < total; i++)
		packed[i] = (uint8_t)(rand_r(seed) | 1);
	ddt_ref_unpack(map, n, packed, ref - lo);

	ictx_make(rt, t, count, -lo, &x);
	test_host_init(&host, span, rand_r(seed) & 1);
	send_msg(rt, x.ctx, packed, total, pp, &host, span, seed, 0);
	if (res.status != SPIN_SUCCESS) {
		char e[256];

		ddt_print(t, e, sizeof(e));
		fprintf(stderr, "%s count %" PRId64 ": status %d errors %u "
			"rejects %u\n", e, count, res.status,
			res.handler_errors, res.dma_rejects);
	}
	assert_int_equal(res.status, SPIN_SUCCESS);
	assert_int_equal(res.dma_events, 1);
	assert_int_equal(res.dma_bytes, total);
	assert_memory_equal(test_host_win(&host), ref, span);
	test_host_fini(&host);
	assert_int_equal(test_pkts_live, 0);
	if (nent_p != NULL)
		*nent_p = x.nent;
	ictx_free(rt, &x);
	free(packed);
	free(ref);
	free(map);
	return 0;
}

static void
test_random_types(void **state)
{
	static const uint32_t pps[] = { 2048, 1000, 64 };
	struct spin_rt *rt = rt_new();
	uint64_t gseed = 0x10ec0001, bytes = 0, maxent = 0, nent;
	unsigned seed = 91, ntypes = 0, tries;

	(void)state;
	for (tries = 0; ntypes < 80 && tries < 1000; tries++) {
		struct ddt_type *t = ddt_gen_random(&gseed, 4, 128 << 10);
		int64_t count, size;

		if (t == NULL)
			continue;
		assert_int_equal(ddt_commit(t), 0);
		size = ddt_size(t);
		count = size == 0 ? 1 + rand_r(&seed) % 3 :
			((int64_t)1 << (10 + rand_r(&seed) % 9)) / size;
		if (count < 1)
			count = 1;
		if (check_type(rt, t, count, pps[ntypes % 3], &seed,
			       &nent) == 0) {
			ntypes++;
			bytes += (uint64_t)(size * count);
			maxent = RTE_MAX(maxent, nent);
		}
		ddt_free(t);
	}
	printf("  %u random types, %" PRIu64 " packed bytes, up to %" PRIu64
	       " blocks\n", ntypes, bytes, maxent);
	assert_int_equal(ntypes, 80);
	spin_rt_destroy(rt);
}

/* blocks longer than a packet, blocks of one byte, negative strides */
static void
test_layouts(void **state)
{
	static const struct { const char *e; int64_t count; uint32_t pp; }
	cases[] = {
		{ "vector(300,3,7)[int32]", 1, 64 },
		{ "hvector(9,300,-3000)[double]", 1, 1000 },
		{ "hvector(4,1,-3)[uint8]", 200, 7 },
		{ "contig(5000)[uint8]", 1, 2048 },
		{ "indexed(2,700,1;3000,0,9000)[int32]", 3, 1500 },
		{ "struct(1,3,2;0,16,100)[int64,uint8,double]", 40, 100 },
		{ "subarray(30,40;10,20;5,7;F)[double]", 2, 333 },
	};
	struct spin_rt *rt = rt_new();
	unsigned seed = 5, i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ddt_type *t = ddt_parse(cases[i].e, NULL);

		assert_non_null(t);
		assert_int_equal(ddt_commit(t), 0);
		assert_int_equal(check_type(rt, t, cases[i].count, cases[i].pp,
					    &seed, NULL), 0);
		ddt_free(t);
	}
	spin_rt_destroy(rt);
}

static int
install(struct spin_rt *rt, const void *args, uint32_t len)
{
	struct spin_ctx_conf cc = {
		.family = "ddt_iovec", .args = args, .args_len = len,
	};
	uint32_t h;
	int rc = spin_rt_ctx_create(rt, OWNER, &cc, &h);

	if (rc == 0)
		assert_int_equal(spin_rt_ctx_free(rt, OWNER, h), 0);
	return rc;
}

static void
test_hostile_args(void **state)
{
	struct spin_rt *rt = rt_new();
	struct spin_iovec_args good = {
		.version = SPIN_IOVEC_ARGS_VERSION, .list = 1, .nent = 3,
		.total = 96, .origin = 0,
	}, a;
	uint8_t odd[sizeof(good) + 8];

	(void)state;
	assert_int_equal(install(rt, &good, sizeof(good)), 0);
	memcpy(odd + 3, &good, sizeof(good));
	assert_int_equal(install(rt, odd + 3, sizeof(good)), 0);
	assert_int_equal(install(rt, &good, sizeof(good) - 8), -EINVAL);
	assert_int_equal(install(rt, odd, sizeof(good) + 8), -EINVAL);
#define BAD(stmt) do { \
		a = good; \
		stmt; \
		assert_int_equal(install(rt, &a, sizeof(a)), -EINVAL); \
	} while (0)
	BAD(a.version = 2);
	BAD(a.flags = 1);
	BAD(a.pad = 1);
	BAD(a.total = UINT64_MAX);
	BAD(a.nent = 97);
	BAD(a.origin = INT64_MIN);
	BAD(a.origin = INT64_MAX);
#undef BAD
	spin_rt_destroy(rt);
}

/* a message through a context whose blob holds @p list (n entries) */
static void
run_list(struct spin_rt *rt, const struct spin_iovec_ent *list, uint64_t n,
	 uint64_t blob_len, uint64_t total, uint64_t msg_len, uint64_t win,
	 int free_blob)
{
	struct spin_iovec_args a = {
		.version = SPIN_IOVEC_ARGS_VERSION, .nent = n, .total = total,
	};
	struct spin_ctx_conf cc = {
		.family = "ddt_iovec", .args = &a, .args_len = sizeof(a),
	};
	struct test_host host;
	uint8_t data[256];
	unsigned seed = 1;
	uint32_t ctx;

	memset(data, 7, sizeof(data));
	assert_int_equal(spin_rt_nicmem_alloc(rt, OWNER, blob_len, &a.list),
			 0);
	assert_int_equal(spin_rt_nicmem_write(rt, OWNER, a.list, 0, list,
					      RTE_MIN(blob_len,
						      n * sizeof(*list))), 0);
	assert_int_equal(spin_rt_ctx_create(rt, OWNER, &cc, &ctx), 0);
	if (free_blob)
		assert_int_equal(spin_rt_nicmem_free(rt, OWNER, a.list), 0);
	test_host_init(&host, win, 1);
	send_msg(rt, ctx, data, msg_len, 32, &host, win, &seed, 1);
	test_host_fini(&host);
	assert_int_equal(spin_rt_ctx_free(rt, OWNER, ctx), 0);
	if (!free_blob)
		assert_int_equal(spin_rt_nicmem_free(rt, OWNER, a.list), 0);
}

static void
test_runtime_errors(void **state)
{
	const struct spin_iovec_ent good[3] = {
		{ 0, 0, 40 }, { 40, 100, 30 }, { 70, 200, 26 },
	};
	struct spin_iovec_ent l[3];
	struct spin_rt *rt = rt_new();

	(void)state;
	/* the good list in a window of 226 bytes works */
	run_list(rt, good, 3, sizeof(good), 96, 96, 226, 0);
	assert_int_equal(res.status, SPIN_SUCCESS);
	assert_int_equal(res.dma_bytes, 96);
	/* 100 bytes sent, the type holds 96: the last packet fails */
	run_list(rt, good, 3, sizeof(good), 96, 100, 226, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_int_equal(res.handler_errors, 1);
	/* window of 220 bytes: the last block is rejected */
	run_list(rt, good, 3, sizeof(good), 96, 96, 220, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_true(res.dma_rejects >= 1);
	/* blob shorter than nent entries */
	run_list(rt, good, 3, 2 * sizeof(good[0]), 96, 96, 226, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_int_equal(res.handler_errors, 3);
	/* blob freed before the message: every packet fails */
	run_list(rt, good, 3, sizeof(good), 96, 96, 226, 1);
	assert_int_equal(res.status, SPIN_ERROR);
	assert_int_equal(res.handler_errors, 3);
	/* a hole in the stream: block 1 starts at 44, not 40 */
	memcpy(l, good, sizeof(l));
	l[1].soff = 44;
	run_list(rt, l, 3, sizeof(l), 96, 96, 226, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	/* a block pointing before the window */
	memcpy(l, good, sizeof(l));
	l[2].off = -1000;
	run_list(rt, l, 3, sizeof(l), 96, 96, 226, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	/* a block offset that overflows with the origin */
	memcpy(l, good, sizeof(l));
	l[2].off = INT64_MAX;
	run_list(rt, l, 3, sizeof(l), 96, 96, 226, 0);
	assert_int_equal(res.status, SPIN_ERROR);
	spin_rt_destroy(rt);
}

/* the builder: sizes, empty types, short buffers */
static void
test_builder(void **state)
{
	struct ddt_type *t = ddt_parse("vector(3,2,5)[int32]", NULL);
	struct ddt_type *e = ddt_parse("contig(0)[int32]", NULL);
	struct spin_iovec_ent l[6];
	struct spin_iovec_args a;

	(void)state;
	assert_non_null(t);
	assert_non_null(e);
	assert_int_equal(ddt_commit(t), 0);
	assert_int_equal(ddt_commit(e), 0);
	assert_int_equal(spin_ddt_iovec_args(t, -1, 0, 0, &a, NULL, 0),
			 -EINVAL);
	/* extent 12 int32: block 2 of element 0 and block 0 of element 1
	 * touch and are merged, 5 blocks */
	assert_int_equal(spin_ddt_iovec_args(t, 2, 8, 9, &a, NULL, 0),
			 5 * sizeof(l[0]));
	/* too short: nothing written */
	memset(l, 0xab, sizeof(l));
	assert_int_equal(spin_ddt_iovec_args(t, 2, 8, 9, &a, l,
					     5 * sizeof(l[0]) - 1),
			 5 * sizeof(l[0]));
	assert_int_equal(l[0].soff, 0xababababababababull);
	assert_int_equal(spin_ddt_iovec_args(t, 2, 8, 9, &a, l, sizeof(l)),
			 5 * sizeof(l[0]));
	assert_int_equal(a.nent, 5);
	assert_int_equal(a.total, 48);
	assert_int_equal(a.list, 9);
	assert_int_equal(a.origin, 8);
	assert_int_equal(l[2].soff, 16);
	assert_int_equal(l[2].off, 40);
	assert_int_equal(l[2].len, 16);
	assert_int_equal(l[3].soff, 32);
	assert_int_equal(l[3].off, 68);
	assert_int_equal(l[4].off, 88);
	assert_int_equal(l[4].len, 8);
	assert_int_equal(l[5].soff, 0xababababababababull);
	assert_int_equal(spin_ddt_iovec_args(e, 4, 0, 0, &a, NULL, 0), 0);
	assert_int_equal(a.nent, 0);
	assert_int_equal(a.total, 0);
	ddt_free(t);
	ddt_free(e);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builder),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_random_types),
		cmocka_unit_test(test_hostile_args),
		cmocka_unit_test(test_runtime_errors),
	};

	(void)argc;
	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
