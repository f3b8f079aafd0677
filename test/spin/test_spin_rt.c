/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/spin runtime: HER ordering with packets in any order, return codes,
 * DMA window checks, abort, resource exhaustion, NIC memory accounting,
 * contexts, blocked-RR exclusivity and vHPU ids under two polling threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "spin_test.h"

/* ---- a recording family ---------------------------------------------------- */

enum { EV_HDR = 1, EV_PAY, EV_CMPL, EV_DONE };

struct ev {
	int kind;
	uint64_t off;
	uint32_t hpu, vhpu;
};

#define NEV 8192
static struct ev evlog[NEV];
static uint32_t nev;
static int rec_hdr_rc, rec_pay_rc;
static uint64_t rec_fail_off = UINT64_MAX; /* payload rc only there */
static struct spin_done last_done;
static struct spin_msg_result last_res;
static void *last_app_msg;

static void
ev_add(int kind, uint64_t off, const struct spin_hctx *h)
{
	uint32_t i = __atomic_fetch_add(&nev, 1, __ATOMIC_ACQ_REL);

	assert_true(i < NEV);
	evlog[i] = (struct ev){ kind, off, h ? h->hpu : 0,
				h ? h->vhpu : 0 };
}

static void
ev_reset(void)
{
	nev = 0;
	rec_hdr_rc = rec_pay_rc = SPIN_SUCCESS;
	rec_fail_off = UINT64_MAX;
	memset(&last_res, 0, sizeof(last_res));
	memset(&last_done, 0, sizeof(last_done));
	test_done_calls = 0;
}

static int
rec_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	if (args_len != 0 && args_len != 8)
		return -EINVAL;
	return 0;
}

static int
rec_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	assert_int_equal(h->vhpu, SPIN_VHPU_NONE);
	ev_add(EV_HDR, 0, h);
	return rec_hdr_rc;
}

static int
rec_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	ev_add(EV_PAY, pkt->offset, h);
	assert_int_equal(pkt->index, pkt->offset / pkt->info->pkt_payload);
	assert_int_equal(spin_dma_to_host_nb(h, pkt->offset, pkt->payload,
					     pkt->len, SPIN_DMA_NO_EVENT), 0);
	if (rec_fail_off != UINT64_MAX)
		return pkt->offset == rec_fail_off ? rec_pay_rc : SPIN_SUCCESS;
	return rec_pay_rc;
}

static int
rec_completion(const struct spin_done *done, struct spin_hctx *h)
{
	ev_add(EV_CMPL, done->bytes, h);
	last_done = *done;
	/* paper 000 §3.2.2: a zero-byte DMA with event ends the message */
	assert_int_equal(spin_dma_to_host_nb(h, 0, NULL, 0, 0), 0);
	return SPIN_SUCCESS;
}

static void
rec_msg_done(void *app_msg, const struct spin_msg_result *r)
{
	ev_add(EV_DONE, 0, NULL);
	last_res = *r;
	last_app_msg = app_msg;
	__atomic_fetch_add(&test_done_calls, 1, __ATOMIC_RELEASE);
}

static const struct spin_handler_family fam_rec = {
	.name = "rec", .header = rec_header, .payload = rec_payload,
	.completion = rec_completion, .init = rec_init,
};
static const struct spin_handler_family fam_rec_nohdr = {
	.name = "rec_nohdr", .payload = rec_payload,
	.completion = rec_completion,
};
static const struct spin_handler_family fam_hdr_only = {
	.name = "hdr_only", .header = rec_header,
};

/* out-of-window DMAs and bad atomics, all rejected */
static int
oow_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	uint8_t b[2];
	uint64_t w = spin_hctx_win_len(h);

	assert_int_equal(spin_dma_to_host(h, w - 1, pkt->payload, 2, 0),
			 -ERANGE);
	assert_int_equal(spin_dma_to_host_nb(h, UINT64_MAX, pkt->payload, 2,
					     SPIN_DMA_NO_EVENT), -ERANGE);
	assert_int_equal(spin_dma_from_host(h, w, b, 1), -ERANGE);
	assert_int_equal(spin_put_from_host(h, &(struct spin_put_req){0},
					    w, 1), -ERANGE);
	/* in window is fine */
	assert_int_equal(spin_dma_from_host(h, w - 1, b, 1), 0);
	assert_int_equal(spin_nic_fetch_add(h, spin_hctx_state_len(h), 1,
					    NULL), -ERANGE);
	assert_int_equal(spin_nic_fetch_add(h, 4, 1, NULL), -ERANGE);
	assert_int_equal(spin_nic_fetch_add(h, 0, 1, NULL), 0);
	assert_int_equal(spin_put_from_nic(h, &(struct spin_put_req){0}, b, 1),
			 -ENOTSUP);
	assert_int_equal(spin_ct_inc(h, 1), -ENOTSUP);
	assert_null(spin_nicmem_map(h, 12345, NULL));
	return SPIN_SUCCESS;
}

static const struct spin_handler_family fam_oow = {
	.name = "oow", .payload = oow_payload,
};

/* ---- blocked-RR checker ---------------------------------------------------- */

#define BRR_PKT 256u
#define BRR_NPKT 64u
static uint32_t brr_delta, brr_nv;
static uint32_t brr_violations, brr_bad_vhpu, brr_running, brr_max_running;
static uint32_t brr_seen[BRR_NPKT];

static int
brr_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	uint32_t seq = pkt->index / brr_delta;
	uint32_t nv = brr_nv ? brr_nv : (BRR_NPKT + brr_delta - 1) / brr_delta;
	uint32_t r, m;
	volatile uint32_t spin;
	struct timespec t0, t1;

	if (spin_nic_cas(h, seq * 8, 0, 1, NULL) != 0)
		__atomic_fetch_add(&brr_violations, 1, __ATOMIC_RELAXED);
	if (h->vhpu != seq % nv)
		__atomic_fetch_add(&brr_bad_vhpu, 1, __ATOMIC_RELAXED);
	r = __atomic_add_fetch(&brr_running, 1, __ATOMIC_ACQ_REL);
	m = __atomic_load_n(&brr_max_running, __ATOMIC_RELAXED);
	while (r > m && !__atomic_compare_exchange_n(&brr_max_running, &m, r,
			true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	/* wait (up to 300 us) for another HPU to run a handler meanwhile */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (spin = 0; spin < 200; spin++)
			;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (__atomic_load_n(&brr_running, __ATOMIC_ACQUIRE) < 2 &&
		 (t1.tv_sec - t0.tv_sec) * 1000000000l +
		 (t1.tv_nsec - t0.tv_nsec) < 300000);
	__atomic_fetch_add(&brr_seen[pkt->index], 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&brr_running, 1, __ATOMIC_ACQ_REL);
	/* (no cmocka assert on an HPU thread: count) */
	if (spin_nic_cas(h, seq * 8, 1, 0, NULL) != 0)
		__atomic_fetch_add(&brr_violations, 1, __ATOMIC_RELAXED);
	return spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				   SPIN_DMA_NO_EVENT) == 0 ?
		SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family fam_brr = {
	.name = "brr", .payload = brr_payload, .completion = rec_completion,
};

/* ---- ordering under two HPUs: a slow header handler ---------------------- */

static uint32_t slow_hdr_done, slow_pays, slow_bad;

static int
slow_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	struct timespec t0, t1;

	/* long enough for the other HPU to take payload HERs if it may */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000l +
		 (t1.tv_nsec - t0.tv_nsec) < 2000000);
	__atomic_store_n(&slow_hdr_done, 1, __ATOMIC_RELEASE);
	return SPIN_SUCCESS;
}

static int
slow_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	if (!__atomic_load_n(&slow_hdr_done, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(&slow_bad, 1, __ATOMIC_RELAXED);
	sched_yield();
	if (spin_dma_to_host_nb(h, pkt->offset, pkt->payload, pkt->len,
				SPIN_DMA_NO_EVENT) != 0)
		return SPIN_ERROR;
	__atomic_fetch_add(&slow_pays, 1, __ATOMIC_RELEASE);
	return SPIN_SUCCESS;
}

static int
slow_completion(const struct spin_done *done, struct spin_hctx *h)
{
	if (__atomic_load_n(&slow_pays, __ATOMIC_ACQUIRE) != done->npkts)
		__atomic_fetch_add(&slow_bad, 1, __ATOMIC_RELAXED);
	return SPIN_SUCCESS;
}

static const struct spin_handler_family fam_slow = {
	.name = "slow", .header = slow_header, .payload = slow_payload,
	.completion = slow_completion,
};

/* ---- blobs mapped by a handler ----------------------------------------------- */

static struct spin_rt *blob_rt;
static uint64_t blob_usage_mid;

static int
blob_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const uint32_t *hs = spin_hctx_args(h);
	uint64_t len = 0;
	void *p = spin_nicmem_map(h, hs[0], &len);

	if (p == NULL || spin_nicmem_map(h, hs[1], NULL) != NULL)
		return SPIN_ERROR;
	/* the control path frees it meanwhile: stays until we return */
	if (spin_rt_nicmem_free(blob_rt, 1, hs[0]) != 0)
		return SPIN_ERROR;
	blob_usage_mid = spin_rt_nicmem_owner_usage(blob_rt, 1);
	if (spin_dma_to_host(h, 0, p, len, 0) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static const struct spin_handler_family fam_blob = {
	.name = "blob", .payload = blob_payload,
};

/* one strided DMA per packet, as strided_req says */
static struct {
	uint64_t off;
	int64_t stride;
	size_t blocklen;
	uint64_t n;
	int rc;
} strided_req;

static int
strided_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	assert_true(strided_req.blocklen * strided_req.n <= pkt->len);
	strided_req.rc = spin_dma_to_host_strided_nb(h, strided_req.off,
						     strided_req.stride,
						     pkt->payload,
						     strided_req.blocklen,
						     strided_req.n,
						     SPIN_DMA_NO_EVENT);
	return strided_req.rc == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family fam_strided = {
	.name = "strided", .payload = strided_payload,
};

static const struct spin_handler_family *const fams[] = {
	&fam_rec, &fam_rec_nohdr, &fam_hdr_only, &fam_oow, &fam_brr,
	&fam_slow, &fam_blob, &fam_strided, NULL,
};

static const struct spin_host_ops ops = {
	.direct = test_direct,
	.dma_write = test_dma_write,
	.dma_read = test_dma_read,
	.msg_done = rec_msg_done,
	.pkt_release = test_pkt_release,
};

static struct spin_rt *
rt_new(unsigned nhpu, unsigned max_hers, unsigned max_msgs, uint64_t nic_mem)
{
	struct spin_rt_conf c = {
		.nic_mem = nic_mem, .nhpu = nhpu, .max_hers = max_hers,
		.max_msgs = max_msgs, .max_ctxs = 16, .max_blobs = 64,
		.max_owners = 4, .max_vhpus = 32, .pkt_payload = 100,
		.ops = &ops, .families = fams,
	};
	struct spin_rt *rt = spin_rt_create(&c);

	assert_non_null(rt);
	return rt;
}

static uint32_t
ctx_new(struct spin_rt *rt, const char *fam, uint32_t policy,
	uint32_t delta_p, uint32_t nvhpu, uint32_t state_len)
{
	struct spin_ctx_conf c = {
		.family = fam, .state_len = state_len, .policy = policy,
		.delta_p = delta_p, .nvhpu = nvhpu,
	};
	uint32_t h;

	assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), 0);
	assert_int_not_equal(h, SPINNIC_HANDLE_NONE);
	return h;
}

static void
poll_until_done(struct spin_rt *rt, uint64_t ndone)
{
	unsigned i = 0;

	while (__atomic_load_n(&test_done_calls, __ATOMIC_ACQUIRE) < ndone) {
		spin_hpu_poll(rt, i % spin_rt_nhpu(rt), 3);
		assert_true(++i < 10000000);
	}
}

static uint8_t *
msg_data(uint64_t len, unsigned seed)
{
	uint8_t *d = malloc(len + 1);
	uint64_t i;

	assert_non_null(d);
	for (i = 0; i < len; i++)
		d[i] = (uint8_t)rand_r(&seed);
	return d;
}

/* ---- tests ----------------------------------------------------------------- */

/*
 * Header first, completion after every payload and DMA, msg_done last,
 * whatever order packets arrive in and whether the header handler ran
 * before they arrived.
 */
static void
test_order(void **state)
{
	const uint64_t len = 10 * 100 + 37;
	const uint32_t npkt = 11;
	unsigned seed, mode;

	for (mode = 0; mode < 3; mode++)
	for (seed = 1; seed < 9; seed++) {
		struct spin_rt *rt = rt_new(2, 0, 0, 1 << 20);
		uint32_t ctx = ctx_new(rt, "rec", SPINNIC_SCHED_DEFAULT, 0, 0,
				       0);
		struct spin_msg_info info = { .length = len, .match_bits = 7 };
		struct test_host host;
		uint8_t *data = msg_data(len, seed);
		uint32_t order[11], i, k, pay = 0, seen_cmpl = 0;
		struct spin_ctx_stats cs;
		struct spin_msg *m;
		int appmsg;

		ev_reset();
		test_host_init(&host, len, seed & 1);
		for (i = 0; i < npkt; i++)
			order[i] = i;
		test_shuffle(order, npkt, &seed);
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len,
				   &appmsg);
		assert_non_null(m);
		for (k = 0; k < npkt; k++) {
			uint64_t off = order[k] * 100ull;

			test_deliver(rt, m, data, off,
				     (uint32_t)RTE_MIN(100ull, len - off));
			/* mode 0: nothing runs before all arrived;
			 * 1: header after the third; 2: interleaved */
			if ((mode == 1 && k == 2) || mode == 2)
				spin_hpu_poll(rt, k & 1, mode == 1 ? 1 : 2);
		}
		poll_until_done(rt, 1);
		assert_int_equal(nev, npkt + 3);
		assert_int_equal(evlog[0].kind, EV_HDR);
		for (i = 1; i < nev; i++) {
			if (evlog[i].kind == EV_PAY) {
				assert_int_equal(seen_cmpl, 0);
				assert_int_equal(evlog[i].vhpu,
						 SPIN_VHPU_NONE);
				pay++;
			} else if (evlog[i].kind == EV_CMPL) {
				assert_int_equal(pay, npkt);
				assert_int_equal(evlog[i].off, len);
				seen_cmpl = 1;
			} else {
				assert_int_equal(evlog[i].kind, EV_DONE);
				assert_int_equal(i, nev - 1);
			}
		}
		assert_true(seen_cmpl);
		assert_memory_equal(test_host_win(&host), data, len);
		assert_int_equal(last_res.status, SPIN_SUCCESS);
		assert_int_equal(last_res.npkts, npkt);
		assert_int_equal(last_res.bytes, len);
		assert_int_equal(last_res.dma_bytes, len);
		assert_int_equal(last_res.dma_events, 1);
		assert_int_equal(last_res.flags, 0);
		assert_ptr_equal(last_app_msg, &appmsg);
		assert_int_equal(last_done.npkts, npkt);
		assert_int_equal(last_done.errors, 0);
		assert_int_equal(test_pkts_live, 0);
		if (!(seed & 1))
			assert_int_equal(host.writes, npkt);
		assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), 0);
		assert_int_equal(cs.refs, 1); /* installed only */
		assert_int_equal(cs.hers, npkt + 2);
		assert_int_equal(cs.msgs, 1);
		test_host_fini(&host);
		free(data);
		spin_rt_destroy(rt);
	}
}

/* spin_pool_fifo: set before spin_rt_create() (lib/spin/spin_internal.h) */
extern bool spin_pool_fifo;

/*
 * The free lists: last in, first out (default), so that a message started
 * after one that completed takes the same, warm slot; the FIFO ring
 * (spin_pool_fifo) takes the next one. Both deliver every byte and leave
 * nothing live.
 */
static void
test_pool_lifo(void **state)
{
	unsigned fifo, i;

	RTE_SET_USED(state);
	for (fifo = 0; fifo < 2; fifo++) {
		struct spin_rt *rt;
		struct spin_msg *prev = NULL;
		struct spin_rt_stats st;
		uint32_t ctx;

		spin_pool_fifo = fifo;
		rt = rt_new(1, 0, 0, 1 << 20);
		spin_pool_fifo = false;
		ctx = ctx_new(rt, "rec_nohdr", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
		ev_reset();
		for (i = 0; i < 20; i++) {
			uint64_t len = 50 + 97 * i, off;
			struct spin_msg_info info = { .length = len };
			uint8_t *data = msg_data(len, i);
			struct test_host host;
			struct spin_msg *m;

			test_host_init(&host, len, 1);
			m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR,
					   len, NULL);
			assert_non_null(m);
			if (prev != NULL) {
				if (fifo)
					assert_ptr_not_equal(m, prev);
				else
					assert_ptr_equal(m, prev);
			}
			prev = m;
			for (off = 0; off < len; off += 100)
				test_deliver(rt, m, data, off, (uint32_t)
					     RTE_MIN(100ull, len - off));
			poll_until_done(rt, i + 1);
			assert_memory_equal(test_host_win(&host), data, len);
			test_host_fini(&host);
			free(data);
		}
		spin_rt_stats(rt, &st);
		assert_int_equal(st.msgs_done, 20);
		assert_int_equal(st.msgs_live, 0);
		assert_int_equal(st.hers_live, 0);
		assert_int_equal(test_pkts_live, 0);
		spin_rt_destroy(rt);
	}
}

/* several messages of one context interleaved; no header handler */
static void
test_many_msgs(void **state)
{
	struct spin_rt *rt = rt_new(2, 0, 0, 1 << 20);
	uint32_t ctx = ctx_new(rt, "rec_nohdr", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
	enum { NM = 5 };
	struct test_host host[NM];
	struct spin_msg *m[NM];
	uint8_t *data[NM];
	uint64_t len[NM];
	struct spin_rt_stats st;
	unsigned seed = 42, i, k, left = 1;
	uint64_t sent[NM] = { 0 };

	ev_reset();
	for (i = 0; i < NM; i++) {
		struct spin_msg_info info = { .length = 0 };

		len[i] = 1 + rand_r(&seed) % 900;
		info.length = len[i];
		data[i] = msg_data(len[i], i);
		test_host_init(&host[i], len[i], 1);
		m[i] = spin_msg_start(rt, ctx, &info, &host[i], TEST_ADDR,
				      len[i], NULL);
		assert_non_null(m[i]);
	}
	for (k = 0; left; k++) {
		left = 0;
		for (i = 0; i < NM; i++) {
			uint32_t n;

			if (sent[i] == len[i])
				continue;
			n = (uint32_t)RTE_MIN(100ull, len[i] - sent[i]);
			test_deliver(rt, m[i], data[i], sent[i], n);
			sent[i] += n;
			left = 1;
			spin_hpu_poll(rt, k & 1, 1);
		}
	}
	poll_until_done(rt, NM);
	for (i = 0; i < NM; i++) {
		assert_memory_equal(test_host_win(&host[i]), data[i], len[i]);
		test_host_fini(&host[i]);
		free(data[i]);
	}
	spin_rt_stats(rt, &st);
	assert_int_equal(st.msgs_done, NM);
	assert_int_equal(st.msgs_live, 0);
	assert_int_equal(st.hers_live, 0);
	assert_int_equal(test_pkts_live, 0);
	spin_rt_destroy(rt);
}

/* a zero-byte message: one empty packet, header, payload, completion */
static void
test_empty_msg(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	uint32_t ctx = ctx_new(rt, "rec", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
	struct spin_msg_info info = { .length = 0 };
	struct test_host host;
	struct spin_msg *m;
	uint8_t x = 0;

	ev_reset();
	test_host_init(&host, 16, 1);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 16, NULL);
	assert_non_null(m);
	assert_int_equal(spin_msg_packet(m, &x, 1, 0, NULL), -EINVAL);
	test_deliver(rt, m, &x, 0, 0);
	poll_until_done(rt, 1);
	assert_int_equal(nev, 4);
	assert_int_equal(evlog[0].kind, EV_HDR);
	assert_int_equal(evlog[1].kind, EV_PAY);
	assert_int_equal(evlog[2].kind, EV_CMPL);
	assert_int_equal(last_res.status, SPIN_SUCCESS);
	assert_int_equal(last_res.npkts, 1);
	assert_int_equal(test_pkts_live, 0);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* SPIN_DROP / SPIN_PROCEED / SPIN_ERROR from header and payload */
static void
test_return_codes(void **state)
{
	const uint64_t len = 450;
	uint8_t *data = msg_data(len, 5);
	unsigned c;

	for (c = 0; c < 5; c++) {
		struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
		uint32_t ctx = ctx_new(rt, c == 4 ? "hdr_only" : "rec",
				       SPINNIC_SCHED_DEFAULT, 0, 0, 0);
		struct spin_msg_info info = { .length = len };
		struct test_host host;
		struct spin_msg *m;
		uint64_t off;
		uint32_t i, npay = 0, ncmpl = 0;

		ev_reset();
		if (c == 0)
			rec_hdr_rc = SPIN_DROP;
		else if (c == 1 || c == 4)
			rec_hdr_rc = SPIN_PROCEED;
		else if (c == 2) {
			rec_pay_rc = SPIN_ERROR;
			rec_fail_off = 200;
		} else {
			rec_pay_rc = SPIN_DROP;
			rec_fail_off = 300;
		}
		test_host_init(&host, len, 1);
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
		assert_non_null(m);
		for (off = 0; off < len; off += 100)
			test_deliver(rt, m, data, off,
				     (uint32_t)RTE_MIN(100ull, len - off));
		poll_until_done(rt, 1);
		for (i = 0; i < nev; i++) {
			npay += evlog[i].kind == EV_PAY;
			ncmpl += evlog[i].kind == EV_CMPL;
		}
		assert_int_equal(last_res.npkts, 5);
		assert_int_equal(test_pkts_live, 0);
		switch (c) {
		case 0:
			assert_int_equal(last_res.status, SPIN_DROP);
			assert_true(last_res.flags & SPIN_MSG_F_DROPPED);
			assert_int_equal(npay + ncmpl, 0);
			assert_int_equal(last_res.dma_bytes, 0);
			break;
		case 1:
		case 4:
			assert_int_equal(last_res.status, SPIN_SUCCESS);
			assert_true(last_res.flags & SPIN_MSG_F_PROCEED);
			assert_int_equal(npay + ncmpl, 0);
			assert_int_equal(last_res.proceed_pkts, 5);
			assert_memory_equal(test_host_win(&host), data, len);
			break;
		case 2:
			assert_int_equal(last_res.status, SPIN_ERROR);
			assert_int_equal(last_res.handler_errors, 1);
			assert_int_equal(last_done.errors, 1);
			assert_int_equal(ncmpl, 1);
			break;
		default:
			assert_int_equal(last_res.status, SPIN_SUCCESS);
			assert_int_equal(last_res.dropped_pkts, 1);
			assert_int_equal(last_done.dropped, 1);
			assert_int_equal(npay, 5);
			break;
		}
		test_host_fini(&host);
		spin_rt_destroy(rt);
	}
	free(data);
}

/* every DMA outside the ME window is rejected, counted, an error */
static void
test_dma_window(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	uint32_t ctx = ctx_new(rt, "oow", SPINNIC_SCHED_DEFAULT, 0, 0, 16);
	const uint64_t len = 300;
	struct spin_msg_info info = { .length = len };
	uint8_t *data = msg_data(len, 9);
	struct spin_hpu_stats hs;
	struct spin_ctx_stats cs;
	struct test_host host;
	struct spin_msg *m;
	uint64_t off;

	ev_reset();
	test_host_init(&host, len, 0);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
	assert_non_null(m);
	for (off = 0; off < len; off += 100)
		test_deliver(rt, m, data, off, 100);
	poll_until_done(rt, 1);
	assert_int_equal(last_res.status, SPIN_ERROR);
	assert_int_equal(last_res.dma_rejects, 3 * 4);
	assert_int_equal(last_res.dma_bytes, 0);
	assert_int_equal(spin_hpu_stats(rt, 0, &hs), 0);
	assert_int_equal(hs.dma_rejects, 12);
	assert_int_equal(hs.rc[SPIN_ERROR], 3);
	assert_int_equal(spin_hpu_stats(rt, 1, &hs), -EINVAL);
	assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), 0);
	assert_int_equal(cs.dma_rejects, 12);
	assert_int_equal(host.writes, 0);
	assert_int_equal(host.reads, 3);
	/* nothing outside the window moved, nothing inside either */
	for (off = 0; off < len; off++)
		assert_int_equal(test_host_win(&host)[off], 0);
	test_host_fini(&host);
	free(data);
	spin_rt_destroy(rt);
}

/* abort before and after handlers ran: packets released, msg_done once */
static void
test_abort(void **state)
{
	const uint64_t len = 500;
	uint8_t *data = msg_data(len, 11);
	unsigned when;

	for (when = 0; when < 2; when++) {
		struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
		uint32_t ctx = ctx_new(rt, "rec", SPINNIC_SCHED_DEFAULT, 0, 0,
				       0);
		struct spin_msg_info info = { .length = len };
		struct spin_rt_stats st;
		struct spin_ctx_stats cs;
		struct test_host host;
		struct spin_msg *m;
		uint32_t i;

		ev_reset();
		test_host_init(&host, len, 1);
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
		test_deliver(rt, m, data, 0, 100);
		test_deliver(rt, m, data, 300, 100);
		if (when == 1)
			while (spin_hpu_poll(rt, 0, 8) != 0)
				;
		test_deliver(rt, m, data, 100, 100);
		spin_msg_abort(m);
		poll_until_done(rt, 1);
		assert_true(last_res.flags & SPIN_MSG_F_ABORTED);
		assert_int_equal(test_pkts_live, 0);
		for (i = 0; i < nev; i++)
			assert_int_not_equal(evlog[i].kind, EV_CMPL);
		assert_int_equal(nev, when == 0 ? 1 : 4);
		spin_rt_stats(rt, &st);
		assert_int_equal(st.msgs_aborted, 1);
		assert_int_equal(st.msgs_live, 0);
		assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), 0);
		assert_int_equal(cs.refs, 1);
		test_host_fini(&host);
		spin_rt_destroy(rt);
	}
	free(data);
}

/* no HER or message slot: clean refusal, packet stays the caller's */
static void
test_exhaustion(void **state)
{
	struct spin_rt *rt = rt_new(1, 4, 2, 1 << 20);
	uint32_t ctx = ctx_new(rt, "rec", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
	const uint64_t len = 600;
	struct spin_msg_info info = { .length = len };
	uint8_t *data = msg_data(len, 3);
	struct test_host host;
	struct spin_msg *m, *m2;
	struct spin_rt_stats st;
	struct test_pkt *p;
	uint64_t off;

	ev_reset();
	test_host_init(&host, len, 1);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
	m2 = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
	assert_non_null(m);
	assert_non_null(m2);
	errno = 0;
	assert_null(spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len,
				   NULL));
	assert_int_equal(errno, ENOBUFS);
	errno = 0;
	assert_null(spin_msg_start(rt, 0x12345, &info, &host, TEST_ADDR, len,
				   NULL));
	assert_int_equal(errno, ENOENT);
	for (off = 0; off < 400; off += 100) {
		p = test_pkt_new(data + off, 100);
		assert_int_equal(spin_msg_packet(m, p->data, 100, off, p), 0);
	}
	p = test_pkt_new(data + 400, 100);
	assert_int_equal(spin_msg_packet(m, p->data, 100, 400, p), -ENOBUFS);
	/* bad ranges */
	assert_int_equal(spin_msg_packet(m, p->data, 100, 550, p), -EINVAL);
	assert_int_equal(spin_msg_packet(m, p->data, 100, UINT64_MAX - 10, p),
			 -EINVAL);
	spin_rt_stats(rt, &st);
	assert_int_equal(st.her_full, 1);
	assert_int_equal(st.msg_full, 1);
	assert_int_equal(st.pkt_rejects, 2);
	assert_int_equal(st.hers_live, 4);
	test_pkt_release(p);
	test_deliver(rt, m, data, 400, 100);
	test_deliver(rt, m, data, 500, 100);
	spin_msg_abort(m2);
	poll_until_done(rt, 2);
	assert_int_equal(test_pkts_live, 0);
	assert_memory_equal(test_host_win(&host), data, len);
	test_host_fini(&host);
	free(data);
	spin_rt_destroy(rt);
}

/* NIC memory: exhaustion is -ENOMEM, detach frees everything, coalesced */
static void
test_nicmem(void **state)
{
	const uint64_t cap = 64 * 1024;
	struct spin_rt *rt = rt_new(1, 0, 0, cap);
	struct spin_ctx_conf cc = { .family = "rec", .state_len = 4000 };
	struct spin_nicmem_stats ns;
	uint32_t h[65], ctx, ctx2, n = 0, i;
	uint8_t buf[100];
	int rc;

	/* owner 1 fills the memory with 1000-byte blobs (1024 charged) */
	while ((rc = spin_rt_nicmem_alloc(rt, 1, 1000, &h[n])) == 0)
		n++;
	assert_int_equal(rc, -ENOMEM);
	assert_int_equal(n, cap / 1024);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 1), cap);
	assert_int_equal(spin_rt_ctx_create(rt, 2, &cc, &ctx), -ENOMEM);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 2), 0);
	/* writes: owner and range checked */
	memset(buf, 7, sizeof(buf));
	assert_int_equal(spin_rt_nicmem_write(rt, 1, h[3], 900, buf, 100), 0);
	assert_int_equal(spin_rt_nicmem_write(rt, 1, h[3], 901, buf, 100),
			 -ERANGE);
	assert_int_equal(spin_rt_nicmem_write(rt, 2, h[3], 0, buf, 1), -EPERM);
	assert_int_equal(spin_rt_nicmem_free(rt, 2, h[3]), -EPERM);
	/* free every other blob: 32 KiB free but no 4 KiB hole */
	for (i = 0; i < n; i += 2)
		assert_int_equal(spin_rt_nicmem_free(rt, 1, h[i]), 0);
	assert_int_equal(spin_rt_nicmem_free(rt, 1, h[0]), -ENOENT);
	spin_rt_nicmem_stats(rt, &ns);
	assert_int_equal(ns.used, cap / 2);
	assert_int_equal(ns.largest_free, 1024);
	assert_int_equal(spin_rt_ctx_create(rt, 2, &cc, &ctx), -ENOMEM);
	/* one more freed next to two holes: coalesced into 3 KiB, still no */
	assert_int_equal(spin_rt_nicmem_free(rt, 1, h[1]), 0);
	spin_rt_nicmem_stats(rt, &ns);
	assert_int_equal(ns.largest_free, 3072);
	cc.state_len = 3000;
	assert_int_equal(spin_rt_ctx_create(rt, 2, &cc, &ctx), 0);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 2), 3008);
	/* an ME keeps owner 2's context alive across detach */
	assert_int_equal(spin_rt_ctx_get(rt, 2, ctx), 0);
	assert_int_equal(spin_rt_ctx_get(rt, 1, ctx), -EPERM);
	cc.state_len = 10;
	assert_int_equal(spin_rt_ctx_create(rt, 2, &cc, &ctx2), 0);
	assert_int_equal(spin_owner_detach(rt, 2), 2);
	assert_int_equal(spin_rt_ctx_get(rt, 2, ctx), -ENOENT); /* not live */
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 2), 3008);
	spin_rt_ctx_put(rt, ctx);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 2), 0);
	/* detach of owner 1 frees the rest */
	assert_int_equal(spin_owner_detach(rt, 1), n / 2 - 1);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 1), 0);
	spin_rt_nicmem_stats(rt, &ns);
	assert_int_equal(ns.used, 0);
	assert_int_equal(ns.largest_free, cap);
	assert_int_equal(ns.allocs, ns.frees);
	/* all of it allocatable again */
	assert_int_equal(spin_rt_nicmem_alloc(rt, 3, cap, &h[0]), 0);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 3, 1, &h[1]), -ENOMEM);
	assert_int_equal(spin_rt_nicmem_free(rt, 3, h[0]), 0);
	spin_rt_destroy(rt);
}

/* per-owner cap and owner table: one client cannot take it all */
static void
test_nicmem_owner_cap(void **state)
{
	struct spin_rt_conf c = {
		.nic_mem = 64 * 1024, .nic_mem_per_owner = 4096,
		.max_owners = 2, .ops = &ops, .families = fams,
	};
	struct spin_rt *rt = spin_rt_create(&c);
	uint32_t h[4];

	assert_non_null(rt);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 1, 4000, &h[0]), 0);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 1, 64, &h[1]), 0);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 1, 1, &h[2]), -ENOMEM);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 2, 4096, &h[2]), 0);
	/* a third owner finds no accounting slot */
	assert_int_equal(spin_rt_nicmem_alloc(rt, 3, 64, &h[3]), -ENOSPC);
	assert_int_equal(spin_owner_detach(rt, 2), 1);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 3, 64, &h[3]), 0);
	assert_int_equal(spin_owner_detach(rt, 1), 2);
	assert_int_equal(spin_owner_detach(rt, 3), 1);
	assert_int_equal(spin_owner_detach(rt, 3), 0);
	spin_rt_destroy(rt);
}

/* random alloc/free against a model: no overlap, contents kept */
static void
test_nicmem_random(void **state)
{
	const uint64_t cap = 256 * 1024;
	struct spin_rt *rt = rt_new(1, 0, 0, cap);
	struct { uint32_t h; uint64_t size; uint8_t tag; int live; } o[48];
	struct spin_nicmem_stats ns;
	unsigned seed = 77, it, i;
	uint8_t buf[8192];

	memset(o, 0, sizeof(o));
	for (it = 0; it < 3000; it++) {
		i = rand_r(&seed) % 48;
		if (o[i].live) {
			/* the blob still holds its tag: nobody overwrote it */
			uint8_t got[sizeof(buf)];
			uint64_t k;

			assert_int_equal(spin_rt_nicmem_read(rt, 1 + i % 3, o[i].h,
					 0, got, o[i].size), 0);
			for (k = 0; k < o[i].size; k++)
				assert_int_equal(got[k], o[i].tag);
			assert_int_equal(spin_rt_nicmem_free(rt, 1 + i % 3, o[i].h),
					 0);
			o[i].live = 0;
		} else {
			uint64_t size = 1 + rand_r(&seed) % sizeof(buf);
			int rc = spin_rt_nicmem_alloc(rt, 1 + i % 3, size, &o[i].h);

			if (rc == -ENOMEM)
				continue;
			assert_int_equal(rc, 0);
			o[i].size = size;
			o[i].tag = (uint8_t)it;
			o[i].live = 1;
			memset(buf, o[i].tag, size);
			assert_int_equal(spin_rt_nicmem_write(rt, 1 + i % 3, o[i].h,
					 0, buf, size), 0);
		}
	}
	for (i = 0; i < 48; i++)
		if (o[i].live)
			assert_int_equal(spin_rt_nicmem_free(rt, 1 + i % 3, o[i].h),
					 0);
	spin_rt_nicmem_stats(rt, &ns);
	assert_int_equal(ns.used, 0);
	assert_int_equal(ns.largest_free, cap);
	spin_rt_destroy(rt);
}

/* a handler maps its owner's blob, not another's; free waits for it */
static void
test_blob_map(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	uint32_t args[2], ctx;
	struct spin_ctx_conf cc = {
		.family = "blob", .args = args, .args_len = sizeof(args),
	};
	struct spin_msg_info info = { .length = 1 };
	uint8_t blob[300], one = 1;
	struct test_host host;
	struct spin_msg *m;
	uint64_t before;
	unsigned i;

	blob_rt = rt;
	for (i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 1, sizeof(blob), &args[0]), 0);
	assert_int_equal(spin_rt_nicmem_alloc(rt, 2, 64, &args[1]), 0);
	assert_int_equal(spin_rt_nicmem_write(rt, 1, args[0], 0, blob,
					   sizeof(blob)), 0);
	assert_int_equal(spin_rt_ctx_create(rt, 1, &cc, &ctx), 0);
	before = spin_rt_nicmem_owner_usage(rt, 1);
	ev_reset();
	test_host_init(&host, sizeof(blob), 1);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, sizeof(blob),
			   NULL);
	assert_non_null(m);
	test_deliver(rt, m, &one, 0, 1);
	poll_until_done(rt, 1);
	assert_int_equal(last_res.status, SPIN_SUCCESS);
	assert_memory_equal(test_host_win(&host), blob, sizeof(blob));
	assert_int_equal(blob_usage_mid, before);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 1), before - 320);
	assert_int_equal(spin_rt_nicmem_read(rt, 1, args[0], 0, blob, 1),
			 -ENOENT);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* contexts: install from the ABI request, checks, handles */
static void
test_ctx(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	struct spinnic_ctrl_ctx req = { .args_len = 8, .state_len = 100 };
	uint64_t args = 0x1122334455667788ull;
	struct spin_ctx_stats cs;
	uint32_t h, h2;

	memset(req.family, 'x', sizeof(req.family));
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -EINVAL);
	strcpy(req.family, "nope");
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -ENOENT);
	strcpy(req.family, "rec");
	req.args_len = 7;
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -EINVAL);
	req.args_len = 8;
	req.policy = 9;
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -EINVAL);
	req.policy = SPINNIC_SCHED_BLOCKED_RR;
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -EINVAL);
	req.delta_p = 4;
	req.nvhpu = 33; /* > max_vhpus */
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), -EINVAL);
	req.nvhpu = 2;
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h), 0);
	assert_int_equal(spin_rt_ctx_stats(rt, h, &cs), 0);
	assert_int_equal(cs.owner, 1);
	assert_int_equal(cs.refs, 1);
	assert_int_equal(cs.mem_bytes, 64 + 100);
	assert_int_equal(spin_rt_ctx_free(rt, 2, h), -EPERM);
	assert_int_equal(spin_rt_ctx_free(rt, 1, h), 0);
	assert_int_equal(spin_rt_ctx_free(rt, 1, h), -ENOENT);
	assert_int_equal(spin_rt_ctx_stats(rt, h, &cs), -ENOENT);
	/* the slot is reused under a new handle; the old one stays dead */
	assert_int_equal(spin_rt_ctx_install(rt, 1, &req, &args, &h2), 0);
	assert_int_not_equal(h, h2);
	assert_int_equal(spin_rt_ctx_get(rt, 1, h), -ENOENT);
	assert_int_equal(spin_rt_ctx_free(rt, 1, h), -ENOENT);
	assert_int_equal(spin_rt_ctx_free(rt, 1, SPINNIC_HANDLE_NONE), -ENOENT);
	assert_int_equal(spin_rt_nicmem_owner_usage(rt, 1), 64 + 128);
	spin_rt_destroy(rt);
}

/* family table checks at registration */
static void
test_registration(void **state)
{
	static const struct spin_handler_family none = { .name = "none" };
	static const struct spin_handler_family noname = {
		.payload = rec_payload };
	static const struct spin_handler_family longname = {
		.name = "0123456789012345678901234567890123456789012345678",
		.payload = rec_payload };
	const struct spin_handler_family *const t1[] = { &fam_rec, &none, NULL };
	const struct spin_handler_family *const t2[] = { &noname, NULL };
	const struct spin_handler_family *const t3[] = { &longname, NULL };
	const struct spin_handler_family *const t4[] = {
		&fam_rec, &fam_oow, &fam_rec, NULL };
	const struct spin_handler_family *const *const bad[] = {
		t1, t2, t3, t4 };
	struct spin_rt_conf c = { .ops = &ops };
	struct spin_host_ops bad_ops = ops;
	unsigned i;

	for (i = 0; i < (unsigned)RTE_DIM(bad); i++) {
		c.families = bad[i];
		errno = 0;
		assert_null(spin_rt_create(&c));
		assert_int_equal(errno, EINVAL);
	}
	bad_ops.pkt_release = NULL;
	c.families = fams;
	c.ops = &bad_ops;
	assert_null(spin_rt_create(&c));
	c.ops = &ops;
	c.nhpu = SPIN_RT_HPUS_MAX + 1;
	assert_null(spin_rt_create(&c));
}

/* ---- blocked-RR under two polling threads ------------------------------- */

struct poller {
	struct spin_rt *rt;
	unsigned hpu;
	volatile int *stop;
	uint64_t work;
};

static void *
poller_main(void *arg)
{
	struct poller *p = arg;

	while (!*p->stop) {
		unsigned n = spin_hpu_poll(p->rt, p->hpu, 4);

		p->work += n;
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

static void
brr_run(uint32_t delta, uint32_t nv, unsigned seed, int prefill)
{
	struct spin_rt_conf conf = {
		.nhpu = 2, .max_vhpus = 32, .pkt_payload = BRR_PKT,
		.ops = &ops, .families = fams,
	};
	struct spin_rt *rt = spin_rt_create(&conf);
	const uint64_t len = (uint64_t)BRR_NPKT * BRR_PKT - 17;
	struct spin_msg_info info = { .length = len };
	uint8_t *data = msg_data(len, seed);
	uint32_t order[BRR_NPKT], i, ctx;
	volatile int stop = 0;
	struct poller p[2];
	pthread_t th[2];
	struct test_host host;
	struct spin_hpu_stats hs[2];
	struct spin_msg *m;

	assert_non_null(rt);
	ev_reset();
	brr_delta = delta;
	brr_nv = nv;
	brr_violations = brr_bad_vhpu = brr_running = brr_max_running = 0;
	memset(brr_seen, 0, sizeof(brr_seen));
	ctx = ctx_new(rt, "brr", SPINNIC_SCHED_BLOCKED_RR, delta, nv,
		      8 * BRR_NPKT);
	test_host_init(&host, len, 1);
	for (i = 0; i < 2 && !prefill; i++) {
		p[i] = (struct poller){ rt, i, &stop, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, poller_main,
						&p[i]), 0);
	}
	for (i = 0; i < BRR_NPKT; i++)
		order[i] = i;
	test_shuffle(order, BRR_NPKT, &seed);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
	assert_non_null(m);
	for (i = 0; i < BRR_NPKT; i++) {
		uint64_t off = (uint64_t)order[i] * BRR_PKT;
		struct test_pkt *pk;
		uint32_t n = (uint32_t)RTE_MIN((uint64_t)BRR_PKT, len - off);

		pk = test_pkt_new(data + off, n);
		while (spin_msg_packet(m, pk->data, n, off, pk) == -ENOBUFS)
			sched_yield();
		if (i % 5 == 0)
			sched_yield();
	}
	/* prefill: every HPU finds work from the start, maximal overlap */
	for (i = 0; i < 2 && prefill; i++) {
		p[i] = (struct poller){ rt, i, &stop, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, poller_main,
						&p[i]), 0);
	}
	while (!__atomic_load_n(&test_done_calls, __ATOMIC_ACQUIRE))
		sched_yield();
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(brr_violations, 0);
	assert_int_equal(brr_bad_vhpu, 0);
	for (i = 0; i < BRR_NPKT; i++)
		assert_int_equal(brr_seen[i], 1);
	assert_int_equal(last_res.status, SPIN_SUCCESS);
	assert_int_equal(last_res.npkts, BRR_NPKT);
	assert_memory_equal(test_host_win(&host), data, len);
	assert_int_equal(test_pkts_live, 0);
	spin_hpu_stats(rt, 0, &hs[0]);
	spin_hpu_stats(rt, 1, &hs[1]);
	assert_int_equal(hs[0].pay + hs[1].pay, BRR_NPKT);
	assert_true(hs[0].vhpu_runs + hs[1].vhpu_runs >= (nv ? nv :
		    (BRR_NPKT + delta - 1) / delta));
	printf("  blocked-RR%s dp=%u nv=%u: hpu0 %" PRIu64 " hpu1 %" PRIu64
	       " pkts, vhpu runs %" PRIu64 ", max concurrent handlers %u\n",
	       prefill ? " prefilled" : "", delta, nv, hs[0].pay, hs[1].pay,
	       hs[0].vhpu_runs + hs[1].vhpu_runs, brr_max_running);
	test_host_fini(&host);
	free(data);
	spin_rt_destroy(rt);
}

/* header before payloads, completion after them, with two HPU threads */
static void
test_order_threads(void **state)
{
	unsigned prefill;

	for (prefill = 0; prefill < 2; prefill++) {
		struct spin_rt *rt = rt_new(2, 0, 0, 1 << 20);
		uint32_t ctx = ctx_new(rt, "slow", SPINNIC_SCHED_DEFAULT, 0, 0,
				       0);
		const uint64_t len = 40 * 100;
		struct spin_msg_info info = { .length = len };
		uint8_t *data = msg_data(len, 21);
		volatile int stop = 0;
		struct test_host host;
		struct poller p[2];
		pthread_t th[2];
		struct spin_msg *m;
		uint64_t off;
		unsigned i;

		ev_reset();
		slow_hdr_done = slow_pays = slow_bad = 0;
		test_host_init(&host, len, 1);
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len, NULL);
		assert_non_null(m);
		for (i = 0; i < 2 && !prefill; i++) {
			p[i] = (struct poller){ rt, i, &stop, 0 };
			assert_int_equal(pthread_create(&th[i], NULL,
					 poller_main, &p[i]), 0);
		}
		for (off = 0; off < len; off += 100) {
			struct test_pkt *pk = test_pkt_new(data + off, 100);

			assert_int_equal(spin_msg_packet(m, pk->data, 100, off,
							 pk), 0);
		}
		for (i = 0; i < 2 && prefill; i++) {
			p[i] = (struct poller){ rt, i, &stop, 0 };
			assert_int_equal(pthread_create(&th[i], NULL,
					 poller_main, &p[i]), 0);
		}
		while (!__atomic_load_n(&test_done_calls, __ATOMIC_ACQUIRE))
			sched_yield();
		stop = 1;
		for (i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		assert_int_equal(slow_bad, 0);
		assert_int_equal(slow_pays, 40);
		assert_int_equal(last_res.status, SPIN_SUCCESS);
		assert_memory_equal(test_host_win(&host), data, len);
		assert_int_equal(test_pkts_live, 0);
		test_host_fini(&host);
		free(data);
		spin_rt_destroy(rt);
	}
}

static void
test_blocked_rr(void **state)
{
	unsigned prefill;

	for (prefill = 0; prefill < 2; prefill++) {
		brr_run(4, 3, 1, prefill);
		brr_run(4, 0, 2, prefill);
		brr_run(1, 5, 3, prefill);
		brr_run(16, 2, 4, prefill);
		brr_run(3, 0, 5, prefill); /* the last sequence is short */
	}
}

/*
 * spin_dma_to_host_strided_nb: block i at win_off + i * stride, positive
 * or negative strides; any block out of the window rejects the whole
 * transfer (nothing written, one reject); with and without the host's
 * direct mapping.
 */
static void
test_dma_strided(void **state)
{
	static const struct {
		uint64_t off;
		int64_t stride;
		size_t bl;
		uint64_t n;
		int rc;
	} cases[] = {
		{ 0, 100, 10, 10, 0 },
		{ 900, -100, 10, 10, 0 },
		{ 3, 7, 7, 14, 0 },          /* blocks touch */
		{ 500, 0, 10, 3, 0 },        /* same place: the last wins */
		{ 990, 1, 10, 1, 0 },
		/* the constant-size kernels */
		{ 5, 1, 1, 100, 0 },
		{ 0, 3, 2, 50, 0 },
		{ 0, 50, 4, 20, 0 },
		{ 100, 24, 8, 20, 0 },
		{ 1, 40, 16, 12, 0 },
		{ 0, 100, 32, 6, 0 },
		{ 936, -128, 64, 3, 0 },
		{ 5, 100, 10, 0, 0 },
		{ 0, 100, 10, 11, -ERANGE }, /* last block at 1000 */
		{ 0, 99, 10, 11, 0 },        /* last block ends at 1000 */
		{ 1, 99, 10, 11, -ERANGE },  /* last block ends at 1001 */
		{ 50, -100, 10, 2, -ERANGE },
		{ 0, INT64_MAX, 1, 3, -ERANGE },
		{ 1000, 1, 1, 1, -ERANGE },
	};
	const uint64_t wlen = 1000, plen = 200;
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	uint32_t ctx = ctx_new(rt, "strided", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
	uint8_t *data = msg_data(plen, 5), *want = malloc(wlen);
	unsigned c, direct;

	assert_non_null(want);
	for (direct = 0; direct < 2; direct++)
	for (c = 0; c < RTE_DIM(cases); c++) {
		struct spin_msg_info info = { .length = plen };
		struct test_host host;
		struct spin_msg *m;
		uint64_t i, done = test_done_calls + 1;

		strided_req.off = cases[c].off;
		strided_req.stride = cases[c].stride;
		strided_req.blocklen = cases[c].bl;
		strided_req.n = cases[c].n;
		strided_req.rc = 1;
		test_host_init(&host, wlen, direct);
		memset(want, 0, wlen);
		if (cases[c].rc == 0)
			for (i = 0; i < cases[c].n; i++)
				memcpy(want + cases[c].off +
				       (int64_t)i * cases[c].stride,
				       data + i * cases[c].bl, cases[c].bl);
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, wlen,
				   NULL);
		assert_non_null(m);
		test_deliver(rt, m, data, 0, (uint32_t)plen);
		poll_until_done(rt, done);
		assert_int_equal(strided_req.rc, cases[c].rc);
		assert_memory_equal(test_host_win(&host), want, wlen);
		if (cases[c].rc == 0) {
			assert_int_equal(last_res.status, SPIN_SUCCESS);
			assert_int_equal(last_res.dma_bytes,
					 cases[c].bl * cases[c].n);
		} else {
			assert_int_equal(last_res.status, SPIN_ERROR);
			assert_int_equal(last_res.dma_rejects, 1);
			assert_int_equal(last_res.dma_bytes, 0);
		}
		test_host_fini(&host);
	}
	free(want);
	free(data);
	spin_rt_destroy(rt);
}

/* the HPU's batch does not delay completion: the poll that runs a
 * message's last payload HER also runs its completion and msg_done */
static void
test_done_same_poll(void **state)
{
	struct spin_rt *rt = rt_new(1, 0, 0, 1 << 20);
	uint32_t ctx = ctx_new(rt, "rec_nohdr", SPINNIC_SCHED_DEFAULT, 0, 0,
			       0);
	struct spin_msg_info info = { .length = 150 };
	uint8_t *data = msg_data(150, 9);
	struct test_host host;
	struct spin_msg *m;

	ev_reset();
	test_host_init(&host, 150, 1);
	m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, 150, NULL);
	assert_non_null(m);
	test_deliver(rt, m, data, 0, 100);
	test_deliver(rt, m, data, 100, 50);
	assert_int_equal(spin_hpu_poll(rt, 0, 32), 3);
	assert_int_equal(test_done_calls, 1);
	assert_int_equal(last_res.status, SPIN_SUCCESS);
	assert_int_equal(test_pkts_live, 0);
	assert_memory_equal(test_host_win(&host), data, 150);
	assert_int_equal(spin_hpu_poll(rt, 0, 32), 0);
	test_host_fini(&host);
	free(data);
	spin_rt_destroy(rt);
}

/* ---- bursts and batched releases ------------------------------------------ */

static uint32_t burst_release_calls;

static void
burst_release(void *const *cookies, unsigned n)
{
	unsigned i;

	assert_true(n > 0);
	burst_release_calls++;
	for (i = 0; i < n; i++)
		test_pkt_release(cookies[i]);
}

/* maps pieces of at most 100 bytes only: never the whole window */
static void *
direct_small(void *host, uint64_t addr, size_t len)
{
	return len <= 100 ? test_direct(host, addr, len) : NULL;
}

static const struct spin_host_ops ops_burst = {
	.direct = direct_small,
	.dma_write = test_dma_write,
	.dma_read = test_dma_read,
	.msg_done = rec_msg_done,
	.pkt_release = test_pkt_release,
	.pkt_release_burst = burst_release,
};

/*
 * spin_msg_packet_burst: takes the prefix that fits, says why the next
 * one was refused (-EINVAL bad range or past the last byte, -ENOBUFS no
 * HER) and keeps DESIGN §6 order; the HPU's batch releases packets in
 * bursts and its counters reach the message and context before msg_done;
 * a window the host does not map as a whole goes through per-DMA calls.
 */
static void
test_burst(void **state)
{
	const uint64_t len = 10 * 100 + 37;
	const uint32_t npkt = 11;
	unsigned direct;

	for (direct = 0; direct < 3; direct++) {
		struct spin_rt_conf c = {
			.nic_mem = 1 << 20, .nhpu = 1, .max_hers = 8,
			.max_msgs = 2, .max_ctxs = 4, .max_blobs = 4,
			.max_owners = 2, .pkt_payload = 100,
			.ops = direct == 2 ? &ops_burst : &ops,
			.families = fams,
		};
		struct spin_rt *rt = spin_rt_create(&c);
		struct spin_msg_info info = { .length = len };
		uint8_t *data = msg_data(len, 11 + direct);
		struct spin_pkt_in pk[12];
		struct spin_ctx_stats cs;
		struct spin_rt_stats st;
		struct test_host host;
		struct spin_msg *m;
		uint32_t ctx, i, pay = 0;
		int err;

		assert_non_null(rt);
		ctx = ctx_new(rt, "rec", SPINNIC_SCHED_DEFAULT, 0, 0, 0);
		ev_reset();
		burst_release_calls = 0;
		test_host_init(&host, len, direct != 0);
		for (i = 0; i < npkt; i++) {
			uint32_t l = (uint32_t)RTE_MIN(100ull, len - i * 100);
			struct test_pkt *p = test_pkt_new(data + i * 100, l);

			pk[i] = (struct spin_pkt_in){ p->data, p, i * 100ull,
						      l, 0 };
		}
		/* one packet too many (packet 0 again, never released as
		 * this one): refused after the last byte */
		pk[npkt] = pk[0];
		m = spin_msg_start(rt, ctx, &info, &host, TEST_ADDR, len,
				   NULL);
		assert_non_null(m);
		/* packet 3 out of range: 0..2 taken */
		pk[3].offset = len;
		assert_int_equal(spin_msg_packet_burst(m, pk, npkt, &err), 3);
		assert_int_equal(err, -EINVAL);
		pk[3].offset = 300;
		/* 8 HERs: 3..7 taken, no HER for 8 */
		assert_int_equal(spin_msg_packet_burst(m, pk + 3, npkt - 3,
						       &err), 5);
		assert_int_equal(err, -ENOBUFS);
		spin_rt_stats(rt, &st);
		assert_int_equal(st.pkt_rejects, 1);
		assert_int_equal(st.her_full, 1);
		assert_int_equal(st.hers_live, 8);
		assert_int_equal(test_done_calls, 0);
		assert_int_equal(spin_hpu_poll(rt, 0, 32), 9);
		spin_rt_stats(rt, &st);
		assert_int_equal(st.hers_live, 0);
		/* the rest and the one too many */
		assert_int_equal(spin_msg_packet_burst(m, pk + 8, 4, &err), 3);
		assert_int_equal(err, -EINVAL);
		assert_int_equal(test_done_calls, 0);
		poll_until_done(rt, 1);
		assert_int_equal(evlog[0].kind, EV_HDR);
		for (i = 1; i < nev; i++) {
			if (evlog[i].kind == EV_PAY)
				pay++;
			else if (evlog[i].kind == EV_CMPL)
				assert_int_equal(pay, npkt);
		}
		assert_int_equal(evlog[nev - 1].kind, EV_DONE);
		assert_int_equal(pay, npkt);
		assert_memory_equal(test_host_win(&host), data, len);
		assert_int_equal(last_res.status, SPIN_SUCCESS);
		assert_int_equal(last_res.npkts, npkt);
		assert_int_equal(last_res.dma_bytes, len);
		assert_int_equal(last_res.dma_events, 1);
		assert_int_equal(test_pkts_live, 0);
		/* no direct: every piece through dma_write; direct_small:
		 * the pieces mapped one by one */
		assert_int_equal(host.writes, direct == 0 ? npkt : 0);
		if (direct == 2) {
			assert_true(burst_release_calls >= 2);
			assert_true(burst_release_calls < npkt);
		}
		assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), 0);
		assert_int_equal(cs.hers, npkt + 2);
		assert_int_equal(cs.rc[SPIN_SUCCESS], npkt + 2);
		assert_int_equal(cs.dma_bytes, len);
		test_host_fini(&host);
		free(data);
		spin_rt_destroy(rt);
	}
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_many_msgs),
		cmocka_unit_test(test_pool_lifo),
		cmocka_unit_test(test_empty_msg),
		cmocka_unit_test(test_return_codes),
		cmocka_unit_test(test_dma_window),
		cmocka_unit_test(test_abort),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_nicmem),
		cmocka_unit_test(test_nicmem_owner_cap),
		cmocka_unit_test(test_nicmem_random),
		cmocka_unit_test(test_blob_map),
		cmocka_unit_test(test_ctx),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_order_threads),
		cmocka_unit_test(test_blocked_rr),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_dma_strided),
		cmocka_unit_test(test_done_same_poll),
	};

	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
