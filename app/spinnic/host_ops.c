/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host operations of the sPIN runtime (struct spin_host_ops): what a
 * handler may do outside the NIC (host memory, counters, puts) and how the
 * runtime hands back messages and packets. Called on the HPU lcores; puts
 * go to the outbound role through eng_submit (commands.c).
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "engine.h"

/* A marked page is never handed out directly: handlers then fall back
 * to per-DMA calls, which Active Access checks and logs. */
static void *
host_direct(void *host, uint64_t addr, size_t len)
{
	if (ptl_host_marked(host, addr, len))
		return NULL;
	return ptl_host_ptr(host, addr, len);
}

/* Without a message: an outbound job reading its own client's MD, a
 * local access (Active Access marks do not apply). */
static int
host_dma_write(void *host, uint64_t addr, const void *src, size_t len)
{
	return ptl_host_write(host, addr, src, len);
}

static int
host_dma_read(void *host, uint64_t addr, void *dst, size_t len)
{
	return ptl_host_read(host, addr, dst, len);
}

/* A message's handler DMA: Active Access records name its initiator and
 * the offset in the ME window (the message offset for contiguous MEs). */
static void
handler_src_of(const struct in_msg *e, uint64_t addr, struct ptl_aa_src *s)
{
	memset(s, 0, sizeof(*s));
	s->nid = e->match.initiator.nid;
	s->pid = e->match.initiator.pid;
	s->msg_id = e->match.msg_id;
	s->msg_off = addr >= e->match.start ? addr - e->match.start : 0;
	s->hdr_data = e->match.hdr_data;
	s->handler = true;
	/* a full back-pressuring log holds its records on the NIC */
	s->defer = true;
}

static int
host_dma_write_msg(void *host, void *app_msg, uint64_t addr, const void *src,
		   size_t len)
{
	struct ptl_aa_src s;

	handler_src_of(app_msg, addr, &s);
	return ptl_host_access_remote(host, addr, (void *)(uintptr_t)src, len,
				      true, &s);
}

static int
host_dma_read_msg(void *host, void *app_msg, uint64_t addr, void *dst,
		  size_t len)
{
	struct ptl_aa_src s;

	handler_src_of(app_msg, addr, &s);
	return ptl_host_access_remote(host, addr, dst, len, false, &s);
}

/*
 * A handler's 8-byte host atomic (spin_host_fetch_add/swap/cas): a
 * Portals atomic on uint64, so the same mechanism as the NIC's Portals
 * atomics on that word (CPU atomics on region memory, the bounce lock on
 * malloc'd memory). A message's handler never reaches a marked page this
 * way (no record could say what it did); an access handler works for the
 * log's owner, where marks do not apply.
 */
static int
host_atomic64(void *host, void *app_msg, uint64_t addr, unsigned op,
	      uint64_t v, uint64_t cmp, uint64_t *old_p)
{
	static const unsigned ptl_op[] = {
		[SPIN_HOST_ATOMIC_FADD] = SPINNIC_PTL_SUM,
		[SPIN_HOST_ATOMIC_SWAP] = SPINNIC_PTL_SWAP,
		[SPIN_HOST_ATOMIC_CAS] = SPINNIC_PTL_CSWAP,
	};

	if (op > SPIN_HOST_ATOMIC_CAS)
		return -EINVAL;
	if (app_msg != NULL && ptl_host_marked(host, addr, sizeof(v)))
		return -EACCES;
	return ptl_host_atomic(host, addr, ptl_op[op], SPINNIC_PTL_UINT64_T,
			       &v, op == SPIN_HOST_ATOMIC_CAS ? &cmp : NULL,
			       sizeof(v), old_p);
}

/* An Active Access record consumed on the NIC (ptl_aa_poll from an HPU
 * thread): the context's access handler, on that HPU. */
int
spinnic_aa_access(void *arg, struct ptl_client *c, uint32_t ctx,
		  uint64_t win_addr, uint64_t win_len,
		  const struct spinnic_aa_rec *rec, const void *data)
{
	const struct spinnic_task *t = arg;
	struct spin_access a = {
		.kind = rec->kind,
		.flags = rec->flags,
		.len = rec->len,
		.mode = rec->mode,
		.src_nid = rec->src_nid,
		.src_pid = rec->src_pid,
		.addr = rec->addr,
		.win_off = rec->addr >= win_addr &&
			   rec->addr - win_addr < win_len ?
			   rec->addr - win_addr : UINT64_MAX,
		.msg_id = rec->msg_id,
		.msg_off = rec->msg_off,
		.hdr_data = rec->hdr_data,
		.data = rec->len != 0 ? data : NULL,
	};

	return spin_rt_access_run(t->node->rt, t->hpu, ptl_client_id(c).pid,
				  ctx, c, win_addr, win_len, &a);
}

static int
host_ct_inc(void *host, void *app_msg, uint64_t n)
{
	const struct in_msg *e = app_msg;

	if (e->match.ct == SPINNIC_HANDLE_NONE)
		return -ENOENT;
	return ptl_ct_inc(host, e->match.ct, n, 0);
}

/*
 * A put issued by a handler (spin_put_from_nic/host): an initiator
 * operation of the ME's owner without events or ack, submitted to the
 * outbound role like any other (eng_submit); bytes from NIC memory are
 * copied now, bytes of host memory read when its packets are built.
 */
static int
handler_put(struct ptl_client *c, struct in_msg *e,
	    const struct spin_put_req *req, const void *src, uint64_t addr,
	    size_t len)
{
	struct spinnic_engine *eng = e->eng;
	struct ptl_cmd cmd;

	if (spinnic_node_txq(eng->node, req->nid) == UINT16_MAX)
		return -EINVAL; /* no port reaches it */
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = SPINNIC_CMD_PUT;
	cmd.ack_req = SPINNIC_PTL_NO_ACK_REQ;
	cmd.ni = cmd.md = cmd.eq = cmd.ct = SPINNIC_HANDLE_NONE;
	cmd.local_addr = addr;
	cmd.length = len;
	cmd.target.nid = req->nid;
	cmd.target.pid = req->pid;
	cmd.pt_index = req->pt_index;
	cmd.uid = ptl_client_uid(c);
	cmd.match_bits = req->match_bits;
	cmd.remote_offset = req->remote_offset;
	cmd.hdr_data = req->hdr_data;
	return eng_submit(eng, c, &cmd, src);
}

static int
host_put_from_nic(void *host, void *app_msg, const struct spin_put_req *req,
		  const void *src, size_t len)
{
	return handler_put(host, app_msg, req, src, 0, len);
}

static int
host_put_from_host(void *host, void *app_msg, const struct spin_put_req *req,
		   uint64_t addr, size_t len)
{
	return handler_put(host, app_msg, req, NULL, addr, len);
}

static void
host_msg_done(void *app_msg, const struct spin_msg_result *r)
{
	struct in_msg *e = app_msg;

	e->res = *r;
	/* the ring holds more than the runtime's messages: never full */
	while (rte_ring_mp_enqueue(e->eng->done, e) != 0)
		rte_pause();
}

static void
host_pkt_release(void *pkt_cookie)
{
	rte_pktmbuf_free(pkt_cookie);
}

static void
host_pkt_release_burst(void *const *pkt_cookies, unsigned n)
{
	rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)pkt_cookies, n);
}

const struct spin_host_ops spinnic_engine_host_ops = {
	.direct = host_direct,
	.dma_write = host_dma_write,
	.dma_read = host_dma_read,
	.dma_write_msg = host_dma_write_msg,
	.dma_read_msg = host_dma_read_msg,
	.atomic64 = host_atomic64,
	.ct_inc = host_ct_inc,
	.put_from_nic = host_put_from_nic,
	.put_from_host = host_put_from_host,
	.msg_done = host_msg_done,
	.pkt_release = host_pkt_release,
	.pkt_release_burst = host_pkt_release_burst,
};
