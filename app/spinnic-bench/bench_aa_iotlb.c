/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench aa-iotlb (issue #17, paper 004 Fig. 7c): the IOTLB model
 * of spinnic --aa-iotlb (doc/NOTES.md "Active Access", IOTLB) under
 * 8-byte puts of one client of node 0 to its own ME over K marked pages
 * (each put to a page drawn uniformly from K of 1024, a fixed xorshift
 * seed), the K pages either dense (the first K: consecutive pages fill
 * the sets evenly) or spread (every 1024/K-th page: a power-of-two stride
 * that lands them in few sets, the conflicts associativity is for) or hot
 * (dense, but 3 puts in 4 go to the first K/8 pages: the locality that
 * LRU keeps and random replacement loses; uniform draws alone make every
 * policy equal), for
 * every (ways, policy) and K: the miss rate, page-walk
 * reads per access and the modelled walk time per access (70 ns per read:
 * the paper's memory access), and the miss rate against the fully
 * associative LRU row of the same K. One spinnic per cell: the counts
 * come from its final counters (aa_iotlb_hits, aa_iotlb_misses,
 * aa_iotlb_walk_reads), exact for a seed; nothing is timed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>
#include <spin_aa.h>

#include "bench.h"
#include "bench_job.h"

#define PG SPIN_AA_PAGE
#define NPAGES 1024u
#define TIMEOUT_S 20.0
#define WALK_READ_NS 70.0
#define MAX_LIST 16u

static struct {
	long ops;
	long entries;
	long pages[MAX_LIST];
	unsigned npages;
	long ways[MAX_LIST];   /* 0: fully associative */
	unsigned nways;
	int rnd;               /* also the rnd policy */
	unsigned pats;         /* bit per pattern */
	const char *spinnic;
} icfg = { 8192, 64, { 16, 32, 64, 128, 256, 1024 }, 6,
	   { 1, 2, 4, 0 }, 4, 1, 7, NULL };

enum { P_DENSE, P_SPREAD, P_HOT, P_COUNT };
static const char *const pat_names[P_COUNT] = { "dense", "spread", "hot" };

struct pat {
	long k;
	int kind;
};

static const struct bench_cmd_opt iotlb_opts[] = {
	{ "ops", 1, "puts per cell (default 8192)" },
	{ "entries", 1, "IOTLB entries, a power of two (default 64)" },
	{ "pages", 1, "distinct pages touched, list (default "
		      "16,32,64,128,256,1024; at most 1024)" },
	{ "ways", 1, "associativities, list, 0 = full (default 1,2,4,0)" },
	{ "lru-only", 0, "leave out the random-replacement rows" },
	{ "patterns", 1, "page patterns, list of dense, spread, hot (default "
			 "all)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ NULL, 0, NULL },
};

static int
iotlb_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "ops", &icfg.ops, 1, 10000000 },
		{ "entries", &icfg.entries, 1, 65536 },
	};

	if (strcmp(name, "spinnic") == 0) {
		icfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "lru-only") == 0) {
		icfg.rnd = 0;
		return 0;
	}
	if (strcmp(name, "patterns") == 0) {
		char buf[64], *save = NULL, *t;
		unsigned i;

		icfg.pats = 0;
		if (strlen(arg) >= sizeof(buf))
			return -EINVAL;
		strcpy(buf, arg);
		for (t = strtok_r(buf, ",", &save); t != NULL;
		     t = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < P_COUNT; i++)
				if (strcmp(t, pat_names[i]) == 0)
					break;
			if (i == P_COUNT) {
				bench_err("--patterns: %s: not dense, spread "
					  "or hot", t);
				return -EINVAL;
			}
			icfg.pats |= 1u << i;
		}
		return icfg.pats != 0 ? 0 : -EINVAL;
	}
	if (strcmp(name, "pages") == 0)
		return bench_parse_list("pages", arg, icfg.pages, MAX_LIST,
					&icfg.npages, 1, NPAGES);
	if (strcmp(name, "ways") == 0)
		return bench_parse_list("ways", arg, icfg.ways, MAX_LIST,
					&icfg.nways, 0, 65536);
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- the client ---------------------------------------------------------- */

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("aa-iotlb client: %s: %s", #call, \
			  spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

/* out[0]: puts done. Puts to pages drawn from the pattern *arg. */
static int
client_child(double *out, void *arg)
{
	const struct pat *pa = arg;
	const uint64_t k = (uint64_t)pa->k;
	const uint64_t stride = pa->kind == P_SPREAD ? NPAGES / k : 1;
	const uint64_t hot = k / 8 > 0 ? k / 8 : 1;
	uint64_t x = 0x2545f4914f6cdd1dull, posted = 0, done = 0, spins = 0;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct;
	ptl_handle_md_t md;
	ptl_handle_me_t h;
	ptl_ni_limits_t lim;
	ptl_process_t self;
	ptl_pt_index_t pt;
	uint8_t *raw, *pages, *src;
	ptl_ct_event_t e;
	double tw = 0;
	ptl_md_t d;
	ptl_me_t me;

	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &ni));
	CHECK_PTL(PtlGetPhysId(ni, &self));
	CHECK_PTL(PtlEQAlloc(ni, 64, &eq));
	CHECK_PTL(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt));
	CHECK_PTL(PtlCTAlloc(ni, &ct));
	raw = spin_host_alloc((NPAGES + 1) * PG);
	src = spin_host_alloc(64);
	if (raw == NULL || src == NULL) {
		bench_err("aa-iotlb client: out of region memory");
		return -ENOMEM;
	}
	pages = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(src, 0x5a, 64);
	/* every page marked W (R = 0, nothing logged): each put takes the
	 * AA lookup path and its one IOTLB lookup */
	CHECK_PTL(spin_aa_assoc(ni, pages, NPAGES * PG, SPIN_AA_W,
				SPIN_AA_LOG_NONE));
	memset(&me, 0, sizeof(me));
	me.start = pages;
	me.length = NPAGES * PG;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = 0xaa;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_SUCCESS_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_UNLINK_DISABLE;
	CHECK_PTL(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h));
	memset(&d, 0, sizeof(d));
	d.start = src;
	d.length = 64;
	d.eq_handle = PTL_EQ_NONE;
	d.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(ni, &d, &md));
	while (done < (uint64_t)icfg.ops) {
		if (posted < (uint64_t)icfg.ops && posted - done < 64) {
			uint64_t page;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pa->kind == P_HOT && (x >> 32) % 4 != 0)
				page = x % hot;
			else
				page = (x % k) * stride;
			CHECK_PTL(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, pt,
					 0xaa, page * PG + (posted % 512) * 8,
					 NULL, 0));
			posted++;
			continue;
		}
		CHECK_PTL(PtlCTGet(ct, &e));
		if (e.failure != 0) {
			bench_err("aa-iotlb client: a put failed");
			return -EIO;
		}
		done = e.success;
		if (++spins % 65536 == 0) {
			if (tw == 0) {
				tw = bench_now();
			} else if (bench_now() - tw > TIMEOUT_S) {
				bench_err("aa-iotlb client: %" PRIu64 " of %ld "
					  "done", done, icfg.ops);
				return -EIO;
			}
		}
	}
	out[0] = (double)done;
	PtlNIFini(ni);
	PtlFini();
	return 0;
}

/* ---- one cell: a spinnic with the model, the client, the counters ---- */

static uint64_t
log_counter(const char *text, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s ", name);
	p = text != NULL ? strstr(text, key) : NULL;
	return p != NULL ? strtoull(p + strlen(key), NULL, 10) : 0;
}

struct cell {
	uint64_t hits, misses, walk_reads, puts;
};

static int
cell_run(long ways, int rnd, struct pat pa, struct cell *c)
{
	struct bench_spinnic nic = { .pid = -1 };
	char spec[64], sock[400], logp[320], *text = NULL;
	const char *extra[] = { "--aa-iotlb", spec, NULL };
	double out[1] = { 0 };
	FILE *f;
	long sz;
	int rc;

	snprintf(spec, sizeof(spec), "%ld,%ld,%s", icfg.entries,
		 ways == 0 ? icfg.entries : ways, rnd ? "rnd" : "lru");
	rc = bench_spinnic_start(&nic, icfg.spinnic, extra);
	if (rc < 0)
		return rc;
	(void)bench_clients_off_lcore();
	snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
	setenv("SPINNIC_SOCKET", sock, 1);
	rc = bench_in_child(client_child, &pa, out, 1, "aa-iotlb client");
	snprintf(logp, sizeof(logp), "%s.log", nic.dir);
	bench_spinnic_stop(&nic, logp);
	f = fopen(logp, "r");
	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = calloc(1, (size_t)sz + 1))
	    != NULL && fread(text, 1, (size_t)sz, f) != (size_t)sz) {
		free(text);
		text = NULL;
	}
	if (f != NULL)
		fclose(f);
	unlink(logp);
	if (rc == 0 && text == NULL) {
		bench_err("aa-iotlb: no spinnic counters");
		rc = -EIO;
	}
	if (rc == 0) {
		c->hits = log_counter(text, "aa_iotlb_hits");
		c->misses = log_counter(text, "aa_iotlb_misses");
		c->walk_reads = log_counter(text, "aa_iotlb_walk_reads");
		c->puts = (uint64_t)out[0];
		/* the model saw every put once, nothing else */
		if (c->hits + c->misses != c->puts) {
			bench_err("aa-iotlb: %" PRIu64 " lookups for %" PRIu64
				  " puts", c->hits + c->misses, c->puts);
			rc = -EIO;
		}
	}
	free(text);
	return rc;
}

/* ---- the subcommand --------------------------------------------------------- */

static int
iotlb_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "pattern", BENCH_COL_STR, 0 },
		{ "ways", BENCH_COL_STR, 0 },
		{ "policy", BENCH_COL_STR, 0 },
		{ "pages", BENCH_COL_INT, 0 },
		{ "lookups", BENCH_COL_INT, 0 },
		{ "misses", BENCH_COL_INT, 0 },
		{ "miss_rate", BENCH_COL_NUM, 4 },
		{ "walk_reads_per_op", BENCH_COL_NUM, 3 },
		{ "model_ns_per_op", BENCH_COL_NUM, 1 },
		{ "miss_ratio_af_lru", BENCH_COL_NUM, 3 },
	};
	const unsigned npol = icfg.rnd ? 2 : 1;
	unsigned pk[P_COUNT], npat = 0;
	struct cell *cells = NULL;
	struct bench_table *tab = NULL;
	struct cell *ref = NULL;
	unsigned w, p, k, s;
	int rc = 0;

	(void)o;
	for (s = 0; s < P_COUNT; s++)
		if (icfg.pats & (1u << s))
			pk[npat++] = s;
	cells = calloc((size_t)npat * icfg.nways * npol * icfg.npages,
		       sizeof(*cells));
	ref = calloc((size_t)npat * icfg.npages, sizeof(*ref));
	if (cells == NULL || ref == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((icfg.entries & (icfg.entries - 1)) != 0) {
		bench_err("aa-iotlb: --entries must be a power of two");
		rc = -EINVAL;
		goto out;
	}
	for (w = 0; w < icfg.nways; w++) {
		if (icfg.ways[w] > icfg.entries ||
		    (icfg.ways[w] & (icfg.ways[w] - 1)) != 0) {
			bench_err("aa-iotlb: ways %ld: a power of two up to "
				  "--entries, or 0", icfg.ways[w]);
			rc = -EINVAL;
			goto out;
		}
	}
	bench_spinnic_signals();
	/* the fully associative LRU reference of each K */
	for (s = 0; s < npat; s++)
		for (k = 0; k < icfg.npages; k++) {
			struct pat pa = { icfg.pages[k], (int)pk[s] };

			rc = cell_run(0, 0, pa, &ref[s * icfg.npages + k]);
			if (rc < 0)
				goto out;
		}
	for (s = 0; s < npat; s++)
	for (w = 0; w < icfg.nways; w++)
		for (p = 0; p < npol; p++)
			for (k = 0; k < icfg.npages; k++) {
				struct pat pa = { icfg.pages[k], (int)pk[s] };
				struct cell *c = &cells[((s * icfg.nways + w) *
					npol + p) * icfg.npages + k];

				if (p == 0 && (icfg.ways[w] == 0 ||
					       icfg.ways[w] == icfg.entries)) {
					*c = ref[s * icfg.npages + k];
					continue;
				}
				rc = cell_run(icfg.ways[w], (int)p, pa, c);
				if (rc < 0)
					goto out;
			}
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (s = 0; s < npat; s++)
	for (w = 0; w < icfg.nways; w++)
		for (p = 0; p < npol; p++)
			for (k = 0; k < icfg.npages; k++) {
				const struct cell *c = &cells[((s * icfg.nways +
					w) * npol + p) * icfg.npages + k];
				const struct cell *r =
					&ref[s * icfg.npages + k];
				double mr = (double)c->misses / (double)c->puts;
				double af = (double)r->misses /
					    (double)r->puts;
				char wn[24];

				if (icfg.ways[w] == 0 ||
				    icfg.ways[w] == icfg.entries)
					snprintf(wn, sizeof(wn), "af");
				else
					snprintf(wn, sizeof(wn), "a%ld",
						 icfg.ways[w]);
				rc = bench_table_row(tab);
				if (rc < 0)
					goto out;
				bench_table_set_str(tab, "pattern",
						    pat_names[pk[s]]);
				bench_table_set_str(tab, "ways", wn);
				bench_table_set_str(tab, "policy",
						    p ? "rnd" : "lru");
				bench_table_set_int(tab, "pages",
						    icfg.pages[k]);
				bench_table_set_int(tab, "lookups",
						    (long)(c->hits + c->misses));
				bench_table_set_int(tab, "misses",
						    (long)c->misses);
				bench_table_set_num(tab, "miss_rate", mr);
				bench_table_set_num(tab, "walk_reads_per_op",
					(double)c->walk_reads /
					(double)c->puts);
				bench_table_set_num(tab, "model_ns_per_op",
					(double)c->walk_reads *
					WALK_READ_NS / (double)c->puts);
				bench_table_set_num(tab, "miss_ratio_af_lru",
					af > 0 ? mr / af : 0);
			}
	rc = bench_table_emit(tab, o);
	printf("# IOTLB model (spinnic --aa-iotlb %ld,WAYS,POLICY): %ld 8-byte "
	       "puts per cell, one client of node 0 to its own ME over 1024 "
	       "pages marked W, each put to one of PAGES pages (uniform, "
	       "fixed seed): dense the first PAGES, spread every "
	       "1024/PAGES-th, hot dense with 3 in 4 puts to the first "
	       "PAGES/8; counts exact from spinnic's counters, one spinnic "
	       "per cell; model_ns_per_op charges %.0f ns per page-walk read "
	       "(4 reads per miss at 4 KiB pages), nothing waits; "
	       "miss_ratio_af_lru: miss rate / the fully associative LRU "
	       "row's at the same PAGES\n", icfg.entries, icfg.ops,
	       WALK_READ_NS);
out:
	bench_table_free(tab);
	free(cells);
	free(ref);
	return rc;
}

const struct bench_cmd bench_aa_iotlb_cmd = {
	.name = "aa-iotlb",
	.summary = "Active Access: IOTLB model miss rate and walk cost "
		   "against distinct pages touched (Fig. 7c)",
	.opts = iotlb_opts,
	.opt = iotlb_opt,
	.run = iotlb_run,
};
