/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-ddt, driven as a user would: info values, flatten output, pack and
 * unpack round trips over the touched span, --range pieces in random order
 * against a whole unpack, and one clear line for every kind of bad input.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <ddt.h>

#include "tool_run.h"

static char tool[4096];
static char tmpdir[4096];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Run the tool with a NULL-terminated argument list. */
static void
run(struct tool_result *r, ...)
{
	const char *args[32];
	va_list ap;
	int n = 0;

	va_start(ap, r);
	while ((args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	assert_int_equal(tool_run(tool, tmpdir, args, r), 0);
}

static void
expect_ok(const struct tool_result *r)
{
	if (r->status != 0 || r->err[0] != '\0')
		fail_msg("spinnic-ddt failed (%d): %s", r->status, r->err);
}

static char *
path(const char *name)
{
	static char bufs[8][4200];
	static int i;
	char *p = bufs[i++ % 8];

	snprintf(p, sizeof(bufs[0]), "%s/%s", tmpdir, name);
	return p;
}

static void
file_write(const char *p, const void *buf, size_t len)
{
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static char *
file_read(const char *p, size_t *len_p)
{
	struct stat st;
	char *buf;
	FILE *f;

	assert_int_equal(stat(p, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	assert_non_null(buf);
	f = fopen(p, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f),
			 (size_t)st.st_size);
	fclose(f);
	*len_p = (size_t)st.st_size;
	return buf;
}

/* Value of "key: value" in info output. */
static const char *
info_get(const char *out, const char *key)
{
	static char val[256];
	size_t kl = strlen(key);
	const char *p = out;

	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			const char *v = p + kl + 1, *e = strchr(v, '\n');

			while (*v == ' ')
				v++;
			snprintf(val, sizeof(val), "%.*s",
				 (int)(e ? e - v : (ptrdiff_t)strlen(v)), v);
			return val;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	fail_msg("no '%s' in info output:\n%s", key, out);
	return NULL;
}

static long long
info_num(const char *out, const char *key)
{
	return atoll(info_get(out, key));
}

/* ---- info ---------------------------------------------------------------- */

struct info_case {
	const char *expr;
	long long size, extent, lb, ub, true_lb, true_extent, blocks;
	int depth;           /* 0: not checked */
	int cls;             /* enum ddt_class, -1: not checked */
	const char *params;  /* substring of the class line, or NULL */
};

static void
test_info(void **state)
{
	static const struct info_case cases[] = {
		{ "double", 8, 8, 0, 8, 0, 8, 1, 1, DDT_CLASS_CONTIG, NULL },
		{ "vector(3,2,4)[int32]", 24, 40, 0, 40, 0, 40, 3, 2,
		  DDT_CLASS_VECTOR, "blocklen=8 stride=16 nblocks=3" },
		{ "hvector(3,1,-16)[double]", 24, 40, -32, 8, -32, 40, 3, 2,
		  -1, NULL },
		{ "resized(-8,64)[vector(3,2,4)[int32]]", 24, 64, -8, 56, 0,
		  40, 3, 0, DDT_CLASS_VECTOR, "blocklen=8 stride=16" },
		{ "contig(4)[double]", 32, 32, 0, 32, 0, 32, 1, 2,
		  DDT_CLASS_CONTIG, NULL },
		{ "indexed_block(2;5,1,9)[int16]", 12, 20, 2, 22, 2, 20, 3, 2,
		  DDT_CLASS_INDEXED_BLOCK, "blocklen=4 nblocks=3" },
		{ "indexed(1,3;4,0)[uint8]", 4, 5, 0, 5, 0, 5, 2, 2,
		  DDT_CLASS_GENERAL, NULL },
		{ "subarray(4,6;2,3;1,2;C)[float]", 24, 96, 0, 96, 32, 36, 2,
		  0, DDT_CLASS_VECTOR, "blocklen=12 stride=24 nblocks=2" },
		/* element 1's first block continues element 0's last */
		{ "contig(2)[vector(2,1,3)[int64]]", 32, 64, 0, 64, 0, 64, 3,
		  3, DDT_CLASS_GENERAL, NULL },
		/* MPICH 4.0.2's bounds: members without data place them */
		{ "struct(1,1;0,1)[vector(3,0,2)[int32],int8]", 1, 16, 0, 16,
		  0, 16, 1, 3, -1, NULL },
		{ "indexed(1,1,2;3,4,6)[struct(0,3,0,3;2,11,594,598)[uint16,"
		  "resized(-8,192)[vector(7,0,4)[int64]],resized(-7,16)[uint8],"
		  "int32]]", 48, 3040, 1827, 4867, 1835, 3031, 4, 5,
		  DDT_CLASS_GENERAL, NULL },
	};
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct info_case *c = &cases[i];
		const char *cls;

		run(r, "info", c->expr, NULL);
		expect_ok(r);
		if (info_num(r->out, "size") != c->size ||
		    info_num(r->out, "extent") != c->extent ||
		    info_num(r->out, "lb") != c->lb ||
		    info_num(r->out, "ub") != c->ub ||
		    info_num(r->out, "true_lb") != c->true_lb ||
		    info_num(r->out, "true_extent") != c->true_extent ||
		    info_num(r->out, "blocks") != c->blocks ||
		    (c->depth && info_num(r->out, "depth") != c->depth))
			fail_msg("info %s:\n%s", c->expr, r->out);
		cls = info_get(r->out, "class");
		if (c->cls < 0)
			continue;
		if (strncmp(cls, ddt_class_name(c->cls),
			    strlen(ddt_class_name(c->cls))) != 0 ||
		    (c->params && strstr(cls, c->params) == NULL))
			fail_msg("info %s: class '%s', expected %s %s", c->expr,
				 cls, ddt_class_name(c->cls),
				 c->params ? c->params : "");
	}
	free(r);
}

/* ---- flatten ------------------------------------------------------------- */

static void
test_flatten(void **state)
{
	static const struct {
		const char *expr, *count, *want;
	} cases[] = {
		{ "vector(3,2,4)[int32]", "1", "0 8\n16 8\n32 8\n" },
		/* the last block of element 0 runs into the first of 1 */
		{ "vector(3,2,4)[int32]", "2",
		  "0 8\n16 8\n32 16\n56 8\n72 8\n" },
		/* packing order, not address order */
		{ "hvector(3,1,-16)[double]", "1", "0 8\n-16 8\n-32 8\n" },
		{ "indexed(1,1;1,0)[int32]", "1", "4 4\n0 4\n" },
		{ "indexed(1,1;0,1)[int32]", "1", "0 8\n" },
		{ "contig(4)[double]", "3", "0 96\n" },
		{ "resized(-8,64)[vector(2,1,2)[int32]]", "2",
		  "0 4\n8 4\n64 4\n72 4\n" },
		{ "struct(1,2;8,0)[double,int32]", "1", "8 8\n0 8\n" },
		{ "vector(2,1,2)[int32]", "0", "" },
	};
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(r, "flatten", cases[i].expr, "--count", cases[i].count,
		    NULL);
		expect_ok(r);
		if (strcmp(r->out, cases[i].want) != 0)
			fail_msg("flatten %s --count %s:\n%s\nexpected:\n%s",
				 cases[i].expr, cases[i].count, r->out,
				 cases[i].want);
	}
	/* The default count is 1. */
	run(r, "flatten", "vector(3,2,4)[int32]", NULL);
	expect_ok(r);
	assert_string_equal(r->out, "0 8\n16 8\n32 8\n");
	free(r);
}

/* ---- pack / unpack ------------------------------------------------------- */

/* Types with negative strides, negative lb, holes, interleaving, count > 1. */
static const struct {
	const char *expr;
	const char *count;
} rt_cases[] = {
	{ "vector(5,3,7)[int16]", "3" },
	{ "hvector(4,2,-24)[int32]", "3" },
	{ "resized(-16,40)[hvector(3,1,-12)[int32]]", "4" },
	{ "hvector(3,2,-20)[resized(0,12)[int64]]", "3" },
	{ "indexed(2,1,3;9,0,4)[int16]", "2" },
	{ "indexed_block(3;4,0,12)[uint8]", "5" },
	{ "struct(2,1,3;16,0,8)[int16,double,uint8]", "2" },
	{ "subarray(5,4,3;2,2,2;1,1,0;F)[int32]", "2" },
	{ "subarray(6,5;3,2;2,1;C)[double_complex]", "1" },
	{ "contig(3)[indexed(1,2;3,0)[float]]", "2" },
};

struct span { int64_t lo, hi; int64_t n; struct ddt_iov *iov; };

/* Reference from the library: the merged blocks of count elements. */
static void
span_of(const char *expr, int64_t count, struct span *s)
{
	struct ddt_type *t = ddt_parse(expr, NULL);

	assert_non_null(t);
	assert_int_equal(ddt_commit(t), 0);
	s->n = ddt_flatten(t, count, NULL, 0);
	assert_true(s->n >= 0);
	s->iov = malloc((size_t)(s->n + 1) * sizeof(*s->iov));
	assert_non_null(s->iov);
	assert_int_equal(ddt_flatten(t, count, s->iov, s->n), s->n);
	s->lo = s->hi = 0;
	for (int64_t i = 0; i < s->n; i++) {
		if (i == 0 || s->iov[i].off < s->lo)
			s->lo = s->iov[i].off;
		if (i == 0 || s->iov[i].off + s->iov[i].len > s->hi)
			s->hi = s->iov[i].off + s->iov[i].len;
	}
	ddt_free(t);
}

static void
fill_random(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)(rnd() >> 56);
}

/* Expected result of unpacking stream bytes [first, last) of `packed` into a
 * typed span that held `base`. */
static void
expect_unpack(const struct span *s, const char *packed, int64_t first,
	      int64_t last, char *typed)
{
	int64_t pos = 0;

	for (int64_t i = 0; i < s->n; i++) {
		for (int64_t j = 0; j < s->iov[i].len; j++, pos++)
			if (pos >= first && pos < last)
				typed[s->iov[i].off + j - s->lo] = packed[pos];
	}
}

static void
test_pack_unpack(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(rt_cases) / sizeof(rt_cases[0]); i++) {
		const char *expr = rt_cases[i].expr, *cnt = rt_cases[i].count;
		size_t span, plen, olen;
		char *typed, *packed, *out, *want;
		int64_t pos = 0;
		struct span s;

		span_of(expr, atoll(cnt), &s);
		span = (size_t)(s.hi - s.lo);
		typed = malloc(span);
		want = calloc(1, span);
		assert_true(typed && want);
		fill_random(typed, span);
		file_write(path("typed"), typed, span);

		run(r, "pack", expr, "--count", cnt, "--in", path("typed"),
		    "--out", path("packed"), NULL);
		expect_ok(r);
		packed = file_read(path("packed"), &plen);
		/* the packed stream is the touched bytes in packing order */
		for (int64_t b = 0; b < s.n; b++) {
			assert_true(pos + s.iov[b].len <= (int64_t)plen);
			if (memcmp(packed + pos, typed + s.iov[b].off - s.lo,
				   (size_t)s.iov[b].len) != 0)
				fail_msg("pack %s: block %lld differs", expr,
					 (long long)b);
			pos += s.iov[b].len;
		}
		assert_int_equal(pos, plen);

		unlink(path("typed2"));
		run(r, "unpack", expr, "--count", cnt, "--in", path("packed"),
		    "--out", path("typed2"), NULL);
		expect_ok(r);
		out = file_read(path("typed2"), &olen);
		assert_int_equal(olen, span);
		/* placed bytes round-trip; bytes between blocks stay zero */
		expect_unpack(&s, packed, 0, (int64_t)plen, want);
		if (memcmp(out, want, span) != 0)
			fail_msg("unpack %s --count %s: wrong bytes", expr, cnt);
		for (int64_t b = 0; b < s.n; b++)
			assert_memory_equal(out + s.iov[b].off - s.lo,
					    typed + s.iov[b].off - s.lo,
					    (size_t)s.iov[b].len);
		free(out);
		free(packed);
		free(want);
		free(typed);
		free(s.iov);
	}
	free(r);
}

static void
test_unpack_ranges(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	char rng_arg[64];

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(rt_cases) / sizeof(rt_cases[0]); i++) {
		const char *expr = rt_cases[i].expr, *cnt = rt_cases[i].count;
		int64_t cuts[12], ncut = 0, order[12];
		size_t span, plen, wlen, olen;
		char *packed, *whole, *out, *pre, *want;
		struct span s;

		span_of(expr, atoll(cnt), &s);
		span = (size_t)(s.hi - s.lo);
		plen = 0;
		for (int64_t b = 0; b < s.n; b++)
			plen += (size_t)s.iov[b].len;
		packed = malloc(plen);
		assert_non_null(packed);
		fill_random(packed, plen);
		file_write(path("stream"), packed, plen);

		unlink(path("whole"));
		run(r, "unpack", expr, "--count", cnt, "--in", path("stream"),
		    "--out", path("whole"), NULL);
		expect_ok(r);
		whole = file_read(path("whole"), &wlen);
		assert_int_equal(wlen, span);

		/* Random cut points (some pieces empty or one byte), the
		 * pieces unpacked in random order, the input alternating
		 * between the piece alone and the whole stream. */
		cuts[ncut++] = 0;
		for (int k = 0; k < 9; k++)
			cuts[ncut++] = (int64_t)(rnd() % (plen + 1));
		cuts[ncut++] = (int64_t)plen;
		for (int64_t x = 1; x < ncut; x++)
			for (int64_t y = x; y > 0 && cuts[y] < cuts[y - 1]; y--) {
				int64_t tmp = cuts[y];

				cuts[y] = cuts[y - 1];
				cuts[y - 1] = tmp;
			}
		for (int64_t k = 0; k < ncut - 1; k++)
			order[k] = k;
		for (int64_t k = ncut - 2; k > 0; k--) {
			int64_t j = (int64_t)(rnd() % (uint64_t)(k + 1)), tmp;

			tmp = order[k];
			order[k] = order[j];
			order[j] = tmp;
		}
		unlink(path("pieces"));
		for (int64_t k = 0; k < ncut - 1; k++) {
			int64_t f = cuts[order[k]], l = cuts[order[k] + 1];
			const char *in = path("stream");

			snprintf(rng_arg, sizeof(rng_arg), "%lld:%lld",
				 (long long)f, (long long)l);
			if (k % 2) {
				file_write(path("piece"), packed + f,
					   (size_t)(l - f));
				in = path("piece");
			}
			run(r, "unpack", expr, "--count", cnt, "--in", in,
			    "--out", path("pieces"), "--range", rng_arg, NULL);
			expect_ok(r);
		}
		out = file_read(path("pieces"), &olen);
		assert_int_equal(olen, span);
		if (memcmp(out, whole, span) != 0)
			fail_msg("unpack %s: pieces differ from whole", expr);
		free(out);

		/* An existing file: only the bytes of the range change. */
		pre = malloc(span + 1);
		want = malloc(span + 1);
		assert_true(pre && want);
		fill_random(pre, span);
		memcpy(want, pre, span);
		file_write(path("pre"), pre, span);
		{
			int64_t f = (int64_t)(rnd() % (plen + 1));
			int64_t l = f + (int64_t)(rnd() % (plen - f + 1));

			snprintf(rng_arg, sizeof(rng_arg), "%lld:%lld",
				 (long long)f, (long long)l);
			run(r, "unpack", expr, "--count", cnt, "--in",
			    path("stream"), "--out", path("pre"), "--range",
			    rng_arg, NULL);
			expect_ok(r);
			expect_unpack(&s, packed, f, l, want);
		}
		out = file_read(path("pre"), &olen);
		assert_int_equal(olen, span);
		if (memcmp(out, want, span) != 0)
			fail_msg("unpack %s --range %s touched other bytes",
				 expr, rng_arg);
		free(out);
		free(pre);
		free(want);
		free(whole);
		free(packed);
		free(s.iov);
	}
	free(r);
}

/* ---- bad input ----------------------------------------------------------- */

static void
expect_one_line_error(const struct tool_result *r, const char *what,
		      const char *needle)
{
	if (r->status == 0 || r->status == -1)
		fail_msg("%s: exit status %d, expected a failure", what,
			 r->status);
	if (!tool_one_line(r->err))
		fail_msg("%s: expected one line on stderr, got '%s'", what,
			 r->err);
	if (needle != NULL && strstr(r->err, needle) == NULL)
		fail_msg("%s: '%s' does not mention '%s'", what, r->err,
			 needle);
}

static void
test_bad_input(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	const char *v = "vector(3,2,4)[int32]";
	char small[8] = { 0 };

	(void)state;
	assert_non_null(r);
	file_write(path("small"), small, sizeof(small));

	run(r, NULL);
	expect_one_line_error(r, "no command", NULL);
	run(r, "frobnicate", v, NULL);
	expect_one_line_error(r, "unknown command", "frobnicate");
	run(r, "info", NULL);
	expect_one_line_error(r, "missing expression", NULL);
	run(r, "info", "vector(3,2[int32]", NULL);
	expect_one_line_error(r, "syntax error", "position");
	run(r, "info", "vectr(3,2,4)[int32]", NULL);
	expect_one_line_error(r, "unknown constructor", "position");
	run(r, "info", v, "extra", NULL);
	expect_one_line_error(r, "extra argument", "extra");
	run(r, "flatten", v, "--count", "abc", NULL);
	expect_one_line_error(r, "bad number", "abc");
	run(r, "flatten", v, "--count", "-1", NULL);
	expect_one_line_error(r, "negative count", NULL);
	run(r, "flatten", v, "--count", "99999999999999999999", NULL);
	expect_one_line_error(r, "count overflow", NULL);
	run(r, "flatten", v, "--count", NULL);
	expect_one_line_error(r, "missing argument", NULL);
	run(r, "flatten", v, "--bogus", NULL);
	expect_one_line_error(r, "unknown option", "--bogus");
	run(r, "info", v, "--count", "2", NULL);
	expect_one_line_error(r, "option not for command", "--count");
	run(r, "pack", v, "--in", path("small"), NULL);
	expect_one_line_error(r, "missing --out", "--out");
	run(r, "pack", v, "--in", path("does-not-exist"), "--out",
	    path("o"), NULL);
	expect_one_line_error(r, "missing file", "does-not-exist");
	run(r, "pack", v, "--in", path("small"), "--out", path("o"), NULL);
	expect_one_line_error(r, "typed input too short", "40");
	run(r, "unpack", v, "--in", path("small"), "--out", path("o2"),
	    NULL);
	expect_one_line_error(r, "packed input wrong size", "24");
	unlink(path("o3"));
	run(r, "unpack", v, "--in", path("small"), "--out", path("o3"),
	    "--range", "0:1000", NULL);
	expect_one_line_error(r, "range outside stream", "outside");
	run(r, "unpack", v, "--in", path("small"), "--out", path("o3"),
	    "--range", "8", NULL);
	expect_one_line_error(r, "range without colon", NULL);
	run(r, "unpack", v, "--in", path("small"), "--out", path("o3"),
	    "--range", "9:x", NULL);
	expect_one_line_error(r, "range not a number", NULL);
	run(r, "unpack", v, "--in", path("small"), "--out", path("o3"),
	    "--range", "9:4", NULL);
	expect_one_line_error(r, "range reversed", NULL);
	/* an existing typed output of the wrong length is not resized */
	run(r, "unpack", v, "--in", path("small"), "--out", path("small"),
	    "--range", "0:8", NULL);
	expect_one_line_error(r, "typed output wrong size", NULL);
	run(r, "pack", v, "--in", tmpdir, "--out", path("o"), NULL);
	expect_one_line_error(r, "input is a directory", NULL);

	run(r, "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "unpack"));
	run(r, "pack", "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "--range"));
	free(r);
}

/* ---- setup --------------------------------------------------------------- */

static int
group_setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	if (tool_find("spinnic-ddt", "SPINNIC_DDT", tool, sizeof(tool)) < 0) {
		fprintf(stderr, "spinnic-ddt not found (SPINNIC_BUILD_DIR=%s)\n",
			getenv("SPINNIC_BUILD_DIR") ?: "unset");
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/spinnic-ddt-test.XXXXXX",
		 t ? t : "/tmp");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	return 0;
}

static int
group_teardown(void **state)
{
	char cmd[4300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_flatten),
		cmocka_unit_test(test_pack_unpack),
		cmocka_unit_test(test_unpack_ranges),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
