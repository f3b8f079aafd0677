/* SPDX-License-Identifier: BSD-3-Clause */
/* The aware chooser's calibration (shim_ddt_calib.c) and its refinement
 * (shim_ddt_choose.c): the cache file round trip, every corruption of it
 * refused without a crash, the fit of a measured table on a known cost
 * model, and the decisions under injected calibrations and measured
 * times. No NIC: itest_offload measures through a real spinnic. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "shim_ddt_calib.h"

#define KEY 0x0123456789abcdefull

static struct shim_calib
sample_calib(void)
{
	struct shim_calib c;

	memset(&c, 0, sizeof(c));
	c.key = KEY;
	c.payload = 2048;
	c.costs.nhpu = 2;
	c.prep_msg_ns = 40000.0;
	c.prep_block_ns = 3.5;
	c.costs.unpack_byte_ns = 0.25;
	c.costs.unpack_block_ns = 12.0;
	c.calib_ms = 80.5;
	c.costs.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){
		true, 5000.0, 0.5, 12.0, 0.0, 0.0 };
	c.costs.s[SPIN_TYPE_SPECIALIZED] = (struct shim_ddt_cost){
		true, 6000.0, 0.6, 40.0, 100.0, 300.0 };
	c.costs.s[SPIN_TYPE_IOVEC] = (struct shim_ddt_cost){
		true, 6000.0, 0.6, 50.0, 100.0, 300.0 };
	c.costs.s[SPIN_TYPE_RW_CP] = (struct shim_ddt_cost){
		true, 7000.0, 0.7, 60.0, 200.0, 300.0 };
	/* hpu-local and ro-cp not measured */
	return c;
}

static int
format(const struct shim_calib *c, char *buf, size_t len)
{
	int n = shim_calib_format(c, buf, len);

	assert_true(n > 0);
	return n;
}

static void
assert_calib_equal(const struct shim_calib *a, const struct shim_calib *b)
{
	unsigned i;

	assert_true(a->key == b->key);
	assert_int_equal(a->payload, b->payload);
	assert_int_equal(a->costs.nhpu, b->costs.nhpu);
	assert_true(a->prep_msg_ns == b->prep_msg_ns);
	assert_true(a->prep_block_ns == b->prep_block_ns);
	assert_true(a->costs.unpack_byte_ns == b->costs.unpack_byte_ns);
	assert_true(a->costs.unpack_block_ns == b->costs.unpack_block_ns);
	assert_true(a->calib_ms == b->calib_ms);
	for (i = SPIN_TYPE_HOST; i <= SPIN_TYPE_RW_CP; i++)
		assert_memory_equal(&a->costs.s[i], &b->costs.s[i],
				    sizeof(a->costs.s[i]));
}

static void
test_round_trip(void **state)
{
	struct shim_calib c = sample_calib(), back;
	char buf[SHIM_CALIB_FILE_MAX];
	int n;

	(void)state;
	c.costs.s[SPIN_TYPE_HOST].byte_ns = 1.0 / 3.0; /* not decimal */
	n = format(&c, buf, sizeof(buf));
	assert_int_equal(shim_calib_parse(buf, (size_t)n, KEY, &back),
			 SHIM_CALIB_OK);
	assert_calib_equal(&c, &back);
	assert_false(back.costs.s[SPIN_TYPE_HPU_LOCAL].valid);
	/* too small a buffer */
	assert_int_equal(shim_calib_format(&c, buf, 10), -ENOSPC);
	/* a value the parser refuses is not written */
	c.costs.s[SPIN_TYPE_IOVEC].block_ns = NAN;
	assert_int_equal(shim_calib_format(&c, buf, sizeof(buf)), -EINVAL);
}

/* Replace the first occurrence of from by to in the file text. */
static size_t
edit(char *buf, size_t n, size_t cap, const char *from, const char *to)
{
	char *p = strstr(buf, from);
	size_t lf = strlen(from), lt = strlen(to);

	assert_non_null(p);
	assert_true(n - lf + lt < cap);
	memmove(p + lt, p + lf, n - (size_t)(p - buf) - lf + 1);
	memcpy(p, to, lt);
	return n - lf + lt;
}

static void
test_corrupt(void **state)
{
	static const struct {
		const char *from, *to;
		enum shim_calib_err why;
	} cases[] = {
		{ "spinnic-ddt-calib 3", "spinnic-ddt-calib 2",
		  SHIM_CALIB_E_VERSION },
		{ "spinnic-ddt-calib 3", "spinnic-ddt-calib -1",
		  SHIM_CALIB_E_VERSION },
		{ "spinnic-ddt-calib", "spinnic-ddt-kalib", SHIM_CALIB_E_FORMAT },
		{ "key 0123456789abcdef", "key 0123456789abcdee",
		  SHIM_CALIB_E_KEY },
		{ "key 0123456789abcdef", "key 0123456789abcdefg",
		  SHIM_CALIB_E_FORMAT },
		{ "payload 2048", "payload 0", SHIM_CALIB_E_VALUE },
		{ "payload 2048", "payload 99999999999999999999999",
		  SHIM_CALIB_E_VALUE },
		{ "nhpu 2", "nhpu 0", SHIM_CALIB_E_VALUE },
		{ "nhpu 2", "nhpu -2", SHIM_CALIB_E_VALUE },
		{ "nhpu 2", "nhpus 2", SHIM_CALIB_E_FORMAT },
		{ "prep 40000", "prep nan", SHIM_CALIB_E_VALUE },
		{ "prep 40000", "prep inf", SHIM_CALIB_E_VALUE },
		{ "prep 40000", "prep -40000", SHIM_CALIB_E_VALUE },
		{ "prep 40000", "prep 1e300", SHIM_CALIB_E_VALUE },
		{ "prep 40000", "prep 4e4x", SHIM_CALIB_E_VALUE },
		{ "unpack 0.25", "unpack 1e7", SHIM_CALIB_E_VALUE },
		{ "cost host 1 5000", "cost host 1 NAN", SHIM_CALIB_E_VALUE },
		{ "cost host 1 5000 0.5 12 0 0 0", "cost host 1 5000 0.5 12 0 0 -1",
		  SHIM_CALIB_E_VALUE },
		{ "cost host 1 5000 0.5 12 0 0 0", "cost host 1 5000 0.5 12 0 0",
		  SHIM_CALIB_E_FORMAT },
		{ "cost host 1 5000", "cost host 1 -0.5", SHIM_CALIB_E_VALUE },
		{ "cost host 1 5000", "cost host 1 1e9", SHIM_CALIB_E_VALUE },
		/* a table without the host path decides nothing */
		{ "cost host 1", "cost host 0", SHIM_CALIB_E_VALUE },
		{ "cost host 1", "cost host 2", SHIM_CALIB_E_VALUE },
		{ "cost iovec", "cost specialized", SHIM_CALIB_E_FORMAT },
		{ "cost iovec 1 6000", "cost iovec 1 6000 7",
		  SHIM_CALIB_E_FORMAT },
		{ "end\n", "end \n", SHIM_CALIB_E_FORMAT },
		{ "end\n", "end\nmore\n", SHIM_CALIB_E_FORMAT },
	};
	struct shim_calib c = sample_calib(), back;
	char orig[SHIM_CALIB_FILE_MAX], buf[SHIM_CALIB_FILE_MAX + 64];
	size_t n0, n, i;

	(void)state;
	n0 = (size_t)format(&c, orig, sizeof(orig));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(buf, orig, n0 + 1);
		n = edit(buf, n0, sizeof(buf), cases[i].from, cases[i].to);
		print_message("case %zu: %s -> %s\n", i, cases[i].from,
			      cases[i].to);
		assert_int_equal(shim_calib_parse(buf, n, KEY, &back),
				 cases[i].why);
	}
	/* a NUL byte in a line */
	memcpy(buf, orig, n0 + 1);
	buf[strstr(orig, "\nnhpu") - orig] = '\0';
	assert_int_equal(shim_calib_parse(buf, n0, KEY, &back),
			 SHIM_CALIB_E_FORMAT);
	/* truncated anywhere, empty, over the cap */
	for (n = 0; n < n0; n++)
		assert_int_not_equal(shim_calib_parse(orig, n, KEY, &back),
				     SHIM_CALIB_OK);
	assert_int_equal(shim_calib_parse(orig, 0, KEY, &back),
			 SHIM_CALIB_E_IO);
	assert_int_equal(shim_calib_parse(NULL, 10, KEY, &back),
			 SHIM_CALIB_E_IO);
	assert_int_equal(shim_calib_parse(orig, SHIM_CALIB_FILE_MAX + 1, KEY,
					  &back), SHIM_CALIB_E_IO);
	/* the whole file still parses */
	assert_int_equal(shim_calib_parse(orig, n0, KEY, &back),
			 SHIM_CALIB_OK);
}

/* Random bytes and random byte flips: never a crash, and what parses is
 * within the ranges. */
static void
test_fuzz_small(void **state)
{
	struct shim_calib c = sample_calib(), back;
	char orig[SHIM_CALIB_FILE_MAX], buf[SHIM_CALIB_FILE_MAX];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t n0, i, k, n;

	(void)state;
	n0 = (size_t)format(&c, orig, sizeof(orig));
	for (i = 0; i < 20000; i++) {
		memcpy(buf, orig, n0);
		n = n0;
		for (k = 0; k < 1 + i % 4; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[x % n0] = (char)(x >> 32);
		}
		if (i % 7 == 0)
			n = (size_t)(x >> 40) % (n0 + 1);
		if (shim_calib_parse(buf, n, KEY, &back) == SHIM_CALIB_OK) {
			assert_true(back.costs.s[SPIN_TYPE_HOST].valid);
			assert_true(back.costs.nhpu >= 1);
			for (k = 0; k < SPIN_TYPE_COUNT; k++)
				assert_true(isfinite(back.costs.s[k].msg_ns) &&
					    back.costs.s[k].msg_ns >= 0.0 &&
					    back.costs.s[k].msg_ns <=
					    SHIM_CALIB_MSG_MAX);
		}
	}
}

static void
test_file(void **state)
{
	struct shim_calib c = sample_calib(), back;
	struct shim_calib_stats s0, s1;
	char dir[] = "/tmp/spinnic-calib-XXXXXX", path[256], sub[300];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* the folder is created; the file is written through a rename */
	snprintf(path, sizeof(path), "%s/a/b/calib", dir);
	shim_calib_stats_get(&s0);
	assert_int_equal(shim_calib_save(path, &c), 0);
	assert_int_equal(shim_calib_load(path, KEY, &back), 0);
	assert_calib_equal(&c, &back);
	shim_calib_stats_get(&s1);
	assert_int_equal(s1.saved, s0.saved + 1);
	assert_int_equal(s1.loaded, s0.loaded + 1);
	/* another key: refused, counted */
	assert_int_equal(shim_calib_load(path, KEY + 1, &back), -EINVAL);
	shim_calib_stats_get(&s0);
	assert_int_equal(s0.rejected, s1.rejected + 1);
	assert_int_equal(s0.reject[SHIM_CALIB_E_KEY],
			 s1.reject[SHIM_CALIB_E_KEY] + 1);
	/* missing: not a refusal */
	snprintf(sub, sizeof(sub), "%s/none", dir);
	assert_int_equal(shim_calib_load(sub, KEY, &back), -ENOENT);
	/* over the size cap */
	f = fopen(path, "a");
	assert_non_null(f);
	for (int i = 0; i < 500; i++)
		fputs("0123456789", f);
	fclose(f);
	assert_int_equal(shim_calib_load(path, KEY, &back), -EINVAL);
	shim_calib_stats_get(&s1);
	assert_int_equal(s1.reject[SHIM_CALIB_E_IO],
			 s0.reject[SHIM_CALIB_E_IO] + 1);
	/* a folder in its place */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(shim_calib_load(path, KEY, &back), -EINVAL);
	assert_true(shim_calib_save(path, &c) < 0);
	assert_int_equal(rmdir(path), 0);
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(rmdir(sub), 0);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(rmdir(sub), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void
test_path(void **state)
{
	char p[512], q[512];

	(void)state;
	setenv("SPINNIC_DDT_CALIB_FILE", "/x/y", 1);
	assert_int_equal(shim_calib_path(KEY, p, sizeof(p)), 0);
	assert_string_equal(p, "/x/y");
	unsetenv("SPINNIC_DDT_CALIB_FILE");
	setenv("XDG_CACHE_HOME", "/c", 1);
	assert_int_equal(shim_calib_path(KEY, p, sizeof(p)), 0);
	assert_string_equal(p, "/c/spinnic/ddt-calib-v3-0123456789abcdef");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/h", 1);
	assert_int_equal(shim_calib_path(KEY, p, sizeof(p)), 0);
	assert_string_equal(p,
			    "/h/.cache/spinnic/ddt-calib-v3-0123456789abcdef");
	assert_int_equal(shim_calib_path(KEY, p, 8), -ENAMETOOLONG);
	/* the key follows the setting */
	assert_true(shim_calib_key(2048, 2, 1 << 20) ==
		    shim_calib_key(2048, 2, 1 << 20));
	assert_true(shim_calib_key(2048, 2, 1 << 20) !=
		    shim_calib_key(2048, 4, 1 << 20));
	assert_true(shim_calib_key(2048, 2, 1 << 20) !=
		    shim_calib_key(4096, 2, 1 << 20));
	assert_true(shim_calib_key(2048, 2, 1 << 20) !=
		    shim_calib_key(2048, 2, 2 << 20));
	(void)q;
}

/* A measurement that follows a known cost table exactly: the fit gets
 * it back. */
struct model {
	struct shim_ddt_costs c;
	uint32_t payload;
	unsigned calls;
	bool fail_nic;
	double post[SPIN_TYPE_COUNT]; /* the receive's post, per strategy */
};

static int
model_measure(void *arg, enum spin_type_strategy s, int64_t blk,
	      int64_t nblocks, bool in_region, bool general, double *ns_p)
{
	struct model *m = arg;
	struct shim_ddt_feat f = {
		.cls = general ? DDT_CLASS_GENERAL : DDT_CLASS_VECTOR,
		.size = blk * nblocks,
		.nblocks = nblocks, .blk_min = blk, .blk_max = blk,
		.blk_mean = (double)blk, .in_region = in_region,
	};

	m->calls++;
	if (m->fail_nic && s != SPIN_TYPE_HOST)
		return -EIO;
	/* as the real one: the specialized handlers know no general type */
	if (general && s == SPIN_TYPE_SPECIALIZED)
		return -EINVAL;
	f.npkts = (f.size + m->payload - 1) / m->payload;
	*ns_p = shim_ddt_predict(&m->c, s, &f);
	if (*ns_p >= 0.0)
		*ns_p += m->post[s];
	return *ns_p < 0.0 ? -EINVAL : 0;
}

static void
test_fit(void **state)
{
	struct model m;
	struct shim_calib c;
	unsigned s;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.payload = 2048;
	m.c.nhpu = 2;
	m.c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){
		true, 5000.0, 0.5, 12.0, 0.0, 0.0 };
	m.c.s[SPIN_TYPE_HOST].gen_block_ns = 3.0;
	for (s = SPIN_TYPE_IOVEC; s <= SPIN_TYPE_RW_CP; s++)
		m.c.s[s] = (struct shim_ddt_cost){
			true, 6000.0 + s, 0.25 * s, 10.0 * s, 0.0, 100.0,
			s == SPIN_TYPE_SPECIALIZED ? 0.0 : 20.0 * s };
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), 0);
	assert_int_equal(c.costs.nhpu, 2);
	assert_int_equal(c.payload, 2048);
	for (s = SPIN_TYPE_HOST; s <= SPIN_TYPE_RW_CP; s++) {
		const struct shim_ddt_cost *a = &m.c.s[s], *b = &c.costs.s[s];

		assert_true(b->valid);
		assert_true(fabs(a->msg_ns - b->msg_ns) < 1e-3);
		assert_true(fabs(a->byte_ns - b->byte_ns) < 1e-6);
		assert_true(fabs(a->block_ns - b->block_ns) < 1e-6);
		assert_true(fabs(a->out_block_ns - b->out_block_ns) < 1e-6);
		/* the general layout's extra per block (fourth slice) */
		assert_true(fabs(a->gen_block_ns - b->gen_block_ns) < 1e-6);
	}
	/* ... and it enters a general layout's prediction only */
	{
		struct shim_ddt_feat f = {
			.cls = DDT_CLASS_VECTOR, .size = 65536, .nblocks = 1024,
			.blk_min = 64, .blk_max = 64, .blk_mean = 64.0,
			.npkts = 32, .blk_per_pkt = 32.0, .in_region = true,
		};
		double tv = shim_ddt_predict(&c.costs, SPIN_TYPE_RW_CP, &f);

		f.cls = DDT_CLASS_GENERAL;
		assert_true(fabs(shim_ddt_predict(&c.costs, SPIN_TYPE_RW_CP,
						  &f) - tv -
				 20.0 * SPIN_TYPE_RW_CP * 1024 / 2) < 1e-3);
	}
	/* the NIC cannot be measured: only the host path is in the table */
	m.fail_nic = true;
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), 0);
	assert_true(c.costs.s[SPIN_TYPE_HOST].valid);
	assert_false(c.costs.s[SPIN_TYPE_IOVEC].valid);
	assert_false(c.costs.s[SPIN_TYPE_SPECIALIZED].valid);
	/* not even the host: no table */
	m.c.s[SPIN_TYPE_HOST].valid = false;
	m.fail_nic = false;
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), -EIO);
}

static void
test_unpack(void **state)
{
	double b = -1.0, k = -1.0;

	(void)state;
	assert_int_equal(shim_calib_unpack(&b, &k), 0);
	assert_true(isfinite(b) && b >= 0.0 && b < 100.0);
	assert_true(isfinite(k) && k >= 0.0 && k < 100000.0);
}

static struct shim_ddt_feat
vfeat(int64_t blk, int64_t nblocks, bool in_region)
{
	struct shim_ddt_feat f = {
		.cls = DDT_CLASS_VECTOR, .size = blk * nblocks,
		.nblocks = nblocks, .blk_min = blk, .blk_max = blk,
		.blk_mean = (double)blk, .in_region = in_region,
	};

	f.npkts = (f.size + 2047) / 2048;
	f.blk_per_pkt = (double)nblocks / (double)f.npkts;
	return f;
}

/* The receive's fixed cost (post and completion): the calibration times a
 * receive from its post (shim_calib_measure_nic()), so a post that costs
 * the host path more than the NIC's (seen in the third slice: the table
 * predicted host 9% faster for 64 KiB of 4 KiB blocks, the receives
 * measured it 10% slower) lands in each strategy's per-message cost and
 * turns the decision. Injected costs: host 25 us + a 15 us post,
 * specialized 27 us + an 8 us post. */
static void
test_fit_post(void **state)
{
	struct shim_ddt_feat f;
	struct shim_ddt_choice ch;
	struct shim_calib c;
	struct model m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.payload = 2048;
	m.c.nhpu = 2;
	m.c.s[SPIN_TYPE_HOST] = (struct shim_ddt_cost){
		true, 5000.0, 0.3, 12.0, 0.0, 0.0 };
	m.c.s[SPIN_TYPE_SPECIALIZED] = (struct shim_ddt_cost){
		true, 6000.0, 0.65, 2.0, 0.0, 1.0 };
	f = vfeat(4096, 16, true);
	/* without the post: the host is predicted faster */
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), 0);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	assert_true(ch.t_host < ch.t_nic);
	/* with it, measured as part of the receive: each strategy's fixed
	 * cost carries its own post, and the NIC wins */
	m.post[SPIN_TYPE_HOST] = 15000.0;
	m.post[SPIN_TYPE_SPECIALIZED] = 8000.0;
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), 0);
	assert_true(fabs(c.costs.s[SPIN_TYPE_HOST].msg_ns - 20000.0) < 1e-3);
	assert_true(fabs(c.costs.s[SPIN_TYPE_SPECIALIZED].msg_ns - 14000.0) <
		    1e-3);
	/* the per-unit costs do not move */
	assert_true(fabs(c.costs.s[SPIN_TYPE_HOST].byte_ns - 0.3) < 1e-9);
	assert_true(fabs(c.costs.s[SPIN_TYPE_SPECIALIZED].block_ns - 2.0) <
		    1e-6);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	assert_true(ch.t_nic * (1.0 + SHIM_DDT_HYST) < ch.t_host);
	/* a post equal on both paths moves both predictions alike */
	m.post[SPIN_TYPE_SPECIALIZED] = 15000.0;
	assert_int_equal(shim_calib_run(model_measure, &m, 2048, 2, &c), 0);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &f, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
}

/* The decision under injected calibrations: the table, not a class rule
 * or T, decides; measured times override it after SHIM_DDT_OBS_MIN
 * samples. */
static void
test_choose_calibrated(void **state)
{
	struct shim_calib c = sample_calib();
	struct shim_ddt_feat big = vfeat(4096, 64, true);
	struct shim_ddt_feat small = vfeat(8, 8192, true);
	struct shim_ddt_choice ch;
	struct shim_ddt_obs o;

	(void)state;
	/* host 0.5 ns/B + 12 ns/block; specialized 0.6/2 + 40/2 + pkt:
	 * 4 KiB blocks: NIC predicted faster, prepared, used once ready */
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, false, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	assert_true(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* 8-byte blocks: the host */
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &small, true, &ch);
	assert_false(ch.prepare);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	/* the same layout with a NIC four times slower per byte: host */
	for (unsigned s = SPIN_TYPE_IOVEC; s <= SPIN_TYPE_RW_CP; s++)
		c.costs.s[s].byte_ns *= 4.0;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	/* ... unless the NIC has 8 HPUs (the count the NIC reports) */
	c.costs.nhpu = 8;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* threshold ignores the table: 4 KiB > T */
	shim_ddt_choose(SHIM_CHOOSER_THRESHOLD, &c.costs, &small, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	shim_ddt_choose(SHIM_CHOOSER_THRESHOLD, &c.costs, &big, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);

	/* refinement: two host samples are not enough, three are */
	memset(&o, 0, sizeof(o));
	shim_ddt_obs_add(&o.host_ns, &o.n_host, 1.0);
	shim_ddt_obs_add(&o.host_ns, &o.n_host, 1.0);
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	shim_ddt_obs_add(&o.host_ns, &o.n_host, 1.0);
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	assert_false(ch.prepare);
	/* a measured NIC time beats the table the other way */
	memset(&o, 0, sizeof(o));
	c.costs.nhpu = 1;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	o.nic_ns = 100.0;
	o.n_nic = SHIM_DDT_OBS_MIN;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* hysteresis on measured times: 5% faster is not enough */
	o.host_ns = 1000.0;
	o.n_host = SHIM_DDT_OBS_MIN;
	o.nic_ns = 950.0;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
	o.nic_ns = 850.0;
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, &c.costs, &big, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_SPECIALIZED);
	/* without a table the measured times are not used (threshold) */
	shim_ddt_choose_obs(SHIM_CHOOSER_AWARE, NULL, &small, &o, true, &ch);
	assert_int_equal(ch.strat, SPIN_TYPE_HOST);
}

/* The NIC candidate: the simplest strategy within the hysteresis of the
 * cheapest, so noise between nearly equal strategies does not pick the
 * more complex one. */
static void
test_candidate(void **state)
{
	struct shim_calib c = sample_calib();
	struct shim_ddt_feat big = vfeat(4096, 64, true);
	struct shim_ddt_choice ch;
	double ts;

	(void)state;
	c.costs.s[SPIN_TYPE_RW_CP].valid = false;
	c.costs.s[SPIN_TYPE_IOVEC] = c.costs.s[SPIN_TYPE_SPECIALIZED];
	ts = shim_ddt_predict(&c.costs, SPIN_TYPE_SPECIALIZED, &big);
	/* iovec 5% cheaper: specialized stays */
	c.costs.s[SPIN_TYPE_IOVEC].msg_ns -= 0.05 * ts;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_SPECIALIZED);
	/* 20% cheaper: iovec */
	c.costs.s[SPIN_TYPE_IOVEC].msg_ns -= 0.15 * ts;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_IOVEC);
	/* a general layout has no specialized candidate */
	big.cls = DDT_CLASS_GENERAL;
	c.costs.s[SPIN_TYPE_IOVEC].msg_ns += 0.2 * ts;
	c.costs.s[SPIN_TYPE_HPU_LOCAL] = c.costs.s[SPIN_TYPE_IOVEC];
	c.costs.s[SPIN_TYPE_HPU_LOCAL].msg_ns -= 0.5 * ts;
	shim_ddt_choose(SHIM_CHOOSER_AWARE, &c.costs, &big, true, &ch);
	assert_int_equal(ch.nic, SPIN_TYPE_HPU_LOCAL);
}

static void
test_ewma(void **state)
{
	double e = 0.0;
	uint32_t n = 0;

	(void)state;
	shim_ddt_obs_add(&e, &n, 1000.0);
	assert_true(e == 1000.0 && n == 1);
	/* warm-up: the least of the first SHIM_DDT_OBS_MIN */
	shim_ddt_obs_add(&e, &n, 2000.0);
	assert_true(e == 1000.0 && n == 2);
	shim_ddt_obs_add(&e, &n, 800.0);
	assert_true(e == 800.0 && n == 3);
	/* then an EWMA */
	shim_ddt_obs_add(&e, &n, 1200.0);
	assert_true(fabs(e - (800.0 + SHIM_DDT_EWMA_ALPHA * 400.0)) < 1e-9);
	assert_int_equal(n, 4);
	/* an outlier counts as CLIP times the estimate, and so does one
	 * below 1/CLIP */
	e = 1000.0;
	shim_ddt_obs_add(&e, &n, 1e7);
	assert_true(fabs(e - (1000.0 + SHIM_DDT_EWMA_ALPHA * 1000.0 *
			      (SHIM_DDT_OBS_CLIP - 1.0))) < 1e-9);
	e = 1000.0;
	shim_ddt_obs_add(&e, &n, 0.0);
	assert_true(fabs(e - (1000.0 + SHIM_DDT_EWMA_ALPHA * 1000.0 *
			      (1.0 / SHIM_DDT_OBS_CLIP - 1.0))) < 1e-9);
	/* a lasting change gets through */
	for (int i = 0; i < 20; i++)
		shim_ddt_obs_add(&e, &n, 8000.0);
	assert_true(e > 7000.0);
	assert_int_equal(n, 6 + 20);
	/* not times: ignored */
	shim_ddt_obs_add(&e, &n, NAN);
	shim_ddt_obs_add(&e, &n, -1.0);
	shim_ddt_obs_add(&e, &n, INFINITY);
	assert_int_equal(n, 26);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_fuzz_small),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_path),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_fit_post),
		cmocka_unit_test(test_unpack),
		cmocka_unit_test(test_choose_calibrated),
		cmocka_unit_test(test_candidate),
		cmocka_unit_test(test_ewma),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
