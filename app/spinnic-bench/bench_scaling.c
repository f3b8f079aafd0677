/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench scaling (paper 000 Fig. 13a): unpack throughput of the NIC
 * strategies as the number of HPUs grows. The messages are those of unpack
 * (vector blocks, stride twice the block; or one --type), built once; for
 * each HPU count a preloaded NIC with that many HPUs (HPU 0 on the main
 * thread, the others on their own threads) receives every message through
 * every strategy, its checkpoint interval chosen by the model for that
 * count. Each row carries the copy limit of the same bytes and the speedup
 * over the same strategy on 1 HPU (when 1 is in the list). The `floor`
 * row (bench_floor.h) runs at each count too, on as many threads placed
 * as the HPU threads: the bare copy of the same pieces at that
 * parallelism, what the cores and memory allow; `floor_ratio` is a NIC
 * row over it (the runtime's share of the parallel copy), and the floor's
 * own speedup shows what the machine gave that moment (on a shared VM the
 * second CPU comes and goes).
 *
 * HPU threads share the machine's cores with the main thread: past the
 * number of cores the HPUs time-share them, and the curve flattens for
 * that reason, not the strategy's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ddt.h>

#include "bench_strat.h"

#define SCALING_BYTES_DEFAULT (1ll << 20)
#define SCALING_MAX_COUNTS 32

static struct {
	struct bench_strat_cfg nic;
	unsigned mask;
	int64_t block_min, block_max;
	unsigned counts[SCALING_MAX_COUNTS];
	int ncounts;       /* 0: the default list */
} cfg = {
	BENCH_STRAT_CFG_DEFAULT,
	(1u << BS_SPECIALIZED) | (1u << BS_HPU_LOCAL) | (1u << BS_RO_CP) |
		(1u << BS_RW_CP) | (1u << BS_FLOOR),
	64, 4096, { 0 }, 0,
};

static const struct bench_cmd_opt scaling_opts[] = {
	{ "hpus", 1, "comma list of HPU counts (default 1, 2, 4, ... up to "
		     "and including the online cores)" },
	{ "blocks", 1, "MIN:MAX vector block bytes, powers of two "
		       "(default 64:4096)" },
	{ "payload", 1, "payload bytes per packet (default 2048)" },
	{ "mode", 1, BENCH_STRAT_MODE_HELP },
	{ "interval", 1, "checkpoint interval of ro-cp and rw-cp in bytes "
			 "(default: paper 000's model for each HPU count)" },
	{ "prog", 1, "1 (default): ddt_general arguments carry the type's "
		     "compiled form; 0: segments and checkpoints only" },
	{ "strategies", 1, "comma list of strategies (default specialized,"
			   "hpu-local,ro-cp,rw-cp,floor; host ones run on 0 "
			   "HPUs and are listed once, floor on as many "
			   "threads as HPUs)" },
	{ NULL, 0, NULL },
};

static int
scaling_opt(const char *name, const char *arg)
{
	long long lo, hi;
	char tail;

	if (strcmp(name, "hpus") == 0) {
		char buf[256], *save = NULL, *tok;

		cfg.ncounts = 0;
		if (strlen(arg) >= sizeof(buf))
			goto bad_hpus;
		snprintf(buf, sizeof(buf), "%s", arg);
		for (tok = strtok_r(buf, ",", &save); tok != NULL;
		     tok = strtok_r(NULL, ",", &save)) {
			if (sscanf(tok, "%lld%c", &lo, &tail) != 1 || lo < 1 ||
			    lo > SPIN_RT_HPUS_MAX ||
			    cfg.ncounts == SCALING_MAX_COUNTS)
				goto bad_hpus;
			cfg.counts[cfg.ncounts++] = (unsigned)lo;
		}
		if (cfg.ncounts == 0)
			goto bad_hpus;
		return 0;
bad_hpus:
		bench_err("bad --hpus '%s': expected a comma list of at most %d "
			  "counts in [1, %d]", arg, SCALING_MAX_COUNTS,
			  SPIN_RT_HPUS_MAX);
		return -EINVAL;
	}
	if (strcmp(name, "blocks") == 0) {
		if (sscanf(arg, "%lld:%lld%c", &lo, &hi, &tail) != 2 ||
		    lo < 1 || hi < lo || hi > (1ll << 30)) {
			bench_err("bad --blocks '%s': expected MIN:MAX with "
				  "1 <= MIN <= MAX", arg);
			return -EINVAL;
		}
		cfg.block_min = lo;
		cfg.block_max = hi;
		return 0;
	}
	lo = bench_strat_opt(&cfg.nic, &cfg.mask, name, arg);
	return lo > 0 ? -EINVAL : (int)lo;
}

/* The default counts: 1, 2, 4, ... below the online cores, then them. */
static void
default_counts(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned max = cores < 1 ? 1 : cores > SPIN_RT_HPUS_MAX ?
		SPIN_RT_HPUS_MAX : (unsigned)cores;

	cfg.ncounts = 0;
	for (unsigned h = 1; h < max && cfg.ncounts < SCALING_MAX_COUNTS - 1;
	     h *= 2)
		cfg.counts[cfg.ncounts++] = h;
	cfg.counts[cfg.ncounts++] = max;
}

struct scase {
	struct bench_case c;
	double g1[BS_COUNT];  /* Gbit/s on 1 HPU, 0: not measured */
};

static int
add_rows(const struct bench_opts *o, struct bench_table *tab,
	 struct scase *sc, unsigned h, const struct bench_strat_row *rows,
	 int *mismatch_p)
{
	const struct bench_case *c = &sc->c;
	const struct bench_strat_row *fl = &rows[BS_FLOOR];
	double gf = fl->avail > 0 ? bench_gbit_s(c->msg, fl->best) : 0;

	for (int s = 0; s < BS_COUNT; s++) {
		const struct bench_strat_row *w = &rows[s];
		/* rows of the HPU count: the NIC's and the floor's */
		bool per_h = ((BS_NIC_MASK | (1u << BS_FLOOR)) >> s) & 1;
		double g;
		int rc;

		if (w->avail < 0)
			continue;
		rc = bench_table_row(tab);
		if (rc < 0)
			return rc;
		bench_table_set_str(tab, "strategy",
				    bench_strat_name((enum bench_strat)s));
		if (o->type != NULL)
			bench_table_set_str(tab, "type", c->label);
		bench_table_set_int(tab, "block_bytes", c->block_bytes);
		bench_table_set_int(tab, "bytes", c->msg);
		bench_table_set_int(tab, "hpus", per_h ? h : 0);
		bench_table_set_num(tab, "limit_gbit_s", c->limit_gbit_s);
		if (!w->avail) {
			bench_table_set_str(tab, "note", w->why);
			continue;
		}
		g = bench_gbit_s(c->msg, w->best);
		if (h == 1)
			sc->g1[s] = g;
		bench_table_set_num(tab, "gbit_s", g);
		bench_table_set_num(tab, "ratio", c->limit_gbit_s > 0 ?
				    g / c->limit_gbit_s : 0);
		if (sc->g1[s] > 0 && per_h)
			bench_table_set_num(tab, "speedup_vs_1", g / sc->g1[s]);
		if (gf > 0 && ((BS_NIC_MASK >> s) & 1))
			bench_table_set_num(tab, "floor_ratio", g / gf);
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
	return 0;
}

static int
scaling_run(const struct bench_opts *o)
{
	int64_t bytes = o->bytes ? o->bytes : SCALING_BYTES_DEFAULT;
	struct bench_col cols[16];
	struct bench_table *tab = NULL;
	struct scase *cases = NULL;
	uint64_t rng = o->seed;
	int nc = 0, ncase = 0, rc, mismatch = 0;

	if (cfg.ncounts == 0)
		default_counts();
	cols[nc++] = (struct bench_col){ "strategy", BENCH_COL_STR, 0 };
	if (o->type != NULL)
		cols[nc++] = (struct bench_col){ "type", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "block_bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "bytes", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "hpus", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "limit_gbit_s", BENCH_COL_NUM, 2 };
	cols[nc++] = (struct bench_col){ "ratio", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "speedup_vs_1", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "floor_ratio", BENCH_COL_NUM, 3 };
	cols[nc++] = (struct bench_col){ "interval", BENCH_COL_INT, 0 };
	cols[nc++] = (struct bench_col){ "nic_bytes", BENCH_COL_INT, 0 };
	if (o->verify)
		cols[nc++] = (struct bench_col){ "verify", BENCH_COL_STR, 0 };
	cols[nc++] = (struct bench_col){ "note", BENCH_COL_STR, 0 };

	rc = bench_strat_env_init(cfg.mask, NULL, NULL);
	if (rc < 0)
		return rc;
	tab = bench_table_create(cols, nc);
	cases = calloc(64, sizeof(*cases));
	if (tab == NULL || cases == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* the messages, once: type, buffers, reference, copy limit */
	if (o->type != NULL) {
		struct ddt_type *t;
		int64_t count, bb;

		rc = bench_type_from_expr(o->type, bytes, &t, &count, &bb);
		if (rc == 0) {
			rc = bench_case_init(&cases[0].c, o->type, t, count,
					     (cfg.mask >> BS_HOST_MPI) & 1,
					     &rng);
			ddt_free(t);
			ncase = 1;
		}
	}
	for (int64_t b = cfg.block_min; o->type == NULL && rc == 0 &&
	     b <= cfg.block_max && b <= bytes && ncase < 64; b *= 2) {
		struct ddt_type *t = ddt_vector(bytes / b, b, 2 * b,
						ddt_base(DDT_BYTE));
		char label[32];

		if (t == NULL) {
			bench_err("cannot build a vector of %" PRId64
				  " B blocks: %s", b, ddt_strerror(errno));
			rc = -ENOMEM;
			break;
		}
		snprintf(label, sizeof(label), "vector-%" PRId64, b);
		rc = bench_case_init(&cases[ncase].c, label, t, 1,
				     (cfg.mask >> BS_HOST_MPI) & 1, &rng);
		ddt_free(t);
		ncase++;
	}
	for (int i = 0; i < ncase && rc == 0; i++)
		rc = bench_case_limit(&cases[i].c, o);
	/* host strategies do not depend on the HPUs: once, on 1 HPU */
	for (int k = 0; k < cfg.ncounts && rc == 0; k++) {
		struct bench_strat_cfg nic = cfg.nic;
		unsigned mask = cfg.mask;
		struct bench_nic *n;

		nic.hpus = cfg.counts[k];
		if (k > 0)
			mask &= BS_NIC_MASK | (1u << BS_FLOOR);
		n = bench_nic_create(nic.hpus, nic.payload);
		if (n == NULL) {
			rc = errno ? -errno : -EIO;
			break;
		}
		for (int i = 0; i < ncase && rc == 0; i++) {
			struct bench_strat_row rows[BS_COUNT];
			struct bench_case *c = &cases[i].c;

			rc = bench_nic_load(n, c->packed, (uint64_t)c->msg);
			for (int s = 0; s < BS_COUNT && rc == 0; s++) {
				rows[s].avail = -1;
				if (!((mask >> s) & 1))
					continue;
#ifndef SPINNIC_HAVE_MPI
				if (s == BS_HOST_MPI)
					continue;
#endif
				rc = bench_strat_run(o, &nic,
						     (enum bench_strat)s, c, n,
						     &rows[s]);
			}
			if (rc == 0)
				rc = add_rows(o, tab, &cases[i], nic.hpus,
					      rows, &mismatch);
		}
		bench_nic_destroy(n);
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
out:
	for (int i = 0; cases != NULL && i < ncase; i++)
		bench_case_free(&cases[i].c);
	free(cases);
	bench_table_free(tab);
	bench_strat_env_fini(NULL);
	return bench_run_status(rc, mismatch);
}

const struct bench_cmd bench_scaling_cmd = {
	.name = "scaling",
	.summary = "unpack throughput vs number of HPUs per strategy (paper "
		   "000 Fig. 13a)",
	.opts = scaling_opts,
	.opt = scaling_opt,
	.run = scaling_run,
};
