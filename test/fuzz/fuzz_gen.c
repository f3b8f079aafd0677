/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seed corpus generator for the fuzz targets: small valid inputs of every
 * kind, written as files under DIR/<target>/. The committed corpus in
 * test/fuzz/corpus/ was made with
 *   ninja -C build test/fuzz/fuzz_gen && build/test/fuzz/fuzz_gen test/fuzz/corpus
 * Handles and message ids in the seeds are those a fresh fuzz environment
 * (fuzz_common.h) hands out, so the generator builds the same environment
 * and records what it gets.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FZ_REASM_NO_ENTRY
#include "fuzz_reasm.c" /* rm_setup: the reassembly target's environment */

#include "ddt.h"
#include "fuzz_wire_key.h"

static const char *outdir;
static uint8_t obuf[1 << 17];
static size_t olen;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_gen: %s\n", what);
	exit(1);
}

static void
out_reset(void)
{
	olen = 0;
}

static void
out_put(const void *p, size_t n)
{
	if (olen + n > sizeof(obuf))
		die("seed too large");
	memcpy(obuf + olen, p, n);
	olen += n;
}

static void
out_u(uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));

		out_put(&b, 1);
	}
}

static void
out_write(const char *target, const char *fmt, ...)
{
	char name[128], path[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", outdir, target);
	mkdir(outdir, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(obuf, 1, olen, f) != olen || fclose(f) != 0)
		die(path);
}

/* ---- frames --------------------------------------------------------- */

static uint8_t payload[65536];

static size_t
frame(uint8_t *f, size_t cap, const struct spinnic_pkt *p)
{
	struct spinnic_wire_addr a;
	int n;

	spinnic_wire_addr_nodes(p->src.nid, p->dst.nid, SPINNIC_WIRE_UDP_PORT,
				&a);
	n = spinnic_wire_build(f, cap, &a, p);
	if (n <= 0)
		die("spinnic_wire_build");
	return (size_t)n;
}

/* a packet from the peer (nid 2 pid 3) to the fuzz client (nid 1 pid 0) */
static void
pkt_init(struct spinnic_pkt *p, uint8_t type, uint8_t flags, uint8_t op,
	 uint64_t msg_id, uint64_t msg_len, uint64_t off, uint32_t pay)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->flags = flags;
	p->op = op;
	p->src.nid = FZ_PEER_NID;
	p->src.pid = FZ_PEER_PID;
	p->dst.nid = FZ_NID;
	p->dst.pid = 0;
	p->uid = 2000;
	p->msg_id = msg_id;
	p->msg_len = msg_len;
	p->offset = off;
	p->pay_len = pay;
	p->payload = pay ? payload : NULL;
	p->seq = (uint32_t)msg_id;
}

static void
gen_wire(void)
{
	static uint8_t f[SPINNIC_WIRE_HDR_LEN + 65536];
	struct spinnic_pkt p;
	unsigned op, k = 0;
	static const struct {
		uint8_t type, flags;
		uint64_t msg_len, off;
		uint32_t pay;
		const char *name;
	} kinds[] = {
		{ SPINNIC_WIRE_T_DATA, 5, 100, 0, 100, "data-hc" },
		{ SPINNIC_WIRE_T_DATA, 5, 0, 0, 0, "data-hc-empty" },
		{ SPINNIC_WIRE_T_DATA, 1, 5000, 0, 2048, "data-h" },
		{ SPINNIC_WIRE_T_DATA, 2, 5000, 2048, 2048, "data-p" },
		{ SPINNIC_WIRE_T_DATA, 4, 5000, 4096, 904, "data-c" },
		{ SPINNIC_WIRE_T_REPLY, 5, 64, 0, 64, "reply-hc" },
		{ SPINNIC_WIRE_T_REPLY, 1, 3000, 0, 2048, "reply-h" },
		{ SPINNIC_WIRE_T_REPLY, 4, 3000, 2048, 952, "reply-c" },
		{ SPINNIC_WIRE_T_ACK, 0, 0, 0, 0, "ack" },
		{ SPINNIC_WIRE_T_NACK, 0, 0, 0, 0, "nack" },
		{ SPINNIC_WIRE_T_GET, 5, 4096, 0, 0, "get" },
	};

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		pkt_init(&p, kinds[i].type, kinds[i].flags,
			 kinds[i].type == SPINNIC_WIRE_T_GET ||
			 kinds[i].type == SPINNIC_WIRE_T_REPLY ?
			 SPINNIC_WIRE_OP_GET : SPINNIC_WIRE_OP_PUT,
			 7, kinds[i].msg_len, kinds[i].off, kinds[i].pay);
		p.match_bits = 0x1234;
		p.hdr_data = 0xdada;
		p.ack_req = kinds[i].type == SPINNIC_WIRE_T_DATA ?
			    SPINNIC_PTL_ACK_REQ : 0;
		if (kinds[i].type == SPINNIC_WIRE_T_ACK)
			p.mlength = 100;
		if (kinds[i].type == SPINNIC_WIRE_T_NACK)
			p.fail_type = SPINNIC_PTL_NI_NO_MATCH;
		out_reset();
		out_put(f, frame(f, sizeof(f), &p));
		out_write("wire", "%02u-%s", k++, kinds[i].name);
	}
	/* every op, every ni kind, on a one-packet request */
	for (op = SPINNIC_WIRE_OP_PUT; op < SPINNIC_WIRE_OP_MAX; op++) {
		if (op == SPINNIC_WIRE_OP_GET)
			continue;
		pkt_init(&p, SPINNIC_WIRE_T_DATA, 5, (uint8_t)op, 9, 8, 0, 8);
		if (op != SPINNIC_WIRE_OP_PUT) {
			/* MAX on int64: the atomics' fields, atomics only */
			p.atomic_op = 1;
			p.atomic_type = 6;
		}
		p.ni = (uint8_t)(op & 3);
		p.remote_offset = 16;
		out_reset();
		out_put(f, frame(f, sizeof(f), &p));
		out_write("wire", "%02u-op%u", k++, op);
	}
	/* transport: a plain ack, a probe, the session handshake */
	for (op = 0; op < 4; op++) {
		static const char *const names[] = { "tack", "tack-probe",
						      "chal", "chal-ack" };

		pkt_init(&p, op < 2 ? SPINNIC_WIRE_T_TACK :
			 op == 2 ? SPINNIC_WIRE_T_CHAL : SPINNIC_WIRE_T_CHAL_ACK,
			 op == 1 ? SPINNIC_WIRE_F_REL : 0, 0, 0, 0, 0, 0);
		p.ack_epoch = 0x5eed1234u;
		p.ack_seq = 40;
		p.epoch = op == 1 ? 0x5eed1234u : 0;
		p.sack_base = op < 2 ? 41 : 0;
		p.sack = op < 2 ? 0x5ull : 0;
		p.hdr_data = op >= 2 ? 0x0123456789abcdefull : 0;
		out_reset();
		out_put(f, frame(f, sizeof(f), &p));
		out_write("wire", "%02u-%s", k++, names[op]);
	}
	/* authenticated (fuzz_wire_key.h): sequenced data of one and of a
	 * full packet, a plain transport ack, and unsequenced data */
	{
		static const struct {
			uint8_t type, flags;
			uint64_t msg_len, off;
			uint32_t pay;
			int rel;
			const char *name;
		} auth[] = {
			{ SPINNIC_WIRE_T_DATA, 5, 100, 0, 100, 1, "auth-data-hc" },
			{ SPINNIC_WIRE_T_DATA, 2, 5000, 2048, 2048, 1,
			  "auth-data-p" },
			{ SPINNIC_WIRE_T_TACK, 0, 0, 0, 0, 0, "auth-tack" },
			{ SPINNIC_WIRE_T_DATA, 5, 7, 0, 7, 0, "auth-unseq" },
		};

		for (size_t i = 0; i < sizeof(auth) / sizeof(auth[0]); i++) {
			size_t n;
			int len;

			pkt_init(&p, auth[i].type, auth[i].flags,
				 auth[i].type == SPINNIC_WIRE_T_TACK ? 0 :
				 SPINNIC_WIRE_OP_PUT, 11, auth[i].msg_len,
				 auth[i].off, auth[i].pay);
			if (auth[i].type == SPINNIC_WIRE_T_TACK) {
				p.ack_seq = 40;
				p.sack_base = 40;
				p.sack = 5;
			}
			n = frame(f, sizeof(f) - SPINNIC_WIRE_AUTH_LEN, &p);
			spinnic_wire_seal(f, n, auth[i].rel, 0x5eed, 12);
			len = spinnic_wire_auth_seal(fz_wire_auth(), f, n,
						     sizeof(f));
			if (len <= 0)
				die("spinnic_wire_auth_seal");
			out_reset();
			out_put(f, (size_t)len);
			out_write("wire", "%02u-%s", k++, auth[i].name);
		}
	}
}

/* ---- control messages ----------------------------------------------- */

static struct fz_env ge;
static uint32_t gseq;

/* apply a request in the generator's environment and record it */
static uint32_t
ctrl_rec(uint16_t op, struct spinnic_ctrl_msg *m)
{
	struct spinnic_ctrl_msg rep;

	m->version = SPINNIC_ABI_VERSION;
	m->op = op;
	m->seq = ++gseq;
	m->status = 0;
	out_put(m, sizeof(*m));
	if (ptl_nic_ctrl(ge.nic, ge.c, m, &rep) != 0)
		return SPINNIC_HANDLE_NONE;
	if (rep.status != 0)
		fprintf(stderr, "fuzz_gen: note: ctrl op %u status %d\n", op,
			rep.status);
	*m = rep;
	return 0;
}

/* record a request without applying it (a BATCH, or its records) */
static void
ctrl_put(uint16_t op, struct spinnic_ctrl_msg *m)
{
	m->version = SPINNIC_ABI_VERSION;
	m->op = op;
	m->seq = ++gseq;
	m->status = 0;
	out_put(m, sizeof(*m));
}

/*
 * BATCH (ABI 7): fuzz_ctrl.c copies the messages into the region at
 * FZ_BATCH_OFF, so a BATCH names later messages of the seed as records:
 * one of a CT, an MD and an ME counting into it and the MD released, by
 * reference; one stopped by a reference to itself (the CT and entry
 * before it undone); one of no records. The records are then applied
 * again one by one.
 */
static void
gen_ctrl_batch(void)
{
	enum { A = 5, B = A + 4 }; /* message index of each batch's records */
	struct spinnic_ctrl_msg m;
	uint32_t ni, pt;

	if (fz_env_init(&ge) != 0)
		die("env");
	out_reset();
	gseq = 0;
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	ctrl_rec(SPINNIC_CTRL_NI_INIT, &m);
	ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.eq = SPINNIC_HANDLE_NONE;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	ctrl_rec(SPINNIC_CTRL_PT_ALLOC, &m);
	pt = m.u.pt.pt_index;
	memset(&m, 0, sizeof(m));
	m.u.batch.off = FZ_BATCH_OFF + A * SPINNIC_CTRL_MSG_SIZE;
	m.u.batch.count = 4;
	ctrl_put(SPINNIC_CTRL_BATCH, &m);              /* 2 */
	m.u.batch.off = FZ_BATCH_OFF + B * SPINNIC_CTRL_MSG_SIZE;
	m.u.batch.count = 3;
	ctrl_put(SPINNIC_CTRL_BATCH, &m);              /* 3 */
	m.u.batch.count = 0;
	ctrl_put(SPINNIC_CTRL_BATCH, &m);              /* 4 */
	/* A: CT, MD into it, ME into it, the MD released */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ni;
	m.u.ct.ct_off = FZ_CT_OFF + 64;
	ctrl_put(SPINNIC_CTRL_CT_ALLOC, &m);           /* A + 0 */
	memset(&m, 0, sizeof(m));
	m.u.md.ni = ni;
	m.u.md.start = fz_addr(FZ_BUF_OFF);
	m.u.md.length = 4096;
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.ct = SPINNIC_BATCH_REF(0);
	m.u.md.options = SPINNIC_PTL_MD_EVENT_CT_SEND;
	ctrl_put(SPINNIC_CTRL_MD_BIND, &m);            /* A + 1 */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni;
	m.u.me.pt_index = pt;
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = fz_addr(FZ_BUF_OFF + 8192);
	m.u.me.length = 4096;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_EVENT_CT_COMM;
	m.u.me.ct = SPINNIC_BATCH_REF(0);
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.match_bits = 0x10;
	ctrl_put(SPINNIC_CTRL_ME_APPEND, &m);          /* A + 2 */
	memset(&m, 0, sizeof(m));
	m.u.md.ni = ni;
	m.u.md.md = SPINNIC_BATCH_REF(1);
	ctrl_put(SPINNIC_CTRL_MD_RELEASE, &m);         /* A + 3 */
	/* B: CT, a reserved entry into it, an entry into itself */
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ni;
	m.u.ct.ct_off = FZ_CT_OFF + 128;
	ctrl_put(SPINNIC_CTRL_CT_ALLOC, &m);           /* B + 0 */
	memset(&m, 0, sizeof(m));
	m.flags = SPINNIC_CTRL_F_ME_RESERVE;
	m.u.me.ni = ni;
	m.u.me.pt_index = pt;
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = fz_addr(FZ_BUF_OFF + 8192);
	m.u.me.length = 64;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_USE_ONCE;
	m.u.me.ct = SPINNIC_BATCH_REF(0);
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.match_bits = 0x20;
	ctrl_put(SPINNIC_CTRL_ME_APPEND, &m);          /* B + 1 */
	m.flags = 0;
	m.u.me.ct = SPINNIC_BATCH_REF(2);
	ctrl_put(SPINNIC_CTRL_ME_APPEND, &m);          /* B + 2 */
	out_write("ctrl", "05-batch");
	fz_env_fini(&ge);
}

static void
gen_ctrl(void)
{
	struct spinnic_ctrl_msg m;
	uint32_t ni, eq, ct, pt, md, me, me2;
	uint16_t op;

	if (fz_env_init(&ge) != 0)
		die("env");
	out_reset();
	gseq = 0;
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	m.u.ni.desired.max_entries = -1;
	ctrl_rec(SPINNIC_CTRL_NI_INIT, &m);
	ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = ni;
	m.u.eq.ring_off = FZ_EQ_OFF;
	m.u.eq.count = FZ_EQ_COUNT;
	ctrl_rec(SPINNIC_CTRL_EQ_ALLOC, &m);
	eq = m.u.eq.eq;
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ni;
	m.u.ct.ct_off = FZ_CT_OFF;
	ctrl_rec(SPINNIC_CTRL_CT_ALLOC, &m);
	ct = m.u.ct.ct;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.eq = eq;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	m.u.pt.options = SPINNIC_PTL_PT_FLOWCTRL;
	ctrl_rec(SPINNIC_CTRL_PT_ALLOC, &m);
	pt = m.u.pt.pt_index;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.pt_index = pt;
	ctrl_rec(SPINNIC_CTRL_PT_DISABLE, &m);
	m.u.pt.ni = ni;
	m.u.pt.pt_index = pt;
	ctrl_rec(SPINNIC_CTRL_PT_ENABLE, &m);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = ni;
	m.u.md.start = fz_addr(FZ_BUF_OFF);
	m.u.md.length = 8192;
	m.u.md.eq = eq;
	m.u.md.ct = ct;
	m.u.md.options = SPINNIC_PTL_MD_EVENT_CT_SEND;
	ctrl_rec(SPINNIC_CTRL_MD_BIND, &m);
	md = m.u.md.md;
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni;
	m.u.me.pt_index = pt;
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = fz_addr(FZ_BUF_OFF + 8192);
	m.u.me.length = 4096;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_OP_GET |
			 SPINNIC_PTL_ME_USE_ONCE;
	m.u.me.ct = ct;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	m.u.me.match_bits = 0x10;
	m.u.me.ignore_bits = 0x0f;
	ctrl_rec(SPINNIC_CTRL_ME_APPEND, &m);
	me = m.u.me.me;
	m.u.me.list = SPINNIC_PTL_OVERFLOW_LIST;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_MANAGE_LOCAL;
	m.u.me.match_bits = 0x20;
	m.u.me.min_free = 512;
	ctrl_rec(SPINNIC_CTRL_ME_APPEND, &m);
	me2 = m.u.me.me;
	m.u.me.list = SPINNIC_PTL_SEARCH_ONLY;
	ctrl_rec(SPINNIC_CTRL_ME_SEARCH, &m);
	m.u.me.list = SPINNIC_PTL_SEARCH_DELETE;
	ctrl_rec(SPINNIC_CTRL_ME_SEARCH, &m);
	out_write("ctrl", "00-setup-objects");
	/* tear everything down again (same prefix) */
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni;
	m.u.me.me = me;
	ctrl_rec(SPINNIC_CTRL_ME_UNLINK, &m);
	m.u.me.me = me2;
	ctrl_rec(SPINNIC_CTRL_ME_UNLINK, &m);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = ni;
	m.u.md.md = md;
	ctrl_rec(SPINNIC_CTRL_MD_RELEASE, &m);
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.pt_index = pt;
	ctrl_rec(SPINNIC_CTRL_PT_FREE, &m);
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ni;
	m.u.ct.ct = ct;
	ctrl_rec(SPINNIC_CTRL_CT_FREE, &m);
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = ni;
	m.u.eq.eq = eq;
	ctrl_rec(SPINNIC_CTRL_EQ_FREE, &m);
	memset(&m, 0, sizeof(m));
	m.u.ni.ni = ni;
	ctrl_rec(SPINNIC_CTRL_NI_FINI, &m);
	out_write("ctrl", "01-setup-teardown");
	fz_env_fini(&ge);

	/* a non-matching logical NI, and each op the NIC leaves to others */
	if (fz_env_init(&ge) != 0)
		die("env");
	out_reset();
	gseq = 0;
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_NO_MATCHING | SPINNIC_PTL_NI_LOGICAL;
	ctrl_rec(SPINNIC_CTRL_NI_INIT, &m);
	ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.eq = SPINNIC_HANDLE_NONE;
	m.u.pt.pt_index = 5;
	ctrl_rec(SPINNIC_CTRL_PT_ALLOC, &m);
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni;
	m.u.me.pt_index = 5;
	m.u.me.start = fz_addr(FZ_BUF_OFF);
	m.u.me.length = 100;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	ctrl_rec(SPINNIC_CTRL_ME_APPEND, &m);
	for (op = SPINNIC_CTRL_ATTACH; op < SPINNIC_CTRL_OP_MAX; op++) {
		if (op != SPINNIC_CTRL_ATTACH && op != SPINNIC_CTRL_DETACH &&
		    op < SPINNIC_CTRL_CTX_INSTALL)
			continue;
		memset(&m, 0, sizeof(m));
		m.u.ctx.ni = ni;
		ctrl_rec(op, &m);
	}
	out_write("ctrl", "02-nomatch-logical-others");
	fz_env_fini(&ge);

	/* an iovec ME and MD over fz_iov_fill's array (fuzz_ctrl.c writes
	 * it too), left to NIC teardown: nothing of theirs may leak */
	if (fz_env_init(&ge) != 0)
		die("env");
	fz_iov_fill(ge.region);
	out_reset();
	gseq = 0;
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	ctrl_rec(SPINNIC_CTRL_NI_INIT, &m);
	ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = ni;
	m.u.eq.ring_off = FZ_EQ_OFF;
	m.u.eq.count = FZ_EQ_COUNT;
	ctrl_rec(SPINNIC_CTRL_EQ_ALLOC, &m);
	eq = m.u.eq.eq;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = ni;
	m.u.pt.eq = eq;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	ctrl_rec(SPINNIC_CTRL_PT_ALLOC, &m);
	pt = m.u.pt.pt_index;
	memset(&m, 0, sizeof(m));
	m.u.me.ni = ni;
	m.u.me.pt_index = pt;
	m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
	m.u.me.start = fz_addr(FZ_IOV_OFF);
	m.u.me.length = FZ_IOV_N;
	m.u.me.options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_OP_GET |
			 SPINNIC_PTL_IOVEC;
	m.u.me.ct = SPINNIC_HANDLE_NONE;
	m.u.me.uid = SPINNIC_PTL_UID_ANY;
	m.u.me.ctx = SPINNIC_HANDLE_NONE;
	m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
	m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
	ctrl_rec(SPINNIC_CTRL_ME_APPEND, &m);
	memset(&m, 0, sizeof(m));
	m.u.md.ni = ni;
	m.u.md.start = fz_addr(FZ_IOV_OFF);
	m.u.md.length = FZ_IOV_N;
	m.u.md.eq = eq;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	m.u.md.options = SPINNIC_PTL_IOVEC;
	ctrl_rec(SPINNIC_CTRL_MD_BIND, &m);
	out_write("ctrl", "03-iovec");
	fz_env_fini(&ge);

	/* Active Access: a log, one served on the NIC, marks bound to the
	 * first (one redirecting, one logging reads), a refused free; left
	 * to client teardown */
	if (fz_env_init(&ge) != 0)
		die("env");
	out_reset();
	gseq = 0;
	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	ctrl_rec(SPINNIC_CTRL_NI_INIT, &m);
	ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.aa.ni = ni;
	m.u.aa.log = SPINNIC_HANDLE_NONE;
	m.u.aa.ring_off = FZ_CT_OFF + 32u * 1024;
	m.u.aa.size = SPINNIC_AA_RING_MIN;
	m.u.aa.flags = SPINNIC_AA_LOG_DROP;
	ctrl_rec(SPINNIC_CTRL_AA_LOG_CREATE, &m);
	eq = m.u.aa.log;
	/* a log served on the NIC (access handler, timed wake) */
	memset(&m, 0, sizeof(m));
	m.u.aa.ni = ni;
	m.u.aa.log = SPINNIC_HANDLE_NONE;
	m.u.aa.ring_off = FZ_CT_OFF + 64u * 1024;
	m.u.aa.size = SPINNIC_AA_RING_MIN;
	m.u.aa.flags = SPINNIC_AA_LOG_HANDLER;
	m.u.aa.notify_every = 10;
	m.u.aa.notify_us = 100;
	m.u.aa.ctx = 1;
	m.u.aa.addr = fz_addr(FZ_BUF_OFF);
	m.u.aa.len = 2 * SPINNIC_AA_PAGE;
	ctrl_rec(SPINNIC_CTRL_AA_LOG_CREATE, &m);
	memset(&m, 0, sizeof(m));
	m.u.aa.ni = ni;
	m.u.aa.log = eq;
	m.u.aa.addr = fz_addr(FZ_BUF_OFF);
	m.u.aa.len = 2 * SPINNIC_AA_PAGE;
	m.u.aa.bits = SPINNIC_AA_R | SPINNIC_AA_WL | SPINNIC_AA_WLD;
	ctrl_rec(SPINNIC_CTRL_AA_ASSOC, &m);
	m.u.aa.addr = fz_addr(FZ_BUF_OFF) + SPINNIC_AA_PAGE;
	m.u.aa.len = SPINNIC_AA_PAGE;
	m.u.aa.bits = SPINNIC_AA_W | SPINNIC_AA_R | SPINNIC_AA_RLD;
	ctrl_rec(SPINNIC_CTRL_AA_ASSOC, &m);
	memset(&m, 0, sizeof(m));
	m.u.aa.log = eq;
	ctrl_rec(SPINNIC_CTRL_AA_LOG_FREE, &m);
	out_write("ctrl", "04-aa");
	fz_env_fini(&ge);
	gen_ctrl_batch();
}

/* ---- command ring --------------------------------------------------- */

static void
cmd_put(uint16_t op, uint32_t ni, uint32_t md, uint64_t off, uint64_t len)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.ni = ni;
	c.md = md;
	c.ack_req = op == SPINNIC_CMD_PUT ? SPINNIC_PTL_ACK_REQ : 0;
	c.local_offset = off;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.pt_index = 0;
	c.match_bits = 0x42;
	c.user_ptr = 0x77;
	c.ct_success = op == SPINNIC_CMD_CT_SET ? 5 : 1;
	out_put(&c, sizeof(c));
}

/* A put whose @p len bytes travel in the command (SPINNIC_CMD_F_INLINE) */
static void
cmd_inline(uint16_t op, uint32_t ni, uint32_t md, uint64_t off, uint64_t len)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.flags = SPINNIC_CMD_F_INLINE;
	c.ni = ni;
	c.md = md;
	c.local_offset = off;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.match_bits = 0x42;
	memset(c.operand, 0xa5, sizeof(c.operand));
	out_put(&c, sizeof(c));
}

static void
cmd_sput(uint16_t op, uint32_t ni, uint32_t md, uint64_t off, uint64_t len,
	 uint64_t msg_length, uint32_t stream, uint16_t flags,
	 uint32_t blob_len)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.flags = flags;
	c.ni = ni;
	c.md = md;
	c.ack_req = SPINNIC_PTL_ACK_REQ;
	c.local_offset = off;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.match_bits = 0x42;
	c.msg_length = msg_length;
	c.stream = stream;
	c.blob = 1;
	c.blob_len = blob_len;
	c.count = 4;
	out_put(&c, sizeof(c));
}

/* An atomic: @p get_md is the get MD of a fetching one (or ignored). */
static void
cmd_atomic(uint16_t op, uint32_t ni, uint32_t md, uint32_t get_md,
	   uint64_t len, uint8_t aop, uint8_t atype, uint64_t get_off)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.ni = ni;
	c.md = md;
	c.ack_req = op == SPINNIC_CMD_ATOMIC ? SPINNIC_PTL_ACK_REQ : 0;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.match_bits = 0x42;
	c.get_md = op == SPINNIC_CMD_ATOMIC ? 0 : get_md;
	c.get_offset = get_off;
	c.atomic_op = aop;
	c.atomic_type = atype;
	c.operand[0] = 42;
	out_put(&c, sizeof(c));
}

/* An atomic whose values (after @p lead bytes of compare value) travel in
 * the command (SPINNIC_CMD_F_INLINE) */
static void
cmd_atomic_inline(uint16_t op, uint32_t ni, uint32_t md, uint32_t get_md,
		  uint64_t len, uint8_t aop, uint8_t atype)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = op;
	c.flags = SPINNIC_CMD_F_INLINE;
	c.ni = ni;
	c.md = md;
	c.length = len;
	c.target.nid = FZ_PEER_NID;
	c.target.pid = FZ_PEER_PID;
	c.match_bits = 0x42;
	c.get_md = op == SPINNIC_CMD_ATOMIC ? 0 : get_md;
	c.atomic_op = aop;
	c.atomic_type = atype;
	memset(c.operand, 0x11, sizeof(c.operand));
	out_put(&c, sizeof(c));
}

/* TRIG (trigger CT, threshold) followed by its operation */
static void
cmd_trig(uint32_t ni, uint32_t ct, uint64_t threshold)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = SPINNIC_CMD_TRIG;
	c.ni = ni;
	c.md = ct;
	c.length = threshold;
	out_put(&c, sizeof(c));
}

/* TRIG with a period: a persistent operation (SPINNIC_ABI_VERSION 6) */
static void
cmd_trig_p(uint32_t ni, uint32_t ct, uint64_t threshold, uint64_t period)
{
	struct spinnic_cmd c;

	memset(&c, 0, sizeof(c));
	c.op = SPINNIC_CMD_TRIG;
	c.ni = ni;
	c.md = ct;
	c.length = threshold;
	c.local_offset = period;
	out_put(&c, sizeof(c));
}

/* Persistent triggered operations: a re-armed put, a re-armed increment
 * of its own trigger counter (feeds itself until cancelled), a threshold
 * whose next one would wrap, a persistent ME append (refused) */
static void
gen_cmd_trig_rearm(const struct fz_objs *o, const uint32_t *md,
		   const uint32_t *me)
{
	out_reset();
	out_u(6 | (1 << 4), 1);
	cmd_trig_p(o->ni, o->ct, 1, 2);
	cmd_put(SPINNIC_CMD_PUT, o->ni, md[0], 0, 64);
	cmd_trig_p(o->ni, o->ct, 1, 1);
	cmd_put(SPINNIC_CMD_CT_INC, o->ni, o->ct, 0, 0);
	cmd_put(SPINNIC_CMD_CT_INC, o->ni, o->ct, 0, 0);
	cmd_put(SPINNIC_CMD_CT_CANCEL_TRIG, o->ni, o->ct, 0, 0);
	out_u(6, 1);
	cmd_trig_p(o->ni, o->ct, UINT64_MAX - 1, 5);
	cmd_put(SPINNIC_CMD_GET, o->ni, md[1], 0, 16);
	cmd_trig_p(o->ni, o->ct, 0, UINT64_MAX);
	cmd_put(SPINNIC_CMD_ME_APPEND, o->ni, me[0], 0, 0);
	cmd_put(SPINNIC_CMD_CT_SET, o->ni, o->ct, 0, 0);
	cmd_put(SPINNIC_CMD_CT_CHECK, o->ni, o->ct, 0, 0);
	out_write("cmd", "12-trig-rearm");
}

/* Triggered list changes on fuzz_cmd's two entries (fz_me_setup: me[0]
 * reserved, me[1] linked): an append and an unlink released at once, an
 * unlink of an entry gone, a plain unlink, a handle of the wrong type;
 * then (a fresh run) a cancelled append and unlink */
static void
gen_cmd_trig_me(const struct fz_objs *o, const uint32_t *me)
{
	out_reset();
	out_u(7 | (1 << 4), 1);
	cmd_trig(o->ni, o->ct, 0);
	cmd_put(SPINNIC_CMD_ME_APPEND, o->ni, me[0], 0, 0);
	cmd_trig(o->ni, o->ct, 0);
	cmd_put(SPINNIC_CMD_ME_UNLINK, o->ni, me[1], 0, 0);
	cmd_put(SPINNIC_CMD_ME_UNLINK, o->ni, me[1], 0, 0);
	cmd_put(SPINNIC_CMD_ME_UNLINK, o->ni, me[0], 0, 0);
	cmd_put(SPINNIC_CMD_ME_APPEND, o->ni, o->ct, 0, 0);
	out_write("cmd", "09-trig-me");
	out_reset();
	out_u(5, 1);
	cmd_trig(o->ni, o->ct, 9);
	cmd_put(SPINNIC_CMD_ME_APPEND, o->ni, me[0], 0, 0);
	cmd_trig(o->ni, o->ct, 9);
	cmd_put(SPINNIC_CMD_ME_UNLINK, o->ni, me[1], 0, 0);
	cmd_put(SPINNIC_CMD_CT_CANCEL_TRIG, o->ni, o->ct, 0, 0);
	out_write("cmd", "10-trig-me-cancel");
}

/* Triggered operations: armed, released by counter commands, cancelled;
 * a chain on the one CT; a TRIG without its operation */
static void
gen_cmd_trig(const struct fz_objs *o, const uint32_t *md)
{
	out_reset();
	out_u(6 | (1 << 4), 1);
	cmd_trig(o->ni, o->ct, 2);
	cmd_put(SPINNIC_CMD_PUT, o->ni, md[0], 0, 4096);
	cmd_trig(o->ni, o->ct, 1);
	cmd_put(SPINNIC_CMD_GET, o->ni, md[1], 0, 16);
	cmd_put(SPINNIC_CMD_CT_INC, o->ni, o->ct, 0, 0);
	cmd_put(SPINNIC_CMD_CT_CHECK, o->ni, o->ct, 0, 0);
	out_u(7, 1);
	cmd_trig(o->ni, o->ct, 7);
	cmd_put(SPINNIC_CMD_CT_INC, o->ni, o->ct, 0, 0);
	cmd_trig(o->ni, o->ct, 6);
	cmd_put(SPINNIC_CMD_CT_SET, o->ni, o->ct, 0, 0);
	cmd_trig(o->ni, o->ct, 9);
	cmd_put(SPINNIC_CMD_PUT, o->ni, md[1], 0, 64);
	cmd_put(SPINNIC_CMD_CT_CANCEL_TRIG, o->ni, o->ct, 0, 0);
	out_u(1, 1);
	cmd_trig(o->ni, o->ct, 0);
	out_write("cmd", "07-trig");
	/* a triggered atomic, released at once */
	out_reset();
	out_u(2, 1);
	cmd_trig(o->ni, o->ct, 0);
	cmd_atomic(SPINNIC_CMD_FETCH_ATOMIC, o->ni, md[0], md[1], 8,
		   SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T, 0);
	out_write("cmd", "08-trig-atomic");
}

static void
gen_cmd(void)
{
	struct fz_env e;
	struct fz_objs o;
	struct spinnic_ctrl_msg m;
	uint32_t md[2], me[2];

	/* the handles fuzz_cmd's setup gets: same calls, same order */
	if (fz_env_init(&e) != 0 || fz_objs_setup(&e, &o) != 0)
		die("env");
	memset(&m, 0, sizeof(m));
	m.u.md.ni = o.ni;
	m.u.md.start = fz_addr(FZ_BUF_OFF);
	m.u.md.length = 65536;
	m.u.md.eq = o.eq;
	m.u.md.ct = o.ct;
	m.u.md.options = SPINNIC_PTL_MD_EVENT_CT_SEND;
	fz_ctrl(&e, SPINNIC_CTRL_MD_BIND, &m);
	md[0] = m.u.md.md;
	m.u.md.start = fz_addr(FZ_BUF_OFF + 65536);
	m.u.md.length = 4096;
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	m.u.md.options = 0;
	fz_ctrl(&e, SPINNIC_CTRL_MD_BIND, &m);
	md[1] = m.u.md.md;
	if (fz_me_setup(&e, &o, me) != 0)
		die("entries");
	fz_env_fini(&e);

	out_reset();
	out_u(2 | (1 << 4), 1);
	cmd_put(SPINNIC_CMD_PUT, o.ni, md[0], 0, 4096);
	cmd_put(SPINNIC_CMD_GET, o.ni, md[1], 100, 3996);
	out_write("cmd", "00-put-get");
	out_reset();
	out_u(3, 1);
	cmd_put(SPINNIC_CMD_CT_SET, o.ni, o.ct, 0, 0);
	cmd_put(SPINNIC_CMD_CT_INC, o.ni, o.ct, 0, 0);
	cmd_put(SPINNIC_CMD_NOP, 0, 0, 0, 0);
	out_write("cmd", "01-ct-nop");
	out_reset();
	out_u(4 | (3 << 4), 1);
	cmd_put(SPINNIC_CMD_PUT, o.ni, md[0], 65000, 1000); /* past the MD */
	cmd_put(SPINNIC_CMD_GET, o.ni, md[1], 0, 5000);     /* no EQ */
	cmd_put(SPINNIC_CMD_PUT, o.ni ^ 1, md[0], 0, 1);    /* bad NI */
	cmd_put(SPINNIC_CMD_OP_MAX, o.ni, md[0], 0, 1);     /* bad op */
	out_write("cmd", "02-invalid");
	out_reset();
	out_u(7 | (7 << 4), 1);
	for (int i = 0; i < 7; i++)
		cmd_put(SPINNIC_CMD_PUT, o.ni, md[0], (uint64_t)i * 1024, 1024);
	out_u(7, 1);
	for (int i = 0; i < 7; i++)
		cmd_put(SPINNIC_CMD_GET, o.ni, md[0], (uint64_t)i * 8, 8);
	out_u(7, 1);
	for (int i = 0; i < 7; i++)
		cmd_put(SPINNIC_CMD_PUT, o.ni, md[1], 0, 0);
	out_write("cmd", "03-wrap");
	out_reset();
	out_u(1 | 8, 1);
	cmd_put(SPINNIC_CMD_PUT, o.ni, md[0], 0, 16);
	out_u(0x80000000u, 4);
	out_u(1, 1);
	cmd_put(SPINNIC_CMD_GET, o.ni, md[0], 0, 16);
	out_write("cmd", "04-head-jump");
	/* inline puts and atomics: good, too long, not a put */
	out_reset();
	out_u(7 | (2 << 4), 1);
	cmd_inline(SPINNIC_CMD_PUT, o.ni, md[0], 8, 8);
	cmd_inline(SPINNIC_CMD_PUT, o.ni, md[0], 0, SPINNIC_ATOMIC_OPERAND);
	cmd_inline(SPINNIC_CMD_PUT, o.ni, md[0], 0, SPINNIC_ATOMIC_OPERAND + 1);
	cmd_inline(SPINNIC_CMD_GET, o.ni, md[1], 0, 8);
	cmd_atomic_inline(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 8,
			  SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T);
	cmd_atomic_inline(SPINNIC_CMD_SWAP, o.ni, md[0], md[1], 16,
			  SPINNIC_PTL_CSWAP, SPINNIC_PTL_DOUBLE_COMPLEX);
	cmd_atomic_inline(SPINNIC_CMD_SWAP, o.ni, md[0], md[1], 32,
			  SPINNIC_PTL_CSWAP, SPINNIC_PTL_LONG_DOUBLE_COMPLEX);
	out_write("cmd", "11-inline");
	/* streaming and processed puts, good then bad */
	out_reset();
	out_u(5 | (4 << 4), 1);
	cmd_sput(SPINNIC_CMD_SPUT_START, o.ni, md[0], 0, 100, 300, 3, 0, 0);
	cmd_sput(SPINNIC_CMD_SPUT_STREAM, o.ni, md[0], 4000, 100, 0, 3, 0, 0);
	cmd_sput(SPINNIC_CMD_SPUT_STREAM, o.ni, md[1], 0, 100, 0, 3,
		 SPINNIC_CMD_F_EOM, 0);
	cmd_sput(SPINNIC_CMD_PROCESS_PUT, o.ni, md[0], 512, 4096, 0, 0, 0,
		 64);
	cmd_sput(SPINNIC_CMD_SPUT_START, o.ni, md[0], 0, 0, 0, 63, 0, 0);
	out_u(6 | (5 << 4), 1);
	/* stream slot out of range, EOM on a start, declared length below
	 * the first piece, piece past the MD, empty type blob, origin past
	 * the MD */
	cmd_sput(SPINNIC_CMD_SPUT_START, o.ni, md[0], 0, 10, 10,
		 SPINNIC_SPUT_MAX, 0, 0);
	cmd_sput(SPINNIC_CMD_SPUT_START, o.ni, md[0], 0, 10, 10, 1,
		 SPINNIC_CMD_F_EOM, 0);
	cmd_sput(SPINNIC_CMD_SPUT_START, o.ni, md[0], 0, 10, 9, 1, 0, 0);
	cmd_sput(SPINNIC_CMD_SPUT_STREAM, o.ni, md[1], 4000, 100, 0, 1, 0, 0);
	cmd_sput(SPINNIC_CMD_PROCESS_PUT, o.ni, md[0], 0, 16, 0, 0, 0, 0);
	cmd_sput(SPINNIC_CMD_PROCESS_PUT, o.ni, md[1], 4097, 16, 0, 0, 0,
		 64);
	out_write("cmd", "05-sput-process");
	/* atomics, good then bad */
	out_reset();
	out_u(4 | (4 << 4), 1);
	cmd_atomic(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 64, SPINNIC_PTL_SUM,
		   SPINNIC_PTL_INT64_T, 0);
	cmd_atomic(SPINNIC_CMD_FETCH_ATOMIC, o.ni, md[0], md[1], 16,
		   SPINNIC_PTL_PROD, SPINNIC_PTL_DOUBLE_COMPLEX, 100);
	cmd_atomic(SPINNIC_CMD_SWAP, o.ni, md[0], md[0], 8, SPINNIC_PTL_CSWAP,
		   SPINNIC_PTL_UINT64_T, 4096);
	cmd_atomic(SPINNIC_CMD_SWAP, o.ni, md[0], md[1], 32, SPINNIC_PTL_SWAP,
		   SPINNIC_PTL_LONG_DOUBLE_COMPLEX, 0);
	out_u(6 | (6 << 4), 1);
	/* BAND on a real, CSWAP through PtlAtomic, part of an element, two
	 * elements of a CSWAP, over one packet, the get range past its MD */
	cmd_atomic(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 8, SPINNIC_PTL_BAND,
		   SPINNIC_PTL_DOUBLE, 0);
	cmd_atomic(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 8, SPINNIC_PTL_CSWAP,
		   SPINNIC_PTL_INT64_T, 0);
	cmd_atomic(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 6, SPINNIC_PTL_SUM,
		   SPINNIC_PTL_INT32_T, 0);
	cmd_atomic(SPINNIC_CMD_SWAP, o.ni, md[0], md[1], 16, SPINNIC_PTL_CSWAP,
		   SPINNIC_PTL_INT64_T, 0);
	cmd_atomic(SPINNIC_CMD_ATOMIC, o.ni, md[0], 0, 4096, SPINNIC_PTL_SUM,
		   SPINNIC_PTL_INT64_T, 0);
	cmd_atomic(SPINNIC_CMD_FETCH_ATOMIC, o.ni, md[0], md[1], 16,
		   SPINNIC_PTL_SUM, SPINNIC_PTL_INT64_T, 4090);
	out_write("cmd", "06-atomic");
	gen_cmd_trig(&o, md);
	gen_cmd_trig_rearm(&o, md, me);
	gen_cmd_trig_me(&o, me);
}

/* ---- type expressions and blobs ------------------------------------- */

static const char *const exprs[] = {
	"double",
	"byte", "char", "int8", "uint8", "int16", "uint16", "int32", "uint32",
	"int64", "uint64", "float", "complex", "double_complex",
	"contig(4)[int32]",
	"vector(1024,1,1024)[double]",
	"vector(3,2,-4)[int16]",
	"hvector(4,2,24)[float]",
	"indexed(1,2,3;0,5,10)[int32]",
	"hindexed(2,1;-16,40)[double]",
	"indexed_block(2;5,0,9)[contig(3)[complex]]",
	"hindexed_block(3;0,100,50)[uint8]",
	"struct(1,2,1;0,8,32)[double,int32,char]",
	"subarray(4,5,6;2,3,1;1,2,3;C)[int64]",
	"subarray(4,5;2,3;1,2;F)[hindexed(1,2;-8,40)[int16]]",
	"resized(-4,16)[int32]",
	"vector(4,2,3)[struct(1,2;0,8)[double,resized(-4,16)[int32]]]",
	"contig(0)[double]",
	" vector ( 2 , 1 , 3 ) [ contig(2)[ double ] ] ",
};

static void
gen_ddt(void)
{
	static uint64_t blob[1 << 14];
	unsigned nb = 0;

	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		struct ddt_type *t = ddt_parse(exprs[i], NULL);
		ssize_t bl;

		if (t == NULL)
			die(exprs[i]);
		out_reset();
		out_put(exprs[i], strlen(exprs[i]));
		out_write("ddt_parse", "%02zu", i);
		if (ddt_commit(t) != 0)
			die("commit");
		bl = ddt_serialize(t, blob, sizeof(blob));
		/* a few types of each shape; big ones would slow fuzzing */
		if (bl > 0 && bl <= 4096 && (i == 0 || i >= 14)) {
			out_reset();
			out_put(blob, (size_t)bl);
			out_write("ddt_blob", "%02u", nb++);
		}
		ddt_free(t);
	}
}

/* ---- reassembly ----------------------------------------------------- */

static void
rec_frame(const struct spinnic_pkt *p)
{
	static uint8_t f[SPINNIC_WIRE_HDR_LEN + 65536];
	size_t n = frame(f, sizeof(f), p);

	out_u(n, 2);
	out_put(f, n);
}

/* the packets of a message, in the order given by perm (NULL: in order) */
static void
rec_msg(uint8_t type, uint8_t op, uint64_t id, uint64_t bits, uint64_t len,
	const unsigned *perm, unsigned nperm)
{
	unsigned npk = len == 0 ? 1 : (unsigned)((len + FZ_PAYLOAD - 1) /
						 FZ_PAYLOAD);
	struct spinnic_pkt p;

	for (unsigned k = 0; k < (perm ? nperm : npk); k++) {
		unsigned i = perm ? perm[k] : k;
		uint64_t off = (uint64_t)i * FZ_PAYLOAD;
		uint32_t pay = (uint32_t)(len - off < FZ_PAYLOAD ? len - off :
					  FZ_PAYLOAD);
		uint8_t fl = 0;

		if (i == 0)
			fl |= SPINNIC_WIRE_F_HEADER;
		if (i == npk - 1)
			fl |= SPINNIC_WIRE_F_COMPLETION;
		if (fl == 0)
			fl = SPINNIC_WIRE_F_PAYLOAD;
		pkt_init(&p, type, fl, op, id, len, off, pay);
		p.match_bits = bits;
		p.ack_req = type == SPINNIC_WIRE_T_DATA ? SPINNIC_PTL_ACK_REQ : 0;
		rec_frame(&p);
	}
}

static void
gen_reasm(void)
{
	static const unsigned shuffled[] = { 2, 0, 0, 3, 1, 2 }; /* dups */
	struct ptl_op_info info;
	uint64_t get_ids[4], put_ids[4];
	unsigned ng = 0, np = 0;
	struct spinnic_pkt p;
	struct rm r;

	if (rm_setup(&r) != 0 || r.nops != 4)
		die("reasm setup");
	for (unsigned k = 0; k < r.nops; k++) {
		if (ptl_op_lookup(r.e.nic, r.op_ids[k], &info, NULL) != 0)
			die("reasm: op lookup");
		if (info.op == SPINNIC_CMD_GET)
			get_ids[ng++] = r.op_ids[k];
		else
			put_ids[np++] = r.op_ids[k];
	}
	rm_teardown(&r);
	if (ng != 3 || np != 1)
		die("reasm: ops not found");

	out_reset();
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 100, 0, 300, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 101, 0, 0, NULL, 0);
	out_write("reasm", "00-put-one-packet");
	out_reset();
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 102, 0, 1800,
		shuffled, 6);
	out_write("reasm", "01-put-reorder-dup");
	out_reset();
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 103, 1, 1500, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 104, 1, 100, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 105, 2, 700, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 106, 3, 1000, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 107, 4, 3000, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 108, 4, 3000, NULL, 0);
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 109, 4, 3000, NULL, 0);
	out_write("reasm", "02-use-once-overflow-truncate-local");
	out_reset();
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 110, 0, 2000,
		(const unsigned[]){ 1, 0 }, 2);
	out_u(0, 2); /* tick: times the unfinished message out */
	rec_msg(SPINNIC_WIRE_T_DATA, SPINNIC_WIRE_OP_PUT, 110, 0, 2000,
		(const unsigned[]){ 2, 3 }, 2);
	out_write("reasm", "03-timeout-late");
	out_reset();
	pkt_init(&p, SPINNIC_WIRE_T_GET, 5, SPINNIC_WIRE_OP_GET, 120, 4096, 0, 0);
	rec_frame(&p);
	p.match_bits = 2;
	p.msg_id = 121;
	rec_frame(&p);
	rec_frame(&p);
	out_write("reasm", "04-get-requests");
	out_reset();
	rec_msg(SPINNIC_WIRE_T_REPLY, SPINNIC_WIRE_OP_GET, get_ids[0], 0, 5000,
		NULL, 0);
	rec_msg(SPINNIC_WIRE_T_REPLY, SPINNIC_WIRE_OP_GET, get_ids[1], 0, 100,
		NULL, 0);
	rec_msg(SPINNIC_WIRE_T_REPLY, SPINNIC_WIRE_OP_GET, get_ids[2], 0, 0,
		NULL, 0);
	out_write("reasm", "05-replies");
	out_reset();
	pkt_init(&p, SPINNIC_WIRE_T_ACK, 0, SPINNIC_WIRE_OP_PUT, put_ids[0], 0,
		 0, 0);
	p.mlength = 3000;
	rec_frame(&p);
	pkt_init(&p, SPINNIC_WIRE_T_NACK, 0, SPINNIC_WIRE_OP_GET, get_ids[0], 0,
		 0, 0);
	p.fail_type = SPINNIC_PTL_NI_NO_MATCH;
	rec_frame(&p);
	rec_msg(SPINNIC_WIRE_T_REPLY, SPINNIC_WIRE_OP_GET, get_ids[1], 0, 100,
		NULL, 0);
	out_write("reasm", "06-ack-nack");
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	gen_wire();
	gen_ctrl();
	gen_cmd();
	gen_ddt();
	gen_reasm();
	return 0;
}
