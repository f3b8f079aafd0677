/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench, driven as a user would (behaviour, never timing): the
 * subcommand table, the CSV of `ddt` (header, one row per layout, block size
 * and operation, ratio = throughput / limit, every byte verified), --type,
 * and one clear line for every kind of bad input.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#include <cmocka.h>

#include "tool_run.h"

static char tool[4096];
static char tmpdir[4096];

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

static char *
path(const char *name)
{
	static char p[4200];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

/* Split one CSV line (no quoted fields) in place. @return fields */
static int
split(char *line, char **f, int max)
{
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == ',') {
			*p = '\0';
			f[n++] = p + 1;
		}
	return n;
}

static int
col(char **hdr, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(hdr[i], name) == 0)
			return i;
	return -1;
}

static void
test_help(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	run(r, "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "\n  ddt "));
	assert_non_null(strstr(r->out, "--csv"));
	run(r, "ddt", "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "--layouts"));
	free(r);
}

static void
test_ddt_csv(void **state)
{
	static const char *const layouts[] = {
		"vector", "indexed_block", "indexed",
	};
	struct tool_result *r = malloc(sizeof(*r));
	char line[4096], hdr_line[4096], *hdr[32], *f[32];
	int nh, rows = 0, c_op, c_type, c_bb, c_bytes, c_ddt, c_lim, c_ratio;
	int c_ver, c_mpi, c_vs, lines = 0;
	FILE *csv;

	(void)state;
	assert_non_null(r);
	run(r, "ddt", "--reps", "1", "--bytes", "65536", "--blocks", "4:1024",
	    "--verify", "--csv", path("ddt.csv"), NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench ddt failed (%d): %s", r->status, r->err);
	for (const char *p = r->out; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	assert_int_equal(lines, 1 + 3 * 9 * 2);
	assert_non_null(strstr(r->out, "ddt_gbit_s"));

	csv = fopen(path("ddt.csv"), "r");
	assert_non_null(csv);
	assert_non_null(fgets(hdr_line, sizeof(hdr_line), csv));
	hdr_line[strcspn(hdr_line, "\n")] = '\0';
	nh = split(hdr_line, hdr, 32);
	c_op = col(hdr, nh, "op");
	c_type = col(hdr, nh, "type");
	c_bb = col(hdr, nh, "block_bytes");
	c_bytes = col(hdr, nh, "bytes");
	c_ddt = col(hdr, nh, "ddt_gbit_s");
	c_lim = col(hdr, nh, "limit_gbit_s");
	c_ratio = col(hdr, nh, "ratio");
	c_ver = col(hdr, nh, "verify");
	c_mpi = col(hdr, nh, "mpi_gbit_s");
	c_vs = col(hdr, nh, "ddt_vs_mpi");
	assert_true(c_op == 0 && c_type == 1 && c_bb == 2);
	assert_true(c_bytes >= 0 && c_ddt >= 0 && c_lim >= 0 && c_ratio >= 0 &&
		    c_ver >= 0);
	/* the MPI columns come together or not at all */
	assert_int_equal(c_mpi < 0, c_vs < 0);

	while (fgets(line, sizeof(line), csv) != NULL) {
		int l = rows / 18, k = (rows % 18) / 2, unpack = rows % 2;
		double ddt, lim, ratio;

		line[strcspn(line, "\n")] = '\0';
		assert_int_equal(split(line, f, 32), nh);
		assert_string_equal(f[c_op], unpack ? "unpack" : "pack");
		assert_string_equal(f[c_type], layouts[l]);
		assert_int_equal(atoll(f[c_bb]), 4ll << k);
		assert_int_equal(atoll(f[c_bytes]), 65536);
		assert_string_equal(f[c_ver], "ok");
		ddt = atof(f[c_ddt]);
		lim = atof(f[c_lim]);
		ratio = atof(f[c_ratio]);
		assert_true(ddt > 0 && lim > 0);
		/* printed to 2 and 3 decimals */
		if (fabs(ratio - ddt / lim) > 0.002 + 0.01 * (1 + ratio) / lim)
			fail_msg("row %d: ratio %f, ddt/limit %f", rows, ratio,
				 ddt / lim);
		if (c_mpi >= 0) {
			double mpi = atof(f[c_mpi]), vs = atof(f[c_vs]);

			assert_true(mpi > 0);
			if (fabs(vs - ddt / mpi) > 0.002 + 0.01 * ddt / mpi / mpi
			    + 0.01 / mpi)
				fail_msg("row %d: ddt_vs_mpi %f, ddt/mpi %f",
					 rows, vs, ddt / mpi);
		}
		rows++;
	}
	fclose(csv);
	assert_int_equal(rows, 3 * 9 * 2);
	free(r);
}

static void
test_ddt_type(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	run(r, "ddt", "--reps", "2", "--bytes", "32768", "--verify", "--cold",
	    "--type", "struct(1,2;0,8)[int32,hvector(3,1,-24)[double]]", NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench ddt --type failed (%d): %s", r->status,
			 r->err);
	assert_non_null(strstr(r->out, "\npack "));
	assert_non_null(strstr(r->out, "\nunpack "));
	assert_null(strstr(r->out, "FAIL"));
	free(r);
}

static void
test_bad_input(void **state)
{
	static const char *const cases[][8] = {
		{ NULL },
		{ "frobnicate", NULL },
		{ "ddt", "--bogus", NULL },
		{ "ddt", "--reps", "0", NULL },
		{ "ddt", "--reps", "x", NULL },
		{ "ddt", "--reps", NULL },
		{ "ddt", "--bytes", "-5", NULL },
		{ "ddt", "--layouts", "vector,nope", NULL },
		{ "ddt", "--blocks", "64:8", NULL },
		{ "ddt", "--type", "vector(3,2[int32]", NULL },
		{ "ddt", "--type", "contig(0)[int32]", NULL },
		{ "ddt", "stray", NULL },
		{ "ddt", "--reps", "1", "--bytes", "4096", "--csv",
		  "/nonexistent-dir/x.csv", NULL },
	};
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(tool_run(tool, tmpdir, cases[i], r), 0);
		if (r->status == 0 || r->status == -1 || !tool_one_line(r->err))
			fail_msg("case %zu (%s %s): status %d, stderr '%s'", i,
				 cases[i][0] ? cases[i][0] : "",
				 cases[i][0] && cases[i][1] ? cases[i][1] : "",
				 r->status, r->err);
	}
	/* the parser's position reaches the user */
	run(r, "ddt", "--type", "vector(3,2[int32]", NULL);
	assert_non_null(strstr(r->err, "position"));
	free(r);
}

static int
group_setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	if (tool_find("spinnic-bench", "SPINNIC_BENCH", tool,
		      sizeof(tool)) < 0) {
		fprintf(stderr, "spinnic-bench not found (SPINNIC_BUILD_DIR=%s)\n",
			getenv("SPINNIC_BUILD_DIR") ?: "unset");
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/spinnic-bench-test.XXXXXX",
		 t ? t : "/tmp");
	return mkdtemp(tmpdir) != NULL ? 0 : -1;
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
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_ddt_csv),
		cmocka_unit_test(test_ddt_type),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
