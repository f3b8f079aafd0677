/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench wire mode: a generator and the NIC's inbound loop on two
 * ring-backed ethdevs facing each other (see bench_wire.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <spin_handler.h>
#include <wire.h>

#include "bench.h"
#include "bench_nic.h"
#include "bench_wire.h"

#define WIRE_BURST 32u
#define WIRE_RING 1024u
#define WIRE_MAX_PKTS 8192u
#define WIRE_POOL_MAX_BYTES (256ull << 20)
#define WIRE_TIMEOUT_S 30.0
#define WIRE_NID_GEN 0u
#define WIRE_NID_NIC 1u

struct bench_wire {
	struct spin_rt *rt;
	uint32_t blobs[4];          /* NIC memory of the current context */
	unsigned nblobs;
	unsigned nhpu;
	uint32_t payload;
	struct rte_mempool *pool;
	unsigned pool_n;
	struct rte_ring *ring[2];   /* [0] gen -> nic, [1] nic -> gen */
	int port_gen, port_nic;
	struct spinnic_wire_addr addr;
	struct rte_mbuf **frames;
	uint32_t nframes;
	uint64_t msg_id;
	struct bench_host host;
	struct spinnic_wire_stats parse;

	struct bench_hpus hpus;     /* HPU threads 1..nhpu-1 */

	int done;
	uint64_t released;
	struct spin_msg_result res;
};

static unsigned wire_seq; /* unique names of rings, ports, pools */

/* ---- host ops: the buffer ones are bench_nic.c's ----------------------- */

static void
host_msg_done(void *app_msg, const struct spin_msg_result *r)
{
	struct bench_wire *w = app_msg;

	w->res = *r;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

/* The wire NIC whose packets are in flight (one at a time). */
static struct bench_wire *release_wire;

static void
host_pkt_release(void *pkt_cookie)
{
	rte_pktmbuf_free(pkt_cookie);
	if (release_wire != NULL)
		__atomic_fetch_add(&release_wire->released, 1,
				   __ATOMIC_RELEASE);
}

static const struct spin_host_ops wire_host_ops = {
	.direct = bench_host_direct,
	.dma_write = bench_host_dma_write,
	.dma_read = bench_host_dma_read,
	.msg_done = host_msg_done,
	.pkt_release = host_pkt_release,
};

/* ---- HPU threads 1..nhpu-1: bench_hpus (bench_nic.c) ------------------ */

static void
threads_idle(struct bench_wire *w)
{
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	bench_hpus_quiet(&w->hpus);
}

/* ---- ports ------------------------------------------------------------------ */

static int
port_start(int port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure((uint16_t)port, 1, 1, &conf);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup((uint16_t)port, 0, WIRE_RING,
					    (unsigned)rte_socket_id(), NULL,
					    pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup((uint16_t)port, 0, WIRE_RING,
					    (unsigned)rte_socket_id(), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start((uint16_t)port);
	if (rc < 0)
		bench_err("wire port %d: %s", port, rte_strerror(-rc));
	return rc;
}

static void
port_close(int port)
{
	if (port < 0)
		return;
	(void)rte_eth_dev_stop((uint16_t)port);
	(void)rte_eth_dev_close((uint16_t)port);
}

/* ---- the NIC ------------------------------------------------------------------ */

struct bench_wire *
bench_wire_create(unsigned nhpu, uint32_t payload)
{
	struct spin_rt_conf conf;
	struct bench_wire *w;
	char name[RTE_RING_NAMESIZE];
	unsigned seq = wire_seq++, elt;
	int err = EINVAL;

	if (nhpu == 0 || nhpu > SPIN_RT_HPUS_MAX || payload == 0 ||
	    payload > SPINNIC_WIRE_MAX_PAYLOAD ||
	    (uint64_t)payload + SPINNIC_WIRE_HDR_LEN + RTE_PKTMBUF_HEADROOM >
	    UINT16_MAX) {
		bench_err("bad wire NIC: %u HPUs, %u-byte packets", nhpu,
			  payload);
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		bench_err("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	w->nhpu = nhpu;
	w->payload = payload;
	w->port_gen = w->port_nic = -1;
	spinnic_wire_addr_nodes(WIRE_NID_GEN, WIRE_NID_NIC,
				SPINNIC_WIRE_UDP_PORT, &w->addr);

	/* the pool: every frame of the largest message, and the rings' */
	elt = RTE_PKTMBUF_HEADROOM + SPINNIC_WIRE_HDR_LEN + payload;
	w->pool_n = WIRE_MAX_PKTS + 2 * WIRE_RING;
	if ((uint64_t)w->pool_n * (elt + 256) > WIRE_POOL_MAX_BYTES)
		w->pool_n = (unsigned)(WIRE_POOL_MAX_BYTES / (elt + 256));
	snprintf(name, sizeof(name), "bw_pool%u", seq);
	w->pool = rte_pktmbuf_pool_create(name, w->pool_n, 0, 0,
					  (uint16_t)elt, (int)rte_socket_id());
	if (w->pool == NULL) {
		err = rte_errno;
		bench_err("wire mbuf pool of %u: %s", w->pool_n,
			  rte_strerror(err));
		goto fail;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "bw_ring%u_%d", seq, i);
		w->ring[i] = rte_ring_create(name, WIRE_RING * 2,
					     (int)rte_socket_id(),
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (w->ring[i] == NULL) {
			err = rte_errno;
			bench_err("wire ring: %s", rte_strerror(err));
			goto fail;
		}
	}
	/* gen: RX ring 1, TX ring 0; nic: RX ring 0, TX ring 1 */
	snprintf(name, sizeof(name), "net_bw_gen%u", seq);
	w->port_gen = rte_eth_from_rings(name, &w->ring[1], 1, &w->ring[0],
					 1, rte_socket_id());
	snprintf(name, sizeof(name), "net_bw_nic%u", seq);
	w->port_nic = w->port_gen < 0 ? -1 :
		rte_eth_from_rings(name, &w->ring[0], 1, &w->ring[1], 1,
				   rte_socket_id());
	if (w->port_gen < 0 || w->port_nic < 0) {
		err = rte_errno;
		bench_err("wire ports (net_ring): %s", rte_strerror(err));
		goto fail;
	}
	if (port_start(w->port_gen, w->pool) < 0 ||
	    port_start(w->port_nic, w->pool) < 0) {
		err = EIO;
		goto fail;
	}

	memset(&conf, 0, sizeof(conf));
	conf.nic_mem = 64ull << 20;
	conf.nhpu = nhpu;
	conf.pkt_payload = payload;
	conf.handler_time_every = bench_time_every();
	conf.ops = &wire_host_ops;
	conf.families = spin_handler_families;
	w->rt = spin_rt_create(&conf);
	if (w->rt == NULL) {
		err = errno;
		bench_err("spin_rt_create: %s", strerror(err));
		goto fail;
	}
	err = bench_hpus_start(&w->hpus, w->rt, nhpu, &w->done, WIRE_BURST);
	if (err != 0)
		goto fail;
	return w;
fail:
	bench_wire_destroy(w);
	errno = err;
	return NULL;
}

static void
frames_free(struct bench_wire *w)
{
	for (uint32_t i = 0; w->frames != NULL && i < w->nframes; i++)
		rte_pktmbuf_free(w->frames[i]);
	free(w->frames);
	w->frames = NULL;
	w->nframes = 0;
}

/* Free whatever the rings still hold (a failed run). */
static void
rings_drain(struct bench_wire *w)
{
	void *m;

	for (int i = 0; i < 2; i++)
		while (w->ring[i] != NULL &&
		       rte_ring_dequeue(w->ring[i], &m) == 0)
			rte_pktmbuf_free(m);
}

void
bench_wire_destroy(struct bench_wire *w)
{
	if (w == NULL)
		return;
	bench_hpus_stop(&w->hpus);
	if (w->rt != NULL)
		spin_rt_destroy(w->rt);
	frames_free(w);
	rings_drain(w);
	port_close(w->port_gen);
	port_close(w->port_nic);
	for (int i = 0; i < 2; i++)
		rte_ring_free(w->ring[i]);
	rte_mempool_free(w->pool);
	if (release_wire == w)
		release_wire = NULL;
	free(w);
}

unsigned
bench_wire_nhpu(const struct bench_wire *w)
{
	return w->nhpu;
}

uint32_t
bench_wire_payload(const struct bench_wire *w)
{
	return w->payload;
}

int
bench_wire_ctx(struct bench_wire *w, const struct spin_ctx_conf *c,
	       uint32_t *ctx_p)
{
	int rc = spin_rt_ctx_create(w->rt, BENCH_NIC_OWNER, c, ctx_p);

	if (rc < 0)
		bench_err("cannot install a '%s' context: %s", c->family,
			  strerror(-rc));
	return rc;
}

void
bench_wire_ctx_free(struct bench_wire *w, uint32_t ctx)
{
	spin_rt_ctx_free(w->rt, BENCH_NIC_OWNER, ctx);
	bench_wire_blobs_free(w);
}

int
bench_wire_blob(struct bench_wire *w, const void *data, uint64_t len,
		uint32_t *handle_p)
{
	int rc;

	if (w->nblobs == RTE_DIM(w->blobs))
		return -ENOSPC;
	rc = spin_rt_nicmem_alloc(w->rt, BENCH_NIC_OWNER, len, handle_p);
	if (rc == 0) {
		rc = spin_rt_nicmem_write(w->rt, BENCH_NIC_OWNER, *handle_p, 0,
					  data, len);
		if (rc < 0)
			spin_rt_nicmem_free(w->rt, BENCH_NIC_OWNER, *handle_p);
	}
	if (rc < 0)
		return rc;
	w->blobs[w->nblobs++] = *handle_p;
	return 0;
}

void
bench_wire_blobs_free(struct bench_wire *w)
{
	while (w->nblobs > 0)
		spin_rt_nicmem_free(w->rt, BENCH_NIC_OWNER,
				    w->blobs[--w->nblobs]);
}

/* The generator's frames of one message (a put from node 0 to node 1),
 * built before the clock starts. @return 0; negative errno (logged) */
static int
frames_build(struct bench_wire *w, const void *msg, uint64_t len)
{
	uint64_t np = len == 0 ? 1 : (len + w->payload - 1) / w->payload;
	struct spinnic_pkt p;

	frames_free(w);
	if (np > WIRE_MAX_PKTS || np + 2 * WIRE_RING > w->pool_n) {
		bench_err("wire mode: a message of %" PRIu64 " packets is "
			  "more than the %u its pool holds", np,
			  w->pool_n - 2 * WIRE_RING);
		return -E2BIG;
	}
	w->frames = calloc(np, sizeof(*w->frames));
	if (w->frames == NULL ||
	    rte_pktmbuf_alloc_bulk(w->pool, w->frames, (unsigned)np) != 0) {
		free(w->frames);
		w->frames = NULL;
		bench_err("wire mode: no mbufs for %" PRIu64 " frames", np);
		return -ENOMEM;
	}
	w->nframes = (uint32_t)np;
	w->msg_id++;
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_DATA;
	p.op = SPINNIC_WIRE_OP_PUT;
	p.src = (struct spinnic_pid){ WIRE_NID_GEN, 1 };
	p.dst = (struct spinnic_pid){ WIRE_NID_NIC, 1 };
	p.msg_id = w->msg_id;
	p.msg_len = len;
	for (uint64_t i = 0; i < np; i++) {
		uint64_t off = i * w->payload;
		uint32_t plen = (uint32_t)(len - off < w->payload ?
					   len - off : w->payload);
		uint32_t flen = SPINNIC_WIRE_HDR_LEN + plen;
		char *f = rte_pktmbuf_append(w->frames[i], (uint16_t)flen);
		int rc;

		spinnic_wire_pkt_seg(&p, off, plen);
		p.payload = (const uint8_t *)msg + off;
		rc = f == NULL ? -ENOSPC :
			spinnic_wire_build(f, flen, &w->addr, &p);
		if (rc < 0) {
			bench_err("wire mode: frame %" PRIu64 ": %s", i,
				  strerror(-rc));
			frames_free(w);
			return rc;
		}
	}
	return 0;
}

/*
 * The timed part: send every frame through the port pair, receive and
 * parse them; @p on_pkt takes each valid one (and its mbuf), or fails.
 * Ends when *done_p is set. @return 0; negative errno (logged)
 */
typedef int (*wire_pkt_fn)(struct bench_wire *w, const struct spinnic_pkt *p,
			   struct rte_mbuf *m, void *arg);

static int
wire_loop(struct bench_wire *w, wire_pkt_fn on_pkt, void *arg,
	  const int *done_p, int poll_hpu)
{
	struct rte_mbuf *rx[WIRE_BURST];
	double t0 = bench_now();
	uint32_t sent = 0, idle = 0;

	while (!__atomic_load_n(done_p, __ATOMIC_ACQUIRE)) {
		uint16_t nb, k = 0;

		if (sent < w->nframes) {
			uint32_t want = w->nframes - sent;

			k = rte_eth_tx_burst((uint16_t)w->port_gen, 0,
					     w->frames + sent, (uint16_t)(
					     want < WIRE_BURST ? want :
					     WIRE_BURST));
			sent += k;
		}
		nb = rte_eth_rx_burst((uint16_t)w->port_nic, 0, rx, WIRE_BURST);
		for (uint16_t i = 0; i < nb; i++) {
			struct spinnic_pkt p;
			int rc = spinnic_wire_parse(
				rte_pktmbuf_mtod(rx[i], const void *),
				rte_pktmbuf_data_len(rx[i]),
				SPINNIC_WIRE_UDP_PORT, &p);

			spinnic_wire_stats_count(&w->parse, rc);
			if (rc == 0)
				rc = on_pkt(w, &p, rx[i], arg);
			else
				bench_err("wire mode: frame dropped by the "
					  "parser: %s",
					  spinnic_wire_drop_name(rc));
			if (rc < 0) {
				/* the failed frame and the rest are ours */
				for (uint16_t j = i; j < nb; j++)
					rte_pktmbuf_free(rx[j]);
				for (uint32_t j = sent; j < w->nframes; j++)
					rte_pktmbuf_free(w->frames[j]);
				return rc;
			}
		}
		if (poll_hpu && spin_hpu_poll(w->rt, 0, WIRE_BURST) != 0)
			idle = 0;
		else if (nb == 0 && k == 0 && ++idle % 4096 == 0 &&
			 bench_now() - t0 > WIRE_TIMEOUT_S) {
			bench_err("wire mode: message not done after %.0f s",
				  WIRE_TIMEOUT_S);
			for (uint32_t j = sent; j < w->nframes; j++)
				rte_pktmbuf_free(w->frames[j]);
			return -ETIMEDOUT;
		}
	}
	/* every frame was sent and taken: the ethdevs are empty again */
	if (sent != w->nframes) {
		bench_err("wire mode: done after %u of %u frames", sent,
			  w->nframes);
		return -EIO;
	}
	return 0;
}

struct nic_arg {
	uint32_t ctx;
	struct spin_msg *m;
	uint64_t win_len;
};

/* A frame for the runtime: the header one starts the message. */
static int
nic_pkt(struct bench_wire *w, const struct spinnic_pkt *p, struct rte_mbuf *mb,
	void *arg)
{
	struct nic_arg *a = arg;
	int rc;

	if (p->flags & SPINNIC_WIRE_F_HEADER) {
		struct spin_msg_info info;

		if (a->m != NULL) {
			bench_err("wire mode: a second header packet");
			return -EPROTO;
		}
		memset(&info, 0, sizeof(info));
		info.src_nid = p->src.nid;
		info.src_pid = p->src.pid;
		info.uid = p->uid;
		info.pt_index = p->pt_index;
		info.match_bits = p->match_bits;
		info.hdr_data = p->hdr_data;
		info.length = p->msg_len;
		info.remote_offset = p->remote_offset;
		info.msg_id = p->msg_id;
		info.op = p->op;
		info.pkt_payload = w->payload;
		a->m = spin_msg_start(w->rt, a->ctx, &info, &w->host,
				      w->host.addr, a->win_len, w);
		if (a->m == NULL) {
			bench_err("spin_msg_start: %s", strerror(errno));
			return -errno;
		}
	} else if (a->m == NULL) {
		bench_err("wire mode: a packet before the header packet");
		return -EPROTO;
	}
	while ((rc = spin_msg_packet(a->m, p->payload, p->pay_len, p->offset,
				     mb)) == -ENOBUFS)
		spin_hpu_poll(w->rt, 0, WIRE_BURST);
	if (rc < 0) {
		bench_err("spin_msg_packet at %" PRIu64 ": %s", p->offset,
			  strerror(-rc));
		spin_msg_abort(a->m);
		return rc;
	}
	return 0;
}

double
bench_wire_run(struct bench_wire *w, uint32_t ctx, const void *msg,
	       uint64_t len, void *win, uint64_t win_len,
	       struct spin_msg_result *r_p)
{
	struct nic_arg a = { ctx, NULL, win_len };
	double t0, t1, tr;
	uint32_t np;
	int rc;

	rc = frames_build(w, msg, len);
	if (rc < 0)
		return rc;
	np = w->nframes;
	w->host = (struct bench_host){ win, (uint64_t)(uintptr_t)win, win_len };
	__atomic_store_n(&w->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&w->released, 0, __ATOMIC_RELAXED);
	release_wire = w;
	bench_hpus_arm(&w->hpus);

	t0 = bench_now();
	rc = wire_loop(w, nic_pkt, &a, &w->done, 1);
	t1 = bench_now();
	/* the generator's mbufs are the runtime's or freed now */
	free(w->frames);
	w->frames = NULL;
	w->nframes = 0;
	if (rc < 0) {
		threads_idle(w);
		rings_drain(w);
		return rc;
	}
	threads_idle(w);
	if (r_p != NULL)
		*r_p = w->res;
	tr = bench_now();
	while (__atomic_load_n(&w->released, __ATOMIC_ACQUIRE) != np &&
	       bench_now() - tr < 1.0)
		rte_pause();
	if (__atomic_load_n(&w->released, __ATOMIC_ACQUIRE) != np) {
		bench_err("wire mode: %" PRIu64 " of %u packets released at "
			  "msg_done", w->released, np);
		return -EIO;
	}
	return t1 - t0;
}

struct contig_arg {
	uint8_t *dst;
	uint64_t len, got;
	int done;
};

static int
contig_pkt(struct bench_wire *w, const struct spinnic_pkt *p,
	   struct rte_mbuf *mb, void *arg)
{
	struct contig_arg *a = arg;

	(void)w;
	if (p->msg_len != a->len) {
		bench_err("wire mode: a frame of another message");
		return -EPROTO;
	}
	memcpy(a->dst + p->offset, p->payload, p->pay_len);
	rte_pktmbuf_free(mb);
	a->got += p->pay_len;
	if (a->got >= a->len)
		__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return 0;
}

double
bench_wire_run_contig(struct bench_wire *w, const void *msg, uint64_t len,
		      void *dst)
{
	struct contig_arg a = { dst, len, 0, 0 };
	double t0, t1;
	int rc;

	rc = frames_build(w, msg, len);
	if (rc < 0)
		return rc;
	t0 = bench_now();
	rc = wire_loop(w, contig_pkt, &a, &a.done, 0);
	t1 = bench_now();
	free(w->frames);
	w->frames = NULL;
	w->nframes = 0;
	if (rc < 0) {
		rings_drain(w);
		return rc;
	}
	return t1 - t0;
}
