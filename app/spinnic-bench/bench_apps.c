/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench apps (paper 000 Fig. 16): the receive datatypes of real
 * applications (apps.c: COMB, FFT2D, LAMMPS, MILC, NAS MG and LU,
 * SPECFEM3D, SW4LITE, WRF), one message each, through every strategy
 * (bench_strat.c) on the preloaded NIC; a row per (type, strategy) with
 * the streaming-copy limit of the same bytes, the speedup over host-ddt,
 * γ (contiguous blocks per packet) and the argument bytes the strategy
 * puts in NIC memory (the figure's bar annotations).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>

#include "apps.h"
#include "bench_strat.h"

static struct {
	struct bench_strat_cfg nic;
	unsigned mask;
	const char *apps;  /* comma list, NULL: all */
	int list;
} cfg = { BENCH_STRAT_CFG_DEFAULT, BS_ALL, NULL, 0 };

static const struct bench_cmd_opt apps_opts[] = {
	{ "apps", 1, "comma list of catalog rows or applications (default "
		     "all; --list shows them)" },
	{ "list", 0, "print the catalog (row, application, bytes, blocks, "
		     "expression) and exit" },
	BENCH_STRAT_OPTS("all"),
	{ NULL, 0, NULL },
};

static int
apps_opt(const char *name, const char *arg)
{
	int rc;

	if (strcmp(name, "list") == 0) {
		cfg.list = 1;
		return 0;
	}
	if (strcmp(name, "apps") == 0) {
		if (bench_apps_check(name, arg) < 0)
			return -EINVAL;
		cfg.apps = arg;
		return 0;
	}
	rc = bench_strat_opt(&cfg.nic, &cfg.mask, name, arg);
	return rc > 0 ? -EINVAL : rc;
}

static int
apps_list(void)
{
	for (const struct bench_app *a = bench_apps; a->name != NULL; a++) {
		struct ddt_type *t;
		char *expr;
		int rc = bench_app_type(a, &t, &expr);

		if (rc < 0)
			return rc;
		printf("%-14s %-10s %8" PRId64 " B %7" PRId64 " blocks  %s\n"
		       "    %.160s%s\n", a->name, a->app, ddt_size(t),
		       ddt_count_blocks(t, 1), a->what, expr,
		       strlen(expr) > 160 ? "..." : "");
		free(expr);
		ddt_free(t);
	}
	return 0;
}

static int
one_app(const struct bench_opts *o, const struct bench_app *a,
	struct bench_nic *n, struct bench_table *tab, uint64_t *rng,
	int *mismatch_p)
{
	struct bench_strat_row rows[BS_COUNT];
	struct bench_case c;
	struct ddt_type *t;
	double host_g = 0;
	int64_t blocks;
	int rc;

	rc = bench_app_type(a, &t, NULL);
	if (rc < 0)
		return rc;
	rc = bench_case_init(&c, a->name, t, 1,
			     (cfg.mask >> BS_HOST_MPI) & 1, rng);
	ddt_free(t);
	if (rc == 0)
		rc = bench_nic_load(n, c.packed, (uint64_t)c.msg);
	if (rc == 0)
		rc = bench_case_limit(&c, o);
	for (int s = 0; s < BS_COUNT && rc == 0; s++) {
		rows[s].avail = -1;
		if (!((cfg.mask >> s) & 1))
			continue;
#ifndef SPINNIC_HAVE_MPI
		if (s == BS_HOST_MPI)
			continue; /* no MPI in this build: no row */
#endif
		rc = bench_strat_run(o, &cfg.nic, (enum bench_strat)s, &c, n,
				     &rows[s]);
	}
	if (rc < 0)
		goto out;
	if (rows[BS_HOST_DDT].avail == 1)
		host_g = bench_gbit_s(c.msg, rows[BS_HOST_DDT].best);
	blocks = ddt_count_blocks(c.t, c.count);
	for (int s = 0; s < BS_COUNT; s++) {
		const struct bench_strat_row *w = &rows[s];
		double g, lim = c.limit_gbit_s;

		if (w->avail < 0)
			continue;
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "type", a->name);
		bench_table_set_str(tab, "app", a->app);
		bench_table_set_str(tab, "strategy",
				    bench_strat_name((enum bench_strat)s));
		bench_table_set_int(tab, "bytes", c.msg);
		bench_table_set_int(tab, "block_bytes", c.block_bytes);
		bench_table_set_num(tab, "gamma", (double)blocks *
				    cfg.nic.payload / (double)c.msg);
		bench_table_set_int(tab, "pkts", bench_nic_npkts(n));
		bench_table_set_num(tab, "limit_gbit_s", lim);
		if (!w->avail) {
			bench_table_set_str(tab, "note", w->why);
			continue;
		}
		g = bench_gbit_s(c.msg, w->best);
		bench_table_set_num(tab, "gbit_s", g);
		bench_table_set_num(tab, "ratio", lim > 0 ? g / lim : 0);
		if (host_g > 0)
			bench_table_set_num(tab, "speedup", g / host_g);
		if (w->interval > 0)
			bench_table_set_int(tab, "interval", w->interval);
		if ((BS_NIC_MASK >> s) & 1)
			bench_table_set_int(tab, "nic_bytes", w->nic_bytes);
		if (w->verified >= 0)
			bench_table_set_str(tab, "verify",
					    w->verified ? "ok" : "FAIL");
		if (w->verified == 0)
			*mismatch_p = 1;
	}
out:
	bench_case_free(&c);
	return rc;
}

static int
apps_run(const struct bench_opts *o)
{
	struct bench_col cols[20];
	struct bench_table *tab = NULL;
	struct bench_nic *n = NULL;
	uint64_t rng = o->seed;
	int nc = 0, rc, mismatch = 0;

	if (cfg.list)
		return apps_list();
	if (o->type != NULL || o->bytes != 0) {
		bench_err("apps: --type and --bytes do not apply (the catalog "
			  "fixes each message; use unpack --type)");
		return -EINVAL;
	}
	cols[nc++] = (struct bench_col){ "type", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "app", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "strategy", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "block_bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "gamma", BENCH_COL_NUM, 1 };
	cols[nc++] = (struct bench_col){ "pkts", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "limit_gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "ratio", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "speedup", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "interval", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "nic_bytes", BENCH_COL_INT, 0 };
	if (o->verify)
		cols[nc++] = (struct bench_col){ "verify", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "note", BENCH_COL_STR, 0 };

	rc = bench_strat_env_init(cfg.mask, &cfg.nic, &n);
	if (rc < 0)
		return rc;
	tab = bench_table_create(cols, nc);
	if (tab == NULL)
		rc = -ENOMEM;
	for (const struct bench_app *a = bench_apps; rc == 0 && a->name;
	     a++)
		if (bench_apps_selected(cfg.apps, a))
			rc = one_app(o, a, n, tab, &rng, &mismatch);
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	bench_table_free(tab);
	bench_strat_env_fini(n);
	return bench_run_status(rc, mismatch);
}

const struct bench_cmd bench_apps_cmd = {
	.name = "apps",
	.summary = "application datatypes (COMB, FFT2D, LAMMPS, MILC, NAS, "
		   "SPECFEM3D, SW4LITE, WRF) per strategy (paper 000 Fig. 16)",
	.opts = apps_opts,
	.opt = apps_opt,
	.run = apps_run,
};
