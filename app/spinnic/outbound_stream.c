/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming puts (SPUT_START, SPUT_STREAM) and processed puts (PROCESS_PUT,
 * gathered by ddt_gather outbound jobs on the HPUs): packets built from the
 * client's pieces or typed buffer, and re-created from host memory for a
 * retransmission (sput_refill, through rel_tx.c). Called from outbound.c
 * and commands.c;
 * runs in the node's outbound role only, so no locking. How and why:
 * doc/streams.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ddt.h"
#include "engine.h"
#include "outbound_stream.h"
#include "packet.h"
#include "spin_handler_args.h"
#include "sput_map.h"

/* Host pieces read with one ptl_host_readv call. */
#define IOV_BATCH 32u
/* Commands of one client taken per eng_sput_progress call. */
#define SPUT_CMDS_PER_POLL 64u
/* Outbound jobs (processed-put packets on the HPUs) out per node, per put,
 * submitted per call, drained per poll. */
#define GATHER_JOBS 128u
#define GATHER_JOBS_PER_OP 32u
#define GATHER_BURST 32u

struct sput_kept;

struct out_stream {
	bool open;
	bool failed;            /* op ended with ni_fail: absorb the rest */
	uint64_t msg_id;
	struct ptl_cmd put;     /* the message as a PUT (length: declared) */
	struct sput_map map;    /* pieces handed so far */
	uint64_t sent;          /* bytes in built packets */
	uint32_t npkts;
	struct sput_kept *keep; /* where the state goes once built */
};

struct out_proc {
	bool on;
	bool gather;            /* packets built by HPU jobs (ctx) */
	uint64_t msg_id;
	struct ptl_cmd put;
	void *blob;             /* copy of the serialized type */
	struct ddt_segment *seg;/* inline gather and retransmission */
	uint64_t origin;        /* client address of the buffer origin */
	uint64_t sent;          /* bytes built (inline) or submitted */
	uint32_t npkts;
	struct sput_kept *keep;
	/* HPU gather */
	struct spin_rt *rt;
	uint32_t ctx;           /* "ddt_gather" context, owner `owner` */
	uint32_t owner;
	uint32_t total;         /* packets of the message */
	uint32_t tx;            /* of them handed to rel_tx_send */
	uint32_t out;           /* jobs out (submitted, not sent) */
};

/* A processed-put packet on its way through an HPU. */
struct gather_job {
	struct spin_out_job j;  /* cookie: this */
	struct rte_mbuf *m;
	struct out_client *oc;  /* the put: oc's current proc of msg_id */
	struct ptl_client *c;   /* referenced while the job exists */
	uint64_t msg_id;
	uint32_t dst_nid;
	bool used;
};

struct out_gather {
	struct gather_job job[GATHER_JOBS];
	struct gather_job *free[GATHER_JOBS];
	unsigned nfree;
	struct gather_job *ready[GATHER_JOBS]; /* built, waiting for TX room */
	unsigned nready;
};

/* A message whose packets are all built, kept (with what re-creates its
 * payload) until its operation ends (ack, or failure): retransmission
 * may still need it. Allocated when the message starts. */
struct sput_kept {
	struct sput_kept *next;
	uint64_t msg_id;
	bool proc;
	struct out_stream s;
	struct out_proc p;
};

struct out_sput {
	struct out_stream s[SPINNIC_SPUT_MAX];
	struct out_proc proc;
	struct sput_kept *kept;
};

typedef int (*fill_fn)(struct ptl_client *c, void *st, uint64_t off,
		       uint32_t len, uint8_t *dst);

/* ---- re-creating payload from host memory -------------------------------- */

struct stream_walk {
	struct ptl_client *c;
	uint8_t *dst;
	struct ptl_host_iov iov[IOV_BATCH];
	unsigned k;
};

static int
stream_run(void *arg, uint64_t addr, uint64_t len, uint64_t dst_off)
{
	struct stream_walk *w = arg;
	int rc;

	w->iov[w->k].addr = addr;
	w->iov[w->k].buf = w->dst + dst_off;
	w->iov[w->k].len = (size_t)len;
	if (++w->k < IOV_BATCH)
		return 0;
	w->k = 0;
	rc = ptl_host_readv(w->c, w->iov, IOV_BATCH);
	return rc != 0 ? rc : 0;
}

static int
stream_fill(struct ptl_client *c, void *st, uint64_t off, uint32_t len,
	    uint8_t *dst)
{
	const struct out_stream *s = st;
	struct stream_walk w;
	int rc;

	w.c = c;
	w.dst = dst;
	w.k = 0;
	rc = sput_map_walk(&s->map, off, len, stream_run, &w);
	if (rc == 0 && w.k > 0)
		rc = ptl_host_readv(c, w.iov, w.k);
	return rc;
}

struct proc_walk {
	struct ptl_client *c;
	uint64_t origin, md_lo, md_hi;
	uint8_t *dst;
	int64_t first, last;
	struct ptl_host_iov iov[IOV_BATCH];
	unsigned k;
	int rc;
};

/* A block of the packet's range: read it from the typed buffer. */
static int
proc_block(void *arg, int64_t buf_off, int64_t len, int64_t stream_off)
{
	struct proc_walk *w = arg;
	uint64_t addr = w->origin + (uint64_t)buf_off;

	if (len <= 0)
		return 0;
	if (stream_off < w->first || len > w->last - stream_off ||
	    addr < w->md_lo || addr > w->md_hi ||
	    (uint64_t)len > w->md_hi - addr) {
		/* checked at start; a block outside the MD is never read */
		w->rc = -EFAULT;
		return 1;
	}
	w->iov[w->k].addr = addr;
	w->iov[w->k].buf = w->dst + (stream_off - w->first);
	w->iov[w->k].len = (size_t)len;
	if (++w->k == IOV_BATCH) {
		w->rc = ptl_host_readv(w->c, w->iov, w->k);
		w->k = 0;
		if (w->rc != 0)
			return 1;
	}
	return 0;
}

static int
proc_fill(struct ptl_client *c, void *st, uint64_t off, uint32_t len,
	  uint8_t *dst)
{
	struct out_proc *p = st;
	struct proc_walk w;
	int rc;

	uint8_t *host;

	if (off > p->put.length || len > p->put.length - off)
		return -ERANGE;
	if (len == 0)
		return 0;
	/* an MD in the region: pack straight from the mapping (the type's
	 * span was checked against the MD when it was loaded) */
	host = ptl_host_ptr(c, p->put.md_start, p->put.md_length);
	if (host != NULL)
		return ddt_segment_pack(p->seg, (int64_t)off,
					(int64_t)(off + len),
					host + (p->origin - p->put.md_start),
					dst);
	w.c = c;
	w.origin = p->origin;
	w.md_lo = p->put.md_start;
	w.md_hi = p->put.md_start + p->put.md_length;
	w.dst = dst;
	w.first = (int64_t)off;
	w.last = (int64_t)(off + len);
	w.k = 0;
	w.rc = 0;
	rc = ddt_segment_blocks(p->seg, w.first, w.last, proc_block, &w);
	if (w.rc != 0)
		return w.rc;
	if (rc != 0)
		return rc < 0 ? rc : -EFAULT;
	return w.k == 0 ? 0 : ptl_host_readv(c, w.iov, w.k);
}

/*
 * Re-create payload bytes [off, off + len) of a streamed or processed put
 * of @p arg (its struct out_client) from host memory, for a resend (the
 * packet's rel_src refill). -ENOENT: the message is not one of the
 * client's (any more: the state is kept from the last packet built until
 * ptl_op_lookup() no longer knows the message).
 * @return 0; -ENOENT; -ERANGE (past the bytes handed so far); -EFAULT
 *   (host memory gone, or a block outside the MD); -ESHUTDOWN (client
 *   detached)
 */
static int
sput_refill(void *arg, uint64_t msg_id, uint64_t off, uint32_t len,
	    uint8_t *dst)
{
	struct out_client *oc = arg;
	struct out_sput *sp = oc->sput;
	struct sput_kept *k;
	unsigned i;

	if (sp == NULL || oc->op.c == NULL)
		return -ENOENT;
	if (sp->proc.on && sp->proc.msg_id == msg_id)
		return proc_fill(oc->op.c, &sp->proc, off, len, dst);
	for (i = 0; i < SPINNIC_SPUT_MAX; i++)
		if (sp->s[i].open && !sp->s[i].failed &&
		    sp->s[i].msg_id == msg_id)
			return stream_fill(oc->op.c, &sp->s[i], off, len, dst);
	for (k = sp->kept; k != NULL; k = k->next)
		if (k->msg_id == msg_id)
			return k->proc ? proc_fill(oc->op.c, &k->p, off, len, dst) :
				stream_fill(oc->op.c, &k->s, off, len, dst);
	return -ENOENT;
}

/* ---- packets --------------------------------------------------------------- */

/*
 * The one place packets of streamed and processed puts leave, and where
 * their SEND is decided: queue @p m for @p dst_nid; after the message's
 * last packet (@p last) the operation's SEND follows. The packet is
 * sequenced by rel_tx_send() (reliable delivery, rel_tx.c); a resend
 * re-creates its bytes from host memory through sput_refill(), and
 * SEND waits for the last packet's acknowledgement.
 * @return 0, or -ENOSPC (nothing queued: the caller frees @p m, retries)
 */
static int
sput_tx(struct spinnic_engine *eng, struct out_client *oc,
	struct rte_mbuf *m, uint32_t dst_nid, uint64_t msg_id, bool last)
{
	/* sequenced; a resend re-creates the bytes from host memory
	 * (sput_refill); SEND once the last packet is acknowledged */
	struct rel_src src = {
		.refill = sput_refill,
		.refill_arg = oc,
		.send_id = last ? msg_id : 0,
	};

	return rel_tx_send(eng, m, dst_nid, &src);
}

/* An mbuf with the headers of packet [off, off + len) of a message;
 * *pay_p: where its payload goes. @return the mbuf, or NULL (counted) */
static struct rte_mbuf *
pkt_build(struct spinnic_engine *eng, struct out_client *oc,
	  const struct ptl_cmd *put, uint64_t msg_id, uint64_t off,
	  uint32_t len, uint8_t **pay_p)
{
	struct spinnic_pkt p;
	struct rte_mbuf *m;

	eng_pkt_from_cmd(put, ptl_client_id(oc->op.c), msg_id, &p);
	spinnic_wire_pkt_seg(&p, off, len);
	m = eng_build(eng->node, &p, pay_p);
	if (m == NULL)
		eng->tx.stats.no_mbuf++;
	return m;
}

/* Build and queue the packet [off, off + len) of a message.
 * @return 0, -EAGAIN (no mbuf or no room: retry), or the fill's error */
static int
pkt_send(struct spinnic_engine *eng, struct out_client *oc,
	 const struct ptl_cmd *put, uint64_t msg_id, uint64_t off,
	 uint32_t len, fill_fn fill, void *st)
{
	struct rte_mbuf *m;
	uint8_t *pay;
	int rc;

	m = pkt_build(eng, oc, put, msg_id, off, len, &pay);
	if (m == NULL)
		return -EAGAIN;
	rc = len == 0 ? 0 : fill(oc->op.c, st, off, len, pay);
	if (rc == 0 && sput_tx(eng, oc, m, put->target.nid, msg_id,
			       off + len == put->length) != 0)
		rc = -EAGAIN;
	if (rc != 0) {
		rte_pktmbuf_free(m);
		return rc;
	}
	eng->tx.stats.data_pkts++;
	return 0;
}

/*
 * Build the packets whose bytes are known (up to @p avail), at most
 * @p budget. *wait_p: stopped because the next packet's bytes are not
 * there yet (or all are built); *rc_p: a fill failed.
 */
static unsigned
pkts_build(struct spinnic_engine *eng, struct out_client *oc,
	   const struct ptl_cmd *put, uint64_t msg_id, uint64_t *sent,
	   uint32_t *npkts, uint64_t avail, fill_fn fill, void *st,
	   unsigned budget, bool *wait_p, int *rc_p)
{
	uint32_t payload = eng->node->payload;
	unsigned n = 0;

	*wait_p = false;
	*rc_p = 0;
	while (n < budget) {
		uint64_t left = put->length - *sent;
		uint32_t len = (uint32_t)RTE_MIN(left, (uint64_t)payload);
		int rc;

		if ((*npkts > 0 && left == 0) || *sent + len > avail) {
			*wait_p = true;
			break;
		}
		if (!rel_tx_room(eng, put->target.nid))
			break;
		rc = pkt_send(eng, oc, put, msg_id, *sent, len, fill, st);
		if (rc == -EAGAIN)
			break;
		if (rc != 0) {
			*rc_p = rc;
			break;
		}
		*sent += len;
		(*npkts)++;
		n++;
	}
	return n;
}

/* ---- streaming puts -------------------------------------------------------- */

static struct out_sput *
sput_get(struct out_client *oc)
{
	if (oc->sput == NULL)
		oc->sput = calloc(1, sizeof(*oc->sput));
	return oc->sput;
}

static void
stream_close(struct out_stream *s)
{
	sput_map_fini(&s->map);
	free(s->keep);
	memset(s, 0, sizeof(*s));
}

/* Every packet of the stream left: keep its extents for retransmission,
 * free the slot. */
static void
stream_keep(struct out_sput *sp, struct out_stream *s)
{
	struct sput_kept *k = s->keep;

	k->msg_id = s->msg_id;
	k->proc = false;
	k->s = *s;
	k->s.keep = NULL;
	k->next = sp->kept;
	sp->kept = k;
	memset(s, 0, sizeof(*s));
}

static void
proc_free(struct out_proc *p)
{
	if (p->gather) {
		/* jobs still out hold their own references */
		spin_rt_ctx_free(p->rt, p->owner, p->ctx);
		p->gather = false;
	}
	if (p->seg != NULL)
		ddt_segment_free(p->seg);
	free(p->blob);
}

/* Drop the kept state of operations that ended. */
static void
kept_gc(struct spinnic_engine *eng, struct out_sput *sp)
{
	struct sput_kept **pp = &sp->kept, *k;
	struct ptl_op_info info;

	while ((k = *pp) != NULL) {
		if (ptl_op_lookup(eng->node->nic, k->msg_id, &info, NULL) == 0) {
			pp = &k->next;
			continue;
		}
		*pp = k->next;
		if (k->proc)
			proc_free(&k->p);
		else
			sput_map_fini(&k->s.map);
		free(k);
	}
}

/* The stream's put ends with @p fail (SEND with ni_fail); the pieces still
 * to come are absorbed up to the end of the message. */
static void
stream_fail(struct spinnic_engine *eng, struct out_stream *s, uint8_t fail)
{
	ptl_op_sent(eng->node->nic, s->msg_id, fail);
	s->failed = true;
	eng->tx.sput.failed++;
}

/*
 * Refuse a command that names no usable stream (or a type that does not
 * load): a SEND event with @p fail on its MD's EQ, as for any bad command.
 * @return false when the op table is full (retry the command later)
 */
static bool
cmd_reject(struct spinnic_engine *eng, struct out_client *oc, uint64_t length,
	   uint8_t fail)
{
	struct ptl_cmd put = oc->op.cmd;
	uint64_t id;
	int rc;

	put.op = SPINNIC_CMD_PUT;
	put.length = length;
	rc = ptl_op_start(oc->op.c, &put, &id);
	if (rc == -ENOSPC) {
		eng->tx.stats.ops_full++;
		return false;
	}
	oc->op.have_cmd = false;
	eng->tx.sput.bad++;
	if (rc == 0)
		ptl_op_sent(eng->node->nic, id, fail);
	return true;
}

/* Record a piece; decide what a wrong total does. */
static void
piece_take(struct spinnic_engine *eng, struct out_stream *s,
	   const struct ptl_cmd *cmd)
{
	bool eom = cmd->op == SPINNIC_CMD_SPUT_STREAM &&
		(cmd->flags & SPINNIC_CMD_F_EOM);
	struct sput_map *map = &s->map;
	uint64_t len = cmd->length, left = map->total - map->avail;
	int rc;

	eng->tx.sput.pieces++;
	if (s->failed) {
		eng->tx.sput.absorbed++;
		map->avail += RTE_MIN(len, left);
		if (eom || map->avail == map->total)
			stream_close(s);
		return;
	}
	rc = sput_map_add(map, cmd->local_addr, len, eom);
	if (rc == 0)
		return;
	/* the pieces do not add up to the declared length (or no memory):
	 * the put fails, the rest of the stream is absorbed */
	eng->tx.sput.bad++;
	stream_fail(eng, s, rc == -ENOMEM ? SPINNIC_PTL_NI_DROPPED :
		    SPINNIC_PTL_NI_OP_VIOLATION);
	map->avail += RTE_MIN(len, left);
	if (eom || len >= left)
		stream_close(s);
}

static unsigned
stream_progress(struct spinnic_engine *eng, struct out_client *oc,
		struct out_sput *sp, unsigned budget)
{
	struct spinnic_node *node = eng->node;
	const struct ptl_cmd *cmd = &oc->op.cmd;
	struct out_stream *s = &sp->s[cmd->stream];
	unsigned n;
	bool wait;
	int rc;

	if (!oc->op.active) {
		if (cmd->op == SPINNIC_CMD_SPUT_START) {
			struct ptl_cmd put = *cmd;

			if (s->open) {
				/* a stream of that slot is still open */
				cmd_reject(eng, oc, cmd->msg_length,
					   SPINNIC_PTL_NI_OP_VIOLATION);
				return 0;
			}
			put.op = SPINNIC_CMD_PUT;
			put.length = cmd->msg_length;
			s->keep = malloc(sizeof(*s->keep));
			if (s->keep == NULL) {
				cmd_reject(eng, oc, cmd->msg_length,
					   SPINNIC_PTL_NI_DROPPED);
				return 0;
			}
			rc = ptl_op_start(oc->op.c, &put, &s->msg_id);
			if (rc != 0) {
				free(s->keep);
				s->keep = NULL;
			}
			if (rc == -ENOSPC) {
				eng->tx.stats.ops_full++;
				return 0;
			}
			oc->op.have_cmd = false;
			if (rc != 0)
				return 0; /* client detached meanwhile */
			s->open = true;
			s->put = put;
			sput_map_init(&s->map, put.length);
			eng->tx.stats.puts++;
			eng->tx.sput.streams++;
			spinnic_client_count(node, ptl_client_id(oc->op.c).pid,
					     false, put.length);
			if (spinnic_node_txq(node, put.target.nid) ==
			    UINT16_MAX) {
				eng->tx.stats.unreachable++;
				stream_fail(eng, s,
					    SPINNIC_PTL_NI_UNDELIVERABLE);
			}
		} else if (!s->open) {
			/* a piece of no open stream */
			cmd_reject(eng, oc, cmd->length,
				   SPINNIC_PTL_NI_OP_VIOLATION);
			return 0;
		}
		oc->op.have_cmd = false;
		oc->op.active = true;
		piece_take(eng, s, cmd);
	}
	if (!s->open || s->failed) {
		oc->op.active = false;
		return 0;
	}
	n = pkts_build(eng, oc, &s->put, s->msg_id, &s->sent, &s->npkts,
		       s->map.avail, stream_fill, s, budget, &wait, &rc);
	if (rc != 0) {
		/* the piece's memory went away: the put fails here */
		eng->tx.stats.read_faults++;
		stream_fail(eng, s, SPINNIC_PTL_NI_SEGV);
		oc->op.active = false;
		return n;
	}
	if (s->npkts > 0 && s->sent == s->put.length) {
		/* every byte left (sput_tx saw to SEND) */
		stream_keep(sp, s);
		oc->op.active = false;
	} else if (wait) {
		oc->op.active = false; /* the next piece brings more */
	}
	return n;
}

/* ---- processed puts --------------------------------------------------------- */

static void
proc_end(struct out_proc *p)
{
	proc_free(p);
	free(p->keep);
	memset(p, 0, sizeof(*p));
}

static void
proc_keep(struct out_sput *sp, struct out_proc *p)
{
	struct sput_kept *k = p->keep;

	if (p->gather) {
		/* retransmission gathers inline: the context may go */
		spin_rt_ctx_free(p->rt, p->owner, p->ctx);
		p->gather = false;
	}
	k->msg_id = p->msg_id;
	k->proc = true;
	k->p = *p;
	k->p.keep = NULL;
	k->next = sp->kept;
	sp->kept = k;
	memset(p, 0, sizeof(*p));
}

/* Load the type of a PROCESS_PUT from NIC memory and check it against the
 * command. @return 0 or the ni_fail of the put */
static uint8_t
proc_load(struct spinnic_engine *eng, struct out_client *oc,
	  struct out_proc *p)
{
	const struct ptl_cmd *cmd = &oc->op.cmd;
	const struct ddt_blob *b;
	struct ddt_type *t;
	int64_t size, ext, lo, hi, span, step, count = (int64_t)cmd->count;
	int rc;

	p->blob = malloc(cmd->blob_len);
	if (p->blob == NULL)
		return SPINNIC_PTL_NI_DROPPED;
	rc = spin_rt_nicmem_read(eng->node->rt, ptl_client_id(oc->op.c).pid,
				 cmd->blob, 0, p->blob, cmd->blob_len);
	if (rc != 0) {
		SPINNIC_LOG(DEBUG, "process put: blob %#x: %s", cmd->blob,
			    strerror(-rc));
		return SPINNIC_PTL_NI_OP_VIOLATION;
	}
	if (ddt_blob_load(p->blob, cmd->blob_len, &b) != 0) {
		SPINNIC_LOG(DEBUG, "process put: type: %s", ddt_blob_error());
		return SPINNIC_PTL_NI_OP_VIOLATION;
	}
	size = ddt_blob_size(b);
	if (count < 0 || size < 0 ||
	    __builtin_mul_overflow(size, count, &span) ||
	    (uint64_t)span != cmd->length)
		return SPINNIC_PTL_NI_OP_VIOLATION;
	t = ddt_blob_to_type(b);
	if (t == NULL)
		return SPINNIC_PTL_NI_DROPPED;
	/* bytes the count elements touch, from the origin */
	ext = ddt_extent(t);
	lo = ddt_true_lb(t);
	hi = lo + ddt_true_extent(t);
	ddt_free(t);
	if (size > 0 && count > 0) {
		if (__builtin_mul_overflow(count - 1, ext, &step) ||
		    __builtin_add_overflow(step < 0 ? lo : hi, step,
					   step < 0 ? &lo : &hi) ||
		    __builtin_add_overflow(lo, (int64_t)cmd->local_offset,
					   &lo) ||
		    __builtin_add_overflow(hi, (int64_t)cmd->local_offset,
					   &hi) ||
		    lo < 0 || (uint64_t)hi > cmd->md_length)
			return SPINNIC_PTL_NI_SEGV;
	}
	p->seg = ddt_segment_create_blob(b, count);
	if (p->seg == NULL)
		return SPINNIC_PTL_NI_DROPPED;
	p->origin = cmd->local_addr;
	return 0;
}

/*
 * Give the put a "ddt_gather" context (owner: the client) so the HPUs
 * build its packets. Without one (NIC memory full, a type the handler does
 * not take) the outbound role gathers inline.
 */
static void
proc_gather_ctx(struct spinnic_engine *eng, struct out_client *oc,
		struct out_proc *p)
{
	struct spin_rt *rt = eng->node->rt;
	size_t args_len = sizeof(struct spin_ddt_args) + p->put.blob_len;
	struct spin_ddt_args *a;
	struct spin_ctx_conf conf;
	int rc;

	if (p->put.length == 0 || args_len > UINT32_MAX)
		goto inline_;
	a = calloc(1, args_len);
	if (a == NULL)
		goto inline_;
	a->version = SPIN_DDT_ARGS_VERSION;
	a->strategy = SPIN_DDT_HPU_LOCAL;
	a->nslots = spin_rt_nhpu(rt);
	a->count = (int64_t)p->put.count;
	a->origin = (int64_t)(p->origin - p->put.md_start);
	a->blob_off = sizeof(*a);
	a->blob_len = p->put.blob_len;
	a->stats_off = SPIN_DDT_STATS_NONE;
	memcpy(a + 1, p->blob, p->put.blob_len);
	memset(&conf, 0, sizeof(conf));
	conf.family = "ddt_gather";
	conf.args = a;
	conf.args_len = (uint32_t)args_len;
	p->owner = ptl_client_id(oc->op.c).pid;
	rc = spin_rt_ctx_create(rt, p->owner, &conf, &p->ctx);
	free(a);
	if (rc != 0) {
		SPINNIC_LOG(DEBUG, "process put: no gather context (%s): "
			    "gathered inline", strerror(-rc));
		goto inline_;
	}
	p->gather = true;
	p->rt = rt;
	p->total = (uint32_t)((p->put.length + eng->node->payload - 1) /
			      eng->node->payload);
	return;
inline_:
	eng->tx.sput.hpu_inline++;
}

static struct out_gather *
gather_get(struct spinnic_engine *eng)
{
	struct out_gather *g = eng->tx.gather;
	unsigned i;

	if (g != NULL)
		return g;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	for (i = 0; i < GATHER_JOBS; i++)
		g->free[g->nfree++] = &g->job[GATHER_JOBS - 1 - i];
	eng->tx.gather = g;
	return g;
}

static void
gather_job_free(struct out_gather *g, struct gather_job *gj)
{
	if (gj->m != NULL)
		rte_pktmbuf_free(gj->m);
	ptl_client_put(gj->c);
	memset(gj, 0, sizeof(*gj));
	g->free[g->nfree++] = gj;
}

/* The processed put a job belongs to, or NULL once it ended. */
static struct out_proc *
gather_proc(const struct gather_job *gj)
{
	struct out_sput *sp = gj->oc->sput;

	if (sp == NULL || !sp->proc.on || !sp->proc.gather ||
	    sp->proc.msg_id != gj->msg_id)
		return NULL;
	return &sp->proc;
}

/*
 * Submit jobs for the put's next packets: at most @p budget, as the per-put
 * and per-node bounds and mbufs allow.
 * @return jobs submitted, or the runtime's negative errno when the put can
 *   no longer use its context (freed under it: the client is going)
 */
static int
proc_submit(struct spinnic_engine *eng, struct out_client *oc,
	    struct out_proc *p, unsigned budget)
{
	struct out_gather *g = gather_get(eng);
	struct spin_out_job *js[GATHER_BURST];
	uint32_t payload = eng->node->payload;
	unsigned n = 0, k, i;
	int err;

	if (g == NULL)
		return 0;
	while (n < budget && n < GATHER_BURST && p->sent < p->put.length &&
	       p->out < GATHER_JOBS_PER_OP && g->nfree > 0) {
		uint32_t len = (uint32_t)RTE_MIN(p->put.length - p->sent,
						 (uint64_t)payload);
		struct gather_job *gj;
		uint8_t *pay;
		struct rte_mbuf *m;

		m = pkt_build(eng, oc, &p->put, p->msg_id, p->sent, len, &pay);
		if (m == NULL)
			break;
		gj = g->free[--g->nfree];
		gj->used = true;
		gj->m = m;
		gj->oc = oc;
		gj->c = oc->op.c;
		ptl_client_get(gj->c);
		gj->msg_id = p->msg_id;
		gj->dst_nid = p->put.target.nid;
		gj->j.ctx = p->ctx;
		gj->j.len = len;
		gj->j.offset = p->sent;
		gj->j.dst = pay;
		gj->j.host = oc->op.c;
		gj->j.win_addr = p->put.md_start;
		gj->j.win_len = p->put.md_length;
		gj->j.info = NULL;
		gj->j.cookie = gj;
		js[n++] = &gj->j;
		p->sent += len;
		p->npkts++;
		p->out++;
	}
	if (n == 0)
		return 0;
	k = spin_out_submit_burst(eng->node->rt, js, n, &err);
	eng->tx.sput.hpu_jobs += k;
	if (k < n) {
		/* not taken: back to the slots, the bytes built again later */
		p->sent = js[k]->offset;
		p->npkts -= n - k;
		p->out -= n - k;
		for (i = k; i < n; i++)
			gather_job_free(g, js[i]->cookie);
		if (err != -ENOBUFS)
			return err;
		eng->tx.sput.hpu_full++;
	}
	return (int)k;
}

/* Hand a built packet to rel_tx.c; the one handed last carries SEND. Keeps it
 * (ready list) when there is no room. @return true when it left */
static bool
gather_tx(struct spinnic_engine *eng, struct out_gather *g,
	  struct gather_job *gj, struct out_proc *p)
{
	struct out_client *oc = gj->oc;
	bool last = p->tx + 1 == p->total;

	if (!rel_tx_room(eng, gj->dst_nid) ||
	    sput_tx(eng, oc, gj->m, gj->dst_nid, gj->msg_id, last) != 0) {
		g->ready[g->nready++] = gj;
		return false;
	}
	gj->m = NULL; /* rel_tx.c's now */
	eng->tx.stats.data_pkts++;
	eng->tx.sput.hpu_pkts++;
	p->tx++;
	p->out--;
	gather_job_free(g, gj);
	if (last) {
		/* every packet left: keep what re-creates them */
		proc_keep(oc->sput, p);
		oc->op.active = false;
	}
	return true;
}

/* A job came back (or waited for TX room): send its packet, or end the
 * put. @return false when it waits on the ready list */
static bool
gather_done(struct spinnic_engine *eng, struct out_gather *g,
	    struct gather_job *gj)
{
	struct out_proc *p = gather_proc(gj);

	if (p == NULL) {
		eng->tx.sput.hpu_stale++;
		gather_job_free(g, gj);
		return true;
	}
	if (gj->j.status != 0) {
		/* the MD's memory went away: the put fails here, the jobs
		 * still out are dropped when they come back */
		SPINNIC_LOG(DEBUG, "process put %#" PRIx64 ": HPU gather at %"
			    PRIu64 ": %s", gj->msg_id, gj->j.offset,
			    strerror(-gj->j.status));
		eng->tx.sput.hpu_failed++;
		eng->tx.stats.read_faults++;
		eng->tx.sput.failed++;
		ptl_op_sent(eng->node->nic, gj->msg_id, SPINNIC_PTL_NI_SEGV);
		proc_end(p);
		gj->oc->op.active = false;
		gather_job_free(g, gj);
		return true;
	}
	return gather_tx(eng, g, gj, p);
}

unsigned
eng_sput_poll(struct spinnic_engine *eng)
{
	struct out_gather *g = eng->tx.gather;
	struct spin_out_job *done[GATHER_BURST];
	unsigned n, i, k, work = 0;

	if (g == NULL)
		return 0;
	/* packets that found no room before, first */
	n = g->nready;
	g->nready = 0;
	for (i = 0; i < n; i++)
		work += gather_done(eng, g, g->ready[i]);
	k = spin_out_done_burst(eng->node->rt, done, GATHER_BURST);
	for (i = 0; i < k; i++)
		gather_done(eng, g, done[i]->cookie);
	return work + k;
}

void
eng_sput_fini(struct spinnic_engine *eng)
{
	struct out_gather *g = eng->tx.gather;
	unsigned i;

	if (g == NULL)
		return;
	/* no HPU runs now; jobs left in the runtime's rings are not
	 * touched again (spin_rt_destroy) */
	for (i = 0; i < GATHER_JOBS; i++)
		if (g->job[i].used)
			gather_job_free(g, &g->job[i]);
	free(g);
	eng->tx.gather = NULL;
}

bool
eng_sput_idle(const struct spinnic_engine *eng)
{
	const struct out_gather *g = __atomic_load_n(&eng->tx.gather,
						     __ATOMIC_ACQUIRE);

	return g == NULL ||
		__atomic_load_n(&g->nfree, __ATOMIC_RELAXED) == GATHER_JOBS;
}

static unsigned
proc_progress(struct spinnic_engine *eng, struct out_client *oc,
	      struct out_sput *sp, unsigned budget)
{
	struct spinnic_node *node = eng->node;
	struct out_proc *p = &sp->proc;
	unsigned n;
	uint8_t fail;
	bool wait;
	int rc;

	if (!oc->op.active) {
		struct ptl_cmd put = oc->op.cmd;

		put.op = SPINNIC_CMD_PUT;
		p->keep = malloc(sizeof(*p->keep));
		if (p->keep == NULL) {
			cmd_reject(eng, oc, put.length, SPINNIC_PTL_NI_DROPPED);
			return 0;
		}
		rc = ptl_op_start(oc->op.c, &put, &p->msg_id);
		if (rc != 0) {
			free(p->keep);
			p->keep = NULL;
		}
		if (rc == -ENOSPC) {
			eng->tx.stats.ops_full++;
			return 0;
		}
		oc->op.have_cmd = false;
		if (rc != 0)
			return 0;
		p->on = true;
		p->put = put;
		eng->tx.stats.puts++;
		eng->tx.sput.procs++;
		spinnic_client_count(node, ptl_client_id(oc->op.c).pid, false,
				     put.length);
		fail = proc_load(eng, oc, p);
		if (fail != 0) {
			eng->tx.sput.bad++;
		} else if (spinnic_node_txq(node, put.target.nid) ==
			   UINT16_MAX) {
			eng->tx.stats.unreachable++;
			fail = SPINNIC_PTL_NI_UNDELIVERABLE;
		}
		if (fail != 0) {
			ptl_op_sent(node->nic, p->msg_id, fail);
			proc_end(p);
			return 0;
		}
		proc_gather_ctx(eng, oc, p);
		oc->op.active = true;
	}
	if (p->gather) {
		/* the HPUs build the packets; eng_sput_poll sends them and
		 * ends the put (oc->op.active) */
		rc = proc_submit(eng, oc, p, budget);
		if (rc >= 0)
			return (unsigned)rc;
		/* the context went (the client frees its objects) */
		eng->tx.sput.failed++;
		ptl_op_sent(node->nic, p->msg_id, SPINNIC_PTL_NI_DROPPED);
		proc_end(p);
		oc->op.active = false;
		return 0;
	}
	n = pkts_build(eng, oc, &p->put, p->msg_id, &p->sent, &p->npkts,
		       p->put.length, proc_fill, p, budget, &wait, &rc);
	if (rc != 0) {
		eng->tx.stats.read_faults++;
		eng->tx.sput.failed++;
		ptl_op_sent(node->nic, p->msg_id, SPINNIC_PTL_NI_SEGV);
		proc_end(p);
		oc->op.active = false;
	} else if (p->npkts > 0 && p->sent == p->put.length) {
		proc_keep(sp, p);
		oc->op.active = false;
	}
	return n;
}

/* ---- entry points ----------------------------------------------------------- */

unsigned
eng_sput_progress(struct spinnic_engine *eng, struct out_client *oc,
		  unsigned budget)
{
	struct out_sput *sp = sput_get(oc);
	unsigned n = 0, taken = 0, steps = 0;

	if (sp == NULL) {
		/* no memory for the client's stream table: refuse */
		if (!oc->op.active)
			cmd_reject(eng, oc, oc->op.cmd.length,
				   SPINNIC_PTL_NI_DROPPED);
		oc->op.active = false;
		return 0;
	}
	if (!oc->op.active)
		kept_gc(eng, sp);
	for (;;) {
		bool had = oc->op.have_cmd;

		if (oc->op.cmd.op == SPINNIC_CMD_PROCESS_PUT)
			n += proc_progress(eng, oc, sp, budget - n);
		else
			n += stream_progress(eng, oc, sp, budget - n);
		if (had && !oc->op.have_cmd)
			taken++;
		if (oc->op.active || oc->op.have_cmd || n >= budget ||
		    ++steps == SPUT_CMDS_PER_POLL)
			break;
		/* done with it: a run of small pieces goes on at once
		 * (an ordinary command waits for outbound.c in have_cmd) */
		if (ptl_cmd_poll(oc->op.c, &oc->op.cmd, 1) == 0)
			break;
		eng->node->tx.cmds++;
		oc->op.have_cmd = true;
		if (!ptl_cmd_sput(oc->op.cmd.op))
			break;
	}
	/* commands taken count as work: a piece that completes no packet
	 * must not let the lcore think it is idle */
	return n + taken;
}

void
eng_sput_forget(struct spinnic_engine *eng, struct out_client *oc)
{
	struct out_sput *sp = oc->sput;
	struct sput_kept *k;
	unsigned i;

	if (sp == NULL)
		return;
	/* packets in flight are not re-created from this client any more */
	rel_tx_forget(eng, NULL, oc);
	for (i = 0; i < SPINNIC_SPUT_MAX; i++) {
		if (sp->s[i].open) {
			/* the target times the partial message out */
			eng->tx.stats.detach_drops++;
			stream_close(&sp->s[i]);
		}
	}
	if (sp->proc.on)
		proc_end(&sp->proc);
	while ((k = sp->kept) != NULL) {
		sp->kept = k->next;
		if (k->proc)
			proc_free(&k->p);
		else
			sput_map_fini(&k->s.map);
		free(k);
	}
	free(sp);
	oc->sput = NULL;
}

void
eng_sput_stats_print(const struct spinnic_engine *eng, FILE *f)
{
	const struct eng_sput_stats *st = &eng->tx.sput;

	if (st->streams == 0 && st->procs == 0 && st->bad == 0)
		return;
	fprintf(f, "    sput_streams %" PRIu64 " sput_pieces %" PRIu64
		" sput_procs %" PRIu64 " sput_bad %" PRIu64
		" sput_failed %" PRIu64 " sput_absorbed %" PRIu64 "\n",
		st->streams, st->pieces, st->procs, st->bad, st->failed,
		st->absorbed);
	if (st->procs != 0)
		fprintf(f, "    sput_hpu_jobs %" PRIu64 " sput_hpu_pkts %" PRIu64
			" sput_hpu_failed %" PRIu64 " sput_hpu_stale %" PRIu64
			" sput_hpu_full %" PRIu64 " sput_hpu_inline %" PRIu64
			"\n", st->hpu_jobs, st->hpu_pkts, st->hpu_failed,
			st->hpu_stale, st->hpu_full, st->hpu_inline);
}
