/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench aa-overhead (issue #17, paper 004 Fig. 6a/b): 8-byte puts
 * through a real `spinnic --virtual 2 --idle-sleep-us 0`, one client of
 * node 0 putting to its own MEs (no ack, done = counted at the target ME)
 * with --window puts in flight (throughput) and with one in flight (the
 * time per put: a latency), under five marks of the client's memory:
 *   none       no page marked (the NIC loads one flag per access)
 *   elsewhere  a page above the target marked W|R|WL (outside the
 *              marked bounds: two more loads, no lock)
 *   around     the pages just below and above marked W|R|WL (inside the
 *              bounds: every access takes the client's AA lock and looks
 *              the table up; its page is unmarked)
 *   wl         the target page W|R|WL: written, metadata logged
 *   wld        the target page W|R|WLD: written, data logged
 *   redirect   the target page R|WLD: memory untouched, data logged
 * Rows interleave sample by sample; the marks change between samples
 * (not timed), and the log (8 MiB, back-pressure) is drained there too.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "bench.h"

#define PG SPIN_AA_PAGE
#define TIMEOUT_S 10.0
#define LOG_BYTES (8u << 20)

enum { M_NONE, M_ELSEWHERE, M_AROUND, M_WL, M_WLD, M_REDIRECT, M_COUNT };

static const char *const mode_names[M_COUNT] = {
	"none", "elsewhere", "around", "wl", "wld", "redirect",
};

static struct {
	long ops;
	long lat_ops;
	long window;
	long rounds;
	long samples;
	const char *spinnic;
} acfg = { 20000, 2000, 64, 3, 3, NULL };

static const struct bench_cmd_opt aa_opts[] = {
	{ "ops", 1, "puts per throughput sample (default 20000)" },
	{ "lat-ops", 1, "puts per one-in-flight sample (default 2000)" },
	{ "window", 1, "puts in flight for throughput (default 64)" },
	{ "rounds", 1, "rounds, one spinnic each (default 3)" },
	{ "samples", 1, "samples per round and row (default 3)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ NULL, 0, NULL },
};

static int
aa_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "ops", &acfg.ops, 1, 100000000 },
		{ "lat-ops", &acfg.lat_ops, 1, 100000000 },
		{ "window", &acfg.window, 1, 512 },
		{ "rounds", &acfg.rounds, 1, 100 },
		{ "samples", &acfg.samples, 1, 1000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		acfg.spinnic = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- the client ---------------------------------------------------------- */

struct aa_client {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_pt_index_t pt;
	ptl_process_t self;
	spin_handle_aalog_t log;
	uint8_t *pages;     /* page 1: the target; 0 and 2: "around";
			       3: "elsewhere" */
	uint64_t expect;
};

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("aa client: %s: %s", #call, spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

static int
client_open(struct aa_client *c)
{
	struct spin_aa_log_desc d = { 0 };
	ptl_ni_limits_t lim;
	ptl_handle_me_t h;
	uint8_t *raw, *src;
	ptl_md_t md;
	ptl_me_t me;

	memset(c, 0, sizeof(*c));
	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &c->ni));
	CHECK_PTL(PtlGetPhysId(c->ni, &c->self));
	CHECK_PTL(PtlEQAlloc(c->ni, 64, &c->eq));
	CHECK_PTL(PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt));
	CHECK_PTL(PtlCTAlloc(c->ni, &c->ct));
	d.size = LOG_BYTES;
	CHECK_PTL(spin_aa_log_create(c->ni, &d, &c->log));
	raw = spin_host_alloc(5 * PG);
	src = spin_host_alloc(64);
	if (raw == NULL || src == NULL) {
		bench_err("aa client: out of region memory");
		return -ENOMEM;
	}
	c->pages = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(c->pages, 0, 4 * PG);
	memset(src, 0x5a, 64);
	memset(&me, 0, sizeof(me));
	me.start = c->pages + PG;
	me.length = 8;
	me.ct_handle = c->ct;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 0xaa;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_UNLINK_DISABLE;
	CHECK_PTL(PtlMEAppend(c->ni, c->pt, &me, PTL_PRIORITY_LIST, NULL, &h));
	memset(&md, 0, sizeof(md));
	md.start = src;
	md.length = 64;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(c->ni, &md, &c->md));
	return 0;
}

static int
on_rec(void *arg, const struct spin_aa_rec *r)
{
	(void)arg;
	(void)r;
	return 0;
}

/* Drain the log, then mark for @p mode (outside the timed part). */
static int
marks_set(struct aa_client *c, int mode)
{
	const unsigned wl = SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL;
	static const unsigned bits[M_COUNT] = {
		0, 0, 0, SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL,
		SPIN_AA_W | SPIN_AA_R | SPIN_AA_WLD, SPIN_AA_R | SPIN_AA_WLD,
	};
	unsigned n;

	while (spin_aa_log_poll(c->log, on_rec, NULL, 4096, &n) == PTL_OK)
		;
	CHECK_PTL(spin_aa_assoc(c->ni, c->pages, 4 * PG, SPIN_AA_W | SPIN_AA_R,
				SPIN_AA_LOG_NONE));
	if (mode == M_ELSEWHERE) {
		CHECK_PTL(spin_aa_assoc(c->ni, c->pages + 3 * PG, PG, wl,
					c->log));
	} else if (mode == M_AROUND) {
		CHECK_PTL(spin_aa_assoc(c->ni, c->pages, PG, wl, c->log));
		CHECK_PTL(spin_aa_assoc(c->ni, c->pages + 2 * PG, PG, wl,
					c->log));
	} else if (mode != M_NONE) {
		CHECK_PTL(spin_aa_assoc(c->ni, c->pages + PG, PG, bits[mode],
					c->log));
	}
	return 0;
}

/* @p ops puts with @p window in flight; @return seconds, < 0 */
static double
puts_run(struct aa_client *c, long ops, long window)
{
	uint64_t base = c->expect, n = 0, posted = 0, spins = 0;
	double t0 = bench_now(), tw = 0;
	ptl_ct_event_t e;

	while (n < (uint64_t)ops) {
		if (posted < (uint64_t)ops && posted - n < (uint64_t)window) {
			if (PtlPut(c->md, 0, 8, PTL_NO_ACK_REQ, c->self, c->pt,
				   0xaa, 0, NULL, 0) != PTL_OK)
				return -1;
			posted++;
			continue;
		}
		if (PtlCTGet(c->ct, &e) != PTL_OK || e.failure != 0) {
			bench_err("aa client: a put failed");
			return -1;
		}
		n = e.success - base;
		if (++spins % 65536 == 0) {
			if (tw == 0)
				tw = bench_now();
			else if (bench_now() - tw > TIMEOUT_S) {
				bench_err("aa client: %" PRIu64 " of %ld done",
					  n, ops);
				return -1;
			}
		}
	}
	c->expect = base + posted;
	return bench_now() - t0;
}

/* out[(s * M_COUNT + mode) * 2 + {0: ops/s, 1: us per put alone}] */
static int
client_child(double *out, void *arg)
{
	struct aa_client c;
	long round = *(long *)arg;

	if (client_open(&c) < 0)
		return -EIO;
	for (int m = 0; m < M_COUNT; m++)   /* warm-up */
		if (marks_set(&c, m) < 0 || puts_run(&c, acfg.ops / 10 + 1,
						     acfg.window) < 0)
			return -EIO;
	for (long s = 0; s < acfg.samples; s++)
		for (int j = 0; j < M_COUNT; j++) {
			int m = (int)((j + s + round) % M_COUNT);
			double *o = out + (s * M_COUNT + m) * 2;
			double t;

			if (marks_set(&c, m) < 0)
				return -EIO;
			t = puts_run(&c, acfg.ops, acfg.window);
			if (t <= 0)
				return -EIO;
			o[0] = (double)acfg.ops / t;
			t = puts_run(&c, acfg.lat_ops, 1);
			if (t <= 0)
				return -EIO;
			o[1] = t * 1e6 / (double)acfg.lat_ops;
		}
	PtlNIFini(c.ni);
	PtlFini();
	return 0;
}

/* ---- the subcommand --------------------------------------------------------- */

static int
aa_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "marks", BENCH_COL_STR, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "mops", BENCH_COL_NUM, 3 },
		{ "ratio_none", BENCH_COL_NUM, 3 },
		{ "us_per_put", BENCH_COL_NUM, 3 },
		{ "lat_ratio_none", BENCH_COL_NUM, 3 },
	};
	long per = acfg.samples * acfg.rounds;
	size_t n = (size_t)acfg.samples * M_COUNT * 2;
	double *all = NULL, *buf = NULL, thr[M_COUNT], lat[M_COUNT];
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_table *tab = NULL;
	char sock[400];
	int rc = 0, ncpus = 0;

	(void)o;
	all = calloc((size_t)per * M_COUNT * 2, sizeof(double));
	buf = calloc(n, sizeof(double));
	if (all == NULL || buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	bench_spinnic_signals();
	for (long r = 0; r < acfg.rounds; r++) {
		rc = bench_spinnic_start(&nic, acfg.spinnic, NULL);
		if (rc < 0)
			goto out;
		ncpus = bench_clients_off_lcore();
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		rc = bench_in_child(client_child, &r, buf, n, "aa client");
		bench_spinnic_stop(&nic, NULL);
		if (rc < 0)
			goto out;
		for (long s = 0; s < acfg.samples; s++)
			for (int m = 0; m < M_COUNT; m++)
				for (int k = 0; k < 2; k++)
					all[((size_t)m * 2 + (size_t)k) *
					    (size_t)per + (size_t)(r * acfg.samples +
								    s)] =
						buf[(s * M_COUNT + m) * 2 + k];
	}
	for (int m = 0; m < M_COUNT; m++) {
		thr[m] = bench_median(all + (size_t)m * 2 * (size_t)per,
				      (int)per);
		lat[m] = bench_median(all + ((size_t)m * 2 + 1) * (size_t)per,
				      (int)per);
	}
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (int m = 0; m < M_COUNT; m++) {
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "marks", mode_names[m]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "mops", thr[m] / 1e6);
		bench_table_set_num(tab, "ratio_none", thr[M_NONE] > 0 ?
				    thr[m] / thr[M_NONE] : 0);
		bench_table_set_num(tab, "us_per_put", lat[m]);
		bench_table_set_num(tab, "lat_ratio_none", lat[M_NONE] > 0 ?
				    lat[m] / lat[M_NONE] : 0);
	}
	rc = bench_table_emit(tab, o);
	printf("# 8-byte puts of one client of node 0 to its own ME, medians "
	       "of %ld samples (%ld rounds, rows interleaved, marks changed "
	       "and the log drained between samples): mops with %ld in flight "
	       "(%ld puts), us_per_put with one in flight (%ld puts); spinnic "
	       "--virtual 2 --idle-sleep-us 0, client on %d CPU(s) off its "
	       "lcore\n", per, acfg.rounds, acfg.window, acfg.ops,
	       acfg.lat_ops, ncpus);
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	return rc;
}

const struct bench_cmd bench_aa_cmd = {
	.name = "aa-overhead",
	.summary = "Active Access: put rate and time per put with no marks, "
		   "marks elsewhere or around, WL, WLD and redirected pages",
	.opts = aa_opts,
	.opt = aa_opt,
	.run = aa_run,
};
