/* SPDX-License-Identifier: BSD-3-Clause */
/* Randomized robustness (fixed seed, reproducible): mutated frames through
 * the parser, random control messages, headers and commands through the
 * NIC state. Checks invariants on everything accepted; run it under
 * -Db_sanitize=address,undefined for memory errors. */
#include "ptl_test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t
rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* a value that is often interesting: small, boundary, or random */
static uint64_t
rnd_val(void)
{
	switch (rnd_below(6)) {
	case 0:
		return rnd_below(8);
	case 1:
		return ~0ull - rnd_below(4);
	case 2:
		return (uint64_t)1 << rnd_below(64);
	case 3:
		return 0xffffffffu;
	default:
		return rnd();
	}
}

static void
test_wire_mutations(void **state)
{
	static uint8_t f[4096], g[4096];
	struct spinnic_wire_stats st;
	struct spinnic_wire_addr a;
	struct spinnic_pkt p, q;
	int i, j, len, rc, reasons = 0;

	(void)state;
	memset(&st, 0, sizeof(st));
	spinnic_wire_addr_nodes(1, 2, SPINNIC_WIRE_UDP_PORT, &a);
	for (i = 0; i < 60000; i++) {
		memset(&p, 0, sizeof(p));
		p.type = (uint8_t)(1 + rnd_below(5));
		switch (p.type) {
		case SPINNIC_WIRE_T_DATA:
		case SPINNIC_WIRE_T_REPLY:
			p.flags = (uint8_t[]){ 1, 2, 4, 5 }[rnd_below(4)];
			p.op = p.type == SPINNIC_WIRE_T_DATA ?
			       SPINNIC_WIRE_OP_PUT : SPINNIC_WIRE_OP_GET;
			p.pay_len = 1 + rnd_below(1500);
			p.msg_len = p.pay_len;
			if (p.flags == SPINNIC_WIRE_F_PAYLOAD) {
				p.offset = 1000;
				p.msg_len = 5000;
			} else if (p.flags == SPINNIC_WIRE_F_COMPLETION) {
				p.offset = 3000;
				p.msg_len = 3000 + p.pay_len;
			}
			break;
		case SPINNIC_WIRE_T_GET:
			p.flags = 5;
			p.op = SPINNIC_WIRE_OP_GET;
			p.msg_len = rnd_below(1 << 20);
			break;
		default:
			p.op = SPINNIC_WIRE_OP_PUT;
			break;
		}
		p.match_bits = rnd();
		len = spinnic_wire_build(f, sizeof(f), &a, &p);
		assert_true(len > 0);
		assert_int_equal(spinnic_wire_parse(f, (size_t)len,
						    SPINNIC_WIRE_UDP_PORT, &q),
				 0);
		/* mutate: flip bytes, overwrite fields, cut, or extend */
		memcpy(g, f, (size_t)len);
		for (j = (int)rnd_below(4); j >= 0; j--) {
			uint32_t at = rnd_below((uint32_t)len);

			switch (rnd_below(4)) {
			case 0:
				g[at] ^= (uint8_t)(1u << rnd_below(8));
				break;
			case 1:
				g[at] = (uint8_t)rnd();
				break;
			case 2:
				len = (int)rnd_below((uint32_t)len + 1);
				break;
			default:
				if (len + 64 <= (int)sizeof(g))
					len += (int)rnd_below(64);
				break;
			}
			if (len == 0)
				break;
		}
		rc = spinnic_wire_parse(g, (size_t)len, SPINNIC_WIRE_UDP_PORT,
					&q);
		spinnic_wire_stats_count(&st, rc);
		if (rc != 0) {
			assert_true(-rc >= SPINNIC_WIRE_DROP_BASE &&
				    -rc < SPINNIC_WIRE_DROP_END);
			continue;
		}
		/* accepted: everything it says is consistent */
		assert_true(q.payload >= g + SPINNIC_WIRE_ETH_LEN);
		assert_true(q.payload + q.pay_len <= g + len);
		assert_true(q.msg_len <= SPINNIC_WIRE_MAX_MSG_SIZE);
		if (q.type == SPINNIC_WIRE_T_DATA ||
		    q.type == SPINNIC_WIRE_T_REPLY) {
			assert_true(q.offset <= q.msg_len &&
				    q.pay_len <= q.msg_len - q.offset);
			if (q.flags & SPINNIC_WIRE_F_HEADER)
				assert_int_equal(q.offset, 0);
		} else {
			assert_int_equal(q.pay_len, 0);
		}
		assert_true(q.type >= 1 && q.type < SPINNIC_WIRE_T_MAX);
		assert_true(q.op >= 1 && q.op < SPINNIC_WIRE_OP_MAX);
	}
	for (j = 0; j < SPINNIC_WIRE_DROP_COUNT; j++)
		reasons += st.drop[j] != 0;
	assert_true(st.ok > 0);
	assert_true(reasons >= 10);
	/* pure noise */
	for (i = 0; i < 20000; i++) {
		len = (int)rnd_below(300);
		for (j = 0; j < len; j++)
			g[j] = (uint8_t)rnd();
		if (len > 13 && rnd_below(2)) {
			g[12] = 0x08;
			g[13] = 0x00;
		}
		rc = spinnic_wire_parse(g, (size_t)len, SPINNIC_WIRE_UDP_PORT,
					&q);
		assert_true(rc <= 0);
	}
}

#define NH 64

static void
test_state_random(void **state)
{
	struct t_env e;
	struct spinnic_ctrl_msg m;
	struct ptl_match live[16];
	struct ptl_cmd out[4];
	uint32_t handles[NH];
	unsigned nh = 0, nlive = 0;
	struct ptl_nic_stats s;
	int i, rc;

	(void)state;
	t_env_setup(&e);
	handles[nh++] = e.ni;
	handles[nh++] = e.eq;
	for (i = 0; i < 40000; i++) {
		unsigned what = rnd_below(10);

		if (i % 100 == 0) {
			/* keep the NI and PT alive often enough to reach the
			 * matching code: re-init (refs up), re-alloc the PT */
			memset(&m, 0, sizeof(m));
			m.u.ni.options = SPINNIC_PTL_NI_MATCHING |
					 SPINNIC_PTL_NI_PHYSICAL;
			t_ctrl(&e, e.c, SPINNIC_CTRL_NI_INIT, &m);
			memset(&m, 0, sizeof(m));
			m.u.pt.ni = e.ni;
			m.u.pt.eq = e.eq;
			m.u.pt.pt_index = e.pt;
			t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m);
			m.u.pt.eq = SPINNIC_HANDLE_NONE;
			t_ctrl(&e, e.c, SPINNIC_CTRL_PT_ALLOC, &m);
		}
		if (what < 4) {
			/* a control message: mostly plausible, some noise */
			size_t k;

			memset(&m, 0, sizeof(m));
			for (k = 0; k < sizeof(m.u.raw); k += 8) {
				uint64_t v = rnd_below(3) ? 0 : rnd_val();

				memcpy(m.u.raw + k, &v, 8);
			}
			m.version = rnd_below(50) ? SPINNIC_ABI_VERSION : 2;
			m.op = (uint16_t)(SPINNIC_CTRL_NI_INIT +
					  rnd_below(SPINNIC_CTRL_OP_MAX));
			/* plug in known handles and sane offsets often */
			if (rnd_below(4)) {
				uint32_t *w = (uint32_t *)m.u.raw;

				w[0] = handles[rnd_below(nh)];
				if (rnd_below(2))
					w[1] = handles[rnd_below(nh)];
				if (m.op == SPINNIC_CTRL_NI_INIT)
					m.u.ni.options =
						SPINNIC_PTL_NI_MATCHING |
						SPINNIC_PTL_NI_PHYSICAL;
				if (m.op == SPINNIC_CTRL_EQ_ALLOC) {
					m.u.eq.ring_off = T_EQ2_OFF;
					m.u.eq.count = 1u << rnd_below(8);
				}
				if (m.op == SPINNIC_CTRL_CT_ALLOC)
					m.u.ct.ct_off = T_CT_OFF +
						64 * rnd_below(8);
				if (m.op == SPINNIC_CTRL_ME_APPEND ||
				    m.op == SPINNIC_CTRL_ME_SEARCH) {
					m.u.me.pt_index = e.pt;
					m.u.me.list = rnd_below(4);
					m.u.me.start = t_addr(&e, T_BUF_OFF);
					m.u.me.length = rnd_below(8192);
					m.u.me.options &= rnd_below(2) ?
						SPINNIC_PTL_ME_USE_ONCE |
						SPINNIC_PTL_ME_MANAGE_LOCAL |
						SPINNIC_PTL_ME_NO_TRUNCATE :
						(1u << 19) - 1;
					m.u.me.options |=
						SPINNIC_PTL_ME_OP_PUT |
						SPINNIC_PTL_ME_OP_GET;
					m.u.me.ct = SPINNIC_HANDLE_NONE;
					m.u.me.uid = SPINNIC_PTL_UID_ANY;
					m.u.me.match_id.nid =
						SPINNIC_PTL_NID_ANY;
					m.u.me.match_id.pid =
						SPINNIC_PTL_PID_ANY;
					m.u.me.match_bits = rnd_below(4);
				}
			}
			rc = ptl_nic_ctrl(e.nic, e.c, &m, &m);
			if (rc == -EOPNOTSUPP)
				continue;
			assert_int_equal(rc, 0);
			assert_true(m.status >= 0 &&
				    m.status <= SPINNIC_PTL_ABORTED);
			if (m.status == 0 && nh < NH) {
				uint32_t *w = (uint32_t *)m.u.raw;

				if (m.op == SPINNIC_CTRL_ME_APPEND)
					handles[nh++] = m.u.me.me;
				else if (w[1] != 0)
					handles[nh++] = w[1];
			}
		} else if (what < 8) {
			/* a header from the network */
			struct spinnic_pkt h;

			t_hdr(&e, &h, rnd_below(4), rnd_below(10000));
			if (rnd_below(3) == 0)
				h.op = (uint8_t)(1 + rnd_below(5));
			if (h.op == SPINNIC_WIRE_OP_GET)
				h.type = SPINNIC_WIRE_T_GET;
			if (rnd_below(4) == 0)
				h.pt_index = rnd_below(70);
			if (rnd_below(8) == 0)
				h.ni = (uint8_t)rnd_below(4);
			h.remote_offset = rnd_below(3) ? 0 : rnd_val();
			if (nlive == 16) {
				ptl_match_complete(e.nic, &live[0],
						   SPINNIC_PTL_NI_OK);
				live[0] = live[--nlive];
			}
			rc = ptl_nic_match(e.nic, &h, &live[nlive]);
			if (rc == 0) {
				struct ptl_match *mt = &live[nlive];

				assert_true(mt->mlength <= mt->rlength);
				assert_true(mt->mlength <= mt->length);
				assert_true(mt->length <= mt->me_length);
				assert_true(mt->start >= mt->me_start);
				assert_true(mt->start - mt->me_start +
					    mt->length <= mt->me_length);
				nlive++;
			} else {
				assert_null(live[nlive].c);
			}
		} else if (what < 9) {
			if (nlive) {
				unsigned k = rnd_below(nlive);

				if (rnd_below(2))
					ptl_match_complete(e.nic, &live[k],
							   (uint8_t)rnd_below(8));
				else
					ptl_match_release(e.nic, &live[k]);
				live[k] = live[--nlive];
			}
			/* consume without trusting the ring: random
			 * control messages may have placed other EQs
			 * over it */
			t_eq(&e, T_EQ_OFF)->tail = t_eq(&e, T_EQ_OFF)->head;
		} else {
			/* a random command */
			struct spinnic_cmd_ring *r =
				(struct spinnic_cmd_ring *)(e.region + T_CMD_OFF);
			struct spinnic_cmd *c = &r->slots[r->head & 15];
			unsigned n, k;

			memset(c, 0, sizeof(*c));
			c->op = (uint16_t)rnd_below(6);
			c->ni = handles[rnd_below(nh)];
			c->md = handles[rnd_below(nh)];
			c->length = rnd_below(3) ? rnd_below(5000) : rnd_val();
			c->local_offset = rnd_below(3) ? rnd_below(5000) :
							 rnd_val();
			c->target.nid = 2;
			c->target.pid = rnd_below(4);
			c->pt_index = rnd_below(70);
			r->head++;
			n = ptl_cmd_poll(e.c, out, 4);
			for (k = 0; k < n; k++) {
				assert_true(out[k].op == SPINNIC_CMD_PUT ||
					    out[k].op == SPINNIC_CMD_GET);
				assert_true(out[k].local_offset +
					    out[k].length >= out[k].length);
			}
		}
	}
	while (nlive)
		ptl_match_complete(e.nic, &live[--nlive], SPINNIC_PTL_NI_OK);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.ctrl_ok > 0 && s.bad_ctrl > 0);
	assert_true(s.match_priority > 0);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire_mutations),
		cmocka_unit_test(test_state_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
