/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handlers/: the vector unpack handler (paper 000 Listing 1, complete)
 * against a reference unpack on random vectors and packet sizes, packets
 * in random order; the checksum handler independent of packet order, and
 * a two-thread smoke test of the default policy with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "spin_test.h"
#include "spin_handler_args.h"
#ifdef TEST_AA_PLUGIN
#include "active_access.h"

/*
 * The Active Access families are the plugin examples/handlers/active_access
 * (spinnic --handlers libactive_access.so); its source is compiled into
 * this test (test/spin/meson.build), and its families follow the built-in
 * ones in the runtime's table, as spinnic appends a plugin's.
 */
extern const struct spin_handler_plugin spin_handler_plugin;
#endif

static struct spin_msg_result res[16];
static uint32_t ndone;

static void
msg_done(void *app_msg, const struct spin_msg_result *r)
{
	res[(uintptr_t)app_msg] = *r;
	__atomic_fetch_add(&ndone, 1, __ATOMIC_RELEASE);
}

/* 8-byte host atomics on the test host: the CPU's */
static int
test_atomic64(void *host, void *app_msg, uint64_t addr, unsigned op,
	      uint64_t v, uint64_t cmp, uint64_t *old_p)
{
	uint64_t *w = (uint64_t *)(void *)test_host_xlate(host, addr, 8);

	(void)app_msg;
	switch (op) {
	case SPIN_HOST_ATOMIC_FADD:
		*old_p = __atomic_fetch_add(w, v, __ATOMIC_ACQ_REL);
		break;
	case SPIN_HOST_ATOMIC_SWAP:
		*old_p = __atomic_exchange_n(w, v, __ATOMIC_ACQ_REL);
		break;
	default:
		__atomic_compare_exchange_n(w, &cmp, v, false,
					    __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
		*old_p = cmp;
		break;
	}
	return 0;
}

static const struct spin_host_ops ops = {
	.direct = test_direct,
	.dma_write = test_dma_write,
	.dma_read = test_dma_read,
	.atomic64 = test_atomic64,
	.msg_done = msg_done,
	.pkt_release = test_pkt_release,
};

/* The built-in families, then the plugin's (NULL-terminated) */
static const struct spin_handler_family *const *
families(void)
{
	static const struct spin_handler_family *t[64];
	unsigned n = 0;

	if (t[0] != NULL)
		return t;
	for (; spin_handler_families[n] != NULL; n++)
		t[n] = spin_handler_families[n];
#ifdef TEST_AA_PLUGIN
	for (uint32_t i = 0; i < spin_handler_plugin.n_families; i++)
		t[n++] = spin_handler_plugin.families[i];
#endif
	assert_true(n < sizeof(t) / sizeof(t[0]));
	t[n] = NULL;
	return t;
}

static struct spin_rt *
rt_new(unsigned nhpu)
{
	struct spin_rt_conf c = {
		.nic_mem = 1 << 20, .nhpu = nhpu, .ops = &ops,
		.families = families(),
	};
	struct spin_rt *rt = spin_rt_create(&c);

	assert_non_null(rt);
	return rt;
}

/* deliver the message in packets of @p pp bytes, in random order */
static void
deliver_all(struct spin_rt *rt, struct spin_msg *m, const uint8_t *data,
	    uint64_t len, uint32_t pp, unsigned *seed, int shuffle)
{
	uint32_t npkt = (uint32_t)((len + pp - 1) / pp), i;
	uint32_t *order = malloc(sizeof(*order) * (npkt ? npkt : 1));

	assert_non_null(order);
	for (i = 0; i < npkt; i++)
		order[i] = i;
	if (shuffle)
		test_shuffle(order, npkt, seed);
	for (i = 0; i < npkt; i++) {
		uint64_t off = (uint64_t)order[i] * pp;

		test_deliver(rt, m, data, off,
			     (uint32_t)RTE_MIN((uint64_t)pp, len - off));
		if (rand_r(seed) % 4 == 0)
			spin_hpu_poll(rt, 0, 2);
	}
	free(order);
}

static void
poll_done(struct spin_rt *rt, uint32_t n)
{
	unsigned i = 0;

	while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) < n) {
		spin_hpu_poll(rt, 0, 8);
		assert_true(++i < 10000000);
	}
}

static uint64_t
urand(unsigned *seed, uint64_t lo, uint64_t hi)
{
	return lo + (uint64_t)rand_r(seed) % (hi - lo + 1);
}

/* ---- vector ------------------------------------------------------------ */

static void
vec_reference(const struct spin_vec_args *a, const uint8_t *packed,
	      uint8_t *win)
{
	uint64_t e, b, r, p = 0;

	for (e = 0; e < a->nelem; e++)
		for (b = 0; b < a->count; b++)
			for (r = 0; r < a->blocklen; r++)
				win[a->base + (int64_t)e * a->extent +
				    (int64_t)b * a->stride + (int64_t)r] =
					packed[p++];
}

static uint32_t
vec_install(struct spin_rt *rt, const struct spin_vec_args *a, int *rc_p)
{
	struct spinnic_ctrl_ctx req = {
		.args_len = sizeof(*a), .policy = SPINNIC_SCHED_DEFAULT,
	};
	uint32_t h = SPINNIC_HANDLE_NONE;

	strcpy(req.family, "ddt_vector");
	*rc_p = spin_rt_ctx_install(rt, 1, &req, a, &h);
	return h;
}

static void
test_vector_random(void **state)
{
	struct spin_rt *rt = rt_new(1);
	unsigned seed = 1234, trial;

	for (trial = 0; trial < 60; trial++) {
		struct spin_vec_args a = { .version = SPIN_VEC_ARGS_VERSION };
		uint64_t stride_mag, total, win_len;
		struct spin_msg_info info = { 0 };
		struct test_host host;
		uint8_t *packed, *ref;
		struct spin_msg *m;
		uint32_t ctx, pp;
		int neg, rc;
		uint64_t i;

		/* small and packet-straddling blocks */
		a.blocklen = trial % 3 == 0 ? urand(&seed, 200, 900) :
			urand(&seed, 1, 40);
		a.count = urand(&seed, 1, 12);
		/* every 6th: adjacent blocks, every 12th: contiguous */
		stride_mag = a.blocklen + (trial % 6 == 5 ? 0 :
					   urand(&seed, 0, 50));
		neg = trial % 5 == 4 && a.count > 1;
		a.stride = neg ? -(int64_t)stride_mag : (int64_t)stride_mag;
		a.extent = (int64_t)(a.count * stride_mag +
				     (trial % 12 == 11 ? 0 : urand(&seed, 0, 30)));
		a.nelem = urand(&seed, 1, 3);
		a.base = (neg ? (int64_t)((a.count - 1) * stride_mag) : 0) +
			(int64_t)urand(&seed, 0, 20);
		total = a.blocklen * a.count * a.nelem;
		win_len = (uint64_t)a.base + (a.nelem - 1) * (uint64_t)a.extent +
			(neg ? 0 : (a.count - 1) * stride_mag) + a.blocklen +
			urand(&seed, 0, 10);
		pp = (uint32_t)urand(&seed, 1, 300);
		if (trial % 7 == 0)
			pp = (uint32_t)a.blocklen * 2; /* dividing case */

		packed = malloc(total);
		ref = calloc(1, win_len);
		assert_non_null(packed);
		assert_non_null(ref);
		for (i = 0; i < total; i++)
			packed[i] = (uint8_t)rand_r(&seed) | 1;
		vec_reference(&a, packed, ref);

		ctx = vec_install(rt, &a, &rc);
		assert_int_equal(rc, 0);
		test_host_init(&host, win_len, trial & 1);
		info.length = total;
		info.pkt_payload = pp;
		ndone = 0;
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, win_len,
				   (void *)0);
		assert_non_null(m);
		deliver_all(rt, m, packed, total, pp, &seed, 1);
		poll_done(rt, 1);
		assert_int_equal(res[0].status, SPIN_SUCCESS);
		assert_int_equal(res[0].dma_events, 1);
		assert_int_equal(res[0].dma_bytes, total);
		assert_memory_equal(test_host_win(&host), ref, win_len);
		assert_int_equal(test_pkts_live, 0);
		test_host_fini(&host);
		assert_int_equal(spin_rt_ctx_free(rt, 1, ctx), 0);
		free(packed);
		free(ref);
	}
	spin_rt_destroy(rt);
}

/* argument checks; more bytes than the type or a short window: error */
static void
test_vector_errors(void **state)
{
	struct spin_rt *rt = rt_new(1);
	struct spin_vec_args a = {
		.version = SPIN_VEC_ARGS_VERSION, .blocklen = 4, .count = 8,
		.stride = 10, .extent = 80, .nelem = 2, .base = 0,
	};
	struct spin_vec_args bad;
	struct spin_msg_info info = { .length = 100 };
	struct test_host host;
	uint8_t data[100];
	struct spin_msg *m;
	uint32_t ctx;
	int rc;

	bad = a;
	bad.version = 2;
	vec_install(rt, &bad, &rc);
	assert_int_equal(rc, -EINVAL);
	bad = a;
	bad.blocklen = 0;
	vec_install(rt, &bad, &rc);
	assert_int_equal(rc, -EINVAL);
	bad = a;
	bad.nelem = UINT64_MAX / 2;
	vec_install(rt, &bad, &rc);
	assert_int_equal(rc, -EINVAL);
	bad = a;
	bad.stride = INT64_MIN;
	vec_install(rt, &bad, &rc);
	assert_int_equal(rc, -EINVAL);

	/* 64 bytes of type, 100 sent */
	memset(data, 3, sizeof(data));
	ctx = vec_install(rt, &a, &rc);
	assert_int_equal(rc, 0);
	test_host_init(&host, 160, 1);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 160, (void *)0);
	test_deliver(rt, m, data, 0, 50);
	test_deliver(rt, m, data, 50, 50);
	poll_done(rt, 1);
	assert_int_equal(res[0].status, SPIN_ERROR);
	assert_int_equal(res[0].handler_errors, 1);
	test_host_fini(&host);

	/* the window is too short for element 1: rejected, not written */
	info.length = 64;
	test_host_init(&host, 100, 1);
	ndone = 0;
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 100, (void *)0);
	test_deliver(rt, m, data, 0, 64);
	poll_done(rt, 1);
	assert_int_equal(res[0].status, SPIN_ERROR);
	assert_true(res[0].dma_rejects >= 1);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* ---- checksum ----------------------------------------------------------- */

static void
csum_reference(const uint8_t *d, uint64_t len, struct spin_csum_result *r)
{
	uint64_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < len; i++) {
		r->sum += d[i];
		r->wsum += (i + 1) * d[i];
	}
	r->bytes = len;
}

static uint32_t
csum_install(struct spin_rt *rt, uint32_t flags)
{
	struct spin_csum_args a = {
		.version = SPIN_CSUM_ARGS_VERSION, .flags = flags,
		.result_off = SPIN_CSUM_RESULT_AFTER,
	};
	struct spin_ctx_conf c = {
		.family = "checksum", .args = &a, .args_len = sizeof(a),
	};
	uint32_t h;

	assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), 0);
	return h;
}

static void
test_checksum_order(void **state)
{
	struct spin_rt *rt = rt_new(2);
	uint32_t ctx = csum_install(rt, SPIN_CSUM_F_COPY);
	unsigned seed = 99, trial;

	for (trial = 0; trial < 30; trial++) {
		uint64_t len = urand(&seed, 1, 6000), i;
		uint32_t pp = (uint32_t)urand(&seed, 1, 700);
		struct spin_csum_result want, got[2];
		struct spin_msg_info info = { .length = len, .pkt_payload = pp };
		uint8_t *data = malloc(len);
		unsigned shuffle;

		assert_non_null(data);
		for (i = 0; i < len; i++)
			data[i] = (uint8_t)rand_r(&seed);
		csum_reference(data, len, &want);
		for (shuffle = 0; shuffle < 2; shuffle++) {
			struct test_host host;
			struct spin_msg *m;

			test_host_init(&host, len + sizeof(got[0]), shuffle);
			ndone = 0;
			m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR,
					   len + sizeof(got[0]), (void *)0);
			assert_non_null(m);
			deliver_all(rt, m, data, len, pp, &seed, shuffle);
			poll_done(rt, 1);
			assert_int_equal(res[0].status, SPIN_SUCCESS);
			memcpy(&got[shuffle], test_host_win(&host) + len,
			       sizeof(got[0]));
			assert_memory_equal(test_host_win(&host), data, len);
			test_host_fini(&host);
		}
		want.pkts = (len + pp - 1) / pp;
		assert_memory_equal(&got[0], &want, sizeof(want));
		assert_memory_equal(&got[1], &want, sizeof(want));
		free(data);
	}
	assert_int_equal(test_pkts_live, 0);
	spin_rt_destroy(rt);
}

/* ---- default policy on two HPU threads ------------------------------------- */

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
test_threads_smoke(void **state)
{
	enum { NM = 8 };
	struct spin_rt *rt = rt_new(2);
	struct test_host host[NM];
	struct spin_msg *m[NM];
	uint8_t *data[NM];
	uint64_t len[NM], sent[NM] = { 0 };
	uint32_t ctx[NM];
	volatile int stop = 0;
	struct poller p[2];
	pthread_t th[2];
	unsigned seed = 5, i, left;

	ndone = 0;
	for (i = 0; i < NM; i++) {
		struct spin_msg_info info = { .pkt_payload = 256 };
		uint64_t k;

		len[i] = urand(&seed, 1000, 20000);
		info.length = len[i];
		data[i] = malloc(len[i]);
		for (k = 0; k < len[i]; k++)
			data[i][k] = (uint8_t)rand_r(&seed);
		ctx[i] = csum_install(rt, SPIN_CSUM_F_COPY);
		test_host_init(&host[i], len[i] + 32, 1);
		m[i] = spin_msg_start(rt, ctx[i], &info, &host[i], TEST_ADDR,
				      len[i] + 32, (void *)(uintptr_t)i);
		assert_non_null(m[i]);
	}
	for (i = 0; i < 2; i++) {
		p[i] = (struct poller){ rt, i, &stop };
		assert_int_equal(pthread_create(&th[i], NULL, poller_main,
						&p[i]), 0);
	}
	do {
		left = 0;
		for (i = 0; i < NM; i++) {
			uint32_t n = (uint32_t)RTE_MIN((uint64_t)256,
						       len[i] - sent[i]);
			struct test_pkt *pk;

			if (n == 0)
				continue;
			pk = test_pkt_new(data[i] + sent[i], n);
			while (spin_msg_packet(m[i], pk->data, n, sent[i], pk) ==
			       -ENOBUFS)
				sched_yield();
			sent[i] += n;
			left = 1;
		}
	} while (left);
	while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) < NM)
		sched_yield();
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NM; i++) {
		struct spin_csum_result want;

		csum_reference(data[i], len[i], &want);
		want.pkts = (len[i] + 255) / 256;
		assert_int_equal(res[i].status, SPIN_SUCCESS);
		assert_memory_equal(test_host_win(&host[i]), data[i], len[i]);
		assert_memory_equal(test_host_win(&host[i]) + len[i], &want,
				    sizeof(want));
		test_host_fini(&host[i]);
		free(data[i]);
	}
	assert_int_equal(test_pkts_live, 0);
	printf("  ");
	spin_rt_stats_print(rt, stdout);
	spin_rt_destroy(rt);
}

/* ---- access handlers (Active Access records on the NIC) ---------------- */

#ifdef TEST_AA_PLUGIN

static uint32_t
ctx_of(struct spin_rt *rt, const char *fam, const void *args, uint32_t len)
{
	struct spinnic_ctrl_ctx req = {
		.args_len = len, .policy = SPINNIC_SCHED_DEFAULT,
	};
	uint32_t h = SPINNIC_HANDLE_NONE;

	strcpy(req.family, fam);
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, args, &h), 0);
	return h;
}

/* ctx_of() that may fail: the handle, or UINT32_MAX */
static uint32_t
ctx_of_rc(struct spin_rt *rt, const char *fam, const void *args,
	  uint32_t len)
{
	struct spinnic_ctrl_ctx req = {
		.args_len = len, .policy = SPINNIC_SCHED_DEFAULT,
	};
	uint32_t h = SPINNIC_HANDLE_NONE;

	strcpy(req.family, fam);
	if (spin_rt_ctx_install(rt, 1, &req, args, &h) != 0)
		return UINT32_MAX;
	return h;
}

/*
 * aa_dirty: the byte of each page a write reached set, once however many
 * writes; refused, redirected and read records mark nothing; records
 * outside the tracked pages only count; bad arguments refused; a window
 * that ends before the bitmap fails the record.
 */
static void
aa_dirty_check(struct spin_rt *rt, struct test_host *h)
{
	struct aa_dirty_args da = {
		.version = AA_DIRTY_ARGS_VERSION, .base = TEST_ADDR,
		.npages = 16, .bitmap_off = 2 * 4096 + 64,
		.processed_off = 2 * 4096,
	};
	/* {kind, flags, page}: wrote memory or not */
	static const struct { uint16_t kind, flags; uint64_t page; bool dirty; }
	recs[] = {
		{ 1, 0, 3, true },   /* PUT_META */
		{ 2, 0, 5, true },   /* PUT_DATA */
		{ 2, 1, 6, false },  /* PUT_DATA redirected: memory untouched */
		{ 5, 0, 7, false },  /* PUT_BLOCKED */
		{ 3, 0, 8, false },  /* GET_META */
		{ 4, 0, 9, false },  /* GET_DATA */
		{ 6, 0, 10, false }, /* GET_BLOCKED */
		{ 7, 0, 11, true },  /* ATOMIC */
		{ 1, 2, 3, true },   /* again page 3, from a handler */
		{ 1, 0, 15, true },  /* the last page */
		{ 1, 0, 16, false }, /* past the pages: counted only */
	};
	struct spin_access a = { .len = 0 };
	uint8_t *win = test_host_win(h);
	uint64_t *w = (uint64_t *)(void *)win;
	uint32_t ctx;
	unsigned i;

	memset(win + da.processed_off, 0, 8 + 64 + 16);
	da.version = 2;
	assert_int_equal(ctx_of_rc(rt, "aa_dirty", &da, sizeof(da)),
			 UINT32_MAX);
	da.version = AA_DIRTY_ARGS_VERSION;
	da.npages = 0;
	assert_int_equal(ctx_of_rc(rt, "aa_dirty", &da, sizeof(da)),
			 UINT32_MAX);
	da.npages = 16;
	da.base = TEST_ADDR + 8;
	assert_int_equal(ctx_of_rc(rt, "aa_dirty", &da, sizeof(da)),
			 UINT32_MAX);
	da.base = TEST_ADDR;
	ctx = ctx_of(rt, "aa_dirty", &da, sizeof(da));
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		a.kind = recs[i].kind;
		a.flags = recs[i].flags;
		a.addr = TEST_ADDR + recs[i].page * 4096 + 8 * i;
		a.win_off = a.addr - TEST_ADDR < h->len ?
			    a.addr - TEST_ADDR : UINT64_MAX;
		assert_int_equal(spin_rt_access_run(rt, 0, 1, ctx, h,
						    TEST_ADDR, h->len, &a),
				 SPIN_SUCCESS);
	}
	for (i = 0; i < 16; i++) {
		bool want = i == 3 || i == 5 || i == 11 || i == 15;

		assert_int_equal(win[da.bitmap_off + i], want ? 1 : 0);
	}
	assert_int_equal(win[da.bitmap_off + 16], 0);
	assert_int_equal(w[da.processed_off / 8],
			 sizeof(recs) / sizeof(recs[0]));
	/* a window that ends before the bitmap: the DMA refused */
	a.kind = 1;
	a.addr = TEST_ADDR + 4096;
	assert_int_equal(spin_rt_access_run(rt, 0, 1, ctx, h, TEST_ADDR,
					    2 * 4096, &a), SPIN_ERROR);
	spin_rt_ctx_free(rt, 1, ctx);
}

/* aa_dht and aa_count run per record through spin_rt_access_run with
 * host atomics; wrong owner, a family without access handler, a record
 * the handler refuses, a window too small for its counters */
static void
test_access(void **state)
{
	enum { NSL = 8, NH = 16 };
	struct aa_dht_args da = {
		.version = AA_DHT_ARGS_VERSION, .nslot = NSL,
		.table_off = 0, .head_off = 8 * NSL, .nheap = NH,
		.heap_off = 16 * NSL, .next_free_off = 16 * NSL + 16 * NH,
		.overflow_off = 16 * NSL + 16 * NH + 8,
		.processed_off = 16 * NSL + 16 * NH + 16,
	};
	struct aa_count_args ca = {
		.version = AA_COUNT_ARGS_VERSION, .base = TEST_ADDR,
		.npages = 2, .counters_off = 2 * 4096,
		.processed_off = AA_NO_WORD,
	};
	struct spin_csum_args sa = { .version = SPIN_CSUM_ARGS_VERSION };
	struct spin_access a = { .kind = 2, .len = 8 };
	struct spin_rt *rt = rt_new(1);
	struct test_host h;
	uint64_t key, *w, c;
	uint32_t dht, cnt, cs;
	unsigned i;

	(void)state;
	test_host_init(&h, 3 * 4096, false);
	w = (uint64_t *)(void *)test_host_win(&h);
	dht = ctx_of(rt, "aa_dht", &da, sizeof(da));
	cnt = ctx_of(rt, "aa_count", &ca, sizeof(ca));
	cs = ctx_of(rt, "checksum", &sa, sizeof(sa));
	assert_int_equal(spin_rt_ctx_access_ok(rt, 1, dht), 0);
	assert_int_equal(spin_rt_ctx_access_ok(rt, 2, dht), -EPERM);
	assert_int_equal(spin_rt_ctx_access_ok(rt, 1, cs), -ENOTSUP);
	a.data = (const uint8_t *)&key;
	/* 12 keys into slots 0..3: 4 in the table, 8 chained */
	for (i = 0; i < 12; i++) {
		key = 100 + i;
		a.addr = TEST_ADDR + 8 * (i % 4);
		a.win_off = 8 * (i % 4);
		assert_int_equal(spin_rt_access_run(rt, 0, 1, dht, &h,
						    TEST_ADDR, h.len, &a),
				 SPIN_SUCCESS);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(w[i], 100 + i);
		/* the chain: newest first, 1-based cells */
		c = w[NSL + i];
		for (unsigned k = 0; k < 2; k++) {
			assert_true(c >= 1 && c <= NH);
			assert_int_equal(w[2 * NSL + 2 * (c - 1)],
					 100 + i + 4 * (2 - k));
			c = w[2 * NSL + 2 * (c - 1) + 1];
		}
		assert_int_equal(c, 0);
	}
	assert_int_equal(w[da.next_free_off / 8], 8);
	assert_int_equal(w[da.processed_off / 8], 12);
	/* not an insert: counted, skipped */
	a.kind = 1;
	assert_int_equal(spin_rt_access_run(rt, 0, 1, dht, &h, TEST_ADDR,
					    h.len, &a), SPIN_ERROR);
	assert_int_equal(w[da.processed_off / 8], 13);
	/* aa_count: a write and two reads on page 1 */
	a.len = 0;
	a.data = NULL;
	a.addr = TEST_ADDR + 4096 + 8;
	a.kind = 1;
	assert_int_equal(spin_rt_access_run(rt, 0, 1, cnt, &h, TEST_ADDR,
					    h.len, &a), SPIN_SUCCESS);
	a.kind = 3;
	for (i = 0; i < 2; i++)
		assert_int_equal(spin_rt_access_run(rt, 0, 1, cnt, &h,
						    TEST_ADDR, h.len, &a),
				 SPIN_SUCCESS);
	assert_int_equal(w[2 * 512 + 1], 1);
	assert_int_equal(w[2 * 512 + 2 + 1], 2);
	/* a window that ends before the counters: rejected DMA, error */
	assert_int_equal(spin_rt_access_run(rt, 0, 1, cnt, &h, TEST_ADDR,
					    4096, &a), SPIN_ERROR);
	/* another owner, no access handler, a dead handle, a bad HPU */
	assert_int_equal(spin_rt_access_run(rt, 0, 2, cnt, &h, TEST_ADDR,
					    h.len, &a), -ENOENT);
	assert_int_equal(spin_rt_access_run(rt, 0, 1, cs, &h, TEST_ADDR,
					    h.len, &a), -ENOTSUP);
	assert_int_equal(spin_rt_access_run(rt, 5, 1, cnt, &h, TEST_ADDR,
					    h.len, &a), -EINVAL);
	assert_int_equal(spin_rt_ctx_free(rt, 1, cnt), 0);
	assert_int_equal(spin_rt_access_run(rt, 0, 1, cnt, &h, TEST_ADDR,
					    h.len, &a), -ENOENT);
	aa_dirty_check(rt, &h);
	spin_rt_ctx_free(rt, 1, dht);
	spin_rt_ctx_free(rt, 1, cs);
	test_host_fini(&h);
	spin_rt_destroy(rt);
}
#endif

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_random),
		cmocka_unit_test(test_vector_errors),
		cmocka_unit_test(test_checksum_order),
		cmocka_unit_test(test_threads_smoke),
#ifdef TEST_AA_PLUGIN
		cmocka_unit_test(test_access),
#endif
	};

	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
