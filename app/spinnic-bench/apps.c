/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application datatypes of paper 000 Fig. 16 (§5.3) as type expressions.
 *
 * Sources. Paper 000 §5.3 names the applications and what they exchange; its
 * reference [8] (Schneider, Gerstenberger, Hoefler, "Micro-applications for
 * communication data access patterns and MPI datatypes", EuroMPI 2012: the
 * ddtbench suite) defines the MILC, NAS, LAMMPS, SPECFEM3D, WRF and FFT2D
 * kernels by the MPI constructors they use; COMB [39] and SW4LITE [43] are
 * described by their public documentation (LLNL Comb: halo exchange of
 * n-dimensional arrays; SW4: 3-component fields u(c,i,j,k) in Fortran order
 * with a two-point ghost layer). Sizes are ours (one input per test, a
 * message of tens to hundreds of KiB, as in the figure's middle inputs);
 * the constructors and block structure are the applications'. The table in
 * doc/NOTES.md ("Benchmarks") lists the same.
 *
 * Indexed types (LAMMPS, SPECFEM3D) send a subset of the local points; the
 * subset is drawn here with a fixed seed, sorted, so that the catalog is the
 * same on every run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ddt.h>

#include "apps.h"
#include "bench.h"

/* ---- a growing string --------------------------------------------------- */

struct sb {
	char *s;
	size_t len, cap;
	int oom;
};

static void __attribute__((format(printf, 2, 3)))
sb_add(struct sb *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL,
			      b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->s != NULL && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap ? b->cap * 2 : 256) + (size_t)n;
			char *p = realloc(b->s, cap);

			if (p == NULL) {
				b->oom = 1;
				return;
			}
			b->s = p;
			b->cap = cap;
		}
	}
}

static char *
sb_done(struct sb *b)
{
	if (b->oom || b->s == NULL) {
		free(b->s);
		errno = ENOMEM;
		return NULL;
	}
	return b->s;
}

/* @p n sorted distinct indices out of [0, total): one per stride
 * total / n, at a pseudo-random place inside it (fixed seed). */
static void
sb_subset(struct sb *b, int64_t n, int64_t total, int64_t scale,
	  uint64_t seed)
{
	int64_t step = total / n;

	for (int64_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		sb_add(b, "%s%lld", i ? "," : "",
		       (long long)((i * step + (int64_t)(seed % (uint64_t)step)) *
				   scale));
	}
}

/* ---- COMB (LLNL Comb [39]) ------------------------------------------------ */

/* Halo exchange of a 3D mesh of doubles, 96^3 interior and a ghost layer
 * of 2, C order [z][y][x]: the x face (2 doubles per row: 16 B blocks) and
 * the y face (2 rows of 96 doubles per plane). Comb builds these faces with
 * MPI_Type_create_subarray. */
static char *
comb_x(void)
{
	struct sb b = { 0 };

	sb_add(&b, "subarray(100,100,100;96,96,2;2,2,2;C)[double]");
	return sb_done(&b);
}

static char *
comb_y(void)
{
	struct sb b = { 0 };

	sb_add(&b, "subarray(100,100,100;96,2,96;2,2,2;C)[double]");
	return sb_done(&b);
}

/* ---- FFT2D (Hoefler and Gottlieb [9]; ddtbench FFT2D) ---------------------- */

/* Row-column 2D FFT of an N x N double-complex matrix on P ranks (N = 1024,
 * P = 8): the transpose is the receive type; the n = N / P rows from one
 * peer land as n columns: a column (vector(n,1,N)) resized to one element
 * so that n of them follow each other (16 B blocks). */
static char *
fft2d(void)
{
	struct sb b = { 0 };

	sb_add(&b, "contig(128)[resized(0,16)[vector(128,1,1024)"
		   "[double_complex]]]");
	return sb_done(&b);
}

/* ---- LAMMPS (ddtbench LAMMPS_atomic, LAMMPS_full) ---------------------------- */

/* The atoms to send are a list of indices into per-property arrays of
 * 16384 local atoms; each property is an indexed type over its array, the
 * message a struct of them: atomic style x[3] (double), tag, type, mask
 * (int32); full (molecular) style adds q (double) and molecule (int32). */
#define LMP_LOCAL 16384
#define LMP_SEND 2048

static char *
lammps(int full)
{
	static const struct { int comps; const char *base; int size; } p[] = {
		{ 3, "double", 8 }, { 1, "int32", 4 }, { 1, "int32", 4 },
		{ 1, "int32", 4 }, { 1, "double", 8 }, { 1, "int32", 4 },
	};
	int np = full ? 6 : 4;
	struct sb b = { 0 };
	int64_t off = 0;

	sb_add(&b, "struct(");
	for (int i = 0; i < np; i++)
		sb_add(&b, "%s1", i ? "," : "");
	sb_add(&b, ";");
	for (int i = 0; i < np; i++) {
		sb_add(&b, "%s%lld", i ? "," : "", (long long)off);
		off += (int64_t)LMP_LOCAL * p[i].comps * p[i].size;
	}
	sb_add(&b, ")[");
	for (int i = 0; i < np; i++) {
		sb_add(&b, "%sindexed_block(%d;", i ? "," : "", p[i].comps);
		sb_subset(&b, LMP_SEND, LMP_LOCAL, p[i].comps,
			  0x9e3779b97f4a7c15ull);
		sb_add(&b, ")[%s]", p[i].base);
	}
	sb_add(&b, "]");
	return sb_done(&b);
}

static char *
lammps_atomic(void)
{
	return lammps(0);
}

static char *
lammps_full(void)
{
	return lammps(1);
}

/* ---- MILC (ddtbench MILC_su3_zdown) ------------------------------------------ */

/* 4D lattice 16^4 of su3 vectors (3 complex floats, 24 B), even/odd
 * checkerboarded: the z-down halo is, per t, half an x-y plane of sites
 * (vector(16, 16*16/2, 16*16*16/2) of su3 vectors), for both parities
 * (hvector of 2 at half the lattice). */
static char *
milc_zdown(void)
{
	struct sb b = { 0 };

	sb_add(&b, "hvector(2,1,%d)[vector(16,128,2048)[contig(6)[float]]]",
	       24 * 16 * 16 * 16 * 16 / 2);
	return sb_done(&b);
}

/* ---- NAS MG, NAS LU (NPB [15]; ddtbench NAS_MG, NAS_LU) ------------------------ */

/* MG: faces of a 130^3 double grid (128^3 and one ghost layer), x fastest:
 * the x face is nested vectors of single doubles, the y face one row of
 * 130 doubles per plane. */
static char *
nas_mg_x(void)
{
	struct sb b = { 0 };

	sb_add(&b, "hvector(128,1,%d)[vector(128,1,130)[double]]",
	       130 * 130 * 8);
	return sb_done(&b);
}

static char *
nas_mg_y(void)
{
	struct sb b = { 0 };

	sb_add(&b, "vector(128,130,%d)[double]", 130 * 130);
	return sb_done(&b);
}

/* LU: u(5, nx+2, ny+2, nz) doubles (paper 000 Fig. 3), 64^3 points per
 * rank: the x face (fixed j) is one line of nx 5-double points per plane,
 * the y face (fixed i) ny single 5-double points per plane. */
#define LU_N 64
#define LU_PLANE (5 * (LU_N + 2) * (LU_N + 2))

static char *
nas_lu_x(void)
{
	struct sb b = { 0 };

	sb_add(&b, "vector(%d,%d,%d)[double]", LU_N, 5 * LU_N, LU_PLANE);
	return sb_done(&b);
}

static char *
nas_lu_y(void)
{
	struct sb b = { 0 };

	sb_add(&b, "hvector(%d,1,%d)[vector(%d,1,%d)[contig(5)[double]]]",
	       LU_N, LU_PLANE * 8, LU_N, LU_N + 2);
	return sb_done(&b);
}

/* ---- SPECFEM3D (ddtbench SPECFEM3D_oc, SPECFEM3D_cm) ------------------------- */

/* Mesh points shared with a neighbour, by index: outer core (oc) exchanges
 * one float per point (4 B blocks, γ = 512 in a 2 KiB packet as in the
 * paper), crust-mantle (cm) a 3-float vector per point. */
static char *
specfem3d(int comps, int64_t send, int64_t local)
{
	struct sb b = { 0 };

	sb_add(&b, "indexed_block(%d;", comps);
	sb_subset(&b, send, local, comps, 0x2545f4914f6cdd1dull);
	sb_add(&b, ")[float]");
	return sb_done(&b);
}

static char *
specfem3d_oc(void)
{
	return specfem3d(1, 32768, 262144);
}

static char *
specfem3d_cm(void)
{
	return specfem3d(3, 16384, 131072);
}

/* ---- SW4LITE [43] ------------------------------------------------------------- */

/* u(c, i, j, k), c = 3 components, 64^3 points and 2 ghost points on each
 * side (68^3), Fortran order: the x exchange sends 2 i-planes (6-double
 * blocks), the y exchange 2 j-planes (rows of 3 x 68 doubles). */
static char *
sw4_x(void)
{
	struct sb b = { 0 };

	sb_add(&b, "subarray(3,68,68,68;3,2,68,68;0,2,0,0;F)[double]");
	return sb_done(&b);
}

static char *
sw4_y(void)
{
	struct sb b = { 0 };

	sb_add(&b, "subarray(3,68,68,68;3,68,2,68;0,0,2,0;F)[double]");
	return sb_done(&b);
}

/* ---- WRF (ddtbench WRF_x_vec, WRF_y_vec) ---------------------------------------- */

/* A struct of the halo strips of several fields (2 2D and 4 3D float
 * arrays, i x k x j = 68 x 32 x 68, i fastest): 2D strips are vectors,
 * 3D strips an hvector over j of vectors over k; the x exchange takes 3 i
 * points (12 B blocks), the y exchange 3 j rows (64-float blocks). */
static char *
wrf(int xdir)
{
	const int d1 = 68, d2 = 32, d3 = 68, n2d = 2, n3d = 4;
	int s1 = xdir ? 3 : 64, s3 = xdir ? 64 : 3;
	int64_t a2 = (int64_t)d1 * d3 * 4, a3 = (int64_t)d1 * d2 * d3 * 4;
	int64_t off = 0;
	struct sb b = { 0 };

	sb_add(&b, "struct(");
	for (int i = 0; i < n2d + n3d; i++)
		sb_add(&b, "%s1", i ? "," : "");
	sb_add(&b, ";");
	for (int i = 0; i < n2d + n3d; i++) {
		sb_add(&b, "%s%lld", i ? "," : "", (long long)off);
		off += i < n2d ? a2 : a3;
	}
	sb_add(&b, ")[");
	for (int i = 0; i < n2d + n3d; i++) {
		if (i < n2d)
			sb_add(&b, "%svector(%d,%d,%d)[float]", i ? "," : "",
			       s3, s1, d1);
		else
			sb_add(&b, ",hvector(%d,1,%d)[vector(%d,%d,%d)[float]]",
			       s3, d1 * d2 * 4, d2, s1, d1);
	}
	sb_add(&b, "]");
	return sb_done(&b);
}

static char *
wrf_x(void)
{
	return wrf(1);
}

static char *
wrf_y(void)
{
	return wrf(0);
}

/* ---- the catalog ------------------------------------------------------------ */

const struct bench_app bench_apps[] = {
	{ "comb_x", "COMB", "3D halo, x face (subarray)", comb_x },
	{ "comb_y", "COMB", "3D halo, y face (subarray)", comb_y },
	{ "fft2d", "FFT2D", "matrix transpose (resized column vectors)",
	  fft2d },
	{ "lammps_atomic", "LAMMPS", "atom properties by index (struct of "
				     "indexed_block)", lammps_atomic },
	{ "lammps_full", "LAMMPS", "full-style atom properties by index",
	  lammps_full },
	{ "milc_zdown", "MILC", "4D lattice z-down halo (nested vectors)",
	  milc_zdown },
	{ "nas_mg_x", "NAS_MG", "3D face, x (nested vectors of doubles)",
	  nas_mg_x },
	{ "nas_mg_y", "NAS_MG", "3D face, y (vector of rows)", nas_mg_y },
	{ "nas_lu_x", "NAS_LU", "5-double points, x face (vector of lines)",
	  nas_lu_x },
	{ "nas_lu_y", "NAS_LU", "5-double points, y face (vector of points)",
	  nas_lu_y },
	{ "specfem3d_oc", "SPECFEM3D", "outer core points by index (4 B)",
	  specfem3d_oc },
	{ "specfem3d_cm", "SPECFEM3D", "crust-mantle vectors by index (12 B)",
	  specfem3d_cm },
	{ "sw4_x", "SW4LITE", "3-component field, x ghost planes (subarray)",
	  sw4_x },
	{ "sw4_y", "SW4LITE", "3-component field, y ghost planes (subarray)",
	  sw4_y },
	{ "wrf_x", "WRF", "struct of field halo strips, x", wrf_x },
	{ "wrf_y", "WRF", "struct of field halo strips, y", wrf_y },
	{ NULL, NULL, NULL, NULL },
};

const struct bench_app *
bench_app_find(const char *key, const struct bench_app *prev)
{
	const struct bench_app *a = prev != NULL ? prev + 1 : bench_apps;

	for (; a->name != NULL; a++)
		if (strcasecmp(a->name, key) == 0 ||
		    strcasecmp(a->app, key) == 0)
			return a;
	return NULL;
}

int
bench_apps_check(const char *opt, const char *list)
{
	char buf[512], *save = NULL, *tok;
	int n = 0;

	if (strlen(list) >= sizeof(buf)) {
		bench_err("bad --%s: list too long", opt);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save), n++)
		if (bench_app_find(tok, NULL) == NULL) {
			bench_err("bad --%s: no catalog row or application "
				  "'%s' (see apps --list)", opt, tok);
			return -EINVAL;
		}
	if (n == 0) {
		bench_err("bad --%s '%s': empty", opt, list);
		return -EINVAL;
	}
	return 0;
}

int
bench_apps_selected(const char *list, const struct bench_app *a)
{
	char buf[512], *save = NULL, *tok;

	if (list == NULL)
		return 1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save))
		for (const struct bench_app *f = bench_app_find(tok, NULL);
		     f != NULL; f = bench_app_find(tok, f))
			if (f == a)
				return 1;
	return 0;
}

int
bench_app_type(const struct bench_app *a, struct ddt_type **t_p,
	       char **expr_p)
{
	const char *err = NULL;
	char *expr = a->expr();
	struct ddt_type *t;
	int rc;

	*t_p = NULL;
	if (expr_p != NULL)
		*expr_p = NULL;
	if (expr == NULL) {
		bench_err("%s: out of memory", a->name);
		return -ENOMEM;
	}
	t = ddt_parse(expr, &err);
	if (t == NULL) {
		bench_err("internal error: %s does not parse: %s", a->name,
			  err ? err : ddt_strerror(errno));
		free(expr);
		return -EINVAL;
	}
	rc = ddt_commit(t);
	if (rc < 0) {
		bench_err("%s: commit: %s", a->name, ddt_strerror(rc));
		ddt_free(t);
		free(expr);
		return rc;
	}
	*t_p = t;
	if (expr_p != NULL)
		*expr_p = expr;
	else
		free(expr);
	return 0;
}
