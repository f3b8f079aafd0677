/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench ckpt (paper 000 Fig. 18, 13b, 13c): what checkpoints cost.
 * For each application datatype (apps.c; or one --type) and each
 * checkpoint interval Δr around the one paper 000's model picks
 * (ddt_ckpt_select_interval; --factors scales it):
 *
 *   create_us   host time to build the ro-cp / rw-cp argument block (the
 *               serialized type and the checkpoints, spin_ddt_general_args)
 *   nic_bytes   that block: the NIC memory the strategy occupies
 *   host_us     a host receive of the same message: contiguous copy of the
 *               packets, then ddt_unpack (host-ddt)
 *   nic_us      the strategy receiving it on the preloaded NIC at that Δr
 *   create_per_unpack  create_us / host_us
 *   reuses      receives of the type that pay back the creation:
 *               ceil(create / (host - nic)); empty when the NIC receive is
 *               not faster than the host one (never amortized)
 *
 * After the table, one line per strategy: the share of types amortized in
 * at most 2 reuses at the model's Δr (paper 000: 75% within 4; DESIGN §9's
 * target: 75% within 2).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ddt.h>

#include "apps.h"
#include "bench_strat.h"

#define CKPT_MAX_FACTORS 16
#define CKPT_REUSE_TARGET 2

static struct {
	struct bench_strat_cfg nic;
	unsigned mask;
	const char *apps;
	double factors[CKPT_MAX_FACTORS];
	int nfactors;
} cfg = {
	BENCH_STRAT_CFG_DEFAULT, 1u << BS_RW_CP, NULL,
	{ 0.25, 0.5, 1, 2, 4 }, 5,
};

static const struct bench_cmd_opt ckpt_opts[] = {
	{ "apps", 1, "comma list of catalog rows or applications (default "
		     "all; see apps --list)" },
	{ "factors", 1, "comma list of multiples of the model's Δr "
			"(default 0.25,0.5,1,2,4)" },
	{ "payload", 1, "payload bytes per packet (default 2048)" },
	{ "mode", 1, BENCH_STRAT_MODE_HELP },
	{ "hpus", 1, "HPUs of the NIC, an input of the model (default 1)" },
	{ "strategies", 1, "ro-cp and/or rw-cp (default rw-cp)" },
	{ NULL, 0, NULL },
};

static int
ckpt_opt(const char *name, const char *arg)
{
	int rc;

	if (strcmp(name, "apps") == 0) {
		if (bench_apps_check(name, arg) < 0)
			return -EINVAL;
		cfg.apps = arg;
		return 0;
	}
	if (strcmp(name, "factors") == 0) {
		char buf[256], *save = NULL, *tok, *end;

		cfg.nfactors = 0;
		if (strlen(arg) >= sizeof(buf))
			goto bad;
		snprintf(buf, sizeof(buf), "%s", arg);
		for (tok = strtok_r(buf, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			double f = strtod(tok, &end);

			if (*end != '\0' || end == tok || !(f > 0) ||
			    f > 1e6 || cfg.nfactors == CKPT_MAX_FACTORS)
				goto bad;
			cfg.factors[cfg.nfactors++] = f;
		}
		if (cfg.nfactors > 0)
			return 0;
bad:
		bench_err("bad --factors '%s': expected a comma list of at "
			  "most %d numbers in (0, 1e6]", arg,
			  CKPT_MAX_FACTORS);
		return -EINVAL;
	}
	rc = bench_strat_opt(&cfg.nic, &cfg.mask, name, arg);
	if (rc == 0 && strcmp(name, "strategies") == 0 &&
	    (cfg.mask & ~((1u << BS_RO_CP) | (1u << BS_RW_CP))) != 0) {
		bench_err("bad --strategies '%s': ckpt measures ro-cp and "
			  "rw-cp only", arg);
		return -EINVAL;
	}
	return rc > 0 ? -EINVAL : rc;
}

struct tally {
	int types, amortized, cheap;
};

/* Δr for factor f of the model's @p dr: whole packets, at least one, at
 * most the message rounded up to packets. */
static int64_t
scaled_interval(int64_t dr, double f, const struct bench_case *c)
{
	int64_t k = cfg.nic.payload;
	int64_t max = (c->msg + k - 1) / k * k;
	int64_t v = (int64_t)llround((double)dr * f / (double)k) * k;

	if (v < k)
		v = k;
	return v > max ? max : v;
}

static int
one_case(const struct bench_opts *o, struct bench_case *c,
	 struct bench_nic *n, struct bench_table *tab,
	 struct tally *tl, int *mismatch_p)
{
	struct bench_strat_row host;
	struct ddt_ckpt_set *cs;
	int64_t model, prev;
	double host_s;
	int rc;

	rc = bench_nic_load(n, c->packed, (uint64_t)c->msg);
	if (rc == 0)
		rc = bench_case_limit(c, o);
	if (rc == 0)
		rc = bench_strat_run(o, &cfg.nic, BS_HOST_DDT, c, n, &host);
	if (rc < 0)
		return rc;
	if (host.verified == 0)
		*mismatch_p = 1;
	host_s = host.best;
	cs = ddt_ckpt_create(c->t, c->count, c->msg);
	if (cs == NULL) {
		bench_err("%s: ddt_ckpt_create: %s", c->label,
			  ddt_strerror(errno));
		return -ENOMEM;
	}
	model = bench_strat_model_interval(&cfg.nic, c, ddt_ckpt_size(cs));
	ddt_ckpt_free(cs);
	for (int s = BS_RO_CP; s <= BS_RW_CP; s++) {
		if (!((cfg.mask >> s) & 1))
			continue;
		if (model <= 0) {
			rc = bench_table_row(tab);
			if (rc < 0)
				return rc;
			bench_table_set_str(tab, "type", c->label);
			bench_table_set_str(tab, "strategy",
					    bench_strat_name((enum bench_strat)s));
			bench_table_set_str(tab, "note", "n/a: no checkpoint "
					    "interval fits the NIC memory");
			continue;
		}
		tl[s].types++;
		prev = 0;
		for (int i = 0; i < cfg.nfactors; i++) {
			struct bench_strat_cfg nic = cfg.nic;
			struct bench_strat_row w;
			int64_t dr = scaled_interval(model, cfg.factors[i], c);
			int64_t len = 0;
			double create = -1, saving;

			if (dr == prev && cfg.factors[i] != 1.0)
				continue; /* the same Δr as the last factor */
			prev = dr;
			for (int r = 0; r < (o->reps < 5 ? o->reps : 5); r++) {
				double t = bench_strat_ckpt_build(
					(enum bench_strat)s, &nic, c, dr, &len);

				if (t < 0)
					return (int)t;
				if (create < 0 || t < create)
					create = t;
			}
			nic.interval = dr;
			rc = bench_strat_run(o, &nic, (enum bench_strat)s, c, n,
					     &w);
			if (rc < 0)
				return rc;
			rc = bench_table_row(tab);
			if (rc < 0)
				return rc;
			bench_table_set_str(tab, "type", c->label);
			bench_table_set_str(tab, "strategy",
					    bench_strat_name((enum bench_strat)s));
			bench_table_set_int(tab, "bytes", c->msg);
			bench_table_set_int(tab, "hpus", nic.hpus);
			bench_table_set_num(tab, "factor", cfg.factors[i]);
			bench_table_set_int(tab, "interval", w.interval > 0 ?
					    w.interval : dr);
			bench_table_set_int(tab, "ckpts",
					    (c->msg + dr - 1) / dr);
			bench_table_set_int(tab, "nic_bytes", len);
			bench_table_set_num(tab, "create_us", create * 1e6);
			bench_table_set_num(tab, "host_us", host_s * 1e6);
			if (!w.avail) {
				bench_table_set_str(tab, "note", w.why);
				continue;
			}
			bench_table_set_num(tab, "nic_us", w.best * 1e6);
			bench_table_set_num(tab, "create_per_unpack",
					    host_s > 0 ? create / host_s : 0);
			saving = host_s - w.best;
			if (saving > 0)
				bench_table_set_int(tab, "reuses", (int64_t)ceil(
						    create / saving));
			else
				bench_table_set_str(tab, "note", "never "
						    "amortized: the NIC receive "
						    "is not faster");
			if (w.verified >= 0)
				bench_table_set_str(tab, "verify",
						    w.verified ? "ok" : "FAIL");
			if (w.verified == 0)
				*mismatch_p = 1;
			if (cfg.factors[i] == 1.0) {
				if (saving > 0 && ceil(create / saving) <=
				    CKPT_REUSE_TARGET)
					tl[s].amortized++;
				if (host_s > 0 && create / host_s <=
				    CKPT_REUSE_TARGET)
					tl[s].cheap++;
			}
		}
	}
	return 0;
}

static int
ckpt_run(const struct bench_opts *o)
{
	struct tally tl[BS_COUNT];
	struct bench_col cols[20];
	struct bench_table *tab = NULL;
	struct bench_nic *n = NULL;
	uint64_t rng = o->seed;
	int nc = 0, rc, mismatch = 0, has_one = 0;

	memset(tl, 0, sizeof(tl));
	for (int i = 0; i < cfg.nfactors; i++)
		has_one |= cfg.factors[i] == 1.0;
	if (o->bytes != 0 && o->type == NULL) {
		bench_err("ckpt: --bytes applies to --type only");
		return -EINVAL;
	}
	cols[nc++] = (struct bench_col){ "type", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "strategy", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "hpus", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "factor", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "interval", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "ckpts", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "nic_bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "create_us", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "host_us", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "nic_us", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "create_per_unpack", BENCH_COL_NUM,
					 3 };
	cols[nc++] = (struct bench_col){ "reuses", BENCH_COL_INT, 0 };
	if (o->verify)
		cols[nc++] = (struct bench_col){ "verify", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "note", BENCH_COL_STR, 0 };

	rc = bench_strat_env_init(cfg.mask, &cfg.nic, &n);
	if (rc < 0)
		return rc;
	tab = bench_table_create(cols, nc);
	if (tab == NULL)
		rc = -ENOMEM;
	if (rc == 0 && o->type != NULL) {
		struct bench_case c;
		struct ddt_type *t;
		int64_t count, bb;

		rc = bench_type_from_expr(o->type, o->bytes ? o->bytes :
					  1 << 20, &t, &count, &bb);
		if (rc == 0) {
			rc = bench_case_init(&c, o->type, t, count, 0, &rng);
			ddt_free(t);
			if (rc == 0)
				rc = one_case(o, &c, n, tab, tl, &mismatch);
			bench_case_free(&c);
		}
	}
	for (const struct bench_app *a = bench_apps;
	     rc == 0 && o->type == NULL && a->name != NULL; a++) {
		struct bench_case c;
		struct ddt_type *t;

		if (!bench_apps_selected(cfg.apps, a))
			continue;
		rc = bench_app_type(a, &t, NULL);
		if (rc < 0)
			break;
		rc = bench_case_init(&c, a->name, t, 1, 0, &rng);
		ddt_free(t);
		if (rc == 0)
			rc = one_case(o, &c, n, tab, tl, &mismatch);
		bench_case_free(&c);
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	for (int s = BS_RO_CP; rc == 0 && s <= BS_RW_CP; s++) {
		if (!((cfg.mask >> s) & 1) || tl[s].types == 0)
			continue;
		if (!has_one) {
			printf("%s: no factor 1 in --factors: no summary at "
			       "the model's interval\n",
			       bench_strat_name((enum bench_strat)s));
			continue;
		}
		printf("%s at the model's interval: amortized in <= %d "
		       "reuses: %d of %d types (%.0f%%, target 75%%); "
		       "creation <= %d host unpacks: %d of %d (%.0f%%)\n",
		       bench_strat_name((enum bench_strat)s), CKPT_REUSE_TARGET,
		       tl[s].amortized, tl[s].types,
		       100.0 * tl[s].amortized / tl[s].types,
		       CKPT_REUSE_TARGET, tl[s].cheap, tl[s].types,
		       100.0 * tl[s].cheap / tl[s].types);
	}
	bench_table_free(tab);
	bench_strat_env_fini(n);
	return bench_run_status(rc, mismatch);
}

const struct bench_cmd bench_ckpt_cmd = {
	.name = "ckpt",
	.summary = "checkpoint creation cost, NIC memory and reuses to "
		   "amortize, per Δr and application type (paper 000 "
		   "Fig. 18, 13b/c)",
	.opts = ckpt_opts,
	.opt = ckpt_opt,
	.run = ckpt_run,
};
