/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the command ring (ptl_cmd_poll, DESIGN §4). A fresh NIC and
 * client get a matching NI, an EQ, a CT, and two MDs (FZ_MD_* below: one
 * with the EQ and CT, one without). The input is what the client writes
 * into its ring, in batches:
 *   u8  ctl   bits 0-2: commands in the batch (0-7); bit 3: then set head
 *             to the u32 that follows (a producer index the NIC must not
 *             believe); bits 4-6: how many the NIC may take per poll - 1
 *   ctl&7 x struct spinnic_cmd (128 bytes), written at head, head++
 * After each batch the NIC polls until the ring is empty. Every command it
 * returns must be a PUT or GET that lies inside one of the MDs (or a
 * streaming piece inside one, or a processed put whose origin is in one);
 * so must every triggered one that fires (TRIG slots, counter commands
 * and cancels in the input), handed to the originate hook, and every TRIG
 * must be accounted for in the ring's trig_done once the CT is freed.
 * Two entries exist for ME_APPEND and ME_UNLINK to name (fz_me_setup:
 * one reserved for a triggered append, one linked); once the NI went, no
 * entry is left (a reservation never leaks).
 */
#include <stdint.h>
#include <string.h>

#include "atomic_types.h"
#include "fuzz_common.h"

#define FZ_MD0_OFF FZ_BUF_OFF
#define FZ_MD0_LEN 65536u
#define FZ_MD1_OFF (FZ_BUF_OFF + 65536u)
#define FZ_MD1_LEN 4096u

struct cmd_env {
	struct fz_env e;
	struct fz_objs o;
	uint32_t md[2];
	uint64_t md_off[2], md_len[2];
	uint32_t me[2];
};

static int
md_bind(struct cmd_env *ce, unsigned k, uint64_t off, uint64_t len,
	uint32_t eq, uint32_t ct, uint32_t options)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.md.ni = ce->o.ni;
	m.u.md.start = fz_addr(off);
	m.u.md.length = len;
	m.u.md.options = options;
	m.u.md.eq = eq;
	m.u.md.ct = ct;
	if (fz_ctrl(&ce->e, SPINNIC_CTRL_MD_BIND, &m) != 0)
		return -1;
	ce->md[k] = m.u.md.md;
	ce->md_off[k] = off;
	ce->md_len[k] = len;
	return 0;
}

/* An atomic command as resolved: a valid pair, whole elements within one
 * packet, the operand only for a conditional swap or MSWAP of one
 * element, the get MD's range for the fetching ones. */
static void
check_atomic(const struct cmd_env *ce, const struct ptl_cmd *c)
{
	size_t es = spinnic_atomic_size(c->atomic_type);
	unsigned k;

	FZ_CHECK(spinnic_atomic_valid(c->atomic_op, c->atomic_type));
	FZ_CHECK(es > 0 && c->length % es == 0 && c->length <= 2048);
	FZ_CHECK(c->operand_len == 0 ||
		 (c->op == SPINNIC_CMD_SWAP && c->operand_len == es &&
		  c->length == es && c->atomic_op != SPINNIC_PTL_SWAP));
	if (!ptl_cmd_fetches(c->op))
		return;
	FZ_CHECK(c->ack_req == SPINNIC_PTL_NO_ACK_REQ);
	k = c->get_md == ce->md[0] ? 0 : 1;
	FZ_CHECK(c->get_md == ce->md[k]);
	FZ_CHECK(c->get_offset <= ce->md_len[k] &&
		 c->length <= ce->md_len[k] - c->get_offset);
	FZ_CHECK(c->get_addr == fz_addr(ce->md_off[k]) + c->get_offset);
}

static void
check_cmd(const struct cmd_env *ce, const struct ptl_cmd *c)
{
	unsigned k;

	FZ_CHECK(c->op == SPINNIC_CMD_PUT || c->op == SPINNIC_CMD_GET ||
		 ptl_cmd_sput(c->op) || ptl_cmd_atomic(c->op));
	if (ptl_cmd_atomic(c->op))
		check_atomic(ce, c);
	FZ_CHECK(c->ni == ce->o.ni);
	k = c->md == ce->md[0] ? 0 : 1;
	FZ_CHECK(c->md == ce->md[k]);
	FZ_CHECK(c->local_offset <= ce->md_len[k]);
	/* a processed put's length is the packed size, not an MD range */
	if (c->op != SPINNIC_CMD_PROCESS_PUT)
		FZ_CHECK(c->length <= ce->md_len[k] - c->local_offset);
	FZ_CHECK(c->local_addr == fz_addr(ce->md_off[k]) + c->local_offset);
	FZ_CHECK(c->uid == FZ_UID);
	if (c->op != SPINNIC_CMD_GET)
		FZ_CHECK(c->ack_req <= SPINNIC_PTL_OC_ACK_REQ);
	/* streaming and processed puts (lib/portals/cmd.c) */
	FZ_CHECK(c->flags == 0 || (c->op == SPINNIC_CMD_SPUT_STREAM &&
				   c->flags == SPINNIC_CMD_F_EOM) ||
		 ((c->op == SPINNIC_CMD_PUT || ptl_cmd_atomic(c->op)) &&
		  c->flags == SPINNIC_CMD_F_INLINE &&
		  c->operand_len + c->length <= SPINNIC_ATOMIC_OPERAND &&
		  c->stream == 0 && c->msg_length == 0 && c->count == 0));
	if (c->op == SPINNIC_CMD_SPUT_START || c->op == SPINNIC_CMD_SPUT_STREAM)
		FZ_CHECK(c->stream < SPINNIC_SPUT_MAX);
	if (c->op == SPINNIC_CMD_SPUT_START)
		FZ_CHECK(c->msg_length >= c->length);
	if (c->op == SPINNIC_CMD_PROCESS_PUT)
		FZ_CHECK(c->blob_len > 0 && c->blob_len <= SPINNIC_PROC_BLOB_MAX);
	if (c->op != SPINNIC_CMD_GET) {
		FZ_CHECK(c->md_start == fz_addr(ce->md_off[k]));
		FZ_CHECK(c->md_length == ce->md_len[k]);
	}
}

static int
fz_originate(void *arg, struct ptl_client *c, const struct ptl_cmd *cmd)
{
	struct cmd_env *ce = arg;

	FZ_CHECK(c == ce->e.c);
	FZ_CHECK(!ptl_cmd_sput(cmd->op));
	check_cmd(ce, cmd);
	return 0;
}

/* Every TRIG command consumed (armed or refused) left the NIC once the CT
 * and the NI went */
static void
check_trig_done(struct cmd_env *ce, const struct spinnic_cmd_ring *r)
{
	struct spinnic_ctrl_msg m;
	struct ptl_nic_stats st;

	memset(&m, 0, sizeof(m));
	m.u.ct.ni = ce->o.ni;
	m.u.ct.ct = ce->o.ct;
	(void)fz_ctrl(&ce->e, SPINNIC_CTRL_CT_FREE, &m);
	memset(&m, 0, sizeof(m));
	m.u.ni.ni = ce->o.ni;
	(void)fz_ctrl(&ce->e, SPINNIC_CTRL_NI_FINI, &m);
	ptl_trig_run(ce->e.c);
	ptl_nic_stats_get(ce->e.nic, &st);
	FZ_CHECK(r->trig_done[0] + r->trig_done[1] + r->trig_done[2] +
		 r->trig_done[3] == st.trig_armed + st.trig_refused);
	FZ_CHECK(st.mes_live == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cmd_env ce;
	struct spinnic_cmd_ring *r;
	struct fz_in in = { data, size };
	struct ptl_cmd out[8];
	unsigned batches = 0;

	memset(&ce, 0, sizeof(ce));
	FZ_CHECK(fz_env_init(&ce.e) == 0);
	FZ_CHECK(fz_objs_setup(&ce.e, &ce.o) == 0);
	FZ_CHECK(md_bind(&ce, 0, FZ_MD0_OFF, FZ_MD0_LEN, ce.o.eq, ce.o.ct,
			 SPINNIC_PTL_MD_EVENT_CT_SEND) == 0);
	FZ_CHECK(md_bind(&ce, 1, FZ_MD1_OFF, FZ_MD1_LEN, SPINNIC_HANDLE_NONE,
			 SPINNIC_HANDLE_NONE, 0) == 0);
	FZ_CHECK(fz_me_setup(&ce.e, &ce.o, ce.me) == 0);
	ptl_nic_set_originate(ce.e.nic, fz_originate, &ce);
	r = (struct spinnic_cmd_ring *)(ce.e.region + FZ_CMD_OFF);
	while (in.n > 0 && batches++ < 64) {
		unsigned ctl = (unsigned)fz_take(&in, 1);
		unsigned k, cnt = ctl & 7, per = 1 + ((ctl >> 4) & 7);
		unsigned polls = 0, got;

		for (k = 0; k < cnt && in.n > 0; k++) {
			struct spinnic_cmd *s = &r->slots[r->head &
							  (FZ_CMD_ENTRIES - 1)];
			size_t b = in.n < sizeof(*s) ? in.n : sizeof(*s);

			memset(s, 0, sizeof(*s));
			memcpy(s, in.p, b);
			in.p += b;
			in.n -= b;
			r->head++;
		}
		if (ctl & 8)
			r->head = (uint32_t)fz_take(&in, 4);
		do {
			got = ptl_cmd_poll(ce.e.c, out, per);
			FZ_CHECK(got <= per);
			for (k = 0; k < got; k++)
				check_cmd(&ce, &out[k]);
			fz_eq_drain(&ce.e, FZ_EQ_OFF);
		} while (r->tail != r->head && ++polls < 2 * FZ_CMD_ENTRIES);
		/* the NIC never takes more than one ring's worth per batch */
		FZ_CHECK(r->tail == r->head || (ctl & 8));
		if (ctl & 8)
			r->head = r->tail; /* the client recovers */
	}
	check_trig_done(&ce, r);
	fz_env_fini(&ce.e);
	return 0;
}
