/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/spin handler statistics, budget and trace (spin_rt.h, "handler
 * statistics and trace"): exact counts per family (position in the table:
 * the built-in checksum family, then families of this test as a plugin
 * would append them) and per context, by kind and outcome, over two HPUs;
 * DMA bytes both ways, rejects, put errors; durations; an invocation over
 * the budget counted and logged once per second per family; the trace
 * ring's last entries, in order, with their fields.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_log.h>
#include <rte_pause.h>

#include "spin_test.h"
#include "handlers.h"
#include "spin_handler_args.h"

static uint64_t ndone;
static struct spin_msg_result last_res;

static void
msg_done(void *app_msg, const struct spin_msg_result *r)
{
	RTE_SET_USED(app_msg);
	last_res = *r;
	__atomic_fetch_add(&ndone, 1, __ATOMIC_RELEASE);
}

/* no put op: handler puts are refused (-ENOTSUP), counted */
static const struct spin_host_ops ops = {
	.direct = test_direct,
	.dma_write = test_dma_write,
	.dma_read = test_dma_read,
	.msg_done = msg_done,
	.pkt_release = test_pkt_release,
};

/* ---- families ------------------------------------------------------------ */

/*
 * "outcomes": every payload reads 8 bytes of the window, then by offset:
 * 0 returns SPIN_ERROR, 100 has a DMA out of the window (an error),
 * 200 drops, 300 proceeds, others copy their bytes (500 also tries a put,
 * refused); the completion handler returns SPIN_ERROR.
 */
static int
oc_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	RTE_SET_USED(hdr);
	RTE_SET_USED(h);
	return SPIN_SUCCESS;
}

static int
oc_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	uint8_t b[8];

	if (spin_dma_from_host(h, 0, b, sizeof(b)) != 0)
		return SPIN_ERROR;
	switch (pkt->offset) {
	case 0:
		return SPIN_ERROR;
	case 100:
		(void)spin_dma_to_host(h, spin_hctx_win_len(h), b, 1, 0);
		return SPIN_SUCCESS;
	case 200:
		return SPIN_DROP;
	case 300:
		return SPIN_PROCEED;
	case 500:
		if (spin_put_from_nic(h, &(struct spin_put_req){0}, b, 1) !=
		    -ENOTSUP)
			return SPIN_ERROR;
		break;
	default:
		break;
	}
	return spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				   SPIN_DMA_NO_EVENT) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

static int
oc_completion(const struct spin_done *done, struct spin_hctx *h)
{
	RTE_SET_USED(done);
	RTE_SET_USED(h);
	return SPIN_ERROR;
}

static const struct spin_handler_family fam_outcomes = {
	.name = "outcomes", .header = oc_header, .payload = oc_payload,
	.completion = oc_completion,
};

/* "slow": payload handlers busy-wait slow_cycles */
static uint64_t slow_cycles;

static int
slow_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	uint64_t t0 = rte_rdtsc();

	RTE_SET_USED(pkt);
	RTE_SET_USED(h);
	while (rte_rdtsc() - t0 < slow_cycles)
		rte_pause();
	return SPIN_SUCCESS;
}

static const struct spin_handler_family fam_slow = {
	.name = "slow", .header = oc_header, .payload = slow_payload,
};

/* "plain": copy every packet; payload rc by offset (trace_rc_off) */
static uint64_t trace_err_off = UINT64_MAX;

static int
plain_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	if (pkt->offset == trace_err_off)
		return SPIN_ERROR;
	return spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				   SPIN_DMA_NO_EVENT) == 0 ? SPIN_SUCCESS :
		SPIN_ERROR;
}

static int
plain_completion(const struct spin_done *done, struct spin_hctx *h)
{
	RTE_SET_USED(done);
	RTE_SET_USED(h);
	return SPIN_SUCCESS;
}

/* sender side: the window's bytes at the packet's offset */
static int
plain_outbound(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	return spin_dma_from_host(h, pkt->offset, pkt->payload, pkt->len) == 0 ?
		SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family fam_plain = {
	.name = "plain", .header = oc_header, .payload = plain_payload,
	.completion = plain_completion, .outbound = plain_outbound,
};


/*
 * "bursty": payload and payload_burst with the outcomes of "outcomes" by
 * offset (0 error, 100 a DMA out of the window, 200 drop, 300 proceed,
 * others copied), each packet logged in the order run: its offset, the
 * call (0 alone through payload, else the burst call's number) and vHPU.
 */
struct blog {
	uint64_t off;
	unsigned call;
	uint32_t vhpu;
};
static struct blog blog[256];
static unsigned nblog, nbcalls;

static int
bursty_one(const struct spin_pkt *pkt, struct spin_hctx *h, unsigned call)
{
	uint8_t b = 0;

	if (nblog < RTE_DIM(blog))
		blog[nblog++] = (struct blog){ pkt->offset, call,
					       spin_hctx_vhpu(h) };
	switch (pkt->offset) {
	case 0:
		return SPIN_ERROR;
	case 100:
		(void)spin_dma_to_host(h, spin_hctx_win_len(h), &b, 1, 0);
		return SPIN_SUCCESS;
	case 200:
		return SPIN_DROP;
	case 300:
		return SPIN_PROCEED;
	default:
		return spin_dma_to_host_nb(h, pkt->offset, pkt->payload,
					   pkt->len, SPIN_DMA_NO_EVENT) == 0 ?
			SPIN_SUCCESS : SPIN_ERROR;
	}
}

static int
bursty_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	return bursty_one(pkt, h, 0);
}

static void
bursty_burst(const struct spin_pkt *pkts, unsigned n, int *rc,
	     struct spin_hctx *h)
{
	unsigned i, call = ++nbcalls;

	assert_true(n >= 2 && n <= SPIN_PAYLOAD_BURST_MAX);
	for (i = 0; i < n; i++) {
		/* one message: the same info for every packet */
		assert_ptr_equal(pkts[i].info, pkts[0].info);
		rc[i] = bursty_one(&pkts[i], h, call);
	}
}

static const struct spin_handler_family fam_bursty = {
	.name = "bursty", .header = oc_header, .payload = bursty_payload,
	.payload_burst = bursty_burst,
};

/* built-ins first, then the test's: a plugin's families come after */
static const struct spin_handler_family *const fams[] = {
	&spin_handlers_checksum, &fam_outcomes, &fam_slow, &fam_plain,
	&fam_bursty, NULL,
};
enum { F_CHECKSUM, F_OUTCOMES, F_SLOW, F_PLAIN, F_BURSTY, F_COUNT };

/* ---- helpers -------------------------------------------------------------- */

static struct spin_rt *
rt_new(unsigned nhpu, uint64_t budget_ns, unsigned trace)
{
	struct spin_rt_conf c = {
		.nic_mem = 1 << 20, .nhpu = nhpu, .max_ctxs = 16,
		.max_owners = 4, .pkt_payload = 100, .ops = &ops,
		.families = fams, .handler_budget_ns = budget_ns,
		.handler_trace = trace,
	};
	struct spin_rt *rt = spin_rt_create(&c);

	assert_non_null(rt);
	return rt;
}

static uint32_t
ctx_new(struct spin_rt *rt, const char *fam, const void *args,
	uint32_t args_len)
{
	struct spin_ctx_conf c = {
		.family = fam, .args = args, .args_len = args_len,
	};
	uint32_t h;

	assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), 0);
	return h;
}

static uint32_t
csum_ctx(struct spin_rt *rt)
{
	static const struct spin_csum_args a = {
		.version = SPIN_CSUM_ARGS_VERSION, .flags = SPIN_CSUM_F_COPY,
		.result_off = SPIN_CSUM_RESULT_AFTER,
	};

	return ctx_new(rt, "checksum", &a, sizeof(a));
}

/*
 * One message of @p len bytes in packets of 100 (in order) on @p ctx,
 * every HPU polled in turn until msg_done. Packets are all delivered
 * before the first poll, so that with one HPU the handlers run in
 * order: header, payloads by offset, completion.
 */
static void
run_msg(struct spin_rt *rt, uint32_t ctx, struct test_host *host,
	uint64_t len, uint64_t msg_id, uint32_t src_nid, unsigned seed)
{
	struct spin_msg_info info = {
		.length = len, .msg_id = msg_id, .src_nid = src_nid,
	};
	uint8_t *data = malloc(len + 1);
	uint64_t want = ndone + 1, off, i;
	struct spin_msg *m;
	unsigned n = 0;

	assert_non_null(data);
	for (i = 0; i < len; i++)
		data[i] = (uint8_t)rand_r(&seed);
	m = spin_msg_start(rt, ctx, &info, host, TEST_ADDR, host->len, NULL);
	assert_non_null(m);
	for (off = 0; off < len; off += 100)
		test_deliver(rt, m, data, off,
			     (uint32_t)RTE_MIN(100ull, len - off));
	while (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) < want) {
		spin_hpu_poll(rt, n % spin_rt_nhpu(rt), 3);
		assert_true(++n < 10000000);
	}
	free(data);
}

static void
check_kind(const struct spin_handler_stats *s, unsigned kind, uint64_t ok,
	   uint64_t drop, uint64_t proceed, uint64_t error)
{
	const struct spin_hkind_stats *k = &s->kind[kind];
	uint64_t sum = 0;
	unsigned b;

	assert_int_equal(k->rc[SPIN_SUCCESS], ok);
	assert_int_equal(k->rc[SPIN_DROP], drop);
	assert_int_equal(k->rc[SPIN_PROCEED], proceed);
	assert_int_equal(k->rc[SPIN_ERROR], error);
	assert_int_equal(k->calls, ok + drop + proceed + error);
	for (b = 0; b < SPIN_HSTAT_BUCKETS; b++)
		sum += k->hist[b];
	assert_int_equal(sum, k->timed);
	assert_int_equal(k->timed, k->calls); /* every call timed here */
	if (k->calls == 0) {
		assert_int_equal(k->cycles, 0);
		assert_int_equal(k->max_cycles, 0);
		return;
	}
	/* durations were measured: every call took some cycles */
	assert_true(k->cycles > 0);
	assert_true(k->max_cycles > 0);
	assert_true(k->max_cycles <= k->cycles);
	assert_true(spin_hkind_quantile(k, 0.99) > 0);
	assert_true(spin_hkind_quantile(k, 0.99) <= k->max_cycles);
}

/* ---- tests ------------------------------------------------------------------ */

/*
 * Two checksum contexts, two HPUs: header = messages, payload = packets,
 * completion = messages, per context and summed for the family; DMA bytes
 * exact (payload copies and the 32-byte result); other families untouched.
 */
static void
test_counts(void **state)
{
	struct spin_rt *rt = rt_new(2, 0, 0);
	struct spin_handler_stats fs, cs;
	struct spin_ctx_stats st;
	struct test_host ha, hb;
	uint32_t a, b;
	unsigned i;

	RTE_SET_USED(state);
	assert_int_equal(spin_rt_nfamilies(rt), F_COUNT);
	assert_ptr_equal(spin_rt_family(rt, F_CHECKSUM),
			 &spin_handlers_checksum);
	assert_ptr_equal(spin_rt_family(rt, F_PLAIN), &fam_plain);
	assert_null(spin_rt_family(rt, F_COUNT));
	assert_int_equal(spin_rt_family_stats(rt, F_COUNT, &fs), -EINVAL);
	a = csum_ctx(rt);
	b = csum_ctx(rt);
	test_host_init(&ha, 1000 + 32, 1);
	test_host_init(&hb, 250 + 32, 0); /* the slow path: dma_write */
	for (i = 0; i < 3; i++)
		run_msg(rt, a, &ha, 1000, i, 0, i);
	for (i = 0; i < 2; i++)
		run_msg(rt, b, &hb, 250, 10 + i, 0, i);
	assert_int_equal(test_pkts_live, 0);

	assert_int_equal(spin_rt_ctx_handler_stats(rt, a, &cs), 0);
	check_kind(&cs, SPIN_HK_HEADER, 3, 0, 0, 0);
	check_kind(&cs, SPIN_HK_PAYLOAD, 30, 0, 0, 0);
	check_kind(&cs, SPIN_HK_COMPLETION, 3, 0, 0, 0);
	check_kind(&cs, SPIN_HK_OUTBOUND, 0, 0, 0, 0);
	assert_int_equal(cs.calls, 36);
	assert_int_equal(cs.errors, 0);
	assert_int_equal(cs.over_budget, 0);
	assert_int_equal(cs.dma_bytes_to, 3 * (1000 + 32));
	assert_int_equal(cs.dma_bytes_from, 0);
	assert_int_equal(spin_rt_ctx_stats(rt, a, &st), 0);
	assert_int_equal(st.hers, 36);
	assert_int_equal(st.rc[SPIN_SUCCESS], 36);
	assert_int_equal(st.family, F_CHECKSUM);
	assert_int_equal(st.owner, 1);
	assert_int_equal(st.live, 1);

	assert_int_equal(spin_rt_ctx_handler_stats(rt, b, &cs), 0);
	check_kind(&cs, SPIN_HK_HEADER, 2, 0, 0, 0);
	check_kind(&cs, SPIN_HK_PAYLOAD, 6, 0, 0, 0);
	check_kind(&cs, SPIN_HK_COMPLETION, 2, 0, 0, 0);
	assert_int_equal(cs.dma_bytes_to, 2 * (250 + 32));

	assert_int_equal(spin_rt_family_stats(rt, F_CHECKSUM, &fs), 0);
	check_kind(&fs, SPIN_HK_HEADER, 5, 0, 0, 0);
	check_kind(&fs, SPIN_HK_PAYLOAD, 36, 0, 0, 0);
	check_kind(&fs, SPIN_HK_COMPLETION, 5, 0, 0, 0);
	check_kind(&fs, SPIN_HK_OUTBOUND, 0, 0, 0, 0);
	assert_int_equal(fs.calls, 46);
	assert_int_equal(fs.dma_bytes_to, 3 * 1032 + 2 * 282);
	assert_int_equal(fs.dma_rejects + fs.dma_failures + fs.put_errors, 0);
	for (i = F_OUTCOMES; i < F_COUNT; i++) {
		assert_int_equal(spin_rt_family_stats(rt, i, &fs), 0);
		assert_int_equal(fs.calls, 0);
	}

	/* a context's counts go with it, its family's stay */
	assert_int_equal(spin_rt_ctx_free(rt, 1, a), 0);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, a, &cs), -ENOENT);
	assert_int_equal(spin_rt_family_stats(rt, F_CHECKSUM, &fs), 0);
	assert_int_equal(fs.calls, 46);
	test_host_fini(&ha);
	test_host_fini(&hb);
	spin_rt_destroy(rt);
}

/* outcomes by kind, DMA both ways, rejects, put errors */
/*
 * Sampled payload timing (handler_time_every 8): every invocation
 * counted, about one payload invocation in 8 timed (the histogram holds
 * the timed ones), header and completion all timed; with a budget, or
 * with a trace, every one is timed again; more than 2^20 refused.
 */
static void
test_sampled(void **state)
{
	struct spin_rt_conf c = {
		.nic_mem = 1 << 20, .nhpu = 2, .max_ctxs = 16,
		.max_owners = 4, .pkt_payload = 100, .ops = &ops,
		.families = fams, .handler_time_every = 8,
	};
	const struct spin_hkind_stats *k;
	struct spin_handler_stats cs;
	struct spin_hpu_stats hs;
	struct test_host h;
	struct spin_rt *rt;
	uint64_t sum = 0;
	unsigned i, b, pass;
	uint32_t a;

	RTE_SET_USED(state);
	for (pass = 0; pass < 3; pass++) {
		c.handler_budget_ns = pass == 1 ? 1000000000ull : 0;
		c.handler_trace = pass == 2 ? 16 : 0;
		rt = spin_rt_create(&c);
		assert_non_null(rt);
		a = csum_ctx(rt);
		test_host_init(&h, 1000 + 32, 1);
		for (i = 0; i < 40; i++)
			run_msg(rt, a, &h, 1000, i, 0, i);
		assert_int_equal(spin_rt_ctx_handler_stats(rt, a, &cs), 0);
		assert_int_equal(cs.kind[SPIN_HK_HEADER].timed, 40);
		assert_int_equal(cs.kind[SPIN_HK_COMPLETION].timed, 40);
		k = &cs.kind[SPIN_HK_PAYLOAD];
		assert_int_equal(k->rc[SPIN_SUCCESS], 400);
		assert_int_equal(k->calls, 400);
		assert_int_equal(cs.dma_bytes_to, 40 * (1000 + 32));
		for (b = 0, sum = 0; b < SPIN_HSTAT_BUCKETS; b++)
			sum += k->hist[b];
		assert_int_equal(sum, k->timed);
		if (pass < 2) {
			/* 400 draws of 1 in 8: 50 expected; a budget (of
			 * 1 s, never reached) checks the others by bursts */
			assert_true(k->timed >= 20 && k->timed <= 100);
		} else {
			assert_int_equal(k->timed, 400);
		}
		assert_true(k->cycles > 0);
		assert_true(spin_hkind_quantile(k, 0.5) > 0);
		/* the untimed calls reach the family's and HPUs' counters */
		assert_int_equal(spin_rt_family_stats(rt, F_CHECKSUM, &cs), 0);
		assert_int_equal(cs.kind[SPIN_HK_PAYLOAD].calls, 400);
		assert_int_equal(cs.kind[SPIN_HK_PAYLOAD].rc[SPIN_SUCCESS], 400);
		assert_int_equal(cs.dma_bytes_to, 40 * (1000 + 32));
		memset(&hs, 0, sizeof(hs));
		for (b = 0; b < 2; b++) {
			struct spin_hpu_stats one;

			assert_int_equal(spin_hpu_stats(rt, b, &one), 0);
			hs.pay += one.pay;
			hs.hers += one.hers;
			hs.rc[SPIN_SUCCESS] += one.rc[SPIN_SUCCESS];
		}
		assert_int_equal(hs.pay, 400);
		assert_int_equal(hs.hers, 480);
		assert_int_equal(hs.rc[SPIN_SUCCESS], 480);
		test_host_fini(&h);
		spin_rt_destroy(rt);
	}
	assert_int_equal(test_pkts_live, 0);
	c.handler_time_every = (1u << 20) + 1;
	c.handler_budget_ns = 0;
	c.handler_trace = 0;
	assert_null(spin_rt_create(&c));
	assert_int_equal(errno, EINVAL);
}

/*
 * A budget with sampled payload timing: the untimed calls are checked by
 * their HPU's bursts. Fast calls: sampled, no recheck. Calls of twice the
 * budget: the first burst over it makes the HPU time every payload call,
 * so all but the first burst's (at most 3: run_msg polls 3 at a time) are
 * counted over budget; the recheck times SPIN_BUDGET_RECHECK calls, then
 * sampling resumes.
 */
static void
test_budget_bursts(void **state)
{
	struct spin_rt_conf c = {
		.nic_mem = 1 << 20, .nhpu = 1, .max_ctxs = 16,
		.max_owners = 4, .pkt_payload = 100, .ops = &ops,
		.families = fams, .handler_time_every = 64,
		.handler_budget_ns = 1000000, /* 1 ms */
	};
	uint64_t budget_cyc = rte_get_tsc_hz() / 1000, re, calls, timed;
	const struct spin_hkind_stats *k;
	struct spin_handler_stats cs;
	struct spin_hpu_stats hs;
	struct test_host h;
	struct spin_rt *rt;
	uint32_t a, s;
	unsigned i;

	RTE_SET_USED(state);
	rt = spin_rt_create(&c);
	assert_non_null(rt);
	a = csum_ctx(rt);
	s = ctx_new(rt, "slow", NULL, 0);
	test_host_init(&h, 1000 + 32, 1);
	/* fast: 400 calls, about 6 timed, none over */
	for (i = 0; i < 40; i++)
		run_msg(rt, a, &h, 1000, i, 0, i);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, a, &cs), 0);
	k = &cs.kind[SPIN_HK_PAYLOAD];
	assert_int_equal(k->calls, 400);
	assert_int_equal(k->over_budget, 0);
	assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
	/* a recheck only if this process was descheduled for 1 ms */
	assert_true(hs.budget_rechecks > 0 || k->timed < 60);
	/* slow: 10 calls of 2 ms */
	slow_cycles = 2 * budget_cyc;
	re = hs.budget_rechecks;
	run_msg(rt, s, &h, 1000, 100, 0, 1);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, s, &cs), 0);
	k = &cs.kind[SPIN_HK_PAYLOAD];
	assert_int_equal(k->calls, 10);
	assert_true(k->over_budget >= 7 && k->over_budget <= 10);
	assert_true(k->timed >= k->over_budget);
	assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
	assert_true(hs.budget_rechecks > re);
	/* fast again on the same context: every call timed for the rest of
	 * the recheck, then sampled */
	slow_cycles = 0;
	re = hs.budget_rechecks;
	timed = k->timed;
	for (i = 0; i < 50; i++)
		run_msg(rt, s, &h, 1000, 200 + i, 0, i);
	assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, s, &cs), 0);
	k = &cs.kind[SPIN_HK_PAYLOAD];
	assert_int_equal(k->calls, 510);
	if (hs.budget_rechecks == re)
		assert_int_equal(k->timed - timed, 500);
	calls = k->calls;
	for (i = 0; i < 150; i++)
		run_msg(rt, s, &h, 1000, 300 + i, 0, i);
	assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, s, &cs), 0);
	k = &cs.kind[SPIN_HK_PAYLOAD];
	assert_int_equal(k->calls, calls + 1500);
	if (hs.budget_rechecks == re) {
		/* at most SPIN_BUDGET_RECHECK after the slow ones, then
		 * about 1 in 64 of the rest */
		assert_true(k->timed - timed <= SPIN_BUDGET_RECHECK + 100);
		assert_true(k->timed - timed >= SPIN_BUDGET_RECHECK - 10);
	}
	test_host_fini(&h);
	spin_rt_destroy(rt);
	assert_int_equal(test_pkts_live, 0);
}

static void
test_outcomes(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0);
	struct spin_handler_stats fs, cs;
	struct test_host host;
	uint32_t c;
	unsigned pass;

	RTE_SET_USED(state);
	c = ctx_new(rt, "outcomes", NULL, 0);
	test_host_init(&host, 600, 1);
	run_msg(rt, c, &host, 600, 1, 0, 1);
	assert_int_equal(last_res.status, SPIN_ERROR);
	for (pass = 0; pass < 2; pass++) {
		struct spin_handler_stats *s = pass == 0 ? &cs : &fs;

		if (pass == 0)
			assert_int_equal(spin_rt_ctx_handler_stats(rt, c, s), 0);
		else
			assert_int_equal(spin_rt_family_stats(rt, F_OUTCOMES,
							      s), 0);
		check_kind(s, SPIN_HK_HEADER, 1, 0, 0, 0);
		/* 400, 500 ok; 0 (returned) and 100 (rejected DMA) errors */
		check_kind(s, SPIN_HK_PAYLOAD, 2, 1, 1, 2);
		check_kind(s, SPIN_HK_COMPLETION, 0, 0, 0, 1);
		assert_int_equal(s->calls, 8);
		assert_int_equal(s->errors, 3);
		/* the handlers' own: not the proceeded packet's 100 bytes */
		assert_int_equal(s->dma_bytes_to, 200);
		assert_int_equal(s->dma_bytes_from, 6 * 8);
		assert_int_equal(s->dma_rejects, 1);
		assert_int_equal(s->dma_failures, 0);
		assert_int_equal(s->put_errors, 1);
	}
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* the log lines of the test, captured */
static char *log_buf;
static size_t log_len;
static FILE *log_f;

static unsigned
log_count(const char *what)
{
	unsigned n = 0;
	const char *p;

	fflush(log_f);
	for (p = log_buf; p != NULL && (p = strstr(p, what)) != NULL; p++)
		n++;
	return n;
}

/*
 * A payload handler busy for twice the budget: counted over budget for
 * its family and context, and logged at once, then at most once a second
 * per family with the count of those not logged.
 */
static void
test_over_budget(void **state)
{
	const uint64_t budget_ns = 1000000; /* 1 ms */
	struct spin_rt *rt = rt_new(1, budget_ns, 0);
	uint64_t budget_cyc = rte_get_tsc_hz() / 1000;
	struct spin_handler_stats fs, cs;
	struct test_host host;
	char line[256];
	FILE *old = rte_log_get_stream();
	uint32_t old_level, c;
	unsigned pass;

	RTE_SET_USED(state);
	log_f = open_memstream(&log_buf, &log_len);
	assert_non_null(log_f);
	assert_int_equal(rte_openlog_stream(log_f), 0);
	/* the EAL runs at --log-level=4 (errors): let warnings through */
	old_level = rte_log_get_global_level();
	rte_log_set_global_level(RTE_LOG_WARNING);
	slow_cycles = 2 * budget_cyc;
	c = ctx_new(rt, "slow", NULL, 0);
	test_host_init(&host, 300, 1);
	run_msg(rt, c, &host, 300, 1, 0, 1);
	for (pass = 0; pass < 2; pass++) {
		struct spin_handler_stats *s = pass == 0 ? &cs : &fs;
		const struct spin_hkind_stats *k = &s->kind[SPIN_HK_PAYLOAD];

		if (pass == 0)
			assert_int_equal(spin_rt_ctx_handler_stats(rt, c, s), 0);
		else
			assert_int_equal(spin_rt_family_stats(rt, F_SLOW, s), 0);
		check_kind(s, SPIN_HK_PAYLOAD, 3, 0, 0, 0);
		assert_int_equal(k->over_budget, 3);
		assert_true(s->over_budget >= 3); /* header: if preempted */
		assert_true(k->max_cycles >= 2 * budget_cyc);
		assert_true(k->cycles >= 6 * budget_cyc);
		assert_true(spin_hkind_quantile(k, 0.99) > budget_cyc);
	}
	/* one line for three: the family's next line is a second away */
	assert_int_equal(log_count("handler over budget"), 1);
	snprintf(line, sizeof(line), "family slow, payload handler, context %" PRIu32 " of client 1, ",
		 c);
	assert_int_equal(log_count(line), 1);
	assert_int_equal(log_count("(budget 1000.0 us)"), 1);
	assert_int_equal(log_count("; 0 more over budget not logged"), 1);
	/* a second later: the next one is logged, with the two not logged */
	usleep(1100000);
	run_msg(rt, c, &host, 100, 2, 0, 2);
	assert_int_equal(log_count("handler over budget"), 2);
	assert_int_equal(log_count("; 2 more over budget not logged"), 1);
	assert_int_equal(spin_rt_family_stats(rt, F_SLOW, &fs), 0);
	assert_int_equal(fs.kind[SPIN_HK_PAYLOAD].over_budget, 4);
	/* the other families: nothing */
	assert_int_equal(spin_rt_family_stats(rt, F_PLAIN, &fs), 0);
	assert_int_equal(fs.over_budget, 0);
	rte_log_set_global_level(old_level);
	rte_openlog_stream(old);
	fclose(log_f);
	free(log_buf);
	log_buf = NULL;
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/*
 * One HPU, a ring of 8: after a message of a header, 10 payloads and a
 * completion (12 invocations) the ring holds the last 8, oldest first,
 * with their fields; paging with `from`; outcomes and outbound jobs in it.
 */
static void
test_trace(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 8);
	struct spin_trace_entry e[16];
	struct test_host host;
	uint64_t head, prev_tsc = 0;
	uint32_t c;
	int n, i;

	RTE_SET_USED(state);
	c = ctx_new(rt, "plain", NULL, 0);
	test_host_init(&host, 1000, 1);
	assert_int_equal(spin_rt_ctx_trace(rt, c, 0, e, 16, &head), 0);
	assert_int_equal(head, 0);
	run_msg(rt, c, &host, 937, 77, 5, 1);

	n = spin_rt_ctx_trace(rt, c, 0, e, 16, &head);
	assert_int_equal(head, 12);
	assert_int_equal(n, 8);
	for (i = 0; i < n; i++) {
		assert_int_equal(e[i].seq, 5 + i);
		assert_int_equal(e[i].msg_id, 77);
		assert_int_equal(e[i].src_nid, 5);
		assert_int_equal(e[i].rc, SPIN_SUCCESS);
		assert_int_equal(e[i].hpu, 0);
		assert_int_equal(e[i].vhpu, SPIN_VHPU_NONE);
		assert_true(e[i].cycles > 0);
		assert_true(e[i].tsc > prev_tsc);
		prev_tsc = e[i].tsc;
		if (i < 7) {
			/* seq 2 is the packet at 0: seq 5 the one at 300 */
			assert_int_equal(e[i].kind, SPIN_HK_PAYLOAD);
			assert_int_equal(e[i].offset, 300 + 100 * i);
			assert_int_equal(e[i].len, i == 6 ? 37 : 100);
		} else {
			assert_int_equal(e[i].kind, SPIN_HK_COMPLETION);
			assert_int_equal(e[i].offset, 0);
			assert_int_equal(e[i].len, 937);
		}
	}
	/* from 6, three of them; from before the oldest: the oldest on */
	n = spin_rt_ctx_trace(rt, c, 6, e, 3, NULL);
	assert_int_equal(n, 3);
	assert_int_equal(e[0].seq, 6);
	assert_int_equal(e[2].seq, 8);
	assert_int_equal(e[2].offset, 600);
	n = spin_rt_ctx_trace(rt, c, 1, e, 2, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].seq, 5);
	/* the last 2 */
	n = spin_rt_ctx_trace(rt, c, 0, e, 2, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].seq, 11);
	assert_int_equal(e[1].seq, 12);
	assert_int_equal(spin_rt_ctx_trace(rt, c, 13, e, 2, NULL), 0);

	/* a second message, its packet at 100 failing: header first */
	trace_err_off = 100;
	run_msg(rt, c, &host, 200, 78, 6, 2);
	trace_err_off = UINT64_MAX;
	n = spin_rt_ctx_trace(rt, c, 0, e, 4, &head);
	assert_int_equal(head, 16);
	assert_int_equal(n, 4);
	assert_int_equal(e[0].kind, SPIN_HK_HEADER);
	assert_int_equal(e[0].len, 200);
	assert_int_equal(e[1].kind, SPIN_HK_PAYLOAD);
	assert_int_equal(e[1].rc, SPIN_SUCCESS);
	assert_int_equal(e[2].kind, SPIN_HK_PAYLOAD);
	assert_int_equal(e[2].offset, 100);
	assert_int_equal(e[2].rc, SPIN_ERROR);
	assert_int_equal(e[3].kind, SPIN_HK_COMPLETION);
	for (i = 0; i < n; i++) {
		assert_int_equal(e[i].msg_id, 78);
		assert_int_equal(e[i].src_nid, 6);
	}
	test_host_fini(&host);

	/* no trace configured: none to read */
	spin_rt_destroy(rt);
	rt = rt_new(1, 0, 0);
	c = ctx_new(rt, "plain", NULL, 0);
	assert_int_equal(spin_rt_ctx_trace(rt, c, 0, e, 16, NULL), -ENODATA);
	assert_int_equal(spin_rt_ctx_trace(rt, c + 1, 0, e, 16, NULL),
			 -ENOENT);
	spin_rt_destroy(rt);
	/* a ring larger than the bound: refused */
	{
		struct spin_rt_conf cf = {
			.ops = &ops, .families = fams,
			.handler_trace = SPIN_TRACE_MAX + 1,
		};

		assert_null(spin_rt_create(&cf));
		assert_int_equal(errno, EINVAL);
	}
}

/* sender-side jobs: counted as outbound, bytes read, one rejected; traced */
static void
test_outbound(void **state)
{
	struct spin_rt *rt = rt_new(2, 0, 4);
	struct spin_out_job jobs[5], *done[8];
	struct spin_handler_stats fs, cs;
	struct spin_trace_entry e[4];
	struct test_host host;
	uint8_t dst[5][64];
	unsigned i, got = 0, n = 0;
	uint64_t head;
	uint32_t c;
	int k;

	RTE_SET_USED(state);
	c = ctx_new(rt, "plain", NULL, 0);
	test_host_init(&host, 256, 1);
	for (i = 0; i < 5; i++) {
		struct spin_out_job *j = &jobs[i];

		memset(j, 0, sizeof(*j));
		j->ctx = c;
		/* job 4 reads past the window: rejected */
		j->offset = i == 4 ? 250 : i * 64;
		j->len = 64;
		j->dst = dst[i];
		j->host = &host;
		j->win_addr = TEST_ADDR;
		j->win_len = host.len;
		assert_int_equal(spin_out_submit(rt, j), 0);
	}
	while (got < 5) {
		spin_hpu_poll(rt, n % 2, 2);
		got += spin_out_done_burst(rt, done, 8);
		assert_true(++n < 1000000);
	}
	assert_int_equal(spin_rt_ctx_handler_stats(rt, c, &cs), 0);
	assert_int_equal(spin_rt_family_stats(rt, F_PLAIN, &fs), 0);
	check_kind(&cs, SPIN_HK_OUTBOUND, 4, 0, 0, 1);
	check_kind(&fs, SPIN_HK_OUTBOUND, 4, 0, 0, 1);
	check_kind(&fs, SPIN_HK_PAYLOAD, 0, 0, 0, 0);
	assert_int_equal(cs.dma_bytes_from, 4 * 64);
	assert_int_equal(fs.dma_bytes_from, 4 * 64);
	assert_int_equal(cs.dma_rejects, 1);
	assert_int_equal(fs.dma_rejects, 1);
	assert_int_equal(cs.dma_bytes_to + fs.dma_bytes_to, 0);
	/* the last four, every one an outbound job */
	k = spin_rt_ctx_trace(rt, c, 0, e, 4, &head);
	assert_int_equal(head, 5);
	assert_int_equal(k, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(e[i].seq, 2 + i);
		assert_int_equal(e[i].kind, SPIN_HK_OUTBOUND);
		assert_int_equal(e[i].len, 64);
		assert_int_equal(e[i].msg_id, 0);
		assert_true(e[i].hpu < 2);
	}
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* two HPU threads polling, the test thread reading the trace meanwhile */
static struct spin_rt *thr_rt;
static uint32_t thr_stop;

static void *
poller(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	while (!__atomic_load_n(&thr_stop, __ATOMIC_ACQUIRE))
		spin_hpu_poll(thr_rt, id, 8);
	return NULL;
}

/*
 * Two HPUs on their own threads run a message of 2000 packets while the
 * trace (a ring of 4) is read over and over: every entry read is whole
 * (its fields agree with each other) and the entries of one read are in
 * order; the counts summed over the two HPUs are exact.
 */
static void
test_threads(void **state)
{
	const uint64_t len = 2000 * 100;
	struct spin_rt *rt = rt_new(2, 0, 4);
	struct spin_msg_info info = { .length = len, .msg_id = 99 };
	struct spin_handler_stats fs, cs;
	struct spin_trace_entry e[4];
	struct test_host host;
	pthread_t th[2];
	struct spin_msg *m;
	uint8_t *data = calloc(1, len);
	uint64_t off, reads = 0, seen = 0, head;
	uint32_t c;
	unsigned i;
	int n, k;

	RTE_SET_USED(state);
	assert_non_null(data);
	c = ctx_new(rt, "plain", NULL, 0);
	test_host_init(&host, len, 1);
	thr_rt = rt;
	thr_stop = 0;
	ndone = 0;
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, poller,
						(void *)(uintptr_t)i), 0);
	m = spin_msg_start(rt, c, &info, &host, TEST_ADDR, len, NULL);
	assert_non_null(m);
	for (off = 0; off < len || __atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == 0;
	     off += 100) {
		if (off < len) {
			struct test_pkt *p = test_pkt_new(data + off, 100);

			assert_int_equal(spin_msg_packet(m, p->data, 100, off,
							 p), 0);
		}
		n = spin_rt_ctx_trace(rt, c, 0, e, 4, NULL);
		assert_true(n >= 0 && n <= 4);
		for (k = 0; k < n; k++) {
			assert_int_equal(e[k].msg_id, 99);
			assert_true(e[k].hpu < 2);
			assert_int_equal(e[k].rc, SPIN_SUCCESS);
			if (k > 0)
				assert_true(e[k].seq > e[k - 1].seq);
			if (e[k].kind == SPIN_HK_PAYLOAD) {
				assert_int_equal(e[k].len, 100);
				assert_int_equal(e[k].offset % 100, 0);
				assert_true(e[k].offset < len);
			} else {
				assert_true(e[k].kind == SPIN_HK_HEADER ||
					    e[k].kind == SPIN_HK_COMPLETION);
				assert_int_equal(e[k].len, len);
			}
		}
		reads++;
		seen += (uint64_t)n;
		/* three threads on what may be fewer cores: let HPUs run */
		sched_yield();
		assert_true(reads < 100000000);
	}
	__atomic_store_n(&thr_stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* at rest: the last four, the completion last */
	n = spin_rt_ctx_trace(rt, c, 0, e, 4, &head);
	assert_int_equal(head, 2002);
	assert_int_equal(n, 4);
	assert_int_equal(e[0].seq, 1999);
	assert_int_equal(e[3].kind, SPIN_HK_COMPLETION);
	print_message("%" PRIu64 " trace reads while running, %" PRIu64
		      " entries\n", reads, seen);
	assert_int_equal(last_res.status, SPIN_SUCCESS);
	assert_memory_equal(test_host_win(&host), data, len);
	assert_int_equal(spin_rt_family_stats(rt, F_PLAIN, &fs), 0);
	assert_int_equal(spin_rt_ctx_handler_stats(rt, c, &cs), 0);
	check_kind(&fs, SPIN_HK_HEADER, 1, 0, 0, 0);
	check_kind(&fs, SPIN_HK_PAYLOAD, 2000, 0, 0, 0);
	check_kind(&fs, SPIN_HK_COMPLETION, 1, 0, 0, 0);
	check_kind(&cs, SPIN_HK_HEADER, 1, 0, 0, 0);
	check_kind(&cs, SPIN_HK_PAYLOAD, 2000, 0, 0, 0);
	check_kind(&cs, SPIN_HK_COMPLETION, 1, 0, 0, 0);
	assert_int_equal(fs.dma_bytes_to, len);
	assert_int_equal(cs.dma_bytes_to, len);
	assert_int_equal(test_pkts_live, 0);
	test_host_fini(&host);
	free(data);
	spin_rt_destroy(rt);
}

/* iterating over the contexts that exist */
static void
test_ctx_next(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0);
	uint32_t h[3], got[4], pos = 0, x;
	struct spin_ctx_stats st;
	unsigned n = 0;

	RTE_SET_USED(state);
	h[0] = csum_ctx(rt);
	h[1] = ctx_new(rt, "plain", NULL, 0);
	h[2] = ctx_new(rt, "slow", NULL, 0);
	assert_int_equal(spin_rt_ctx_free(rt, 1, h[1]), 0);
	while (spin_rt_ctx_next(rt, &pos, &x) == 0) {
		assert_true(n < 4);
		got[n++] = x;
	}
	assert_int_equal(n, 2);
	assert_int_equal(got[0], h[0]);
	assert_int_equal(got[1], h[2]);
	assert_int_equal(spin_rt_ctx_next(rt, &pos, &x), -ENOENT);
	assert_int_equal(spin_rt_ctx_stats(rt, h[2], &st), 0);
	assert_int_equal(st.family, F_SLOW);
	spin_rt_destroy(rt);
}

/*
 * payload_burst: packets of one message queued together go to it in runs
 * (in the order one by one would take: the queue's, or each vHPU's),
 * cut before each packet the runtime times, which goes alone through
 * payload; outcomes counted per packet as if one by one, except that a
 * DMA rejected in a burst call makes every SPIN_SUCCESS of that call an
 * error; with every call timed, or a trace, there are no bursts.
 * Passes: 0 sampled 1 in 8; 1 the same, blocked-RR (4-packet sequences,
 * 2 vHPUs); 2 every call timed; 3 sampled with a trace.
 */
static void
test_bursts(void **state)
{
	struct spin_rt_conf c = {
		.nic_mem = 1 << 20, .nhpu = 1, .max_ctxs = 16,
		.max_owners = 4, .pkt_payload = 100, .ops = &ops,
		.families = fams,
	};
	enum { NPKT = 40, LEN = NPKT * 100 };
	static uint8_t data[LEN];
	unsigned pass, i, j, msg;

	RTE_SET_USED(state);
	for (i = 0; i < LEN; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	for (pass = 0; pass < 4; pass++) {
		struct spin_ctx_conf cc = { .family = "bursty" };
		uint64_t rcs[4] = { 0 }, singles = 0, timed_want;
		struct spin_handler_stats cs;
		struct spin_hpu_stats hs;
		struct test_host h;
		struct spin_rt *rt;
		uint32_t a;

		c.handler_time_every = pass == 2 ? 1 : 8;
		c.handler_trace = pass == 3 ? 16 : 0;
		if (pass == 1) {
			cc.policy = SPINNIC_SCHED_BLOCKED_RR;
			cc.delta_p = 4;
			cc.nvhpu = 2;
		}
		rt = spin_rt_create(&c);
		assert_non_null(rt);
		assert_int_equal(spin_rt_ctx_create(rt, 1, &cc, &a), 0);
		test_host_init(&h, LEN, 1);
		for (msg = 0; msg < 4; msg++) {
			struct spin_msg_info info = { .length = LEN,
						      .msg_id = msg };
			uint64_t want = ndone + 1;
			struct spin_msg *m;
			uint64_t off;

			nblog = 0;
			nbcalls = 0;
			memset(h.mem + TEST_GUARD, 0, LEN);
			m = spin_msg_start(rt, a, &info, &h, TEST_ADDR, h.len,
					   NULL);
			assert_non_null(m);
			/* the header first, then every packet queued at once */
			while (spin_hpu_poll(rt, 0, 1) != 0)
				;
			for (off = 0; off < LEN; off += 100)
				test_deliver(rt, m, data, off, 100);
			for (i = 0; __atomic_load_n(&ndone, __ATOMIC_ACQUIRE) <
				    want; i++) {
				spin_hpu_poll(rt, 0, 64);
				assert_true(i < 1000000);
			}
			assert_int_equal(nblog, NPKT);
			for (i = 0; i < NPKT; i++) {
				const struct blog *l = &blog[i];
				bool err_call = false;
				unsigned k;

				for (k = 0; k < NPKT && l->call != 0; k++)
					if (blog[k].call == l->call &&
					    blog[k].off == 100)
						err_call = true;
				/* the outcome counted for this packet */
				if (l->off == 0 || l->off == 100)
					rcs[SPIN_ERROR]++;
				else if (l->off == 200)
					rcs[SPIN_DROP]++;
				else if (l->off == 300)
					rcs[SPIN_PROCEED]++;
				else if (err_call)
					rcs[SPIN_ERROR]++;
				else
					rcs[SPIN_SUCCESS]++;
				singles += l->call == 0;
				/* placed: copied (error or not) or proceeded */
				if (l->off != 0 && l->off != 100 &&
				    l->off != 200)
					assert_memory_equal(h.mem + TEST_GUARD +
							    l->off,
							    data + l->off, 100);
				else
					for (k = 0; k < 100; k++)
						assert_int_equal(h.mem[TEST_GUARD +
							l->off + k], 0);
				/* run in order: by offset on the one queue,
				 * within each vHPU under blocked-RR */
				for (k = i + 1; k < NPKT; k++)
					if (pass != 1 ||
					    blog[k].vhpu == l->vhpu)
						assert_true(blog[k].off > l->off);
				/* a burst call holds one vHPU's packets */
				for (k = 0; k < NPKT && l->call != 0; k++)
					if (blog[k].call == l->call)
						assert_int_equal(blog[k].vhpu,
								 l->vhpu);
			}
			if (pass >= 2)
				assert_int_equal(nbcalls, 0);
			else
				assert_true(nbcalls >= 2);
		}
		test_host_check_guards(&h);
		assert_int_equal(spin_rt_ctx_handler_stats(rt, a, &cs), 0);
		assert_int_equal(cs.kind[SPIN_HK_PAYLOAD].calls, 4 * NPKT);
		for (j = 0; j < 4; j++)
			assert_int_equal(cs.kind[SPIN_HK_PAYLOAD].rc[j],
					 rcs[j]);
		/* timed calls went alone through payload */
		timed_want = cs.kind[SPIN_HK_PAYLOAD].timed;
		assert_true(timed_want <= singles);
		if (pass == 0)
			assert_true(timed_want > 0 && timed_want < 4 * NPKT / 2);
		if (pass >= 2)
			assert_int_equal(timed_want, 4 * NPKT);
		assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
		assert_int_equal(hs.pay, 4 * NPKT);
		assert_int_equal(hs.rc[SPIN_ERROR] + hs.rc[SPIN_DROP] +
				 hs.rc[SPIN_PROCEED] + hs.rc[SPIN_SUCCESS],
				 hs.hers);
		if (pass >= 2)
			assert_int_equal(hs.bursts, 0);
		else
			assert_true(hs.bursts >= 8);
		assert_int_equal(spin_rt_family_stats(rt, F_BURSTY, &cs), 0);
		assert_int_equal(cs.kind[SPIN_HK_PAYLOAD].calls, 4 * NPKT);
		test_host_fini(&h);
		spin_rt_destroy(rt);
	}
	assert_int_equal(test_pkts_live, 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_bursts),
		cmocka_unit_test(test_budget_bursts),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_over_budget),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_outbound),
		cmocka_unit_test(test_ctx_next),
		cmocka_unit_test(test_threads),
	};

	RTE_SET_USED(argc);
	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
