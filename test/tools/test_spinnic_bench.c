/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench, driven as a user would (behaviour, never timing): the
 * subcommand table, the CSV of `ddt` (header, one row per layout, block size
 * and operation, ratio = throughput / limit, every byte verified), --type,
 * the datatype and layout benches (unpack, apps, scaling, ckpt, layout),
 * latency and auth, and one clear line for every kind of bad input (an
 * unwritable --csv before anything runs). The Portals-level, collective
 * and Active Access benches: test_spinnic_bench_rt.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "bench_test.h"

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
	run(r, "--help", NULL);
	assert_non_null(strstr(r->out, "\n  apps "));
	assert_non_null(strstr(r->out, "\n  scaling "));
	assert_non_null(strstr(r->out, "\n  ckpt "));
	assert_non_null(strstr(r->out, "\n  rate "));
	assert_non_null(strstr(r->out, "\n  trig "));
	assert_null(strstr(r->out, "\n  coll ")); /* folded into overlap */
	assert_non_null(strstr(r->out, "\n  aa-overhead "));
	assert_non_null(strstr(r->out, "\n  dht "));
	assert_non_null(strstr(r->out, "\n  aa-count "));
	assert_non_null(strstr(r->out, "\n  aa-getlog "));
	assert_non_null(strstr(r->out, "\n  aa-ickpt "));
	assert_non_null(strstr(r->out, "\n  aa-flush "));
	assert_non_null(strstr(r->out, "\n  overlap "));
	assert_non_null(strstr(r->out, "\n  setup "));
	assert_non_null(strstr(r->out, "\n  group "));
	assert_non_null(strstr(r->out, "\n  stencil "));
	assert_non_null(strstr(r->out, "\n  ring "));
	/* wire mode says what "wire" is */
	run(r, "apps", "--help", NULL);
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "--mode ARG"));
	assert_non_null(strstr(r->out, "net_ring ethdev pair"));
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

static void
test_unpack(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_st, c_bb, c_g, c_lim, c_ratio, c_ver, c_note, c_speed;
	int seen_host = 0, seen_spec = 0;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	run(r, "unpack", "--blocks", "64:64", "--verify", "--reps", "2",
	    "--csv", path("unpack.csv"), NULL);
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench unpack failed (%d): %s", r->status,
			 r->err);
	assert_non_null(strstr(r->out, "limit_gbit_s"));
	assert_null(strstr(r->out, "FAIL"));
	csv_read(c, path("unpack.csv"));
	c_st = col(c->hdr, c->nh, "strategy");
	c_bb = col(c->hdr, c->nh, "block_bytes");
	c_g = col(c->hdr, c->nh, "gbit_s");
	c_lim = col(c->hdr, c->nh, "limit_gbit_s");
	c_ratio = col(c->hdr, c->nh, "ratio");
	c_speed = col(c->hdr, c->nh, "speedup");
	c_ver = col(c->hdr, c->nh, "verify");
	c_note = col(c->hdr, c->nh, "note");
	assert_true(c_st == 0 && c_bb > 0 && c_g > 0 && c_lim > 0 &&
		    c_ratio > 0 && c_speed > 0 && c_ver > 0 && c_note > 0);
	assert_true(c->rows >= 2);
	for (int i = 0; i < c->rows; i++) {
		char **f = c->f[i];
		double g, lim;

		assert_int_equal(atoll(f[c_bb]), 64);
		lim = atof(f[c_lim]);
		assert_true(lim > 0);
		if (f[c_g][0] == '\0') {
			/* a strategy whose handler family is missing */
			assert_true(strncmp(f[c_note], "n/a", 3) == 0);
			assert_string_equal(f[c_ver], "");
			continue;
		}
		g = atof(f[c_g]);
		assert_true(g > 0);
		assert_string_equal(f[c_ver], "ok");
		if (fabs(atof(f[c_ratio]) - g / lim) >
		    0.002 + 0.01 * (1 + g / lim) / lim)
			fail_msg("row %d: ratio %s, gbit_s/limit %f", i,
				 f[c_ratio], g / lim);
		if (strcmp(f[c_st], "host-ddt") == 0) {
			seen_host = 1;
			assert_string_equal(f[c_speed], "1.000");
		}
		if (strcmp(f[c_st], "specialized") == 0)
			seen_spec = 1;
	}
	assert_true(seen_host && seen_spec);

	/* any type: general layouts, negative strides, 2 HPUs, small packets */
	run(r, "unpack", "--type",
	    "struct(1,2;0,8)[int32,hvector(3,1,-24)[double]]", "--bytes",
	    "30000", "--payload", "512", "--hpus", "2", "--reps", "1",
	    "--verify", NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench unpack --type failed (%d): %s",
			 r->status, r->err);
	assert_non_null(strstr(r->out, "\nhost-ddt "));
	assert_null(strstr(r->out, "FAIL"));
	free(c);
	free(r);
}

/* Both methods: two rows each (no-handler first, ratio 1), the method
 * named in every row; every byte of every put is checked by the bench. */
static void
test_latency(void **state)
{
	static const char *const methods[] = { "oneway", "pingpong" };
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_path, c_lat, c_ratio, c_meth;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	for (int m = 0; m < 2; m++) {
		run(r, "latency", "--iters", "50", "--warmup", "5", "--method",
		    methods[m], "--csv", path("latency.csv"), NULL);
		if (lacks_resources(r)) {
			free(c);
			free(r);
			skip();
			return;
		}
		if (r->status != 0)
			fail_msg("spinnic-bench latency --method %s failed "
				 "(%d): %s", methods[m], r->status, r->err);
		assert_non_null(strstr(r->out, "latency_us"));
		assert_non_null(strstr(r->out, "--idle-sleep-us 0"));
		csv_read(c, path("latency.csv"));
		c_path = col(c->hdr, c->nh, "path");
		c_lat = col(c->hdr, c->nh, "latency_us");
		c_ratio = col(c->hdr, c->nh, "ratio");
		c_meth = col(c->hdr, c->nh, "method");
		assert_true(c_path == 0 && c_lat > 0 && c_ratio > 0 &&
			    c_meth > 0);
		assert_int_equal(c->rows, 2);
		assert_string_equal(c->f[0][c_path], "no-handler");
		assert_string_equal(c->f[1][c_path], "handler");
		assert_string_equal(c->f[0][c_meth], methods[m]);
		assert_string_equal(c->f[1][c_meth], methods[m]);
		assert_true(atof(c->f[0][c_lat]) > 0 &&
			    atof(c->f[1][c_lat]) > 0);
		assert_string_equal(c->f[0][c_ratio], "1.000");
	}
	free(c);
	free(r);
}

/* auth: plain and keyed spinnics side by side; one row per metric with
 * both medians and their ratio; the keyed spinnic really authenticated
 * (its kept log); every byte of every put checked by the bench */
static void
test_auth(void **state)
{
	static const char *const metric[] = { "latency_us", "latency_us",
					      "put_gbit_s" };
	static const char *const bytes[] = { "1", "2048", "65536" };
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_m, c_b, c_p, c_k, c_r, c_lim;
	char line[512], klog[4200];
	int sealed = 0;
	FILE *f;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	/* path() has one buffer */
	snprintf(klog, sizeof(klog), "%s", path("auth-keyed.log"));
	run(r, "auth", "--rounds", "1", "--iters", "30", "--warmup", "5",
	    "--samples", "3", "--bytes", "65536", "--verify", "--spinnic-log",
	    klog, "--csv", path("auth.csv"), NULL);
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench auth failed (%d): %s", r->status,
			 r->err);
	assert_non_null(strstr(r->out, "--wire-key"));
	csv_read(c, path("auth.csv"));
	c_m = col(c->hdr, c->nh, "metric");
	c_b = col(c->hdr, c->nh, "bytes");
	c_p = col(c->hdr, c->nh, "plain");
	c_k = col(c->hdr, c->nh, "keyed");
	c_r = col(c->hdr, c->nh, "ratio");
	c_lim = col(c->hdr, c->nh, "limit_gbit_s");
	assert_true(c_m >= 0 && c_b >= 0 && c_p >= 0 && c_k >= 0 &&
		    c_r >= 0 && c_lim >= 0 && col(c->hdr, c->nh,
						  "cost_pct") >= 0);
	assert_int_equal(c->rows, 3);
	for (int i = 0; i < 3; i++) {
		double p = atof(c->f[i][c_p]), k = atof(c->f[i][c_k]);

		assert_string_equal(c->f[i][c_m], metric[i]);
		assert_string_equal(c->f[i][c_b], bytes[i]);
		assert_true(p > 0 && k > 0);
		assert_true(fabs(atof(c->f[i][c_r]) - k / p) < 0.01 * k / p +
			    0.002);
	}
	assert_true(atof(c->f[2][c_lim]) > 0);
	/* the keyed spinnic sealed frames and refused none */
	f = fopen(klog, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		long long n;

		if (sscanf(line, "  auth: sealed %lld", &n) == 1 && n > 0)
			sealed = 1;
		assert_null(strstr(line, "drop auth"));
	}
	fclose(f);
	assert_true(sealed);
	free(c);
	free(r);
}

/* unpack --mode wire: every strategy through the ethdev path, verified */
static void
test_unpack_wire(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_st, c_ver, c_bb, i, rows = 0, iovec = 0;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	run(r, "unpack", "--mode", "wire", "--blocks", "256:256", "--verify",
	    "--reps", "1", "--bytes", "262144", "--csv",
	    path("unpack-wire.csv"), NULL);
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench unpack --mode wire failed (%d): %s",
			 r->status, r->err);
	csv_read(c, path("unpack-wire.csv"));
	c_st = col(c->hdr, c->nh, "strategy");
	c_ver = col(c->hdr, c->nh, "verify");
	c_bb = col(c->hdr, c->nh, "block_bytes");
	assert_true(col(c->hdr, c->nh, "gbit_s") >= 0);
	assert_true(col(c->hdr, c->nh, "limit_gbit_s") >= 0);
	for (i = 0; i < c->rows; i++) {
		assert_string_equal(c->f[i][c_bb], "256");
		/* a strategy that runs is verified; n/a rows say why */
		if (strcmp(c->f[i][c_ver], "ok") == 0)
			rows++;
		else
			assert_string_equal(c->f[i][c_ver], "-");
		if (strcmp(c->f[i][c_st], "iovec") == 0 &&
		    strcmp(c->f[i][c_ver], "ok") == 0)
			iovec = 1;
	}
	assert_true(rows >= 5);
	assert_true(iovec);
	free(c);
	free(r);
}

static void
test_nic_bad_input(void **state)
{
	static const char *const cases[][8] = {
		{ "unpack", "--hpus", "0", NULL },
		{ "unpack", "--payload", "10", NULL },
		{ "unpack", "--strategies", "specialized,nope", NULL },
		{ "unpack", "--blocks", "8:4", NULL },
		{ "unpack", "--mode", "air", NULL },
		{ "unpack", "--type", "vector(3,2[int32]", NULL },
		{ "latency", "--iters", "0", NULL },
		{ "latency", "--handler", "nope", NULL },
		{ "latency", "--method", "sideways", NULL },
		{ "latency", "--spinnic", "/nonexistent/spinnic", NULL },
	};
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(tool_run(tool, tmpdir, cases[i], r), 0);
		if (r->status == 0 || r->status == -1 || !tool_one_line(r->err))
			fail_msg("case %zu (%s %s): status %d, stderr '%s'", i,
				 cases[i][0], cases[i][1], r->status, r->err);
	}
	free(r);
}

/* The columns of a CSV by name; fails when one is missing. */
static int
need_col(struct csv *c, const char *name)
{
	int i = col(c->hdr, c->nh, name);

	if (i < 0)
		fail_msg("CSV has no column '%s'", name);
	return i;
}

/* A throughput row: gbit_s > 0, ratio = gbit_s / limit, verified. */
static void
check_rate_row(struct csv *c, int i)
{
	char **f = c->f[i];
	double g = atof(f[need_col(c, "gbit_s")]);
	double lim = atof(f[need_col(c, "limit_gbit_s")]);
	const char *ratio = f[need_col(c, "ratio")];

	assert_true(g > 0 && lim > 0);
	if (fabs(atof(ratio) - g / lim) > 0.002 + 0.01 * (1 + g / lim) / lim)
		fail_msg("row %d: ratio %s, gbit_s/limit %f", i, ratio,
			 g / lim);
	assert_string_equal(f[need_col(c, "verify")], "ok");
}

static void
test_apps(void **state)
{
	static const char *const apps[] = {
		"COMB", "FFT2D", "LAMMPS", "MILC", "NAS_MG", "NAS_LU",
		"SPECFEM3D", "SW4LITE", "WRF",
	};
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_type, c_st, c_g, c_note, c_nic, c_gamma, c_speed;
	int spec_milc = 0, spec_wrf = 0, rwcp = 0;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	/* the catalog: every application of Fig. 16, with its expression */
	run(r, "apps", "--list", NULL);
	assert_int_equal(r->status, 0);
	for (size_t i = 0; i < sizeof(apps) / sizeof(apps[0]); i++)
		if (strstr(r->out, apps[i]) == NULL)
			fail_msg("apps --list lacks %s", apps[i]);
	assert_non_null(strstr(r->out, "indexed_block("));

	/* every catalog type through every strategy, every byte checked */
	run(r, "apps", "--reps", "1", "--verify", NULL);
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench apps failed (%d): %s", r->status,
			 r->err);
	assert_null(strstr(r->out, "FAIL"));
	assert_non_null(strstr(r->out, "\nspecfem3d_oc "));
	assert_non_null(strstr(r->out, "\nwrf_y "));

	/* the CSV of a few */
	run(r, "apps", "--apps", "milc_zdown,specfem3d_oc,WRF", "--reps", "1",
	    "--verify", "--csv", path("apps.csv"), NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench apps --apps failed (%d): %s",
			 r->status, r->err);
	csv_read(c, path("apps.csv"));
	c_type = need_col(c, "type");
	c_st = need_col(c, "strategy");
	c_g = need_col(c, "gbit_s");
	c_note = need_col(c, "note");
	c_nic = need_col(c, "nic_bytes");
	c_gamma = need_col(c, "gamma");
	c_speed = need_col(c, "speedup");
	assert_int_equal(c_type, 0);
	assert_true(c->rows >= 4 * 6);
	for (int i = 0; i < c->rows; i++) {
		char **f = c->f[i];
		/* floor: the layout's copy floor, on neither side */
		int nic = strncmp(f[c_st], "host-", 5) != 0 &&
			strcmp(f[c_st], "floor") != 0;

		if (strcmp(f[c_type], "specfem3d_oc") == 0)
			/* one float per index: γ close to 512 (paper 000) */
			assert_true(atof(f[c_gamma]) > 400 &&
				    atof(f[c_gamma]) <= 512);
		if (f[c_g][0] == '\0') {
			assert_true(strncmp(f[c_note], "n/a", 3) == 0);
			if (strcmp(f[c_st], "specialized") == 0 &&
			    strcmp(f[c_type], "wrf_y") == 0)
				spec_wrf = 1; /* a struct: no specialized */
			continue;
		}
		check_rate_row(c, i);
		if (nic)
			assert_true(atoll(f[c_nic]) > 0);
		else
			assert_string_equal(f[c_nic], "");
		if (strcmp(f[c_st], "host-ddt") == 0)
			assert_string_equal(f[c_speed], "1.000");
		if (strcmp(f[c_st], "specialized") == 0 &&
		    strcmp(f[c_type], "milc_zdown") == 0)
			spec_milc = 1;
		if (strcmp(f[c_st], "rw-cp") == 0)
			rwcp++;
	}
	assert_true(spec_milc && spec_wrf);
	assert_int_equal(rwcp, 4);

	/* wire mode: the same receives with the frames through an ethdev
	 * pair, every byte still checked */
	run(r, "apps", "--mode", "wire", "--apps", "milc_zdown,wrf_x,COMB",
	    "--hpus", "2", "--reps", "1", "--verify", "--csv",
	    path("apps-wire.csv"), NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench apps --mode wire failed (%d): %s",
			 r->status, r->err);
	assert_null(strstr(r->out, "FAIL"));
	csv_read(c, path("apps-wire.csv"));
	rwcp = 0;
	for (int i = 0; i < c->rows; i++) {
		if (c->f[i][need_col(c, "gbit_s")][0] == '\0')
			continue;
		check_rate_row(c, i);
		rwcp += strcmp(c->f[i][need_col(c, "strategy")], "rw-cp") == 0;
	}
	assert_int_equal(rwcp, 4);
	free(c);
	free(r);
}

static void
test_scaling(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_h, c_bb, c_sp, c_fr, c_s, seen[4] = { 0 }, floors = 0;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	run(r, "scaling", "--hpus", "1,2,3", "--blocks", "256:512", "--bytes",
	    "65536", "--reps", "1", "--verify", "--csv", path("scaling.csv"),
	    NULL);
	if (!lacks_resources(r) && r->status == 0) {
		struct tool_result *rw = malloc(sizeof(*rw));

		/* wire mode: HPU threads behind an ethdev RX loop */
		assert_non_null(rw);
		run(rw, "scaling", "--mode", "wire", "--hpus", "1,3",
		    "--blocks", "64:64", "--bytes", "200000", "--payload",
		    "1024", "--reps", "1", "--verify", NULL);
		if (rw->status != 0)
			fail_msg("spinnic-bench scaling --mode wire failed "
				 "(%d): %s", rw->status, rw->err);
		assert_null(strstr(rw->out, "FAIL"));
		assert_non_null(strstr(rw->out, " ok "));
		free(rw);
	}
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench scaling failed (%d): %s", r->status,
			 r->err);
	csv_read(c, path("scaling.csv"));
	c_h = need_col(c, "hpus");
	c_bb = need_col(c, "block_bytes");
	c_sp = need_col(c, "speedup_vs_1");
	c_fr = need_col(c, "floor_ratio");
	c_s = need_col(c, "strategy");
	assert_int_equal(c_s, 0);
	/* 3 counts x 2 blocks x specialized, hpu-local, ro-cp, rw-cp and
	 * the floor on as many threads */
	assert_int_equal(c->rows, 3 * 2 * 5);
	for (int i = 0; i < c->rows; i++) {
		char **f = c->f[i];
		int h = atoi(f[c_h]);
		bool floor = strcmp(f[c_s], "floor") == 0;

		assert_true(h >= 1 && h <= 3);
		floors += floor;
		/* a NIC row over the floor of its count; none for the floor */
		if (floor)
			assert_string_equal(f[c_fr], "");
		else
			assert_true(f[c_fr][0] != '\0' && atof(f[c_fr]) >= 0);
		seen[h] = 1;
		assert_true(atoll(f[c_bb]) == 256 || atoll(f[c_bb]) == 512);
		check_rate_row(c, i);
		if (h == 1)
			assert_string_equal(f[c_sp], "1.000");
		else	/* 3 decimals: HPU threads starved by a loaded
			 * machine's other work can print 0.000 */
			assert_true(atof(f[c_sp]) >= 0);
	}
	assert_true(seen[1] && seen[2] && seen[3]);
	assert_int_equal(floors, 3 * 2);
	free(c);
	free(r);
}

static void
test_ckpt(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	int c_type, c_f, c_iv, c_ck, c_nb, c_cr, c_host, c_nic, c_re, c_note;
	int c_bytes, at_model = 0;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	run(r, "ckpt", "--apps", "milc_zdown,specfem3d_cm", "--hpus", "4",
	    "--factors", "0.5,1,2", "--reps", "1", "--verify", "--csv",
	    path("ckpt.csv"), NULL);
	if (lacks_resources(r)) {
		free(c);
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench ckpt failed (%d): %s", r->status,
			 r->err);
	assert_non_null(strstr(r->out, "amortized in <= 2 reuses: "));
	assert_non_null(strstr(r->out, " of 2 types"));
	csv_read(c, path("ckpt.csv"));
	c_type = need_col(c, "type");
	c_f = need_col(c, "factor");
	c_iv = need_col(c, "interval");
	c_ck = need_col(c, "ckpts");
	c_nb = need_col(c, "nic_bytes");
	c_cr = need_col(c, "create_us");
	c_host = need_col(c, "host_us");
	c_nic = need_col(c, "nic_us");
	c_re = need_col(c, "reuses");
	c_note = need_col(c, "note");
	c_bytes = need_col(c, "bytes");
	assert_true(c->rows >= 2 && c->rows <= 6);
	for (int i = 0; i < c->rows; i++) {
		char **f = c->f[i];
		long long iv = atoll(f[c_iv]), bytes = atoll(f[c_bytes]);

		assert_true(iv >= 2048 && iv % 2048 == 0);
		assert_int_equal(atoll(f[c_ck]), (bytes + iv - 1) / iv);
		assert_true(atoll(f[c_nb]) > 0);
		assert_true(atof(f[c_cr]) > 0 && atof(f[c_host]) > 0 &&
			    atof(f[c_nic]) > 0);
		assert_string_equal(f[need_col(c, "verify")], "ok");
		if (f[c_re][0] == '\0')
			assert_non_null(strstr(f[c_note], "never amortized"));
		else
			assert_true(atoll(f[c_re]) >= 1);
		if (strcmp(f[c_f], "1.00") == 0)
			at_model++;
		/* fewer checkpoints, less NIC memory */
		if (i > 0 && strcmp(c->f[i - 1][c_type], f[c_type]) == 0) {
			assert_true(iv >= atoll(c->f[i - 1][c_iv]));
			assert_true(atoll(f[c_nb]) <=
				    atoll(c->f[i - 1][c_nb]));
		}
	}
	assert_int_equal(at_model, 2);
	free(c);
	free(r);
}

static void
test_new_bad_input(void **state)
{
	static const char *const cases[][8] = {
		{ "apps", "--apps", "nope", NULL },
		{ "apps", "--apps", ",", NULL },
		{ "apps", "--type", "int32", NULL },
		{ "apps", "--hpus", "0", NULL },
		{ "apps", "--strategies", "rw-cp,", "--payload", "1", NULL },
		{ "scaling", "--hpus", "1,x", NULL },
		{ "scaling", "--hpus", "0", NULL },
		{ "scaling", "--blocks", "8:4", NULL },
		{ "scaling", "--type", "contig(", NULL },
		{ "ckpt", "--factors", "0", NULL },
		{ "ckpt", "--factors", "1,-2", NULL },
		{ "ckpt", "--strategies", "host-ddt", NULL },
		{ "ckpt", "--apps", "nope", NULL },
		{ "ckpt", "--bytes", "4096", NULL },
		{ "apps", "--mode", "x", NULL },
		{ "scaling", "--mode", "", NULL },
		{ "ckpt", "--mode", "wired", NULL },
		{ "auth", "--rounds", "0", NULL },
		{ "auth", "--payload", "100", NULL },
		{ "auth", "--bytes", "1000", NULL },
		{ "auth", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "rate", "--window", "0", NULL },
		{ "rate", "--handler", "nope", NULL },
		{ "rate", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "trig", "--iters", "15", "--block", "10", NULL },
		{ "trig", "--chain", "0", NULL },
		{ "trig", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "coll", NULL }, /* folded into overlap and setup */
		{ "layout", "--figure", "7", NULL },
		{ "layout", "--figure", "", NULL },
		{ "layout", "--lreps", "0", NULL },
		{ "layout", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "halo", "--grid", "3", NULL },
		{ "halo", "--iters", "0", NULL },
		{ "halo", "--hreps", "x", NULL },
		{ "halo", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "overlap", "--coll", "nope", NULL },
		{ "overlap", "--nic-lcores", "0", NULL },
		{ "overlap", "--nic-lcores", "17", NULL },
		{ "overlap", "--busy-rank", "any", NULL },
		{ "overlap", "--sizes", "8,,9", NULL },
		{ "overlap", "--ranks", "17", NULL },
		{ "overlap", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "setup", "--ranks", "0", NULL },
		{ "group", "--ranks", "1", NULL },
		{ "group", "--sizes", "0", NULL },
		{ "stencil", "--sizes", "1", NULL },
		{ "stencil", "--sizes", "257", NULL },
		{ "stencil", "--ranks", "2,,4", NULL },
		{ "stencil", "--busy-rank", "any", NULL },
		{ "stencil", "--spinnic", "/nonexistent/spinnic", NULL },
		{ "ring", "--poll-us", "0", NULL },
		{ "ring", "--sizes", "16777217", NULL },
		{ "ring", "--ranks", "17", NULL },
		{ "ring", "--spinnic", "/nonexistent/spinnic", NULL },
	};
	struct tool_result *r = malloc(sizeof(*r));

	(void)state;
	assert_non_null(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(tool_run(tool, tmpdir, cases[i], r), 0);
		if (r->status == 0 || r->status == -1 || !tool_one_line(r->err))
			fail_msg("case %zu (%s %s %s): status %d, stderr '%s'",
				 i, cases[i][0], cases[i][1], cases[i][2],
				 r->status, r->err);
	}
	free(r);
}

/*
 * An unwritable --csv is refused before any benchmark runs (it used to
 * fail after the whole run, ~15 s for the NIC subcommands): non-zero
 * status, one line naming the path, nothing measured on stdout. For
 * every subcommand: a directory, a missing directory, a path below a
 * regular file.
 */
/* layout (paper 001's figures): --figure 9 has a row per element count
 * with every variant's time and its ratio to host from the same run
 * (checked against the times), Fig. 11's cached/uncached ratios and the
 * best fixed variant; --figure 12 compares a plain ME with the chooser on
 * contiguous receives. Behaviour only, never timing. */
static void
layout_csv(struct csv *c, const char *fig, const char *file)
{
	struct tool_result *r = malloc(sizeof(*r));

	assert_non_null(r);
	run(r, "layout", "--figure", fig, "--lreps", "1", "--csv", path(file),
	    NULL);
	if (lacks_resources(r)) {
		free(r);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench layout --figure %s failed (%d): %s", fig,
			 r->status, r->err);
	assert_non_null(strstr(r->out, "# figure "));
	assert_non_null(strstr(r->out, "calibration measured"));
	csv_read(c, path(file));
	free(r);
}

/* tools/@p gp on CSV @p csv: @return its exit status, or -1 without
 * gnuplot; a PNG at @p png when 0 */
static int
plot_gp(const char *gp, const char *csv, const char *png)
{
	const char *src = getenv("SPINNIC_SOURCE_DIR");
	char cmd[9000];
	int st;

	assert_non_null(src);
	if (system("command -v gnuplot >/dev/null 2>&1") != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "t=pngcairo; gnuplot -e 'set terminal "
		 "pngcairo' >/dev/null 2>&1 || t=png; gnuplot -e \"csv='%s'; "
		 "png='%s'; term='$t'\" '%s/tools/%s' 2>/dev/null", csv, png,
		 src, gp);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* @p png begins as a PNG file does */
static void
assert_png(const char *png)
{
	unsigned char magic[8] = { 0 };
	FILE *f = fopen(png, "rb");

	assert_non_null(f);
	assert_int_equal(fread(magic, 1, sizeof(magic), f), sizeof(magic));
	fclose(f);
	assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", sizeof(magic));
}

/* Fig. 3: a grid of 5 block sizes x 3 uses, each cell the NIC (prepared
 * once per layout, or per receive) and the chooser against host; the
 * heat map of tools/plot_layout_fig3.gp drawn from it (a PNG), and a CSV
 * that is not a grid refused. */
static void
layout_fig3(struct csv *c)
{
	static const int64_t blk[] = { 64, 512, 2048, 4096, 16384 };
	static const long uses[] = { 1, 10, 100 };
	char csv[4200], png[4200], other[4200];
	int c_b, c_u, c_s, c_a, c_n, rc;

	layout_csv(c, "3", "layout3.csv");
	c_b = col(c->hdr, c->nh, "block_b");
	c_u = col(c->hdr, c->nh, "uses");
	c_s = col(c->hdr, c->nh, "static_vs_host");
	c_a = col(c->hdr, c->nh, "aware_vs_host");
	c_n = col(c->hdr, c->nh, "nic_uncached_vs_host");
	assert_true(c_b >= 0 && c_u >= 0 && c_s >= 0 && c_a >= 0 && c_n >= 0);
	assert_int_equal(c->rows, 15);
	for (int i = 0; i < c->rows; i++) {
		assert_string_equal(c->f[i][0], "grid");
		assert_int_equal(atoll(c->f[i][c_b]), blk[i / 3]);
		assert_int_equal(atol(c->f[i][c_u]), uses[i % 3]);
		assert_true(atof(c->f[i][c_s]) > 0 && atof(c->f[i][c_a]) > 0 &&
			    atof(c->f[i][c_n]) > 0);
	}
	snprintf(csv, sizeof(csv), "%s", path("layout3.csv"));
	snprintf(png, sizeof(png), "%s", path("layout3.png"));
	snprintf(other, sizeof(other), "%s", path("layout9.csv"));
	rc = plot_gp("plot_layout_fig3.gp", csv, png);
	if (rc < 0) {
		print_message("no gnuplot: plot_layout_fig3.gp not run\n");
		return;
	}
	assert_int_equal(rc, 0);
	assert_png(png);
	/* Fig. 9's CSV has no grid rows: refused, not an empty picture */
	assert_int_not_equal(plot_gp("plot_layout_fig3.gp", other, png), 0);
}

static void
test_layout(void **state)
{
	static const char *const v9[] = {
		"static", "aware", "threshold", "nic_uncached",
		"iovec_uncached", "iovec_cached",
	};
	static const int64_t blk9[] = { 8, 8, 8, 64, 64, 4096, 4096, 4096,
					4096 };
	struct csv *c = malloc(sizeof(*c));
	char name[64];
	int c_b, c_n, c_m, c_h, c_u, c_best, c_ic, c_iu, c_r;

	(void)state;
	assert_non_null(c);
	layout_csv(c, "9", "layout9.csv");
	c_b = col(c->hdr, c->nh, "block_b");
	c_n = col(c->hdr, c->nh, "count");
	c_m = col(c->hdr, c->nh, "msg_b");
	c_u = col(c->hdr, c->nh, "uses");
	c_h = col(c->hdr, c->nh, "host_us");
	c_best = col(c->hdr, c->nh, "best");
	c_r = col(c->hdr, c->nh, "iovec_cached_vs_uncached");
	c_ic = col(c->hdr, c->nh, "iovec_cached_us");
	c_iu = col(c->hdr, c->nh, "iovec_uncached_us");
	assert_true(c_b >= 0 && c_n >= 0 && c_m >= 0 && c_u >= 0 &&
		    c_h >= 0 && c_best >= 0 && c_r >= 0 && c_ic >= 0 &&
		    c_iu >= 0);
	assert_true(col(c->hdr, c->nh, "aware_vs_best") >= 0);
	assert_true(col(c->hdr, c->nh, "static_vs_nic_uncached") >= 0);
	assert_int_equal(c->rows, 9);
	for (int i = 0; i < c->rows; i++) {
		double h = atof(c->f[i][c_h]);

		assert_int_equal(atoll(c->f[i][c_b]), blk9[i]);
		assert_int_equal(atoll(c->f[i][c_m]),
				 atoll(c->f[i][c_b]) * atoll(c->f[i][c_n]));
		assert_int_equal(atoll(c->f[i][c_u]), 100);
		assert_true(h > 0);
		for (size_t v = 0; v < sizeof(v9) / sizeof(v9[0]); v++) {
			int cu, cr;
			double t, q;

			snprintf(name, sizeof(name), "%s_us", v9[v]);
			cu = col(c->hdr, c->nh, name);
			snprintf(name, sizeof(name), "%s_vs_host", v9[v]);
			cr = col(c->hdr, c->nh, name);
			assert_true(cu >= 0 && cr >= 0);
			t = atof(c->f[i][cu]);
			q = atof(c->f[i][cr]);
			assert_true(t > 0);
			/* the ratio is of this run's two times */
			assert_true(ratio_of(q, t, h));
		}
		assert_true(ratio_of(atof(c->f[i][c_r]), atof(c->f[i][c_ic]),
				     atof(c->f[i][c_iu])));
		assert_true(strcmp(c->f[i][c_best], "aware") != 0 &&
			    strcmp(c->f[i][c_best], "threshold") != 0);
	}
	layout_csv(c, "12", "layout12.csv");
	c_r = col(c->hdr, c->nh, "aware_vs_plain");
	assert_true(c_r >= 0 && col(c->hdr, c->nh, "plain_us") >= 0 &&
		    col(c->hdr, c->nh, "aware_us") >= 0);
	assert_int_equal(col(c->hdr, c->nh, "host_us"), -1);
	assert_int_equal(c->rows, 3);
	for (int i = 0; i < c->rows; i++)
		assert_true(atof(c->f[i][c_r]) > 0);
	layout_fig3(c);
	/* Fig. 13: a row per application type, the chooser against host
	 * and the best fixed strategy of the same run; specialized only
	 * where the layout is regular ('-' otherwise) */
	layout_csv(c, "13", "layout13.csv");
	c_r = col(c->hdr, c->nh, "aware_vs_host");
	c_best = col(c->hdr, c->nh, "best");
	c_h = col(c->hdr, c->nh, "specialized_us");
	assert_true(c_r >= 0 && c_best >= 0 && c_h >= 0 &&
		    col(c->hdr, c->nh, "rw_cp_vs_host") >= 0 &&
		    col(c->hdr, c->nh, "aware_vs_best") >= 0);
	assert_int_equal(c->rows, 16);
	for (int i = 0; i < c->rows; i++) {
		assert_true(atof(c->f[i][c_r]) > 0);
		assert_true(strcmp(c->f[i][c_best], "aware") != 0);
		if (strcmp(c->f[i][0], "comb_x") == 0)
			assert_string_equal(c->f[i][c_h], "");
		if (strcmp(c->f[i][0], "nas_mg_y") == 0)
			assert_true(atof(c->f[i][c_h]) > 0);
	}
	free(c);
}

/* halo (paper 001 Fig. 14b): a row per group of iterations with both
 * variants' times, aware / host of the same row and each face's share of
 * aware receives by the NIC; every face was checked by the ranks. */
static void
test_halo(void **state)
{
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c = malloc(sizeof(*c));
	char csv[4200], png[4200];
	int c_f, c_l, c_h, c_a, c_r, c_n[3], rc;

	(void)state;
	assert_non_null(r);
	assert_non_null(c);
	run(r, "halo", "--grid", "8", "--iters", "12", "--group", "4",
	    "--hreps", "1", "--csv", path("halo.csv"), NULL);
	if (lacks_resources(r)) {
		free(r);
		free(c);
		skip();
		return;
	}
	if (r->status != 0)
		fail_msg("spinnic-bench halo failed (%d): %s", r->status,
			 r->err);
	assert_non_null(strstr(r->out, "# halo exchange"));
	csv_read(c, path("halo.csv"));
	c_f = col(c->hdr, c->nh, "iter_first");
	c_l = col(c->hdr, c->nh, "iter_last");
	c_h = col(c->hdr, c->nh, "host_us");
	c_a = col(c->hdr, c->nh, "aware_us");
	c_r = col(c->hdr, c->nh, "aware_vs_host");
	c_n[0] = col(c->hdr, c->nh, "aware_nic_x");
	c_n[1] = col(c->hdr, c->nh, "aware_nic_y");
	c_n[2] = col(c->hdr, c->nh, "aware_nic_z");
	assert_true(c_f >= 0 && c_l >= 0 && c_h >= 0 && c_a >= 0 && c_r >= 0 &&
		    c_n[0] >= 0 && c_n[1] >= 0 && c_n[2] >= 0);
	assert_int_equal(c->rows, 3);
	for (int i = 0; i < c->rows; i++) {
		assert_int_equal(atoll(c->f[i][c_f]), 4 * i + 1);
		assert_int_equal(atoll(c->f[i][c_l]), 4 * i + 4);
		assert_true(atof(c->f[i][c_h]) > 0 && atof(c->f[i][c_a]) > 0);
		assert_true(ratio_of(atof(c->f[i][c_r]), atof(c->f[i][c_a]),
				     atof(c->f[i][c_h])));
		for (int f = 0; f < 3; f++)
			assert_true(atof(c->f[i][c_n[f]]) >= 0 &&
				    atof(c->f[i][c_n[f]]) <= 1);
	}
	/* the first iteration of an emptied cache is host-based: the
	 * first group cannot be all NIC */
	for (int f = 0; f < 3; f++)
		assert_true(atof(c->f[0][c_n[f]]) <= 0.75 + 1e-9);
	/* tools/plot_halo.gp draws it; Fig. 3's script refuses it */
	snprintf(csv, sizeof(csv), "%s", path("halo.csv"));
	snprintf(png, sizeof(png), "%s", path("halo.png"));
	rc = plot_gp("plot_halo.gp", csv, png);
	if (rc >= 0) {
		assert_int_equal(rc, 0);
		assert_png(png);
		assert_int_not_equal(plot_gp("plot_layout_fig3.gp", csv, png),
				     0);
	}
	free(r);
	free(c);
}

static void
test_csv_unwritable(void **state)
{
	static const char *const cmds[] = {
		"ddt", "unpack", "scaling", "latency", "apps", "ckpt",
		"rate", "trig", "overlap", "setup",
	};
	char dir_path[4200], missing[] = "/nonexistent/dir/x.csv";
	char file[4200], below[4300];
	const char *paths[3];
	struct tool_result *r = malloc(sizeof(*r));
	FILE *f;

	(void)state;
	assert_non_null(r);
	snprintf(dir_path, sizeof(dir_path), "%s", tmpdir);
	snprintf(file, sizeof(file), "%s", path("plain-file"));
	f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(below, sizeof(below), "%s/x.csv", file);
	paths[0] = dir_path;
	paths[1] = missing;
	paths[2] = below;
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++)
		for (size_t p = 0; p < 3; p++) {
			/* ddt's smallest run, in case the check is missing */
			const char *args[] = { cmds[c], "--csv", paths[p],
					       "--reps", "1", "--bytes",
					       "4096", NULL };

			if (c > 0)
				args[3] = NULL;
			assert_int_equal(tool_run(tool, tmpdir, args, r), 0);
			if (r->status <= 0 || !tool_one_line(r->err) ||
			    strstr(r->err, "--csv") == NULL ||
			    strstr(r->err, paths[p]) == NULL ||
			    r->out[0] != '\0')
				fail_msg("%s --csv %s: status %d, stderr '%s', "
					 "stdout '%.200s'", cmds[c], paths[p],
					 r->status, r->err, r->out);
		}
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_ddt_csv),
		cmocka_unit_test(test_ddt_type),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_unpack),
		cmocka_unit_test(test_unpack_wire),
		cmocka_unit_test(test_latency),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_nic_bad_input),
		cmocka_unit_test(test_apps),
		cmocka_unit_test(test_scaling),
		cmocka_unit_test(test_ckpt),
		cmocka_unit_test(test_new_bad_input),
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_halo),
		cmocka_unit_test(test_csv_unwritable),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
