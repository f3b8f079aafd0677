/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: control messages (ptl_nic_ctrl, DESIGN §4). The input is a
 * sequence of struct spinnic_ctrl_msg, SPINNIC_CTRL_MSG_SIZE bytes each,
 * exactly as they come off the control socket, applied in order by one
 * client of a fresh NIC (handles are deterministic, so a seed can name the
 * objects earlier messages created). Every reply must carry a Portals
 * status; afterwards a few put headers go through matching, so whatever
 * state the messages built is used (the matched data read through
 * ptl_match_access, iovec entries included: an array sits at FZ_IOV_OFF),
 * and the NIC is destroyed (LeakSanitizer sees anything a message
 * leaked, an iovec MD's or ME's entries too). The messages are also
 * copied into the region at FZ_BATCH_OFF, where a BATCH message
 * (ptl_nic_ctrl_batch) may name them as its records (ABI 7); their
 * replies must carry a Portals status too.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_common.h"

#define FZ_CTRL_MAX_MSGS 64

static void
batch_run(void *arg, const struct spinnic_ctrl_msg *req,
	  struct spinnic_ctrl_msg *rep)
{
	struct fz_env *e = arg;

	FZ_CHECK(ptl_nic_ctrl(e->nic, e->c, req, rep) == 0);
}

/* One BATCH: the replies over the records carry a Portals status. */
static void
batch_one(struct fz_env *e, const struct spinnic_ctrl_msg *req,
	  struct spinnic_ctrl_msg *rep, unsigned n)
{
	struct ptl_batch_stats st = { 0 };
	uint64_t first, last = 0;
	const struct spinnic_ctrl_msg *recs =
		(const struct spinnic_ctrl_msg *)(e->region + FZ_BATCH_OFF);

	memcpy(rep, req, sizeof(*rep));
	ptl_nic_ctrl_batch(e->c, req, rep, batch_run, e, &st);
	FZ_CHECK(rep->status >= SPINNIC_PTL_OK &&
		 rep->status <= SPINNIC_PTL_ABORTED);
	if (rep->status == SPINNIC_PTL_OK) {
		FZ_CHECK(rep->u.batch.done == req->u.batch.count);
		last = req->u.batch.count;
	} else if (rep->u.batch.failed != SPINNIC_HANDLE_NONE) {
		FZ_CHECK(rep->u.batch.failed < req->u.batch.count);
		last = rep->u.batch.failed + 1;
	}
	/* the records it read, where they are the input's copies */
	if (req->u.batch.off < FZ_BATCH_OFF ||
	    (req->u.batch.off - FZ_BATCH_OFF) % SPINNIC_CTRL_MSG_SIZE != 0)
		return;
	first = (req->u.batch.off - FZ_BATCH_OFF) / SPINNIC_CTRL_MSG_SIZE;
	for (uint64_t i = first; i < n && i < first + last; i++)
		FZ_CHECK(recs[i].status >= SPINNIC_PTL_OK &&
			 recs[i].status <= SPINNIC_PTL_ABORTED);
}

static void
probe_matching(struct fz_env *e, const struct spinnic_ctrl_msg *msgs,
	       unsigned n)
{
	struct spinnic_pkt h;
	struct ptl_match m;
	unsigned i;

	for (i = 0; i < 8; i++) {
		memset(&h, 0, sizeof(h));
		h.type = SPINNIC_WIRE_T_DATA;
		h.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
		h.op = i & 4 ? SPINNIC_WIRE_OP_GET : SPINNIC_WIRE_OP_PUT;
		if (h.op == SPINNIC_WIRE_OP_GET)
			h.type = SPINNIC_WIRE_T_GET;
		h.ack_req = SPINNIC_PTL_ACK_REQ;
		h.ni = (uint8_t)(i & 3);
		h.src.nid = 2;
		h.src.pid = 3;
		h.dst = ptl_client_id(e->c);
		/* a pt index and match bits an ME of the input used */
		h.pt_index = i & 1 ? 0 : (n ? msgs[i % n].u.me.pt_index : 0);
		h.match_bits = n ? msgs[(i * 7) % n].u.me.match_bits : 0;
		h.uid = FZ_UID;
		h.msg_id = i;
		h.msg_len = 100u << i;
		h.pay_len = h.op == SPINNIC_WIRE_OP_PUT ? (uint32_t)h.msg_len : 0;
		memset(&m, 0, sizeof(m));
		if (ptl_nic_match(e->nic, &h, &m) != 0) {
			FZ_CHECK(m.c == NULL);
			continue;
		}
		FZ_CHECK(m.mlength <= m.rlength);
		FZ_CHECK(m.mlength <= m.length);
		FZ_CHECK(m.length <= m.me_length);
		FZ_CHECK(m.start >= m.me_start);
		FZ_CHECK(m.start - m.me_start + m.length <= m.me_length);
		/* an iovec ME: events name the array, data goes through the
		 * entries (read here: safe whatever they name) */
		FZ_CHECK(m.iov == NULL || (m.start == m.me_start &&
					   m.me_length == m.iov->total));
		if (m.mlength > 0) {
			static uint8_t buf[1u << 16];
			uint64_t len = m.mlength < sizeof(buf) ? m.mlength :
				sizeof(buf);
			int rc = ptl_match_access(&m, 0, buf, len, false);

			FZ_CHECK(rc == 0 || rc == -EFAULT || rc == -ERANGE);
		}
		if (i & 2)
			ptl_match_release(e->nic, &m);
		else
			ptl_match_complete(e->nic, &m, SPINNIC_PTL_NI_OK);
		fz_eq_drain(e, FZ_EQ_OFF);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct spinnic_ctrl_msg msgs[FZ_CTRL_MAX_MSGS];
	struct spinnic_ctrl_msg rep;
	struct fz_env e;
	unsigned n, i;
	int rc;

	n = (unsigned)(size / sizeof(struct spinnic_ctrl_msg));
	if (n > FZ_CTRL_MAX_MSGS)
		n = FZ_CTRL_MAX_MSGS;
	memcpy(msgs, data, n * sizeof(msgs[0]));
	FZ_CHECK(fz_env_init(&e) == 0);
	fz_iov_fill(e.region);
	memcpy(e.region + FZ_BATCH_OFF, msgs, n * sizeof(msgs[0]));
	for (i = 0; i < n; i++) {
		const struct spinnic_ctrl_msg *req = &msgs[i];

		if (req->op == SPINNIC_CTRL_BATCH) {
			batch_one(&e, req, &rep, n);
			fz_eq_drain(&e, FZ_EQ_OFF);
			fz_eq_drain(&e, FZ_EQ2_OFF);
			continue;
		}

		/* a separate reply buffer, poisoned: the reply must be complete */
		memset(&rep, 0xa5, sizeof(rep));
		rc = ptl_nic_ctrl(e.nic, e.c, req, &rep);
		if (rc == -EOPNOTSUPP)
			continue;
		FZ_CHECK(rc == 0);
		FZ_CHECK(rep.status >= SPINNIC_PTL_OK &&
			 rep.status <= SPINNIC_PTL_ABORTED);
		FZ_CHECK(rep.seq == req->seq && rep.op == req->op);
		/* replies feed later messages only through the seed */
		fz_eq_drain(&e, FZ_EQ_OFF);
		fz_eq_drain(&e, FZ_EQ2_OFF);
	}
	probe_matching(&e, msgs, n);
	fz_env_fini(&e);
	return 0;
}
