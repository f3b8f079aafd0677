/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench's group-offload benches (issue #19, paper 003): group,
 * stencil and ring, each run once small, as a user would (behaviour,
 * never timing): their rows and columns, the arithmetic of their ratios,
 * and that their byte checks pass, and fail the bench when a received
 * byte is wrong (SPINNIC_BENCH_CORRUPT: the bench flips one before its
 * check).
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

#include <cmocka.h>

#include "bench_test.h"

/* @p q (printed to 0.001) is @p t / @p h of two times printed to 0.01 */
static bool
ratio3(const char *q, const char *t, const char *h)
{
	double tv = atof(t), hv = atof(h);

	if (!(hv > 0))
		return q[0] == '\0';
	return fabs(atof(q) - tv / hv) <= 0.0006 + 0.006 * (1 / hv + tv /
							     (hv * hv));
}

/* overlap = clamp(1 - nonov / pure, 0, 1), nonov = total - work */
static void
assert_overlap(const char *pu, const char *w, const char *to, const char *n,
	       const char *o)
{
	double pure = atof(pu), work = atof(w), total = atof(to);
	double nonov = atof(n), ov = atof(o), want;

	assert_true(pure > 0 && total > 0 && work > 0);
	assert_true(fabs(nonov - (total - work)) <= 0.016);
	want = 1 - nonov / pure;
	want = want < 0 ? 0 : want > 1 ? 1 : want;
	assert_true(ov >= 0 && ov <= 1);
	assert_true(fabs(ov - want) <= 0.002 + 0.011 * (1 / pure +
							 fabs(nonov) /
							 (pure * pure)));
}

/* group: six variants in order, ratios against host's, simple's and
 * staged's; then the mpich row where spinnic-bench-mpi and mpiexec are
 * there, else a line that says it was skipped */
static void
test_group(void **state)
{
	static const char *const variant[] = { "cached", "rerecorded",
		"uncached", "simple", "host", "staged", "mpich" };
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c;
	int c_v, c_f, c_pu, c_to, c_n, c_o, c_rh, c_rs, c_rst, c_rm;

	(void)state;
	assert_non_null(r);
	c = run_csv(r, "group.csv", "group", "--ranks", "2", "--sizes", "64",
		    "--reps", "1", "--warmup", "0", "--mpich", "none", NULL);
	if (c == NULL) {
		free(r);
		skip();
		return;
	}
	assert_non_null(strstr(r->out, "\n# group "));
	assert_non_null(strstr(r->out, ": skipped, --mpich none"));
	c_v = col(c->hdr, c->nh, "variant");
	c_f = col(c->hdr, c->nh, "t_first_us");
	c_pu = col(c->hdr, c->nh, "t_pure_us");
	c_to = col(c->hdr, c->nh, "t_total_us");
	c_n = col(c->hdr, c->nh, "t_nonov_us");
	c_o = col(c->hdr, c->nh, "overlap");
	c_rh = col(c->hdr, c->nh, "ratio_total_host");
	c_rs = col(c->hdr, c->nh, "ratio_total_simple");
	c_rst = col(c->hdr, c->nh, "ratio_total_staged");
	c_rm = col(c->hdr, c->nh, "ratio_total_mpich");
	assert_true(c_v >= 0 && c_f >= 0 && c_pu >= 0 && c_to >= 0 &&
		    c_n >= 0 && c_o >= 0 && c_rh >= 0 && c_rs >= 0 &&
		    c_rst >= 0 && c_rm >= 0);
	assert_int_equal(c->rows, 6);
	for (int i = 0; i < 6; i++) {
		assert_string_equal(c->f[i][c_v], variant[i]);
		assert_true(atof(c->f[i][c_f]) > 0);
		assert_overlap(c->f[i][c_pu], c->f[i][c_pu], c->f[i][c_to],
			       c->f[i][c_n], c->f[i][c_o]);
		if (i == 4)
			assert_string_equal(c->f[i][c_rh], "");
		else
			assert_true(ratio3(c->f[i][c_rh], c->f[i][c_to],
					   c->f[4][c_to]));
		if (i == 3)
			assert_string_equal(c->f[i][c_rs], "");
		else
			assert_true(ratio3(c->f[i][c_rs], c->f[i][c_to],
					   c->f[3][c_to]));
		if (i == 5)
			assert_string_equal(c->f[i][c_rst], "");
		else
			assert_true(ratio3(c->f[i][c_rst], c->f[i][c_to],
					   c->f[5][c_to]));
		assert_string_equal(c->f[i][c_rm], "");
	}
	/* the bench checks every byte: one flipped bit fails it */
	setenv("SPINNIC_BENCH_CORRUPT", "1", 1);
	run(r, "group", "--ranks", "2", "--sizes", "64", "--reps", "1",
	    "--warmup", "0", "--mpich", "none", NULL);
	unsetenv("SPINNIC_BENCH_CORRUPT");
	assert_int_not_equal(r->status, 0);
	assert_non_null(strstr(r->err, "block 1 byte 63"));
	run(r, "group", "--ranks", "2", "--sizes", "64", "--reps", "1",
	    "--warmup", "0", "--csv", path("group-mpich.csv"), NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench group (mpich) failed (%d): %s",
			 r->status, r->err);
	csv_read(c, path("group-mpich.csv"));
	if (strstr(r->out, ": skipped, ") != NULL) {
		assert_int_equal(c->rows, 6);
	} else {
		assert_int_equal(c->rows, 7);
		assert_string_equal(c->f[6][c_v], variant[6]);
		assert_string_equal(c->f[6][c_f], "");
		assert_string_equal(c->f[6][c_rm], "");
		assert_overlap(c->f[6][c_pu], c->f[6][c_pu], c->f[6][c_to],
			       c->f[6][c_n], c->f[6][c_o]);
		for (int i = 0; i < 6; i++)
			assert_true(ratio3(c->f[i][c_rm], c->f[i][c_to],
					   c->f[6][c_to]));
	}
	free(c);
	free(r);
}

/* stencil: P = 3 (3x1x1: distinct neighbours on both sides) and 8
 * (2x2x2: the same neighbour on both sides of each axis), two cube edges,
 * offload then host, one t_work (host's t_pure), the ratio; the halos
 * checked by the bench, which fails when one byte is wrong */
static void
test_stencil(void **state)
{
	static const char *const ranks[] = { "3", "8" };
	static const char *const grid[] = { "3x1x1", "2x2x2" };
	static const char *const n[] = { "4", "6" };
	static const char *const fb[] = { "128", "288" };
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c;
	int c_p, c_g, c_n, c_fb, c_v, c_pu, c_w, c_to, c_nv, c_o, c_rh, c_rm;
	int c_too, c_oo;

	(void)state;
	assert_non_null(r);
	c = run_csv(r, "stencil.csv", "stencil", "--ranks", "3,8", "--sizes",
		    "4,6", "--reps", "2", "--warmup", "1", "--mpich", "none",
		    NULL);
	if (c == NULL) {
		free(r);
		skip();
		return;
	}
	assert_non_null(strstr(r->out, "\n# stencil "));
	c_p = col(c->hdr, c->nh, "ranks");
	c_g = col(c->hdr, c->nh, "grid");
	c_n = col(c->hdr, c->nh, "n");
	c_fb = col(c->hdr, c->nh, "face_bytes");
	c_v = col(c->hdr, c->nh, "variant");
	c_pu = col(c->hdr, c->nh, "t_pure_us");
	c_w = col(c->hdr, c->nh, "t_work_us");
	c_to = col(c->hdr, c->nh, "t_total_us");
	c_nv = col(c->hdr, c->nh, "t_nonov_us");
	c_o = col(c->hdr, c->nh, "overlap");
	c_rh = col(c->hdr, c->nh, "ratio_total_host");
	c_rm = col(c->hdr, c->nh, "ratio_total_mpich");
	c_too = col(c->hdr, c->nh, "t_total_own_us");
	c_oo = col(c->hdr, c->nh, "overlap_own");
	assert_true(c_p >= 0 && c_g >= 0 && c_n >= 0 && c_fb >= 0 &&
		    c_v >= 0 && c_pu >= 0 && c_w >= 0 && c_to >= 0 &&
		    c_nv >= 0 && c_o >= 0 && c_rh >= 0 && c_rm >= 0 &&
		    c_too >= 0 && c_oo >= 0);
	assert_int_equal(c->rows, 8);
	for (int i = 0; i < 8; i++) {
		int h = i | 1; /* the host row of the same P and n */

		assert_string_equal(c->f[i][c_p], ranks[i / 4]);
		assert_string_equal(c->f[i][c_g], grid[i / 4]);
		assert_string_equal(c->f[i][c_n], n[i / 2 % 2]);
		assert_string_equal(c->f[i][c_fb], fb[i / 2 % 2]);
		assert_string_equal(c->f[i][c_v], i % 2 ? "host" : "offload");
		assert_string_equal(c->f[i][c_w], c->f[h][c_pu]);
		assert_overlap(c->f[i][c_pu], c->f[i][c_w], c->f[i][c_to],
			       c->f[i][c_nv], c->f[i][c_o]);
		/* with its own t_pure as t_work */
		{
			double pu = atof(c->f[i][c_pu]);
			double to = atof(c->f[i][c_too]);
			double o = atof(c->f[i][c_oo]), want;

			want = 1 - (to - pu) / pu;
			want = want < 0 ? 0 : want > 1 ? 1 : want;
			assert_true(to > 0 && o >= 0 && o <= 1);
			assert_true(fabs(o - want) <= 0.002 + 0.011 *
				    (1 / pu + to / (pu * pu)));
		}
		if (i % 2)
			assert_string_equal(c->f[i][c_rh], "");
		else
			assert_true(ratio3(c->f[i][c_rh], c->f[i][c_to],
					   c->f[h][c_to]));
		assert_string_equal(c->f[i][c_rm], "");
	}
	/* the mpich row (MPI_Isend/MPI_Irecv, host's t_work) where
	 * spinnic-bench-mpi and mpiexec are there, else a skipped line */
	run(r, "stencil", "--ranks", "2", "--sizes", "4", "--reps", "1",
	    "--warmup", "0", "--csv", path("stencil-mpich.csv"), NULL);
	if (r->status != 0)
		fail_msg("spinnic-bench stencil (mpich) failed (%d): %s",
			 r->status, r->err);
	csv_read(c, path("stencil-mpich.csv"));
	if (strstr(r->out, ": skipped, ") != NULL) {
		assert_int_equal(c->rows, 2);
	} else {
		assert_int_equal(c->rows, 3);
		assert_string_equal(c->f[2][c_v], "mpich");
		assert_string_equal(c->f[2][c_g], "2x1x1");
		assert_string_equal(c->f[2][c_w], c->f[1][c_pu]);
		assert_string_equal(c->f[2][c_oo], "");
		assert_overlap(c->f[2][c_pu], c->f[2][c_w], c->f[2][c_to],
			       c->f[2][c_nv], c->f[2][c_o]);
		for (int i = 0; i < 2; i++)
			assert_true(ratio3(c->f[i][c_rm], c->f[i][c_to],
					   c->f[2][c_to]));
	}
	setenv("SPINNIC_BENCH_CORRUPT", "1", 1);
	run(r, "stencil", "--ranks", "2", "--sizes", "4", "--reps", "1",
	    "--warmup", "0", NULL);
	unsetenv("SPINNIC_BENCH_CORRUPT");
	assert_int_not_equal(r->status, 0);
	assert_non_null(strstr(r->err, "halo"));
	run(r, "stencil", "--sizes", "1", NULL);
	assert_int_not_equal(r->status, 0);
	free(c);
	free(r);
}

/* ring: P = 3, an eager and a rendezvous panel, group, host-1ring and
 * host-bcast in order, poll_us on the host rows, one t_work (host-1ring's
 * t_pure), both ratios; every rank's panel checked by the bench, which
 * fails when one byte is wrong */
static void
test_ring(void **state)
{
	static const char *const variant[] = { "group", "host-1ring",
					       "host-bcast" };
	static const char *const bytes[] = { "100", "70000" };
	struct tool_result *r = malloc(sizeof(*r));
	struct csv *c;
	int c_p, c_b, c_v, c_pl, c_pu, c_w, c_to, c_nv, c_o, c_r1, c_rb;

	(void)state;
	assert_non_null(r);
	c = run_csv(r, "ring.csv", "ring", "--ranks", "3", "--sizes",
		    "100,70000", "--reps", "2", "--warmup", "1", "--poll-us",
		    "20", NULL);
	if (c == NULL) {
		free(r);
		skip();
		return;
	}
	assert_non_null(strstr(r->out, "\n# ring "));
	c_p = col(c->hdr, c->nh, "ranks");
	c_b = col(c->hdr, c->nh, "bytes");
	c_v = col(c->hdr, c->nh, "variant");
	c_pl = col(c->hdr, c->nh, "poll_us");
	c_pu = col(c->hdr, c->nh, "t_pure_us");
	c_w = col(c->hdr, c->nh, "t_work_us");
	c_to = col(c->hdr, c->nh, "t_total_us");
	c_nv = col(c->hdr, c->nh, "t_nonov_us");
	c_o = col(c->hdr, c->nh, "overlap");
	c_r1 = col(c->hdr, c->nh, "ratio_total_1ring");
	c_rb = col(c->hdr, c->nh, "ratio_total_bcast");
	assert_true(c_p >= 0 && c_b >= 0 && c_v >= 0 && c_pl >= 0 &&
		    c_pu >= 0 && c_w >= 0 && c_to >= 0 && c_nv >= 0 &&
		    c_o >= 0 && c_r1 >= 0 && c_rb >= 0);
	assert_int_equal(c->rows, 6);
	for (int i = 0; i < 6; i++) {
		int v = i % 3, r1 = i - v + 1, rb = i - v + 2;

		assert_string_equal(c->f[i][c_p], "3");
		assert_string_equal(c->f[i][c_b], bytes[i / 3]);
		assert_string_equal(c->f[i][c_v], variant[v]);
		assert_string_equal(c->f[i][c_pl], v == 0 ? "" : "20");
		assert_string_equal(c->f[i][c_w], c->f[r1][c_pu]);
		assert_overlap(c->f[i][c_pu], c->f[i][c_w], c->f[i][c_to],
			       c->f[i][c_nv], c->f[i][c_o]);
		if (v == 1)
			assert_string_equal(c->f[i][c_r1], "");
		else
			assert_true(ratio3(c->f[i][c_r1], c->f[i][c_to],
					   c->f[r1][c_to]));
		if (v == 2)
			assert_string_equal(c->f[i][c_rb], "");
		else
			assert_true(ratio3(c->f[i][c_rb], c->f[i][c_to],
					   c->f[rb][c_to]));
	}
	setenv("SPINNIC_BENCH_CORRUPT", "1", 1);
	run(r, "ring", "--ranks", "2", "--sizes", "100", "--reps", "1",
	    "--warmup", "0", NULL);
	unsetenv("SPINNIC_BENCH_CORRUPT");
	assert_int_not_equal(r->status, 0);
	assert_non_null(strstr(r->err, "panel byte"));
	run(r, "ring", "--poll-us", "0", NULL);
	assert_int_not_equal(r->status, 0);
	free(c);
	free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_stencil),
		cmocka_unit_test(test_ring),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
