/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench rate (issue #13): operations per second through
 * a real `spinnic --virtual 2 --idle-sleep-us 0` (one busy-polling lcore on
 * CPU 0 runs both nodes). One client of node 0 (a forked child, alone on
 * the CPUs off the lcore) keeps a window of --window operations in flight
 * to its own MEs, without acks: every packet goes through the outbound
 * role, the port, the switch and the inbound role. An operation is
 * complete when the target ME's counter (PTL_ME_EVENT_CT_COMM) counts it;
 * a fetching atomic when the initiator's get MD counts its REPLY.
 *
 * Rows: puts of 0, 8 and 2048 bytes (one packet) and of 64 KiB (32
 * packets: a message's packets read together), PtlAtomic and PtlFetchAtomic SUM
 * int64 (8 bytes), and an 8-byte put to an ME with an execution context
 * (--handler, default checksum), each with the source and target buffers
 * in the client's shared region (spin_host_alloc) and in malloc'd memory.
 * Variants are interleaved sample by sample, in rounds of one spinnic each.
 * Run under LD_PRELOAD=libspinnic-heap.so (lib/heap), a third set of rows,
 * "heap", takes its buffers from malloc (the heap's, in the region) while
 * the "malloc" rows keep glibc's (__libc_memalign): the two allocators in
 * one run, interleaved; ratio_malloc compares each row with the malloc
 * row of its operation. The binary exports its shim's spin_host_alloc,
 * spin_host_free and spin_host_contains (heap.dynlist), so that the
 * preloaded heap uses this process's region, not a second libspinnic's.
 *
 * The limit of every row: the raw ring-to-ring packet rate of the same
 * lcore (CPU 0) without Portals, measured in each round before its
 * spinnic starts, in a forked child with its own EAL: mbufs of one 8-byte
 * spinnic frame allocated, sent with rte_eth_tx_burst on one net_ring
 * port, taken with rte_eth_rx_burst from its peer and freed, in bursts of
 * --limit-burst.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <portals4.h>
#include <spin.h>
#include <spin_handler_args.h>
#include <spin_heap.h>
#include <wire.h>

#include "bench.h"
#include "bench_nic.h"

#define EVENT_TIMEOUT_S 10.0
#define TGT_LEN 65536u
#define LIMIT_RING 1024u
#define LIMIT_POOL 4096u

enum { K_PUT, K_ATOMIC, K_FETCH, K_HANDLER };
enum { B_REGION, B_MALLOC, B_HEAP, B_COUNT };

/* glibc's allocator, whatever malloc is (the "malloc" rows) */
extern void *__libc_memalign(size_t align, size_t size);

static const struct rate_var {
	const char *op;
	int kind;
	uint32_t bytes;
} vars[] = {
	{ "put", K_PUT, 8 },
	{ "put", K_PUT, 0 },
	{ "put", K_PUT, 2048 },
	{ "put", K_PUT, 65536 },
	{ "atomic", K_ATOMIC, 8 },
	{ "fetch-atomic", K_FETCH, 8 },
	{ "put+handler", K_HANDLER, 8 },
};

#define N_VARS (sizeof(vars) / sizeof(vars[0]))
#define N_ALL (N_VARS * B_COUNT)

static const char *const buf_names[B_COUNT] = { "region", "malloc",
						 "heap" };

/* Whether libspinnic-heap.so is preloaded and serves malloc from this
 * process's region (then the "heap" rows run). */
static bool
heap_active(void)
{
	static int active = -1;

	if (active < 0) {
		void (*stats)(struct spin_heap_stats *) =
			(void (*)(struct spin_heap_stats *))dlsym(
				RTLD_DEFAULT, "spin_heap_stats");
		struct spin_heap_stats st = { 0 };
		void *p;

		active = 0;
		if (stats != NULL) {
			stats(&st);
			p = malloc(64);
			active = st.enabled && p != NULL &&
				spin_host_contains(p, 64);
			free(p);
		}
	}
	return active == 1;
}

static bool
row_runs(size_t i)
{
	return i / N_VARS != B_HEAP || heap_active();
}

static struct {
	long ops;       /* operations per sample */
	long window;
	long rounds;
	long samples;   /* per round and variant */
	long burst;     /* limit: packets per tx/rx burst */
	const char *handler;
	const char *spinnic;
	const char *spinnic_log;
} rcfg = { 20000, 64, 3, 3, 32, "checksum", NULL, NULL };

static const struct bench_cmd_opt rate_opts[] = {
	{ "ops", 1, "operations per sample (default 20000)" },
	{ "window", 1, "operations in flight (default 64)" },
	{ "rounds", 1, "rounds, one spinnic and one limit measurement each "
		       "(default 3)" },
	{ "samples", 1, "samples per round and row, rows interleaved "
			"(default 3)" },
	{ "limit-burst", 1, "packets per rte_eth_tx_burst/rx_burst of the "
			    "ring-to-ring limit (default 32)" },
	{ "handler", 1, "family of the put+handler rows: checksum (default) "
			"or ddt_vector" },
	{ "spinnic", 1, "spinnic binary (default: <build>/app/spinnic/spinnic "
			"beside this one)" },
	{ "spinnic-log", 1, "keep the last spinnic's output (final counters) "
			    "in this file" },
	{ NULL, 0, NULL },
};

static int
rate_opt(const char *name, const char *arg)
{
	static const struct bench_num_opt nums[] = {
		{ "ops", &rcfg.ops, 1, 100000000 },
		{ "window", &rcfg.window, 1, 512 },
		{ "rounds", &rcfg.rounds, 1, 100 },
		{ "samples", &rcfg.samples, 1, 1000 },
		{ "limit-burst", &rcfg.burst, 1, 256 },
	};

	if (strcmp(name, "spinnic") == 0) {
		rcfg.spinnic = arg;
		return 0;
	}
	if (strcmp(name, "spinnic-log") == 0) {
		rcfg.spinnic_log = arg;
		return 0;
	}
	if (strcmp(name, "handler") == 0) {
		if (strcmp(arg, "checksum") != 0 &&
		    strcmp(arg, "ddt_vector") != 0) {
			bench_err("bad --handler '%s': checksum or ddt_vector",
				  arg);
			return -EINVAL;
		}
		rcfg.handler = arg;
		return 0;
	}
	return bench_opt_num(name, arg, nums, sizeof(nums) / sizeof(nums[0])) ==
		0 ? 0 : -EINVAL;
}

/* ---- the limit: ring to ring on the lcore's CPU ---------------------------- */

static int
limit_port(int port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure((uint16_t)port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup((uint16_t)port, 0, LIMIT_RING,
					    (unsigned)rte_socket_id(), NULL,
					    pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup((uint16_t)port, 0, LIMIT_RING,
					    (unsigned)rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start((uint16_t)port);
	if (rc < 0)
		bench_err("limit port %d: %s", port, rte_strerror(-rc));
	return rc;
}

/* @p npkts packets through the pair; @return seconds, < 0 on failure */
static double
limit_pass(uint16_t tx, uint16_t rx, struct rte_mempool *pool, long npkts,
	   const uint8_t *frame, uint16_t flen)
{
	struct rte_mbuf *m[256], *r[256];
	unsigned burst = (unsigned)rcfg.burst;
	double t0 = bench_now();

	for (long done = 0; done < npkts;) {
		unsigned n = burst, sent = 0, got = 0;

		if ((long)n > npkts - done)
			n = (unsigned)(npkts - done);
		if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
			return -1;
		for (unsigned i = 0; i < n; i++) {
			m[i]->data_len = flen;
			m[i]->pkt_len = flen;
			memcpy(rte_pktmbuf_mtod(m[i], void *), frame, flen);
		}
		while (sent < n)
			sent += rte_eth_tx_burst(tx, 0, m + sent,
						 (uint16_t)(n - sent));
		while (got < n)
			got += rte_eth_rx_burst(rx, 0, r + got,
						(uint16_t)(n - got));
		for (unsigned i = 0; i < n; i++)
			if (rte_pktmbuf_data_len(r[i]) != flen)
				return -1;
		rte_pktmbuf_free_bulk(r, n);
		done += n;
	}
	return bench_now() - t0;
}

/* In the forked child: packets per second, the best of a few passes. */
static double
limit_measure(void)
{
	struct rte_ring *ring[2] = { NULL, NULL };
	struct rte_mempool *pool;
	uint8_t frame[SPINNIC_WIRE_HDR_LEN + 8];
	const uint16_t flen = (uint16_t)sizeof(frame);
	long npkts = rcfg.ops * 4 < 50000 ? 50000 : rcfg.ops * 4;
	double best = 0;
	int a, b;

	if (bench_nic_eal_init() < 0)
		return -1;
	pool = rte_pktmbuf_pool_create("rate_pool", LIMIT_POOL, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	ring[0] = rte_ring_create("rate_r0", LIMIT_RING * 2,
				  (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	ring[1] = rte_ring_create("rate_r1", LIMIT_RING * 2,
				  (int)rte_socket_id(),
				  RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (pool == NULL || ring[0] == NULL || ring[1] == NULL) {
		bench_err("limit: pool or rings: %s", rte_strerror(rte_errno));
		return -1;
	}
	a = rte_eth_from_rings("net_rate_a", &ring[1], 1, &ring[0], 1,
			       rte_socket_id());
	b = rte_eth_from_rings("net_rate_b", &ring[0], 1, &ring[1], 1,
			       rte_socket_id());
	if (a < 0 || b < 0 || limit_port(a, pool) < 0 ||
	    limit_port(b, pool) < 0) {
		bench_err("limit: net_ring ports: %s", rte_strerror(rte_errno));
		return -1;
	}
	memset(frame, 0, sizeof(frame));
	memset(frame, 0xff, 6); /* some header bytes, as a real frame's */
	frame[12] = 0x08;
	for (int p = 0; p < 4; p++) {
		double s = limit_pass((uint16_t)a, (uint16_t)b, pool,
				      p == 0 ? npkts / 4 : npkts, frame, flen);

		if (s <= 0) {
			bench_err("limit: ring-to-ring pass failed");
			return -1;
		}
		if (p > 0 && (best == 0 || (double)npkts / s > best))
			best = (double)npkts / s;
	}
	rte_eth_dev_stop((uint16_t)a);
	rte_eth_dev_stop((uint16_t)b);
	rte_eth_dev_close((uint16_t)a);
	rte_eth_dev_close((uint16_t)b);
	bench_nic_eal_fini();
	return best;
}

static int
limit_child(double *out, void *arg)
{
	(void)arg;
	out[0] = limit_measure();
	return out[0] > 0 ? 0 : -EIO;
}

/* ---- the client -------------------------------------------------------------- */

struct rate_bufs {
	uint8_t *src;     /* operands / put source */
	uint8_t *tgt[N_VARS]; /* one ME window per row */
	uint8_t *fetch;   /* old values of the fetching atomics */
	ptl_handle_md_t md, get_md;
	uint64_t bits0;   /* match bits of row 0 */
};

struct rate_client {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_ct_t ct_tgt, ct_rep;
	ptl_pt_index_t pt;
	ptl_process_t self;
	spin_handle_ctx_t ctx;
	struct rate_bufs b[B_COUNT];
	uint64_t tgt_expect;  /* completions counted so far */
	uint64_t rep_expect;
};

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) { \
		bench_err("rate client: %s: %s", #call, spin_strerror(rc_)); \
		return -EIO; \
	} \
} while (0)

static void *
buf_get(int kind, size_t len)
{
	void *p;

	if (kind == B_REGION)
		return spin_host_alloc(len);
	if (kind == B_MALLOC)
		return __libc_memalign(64, len);
	if (posix_memalign(&p, 64, len) != 0)
		return NULL;
	return p;
}

static int
client_ctx(struct rate_client *c)
{
	struct spin_ctx_desc d;
	struct spin_vec_args va;
	struct spin_csum_args ca;

	memset(&d, 0, sizeof(d));
	d.family = rcfg.handler;
	d.policy = SPIN_SCHED_DEFAULT;
	if (strcmp(rcfg.handler, "checksum") == 0) {
		memset(&ca, 0, sizeof(ca));
		ca.version = SPIN_CSUM_ARGS_VERSION;
		ca.flags = SPIN_CSUM_F_COPY;
		ca.result_off = SPIN_CSUM_RESULT_AFTER;
		d.args = &ca;
		d.args_len = sizeof(ca);
	} else {
		memset(&va, 0, sizeof(va));
		va.version = SPIN_VEC_ARGS_VERSION;
		va.blocklen = 8;
		va.count = 1;
		va.stride = 8;
		va.extent = 8;
		va.nelem = 1;
		d.args = &va;
		d.args_len = sizeof(va);
	}
	CHECK_PTL(spin_ctx_install(c->ni, &d, &c->ctx));
	return 0;
}

static int
client_open(struct rate_client *c)
{
	ptl_ni_limits_t lim;
	ptl_md_t md;

	memset(c, 0, sizeof(*c));
	c->ctx = SPIN_CTX_NONE;
	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &c->ni));
	CHECK_PTL(PtlGetPhysId(c->ni, &c->self));
	CHECK_PTL(PtlEQAlloc(c->ni, 1024, &c->eq));
	CHECK_PTL(PtlPTAlloc(c->ni, 0, c->eq, PTL_PT_ANY, &c->pt));
	CHECK_PTL(PtlCTAlloc(c->ni, &c->ct_tgt));
	CHECK_PTL(PtlCTAlloc(c->ni, &c->ct_rep));
	if (client_ctx(c) < 0)
		return -EIO;
	for (int k = 0; k < B_COUNT; k++) {
		struct rate_bufs *b = &c->b[k];

		if (k == B_HEAP && !heap_active())
			continue;
		b->bits0 = 1 + (uint64_t)k * N_VARS;
		b->src = buf_get(k, TGT_LEN);
		b->fetch = buf_get(k, 64);
		if (b->src == NULL || b->fetch == NULL)
			goto nomem;
		for (unsigned i = 0; i < TGT_LEN; i++)
			b->src[i] = (uint8_t)(i * 13 + 1);
		memset(b->src, 0, 8);
		b->src[0] = 1; /* the int64 operand 1 (little endian) */
		for (size_t v = 0; v < N_VARS; v++) {
			ptl_handle_me_t h;
			ptl_me_t me;

			/* room for the checksum's result after the bytes */
			b->tgt[v] = buf_get(k, TGT_LEN + 64);
			if (b->tgt[v] == NULL)
				goto nomem;
			memset(b->tgt[v], 0, TGT_LEN + 64);
			memset(&me, 0, sizeof(me));
			me.start = b->tgt[v];
			me.length = vars[v].kind == K_HANDLER ?
				8 + sizeof(struct spin_csum_result) : TGT_LEN;
			/* a fetch is counted by its REPLY only */
			me.ct_handle = vars[v].kind == K_FETCH ? PTL_CT_NONE :
				c->ct_tgt;
			me.uid = PTL_UID_ANY;
			me.match_id.phys.nid = PTL_NID_ANY;
			me.match_id.phys.pid = PTL_PID_ANY;
			me.match_bits = b->bits0 + v;
			me.options = PTL_ME_OP_PUT | PTL_ME_OP_GET |
				(vars[v].kind == K_FETCH ? 0 :
				 PTL_ME_EVENT_CT_COMM) |
				PTL_ME_EVENT_SUCCESS_DISABLE |
				PTL_ME_EVENT_LINK_DISABLE |
				PTL_ME_EVENT_UNLINK_DISABLE;
			CHECK_PTL(spin_me_append(c->ni, c->pt, &me,
						 PTL_PRIORITY_LIST,
						 vars[v].kind == K_HANDLER ?
						 c->ctx : SPIN_CTX_NONE, NULL,
						 &h));
		}
		memset(&md, 0, sizeof(md));
		md.start = b->src;
		md.length = TGT_LEN;
		md.eq_handle = PTL_EQ_NONE;
		md.ct_handle = PTL_CT_NONE;
		CHECK_PTL(PtlMDBind(c->ni, &md, &b->md));
		memset(&md, 0, sizeof(md));
		md.start = b->fetch;
		md.length = 64;
		md.eq_handle = PTL_EQ_NONE;
		md.ct_handle = c->ct_rep;
		md.options = PTL_MD_EVENT_CT_REPLY;
		CHECK_PTL(PtlMDBind(c->ni, &md, &b->get_md));
	}
	return 0;
nomem:
	bench_err("rate client: out of buffer memory");
	return -ENOMEM;
}

static int
post_one(struct rate_client *c, struct rate_bufs *b, size_t v)
{
	uint64_t bits = b->bits0 + v;

	switch (vars[v].kind) {
	case K_ATOMIC:
		CHECK_PTL(PtlAtomic(b->md, 0, 8, PTL_NO_ACK_REQ, c->self, c->pt,
				    bits, 0, NULL, 0, PTL_SUM, PTL_INT64_T));
		break;
	case K_FETCH:
		CHECK_PTL(PtlFetchAtomic(b->get_md, 0, b->md, 0, 8, c->self,
					 c->pt, bits, 0, NULL, 0, PTL_SUM,
					 PTL_INT64_T));
		break;
	default:
		CHECK_PTL(PtlPut(b->md, 0, vars[v].bytes, PTL_NO_ACK_REQ,
				 c->self, c->pt, bits, 0, NULL, 0));
		break;
	}
	return 0;
}

/* Completions of @p v's kind so far (and whether any failed). */
static int
done_count(struct rate_client *c, size_t v, uint64_t *n_p)
{
	ptl_ct_event_t e;

	CHECK_PTL(PtlCTGet(vars[v].kind == K_FETCH ? c->ct_rep : c->ct_tgt,
			   &e));
	if (e.failure != 0) {
		bench_err("rate client: %s: %" PRIu64 " failed", vars[v].op,
			  (uint64_t)e.failure);
		return -EIO;
	}
	*n_p = e.success;
	return 0;
}

/* One sample of row @p i (variant, buffers): @return ops/s, < 0 */
static double
sample(struct rate_client *c, size_t i)
{
	size_t v = i % N_VARS;
	struct rate_bufs *b = &c->b[i / N_VARS];
	uint64_t *expect = vars[v].kind == K_FETCH ? &c->rep_expect :
		&c->tgt_expect;
	uint64_t base = *expect, n = 0, posted = 0, spins = 0;
	int64_t before, after;
	double t0, t1, tw = 0;

	memcpy(&before, b->tgt[v], 8);
	t0 = bench_now();
	while (posted < (uint64_t)rcfg.ops) {
		if (posted - n < (uint64_t)rcfg.window) {
			if (post_one(c, b, v) < 0)
				return -1;
			posted++;
			continue;
		}
		if (done_count(c, v, &n) < 0)
			return -1;
		n -= base;
		if (++spins % 65536 == 0) {
			if (tw == 0) {
				tw = bench_now();
			} else if (bench_now() - tw > EVENT_TIMEOUT_S) {
				bench_err("rate client: %s on %s buffers: %"
					  PRIu64 " of %" PRIu64 " done after "
					  "%.0f s", vars[v].op,
					  buf_names[i / N_VARS], n, posted,
					  EVENT_TIMEOUT_S);
				return -1;
			}
		}
	}
	tw = 0;
	while (n < posted) {
		if (done_count(c, v, &n) < 0)
			return -1;
		n -= base;
		if (++spins % 65536 == 0) {
			if (tw == 0) {
				tw = bench_now();
			} else if (bench_now() - tw > EVENT_TIMEOUT_S) {
				bench_err("rate client: %s: %" PRIu64 " of %"
					  PRIu64 " done after %.0f s",
					  vars[v].op, n, posted,
					  EVENT_TIMEOUT_S);
				return -1;
			}
		}
	}
	t1 = bench_now();
	*expect = base + posted;
	/* the atomics added 1 each, once */
	memcpy(&after, b->tgt[v], 8);
	if ((vars[v].kind == K_ATOMIC || vars[v].kind == K_FETCH) &&
	    after - before != (int64_t)posted) {
		bench_err("rate client: %s on %s buffers added %" PRId64
			  ", not %" PRIu64, vars[v].op, buf_names[i / N_VARS],
			  after - before, posted);
		return -1;
	}
	return (double)posted / (t1 - t0);
}

/* The child's work for one spinnic: out[s * N_ALL + i], rows rotated. */
static int
client_child(double *out, void *arg)
{
	struct rate_client c;
	long round = *(long *)arg;

	if (client_open(&c) < 0)
		return -EIO;
	/* warm-up: one short pass of every row */
	{
		long ops = rcfg.ops;

		rcfg.ops = ops / 10 > rcfg.window ? ops / 10 : rcfg.window;
		for (size_t i = 0; i < N_ALL; i++)
			if (row_runs(i) && sample(&c, i) < 0)
				return -EIO;
		rcfg.ops = ops;
	}
	for (long s = 0; s < rcfg.samples; s++)
		for (size_t j = 0; j < N_ALL; j++) {
			/* a different first row every sample and round */
			size_t i = (j + (size_t)(s + round)) % N_ALL;

			if (((s + round) & 1) != 0)
				i = N_ALL - 1 - i;
			out[s * (long)N_ALL + (long)i] = 0;
			if (!row_runs(i))
				continue;
			out[s * (long)N_ALL + (long)i] = sample(&c, i);
			if (out[s * (long)N_ALL + (long)i] < 0)
				return -EIO;
		}
	PtlNIFini(c.ni);
	PtlFini();
	return 0;
}

/* ---- the subcommand ------------------------------------------------------------ */

static int
rate_run(const struct bench_opts *o)
{
	static const struct bench_col cols[] = {
		{ "op", BENCH_COL_STR, 0 },
		{ "bytes", BENCH_COL_INT, 0 },
		{ "buffers", BENCH_COL_STR, 0 },
		{ "samples", BENCH_COL_INT, 0 },
		{ "mops", BENCH_COL_NUM, 3 },
		{ "min_mops", BENCH_COL_NUM, 3 },
		{ "max_mops", BENCH_COL_NUM, 3 },
		{ "ratio_put8", BENCH_COL_NUM, 3 },
		{ "ratio_malloc", BENCH_COL_NUM, 3 },
		{ "limit_mpps", BENCH_COL_NUM, 3 },
		{ "ratio", BENCH_COL_NUM, 3 },
	};
	long per = rcfg.samples * rcfg.rounds;
	double *v = NULL, *buf = NULL, *lim = NULL, med[N_ALL], limit;
	struct bench_table *tab = NULL;
	struct bench_spinnic nic = { .pid = -1 };
	char sock[400];
	cpu_set_t cpus;
	int rc = 0, ncpus = 0, have_cpus;

	(void)o->verify; /* the atomics' sums are always checked */
	v = calloc((size_t)per * N_ALL, sizeof(double));
	buf = calloc((size_t)rcfg.samples * N_ALL, sizeof(double));
	lim = calloc((size_t)rcfg.rounds, sizeof(double));
	if (v == NULL || buf == NULL || lim == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	have_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0;
	/* the heap serves this process (the client), not spinnic */
	if (heap_active())
		unsetenv("LD_PRELOAD");
	bench_spinnic_signals();
	for (long r = 0; r < rcfg.rounds; r++) {
		/* the limit alone on CPU 0 first, then spinnic there */
		rc = bench_in_child(limit_child, NULL, &lim[r], 1,
			      "ring-to-ring limit");
		if (rc < 0)
			goto out;
		rc = bench_spinnic_start(&nic, rcfg.spinnic, NULL);
		if (rc < 0)
			goto out;
		ncpus = bench_clients_off_lcore();
		snprintf(sock, sizeof(sock), "%s/node0.sock", nic.dir);
		setenv("SPINNIC_SOCKET", sock, 1);
		rc = bench_in_child(client_child, &r, buf,
			      (size_t)rcfg.samples * N_ALL, "rate client");
		bench_spinnic_stop(&nic, r == rcfg.rounds - 1 ?
				   rcfg.spinnic_log : NULL);
		if (rc < 0)
			goto out;
		for (long s = 0; s < rcfg.samples; s++)
			for (size_t i = 0; i < N_ALL; i++)
				v[i * (size_t)per + (size_t)(r * rcfg.samples +
							      s)] =
					buf[s * (long)N_ALL + (long)i];
		/* the next limit runs on CPU 0 again */
		if (have_cpus)
			(void)sched_setaffinity(0, sizeof(cpus), &cpus);
	}
	limit = bench_median(lim, (int)rcfg.rounds);
	for (size_t i = 0; i < N_ALL; i++)
		med[i] = bench_median(v + i * (size_t)per, (int)per);
	tab = bench_table_create(cols, (int)(sizeof(cols) / sizeof(cols[0])));
	if (tab == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < N_ALL; i++) {
		size_t k = i / N_VARS, put8 = k * N_VARS;
		double *s = v + i * (size_t)per; /* sorted by the median */
		double mal = med[B_MALLOC * N_VARS + i % N_VARS];

		if (!row_runs(i))
			continue;
		rc = bench_table_row(tab);
		if (rc < 0)
			goto out;
		bench_table_set_str(tab, "op", vars[i % N_VARS].op);
		bench_table_set_int(tab, "bytes", vars[i % N_VARS].bytes);
		bench_table_set_str(tab, "buffers", buf_names[k]);
		bench_table_set_int(tab, "samples", per);
		bench_table_set_num(tab, "mops", med[i] / 1e6);
		bench_table_set_num(tab, "min_mops", s[0] / 1e6);
		bench_table_set_num(tab, "max_mops", s[per - 1] / 1e6);
		bench_table_set_num(tab, "ratio_put8", med[put8] > 0 ?
				    med[i] / med[put8] : 0);
		bench_table_set_num(tab, "ratio_malloc", mal > 0 ?
				    med[i] / mal : 0);
		bench_table_set_num(tab, "limit_mpps", limit / 1e6);
		bench_table_set_num(tab, "ratio", limit > 0 ?
				    med[i] / limit : 0);
	}
	rc = bench_table_emit(tab, o);
	printf("# operations/s (one packet each but the 64 KiB puts), medians of %ld samples of %ld ops "
	       "(%ld rounds, rows interleaved); one client of node 0 keeps "
	       "%ld in flight to its own MEs (no ack; done = counted at the "
	       "target ME, fetch-atomic: REPLY counted at the initiator); "
	       "handler: %s; spinnic --virtual 2 --idle-sleep-us 0 (one "
	       "busy-polling lcore on CPU 0), client busy-polls on %d CPU(s) "
	       "off it; limit: ring-to-ring rte_eth_tx_burst/rx_burst of %u-B "
	       "frames over a net_ring pair, bursts of %ld, on CPU 0 before "
	       "each spinnic; ratio = mops / limit\n", per, rcfg.ops,
	       rcfg.rounds, rcfg.window, rcfg.handler, ncpus,
	       (unsigned)(SPINNIC_WIRE_HDR_LEN + 8), rcfg.burst);
	printf("# buffers: region = spin_host_alloc, malloc = glibc's "
	       "(__libc_memalign), heap = malloc under LD_PRELOAD="
	       "libspinnic-heap.so (%s); ratio_malloc = mops / the malloc "
	       "row's of the same operation\n", heap_active() ? "preloaded" :
	       "not preloaded: no heap rows");
out:
	bench_table_free(tab);
	free(v);
	free(buf);
	free(lim);
	return rc;
}

const struct bench_cmd bench_rate_cmd = {
	.name = "rate",
	.summary = "operations per second (puts, atomics, "
		   "handler puts) through a real spinnic, against the "
		   "lcore's ring-to-ring packet rate",
	.opts = rate_opts,
	.opt = rate_opt,
	.run = rate_run,
};
