/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench aa-count, aa-getlog, aa-ickpt, aa-flush (issue #17, paper
 * 004 Fig. 7d, Fig. 9a, §4.3, §3.6): the Active Access use cases through
 * a real `spinnic --virtual 2 --idle-sleep-us 0`, a target client on
 * node 1 and an initiator client on node 0 (forked children):
 *   aa-count   8-byte puts/s to pages unmarked (none), W|R|WL counted by
 *              the target's thread from its log (host), or counted on the
 *              NIC by the aa_count access handler (handler); each sample
 *              ends when the counts are in (an active flush; none: an
 *              acked put)
 *   aa-getlog  gets of --sizes bytes from pages R|RLD, the target's log
 *              keeping every byte returned (aa), against the RMA way of
 *              logging them (rma: the initiator puts the bytes back to
 *              the target, acked): time per get and bytes on the wire
 *              per get (every node's transmitted bytes, from spinnic's
 *              counters: one spinnic per size and mode)
 *   aa-ickpt   incremental checkpointing: the initiator writes --dirty
 *              percent of 256 data pages (W|R|WL), flushes and starts a
 *              checkpoint; the target takes the dirty pages from its log
 *              and copies them into its image (incr_host) and, for
 *              comparison, copies every page (full); then the same pages
 *              of a second set of 256, whose log the aa_dirty access
 *              handler serves on the NIC, setting a byte per dirty page
 *              in a host bitmap: the target copies the pages whose byte
 *              is set and clears it (incr_hpu); every incremental image
 *              is checked against the memory byte for byte
 *   aa-flush   spin_aa_flush time against records outstanding (puts sent
 *              without acks just before), host consumer and access
 *              handler
 * Rows are interleaved per sample; medians.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
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
#include "active_access.h"

#define PG SPIN_AA_PAGE
#define NCP 16u                 /* counted pages per row */
#define ND 256u                 /* data pages (ickpt, getlog) */
#define NBACK 16u               /* getlog rma: pages the bytes go back to */
#define T_CTL 0u                /* words: 0 phase, 1 ack */
#define T_FLH 1u                /* R|FLUSH of the host log */
#define T_FLN 2u                /* R|FLUSH of the handler's log */
#define T_CNT 3u                /* aa_count counters: 2 NCP words */
#define T_NONE 4u
#define T_HOST (T_NONE + NCP)
#define T_NIC (T_HOST + NCP)
#define T_DATA (T_NIC + NCP)
#define T_BACK (T_DATA + ND)
#define T_HDATA (T_BACK + NBACK) /* ickpt: ND pages aa_dirty tracks */
#define T_BMP (T_HDATA + ND)    /* aa_dirty's bitmap: a byte per page */
#define T_FLD (T_BMP + 1)       /* R|FLUSH of aa_dirty's log */
#define T_PAGES (T_FLD + 1)
#define MATCH 0xa7ull
#define MATCH_FLH 0xa8ull
#define MATCH_FLN 0xa9ull
#define MATCH_FLD 0xaaull
#define WAIT_MS 20000
#define MAX_PHASES 256u

enum { U_COUNT, U_GETLOG, U_ICKPT, U_FLUSH };
enum { T_DATA_WL, T_DATA_RLD, T_DATA_PLAIN };

static struct {
	long ops;
	long rounds;
	long samples;
	long sizes[8];
	int nsizes;
	long outst[8];
	int noutst;
	long dirty[8];
	int ndirty;
	const char *spinnic;
	const char *handlers;
} ucfg = { 2000, 1, 3, { 0 }, 0, { 0 }, 0, { 0 }, 0, NULL, NULL };

static const struct bench_cmd_opt uses_opts[] = {
	{ "ops", 1, "aa-count: puts, aa-getlog: gets per sample (default 2000)" },
	{ "rounds", 1, "rounds, one spinnic each (default 1)" },
	{ "samples", 1, "samples per round and row (default 3)" },
	{ "sizes", 1, "aa-getlog: get sizes, comma-separated (default 64,1024,4096)" },
	{ "outstanding", 1, "aa-flush: records before the flush (default 0,10,100,1000)" },
	{ "dirty", 1, "aa-ickpt: percent of pages written (default 1,10,50)" },
	{ "spinnic", 1, "spinnic binary (default: beside this one)" },
	{ "handlers", 1, "the Active Access plugin " BENCH_AA_PLUGIN
	  " (default: the build tree's, else the installed one)" },
	{ NULL, 0, NULL },
};

static int
list_opt(const char *arg, long *v, int *n, long lo, long hi)
{
	const char *p = arg;
	char *end;

	*n = 0;
	while (*p != '\0' && *n < 8) {
		long x = strtol(p, &end, 10);

		if (end == p || x < lo || x > hi ||
		    (*end != ',' && *end != '\0')) {
			bench_err("bad list '%s' (%ld to %ld)", arg, lo, hi);
			return -EINVAL;
		}
		v[(*n)++] = x;
		p = *end == ',' ? end + 1 : end;
	}
	return *n > 0 ? 0 : -EINVAL;
}

static int
uses_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "ops", &ucfg.ops, 1, 100000 },
		{ "rounds", &ucfg.rounds, 1, 100 },
		{ "samples", &ucfg.samples, 1, 1000 },
	};

	if (strcmp(name, "spinnic") == 0) {
		ucfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "handlers") == 0) {
		ucfg.handlers = arg;
		return 0;
	}
	if (strcmp(name, "sizes") == 0)
		return list_opt(arg, ucfg.sizes, &ucfg.nsizes, 8, ND * PG / 2);
	if (strcmp(name, "outstanding") == 0)
		return list_opt(arg, ucfg.outst, &ucfg.noutst, 0, 4000);
	if (strcmp(name, "dirty") == 0)
		return list_opt(arg, ucfg.dirty, &ucfg.ndirty, 0, 100);
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("aa uses: %s: %s", #call, spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

struct cli {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_process_t self;
};

static int
cli_open(struct cli *c)
{
	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &c->ni));
	CHECK_PTL(PtlGetPhysId(c->ni, &c->self));
	CHECK_PTL(PtlEQAlloc(c->ni, 4096, &c->eq));
	CHECK_PTL(PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt));
	return 0;
}

static void
cli_close(struct cli *c)
{
	PtlNIFini(c->ni);
	PtlFini();
}

/* ---- the target (node 1) --------------------------------------------------- */

struct tgt {
	struct cli c;
	uint8_t *b;                 /* T_PAGES pages */
	uint8_t *image;             /* ickpt: T_DATA's checkpoint image */
	uint8_t *himage;            /* ickpt: T_HDATA's */
	uint8_t dirty[ND];          /* T_DATA pages the host log named */
	uint64_t log_bytes;         /* getlog: GET_DATA bytes */
	uint64_t bad;
	spin_handle_aalog_t hl, nl, dl;
	spin_handle_ctx_t ctx, dctx;
};

static uint64_t *
tword(struct tgt *t, unsigned page, unsigned idx)
{
	return (uint64_t *)(t->b + (size_t)page * PG) + idx;
}

/* the host consumer: every record of the host log */
static int
on_host(void *arg, const struct spin_aa_rec *r)
{
	struct tgt *t = arg;
	uint64_t p = (uint64_t)((const uint8_t *)r->addr - t->b) / PG;

	if (r->kind == SPIN_AA_GET_DATA)
		t->log_bytes += r->len;
	else if (p >= T_DATA && p < T_DATA + ND)
		t->dirty[p - T_DATA] = 1;
	else if (p >= T_HOST && p < T_HOST + NCP)
		(*tword(t, T_CNT, 2 * NCP + (unsigned)(p - T_HOST)))++;
	else
		t->bad++;
	__atomic_store_n(tword(t, T_FLH, 0), *tword(t, T_FLH, 0) + 1,
			 __ATOMIC_RELEASE);
	return 0;
}

static int
tgt_setup(struct tgt *t, int data_mode)
{
	struct spin_aa_log_desc ld = { .size = 4u << 20 };
	struct aa_count_args ca = {
		.version = AA_COUNT_ARGS_VERSION, .npages = NCP,
		.counters_off = T_CNT * PG, .processed_off = T_FLN * PG,
	};
	struct spin_ctx_desc cd = { .family = AA_COUNT_FAMILY, .args = &ca,
				    .args_len = sizeof(ca) };
	struct aa_dirty_args da = {
		.version = AA_DIRTY_ARGS_VERSION, .npages = ND,
		.bitmap_off = T_BMP * PG, .processed_off = T_FLD * PG,
	};
	struct spin_ctx_desc dd = { .family = AA_DIRTY_FAMILY, .args = &da,
				    .args_len = sizeof(da) };
	const unsigned wl = SPIN_AA_W | SPIN_AA_R | SPIN_AA_WL;
	ptl_handle_me_t h;
	uint8_t *raw;
	ptl_me_t me;
	unsigned k;

	raw = spin_host_alloc((T_PAGES + 1) * PG);
	t->image = malloc(ND * PG);
	t->himage = malloc(ND * PG);
	if (raw == NULL || t->image == NULL || t->himage == NULL) {
		bench_err("aa target: out of memory");
		return -ENOMEM;
	}
	t->b = (uint8_t *)(((uintptr_t)raw + PG - 1) & ~(uintptr_t)(PG - 1));
	memset(t->b, 0, T_PAGES * PG);
	for (k = 0; k < ND * PG / 8; k++)
		*tword(t, T_DATA, k) = k * 0x9e3779b97f4a7c15ull;
	memcpy(t->image, t->b + T_DATA * PG, ND * PG);
	memcpy(t->b + T_HDATA * PG, t->b + T_DATA * PG, ND * PG);
	memcpy(t->himage, t->image, ND * PG);
	ca.base = (uintptr_t)(t->b + T_NIC * PG);
	da.base = (uintptr_t)(t->b + T_HDATA * PG);
	CHECK_PTL(spin_ctx_install(t->c.ni, &cd, &t->ctx));
	CHECK_PTL(spin_ctx_install(t->c.ni, &dd, &t->dctx));
	CHECK_PTL(spin_aa_log_create(t->c.ni, &ld, &t->hl));
	ld.flags = SPIN_AA_LOG_HANDLER;
	ld.ctx = t->ctx;
	ld.win_addr = t->b;
	ld.win_len = T_PAGES * PG;
	CHECK_PTL(spin_aa_log_create(t->c.ni, &ld, &t->nl));
	/* aa_dirty's log: 64-byte metadata records, at most ND a checkpoint */
	ld.size = 1u << 20;
	ld.ctx = t->dctx;
	CHECK_PTL(spin_aa_log_create(t->c.ni, &ld, &t->dl));
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_FLH * PG, PG,
				SPIN_AA_R | SPIN_AA_FLUSH, t->hl));
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_FLN * PG, PG,
				SPIN_AA_R | SPIN_AA_FLUSH, t->nl));
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_HOST * PG, NCP * PG, wl,
				t->hl));
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_NIC * PG, NCP * PG, wl,
				t->nl));
	/* the bitmap page stays unmarked: aa_dirty's own DMAs log nothing */
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_FLD * PG, PG,
				SPIN_AA_R | SPIN_AA_FLUSH, t->dl));
	CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_HDATA * PG, ND * PG, wl,
				t->dl));
	if (data_mode != T_DATA_PLAIN)
		CHECK_PTL(spin_aa_assoc(t->c.ni, t->b + T_DATA * PG, ND * PG,
					data_mode == T_DATA_RLD ?
					SPIN_AA_R | SPIN_AA_RLD : wl, t->hl));
	for (k = 0; k < 4; k++) {
		static const unsigned fpage[4] = { 0, T_FLH, T_FLN, T_FLD };
		static const uint64_t mb[4] = { MATCH, MATCH_FLH, MATCH_FLN,
						MATCH_FLD };

		memset(&me, 0, sizeof(me));
		me.start = t->b + fpage[k] * PG;
		me.length = k == 0 ? T_PAGES * PG : 8;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = mb[k];
		me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
			     PTL_ME_EVENT_SUCCESS_DISABLE |
			     PTL_ME_EVENT_LINK_DISABLE |
			     PTL_ME_EVENT_UNLINK_DISABLE;
		CHECK_PTL(PtlMEAppend(t->c.ni, t->c.pt, &me, PTL_PRIORITY_LIST,
				      NULL, &h));
	}
	return 0;
}

/*
 * ickpt: checkpoint i (from 0) is of the pages the host log tracks
 * (T_DATA, row 0) or of those aa_dirty tracks (T_HDATA, row 1); the two
 * alternate, the first of each pair alternating per sample.
 */
static int
ickpt_row(uint64_t i)
{
	return (int)((i % 2 + i / 2 % (uint64_t)ucfg.samples) % 2);
}

/*
 * ickpt: one checkpoint of @p row: incremental from the dirty pages (row
 * 0: named by the host log's records, row 1: whose bitmap byte aa_dirty
 * set on the NIC; cleared once copied), the image checked against the
 * memory, then a full copy for comparison (both rows, so that their
 * cycles do the same work); out: incr_us, incr_bytes, full_us, ok
 */
static void
tgt_ckpt(struct tgt *t, int row, double *out)
{
	uint8_t *mem = t->b + (row ? T_HDATA : T_DATA) * PG;
	uint8_t *image = row ? t->himage : t->image;
	uint8_t *bmp = t->b + T_BMP * PG;
	uint64_t bytes = 0;
	double t0, t1, t2;
	unsigned p;
	bool ok;

	t0 = bench_now();
	for (p = 0; p < ND; p++) {
		/* the NIC sets bmp bytes: the flush and the phase word
		 * (acquired) order its DMAs before this read */
		if (row ? !__atomic_load_n(&bmp[p], __ATOMIC_RELAXED) :
		    !t->dirty[p])
			continue;
		memcpy(image + (size_t)p * PG, mem + (size_t)p * PG, PG);
		bytes += PG;
		if (row)
			__atomic_store_n(&bmp[p], 0, __ATOMIC_RELAXED);
		else
			t->dirty[p] = 0;
	}
	t1 = bench_now();
	ok = memcmp(image, mem, ND * PG) == 0;
	t2 = bench_now();
	memcpy(image, mem, ND * PG);
	out[0] = (t1 - t0) * 1e6;
	out[1] = (double)bytes;
	out[2] = (bench_now() - t2) * 1e6;
	out[3] = ok ? 1 : 0;
}

struct tgt_arg {
	int data_mode;
	int id_fd;                  /* writes nid, pid, pt */
	int stop_fd;                /* readable: stop */
};

/* out: [0] bad records, [1] log_bytes, [2] phases done, then 4 per phase */
static int
tgt_child(double *out, void *arg)
{
	const struct tgt_arg *a = arg;
	static struct tgt t;
	uint32_t id[3];
	uint64_t phase = 0, ph;
	unsigned got, idle = 0;
	struct pollfd pf = { .fd = a->stop_fd, .events = POLLIN };

	if (cli_open(&t.c) < 0 || tgt_setup(&t, a->data_mode) < 0)
		return -EIO;
	id[0] = t.c.self.phys.nid;
	id[1] = t.c.self.phys.pid;
	id[2] = t.c.pt;
	if (bench_io_all(a->id_fd, id, sizeof(id), true) < 0)
		return -EIO;
	for (;;) {
		if (spin_aa_log_poll(t.hl, on_host, &t, 256, &got) == PTL_OK) {
			idle = 0;
			continue;
		}
		ph = __atomic_load_n(tword(&t, T_CTL, 0), __ATOMIC_ACQUIRE);
		if (ph != phase && ph <= MAX_PHASES) {
			phase = ph;
			tgt_ckpt(&t, ickpt_row(phase - 1),
				 out + 3 + 4 * (phase - 1));
			out[2] = (double)phase;
			__atomic_store_n(tword(&t, T_CTL, 1), phase,
					 __ATOMIC_RELEASE);
		}
		if (++idle % 64 == 0 && poll(&pf, 1, 0) > 0)
			break;
		sched_yield();
	}
	while (spin_aa_log_poll(t.hl, on_host, &t, 256, &got) == PTL_OK)
		;
	out[0] = (double)t.bad;
	out[1] = (double)t.log_bytes;
	cli_close(&t.c);
	return 0;
}

/* ---- the initiator (node 0) -------------------------------------------------- */

struct ini {
	struct cli c;
	ptl_process_t t;
	ptl_pt_index_t tpt;
	ptl_handle_md_t md;
	uint8_t *buf;               /* ND pages */
	uint64_t flushed[3];        /* processed seen by the last flushes */
};

static int
ini_open(struct ini *in, const uint32_t *id)
{
	ptl_md_t d;

	if (cli_open(&in->c) < 0)
		return -EIO;
	in->t.phys.nid = id[0];
	in->t.phys.pid = id[1];
	in->tpt = id[2];
	in->buf = spin_host_alloc(ND * PG);
	if (in->buf == NULL) {
		bench_err("aa initiator: out of region memory");
		return -ENOMEM;
	}
	memset(in->buf, 0x5a, ND * PG);
	memset(&d, 0, sizeof(d));
	d.start = in->buf;
	d.length = ND * PG;
	d.eq_handle = in->c.eq;
	d.ct_handle = PTL_CT_NONE;
	d.options = PTL_MD_EVENT_SEND_DISABLE;
	CHECK_PTL(PtlMDBind(in->c.ni, &d, &in->md));
	return 0;
}

static int
ini_wait(struct ini *in, ptl_event_kind_t kind)
{
	ptl_event_t ev;
	unsigned which;

	do {
		if (PtlEQPoll(&in->c.eq, 1, WAIT_MS, &ev, &which) != PTL_OK) {
			bench_err("aa initiator: no event %d", kind);
			return -1;
		}
	} while (ev.type != kind);
	if (ev.ni_fail_type != PTL_NI_OK) {
		bench_err("aa initiator: event %d failed: %d", kind,
			  ev.ni_fail_type);
		return -1;
	}
	return 0;
}

static int
ini_put(struct ini *in, ptl_size_t loff, ptl_size_t len, ptl_size_t roff,
	bool ack)
{
	int rc;

	while ((rc = PtlPut(in->md, loff, len, ack ? PTL_ACK_REQ :
			    PTL_NO_ACK_REQ, in->t, in->tpt, MATCH, roff, NULL,
			    0)) == PTL_NO_SPACE)
		sched_yield();
	if (rc != PTL_OK) {
		bench_err("aa initiator: put: %s", spin_strerror(rc));
		return -1;
	}
	return ack ? ini_wait(in, PTL_EVENT_ACK) : 0;
}

static int
ini_get(struct ini *in, ptl_size_t loff, ptl_size_t len, ptl_size_t roff)
{
	int rc;

	while ((rc = PtlGet(in->md, loff, len, in->t, in->tpt, MATCH, roff,
			    NULL)) == PTL_NO_SPACE)
		sched_yield();
	if (rc != PTL_OK) {
		bench_err("aa initiator: get: %s", spin_strerror(rc));
		return -1;
	}
	return ini_wait(in, PTL_EVENT_REPLY);
}

/* flush the host (0), aa_count's (1) or aa_dirty's (2) log: @return 0,
 * -1 */
static int
ini_flush(struct ini *in, int which)
{
	static const uint64_t mb[3] = { MATCH_FLH, MATCH_FLN, MATCH_FLD };
	int rc = spin_aa_flush(in->c.ni, in->t, in->tpt, mb[which], 0,
			       &in->flushed[which], WAIT_MS);

	if (rc != PTL_OK) {
		bench_err("aa initiator: flush: %s", spin_strerror(rc));
		return -1;
	}
	return 0;
}

struct ini_arg {
	int use;
	uint32_t id[3];
	long size;                  /* getlog */
	int rma;                    /* getlog */
};

/* aa-count: out[s * 3 + row] kops; rows none, host, handler */
static int
ini_count(struct ini *in, double *out)
{
	static const unsigned pages[3] = { T_NONE, T_HOST, T_NIC };
	uint64_t sent[3] = { 0 };

	for (long s = 0; s < ucfg.samples; s++)
		for (int k = 0; k < 3; k++) {
			int row = (int)((k + s) % 3);
			double t0 = bench_now(), t;

			for (long i = 0; i < ucfg.ops; i++)
				if (ini_put(in, 0, 8, (pages[row] + i % NCP) *
					    PG + 8 * (i / NCP % 64), false) < 0)
					return -1;
			if ((row == 0 ? ini_put(in, 0, 8, T_CTL * PG + 24,
						true) :
			     ini_flush(in, row - 1)) < 0)
				return -1;
			t = bench_now() - t0;
			sent[row] += (uint64_t)ucfg.ops;
			if (row > 0 && in->flushed[row - 1] < sent[row]) {
				bench_err("aa-count: %" PRIu64 " processed, %"
					  PRIu64 " sent", in->flushed[row - 1],
					  sent[row]);
				return -1;
			}
			out[s * 3 + row] = (double)ucfg.ops / t / 1e3;
		}
	return 0;
}

/* aa-flush: out[(o * samples + s) * 2 + row] ms; rows host, handler */
static int
ini_flushes(struct ini *in, double *out)
{
	for (int o = 0; o < ucfg.noutst; o++)
		for (long s = 0; s < ucfg.samples; s++)
			for (int k = 0; k < 2; k++) {
				int row = (int)((k + s) % 2);
				unsigned base = row ? T_NIC : T_HOST;
				double t0;

				for (long i = 0; i < ucfg.outst[o]; i++)
					if (ini_put(in, 0, 8, (base + i % NCP) *
						    PG, false) < 0)
						return -1;
				t0 = bench_now();
				if (ini_flush(in, row) < 0)
					return -1;
				out[(o * ucfg.samples + s) * 2 + row] =
					(bench_now() - t0) * 1e3;
			}
	return 0;
}

/*
 * aa-ickpt: per (dirty, sample) the same pages written (the same bytes)
 * to both data sets, each followed by its log's flush and a checkpoint:
 * phase 2 (d * samples + s) + k + 1 of row ickpt_row(phase - 1); the
 * target measures; out[(d * samples + s) * 2 + row] the cycle in ms
 */
static int
ini_ickpt(struct ini *in, double *out)
{
	static unsigned pg[ND], sd[ND];
	uint64_t phase = 0, to_hpu = 0, *w = (uint64_t *)in->buf;
	unsigned seed = 1, np;

	for (int d = 0; d < ucfg.ndirty; d++)
		for (long s = 0; s < ucfg.samples; s++) {
			np = 0;
			for (unsigned p = 0; p < ND; p++) {
				seed = seed * 1103515245u + 12345u;
				if ((seed >> 8) % 100 >= (unsigned)ucfg.dirty[d])
					continue;
				pg[np] = p;
				sd[np++] = seed;
			}
			for (int k = 0; k < 2; k++) {
				const int row = ickpt_row(phase);
				const unsigned base = row ? T_HDATA : T_DATA;
				double t0 = bench_now();

				for (unsigned j = 0; j < np; j++) {
					w[8] = sd[j];
					if (ini_put(in, 64, 64, (base + pg[j]) *
						    PG + (sd[j] >> 4) % 63 * 64,
						    false) < 0)
						return -1;
				}
				if (ini_flush(in, row ? 2 : 0) < 0)
					return -1;
				/* aa_dirty ran for every put before it */
				to_hpu += row ? np : 0;
				if (row && in->flushed[2] < to_hpu) {
					bench_err("aa-ickpt: aa_dirty "
						  "processed %" PRIu64 " of %"
						  PRIu64,
						  in->flushed[2], to_hpu);
					return -1;
				}
				w[0] = ++phase;
				if (ini_put(in, 0, 8, T_CTL * PG, true) < 0)
					return -1;
				/* wait for the checkpoint: get the ack word */
				do {
					if (ini_get(in, 16, 8, T_CTL * PG + 8) <
					    0 || bench_now() - t0 >
					    WAIT_MS / 1000.0)
						return -1;
				} while (w[2] != phase);
				out[(d * ucfg.samples + s) * 2 + row] =
					(bench_now() - t0) * 1e3;
			}
		}
	return 0;
}

/* aa-getlog: out[s] us per get */
static int
ini_getlog(struct ini *in, double *out, long size, int rma)
{
	uint64_t span = ND * PG - (uint64_t)size;

	for (long s = 0; s < ucfg.samples; s++) {
		double t0 = bench_now();

		for (long i = 0; i < ucfg.ops; i++) {
			uint64_t off = (uint64_t)i * 4099u % span;

			if (ini_get(in, 0, (ptl_size_t)size, T_DATA * PG +
				    off) < 0)
				return -1;
			/* RMA: the target cannot see the get; the bytes go
			 * back to be logged there */
			if (rma && ini_put(in, 0, (ptl_size_t)size, T_BACK * PG +
					   (uint64_t)i * (uint64_t)size %
					   (NBACK * PG - (uint64_t)size), true) <
			    0)
				return -1;
		}
		if (!rma && ini_flush(in, 0) < 0)
			return -1;
		out[s] = (bench_now() - t0) * 1e6 / (double)ucfg.ops;
	}
	return 0;
}

static int
ini_child(double *out, void *arg)
{
	const struct ini_arg *a = arg;
	static struct ini in;
	int rc;

	if (ini_open(&in, a->id) < 0)
		return -EIO;
	switch (a->use) {
	case U_COUNT:
		rc = ini_count(&in, out);
		break;
	case U_FLUSH:
		rc = ini_flushes(&in, out);
		break;
	case U_ICKPT:
		rc = ini_ickpt(&in, out);
		break;
	default:
		rc = ini_getlog(&in, out, a->size, a->rma);
		break;
	}
	cli_close(&in.c);
	return rc < 0 ? -EIO : 0;
}

/* ---- one round: a spinnic, a target, an initiator ----------------------------- */

#define TGT_OUT (3 + 4 * MAX_PHASES)

/*
 * @p iout receives @p ni doubles of the initiator, @p tout TGT_OUT of the
 * target; @p wire_p (if not NULL) every node's transmitted bytes.
 */
static int
round_run(struct ini_arg *ia, int data_mode, double *iout, size_t ni,
	  double *tout, double *wire_p)
{
	struct bench_spinnic nic = { .pid = -1 };
	struct tgt_arg ta = { .data_mode = data_mode };
	int idp[2] = { -1, -1 }, stp[2] = { -1, -1 }, st, rc;
	char sock[400], logp[320], plugin[PATH_MAX];
	const char *const extra[] = { "--handlers", plugin, NULL };
	pid_t tpid = -1;

	/* the target installs an aa_count context: a plugin family */
	rc = bench_plugin_path(ucfg.handlers, BENCH_AA_PLUGIN, plugin,
			       sizeof(plugin));
	if (rc < 0)
		return rc;
	rc = bench_spinnic_start(&nic, ucfg.spinnic, extra);
	if (rc < 0)
		return rc;
	(void)bench_clients_off_lcore();
	if (pipe(idp) != 0 || pipe(stp) != 0) {
		rc = -errno;
		goto out;
	}
	snprintf(sock, sizeof(sock), "%s/node1.sock", nic.dir);
	setenv("SPINNIC_SOCKET", sock, 1);
	ta.id_fd = idp[1];
	ta.stop_fd = stp[0];
	/* the target: its doubles come back through a third pipe */
	{
		int op[2];

		if (pipe(op) != 0) {
			rc = -errno;
			goto out;
		}
		fflush(NULL);
		tpid = fork();
		if (tpid == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(op[0]);
			memset(tout, 0, TGT_OUT * sizeof(double));
			rc = tgt_child(tout, &ta);
			if (rc == 0 && bench_io_all(op[1], tout,
						    TGT_OUT * sizeof(double),
						    true) < 0)
				rc = -EIO;
			_exit(rc == 0 ? 0 : 1);
		}
		close(op[1]);
		if (tpid < 0) {
			rc = -errno;
			close(op[0]);
			goto out;
		}
		rc = bench_io_all(idp[0], ia->id, sizeof(ia->id), false);
		if (rc < 0) {
			bench_err("aa target did not start");
			close(op[0]);
			goto out;
		}
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		rc = bench_in_child(ini_child, ia, iout, ni, "aa initiator");
		/* stop the target, take its doubles */
		if (write(stp[1], "s", 1) != 1 && rc == 0)
			rc = -EIO;
		if (bench_io_all(op[0], tout, TGT_OUT * sizeof(double), false) <
		    0 && rc == 0) {
			bench_err("aa target failed");
			rc = -EIO;
		}
		close(op[0]);
		if (waitpid(tpid, &st, 0) == tpid && (!WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) && rc == 0)
			rc = -EIO;
		tpid = -1;
	}
out:
	if (tpid > 0) {
		kill(tpid, SIGKILL);
		waitpid(tpid, &st, 0);
	}
	for (int k = 0; k < 2; k++) {
		if (idp[k] >= 0)
			close(idp[k]);
		if (stp[k] >= 0)
			close(stp[k]);
	}
	snprintf(logp, sizeof(logp), "%s.log", nic.dir);
	bench_spinnic_stop(&nic, wire_p != NULL ? logp : NULL);
	if (wire_p != NULL) {
		FILE *f = fopen(logp, "r");
		char line[512];
		double sum = 0;

		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			const char *p = strstr(line, "  tx: pkts ");
			unsigned long long pk, by;

			if (p != NULL && sscanf(p, "  tx: pkts %llu bytes %llu",
						&pk, &by) == 2)
				sum += (double)by;
		}
		if (f != NULL)
			fclose(f);
		unlink(logp);
		*wire_p = sum;
	}
	if (rc == 0 && tout[0] != 0) {
		bench_err("aa target: %.0f records not expected", tout[0]);
		rc = -EIO;
	}
	return rc;
}

/* ---- the subcommands ------------------------------------------------------------ */

static int
count_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "counting", BENCH_COL_STR, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "kops", BENCH_COL_NUM, 1 },
		{ "ratio_none", BENCH_COL_NUM, 3 },
	};
	static const char *const names[3] = { "none", "host", "handler" };
	long per = ucfg.samples * ucfg.rounds;
	double *all = calloc((size_t)per * 3, sizeof(double));
	double *buf = calloc((size_t)ucfg.samples * 3, sizeof(double));
	double *tout = calloc(TGT_OUT, sizeof(double)), m[3];
	struct ini_arg ia = { .use = U_COUNT };
	struct bench_table *tab = NULL;
	int rc = -ENOMEM;

	if (all == NULL || buf == NULL || tout == NULL)
		goto out;
	bench_spinnic_signals();
	for (long r = 0; r < ucfg.rounds; r++) {
		rc = round_run(&ia, T_DATA_WL, buf, (size_t)ucfg.samples * 3,
			       tout, NULL);
		if (rc < 0)
			goto out;
		for (long s = 0; s < ucfg.samples; s++)
			for (int k = 0; k < 3; k++)
				all[k * per + r * ucfg.samples + s] =
					buf[s * 3 + k];
	}
	tab = bench_table_create(cols, 4);
	rc = tab == NULL ? -ENOMEM : 0;
	for (int k = 0; k < 3 && rc == 0; k++)
		m[k] = bench_median(all + k * per, (int)per);
	for (int k = 0; k < 3 && rc == 0; k++) {
		rc = bench_table_row(tab);
		if (rc < 0)
			break;
		bench_table_set_str(tab, "counting", names[k]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "kops", m[k]);
		bench_table_set_num(tab, "ratio_none", m[0] > 0 ? m[k] / m[0] :
				    0);
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# thousand 8-byte puts/s from node 0 to %u pages of a "
		       "client on node 1, %ld per sample, until counted: none "
		       "(unmarked, an acked put ends it), host (W|R|WL, the "
		       "target's thread counts from its log; an active flush "
		       "ends it), handler (W|R|WL, the aa_count access handler "
		       "counts on the NIC with host fetch-adds; a flush ends "
		       "it); medians, rows interleaved\n", NCP, ucfg.ops);
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	free(tout);
	return rc;
}

static int
flush_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "outstanding", BENCH_COL_INT, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "host_ms", BENCH_COL_NUM, 3 },
		{ "handler_ms", BENCH_COL_NUM, 3 },
	};
	static const long def[] = { 0, 10, 100, 1000 };
	long per = ucfg.samples * ucfg.rounds;
	size_t n;
	double *all = NULL, *buf = NULL, *tout = calloc(TGT_OUT, sizeof(double));
	struct ini_arg ia = { .use = U_FLUSH };
	struct bench_table *tab = NULL;
	int rc = -ENOMEM;

	if (ucfg.noutst == 0) {
		ucfg.noutst = 4;
		memcpy(ucfg.outst, def, sizeof(def));
	}
	n = (size_t)ucfg.noutst * (size_t)ucfg.samples * 2;
	all = calloc((size_t)ucfg.noutst * (size_t)per * 2, sizeof(double));
	buf = calloc(n, sizeof(double));
	if (all == NULL || buf == NULL || tout == NULL)
		goto out;
	bench_spinnic_signals();
	for (long r = 0; r < ucfg.rounds; r++) {
		rc = round_run(&ia, T_DATA_WL, buf, n, tout, NULL);
		if (rc < 0)
			goto out;
		for (int x = 0; x < ucfg.noutst; x++)
			for (long s = 0; s < ucfg.samples; s++)
				for (int k = 0; k < 2; k++)
					all[(x * 2 + k) * per + r * ucfg.samples +
					    s] = buf[(x * ucfg.samples + s) * 2 +
						     k];
	}
	tab = bench_table_create(cols, 4);
	rc = tab == NULL ? -ENOMEM : 0;
	for (int x = 0; x < ucfg.noutst && rc == 0; x++) {
		rc = bench_table_row(tab);
		if (rc < 0)
			break;
		bench_table_set_int(tab, "outstanding", ucfg.outst[x]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "host_ms",
				    bench_median(all + (x * 2) * per, (int)per));
		bench_table_set_num(tab, "handler_ms",
				    bench_median(all + (x * 2 + 1) * per,
						 (int)per));
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# ms of one spin_aa_flush after that many 8-byte puts "
		       "(no acks) to W|R|WL pages of a client on another node: "
		       "host = its thread consumes the log, handler = the "
		       "aa_count access handler on the NIC; medians, rows "
		       "interleaved\n");
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	free(tout);
	return rc;
}

/*
 * aa-ickpt: per dirty percentage three rows from the same phases:
 * incr_host (the host log's dirty pages), incr_hpu (aa_dirty's bitmap),
 * full (every page, measured in the host row's phases); time_ratio and
 * bytes_ratio against full, ratio_host time against incr_host; cycle =
 * writes + flush + checkpoint as the initiator sees it; images_ok: the
 * incremental images that equalled the memory (every one, or the bench
 * fails)
 */
static int
ickpt_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "dirty_pct", BENCH_COL_INT, 0 },
		{ "ckpt", BENCH_COL_STR, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "kib", BENCH_COL_NUM, 1 },
		{ "us", BENCH_COL_NUM, 1 },
		{ "time_ratio", BENCH_COL_NUM, 3 },
		{ "bytes_ratio", BENCH_COL_NUM, 3 },
		{ "ratio_host", BENCH_COL_NUM, 3 },
		{ "cycle_ms", BENCH_COL_NUM, 2 },
		{ "images_ok", BENCH_COL_INT, 0 },
	};
	static const char *const names[3] = { "incr_host", "incr_hpu",
					      "full" };
	static const long def[] = { 1, 10, 50 };
	long per = ucfg.samples * ucfg.rounds;
	size_t n;
	double *all = NULL, *buf = NULL, *tout = calloc(TGT_OUT, sizeof(double));
	struct ini_arg ia = { .use = U_ICKPT };
	struct bench_table *tab = NULL;
	long images = 0;
	int rc = -ENOMEM;

	if (ucfg.ndirty == 0) {
		ucfg.ndirty = 3;
		memcpy(ucfg.dirty, def, sizeof(def));
	}
	if ((size_t)ucfg.ndirty * (size_t)ucfg.samples * 2 > MAX_PHASES) {
		bench_err("aa-ickpt: at most %u checkpoints a round (dirty "
			  "values x samples x 2)", MAX_PHASES);
		return -EINVAL;
	}
	n = (size_t)ucfg.ndirty * (size_t)ucfg.samples * 2;
	/* per dirty and row: 3 series (us, bytes, cycle) */
#define ICK(d, row, k) (all + (((size_t)(d) * 3 + (size_t)(row)) * 3 + \
			       (size_t)(k)) * (size_t)per)
	all = calloc((size_t)ucfg.ndirty * 9 * (size_t)per, sizeof(double));
	buf = calloc(n, sizeof(double));
	if (all == NULL || buf == NULL || tout == NULL)
		goto out;
	bench_spinnic_signals();
	for (long r = 0; r < ucfg.rounds; r++) {
		rc = round_run(&ia, T_DATA_WL, buf, n, tout, NULL);
		if (rc < 0)
			goto out;
		if (tout[2] != (double)n) {
			bench_err("aa-ickpt: %.0f checkpoints of %zu", tout[2],
				  n);
			rc = -EIO;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			const double *ph = tout + 3 + 4 * i;
			const int row = ickpt_row(i);
			const size_t ds = i / 2;
			const long d = (long)ds / ucfg.samples;
			const size_t at = (size_t)(r * ucfg.samples) + ds %
					  (size_t)ucfg.samples;

			if (ph[3] != 1) {
				bench_err("aa-ickpt: the %s image rebuilt "
					  "differs from the memory",
					  names[row]);
				rc = 1;
				goto out;
			}
			images++;
			ICK(d, row, 0)[at] = ph[0];
			ICK(d, row, 1)[at] = ph[1];
			ICK(d, row, 2)[at] = buf[i];
			if (row == 0) {
				ICK(d, 2, 0)[at] = ph[2];
				ICK(d, 2, 1)[at] = ND * PG;
			}
		}
		/* both sets had the same pages written: the bitmap must
		 * name exactly the pages the host log did */
		for (int d = 0; d < ucfg.ndirty; d++)
			for (long s = 0; s < ucfg.samples; s++) {
				size_t at = (size_t)(r * ucfg.samples + s);

				if (ICK(d, 0, 1)[at] != ICK(d, 1, 1)[at]) {
					bench_err("aa-ickpt: aa_dirty named "
						  "%.0f KiB, the host log "
						  "%.0f", ICK(d, 1, 1)[at] /
						  1024, ICK(d, 0, 1)[at] /
						  1024);
					rc = 1;
					goto out;
				}
			}
	}
	if (images != 2 * ucfg.ndirty * per) {
		bench_err("aa-ickpt: %ld images checked", images);
		rc = -EIO;
		goto out;
	}
	tab = bench_table_create(cols, 10);
	rc = tab == NULL ? -ENOMEM : 0;
	for (int d = 0; d < ucfg.ndirty && rc == 0; d++) {
		double m[3][3];

		for (int row = 0; row < 3; row++)
			for (int k = 0; k < 3; k++)
				m[row][k] = bench_median(ICK(d, row, k),
							 (int)per);
		for (int row = 0; row < 3 && rc == 0; row++) {
			rc = bench_table_row(tab);
			if (rc < 0)
				break;
			bench_table_set_int(tab, "dirty_pct", ucfg.dirty[d]);
			bench_table_set_str(tab, "ckpt", names[row]);
			bench_table_set_int(tab, "samples", per);
			bench_table_set_num(tab, "kib", m[row][1] / 1024);
			bench_table_set_num(tab, "us", m[row][0]);
			bench_table_set_num(tab, "time_ratio", m[2][0] > 0 ?
					    m[row][0] / m[2][0] : 0);
			bench_table_set_num(tab, "bytes_ratio",
					    m[row][1] / (ND * PG));
			bench_table_set_num(tab, "ratio_host", m[0][0] > 0 ?
					    m[row][0] / m[0][0] : 0);
			if (row == 2)
				continue;
			bench_table_set_num(tab, "cycle_ms", m[row][2]);
			bench_table_set_int(tab, "images_ok", per);
		}
	}
#undef ICK
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# incremental checkpoint of %u data pages (W|R|WL) of "
		       "a client on node 1 after an initiator on node 0 wrote "
		       "64 bytes into dirty_pct %% of them: incr_host = the "
		       "dirty pages named by the access log's records (the "
		       "target's thread consumes it) copied into the image, "
		       "incr_hpu = the same pages of a second set, whose log "
		       "the aa_dirty access handler serves on the NIC (a byte "
		       "per dirty page in a host bitmap, cleared once copied), "
		       "full = every page copied; every incremental image "
		       "checked against the memory byte for byte (images_ok); "
		       "ratios: time and bytes over full, time over incr_host; "
		       "cycle = writes + flush + checkpoint as the initiator "
		       "sees it; medians, rows interleaved\n", ND);
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	free(tout);
	return rc;
}

static int
getlog_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "size", BENCH_COL_INT, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "aa_us", BENCH_COL_NUM, 2 },
		{ "rma_us", BENCH_COL_NUM, 2 },
		{ "time_ratio", BENCH_COL_NUM, 3 },
		{ "aa_wire_b", BENCH_COL_NUM, 0 },
		{ "rma_wire_b", BENCH_COL_NUM, 0 },
		{ "bytes_ratio", BENCH_COL_NUM, 3 },
	};
	static const long def[] = { 64, 1024, 4096 };
	long per = ucfg.samples * ucfg.rounds;
	double *all = NULL, *buf = NULL, *tout = calloc(TGT_OUT, sizeof(double));
	double *wire = NULL;
	struct bench_table *tab = NULL;
	int rc = -ENOMEM;

	if (ucfg.nsizes == 0) {
		ucfg.nsizes = 3;
		memcpy(ucfg.sizes, def, sizeof(def));
	}
	all = calloc((size_t)ucfg.nsizes * 2 * (size_t)per, sizeof(double));
	wire = calloc((size_t)ucfg.nsizes * 2 * (size_t)ucfg.rounds,
		      sizeof(double));
	buf = calloc((size_t)ucfg.samples, sizeof(double));
	if (all == NULL || buf == NULL || tout == NULL || wire == NULL)
		goto out;
	bench_spinnic_signals();
	for (long r = 0; r < ucfg.rounds; r++)
		for (int z = 0; z < ucfg.nsizes; z++)
			for (int k = 0; k < 2; k++) {
				int rma = (int)((k + r + z) % 2);
				struct ini_arg ia = { .use = U_GETLOG,
						      .size = ucfg.sizes[z],
						      .rma = rma };
				double w;

				rc = round_run(&ia, rma ? T_DATA_PLAIN :
					       T_DATA_RLD, buf,
					       (size_t)ucfg.samples, tout, &w);
				if (rc < 0)
					goto out;
				if (!rma && tout[1] != (double)ucfg.sizes[z] *
				    (double)ucfg.ops * (double)ucfg.samples) {
					bench_err("aa-getlog: %.0f bytes "
						  "logged, %ld read", tout[1],
						  ucfg.sizes[z] * ucfg.ops *
						  ucfg.samples);
					rc = -EIO;
					goto out;
				}
				for (long s = 0; s < ucfg.samples; s++)
					all[(z * 2 + rma) * per +
					    r * ucfg.samples + s] = buf[s];
				wire[(z * 2 + rma) * ucfg.rounds + r] =
					w / (double)(ucfg.ops * ucfg.samples);
			}
	tab = bench_table_create(cols, 8);
	rc = tab == NULL ? -ENOMEM : 0;
	for (int z = 0; z < ucfg.nsizes && rc == 0; z++) {
		double aa = bench_median(all + (z * 2) * per, (int)per);
		double rm = bench_median(all + (z * 2 + 1) * per, (int)per);
		double wa = bench_median(wire + (z * 2) * ucfg.rounds,
					 (int)ucfg.rounds);
		double wr = bench_median(wire + (z * 2 + 1) * ucfg.rounds,
					 (int)ucfg.rounds);

		rc = bench_table_row(tab);
		if (rc < 0)
			break;
		bench_table_set_int(tab, "size", ucfg.sizes[z]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "aa_us", aa);
		bench_table_set_num(tab, "rma_us", rm);
		bench_table_set_num(tab, "time_ratio", rm > 0 ? aa / rm : 0);
		bench_table_set_num(tab, "aa_wire_b", wa);
		bench_table_set_num(tab, "rma_wire_b", wr);
		bench_table_set_num(tab, "bytes_ratio", wr > 0 ? wa / wr : 0);
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# gets of size bytes from node 0 to a client on node 1, "
		       "%ld per sample, each waited for, logged at the target: "
		       "aa = pages R|RLD, the target's log keeps the bytes "
		       "(its thread checks the count; a flush ends the "
		       "sample); rma = unmarked pages, the initiator puts the "
		       "bytes back to the target (acked); us per get (medians) "
		       "and bytes on the wire per get (every node's transmitted "
		       "bytes, headers and acknowledgements included, one "
		       "spinnic per size and mode)\n", ucfg.ops);
out:
	bench_table_free(tab);
	free(all);
	free(buf);
	free(tout);
	free(wire);
	return rc;
}

const struct bench_cmd bench_aa_count_cmd = {
	.name = "aa-count",
	.summary = "Active Access: puts/s counted per page by the host or "
		   "by an access handler, against none",
	.opts = uses_opts,
	.opt = uses_opt,
	.run = count_run,
};

const struct bench_cmd bench_aa_getlog_cmd = {
	.name = "aa-getlog",
	.summary = "Active Access: logged gets (R|RLD) against RMA "
		   "put-back, time and bytes on the wire",
	.opts = uses_opts,
	.opt = uses_opt,
	.run = getlog_run,
};

const struct bench_cmd bench_aa_ickpt_cmd = {
	.name = "aa-ickpt",
	.summary = "Active Access: incremental checkpoint from the log "
		   "(host or aa_dirty on the NIC) against a full one",
	.opts = uses_opts,
	.opt = uses_opt,
	.run = ickpt_run,
};

const struct bench_cmd bench_aa_flush_cmd = {
	.name = "aa-flush",
	.summary = "Active Access: flush time against records outstanding",
	.opts = uses_opts,
	.opt = uses_opt,
	.run = flush_run,
};
