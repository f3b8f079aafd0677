/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/spin outbound jobs (sender-side handlers): submit, run on HPUs, the
 * done ring, statuses of failing jobs, the max_out_jobs bound, context
 * references, and the "ddt_gather" family against a host pack.
 */
#include <errno.h>
#include <stdio.h>

#include "spin_test.h"
#include "ddt.h"
#include "handlers.h"
#include "spin_handler_args.h"

/* host ops: the test host, with reads that fail on demand */
static int fail_reads;

static void *
out_direct(void *host, uint64_t addr, size_t len)
{
	return fail_reads ? NULL : test_direct(host, addr, len);
}

static int
out_dma_read(void *host, uint64_t addr, void *dst, size_t len)
{
	if (fail_reads)
		return -ESHUTDOWN;
	return test_dma_read(host, addr, dst, len);
}

static void
no_msg_done(void *app_msg, const struct spin_msg_result *r)
{
	RTE_SET_USED(app_msg);
	RTE_SET_USED(r);
	fail_msg("no message in these tests");
}

static const struct spin_host_ops ops = {
	.direct = out_direct,
	.dma_write = test_dma_write,
	.dma_read = out_dma_read,
	.msg_done = no_msg_done,
	.pkt_release = test_pkt_release,
};

/* "copy_out": payload = window bytes at the packet's offset */
static int
copy_outbound(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	if (spin_dma_from_host(h, pkt->offset, pkt->payload, pkt->len) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

/* misbehaving sender handlers */
static int
write_outbound(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	uint64_t len;

	assert_int_equal(spin_dma_to_host(h, 0, pkt->payload, 1, 0), -EPERM);
	assert_null(spin_dma_window(h, &len));
	assert_int_equal(spin_ct_inc(h, 1), -ENOTSUP);
	return SPIN_SUCCESS;
}

static int
err_outbound(const struct spin_out_pkt *pkt, struct spin_hctx *h)
{
	RTE_SET_USED(pkt);
	RTE_SET_USED(h);
	return SPIN_DROP;
}

static int
pay_only(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	RTE_SET_USED(pkt);
	RTE_SET_USED(h);
	return SPIN_SUCCESS;
}

static const struct spin_handler_family fam_copy = {
	.name = "copy_out", .outbound = copy_outbound,
};
static const struct spin_handler_family fam_write = {
	.name = "write_out", .outbound = write_outbound,
};
static const struct spin_handler_family fam_err = {
	.name = "err_out", .outbound = err_outbound,
};
static const struct spin_handler_family fam_inbound = {
	.name = "inbound_only", .payload = pay_only,
};
static const struct spin_handler_family *const fams[] = {
	&fam_copy, &fam_write, &fam_err, &fam_inbound,
	&spin_handlers_ddt_gather, NULL,
};

static struct spin_rt *
rt_new(unsigned nhpu, unsigned max_out)
{
	struct spin_rt_conf c = {
		.nic_mem = 1u << 20, .nhpu = nhpu, .max_ctxs = 16,
		.max_owners = 4, .max_out_jobs = max_out,
		.ops = &ops, .families = fams,
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

static void
job_init(struct spin_out_job *j, uint32_t ctx, struct test_host *host,
	 uint64_t off, uint32_t len, uint8_t *dst, uintptr_t cookie)
{
	memset(j, 0, sizeof(*j));
	j->ctx = ctx;
	j->offset = off;
	j->len = len;
	j->dst = dst;
	j->host = host;
	j->win_addr = TEST_ADDR;
	j->win_len = host->len;
	j->cookie = (void *)cookie;
	j->status = 12345;
}

/* Poll the HPUs round-robin until @p n jobs came back; cookies seen once. */
static void
drain(struct spin_rt *rt, unsigned n, struct spin_out_job **got, uint8_t *seen)
{
	unsigned k = 0, i = 0;

	while (k < n) {
		unsigned m;

		spin_hpu_poll(rt, i % spin_rt_nhpu(rt), 7);
		m = spin_out_done_burst(rt, got + k, n - k);
		for (; m > 0; m--, k++) {
			uintptr_t c = (uintptr_t)got[k]->cookie;

			assert_int_equal(seen[c], 0);
			seen[c] = 1;
		}
		assert_true(++i < 1000000);
	}
	/* nothing more */
	spin_hpu_poll(rt, 0, 64);
	assert_int_equal(spin_out_done_burst(rt, got, 1), 0);
}

static void
hpu_sum(struct spin_rt *rt, struct spin_hpu_stats *sum)
{
	struct spin_hpu_stats s;
	unsigned i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < spin_rt_nhpu(rt); i++) {
		assert_int_equal(spin_hpu_stats(rt, i, &s), 0);
		sum->out_jobs += s.out_jobs;
		sum->out_failures += s.out_failures;
		sum->out_bytes += s.out_bytes;
		sum->dma_rejects += s.dma_rejects;
		sum->dma_failures += s.dma_failures;
	}
}

#define NJOBS 100u
#define PKT 100u

static void
test_out_basic(void **state)
{
	struct spin_rt *rt = rt_new(2, 0);
	struct spin_out_job jobs[NJOBS], *ptrs[NJOBS], *got[NJOBS];
	static uint8_t bufs[NJOBS][PKT];
	uint8_t seen[NJOBS] = { 0 };
	struct spin_hpu_stats hs;
	struct spin_rt_stats rs;
	struct spin_ctx_stats cs;
	struct test_host host;
	uint32_t ctx;
	unsigned i, hpus = 0;
	int err;

	RTE_SET_USED(state);
	test_host_init(&host, NJOBS * PKT, 1);
	for (i = 0; i < NJOBS * PKT; i++)
		test_host_win(&host)[i] = (uint8_t)(i * 7 + 3);
	ctx = ctx_new(rt, "copy_out", NULL, 0);
	memset(bufs, 0, sizeof(bufs));
	for (i = 0; i < NJOBS; i++) {
		job_init(&jobs[i], ctx, &host, (uint64_t)i * PKT, PKT, bufs[i],
			 i);
		ptrs[i] = &jobs[i];
	}
	assert_int_equal(spin_out_submit_burst(rt, ptrs, NJOBS, &err), NJOBS);
	assert_int_equal(err, 0);
	spin_rt_stats(rt, &rs);
	assert_int_equal(rs.out_live, NJOBS);
	/* the context is held by the jobs: its free does not stop them */
	assert_int_equal(spin_rt_ctx_free(rt, 1, ctx), 0);
	assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), 0);
	assert_int_equal(cs.refs, NJOBS);
	drain(rt, NJOBS, got, seen);
	for (i = 0; i < NJOBS; i++) {
		assert_int_equal(jobs[i].status, 0);
		assert_true(jobs[i].hpu < 2);
		hpus |= 1u << jobs[i].hpu;
		assert_memory_equal(bufs[i], test_host_win(&host) + i * PKT,
				    PKT);
		assert_null(jobs[i].rt_priv);
	}
	assert_int_equal(hpus, 3); /* both HPUs ran jobs */
	hpu_sum(rt, &hs);
	assert_int_equal(hs.out_jobs, NJOBS);
	assert_int_equal(hs.out_failures, 0);
	assert_int_equal(hs.out_bytes, NJOBS * PKT);
	spin_rt_stats(rt, &rs);
	assert_int_equal(rs.out_submitted, NJOBS);
	assert_int_equal(rs.out_live, 0);
	/* the last job's reference freed the context */
	assert_int_equal(spin_rt_ctx_stats(rt, ctx, &cs), -ENOENT);
	assert_int_equal(spin_out_submit(rt, &jobs[0]), -ENOENT);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

static void
test_out_failures(void **state)
{
	struct spin_rt *rt = rt_new(1, 8);
	struct spin_out_job jobs[10], *ptrs[10], *got[10];
	uint8_t bufs[10][PKT], seen[10] = { 0 };
	struct spin_hpu_stats hs;
	struct spin_rt_stats rs;
	struct test_host host;
	uint32_t copy, wr, er, in;
	unsigned i;
	int err;

	RTE_SET_USED(state);
	/* directly addressable: spin_dma_window() could hand it out */
	test_host_init(&host, 1000, 1);
	copy = ctx_new(rt, "copy_out", NULL, 0);
	wr = ctx_new(rt, "write_out", NULL, 0);
	er = ctx_new(rt, "err_out", NULL, 0);
	in = ctx_new(rt, "inbound_only", NULL, 0);

	/* refused at submit, nothing taken */
	job_init(&jobs[0], in, &host, 0, PKT, bufs[0], 0);
	assert_int_equal(spin_out_submit(rt, &jobs[0]), -ENOTSUP);
	job_init(&jobs[0], copy, &host, 0, PKT, NULL, 0);
	assert_int_equal(spin_out_submit(rt, &jobs[0]), -EINVAL);
	job_init(&jobs[0], SPINNIC_HANDLE_NONE, &host, 0, PKT, bufs[0], 0);
	assert_int_equal(spin_out_submit(rt, &jobs[0]), -ENOENT);
	spin_rt_stats(rt, &rs);
	assert_int_equal(rs.out_rejects, 3);
	assert_int_equal(rs.out_live, 0);

	/* a bad job in a burst stops it there */
	for (i = 0; i < 3; i++) {
		job_init(&jobs[i], copy, &host, i * PKT, PKT, bufs[i], i);
		ptrs[i] = &jobs[i];
	}
	jobs[1].ctx = in;
	assert_int_equal(spin_out_submit_burst(rt, ptrs, 3, &err), 1);
	assert_int_equal(err, -ENOTSUP);
	drain(rt, 1, got, seen);
	assert_int_equal(jobs[0].status, 0);

	/* each way a job fails, and the max_out_jobs bound (8) */
	memset(seen, 0, sizeof(seen));
	job_init(&jobs[0], copy, &host, 950, PKT, bufs[0], 0);   /* past */
	job_init(&jobs[1], wr, &host, 0, PKT, bufs[1], 1);       /* write */
	job_init(&jobs[2], er, &host, 0, PKT, bufs[2], 2);       /* rc */
	for (i = 3; i < 10; i++)
		job_init(&jobs[i], copy, &host, i * PKT, PKT, bufs[i], i);
	for (i = 0; i < 10; i++)
		ptrs[i] = &jobs[i];
	assert_int_equal(spin_out_submit_burst(rt, ptrs, 10, &err), 8);
	assert_int_equal(err, -ENOBUFS);
	assert_int_equal(spin_out_submit(rt, &jobs[8]), -ENOBUFS);
	spin_rt_stats(rt, &rs);
	assert_int_equal(rs.out_full, 2);
	assert_int_equal(rs.out_live, 8);
	drain(rt, 8, got, seen);
	/* the host's memory goes away before the last two run */
	fail_reads = 1;
	assert_int_equal(spin_out_submit_burst(rt, ptrs + 8, 2, &err), 2);
	drain(rt, 2, got, seen);
	fail_reads = 0;
	assert_int_equal(jobs[0].status, -ERANGE);
	assert_int_equal(jobs[1].status, -EPERM);
	assert_int_equal(jobs[2].status, -EPROTO);
	for (i = 3; i < 8; i++) {
		assert_int_equal(jobs[i].status, 0);
		assert_memory_equal(bufs[i], test_host_win(&host) + i * PKT,
				    PKT);
	}
	assert_int_equal(jobs[8].status, -EIO);
	assert_int_equal(jobs[9].status, -EIO);
	hpu_sum(rt, &hs);
	assert_int_equal(hs.out_jobs, 11);
	assert_int_equal(hs.out_failures, 5);
	assert_int_equal(hs.out_bytes, 6 * PKT);
	assert_int_equal(hs.dma_rejects, 2);  /* out of window, write */
	assert_int_equal(hs.dma_failures, 2);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

/* "ddt_gather": packets of a typed buffer, any order, several HPUs, equal
 * the host pack; a window that does not hold the type fails the job. */
static void
test_out_gather(void **state)
{
	const int64_t count = 37;
	struct ddt_type *t = ddt_vector(5, 3, 7, ddt_base(DDT_INT32));
	struct spin_rt *rt = rt_new(3, 64);
	struct spin_out_job *jobs, **ptrs, **got;
	struct spin_hpu_stats hs;
	struct spin_ddt_args *a;
	struct test_host host;
	uint8_t *packed, *out, *seen;
	int64_t size, ext, total;
	uint32_t ctx, npk, i, *order, args_len;
	unsigned seed = 11, taken = 0, done = 0;
	ssize_t blen;

	RTE_SET_USED(state);
	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	size = ddt_size(t);
	ext = ddt_extent(t);
	total = size * count;
	test_host_init(&host, (uint64_t)(ext * count), 1);
	for (i = 0; i < host.len; i++)
		test_host_win(&host)[i] = (uint8_t)rand_r(&seed);
	packed = malloc((size_t)total);
	out = calloc(1, (size_t)total);
	assert_non_null(packed);
	assert_non_null(out);
	assert_int_equal(ddt_pack(t, count, test_host_win(&host), packed), 0);

	blen = ddt_serialize(t, NULL, 0);
	assert_true(blen > 0);
	args_len = (uint32_t)(sizeof(*a) + (size_t)blen);
	a = calloc(1, args_len);
	assert_non_null(a);
	a->version = SPIN_DDT_ARGS_VERSION;
	a->strategy = SPIN_DDT_HPU_LOCAL;
	a->nslots = 2; /* HPU 2 works on a stack segment */
	a->count = count;
	a->origin = 0;
	a->blob_off = sizeof(*a);
	a->blob_len = (uint64_t)blen;
	a->stats_off = SPIN_DDT_STATS_NONE;
	assert_int_equal(ddt_serialize(t, (uint8_t *)a + sizeof(*a),
				       (size_t)blen), blen);
	ctx = ctx_new(rt, "ddt_gather", a, args_len);

	npk = (uint32_t)((total + PKT - 1) / PKT);
	jobs = calloc(npk, sizeof(*jobs));
	ptrs = calloc(npk, sizeof(*ptrs));
	got = calloc(npk, sizeof(*got));
	seen = calloc(npk, 1);
	order = calloc(npk, sizeof(*order));
	for (i = 0; i < npk; i++)
		order[i] = i;
	/* consecutive runs and jumps back: resumes and resets */
	test_shuffle(order + npk / 2, npk - npk / 2, &seed);
	for (i = 0; i < npk; i++) {
		uint64_t off = (uint64_t)order[i] * PKT;

		job_init(&jobs[i], ctx, &host, off,
			 (uint32_t)RTE_MIN((uint64_t)PKT, (uint64_t)total - off),
			 out + off, i);
		ptrs[i] = &jobs[i];
	}
	/* submit as room allows, up to the bound of 64 */
	while (done < npk) {
		unsigned k;

		if (taken < npk)
			taken += spin_out_submit_burst(rt, ptrs + taken,
						       npk - taken, NULL);
		spin_hpu_poll(rt, done % 3, 5);
		k = spin_out_done_burst(rt, got, npk);
		for (i = 0; i < k; i++) {
			uintptr_t c = (uintptr_t)got[i]->cookie;

			assert_int_equal(got[i]->status, 0);
			assert_int_equal(seen[c], 0);
			seen[c] = 1;
		}
		done += k;
	}
	assert_memory_equal(out, packed, (size_t)total);
	hpu_sum(rt, &hs);
	assert_int_equal(hs.out_jobs, npk);
	assert_int_equal(hs.out_bytes, (uint64_t)total);

	/* a window one byte short of the type: the last block is refused */
	job_init(&jobs[0], ctx, &host, (uint64_t)total - 1, 1, out, 0);
	jobs[0].win_len = host.len - (uint64_t)(ext - ddt_true_extent(t)) - 1;
	assert_int_equal(spin_out_submit(rt, &jobs[0]), 0);
	memset(seen, 0, npk);
	drain(rt, 1, got, seen);
	assert_int_equal(jobs[0].status, -ERANGE);

	/* bad arguments */
	{
		struct spin_ctx_conf c = {
			.family = "ddt_gather", .args = a, .args_len = args_len,
		};
		uint32_t h;

		a->strategy = SPIN_DDT_RO_CP;
		assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), -EINVAL);
		a->strategy = SPIN_DDT_HPU_LOCAL;
		a->nslots = 0;
		assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), -EINVAL);
		a->nslots = 1;
		a->blob_len--;
		assert_int_equal(spin_rt_ctx_create(rt, 1, &c, &h), -EINVAL);
	}
	free(order);
	free(seen);
	free(got);
	free(ptrs);
	free(jobs);
	free(a);
	free(out);
	free(packed);
	ddt_free(t);
	test_host_fini(&host);
	spin_rt_destroy(rt);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_basic),
		cmocka_unit_test(test_out_failures),
		cmocka_unit_test(test_out_gather),
	};

	RTE_SET_USED(argc);
	test_eal_init(argv[0]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
