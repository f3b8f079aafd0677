/* SPDX-License-Identifier: BSD-3-Clause */
/* The typed-receive decision (shim_ddt_choose.c): features of real ddt
 * layouts, and static, threshold and aware choices with an injected cost
 * table. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "shim_ddt_choose.h"

static struct ddt_type *
committed(struct ddt_type *t)
{
	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	return t;
}

/* A vector of n blocks of bl bytes, stride 2 bl. */
static struct ddt_type *
vec(int64_t n, int64_t bl)
{
	return committed(ddt_vector(n, bl, 2 * bl, ddt_base(DDT_BYTE)));
}

static void
test_features(void **state)
{
	struct ddt_type *v = vec(16, 100), *c, *g;
	int64_t bl[3] = {8, 100, 40}, dis[3] = {0, 200, 1000};
	struct shim_ddt_feat f;

	(void)state;
	assert_int_equal(shim_ddt_feat_get(v, 2, 1000, true, &f), 0);
	assert_int_equal(f.cls, DDT_CLASS_VECTOR);
	assert_int_equal(f.size, 3200);
	assert_int_equal(f.nblocks, 32);
	assert_int_equal(f.blk_min, 100);
	assert_int_equal(f.blk_max, 100);
	assert_true(f.blk_mean == 100.0);
	assert_int_equal(f.npkts, 4);
	assert_true(f.blk_per_pkt == 8.0);
	assert_true(f.in_region);
	c = committed(ddt_contiguous(64, ddt_base(DDT_INT32)));
	assert_int_equal(shim_ddt_feat_get(c, 3, 1000, false, &f), 0);
	assert_int_equal(f.cls, DDT_CLASS_CONTIG);
	assert_int_equal(f.nblocks, 1);
	assert_false(f.in_region);
	g = committed(ddt_hindexed(3, bl, dis, ddt_base(DDT_BYTE)));
	assert_int_equal(shim_ddt_feat_get(g, 1, 64, true, &f), 0);
	assert_int_equal(f.cls, DDT_CLASS_GENERAL);
	assert_int_equal(f.nblocks, 3);
	assert_int_equal(f.blk_min, 8);
	assert_int_equal(f.blk_max, 100);
	assert_int_equal(f.npkts, 3);
	assert_int_equal(shim_ddt_feat_get(v, 0, 1000, true, &f), 0);
	assert_int_equal(f.size, 0);
	ddt_free(v);
	ddt_free(c);
	ddt_free(g);
}

/* A general layout of more than SHIM_DDT_FEAT_SAMPLE blocks: its blocks
 * estimated from the first ones (size / their mean length), not walked
 * (fifth slice); adjacent blocks merged. */
static void
test_features_sampled(void **state)
{
	int64_t bl[400], dis[400], i;
	struct ddt_type *g, *h;
	struct shim_ddt_feat f;

	(void)state;
	/* 300 blocks of 8 B (the first two adjacent: one of 16 B), then 100
	 * of 1000 B: the sample sees 8 and 16 B blocks only */
	for (i = 0; i < 400; i++) {
		bl[i] = i < 300 ? 8 : 1000;
		dis[i] = i == 1 ? 8 : i * 2000;
	}
	g = committed(ddt_hindexed(400, bl, dis, ddt_base(DDT_BYTE)));
	assert_int_equal(shim_ddt_feat_get(g, 1, 4096, true, &f), 0);
	assert_int_equal(f.cls, DDT_CLASS_GENERAL);
	assert_int_equal(f.size, 300 * 8 + 100 * 1000);
	assert_int_equal(f.blk_min, 8);
	assert_int_equal(f.blk_max, 16);
	/* 64 blocks of 63 x 8 + 16 = 520 B: 102400 x 64 / 520 */
	assert_int_equal(f.nblocks, (int64_t)(102400.0 * 64.0 / 520.0 + 0.5));
	assert_true(f.blk_mean == 102400.0 / (double)f.nblocks);
	/* 64 blocks or fewer: exact */
	h = committed(ddt_hindexed(64, bl, dis, ddt_base(DDT_BYTE)));
	assert_int_equal(shim_ddt_feat_get(h, 1, 4096, true, &f), 0);
	assert_int_equal(f.nblocks, 63);
	assert_int_equal(f.blk_max, 16);
	ddt_free(g);
	ddt_free(h);
}

static struct shim_ddt_feat
feat(enum ddt_class cls, int64_t size, int64_t nblocks, bool in_region)
{
	struct shim_ddt_feat f = {
		.cls = cls, .size = size, .nblocks = nblocks,
		.blk_min = size / nblocks, .blk_max = size / nblocks,
		.blk_mean = (double)size / (double)nblocks,
		.npkts = (size + 4095) / 4096, .in_region = in_region,
	};

	f.blk_per_pkt = (double)nblocks / (double)f.npkts;
	return f;
}

static void
test_static(void **state)
{
	struct shim_ddt_feat f = feat(DDT_CLASS_VECTOR, 8192, 1024, true);
	struct shim_ddt_choice ch;

	(void)state;
	shim_ddt_choose(SHIM_CHOOSER_STATIC, NULL, &f, false, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	assert_true(ch.prepare);
	f.cls = DDT_CLASS_GENERAL;
	shim_ddt_choose(SHIM_CHOOSER_STATIC, NULL, &f, false, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_RW_CP);
	f.cls = DDT_CLASS_CONTIG;
	shim_ddt_choose(SHIM_CHOOSER_STATIC, NULL, &f, false, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_CONTIG);
	assert_false(ch.prepare);
}

/* Algorithm 1: host until prepared; NIC only for l > 2048. */
static void
test_threshold(void **state)
{
	struct shim_ddt_feat small = feat(DDT_CLASS_VECTOR, 1 << 20, 512, true);
	struct shim_ddt_feat big = feat(DDT_CLASS_VECTOR, 1 << 20, 256, true);
	struct shim_ddt_choice ch;

	(void)state;
	assert_true(small.blk_mean == 2048.0); /* not above T */
	shim_ddt_choose(SHIM_CHOOSER_THRESHOLD, NULL, &small, true, &ch);
	assert_false(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose(SHIM_CHOOSER_THRESHOLD, NULL, &big, false, &ch);
	assert_true(ch.prepare);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose(SHIM_CHOOSER_THRESHOLD, NULL, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* aware without a table is the threshold rule */
	shim_ddt_choose(SHIM_CHOOSER_AWARE, NULL, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, NULL, &small, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
}

/* Host: 1000 ns + 0.1 ns/B + 20 ns/block. Specialized: 3000 ns +
 * 0.05 ns/B + 2 ns/block, 500 ns/block outside the region. iovec:
 * 2000 ns + 0.05 ns/B + 30 ns/block. rw-cp: 4000 ns + 0.05 ns/B + 5
 * ns/block (NIC strategies share a per-byte cost in the comparison). */
static const struct shim_ddt_costs table = {
	.nhpu = 2,
	.s = {
		[SPIN_TYPE_HOST] = {true, 1000, 0.1, 20, 0, 0},
		[SPIN_TYPE_SPECIALIZED] = {true, 3000, 0.05, 2, 0, 500},
		[SPIN_TYPE_IOVEC] = {true, 2000, 0.05, 30, 0, 0},
		[SPIN_TYPE_RW_CP] = {true, 4000, 0.05, 5, 0, 0},
	},
};

static void
test_aware(void **state)
{
	struct shim_ddt_feat f = feat(DDT_CLASS_VECTOR, 1 << 20, 1024, true);
	struct shim_ddt_choice ch;
	double th, ts;

	(void)state;
	th = shim_ddt_predict(&table, SPIN_TYPE_HOST, &f);
	assert_true(th == 1000 + 0.1 * (1 << 20) + 20 * 1024);
	ts = shim_ddt_predict(&table, SPIN_TYPE_SPECIALIZED, &f);
	assert_true(ts == 3000 + (0.05 * (1 << 20) + 2 * 1024) / 2);
	assert_true(shim_ddt_predict(&table, SPIN_TYPE_RO_CP, &f) < 0);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &table, &f, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	assert_true(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &table, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* the same layout into a buffer outside the region: per-block
	 * cost of the specialized handler makes rw-cp the candidate */
	f.in_region = false;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &table, &f, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_RW_CP);
	assert_int_equal(ch.strat, SPIN_TYPE_RW_CP);
	/* a small message: the NIC's fixed cost loses to the host */
	f = feat(DDT_CLASS_VECTOR, 4096, 8, true);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &table, &f, true, &ch);
	assert_false(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	/* a general layout never gets the specialized handlers */
	f = feat(DDT_CLASS_GENERAL, 1 << 20, 1 << 14, true);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &table, &f, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_RW_CP);
	assert_int_equal(ch.strat, SPIN_TYPE_RW_CP);
}

/* Within the hysteresis the host stays. */
static void
test_hysteresis(void **state)
{
	struct shim_ddt_costs c = {.nhpu = 1};
	struct shim_ddt_feat f = feat(DDT_CLASS_VECTOR, 100000, 10, true);
	struct shim_ddt_obs o = {0};
	struct shim_ddt_choice ch;

	(void)state;
	c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){true, 0, 1.0, 0, 0, 0};
	c.s[SPIN_TYPE_SPECIALIZED] = (struct shim_ddt_cost){true, 0, 0.95, 0,
		0, 0};
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	c.s[SPIN_TYPE_SPECIALIZED].byte_ns = 0.85;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* both ways: a layout on the NIC stays there while the host is not
	 * 10% faster (NIC 5% slower), leaves when it is (15%) */
	o.on_nic = true;
	c.s[SPIN_TYPE_SPECIALIZED].byte_ns = 1.05;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	assert_false(ch.prepare);
	/* not prepared: nothing to stay on */
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, false, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	c.s[SPIN_TYPE_SPECIALIZED].byte_ns = 1.15;
	o.nic_ns = 115000.0; /* measured as predicted */
	o.n_nic = SHIM_DDT_OBS_MIN;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	assert_false(ch.prepare);
	/* a close call (within 25%) the NIC has no measure of: prepared,
	 * and posted to the NIC once ready, to be measured */
	o.on_nic = false;
	o.n_nic = 0;
	c.s[SPIN_TYPE_SPECIALIZED].byte_ns = 1.05;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, false, &ch);
	assert_true(ch.prepare);
	assert_true(shim_ddt_close(&ch));
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* measured (5% slower): the host, not worth preparing */
	o.nic_ns = 105000.0;
	o.n_nic = SHIM_DDT_OBS_MIN;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	assert_false(ch.prepare);
	/* not close (30%): nothing to measure */
	o.n_nic = 0;
	c.s[SPIN_TYPE_SPECIALIZED].byte_ns = 1.3;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_false(shim_ddt_close(&ch));
	assert_false(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	/* the threshold rule ignores costs and the side: l > T, prepared */
	shim_ddt_choose_obs(SHIM_CHOOSER_THRESHOLD, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	o.on_nic = false;
	shim_ddt_choose_obs(SHIM_CHOOSER_THRESHOLD, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
}

/* Once a layout's NIC object is built, it is the candidate: a post whose
 * buffer would make another strategy the cheapest compares the host with
 * the built one (it cannot post another). */
static void
test_built_candidate(void **state)
{
	struct shim_ddt_costs c = {.nhpu = 1};
	struct shim_ddt_feat f = feat(DDT_CLASS_VECTOR, 100000, 10, true);
	struct shim_ddt_obs o = {0};
	struct shim_ddt_choice ch;

	(void)state;
	c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){true, 0, 1.0, 0, 0, 0};
	/* the same per-byte cost (strategies are compared with one): the
	 * fixed cost sets them apart */
	c.s[SPIN_TYPE_SPECIALIZED] = (struct shim_ddt_cost){true, 20000, 0.3,
		0, 0, 0};
	c.s[SPIN_TYPE_IOVEC] = (struct shim_ddt_cost){true, 0, 0.3, 0, 0, 0};
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_IOVEC);
	o.built = SPIN_TYPE_SPECIALIZED;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	assert_true(ch.t_nic == 50000.0);
	/* built but not in the table: nothing to compare, the host */
	c.s[SPIN_TYPE_SPECIALIZED].valid = false;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c, &f, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
}

/* When a worthwhile preparation is queued: Algorithm 1 at the first use
 * whatever the gate; aware from the second use (second, rent) or the
 * first (eager); rent once uses x gain covers the preparation. */
static void
test_gate(void **state)
{
	struct shim_ddt_choice c = {
		.nic = SPIN_TYPE_SPECIALIZED, .prepare = true,
		.strat = SPIN_TYPE_HOST, .t_host = 1000.0, .t_nic = 600.0,
	};

	(void)state;
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_THRESHOLD,
				       SHIM_GATE_SECOND, &c, 1, 0.0));
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_STATIC, SHIM_GATE_RENT,
				       &c, 1, 1e9));
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_EAGER,
				       &c, 1, 1e9));
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_SECOND,
					&c, 1, 0.0));
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_SECOND,
				       &c, 2, 1e9));
	/* gain 400 ns per message, preparation 2000 ns: from use 5 */
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
					&c, 1, 2000.0));
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
					&c, 4, 2000.0));
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
				       &c, 5, 2000.0));
	/* a close call (NIC predicted 10% slower) is prepared to be
	 * measured only when the most it may gain, the close band (25% of
	 * the host's 1000 ns) less the predicted loss, repays the
	 * preparation over the uses so far: 150 ns a use */
	c.t_nic = 1100.0;
	assert_true(shim_ddt_close(&c));
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
					&c, 13, 2000.0));
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
				       &c, 14, 2000.0));
	/* a preparation of 1.5 ms (a 32k-block layout) for a 110 us
	 * receive predicted alike on both sides: not within 50 uses */
	c.t_host = c.t_nic = 110000.0;
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
					&c, 50, 1.5e6));
	/* a NIC predicted 20% faster (close, too): its own gain plus the
	 * band */
	c.t_nic = 88000.0;
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
				       &c, 31, 1.5e6));
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
					&c, 30, 1.5e6));
	/* the second gate ignores the cost */
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_SECOND,
				       &c, 2, 1.5e6));
	c.t_host = 1000.0;
	c.t_nic = 600.0;
	/* unknown preparation cost: the second use */
	assert_true(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_RENT,
				       &c, 2, 0.0));
	/* not worth it: never */
	c.prepare = false;
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_THRESHOLD,
					SHIM_GATE_EAGER, &c, 9, 0.0));
	assert_false(shim_ddt_gate_open(SHIM_CHOOSER_AWARE, SHIM_GATE_EAGER,
					&c, 9, 0.0));
	/* the default pays back (fifth slice) */
	assert_int_equal(shim_ddt_gate_parse(NULL), SHIM_GATE_RENT);
	assert_int_equal(shim_ddt_gate_parse(""), SHIM_GATE_RENT);
	assert_int_equal(shim_ddt_gate_parse("second"), SHIM_GATE_SECOND);
	assert_int_equal(shim_ddt_gate_parse("eager"), SHIM_GATE_EAGER);
	assert_int_equal(shim_ddt_gate_parse("rent"), SHIM_GATE_RENT);
	assert_int_equal(shim_ddt_gate_parse("2"), -EINVAL);
}

/* NIC strategies are compared with one per-byte cost, the least of the
 * table's: a fit's per-byte noise, multiplied by a large message, does
 * not pick a strategy that finds blocks more slowly (Fig. 13's nas_lu_x:
 * 64 blocks of 2560 B, hpu-local picked over specialized) */
static void
test_candidate_common_byte(void **state)
{
	struct shim_ddt_costs c = {.nhpu = 2};
	struct shim_ddt_feat f = feat(DDT_CLASS_VECTOR, 163840, 64, true);
	struct shim_ddt_choice ch;

	(void)state;
	c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){true, 10000, 0.5, 20,
		0, 0};
	c.s[SPIN_TYPE_SPECIALIZED] = (struct shim_ddt_cost){true, 9000, 0.30,
		2, 0, 0};
	c.s[SPIN_TYPE_HPU_LOCAL] = (struct shim_ddt_cost){true, 9000, 0.20,
		40, 0, 0};
	/* by their own per-byte costs hpu-local is 25% cheaper */
	assert_true(shim_ddt_predict(&c, SPIN_TYPE_HPU_LOCAL, &f) * 1.1 <
		    shim_ddt_predict(&c, SPIN_TYPE_SPECIALIZED, &f));
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	/* the host is compared with the candidate's own prediction */
	assert_true(ch.t_nic == shim_ddt_predict(&c, SPIN_TYPE_SPECIALIZED,
						 &f));
	assert_true(ch.t_nic == shim_ddt_predict_byte(&c,
		SPIN_TYPE_SPECIALIZED, &f, -1.0));
	assert_true(shim_ddt_predict_byte(&c, SPIN_TYPE_SPECIALIZED, &f,
					  0.2) ==
		    9000 + (0.2 * 163840 + 2 * 64) / 2);
	/* a strategy cheaper per block still wins: 4096 blocks of 40 B */
	f = feat(DDT_CLASS_VECTOR, 163840, 4096, true);
	c.s[SPIN_TYPE_SPECIALIZED].block_ns = 60;
	c.s[SPIN_TYPE_HPU_LOCAL].block_ns = 20;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_HPU_LOCAL);
	assert_true(ch.t_nic == shim_ddt_predict(&c, SPIN_TYPE_HPU_LOCAL, &f));
}

/* Among NIC strategies within the band of the cheapest, ro-cp comes
 * before hpu-local (Fig. 13: never slower on a general type, 2.3x on
 * fft2d); a clearly cheaper hpu-local still wins. */
static void
test_candidate_order(void **state)
{
	struct shim_ddt_costs c = {.nhpu = 2};
	struct shim_ddt_feat f = feat(DDT_CLASS_GENERAL, 131072, 16384, true);
	struct shim_ddt_choice ch;

	(void)state;
	c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){true, 10000, 0.5, 20,
		0, 0};
	c.s[SPIN_TYPE_HPU_LOCAL] = (struct shim_ddt_cost){true, 9000, 0.20,
		10, 0, 0};
	c.s[SPIN_TYPE_RO_CP] = (struct shim_ddt_cost){true, 9000, 0.20,
		10.5, 0, 0};
	c.s[SPIN_TYPE_RW_CP] = (struct shim_ddt_cost){true, 9000, 0.20,
		10.2, 0, 0};
	/* hpu-local the cheapest, ro-cp within the band */
	assert_true(shim_ddt_predict(&c, SPIN_TYPE_HPU_LOCAL, &f) <
		    shim_ddt_predict(&c, SPIN_TYPE_RO_CP, &f));
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_RO_CP);
	/* hpu-local well below the band: it wins */
	c.s[SPIN_TYPE_HPU_LOCAL].block_ns = 5;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c, &f, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_HPU_LOCAL);
}

/* Exploration by age (shim_ddt_explore()) and the re-measure of an old
 * estimate (shim_ddt_obs_sample()), O(1) per post. */
static void
test_explore_age(void **state)
{
	struct shim_ddt_obs o = {0};
	uint64_t u, next;
	unsigned n, x = 0;

	(void)state;
	/* on the host since use 1, the NIC last sampled at use 2 */
	assert_true(shim_ddt_obs_sample(&o, true, 100.0, 2));
	assert_int_equal(o.nic_at, 2);
	o.on_nic = false;
	for (u = 3; u < 10; u++)
		assert_false(shim_ddt_explore(&o, false, u, true, false));
	/* its estimate 8 uses old: explored, and the period doubles */
	assert_true(shim_ddt_explore(&o, false, 10, true, false));
	assert_true(o.nic_stale);
	assert_int_equal(o.nic_at, 10);
	assert_int_equal(o.explore_n, 2 * SHIM_DDT_EXPLORE_MIN);
	/* no sample came (lost): not again before the new period */
	for (u = 11, n = 0; u < 10 + 2 * SHIM_DDT_EXPLORE_MIN; u++)
		n += shim_ddt_explore(&o, false, u, true, false);
	assert_int_equal(n, 0);
	/* the periods double up to the bound: 8 + 16 + ... + 128 x k */
	for (u = 10 + 2 * SHIM_DDT_EXPLORE_MIN, next = u; u < 3000; u++) {
		bool e = shim_ddt_explore(&o, false, u, true, false);

		assert_int_equal(e, u == next);
		if (e) {
			x++;
			next = u + o.explore_n;
		}
	}
	assert_int_equal(o.explore_n, SHIM_DDT_EXPLORE_MAX);
	assert_true(x <= 4 + 3000 / SHIM_DDT_EXPLORE_MAX);
	/* a close call: the period is at most SHIM_DDT_EXPLORE_CLOSE */
	o.nic_at = 3000 + SHIM_DDT_EXPLORE_CLOSE - 1;
	assert_false(shim_ddt_explore(&o, false, 3000 + 2 *
				      SHIM_DDT_EXPLORE_CLOSE - 2, true,
				      true));
	assert_true(shim_ddt_explore(&o, false, 3000 + 2 *
				     SHIM_DDT_EXPLORE_CLOSE - 1, true, true));
	assert_int_equal(o.explore_n, SHIM_DDT_EXPLORE_MAX);
	/* cannot (not prepared, no table): the age grows, nothing else */
	o.nic_at = 0;
	assert_false(shim_ddt_explore(&o, false, 5000, false, false));
	/* a flip of the side: the minimum period again, and the host's
	 * age is what counts now */
	o.host_at = 4995;
	assert_false(shim_ddt_explore(&o, true, 5001, true, false));
	assert_int_equal(o.explore_n, SHIM_DDT_EXPLORE_MIN);
	o.on_nic = true;
	assert_true(shim_ddt_explore(&o, true, 4995 + SHIM_DDT_EXPLORE_MIN,
				     true, false));
	assert_true(o.host_stale);
	/* the host's estimate raised by a spike (90 -> 112.5 by the
	 * clipped EWMA) and re-measured at 91: within CLIP of the sample,
	 * the usual step (a lower sample replacing any estimate biased the
	 * path not taken low: more flips in close calls) */
	o.n_host = 0;
	o.host_stale = false;
	for (n = 0; n < SHIM_DDT_OBS_MIN; n++)
		assert_true(shim_ddt_obs_sample(&o, false, 90.0, 5000));
	assert_true(shim_ddt_obs_sample(&o, false, 900.0, 5001));
	assert_true(o.host_ns > 112.0 && o.host_ns < 113.0);
	o.host_stale = true;
	assert_true(shim_ddt_obs_sample(&o, false, 91.0, 5002));
	assert_true(o.host_ns > 106.0);
	assert_false(o.host_stale);
	/* a load spike's leftover, over CLIP times the fresh sample: that
	 * sample is the estimate now; not stale, only the clipped step */
	o.host_ns = 400.0;
	assert_true(shim_ddt_obs_sample(&o, false, 150.0, 5003));
	assert_true(o.host_ns == 400.0 + 0.25 * (200.0 - 400.0));
	o.host_ns = 400.0;
	o.host_stale = true;
	assert_true(shim_ddt_obs_sample(&o, false, 150.0, 5003));
	assert_true(o.host_ns == 150.0);
	assert_false(o.host_stale);
	assert_int_equal(o.host_at, 5003);
	o.host_ns = 91.0;
	/* a stale estimate re-measured higher: the usual clipped step */
	o.host_stale = true;
	assert_true(shim_ddt_obs_sample(&o, false, 1000.0, 5004));
	assert_true(o.host_ns > 91.0 && o.host_ns <= 91.0 * 1.25 + 1e-9);
	/* not a time: ignored, the stale mark and the age kept */
	o.host_stale = true;
	assert_false(shim_ddt_obs_sample(&o, false, -1.0, 5005));
	assert_true(o.host_stale);
	assert_int_equal(o.host_at, 5004);
}

/* A sample from spinnic's NIC time (shim_ddt_ctx_sample()): NIC time +
 * unpack + the least completion latency seen; the wait for the sender
 * is out of it; the NIC's word used only within the client's time */
static void
test_ctx_sample(void **state)
{
	struct shim_ddt_obs raw = {0}, ctx = {0};
	double lat = -1, lat2 = -1;
	bool used = true;
	int i;

	(void)state;
	/* not a time at the client: none */
	assert_true(isnan(shim_ddt_ctx_sample(NAN, 10, 0, &lat, &used)));
	assert_true(isnan(shim_ddt_ctx_sample(-1, 10, 0, &lat, NULL)));
	assert_false(used);
	/* no NIC time, or one the client cannot believe: the client's */
	assert_true(shim_ddt_ctx_sample(1000, 0, 100, &lat, &used) == 1000);
	assert_false(used);
	assert_true(shim_ddt_ctx_sample(1000, 1001, 0, &lat, &used) == 1000);
	assert_false(used);
	assert_true(shim_ddt_ctx_sample(1000, 901, 100, &lat, &used) == 1000);
	assert_true(shim_ddt_ctx_sample(1000, NAN, 0, &lat, &used) == 1000);
	assert_true(shim_ddt_ctx_sample(1000, -5, 0, &lat, &used) == 1000);
	assert_false(used);
	assert_true(lat < 0); /* nothing learned from them */
	/* the first usable receive sets the latency: its sample is its own
	 * time */
	assert_true(shim_ddt_ctx_sample(1000, 300, 200, &lat, &used) == 1000);
	assert_true(used);
	assert_true(lat == 500);
	/* a sender 200 us late: the same sample, the latency stays */
	assert_true(shim_ddt_ctx_sample(201000, 300, 200, &lat, &used) ==
		    1000);
	assert_true(lat == 500);
	/* a quicker completion lowers it (any wait only adds) */
	assert_true(shim_ddt_ctx_sample(700, 300, 100, &lat, &used) == 700);
	assert_true(lat == 300);
	assert_true(shim_ddt_ctx_sample(5000, 300, 100, &lat, &used) == 700);
	/* an unpack time that is not one is taken as none */
	assert_true(shim_ddt_ctx_sample(5000, 300, 6000, &lat, &used) == 600);
	assert_true(shim_ddt_ctx_sample(5000, 300, NAN, &lat, &used) == 600);
	assert_true(used);

	/* a halo exchange: the receives are posted before the peer sends.
	 * Host path 20 us (NIC copy to staging 8 + unpack 12), NIC 9 us,
	 * completion 3 us; the NIC's receives happened to wait 250 us, the
	 * host's 150 us. From the post, the host looks faster; from the
	 * data's arrival, the NIC is, by its real margin */
	assert_true(shim_ddt_ctx_sample(23000, 8000, 12000, &lat2, &used) ==
		    23000);
	for (i = 0; i < 20; i++) {
		double h = 150000 + 23000, n = 250000 + 12000;

		assert_true(shim_ddt_obs_sample(&raw, false, h, (uint64_t)i));
		assert_true(shim_ddt_obs_sample(&raw, true, n, (uint64_t)i));
		assert_true(shim_ddt_obs_sample(&ctx, false,
			shim_ddt_ctx_sample(h, 8000, 12000, &lat2, NULL),
			(uint64_t)i));
		assert_true(shim_ddt_obs_sample(&ctx, true,
			shim_ddt_ctx_sample(n, 9000, 0, &lat2, NULL),
			(uint64_t)i));
	}
	assert_true(raw.host_ns < raw.nic_ns);
	assert_true(ctx.host_ns == 23000);
	assert_true(ctx.nic_ns == 12000);
	assert_true(lat2 == 3000);
}

static void
test_parse(void **state)
{
	(void)state;
	assert_int_equal(shim_ddt_chooser_parse(NULL), SHIM_CHOOSER_AWARE);
	assert_int_equal(shim_ddt_chooser_parse("aware"), SHIM_CHOOSER_AWARE);
	assert_int_equal(shim_ddt_chooser_parse("static"),
			 SHIM_CHOOSER_STATIC);
	assert_int_equal(shim_ddt_chooser_parse("threshold"),
			 SHIM_CHOOSER_THRESHOLD);
	assert_int_equal(shim_ddt_chooser_parse("lah"), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_features_sampled),
		cmocka_unit_test(test_static),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_aware),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_built_candidate),
		cmocka_unit_test(test_gate),
		cmocka_unit_test(test_candidate_common_byte),
		cmocka_unit_test(test_candidate_order),
		cmocka_unit_test(test_explore_age),
		cmocka_unit_test(test_ctx_sample),
		cmocka_unit_test(test_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
