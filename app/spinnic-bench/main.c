/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench SUBCOMMAND [options]: benchmarks that print a table and write
 * CSV (DESIGN §9). Every throughput row carries the streaming-copy limit of
 * the same bytes measured in the same run, and the ratio to it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* The subcommands, in --help order. */
static const struct bench_cmd *const bench_cmds[] = {
	&bench_ddt_cmd,
	&bench_unpack_cmd,
	&bench_latency_cmd,
	&bench_apps_cmd,
	&bench_scaling_cmd,
	&bench_ckpt_cmd,
	&bench_auth_cmd,
	&bench_rate_cmd,
	&bench_trig_cmd,
	&bench_layout_cmd,
	&bench_aa_cmd,
	&bench_dht_cmd,
	&bench_aa_count_cmd,
	&bench_aa_getlog_cmd,
	&bench_aa_ickpt_cmd,
	&bench_aa_flush_cmd,
	&bench_aa_iotlb_cmd,
	&bench_overlap_cmd,
	&bench_setup_cmd,
	&bench_group_cmd,
	&bench_staging_cmd,
	&bench_stencil_cmd,
	&bench_ring_cmd,
	&bench_halo_cmd,
};

#define N_CMDS (sizeof(bench_cmds) / sizeof(bench_cmds[0]))
#define MAX_CMD_OPTS 32

enum {
	OPT_CSV = 256, OPT_TYPE, OPT_VERIFY, OPT_COLD, OPT_REPS, OPT_BYTES,
	OPT_SEED,
	OPT_HELP, OPT_CMD_BASE,
};

static const struct option common_opts[] = {
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "cold", no_argument, NULL, OPT_COLD },
	{ "reps", required_argument, NULL, OPT_REPS },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "help", no_argument, NULL, OPT_HELP },
};

#define N_COMMON (sizeof(common_opts) / sizeof(common_opts[0]))

static void
usage(FILE *f, const struct bench_cmd *only)
{
	fprintf(f, "usage: spinnic-bench SUBCOMMAND [options]\n\n");
	fprintf(f, "subcommands:\n");
	for (size_t i = 0; i < N_CMDS; i++)
		if (only == NULL || only == bench_cmds[i])
			fprintf(f, "  %-10s %s\n", bench_cmds[i]->name,
				bench_cmds[i]->summary);
	fprintf(f, "\ncommon options:\n"
		"  --csv F        also write the table as CSV (header row) to F\n"
		"  --type EXPR    run only this type expression (DESIGN §7)\n"
		"  --verify       check every byte placed against a reference\n"
		"  --cold         evict the buffers from the caches before every\n"
		"                 timed run\n"
		"                 (default: best of warm runs)\n"
		"  --reps N       timed repetitions, best of (default 20)\n"
		"  --bytes N      message bytes (default: the subcommand's)\n"
		"  --seed N       seed of random layouts (default 1)\n"
		"  --help         this text (after SUBCOMMAND: its options)\n");
	for (size_t i = 0; i < N_CMDS; i++) {
		const struct bench_cmd_opt *o = bench_cmds[i]->opts;

		if (o == NULL || (only != NULL && only != bench_cmds[i]))
			continue;
		fprintf(f, "\n%s options:\n", bench_cmds[i]->name);
		for (; o->name != NULL; o++)
			fprintf(f, "  --%s%s  %s\n", o->name,
				o->has_arg ? " ARG" : "", o->help);
	}
}

/* Registration check of the table (mandatory callbacks, unique names). */
static int
cmds_check(void)
{
	for (size_t i = 0; i < N_CMDS; i++) {
		const struct bench_cmd *c = bench_cmds[i];

		if (c->name == NULL || c->summary == NULL || c->run == NULL ||
		    (c->opts != NULL && c->opt == NULL)) {
			bench_err("internal error: subcommand %zu incomplete",
				  i);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(bench_cmds[j]->name, c->name) == 0) {
				bench_err("internal error: duplicate '%s'",
					  c->name);
				return -EINVAL;
			}
	}
	return 0;
}

static int
parse_num(const char *opt, const char *s, long long min, long long max,
	  long long *v_p)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > max) {
		bench_err("bad --%s '%s': expected an integer in [%lld, %lld]",
			  opt, s, min, max);
		return -EINVAL;
	}
	*v_p = v;
	return 0;
}

int
main(int argc, char **argv)
{
	struct option longopts[N_COMMON + MAX_CMD_OPTS + 1];
	const struct bench_cmd *cmd = NULL;
	struct bench_opts o = { .reps = 20, .seed = 1 };
	size_t n = 0;
	long long v;
	int c, rc;

	if (cmds_check() < 0)
		return 2;
	bench_ddt_recip_env();
	if (argc < 2) {
		bench_err("missing subcommand; try --help");
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout, NULL);
		return 0;
	}
	for (size_t i = 0; i < N_CMDS; i++)
		if (strcmp(argv[1], bench_cmds[i]->name) == 0)
			cmd = bench_cmds[i];
	if (cmd == NULL) {
		bench_err("unknown subcommand '%s'; try --help", argv[1]);
		return 2;
	}

	memcpy(longopts, common_opts, sizeof(common_opts));
	n = N_COMMON;
	for (const struct bench_cmd_opt *co = cmd->opts; co && co->name; co++) {
		if (n == N_COMMON + MAX_CMD_OPTS) {
			bench_err("internal error: too many options");
			return 2;
		}
		longopts[n] = (struct option){ co->name,
			co->has_arg ? required_argument : no_argument, NULL,
			OPT_CMD_BASE + (int)(co - cmd->opts) };
		n++;
	}
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CSV:
			o.csv = optarg;
			break;
		case OPT_TYPE:
			o.type = optarg;
			break;
		case OPT_VERIFY:
			o.verify = 1;
			break;
		case OPT_COLD:
			o.cold = 1;
			break;
		case OPT_REPS:
			if (parse_num("reps", optarg, 1, 1000000, &v) < 0)
				return 2;
			o.reps = (int)v;
			break;
		case OPT_BYTES:
			if (parse_num("bytes", optarg, 1, 1ll << 40, &v) < 0)
				return 2;
			o.bytes = v;
			break;
		case OPT_SEED:
			if (parse_num("seed", optarg, 1, INT64_MAX, &v) < 0)
				return 2;
			o.seed = (uint64_t)v;
			break;
		case OPT_HELP:
			usage(stdout, cmd);
			return 0;
		case ':':
			bench_err("option '%s' needs an argument",
				  argv[optind - 1]);
			return 2;
		case '?':
			bench_err("unknown option '%s' for '%s'",
				  argv[optind - 1], cmd->name);
			return 2;
		default:
			if (cmd->opt(cmd->opts[c - OPT_CMD_BASE].name,
				     optarg) < 0)
				return 2;
			break;
		}
	}
	if (optind < argc) {
		bench_err("unexpected argument '%s'", argv[optind]);
		return 2;
	}
	/* a benchmark may run for minutes: find out now that F is unusable */
	if (o.csv != NULL && bench_csv_check(o.csv) < 0)
		return 2;
	rc = cmd->run(&o);
	if (rc < 0)
		return 2;
	return rc;
}
