/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Type expressions: print/parse round trip, error positions and messages,
 * overflow and depth limits, and mutated input that must never crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddt.h"
#include "ddt_gen.h"

static const char *const canon[] = {
	"double",
	"double_complex",
	"contig(3)[int16]",
	"vector(1024,1,1024)[double]",
	"hvector(3,2,-20)[int32]",
	"indexed(2,0,1;5,1,-1)[uint8]",
	"hindexed(1,1;4,0)[float]",
	"indexed_block(2;3,0)[int16]",
	"hindexed_block(1;0,4,8)[uint64]",
	"struct(1,2,1;0,4,8)[int32,char,double]",
	"subarray(4,5;2,3;1,2;C)[int32]",
	"subarray(4,5;2,3;1,2;F)[complex]",
	"resized(-4,16)[int32]",
	"indexed(;)[int8]",
	"struct(;)[byte]",
	"vector(2,1,3)[struct(1,1;0,100)[resized(-4,16)[int32],double]]",
	"contig(2)[subarray(3,3,3;1,2,3;0,1,0;F)[vector(2,1,2)[int64]]]",
};

static void test_roundtrip(void **state)
{
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(canon) / sizeof(*canon); i++) {
		const char *err = NULL;
		struct ddt_type *t = ddt_parse(canon[i], &err), *u;

		if (t == NULL)
			print_message("%s: %s\n", canon[i], err);
		assert_non_null(t);
		assert_int_equal(ddt_print(t, buf, sizeof(buf)),
				 (int)strlen(canon[i]));
		assert_string_equal(buf, canon[i]);
		u = ddt_parse(buf, NULL);
		assert_int_equal(ddt_equal(t, u), 1);
		ddt_free(u);
		ddt_free(t);
	}
}

static void test_whitespace_and_values(void **state)
{
	struct ddt_type *a, *b;
	char small[8];

	(void)state;
	a = ddt_parse("  vector ( 3 , 1 , 4 ) [ double ] ", NULL);
	b = ddt_parse("vector(3,1,4)[double]", NULL);
	assert_non_null(a);
	assert_int_equal(ddt_equal(a, b), 1);
	assert_int_equal(ddt_size(a), 24);
	assert_int_equal(ddt_extent(a), 72);
	/* snprintf-like truncation */
	assert_int_equal(ddt_print(a, small, sizeof(small)), 21);
	assert_string_equal(small, "vector(");
	assert_int_equal(ddt_print(a, NULL, 0), 21);
	ddt_free(a);
	ddt_free(b);
	/* DESIGN §7: the column of a 1024x1024 row-major double matrix */
	a = ddt_parse("vector(1024,1,1024)[double]", NULL);
	assert_int_equal(ddt_size(a), 8192);
	assert_int_equal(ddt_extent(a), (1023 * 1024 + 1) * 8);
	ddt_free(a);
	/* equal typemaps from different expressions */
	a = ddt_parse("contig(4)[int32]", NULL);
	b = ddt_parse("hvector(2,2,8)[uint32]", NULL);
	assert_int_equal(ddt_equal(a, b), 1);
	ddt_free(b);
	b = ddt_parse("contig(2)[int64]", NULL);
	assert_int_equal(ddt_equal(a, b), 1);
	ddt_free(b);
	b = ddt_parse("resized(0,20)[contig(4)[int32]]", NULL);
	assert_int_equal(ddt_equal(a, b), 0);
	ddt_free(b);
	b = ddt_parse("hindexed(2,2;8,0)[int32]", NULL);
	assert_int_equal(ddt_equal(a, b), 0);
	ddt_free(b);
	ddt_free(a);
}

struct bad {
	const char *expr;
	int err;
	const char *msg;
};

static void test_errors(void **state)
{
	static const struct bad bad[] = {
		{ "vector(3,1)[double]", DDT_E_SYNTAX,
		  "at position 10: expected ','" },
		{ "vectr(1,1,1)[int8]", DDT_E_SYNTAX,
		  "at position 0: expected a type name" },
		{ "", DDT_E_SYNTAX, "at position 0: expected a type name" },
		{ "int8 x", DDT_E_SYNTAX,
		  "at position 5: expected end of input" },
		{ "indexed(1,2;0)[int8]", DDT_E_SYNTAX,
		  "at position 13: expected 2 displacements" },
		{ "indexed(1,2;0,3[int8]", DDT_E_SYNTAX,
		  "at position 15: expected ',' or ')'" },
		{ "subarray(2;1;0;X)[int8]", DDT_E_SYNTAX,
		  "at position 15: expected C or F" },
		{ "contig(3)", DDT_E_SYNTAX, "at position 9: expected '['" },
		{ "contig(3)[int8", DDT_E_SYNTAX,
		  "at position 14: expected ']'" },
		{ "contig(1)[contig(1)]", DDT_E_SYNTAX,
		  "at position 19: expected '['" },
		{ "contig(x)[int8]", DDT_E_SYNTAX,
		  "at position 7: expected a number" },
		{ "struct(1,1;0,4)[int8]", DDT_E_SYNTAX,
		  "at position 21: expected 2 member types" },
		{ "contig(99999999999999999999)[int8]", DDT_E_OVERFLOW,
		  "at position 7: number out of 64-bit range" },
		{ "contig(4611686018427387904)[int32]", DDT_E_OVERFLOW,
		  "at position 0: contig: datatype count, size or extent "
		  "overflows" },
		{ "hvector(2,1,-9223372036854775808)[int8]", DDT_E_OVERFLOW,
		  "at position 0: hvector: datatype count, size or extent "
		  "overflows" },
		{ "contig(-1)[int8]", EINVAL, NULL },
		{ "subarray(4,4;2,2;3,0;C)[int8]", EINVAL, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		const char *err = NULL;

		errno = 0;
		assert_null(ddt_parse(bad[i].expr, &err));
		assert_int_equal(errno, bad[i].err);
		assert_non_null(err);
		if (bad[i].msg)
			assert_string_equal(err, bad[i].msg);
		else
			assert_true(strncmp(err, "at position ", 12) == 0);
	}
	assert_null(ddt_parse(NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

static char *nest(int levels, const char *inner)
{
	size_t il = strlen(inner), n = (size_t)levels * 11 + il + 1, at = 0;
	char *s = malloc(n);

	if (s == NULL) {
		fail();
		return NULL;
	}
	for (int i = 0; i < levels; i++, at += 10)
		memcpy(s + at, "contig(1)[", 10);
	memcpy(s + at, inner, il);
	at += il;
	memset(s + at, ']', (size_t)levels);
	s[at + (size_t)levels] = 0;
	return s;
}

static void test_depth(void **state)
{
	const char *err;
	struct ddt_type *t;
	char *s;

	(void)state;
	s = nest(DDT_MAX_DEPTH - 1, "int8");
	t = ddt_parse(s, &err);
	assert_non_null(t);
	assert_int_equal(ddt_depth(t), DDT_MAX_DEPTH);
	ddt_free(t);
	free(s);
	s = nest(DDT_MAX_DEPTH, "int8");
	assert_null(ddt_parse(s, &err));
	assert_int_equal(errno, DDT_E_DEPTH);
	assert_string_equal(err, "at position 150: nesting deeper than 16");
	free(s);
	/* far too deep: rejected without deep recursion */
	s = nest(200000, "int8");
	assert_null(ddt_parse(s, &err));
	assert_int_equal(errno, DDT_E_DEPTH);
	free(s);
	/* subarray dimensions count toward the depth */
	s = nest(DDT_MAX_DEPTH - 3, "subarray(2,2,2;1,1,1;0,0,0;C)[int8]");
	assert_null(ddt_parse(s, &err));
	assert_int_equal(errno, DDT_E_DEPTH);
	free(s);
}

static void test_random_roundtrip(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 500; seed++) {
		uint64_t s = seed;
		struct ddt_type *t = ddt_gen_random(&s, 6, 4096), *u;
		int n = ddt_print(t, NULL, 0);
		char *buf = malloc((size_t)n + 1), *buf2 = malloc((size_t)n + 1);

		ddt_print(t, buf, (size_t)n + 1);
		u = ddt_parse(buf, NULL);
		assert_non_null(u);
		assert_int_equal(ddt_equal(t, u), 1);
		/* print is canonical: printing the parsed type gives the
		 * same text */
		assert_int_equal(ddt_print(u, buf2, (size_t)n + 1), n);
		assert_string_equal(buf, buf2);
		ddt_free(u);
		ddt_free(t);
		free(buf);
		free(buf2);
	}
}

/* mutated expressions: must parse or fail with a positioned message */
static void test_mutations(void **state)
{
	static const char alphabet[] = "()[],;-0123456789CF vectorhindex_blk";
	uint64_t s = 99;

	(void)state;
	for (int n = 0; n < 20000; n++) {
		const char *src = canon[ddt_gen_rand(&s) %
					(sizeof(canon) / sizeof(*canon))];
		size_t len = strlen(src);
		char buf[256];
		const char *err;
		struct ddt_type *t;

		memcpy(buf, src, len + 1);
		for (int k = 0; k < 1 + (int)(ddt_gen_rand(&s) % 3); k++) {
			size_t at = ddt_gen_rand(&s) % len;

			switch (ddt_gen_rand(&s) % 3) {
			case 0: /* replace */
				buf[at] = alphabet[ddt_gen_rand(&s) %
						   (sizeof(alphabet) - 1)];
				break;
			case 1: /* delete */
				memmove(buf + at, buf + at + 1, len - at);
				len--;
				break;
			default: /* truncate */
				buf[at] = 0;
				len = at;
				break;
			}
			if (len == 0)
				break;
		}
		t = ddt_parse(buf, &err);
		if (t == NULL) {
			assert_true(strncmp(err, "at position ", 12) == 0);
			continue;
		}
		/* what parses can be committed or is rejected cleanly */
		if (ddt_commit(t) == 0 && ddt_size(t) < (1 << 20))
			assert_true(ddt_count_blocks(t, 1) >= 0);
		ddt_free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_whitespace_and_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_random_roundtrip),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
