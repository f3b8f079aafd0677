/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench staging (issue #19; paper 003 Fig. 4, notes-002_003 §5.6
 * row `staging`, target T13): what staging a message through NIC memory
 * costs. A real `spinnic --virtual 2 --idle-sleep-us 0`; this process is
 * rank 0 on node 0, a forked child rank 1 on node 1. Every iteration is a
 * non-blocking two-way exchange, as the paper's concurrent isend/irecv +
 * waitall: both ranks put --sizes bytes to each other (PTL_CT_ACK_REQ) and
 * wait until their own put is acknowledged and the peer's has arrived
 * (two counters, PtlCTWait). The put comes from one of two MDs over the
 * same buffer:
 *   direct   packets built straight from host memory (spinnic's path)
 *   staged   spin.h SPIN_MD_STAGE: spinnic first copies the whole message
 *            into NIC memory, then sends from there (the BluesMPI
 *            analog: host -> DPU memory, then DPU -> remote host)
 * The two alternate iteration by iteration, so both see the same machine.
 * Rank 0 times each exchange, from its put to both counters; medians. Every exchange's bytes are
 * checked at both ends (a per-iteration pattern). Buffers are in the
 * region (SPINNIC_REGION_SIZE is set for them).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <portals4.h>
#include <spin.h>

#include "bench.h"

#define MAXSIZES 16
#define MATCH 0x5747ull
#define WAIT_MS 30000

enum { V_DIRECT, V_STAGED, V_COUNT };
static const char *const var_names[V_COUNT] = { "direct", "staged" };

static struct {
	long sizes[MAXSIZES];
	unsigned nsizes;
	long iters;
	long warmup;
	const char *spinnic;
	const char *spinnic_log;
} scfg = { { 8, 1024, 16384, 65536, 262144, 1048576, 4194304 }, 7, 200, 20,
	   NULL, NULL };

static const struct bench_cmd_opt staging_opts[] = {
	{ "sizes", 1, "comma-separated message bytes (default 8,1024,16384,"
		      "65536,262144,1048576,4194304; at most 64 MiB)" },
	{ "iters", 1, "timed exchanges per size and variant (default 200)" },
	{ "warmup", 1, "untimed exchanges first (default 20)" },
	{ "spinnic", 1, "spinnic binary (default: beside spinnic-bench)" },
	{ "spinnic-log", 1, "keep spinnic's output in this file" },
	{ NULL, 0, NULL },
};

static int
staging_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "iters", &scfg.iters, 1, 1000000 },
		{ "warmup", &scfg.warmup, 0, 1000000 },
	};
	char *end;

	if (strcmp(name, "sizes") == 0) {
		const char *p = arg;

		scfg.nsizes = 0;
		do {
			long v;

			if (scfg.nsizes == MAXSIZES) {
				bench_err("--sizes: at most %d", MAXSIZES);
				return -EINVAL;
			}
			errno = 0;
			v = strtol(p, &end, 10);
			if (errno != 0 || end == p || v < 1 || v > (64l << 20) ||
			    (*end != ',' && *end != '\0')) {
				bench_err("--sizes: expected numbers of 1 to "
					  "67108864 separated by commas");
				return -EINVAL;
			}
			scfg.sizes[scfg.nsizes++] = v;
			p = end + 1;
		} while (*end == ',');
		return 0;
	}
	if (strcmp(name, "spinnic") == 0) {
		scfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		scfg.spinnic_log = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0]));
}

/* ---- one rank ------------------------------------------------------------ */

struct rank {
	unsigned me;
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
	ptl_handle_ct_t ct_recv, ct_send;
	ptl_handle_me_t meh;
	ptl_handle_md_t md[V_COUNT];
	uint8_t *sbuf, *rbuf;
	ptl_process_t peer;
	ptl_pt_index_t peer_pt;
	uint64_t recvd, sent;   /* counter values reached */
};

struct pid_pt {
	uint32_t nid, pid, pt;
};

#define RCHECK(r, call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("rank %u: %s: %d", (r)->me, #call, rc_); \
		return -EIO; \
	} \
} while (0)

static uint8_t
pat(unsigned from, long it, size_t i)
{
	return (uint8_t)(i * 13 + (i >> 10) + (size_t)it * 7 + from * 101 + 1);
}

static int
rank_open(struct rank *r, size_t maxb, int rfd, int wfd)
{
	struct pid_pt self, other;
	ptl_process_t id;
	ptl_md_t md;
	ptl_me_t me;

	RCHECK(r, PtlInit());
	RCHECK(r, PtlNIInit(PTL_IFACE_DEFAULT,
			    PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY,
			    NULL, NULL, &r->ni));
	RCHECK(r, PtlGetPhysId(r->ni, &id));
	RCHECK(r, PtlEQAlloc(r->ni, 64, &r->eq));
	RCHECK(r, PtlPTAlloc(r->ni, 0, r->eq, PTL_PT_ANY, &r->pt));
	RCHECK(r, PtlCTAlloc(r->ni, &r->ct_recv));
	RCHECK(r, PtlCTAlloc(r->ni, &r->ct_send));
	r->sbuf = spin_host_alloc(maxb);
	r->rbuf = spin_host_alloc(2 * maxb);
	if (r->sbuf == NULL || r->rbuf == NULL) {
		bench_err("rank %u: spin_host_alloc(%zu): %s", r->me, maxb,
			  strerror(errno));
		return -ENOMEM;
	}
	memset(r->sbuf, 0, maxb);
	memset(r->rbuf, 0, 2 * maxb);
	memset(&me, 0, sizeof(me));
	me.start = r->rbuf;
	me.length = 2 * maxb;
	me.ct_handle = r->ct_recv;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE |
		PTL_ME_EVENT_UNLINK_DISABLE;
	RCHECK(r, PtlMEAppend(r->ni, r->pt, &me, PTL_PRIORITY_LIST, NULL,
			      &r->meh));
	for (int v = 0; v < V_COUNT; v++) {
		memset(&md, 0, sizeof(md));
		md.start = r->sbuf;
		md.length = maxb;
		md.eq_handle = PTL_EQ_NONE;
		md.ct_handle = r->ct_send;
		md.options = PTL_MD_EVENT_CT_ACK |
			(v == V_STAGED ? SPIN_MD_STAGE : 0);
		RCHECK(r, PtlMDBind(r->ni, &md, &r->md[v]));
	}
	self = (struct pid_pt){ id.phys.nid, id.phys.pid, r->pt };
	if (bench_io_all(wfd, &self, sizeof(self), true) != 0 ||
	    bench_io_all(rfd, &other, sizeof(other), false) != 0) {
		bench_err("rank %u: the other rank did not start", r->me);
		return -EIO;
	}
	r->peer.phys.nid = other.nid;
	r->peer.phys.pid = other.pid;
	r->peer_pt = (ptl_pt_index_t)other.pt;
	return 0;
}

static void
rank_close(struct rank *r)
{
	for (int v = 0; v < V_COUNT; v++)
		PtlMDRelease(r->md[v]);
	PtlMEUnlink(r->meh);
	PtlCTFree(r->ct_send);
	PtlCTFree(r->ct_recv);
	PtlNIFini(r->ni);
	PtlFini();
}

/* Wait until @p ct reaches @p want with no failure. */
static int
ct_reach(struct rank *r, ptl_handle_ct_t ct, uint64_t want, const char *what)
{
	ptl_ct_event_t ev;
	unsigned which;
	int rc;

	rc = PtlCTPoll(&ct, &want, 1, WAIT_MS, &ev, &which);
	if (rc != PTL_OK || ev.failure != 0) {
		bench_err("rank %u: %s: counter %" PRIu64 " failures %" PRIu64
			  " (wanted %" PRIu64 "), rc %d", r->me, what,
			  (uint64_t)ev.success, (uint64_t)ev.failure, want,
			  rc);
		return -EIO;
	}
	return 0;
}

/* One exchange of @p len bytes through variant @p v, iteration @p it,
 * into half (it & 1) of the peer's buffer (its rank may still check the
 * other half: it is at most one exchange behind); the bytes that arrived
 * checked. *us_p: from the put to both counters, in µs. */
static int
exchange(struct rank *r, int v, size_t len, long it, size_t half,
	 double *us_p)
{
	const uint8_t *in = r->rbuf + (size_t)(it & 1) * half;
	double t0;

	for (size_t i = 0; i < len; i++)
		r->sbuf[i] = pat(r->me, it, i);
	t0 = bench_now();
	RCHECK(r, PtlPut(r->md[v], 0, len, PTL_CT_ACK_REQ, r->peer, r->peer_pt,
			 MATCH, (ptl_size_t)(it & 1) * half, NULL, 0));
	if (ct_reach(r, r->ct_send, ++r->sent, "own put") != 0 ||
	    ct_reach(r, r->ct_recv, ++r->recvd, "peer's put") != 0)
		return -EIO;
	*us_p = (bench_now() - t0) * 1e6;
	for (size_t i = 0; i < len; i++)
		if (in[i] != pat(1 - r->me, it, i)) {
			bench_err("rank %u: %s exchange %ld of %zu bytes: byte "
				  "%zu is %#x, wanted %#x", r->me, var_names[v],
				  it, len, i, in[i], pat(1 - r->me, it, i));
			return -EIO;
		}
	return 0;
}

/* Every size, every variant alternating; rank 0 records the times (µs)
 * in t[size][variant][iteration]. */
static int
rank_run(struct rank *r, size_t maxb, int rfd, int wfd, double *t)
{
	long per = scfg.warmup + scfg.iters, it = 0;
	int rc = rank_open(r, maxb, rfd, wfd);

	for (unsigned z = 0; z < scfg.nsizes && rc == 0; z++)
		for (long i = 0; i < 2 * per && rc == 0; i++, it++) {
			int v = (int)(i & 1);
			double us;

			rc = exchange(r, v, (size_t)scfg.sizes[z], it, maxb,
				      &us);
			if (rc == 0 && t != NULL && i / 2 >= scfg.warmup)
				t[((size_t)z * V_COUNT + (size_t)v) *
				  (size_t)scfg.iters + (size_t)(i / 2 -
								scfg.warmup)] =
					us;
		}
	rank_close(r);
	return rc;
}

/* ---- the subcommand ------------------------------------------------------ */

static int
staging_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "bytes", BENCH_COL_INT, 0 },
		{ "variant", BENCH_COL_STR, 0 },
		{ "iters", BENCH_COL_INT, 0 },
		{ "exchange_us", BENCH_COL_NUM, 2 },
		{ "p10_us", BENCH_COL_NUM, 2 },
		{ "p90_us", BENCH_COL_NUM, 2 },
		{ "gbit_s", BENCH_COL_NUM, 2 },
		{ "staged/direct", BENCH_COL_NUM, 3 },
	};
	struct bench_spinnic nic = { .pid = -1 };
	struct bench_pair pair = { .child = -1, .rd = -1, .wr = -1 };
	struct bench_table *tab = NULL;
	size_t maxb = 0, n;
	struct rank r0, r1;
	double *t = NULL;
	char v[32];
	int rc, ncpus;

	(void)o->verify; /* every exchange is checked */
	for (unsigned z = 0; z < scfg.nsizes; z++)
		if ((size_t)scfg.sizes[z] > maxb)
			maxb = (size_t)scfg.sizes[z];
	n = (size_t)scfg.nsizes * V_COUNT * (size_t)scfg.iters;
	t = calloc(n, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	/* the three buffers, with room to spare */
	snprintf(v, sizeof(v), "%zuM", 3 * maxb / (1 << 20) + 8);
	setenv("SPINNIC_REGION_SIZE", v, 1);
	bench_spinnic_signals();
	/* room for a staged copy of the largest message per client */
	snprintf(v, sizeof(v), "%zuM", 2 * maxb / (1 << 20) + 16);
	rc = bench_spinnic_start(&nic, scfg.spinnic,
				 (const char *const[]){ "--nic-mem", v, NULL });
	if (rc < 0)
		goto out;
	ncpus = bench_clients_off_lcore();
	rc = bench_pair_fork(&pair, &nic);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		memset(&r1, 0, sizeof(r1));
		r1.me = 1;
		_exit(rank_run(&r1, maxb, pair.rd, pair.wr, NULL) == 0 ? 0 :
		      1);
	}
	memset(&r0, 0, sizeof(r0));
	r0.me = 0;
	rc = rank_run(&r0, maxb, pair.rd, pair.wr, t);
	rc = bench_pair_end(&pair, rc);
	if (rc < 0)
		goto out;

	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned z = 0; z < scfg.nsizes && rc == 0; z++) {
		double med[V_COUNT];

		for (int k = 0; k < V_COUNT; k++) {
			double *l = t + ((size_t)z * V_COUNT + (size_t)k) *
					(size_t)scfg.iters;

			med[k] = bench_median(l, (int)scfg.iters); /* sorts */
			rc = bench_table_row(tab);
			if (rc < 0)
				break;
			bench_table_set_int(tab, "bytes", scfg.sizes[z]);
			bench_table_set_str(tab, "variant", var_names[k]);
			bench_table_set_int(tab, "iters", scfg.iters);
			bench_table_set_num(tab, "exchange_us", med[k]);
			bench_table_set_num(tab, "p10_us",
					    bench_percentile(l, scfg.iters, 10));
			bench_table_set_num(tab, "p90_us",
					    bench_percentile(l, scfg.iters, 90));
			/* both directions' bytes */
			bench_table_set_num(tab, "gbit_s",
					    bench_gbit_s(2 * scfg.sizes[z],
							 med[k] * 1e-6));
			bench_table_set_num(tab, "staged/direct",
					    med[V_DIRECT] > 0 ?
					    med[k] / med[V_DIRECT] : 0);
		}
	}
	if (rc == 0)
		rc = bench_table_emit(tab, o);
	if (rc == 0)
		printf("# two-way exchange (both ranks put, then wait for "
		       "their ACK and the peer's put), median µs, variants "
		       "alternating; spinnic --virtual 2 --idle-sleep-us 0 "
		       "(busy-polling lcore on CPU 0); ranks on %d CPU(s) off "
		       "it\n", ncpus);
out:
	bench_pair_end(&pair, -1);
	bench_spinnic_stop(&nic, scfg.spinnic_log);
	bench_table_free(tab);
	free(t);
	return rc;
}

const struct bench_cmd bench_staging_cmd = {
	.name = "staging",
	.summary = "two-way exchange latency, sent directly or staged "
		   "through NIC memory (paper 003 Fig. 4)",
	.opts = staging_opts,
	.opt = staging_opt,
	.run = staging_run,
};
