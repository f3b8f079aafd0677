/* SPDX-License-Identifier: BSD-3-Clause */
/* Wire format: build -> parse round trip, and every drop reason. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wire.h"
#include "wire_test.h"


static void
pkt_default(struct spinnic_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->type = SPINNIC_WIRE_T_DATA;
	p->flags = SPINNIC_WIRE_F_HEADER;
	p->op = SPINNIC_WIRE_OP_PUT;
	p->ack_req = SPINNIC_PTL_ACK_REQ;
	p->ni = SPINNIC_WIRE_NI_LOGICAL;
	p->src.nid = 0x010203;
	p->src.pid = 4;
	p->dst.nid = 5;
	p->dst.pid = 6;
	p->pt_index = 7;
	p->uid = 1001;
	p->match_bits = 0x1122334455667788ull;
	p->hdr_data = 0x99aabbccddeeff00ull;
	p->msg_id = 0xfedcba9876543210ull;
	p->msg_len = 5000;
	p->offset = 0;
	p->remote_offset = 123456789;
	p->mlength = 77;
	p->epoch = 0x5555;
	p->ack_epoch = 0x6666;
	p->pay_len = 2048;
	p->seq = 0xdeadbeef;
	p->ack_seq = 0xcafef00d;
}

static uint8_t payload[4096];

static int
build(uint8_t *f, size_t cap, struct spinnic_pkt *p)
{
	struct spinnic_wire_addr a;

	spinnic_wire_addr_nodes(p->src.nid, p->dst.nid, PORT, &a);
	p->payload = payload;
	return spinnic_wire_build(f, cap, &a, p);
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static void
test_round_trip(void **state)
{
	static uint8_t f[8192];
	struct spinnic_pkt p, q;
	int len;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	pkt_default(&p);
	len = build(f, sizeof(f), &p);
	assert_int_equal(len, SPINNIC_WIRE_HDR_LEN + 2048);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.type, p.type);
	assert_int_equal(q.flags, p.flags);
	assert_int_equal(q.op, p.op);
	assert_int_equal(q.ack_req, p.ack_req);
	assert_int_equal(q.ni, p.ni);
	assert_int_equal(q.src.nid, p.src.nid);
	assert_int_equal(q.src.pid, p.src.pid);
	assert_int_equal(q.dst.nid, p.dst.nid);
	assert_int_equal(q.dst.pid, p.dst.pid);
	assert_int_equal(q.pt_index, p.pt_index);
	assert_int_equal(q.uid, p.uid);
	assert_int_equal(q.match_bits, p.match_bits);
	assert_int_equal(q.hdr_data, p.hdr_data);
	assert_int_equal(q.msg_id, p.msg_id);
	assert_int_equal(q.msg_len, p.msg_len);
	assert_int_equal(q.offset, p.offset);
	assert_int_equal(q.remote_offset, p.remote_offset);
	assert_int_equal(q.mlength, p.mlength);
	assert_int_equal(q.epoch, p.epoch);
	assert_int_equal(q.ack_epoch, p.ack_epoch);
	assert_int_equal(q.sack, 0);
	assert_int_equal(q.pay_len, p.pay_len);
	assert_int_equal(q.seq, p.seq);
	assert_int_equal(q.ack_seq, p.ack_seq);
	assert_ptr_equal(q.payload, f + SPINNIC_WIRE_HDR_LEN);
	assert_memory_equal(q.payload, payload, 2048);
	assert_int_equal(q.src_ip, spinnic_wire_nid_ip(p.src.nid));
	assert_int_equal(q.src_port, PORT);
	{
		uint8_t mac[6];

		spinnic_wire_nid_mac(p.src.nid, mac);
		assert_memory_equal(q.src_mac, mac, 6);
		spinnic_wire_nid_mac(p.dst.nid, mac);
		assert_memory_equal(f, mac, 6);
	}
	/* trailing Ethernet padding is ignored */
	assert_int_equal(spinnic_wire_parse(f, (size_t)len + 10, PORT, &q), 0);

	/* a zero-byte one-packet message; a get request; an ack */
	pkt_default(&p);
	p.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	p.msg_len = 0;
	p.pay_len = 0;
	len = build(f, sizeof(f), &p);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	p.type = SPINNIC_WIRE_T_GET;
	p.op = SPINNIC_WIRE_OP_GET;
	p.msg_len = 1 << 20;
	len = build(f, sizeof(f), &p);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.msg_len, 1 << 20);
	p.type = SPINNIC_WIRE_T_ACK;
	p.op = SPINNIC_WIRE_OP_PUT;
	p.flags = 0;
	p.fail_type = SPINNIC_PTL_NI_DROPPED;
	len = build(f, sizeof(f), &p);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.fail_type, SPINNIC_PTL_NI_DROPPED);
	/* last packet of a message */
	pkt_default(&p);
	p.flags = SPINNIC_WIRE_F_COMPLETION;
	p.offset = 4096;
	p.pay_len = 904;
	len = build(f, sizeof(f), &p);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.offset, 4096);

	/* build refuses what parse would drop, and small buffers */
	pkt_default(&p);
	assert_int_equal(build(f, 100, &p), -ENOSPC);
	p.type = 9;
	assert_int_equal(build(f, sizeof(f), &p), -EINVAL);
	pkt_default(&p);
	p.pay_len = SPINNIC_WIRE_MAX_PAYLOAD + 1;
	assert_int_equal(build(f, sizeof(f), &p), -EINVAL);
}

/* a valid frame with one edit must give exactly the expected reason */
struct drop_case {
	const char *what;
	int reason;
	size_t len_delta; /* bytes cut from the frame */
	void (*edit)(uint8_t *f, int *len);
};

static void e_none(uint8_t *f, int *len) { (void)f; (void)len; }
static void e_ethertype(uint8_t *f, int *len) { (void)len; put16(f + 12, 0x86dd); }
static void e_ipver(uint8_t *f, int *len) { (void)len; f[IP] = 0x65; ip_fix(f); }
static void e_ihl(uint8_t *f, int *len) { (void)len; f[IP] = 0x44; }
static void e_iplen_big(uint8_t *f, int *len) { put16(f + IP + 2, (uint16_t)(*len)); ip_fix(f); }
static void e_iplen_small(uint8_t *f, int *len) { (void)len; put16(f + IP + 2, 10); ip_fix(f); }
static void e_ipcsum(uint8_t *f, int *len) { (void)len; f[IP + 10] ^= 0x40; }
static void e_frag(uint8_t *f, int *len) { (void)len; put16(f + IP + 6, 0x2000); ip_fix(f); }
static void e_fragoff(uint8_t *f, int *len) { (void)len; put16(f + IP + 6, 0x0010); ip_fix(f); }
static void e_proto(uint8_t *f, int *len) { (void)len; f[IP + 9] = 6; ip_fix(f); }
static void e_port(uint8_t *f, int *len) { (void)len; put16(f + UDP + 2, 53); }
static void e_udplen(uint8_t *f, int *len) { (void)len; put16(f + UDP + 4, 100); }
static void e_udpcsum(uint8_t *f, int *len) { (void)len; put16(f + UDP + 6, 0x1234); }
static void
e_spinshort(uint8_t *f, int *len)
{
	/* an IP/UDP datagram with 50 bytes of spinnic header */
	*len = SH + 50;
	put16(f + IP + 2, 20 + 8 + 50);
	put16(f + UDP + 4, 8 + 50);
	ip_fix(f);
}
static void e_version(uint8_t *f, int *len) { (void)len; f[SH] = 2; }
static void e_type(uint8_t *f, int *len) { (void)len; f[SH + 1] = 77; }
static void e_flags(uint8_t *f, int *len) { (void)len; f[SH + 2] = 3; /* H|P */ }
static void e_flags_bit(uint8_t *f, int *len) { (void)len; f[SH + 2] = 0x11; }
static void e_op(uint8_t *f, int *len) { (void)len; f[SH + 3] = 0; }
static void e_op_hi(uint8_t *f, int *len) { (void)len; f[SH + 3] = 200; }
static void e_ackreq(uint8_t *f, int *len) { (void)len; f[SH + 4] = 9; }
static void e_ni(uint8_t *f, int *len) { (void)len; f[SH + 5] = 4; }
static void e_fail(uint8_t *f, int *len) { (void)len; f[SH + 6] = 99; }
static void e_get_on_data(uint8_t *f, int *len) { (void)len; f[SH + 3] = SPINNIC_WIRE_OP_GET; }
static void e_paylen(uint8_t *f, int *len) { (void)len; put32(f + SH + 36, 2047); }
static void e_paylen_big(uint8_t *f, int *len) { (void)len; put32(f + SH + 36, 0xffffffffu); }
static void e_hdr_offset(uint8_t *f, int *len) { (void)len; put64(f + SH + 72, 8); }
static void e_past_msg(uint8_t *f, int *len) { (void)len; f[SH + 2] = SPINNIC_WIRE_F_PAYLOAD; put64(f + SH + 72, 4000); }
static void e_msg_small(uint8_t *f, int *len) { (void)len; put64(f + SH + 64, 100); }
static void e_off_huge(uint8_t *f, int *len) { (void)len; f[SH + 2] = SPINNIC_WIRE_F_PAYLOAD; put64(f + SH + 72, ~0ull - 10); put64(f + SH + 64, ~0ull >> 40); }
static void e_compl_end(uint8_t *f, int *len) { (void)len; f[SH + 2] = SPINNIC_WIRE_F_COMPLETION; put64(f + SH + 72, 100); }
static void e_msglen(uint8_t *f, int *len) { (void)len; put64(f + SH + 64, SPINNIC_WIRE_MAX_MSG_SIZE + 1); }

static const struct drop_case cases[] = {
	{ "valid", 0, 0, e_none },
	{ "runt", SPINNIC_WIRE_DROP_SHORT, 0, NULL },
	{ "ethertype", SPINNIC_WIRE_DROP_NOT_IPV4, 0, e_ethertype },
	{ "ip version", SPINNIC_WIRE_DROP_NOT_IPV4, 0, e_ipver },
	{ "ihl", SPINNIC_WIRE_DROP_IP_HDR, 0, e_ihl },
	{ "ip len > frame", SPINNIC_WIRE_DROP_IP_LEN, 0, e_iplen_big },
	{ "ip len < ihl", SPINNIC_WIRE_DROP_IP_LEN, 0, e_iplen_small },
	{ "truncated frame", SPINNIC_WIRE_DROP_IP_LEN, 100, e_none },
	{ "ip csum", SPINNIC_WIRE_DROP_IP_CSUM, 0, e_ipcsum },
	{ "more fragments", SPINNIC_WIRE_DROP_IP_FRAG, 0, e_frag },
	{ "fragment offset", SPINNIC_WIRE_DROP_IP_FRAG, 0, e_fragoff },
	{ "tcp", SPINNIC_WIRE_DROP_NOT_UDP, 0, e_proto },
	{ "port", SPINNIC_WIRE_DROP_PORT, 0, e_port },
	{ "udp len", SPINNIC_WIRE_DROP_UDP_LEN, 0, e_udplen },
	{ "udp csum", SPINNIC_WIRE_DROP_UDP_CSUM, 0, e_udpcsum },
	{ "spin short", SPINNIC_WIRE_DROP_SPIN_SHORT, 0, e_spinshort },
	{ "version", SPINNIC_WIRE_DROP_VERSION, 0, e_version },
	{ "type", SPINNIC_WIRE_DROP_KIND, 0, e_type },
	{ "flags H|P", SPINNIC_WIRE_DROP_KIND, 0, e_flags },
	{ "flag bit", SPINNIC_WIRE_DROP_KIND, 0, e_flags_bit },
	{ "op 0", SPINNIC_WIRE_DROP_OP, 0, e_op },
	{ "op 200", SPINNIC_WIRE_DROP_OP, 0, e_op_hi },
	{ "ack_req", SPINNIC_WIRE_DROP_OP, 0, e_ackreq },
	{ "ni", SPINNIC_WIRE_DROP_OP, 0, e_ni },
	{ "fail type", SPINNIC_WIRE_DROP_OP, 0, e_fail },
	{ "get op on data", SPINNIC_WIRE_DROP_OP, 0, e_get_on_data },
	{ "pay_len", SPINNIC_WIRE_DROP_PAY_LEN, 0, e_paylen },
	{ "pay_len huge", SPINNIC_WIRE_DROP_PAY_LEN, 0, e_paylen_big },
	{ "header offset", SPINNIC_WIRE_DROP_OFFSET, 0, e_hdr_offset },
	{ "past message", SPINNIC_WIRE_DROP_OFFSET, 0, e_past_msg },
	{ "message shorter", SPINNIC_WIRE_DROP_OFFSET, 0, e_msg_small },
	{ "offset wraps", SPINNIC_WIRE_DROP_OFFSET, 0, e_off_huge },
	{ "completion not at end", SPINNIC_WIRE_DROP_OFFSET, 0, e_compl_end },
	{ "message too long", SPINNIC_WIRE_DROP_MSG_LEN, 0, e_msglen },
};

static void
test_drop_reasons(void **state)
{
	static uint8_t f[8192];
	struct spinnic_wire_stats st;
	struct spinnic_pkt p, q;
	bool seen[SPINNIC_WIRE_DROP_COUNT];
	size_t i;
	int j;

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int len, rc;

		pkt_default(&p);
		len = build(f, sizeof(f), &p);
		assert_true(len > 0);
		if (cases[i].edit == NULL)
			len = 30;
		else
			cases[i].edit(f, &len);
		len -= (int)cases[i].len_delta;
		rc = spinnic_wire_parse(f, (size_t)len, PORT, &q);
		if (rc != -cases[i].reason)
			fail_msg("case '%s': got %d (%s), want %d (%s)",
				 cases[i].what, rc, spinnic_wire_drop_name(rc),
				 -cases[i].reason,
				 spinnic_wire_drop_name(cases[i].reason));
		spinnic_wire_stats_count(&st, rc);
		if (rc)
			seen[cases[i].reason - SPINNIC_WIRE_DROP_BASE] = true;
	}
	{
		/* the keyed reasons (details in test_wire_auth.c): a frame
		 * without trailer, an authenticated one not sequenced */
		static const uint8_t secret[SPINNIC_WIRE_SECRET_MIN] = { 1 };
		uint8_t key[SPINNIC_WIRE_KEY_LEN];
		struct spinnic_wire_auth *a;
		int len, rc;

		assert_int_equal(spinnic_wire_key_derive(secret, sizeof(secret),
							 key), 0);
		a = spinnic_wire_auth_create(key);
		assert_non_null(a);
		pkt_default(&p);
		len = build(f, sizeof(f), &p);
		rc = spinnic_wire_parse_auth(f, (size_t)len, PORT, a, &q);
		assert_int_equal(rc, -SPINNIC_WIRE_DROP_AUTH);
		spinnic_wire_stats_count(&st, rc);
		seen[SPINNIC_WIRE_DROP_AUTH - SPINNIC_WIRE_DROP_BASE] = true;
		len = spinnic_wire_auth_seal(a, f, (size_t)len, sizeof(f));
		assert_true(len > 0);
		rc = spinnic_wire_parse_auth(f, (size_t)len, PORT, a, &q);
		assert_int_equal(rc, -SPINNIC_WIRE_DROP_UNSEQ);
		spinnic_wire_stats_count(&st, rc);
		seen[SPINNIC_WIRE_DROP_UNSEQ - SPINNIC_WIRE_DROP_BASE] = true;
		spinnic_wire_auth_free(a);
	}
	assert_int_equal(st.ok, 1);
	/* every reason produced and counted */
	for (j = 0; j < SPINNIC_WIRE_DROP_COUNT; j++) {
		if (!seen[j] || st.drop[j] == 0)
			fail_msg("drop reason %s never produced",
				 spinnic_wire_drop_name(j +
							SPINNIC_WIRE_DROP_BASE));
	}
	assert_int_equal(st.drop[SPINNIC_WIRE_DROP_OFFSET -
				 SPINNIC_WIRE_DROP_BASE], 5);
	/* names */
	assert_string_equal(spinnic_wire_drop_name(0), "ok");
	assert_string_equal(spinnic_wire_drop_name(-SPINNIC_WIRE_DROP_IP_CSUM),
			    "ip_csum");
	assert_string_equal(spinnic_wire_drop_name(SPINNIC_WIRE_DROP_MSG_LEN),
			    "msg_len");
	assert_string_equal(spinnic_wire_drop_name(-SPINNIC_WIRE_DROP_AUTH),
			    "auth");
	assert_string_equal(spinnic_wire_drop_name(-SPINNIC_WIRE_DROP_UNSEQ),
			    "unseq");
	assert_string_equal(spinnic_wire_drop_name(-5), "unknown");
}

static void
test_udp_checksum_valid(void **state)
{
	static uint8_t f[8192];
	struct spinnic_pkt p, q;
	int len;

	(void)state;
	pkt_default(&p);
	p.pay_len = 1001; /* odd length */
	p.flags = SPINNIC_WIRE_F_HEADER;
	len = build(f, sizeof(f), &p);
	/* the sum with a zero checksum field, complemented */
	put16(f + UDP + 6, (uint16_t)~ref_udp_sum(f, len));
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	f[len - 1] ^= 1;
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q),
			 -SPINNIC_WIRE_DROP_UDP_CSUM);
}

/* spinnic_wire_seal: sequence fields, F_REL, a checksum the parser
 * accepts and that catches any flipped bit, at every length class */
static void
test_seal(void **state)
{
	static uint8_t f[8192];
	struct spinnic_pkt p, q;
	unsigned i;
	int len;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	for (i = 0; i < 64; i++) {
		uint32_t plen = i < 16 ? i : i * 61 % 4096;
		int bit;

		pkt_default(&p);
		p.msg_len = 5000;
		p.pay_len = plen;
		p.flags = SPINNIC_WIRE_F_HEADER;
		if (plen == 0)
			p.msg_len = 0, p.flags |= SPINNIC_WIRE_F_COMPLETION;
		len = build(f, sizeof(f), &p);
		assert_true(len > 0);
		assert_int_equal(spinnic_wire_seal(f, (size_t)len, 1,
						   0xabc00000u + i, i * 3), 0);
		/* the stored checksum makes the whole sum 0xffff */
		assert_int_equal(ref_udp_sum(f, len), 0xffff);
		assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
		assert_true(q.flags & SPINNIC_WIRE_F_REL);
		assert_int_equal(q.epoch, 0xabc00000u + i);
		assert_int_equal(q.seq, i * 3);
		/* any single flipped bit past the IP header is caught */
		bit = (int)((i * 977u) % (unsigned)((len - UDP) * 8));
		f[UDP + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_true(spinnic_wire_parse(f, (size_t)len, PORT, &q) < 0);
	}
	assert_int_equal(spinnic_wire_seal(f, 20, 0, 0, 0), -EINVAL);
}

/* a transport ack: sack in the match slot, no Portals fields; probes */
static void
test_tack(void **state)
{
	static uint8_t f[512];
	struct spinnic_pkt p, q;
	int len;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = 3;
	p.dst.nid = 4;
	p.ack_epoch = 0x1234;
	p.ack_seq = 99;
	p.sack = 0x8000000000000005ull;
	p.sack_base = 100;
	len = build(f, sizeof(f), &p);
	assert_int_equal(len, SPINNIC_WIRE_HDR_LEN);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.type, SPINNIC_WIRE_T_TACK);
	assert_int_equal(q.ack_epoch, 0x1234);
	assert_int_equal(q.ack_seq, 99);
	assert_int_equal(q.sack, p.sack);
	assert_int_equal(q.sack_base, 100);
	assert_int_equal(q.match_bits, 0);
	assert_int_equal(q.msg_id, 0);
	/* a probe is sequenced */
	assert_int_equal(spinnic_wire_seal(f, (size_t)len, 1, 7, 8), 0);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.flags, SPINNIC_WIRE_F_REL);
	assert_int_equal(q.seq, 8);
	/* for a keyed node the UDP checksum stays 0 (the MAC covers it) */
	assert_int_equal(spinnic_wire_seal(f, (size_t)len,
					   1 | SPINNIC_WIRE_SEAL_NO_CSUM, 7, 9),
			 0);
	assert_int_equal(f[UDP + 6], 0);
	assert_int_equal(f[UDP + 7], 0);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(q.seq, 9);
	/* an operation, an ack request or an NI kind on a TACK is refused */
	p.op = SPINNIC_WIRE_OP_PUT;
	assert_int_equal(build(f, sizeof(f), &p), -EINVAL);
	p.op = 0;
	len = build(f, sizeof(f), &p);
	f[UDP + 8 + 4] = 1; /* ack_req */
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q),
			 -SPINNIC_WIRE_DROP_OP);
	/* unknown flag bits stay refused */
	len = build(f, sizeof(f), &p);
	f[UDP + 8 + 2] = 0x10;
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q),
			 -SPINNIC_WIRE_DROP_KIND);
}

static void
test_addresses(void **state)
{
	uint32_t nid = 0;
	uint8_t mac[6];

	(void)state;
	assert_int_equal(spinnic_wire_nid_ip(3), 0x0a000003);
	assert_int_equal(spinnic_wire_nid_ip(0x123456), 0x0a123456);
	assert_int_equal(spinnic_wire_ip_nid(0x0a000003, &nid), 0);
	assert_int_equal(nid, 3);
	assert_int_equal(spinnic_wire_ip_nid(0xc0a80001, &nid), -EINVAL);
	spinnic_wire_nid_mac(0x0102, mac);
	assert_int_equal(mac[0], 0x02);
	assert_int_equal(mac[4], 0x01);
	assert_int_equal(mac[5], 0x02);
}

/* The frame accessors read back what spinnic_wire_build() wrote. */
static void
test_frame_accessors(void **state)
{
	uint8_t f[SPINNIC_WIRE_HDR_LEN + 4096];
	struct spinnic_pkt p;
	uint32_t nid;

	(void)state;
	pkt_default(&p);
	p.flags = SPINNIC_WIRE_F_PAYLOAD;
	p.offset = 2048;
	assert_true(build(f, sizeof(f), &p) > 0);
	assert_int_equal(SPINNIC_WIRE_SPIN_OFF, SH);
	assert_int_equal(spinnic_wire_frame_type(f), SPINNIC_WIRE_T_DATA);
	assert_int_equal(spinnic_wire_frame_flags(f), SPINNIC_WIRE_F_PAYLOAD);
	assert_true(spinnic_wire_frame_msg_id(f) == p.msg_id);
	assert_true(spinnic_wire_frame_offset(f) == 2048);
	assert_int_equal(spinnic_wire_ip_nid(spinnic_wire_frame_dst_ip(f),
					     &nid), 0);
	assert_int_equal(nid, p.dst.nid);
	/* seal's F_REL shows in the flags */
	assert_int_equal(spinnic_wire_seal(f, SPINNIC_WIRE_HDR_LEN + p.pay_len,
					   1, 1, 2), 0);
	assert_int_equal(spinnic_wire_frame_flags(f),
			 SPINNIC_WIRE_F_PAYLOAD | SPINNIC_WIRE_F_REL);

	pkt_default(&p);
	p.type = SPINNIC_WIRE_T_REPLY;
	p.op = SPINNIC_WIRE_OP_GET;
	p.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	p.msg_id = 42;
	p.msg_len = p.pay_len;
	assert_true(build(f, sizeof(f), &p) > 0);
	assert_int_equal(spinnic_wire_frame_type(f), SPINNIC_WIRE_T_REPLY);
	assert_int_equal(spinnic_wire_frame_flags(f), p.flags);
	assert_true(spinnic_wire_frame_msg_id(f) == 42);
	assert_true(spinnic_wire_frame_offset(f) == 0);
}

/* Kind flags by a packet's place in its message. */
static void
test_pkt_flags(void **state)
{
	struct spinnic_pkt p;

	(void)state;
	assert_int_equal(spinnic_wire_pkt_flags(0, 0, 0),
			 SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION);
	assert_int_equal(spinnic_wire_pkt_flags(0, 100, 100),
			 SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION);
	assert_int_equal(spinnic_wire_pkt_flags(0, 50, 100),
			 SPINNIC_WIRE_F_HEADER);
	assert_int_equal(spinnic_wire_pkt_flags(50, 25, 100),
			 SPINNIC_WIRE_F_PAYLOAD);
	assert_int_equal(spinnic_wire_pkt_flags(75, 25, 100),
			 SPINNIC_WIRE_F_COMPLETION);
	memset(&p, 0, sizeof(p));
	p.msg_len = 100;
	spinnic_wire_pkt_seg(&p, 40, 60);
	assert_true(p.offset == 40);
	assert_int_equal(p.pay_len, 60);
	assert_int_equal(p.flags, SPINNIC_WIRE_F_COMPLETION);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_drop_reasons),
		cmocka_unit_test(test_udp_checksum_valid),
		cmocka_unit_test(test_seal),
		cmocka_unit_test(test_tack),
		cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_frame_accessors),
		cmocka_unit_test(test_pkt_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
