/* SPDX-License-Identifier: BSD-3-Clause */
/* spinnic wire format: build and parse (DESIGN §5). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "atomic.h"
#include "wire.h"
#include "wire_internal.h"

#define ETHERTYPE_IPV4 0x0800u
#define IPPROTO_UDP_ 17u

_Static_assert(SPINNIC_WIRE_SH_END == SPINNIC_WIRE_SPIN_LEN,
	       "spinnic header size");

static const char *const drop_names[SPINNIC_WIRE_DROP_COUNT] = {
	"short", "not_ipv4", "ip_hdr", "ip_len", "ip_csum", "ip_frag",
	"not_udp", "port", "udp_len", "udp_csum", "spin_short", "version",
	"kind", "op", "pay_len", "offset", "msg_len", "auth", "unseq",
};

const char *
spinnic_wire_drop_name(int rc)
{
	int r = rc < 0 ? -rc : rc;

	if (r == 0)
		return "ok";
	if (r < SPINNIC_WIRE_DROP_BASE || r >= SPINNIC_WIRE_DROP_END)
		return "unknown";
	return drop_names[r - SPINNIC_WIRE_DROP_BASE];
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static inline uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

#define get32 spinnic_wire_get32
#define get64 spinnic_wire_get64

/*
 * One's-complement sum of 16-bit big-endian words, added to @p sum (kept
 * below 2^31 by the callers). The sum commutes with byte order, so the
 * words are added 8 bytes at a time in host order and swapped once; four
 * independent sums over 32 bytes (2.5-3x faster on a 2 KiB frame than one
 * chain: every packet is summed when built and when parsed).
 */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, s, w;

	while (len >= 32) {
		uint64_t w1, w2, w3;

		memcpy(&w, p, 8);
		memcpy(&w1, p + 8, 8);
		memcpy(&w2, p + 16, 8);
		memcpy(&w3, p + 24, 8);
		s0 += (w & 0xffffffffu) + (w >> 32);
		s1 += (w1 & 0xffffffffu) + (w1 >> 32);
		s2 += (w2 & 0xffffffffu) + (w2 >> 32);
		s3 += (w3 & 0xffffffffu) + (w3 >> 32);
		p += 32;
		len -= 32;
	}
	s = s0 + s1 + s2 + s3;
	while (len >= 8) {
		memcpy(&w, p, 8);
		s += (w & 0xffffffffu) + (w >> 32);
		p += 8;
		len -= 8;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		s += (w & 0xffffffffu) + (w >> 32);
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	s = __builtin_bswap16((uint16_t)s);
#endif
	return sum + (uint32_t)s;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static bool
kind_valid(uint8_t type, uint8_t flags)
{
	const uint8_t all = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_PAYLOAD |
			    SPINNIC_WIRE_F_COMPLETION;

	/* session handshake: never sequenced, no kind flags */
	if (type == SPINNIC_WIRE_T_CHAL || type == SPINNIC_WIRE_T_CHAL_ACK)
		return flags == 0;
	flags &= (uint8_t)~SPINNIC_WIRE_F_REL;
	switch (type) {
	case SPINNIC_WIRE_T_DATA:
	case SPINNIC_WIRE_T_REPLY:
		if (flags & ~all)
			return false;
		/* H, P, C or H|C */
		return flags == SPINNIC_WIRE_F_HEADER ||
		       flags == SPINNIC_WIRE_F_PAYLOAD ||
		       flags == SPINNIC_WIRE_F_COMPLETION ||
		       flags == (SPINNIC_WIRE_F_HEADER |
				 SPINNIC_WIRE_F_COMPLETION);
	case SPINNIC_WIRE_T_GET:
		return flags == (SPINNIC_WIRE_F_HEADER |
				 SPINNIC_WIRE_F_COMPLETION);
	case SPINNIC_WIRE_T_ACK:
	case SPINNIC_WIRE_T_NACK:
	case SPINNIC_WIRE_T_TACK:
		return flags == 0;
	default:
		return false;
	}
}

/*
 * The atomic fields: an atomic request is one DATA packet (H|C) of a pair
 * the specification allows; its REPLY (old values) only for the fetching
 * ones; every other packet carries none.
 */
static bool
atomic_valid(const struct spinnic_pkt *p)
{
	const uint8_t hc = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	bool fetch = p->op == SPINNIC_WIRE_OP_FETCH_ATOMIC ||
		     p->op == SPINNIC_WIRE_OP_SWAP;

	if (p->op != SPINNIC_WIRE_OP_ATOMIC && !fetch)
		return p->atomic_op == 0 && p->atomic_type == 0;
	if (p->type == SPINNIC_WIRE_T_REPLY)
		return fetch;
	if (p->type != SPINNIC_WIRE_T_DATA)
		return p->type == SPINNIC_WIRE_T_ACK ||
		       p->type == SPINNIC_WIRE_T_NACK;
	return (p->flags & (uint8_t)~SPINNIC_WIRE_F_REL) == hc &&
	       ptl_atomic_valid(p->atomic_op, p->atomic_type);
}

static bool
op_valid(const struct spinnic_pkt *p)
{
	if (p->type == SPINNIC_WIRE_T_TACK || p->type == SPINNIC_WIRE_T_CHAL ||
	    p->type == SPINNIC_WIRE_T_CHAL_ACK)
		return p->op == 0 && p->ack_req == 0 && p->ni == 0;
	if (p->op == 0 || p->op >= SPINNIC_WIRE_OP_MAX)
		return false;
	if (p->ack_req > SPINNIC_PTL_OC_ACK_REQ)
		return false;
	if (p->ni >= SPINNIC_WIRE_NI_KINDS)
		return false;
	if (p->type == SPINNIC_WIRE_T_GET && p->op != SPINNIC_WIRE_OP_GET)
		return false;
	if (p->type == SPINNIC_WIRE_T_DATA && p->op == SPINNIC_WIRE_OP_GET)
		return false;
	return atomic_valid(p);
}

int
spinnic_wire_build(void *frame, size_t cap,
		   const struct spinnic_wire_addr *l2l3,
		   const struct spinnic_pkt *p)
{
	uint8_t *f = frame;
	uint8_t *ip, *udp, *sh;
	size_t flen;
	uint16_t ip_total;

	if (p->pay_len > SPINNIC_WIRE_MAX_PAYLOAD || !kind_valid(p->type,
								 p->flags) ||
	    !op_valid(p))
		return -EINVAL;
	flen = SPINNIC_WIRE_HDR_LEN + (size_t)p->pay_len;
	if (cap < flen)
		return -ENOSPC;
	ip_total = (uint16_t)(SPINNIC_WIRE_IP_LEN + SPINNIC_WIRE_UDP_LEN +
			      SPINNIC_WIRE_SPIN_LEN + p->pay_len);

	memcpy(f, l2l3->dst_mac, 6);
	memcpy(f + 6, l2l3->src_mac, 6);
	put16(f + 12, ETHERTYPE_IPV4);

	ip = f + SPINNIC_WIRE_ETH_LEN;
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, ip_total);
	put16(ip + 4, 0);          /* id */
	put16(ip + 6, 0x4000);     /* DF */
	ip[8] = 64;                /* ttl */
	ip[9] = IPPROTO_UDP_;
	put16(ip + 10, 0);
	put32(ip + 12, l2l3->src_ip);
	put32(ip + 16, l2l3->dst_ip);
	put16(ip + 10, csum_fold(csum_add(0, ip, SPINNIC_WIRE_IP_LEN)));

	udp = ip + SPINNIC_WIRE_IP_LEN;
	put16(udp, l2l3->src_port);
	put16(udp + 2, l2l3->dst_port);
	put16(udp + 4, (uint16_t)(ip_total - SPINNIC_WIRE_IP_LEN));
	put16(udp + 6, 0);         /* no checksum */

	sh = udp + SPINNIC_WIRE_UDP_LEN;
	memset(sh, 0, SPINNIC_WIRE_SPIN_LEN);
	sh[SPINNIC_WIRE_SH_VERSION] = SPINNIC_WIRE_VERSION;
	sh[SPINNIC_WIRE_SH_TYPE] = p->type;
	sh[SPINNIC_WIRE_SH_FLAGS] = p->flags;
	sh[SPINNIC_WIRE_SH_OP] = p->op;
	sh[SPINNIC_WIRE_SH_ACK_REQ] = p->ack_req;
	sh[SPINNIC_WIRE_SH_NI] = p->ni;
	sh[SPINNIC_WIRE_SH_FAIL] = p->fail_type;
	sh[SPINNIC_WIRE_SH_AOP] = p->atomic_op;
	sh[SPINNIC_WIRE_SH_ATYPE] = p->atomic_type;
	put32(sh + SPINNIC_WIRE_SH_SRC_NID, p->src.nid);
	put32(sh + SPINNIC_WIRE_SH_SRC_PID, p->src.pid);
	put32(sh + SPINNIC_WIRE_SH_DST_NID, p->dst.nid);
	put32(sh + SPINNIC_WIRE_SH_DST_PID, p->dst.pid);
	put32(sh + SPINNIC_WIRE_SH_PT, p->pt_index);
	put32(sh + SPINNIC_WIRE_SH_UID, p->uid);
	put32(sh + SPINNIC_WIRE_SH_PAY_LEN, p->pay_len);
	put64(sh + SPINNIC_WIRE_SH_MATCH,
	      p->type == SPINNIC_WIRE_T_TACK ? p->sack : p->match_bits);
	put64(sh + SPINNIC_WIRE_SH_HDR_DATA, p->hdr_data);
	put64(sh + SPINNIC_WIRE_SH_MSG_ID,
	      p->type == SPINNIC_WIRE_T_TACK ? p->sack_base : p->msg_id);
	put64(sh + SPINNIC_WIRE_SH_MSG_LEN, p->msg_len);
	put64(sh + SPINNIC_WIRE_SH_OFFSET, p->offset);
	put64(sh + SPINNIC_WIRE_SH_ROFF, p->remote_offset);
	put64(sh + SPINNIC_WIRE_SH_MLEN, p->mlength);
	put32(sh + SPINNIC_WIRE_SH_EPOCH, p->epoch);
	put32(sh + SPINNIC_WIRE_SH_ACK_EPOCH, p->ack_epoch);
	put32(sh + SPINNIC_WIRE_SH_SEQ, p->seq);
	put32(sh + SPINNIC_WIRE_SH_ACK_SEQ, p->ack_seq);

	if (p->payload != NULL && p->pay_len)
		memcpy(sh + SPINNIC_WIRE_SPIN_LEN, p->payload, p->pay_len);
	return (int)flen;
}

/* The IV of an authenticated frame: source nid, then the counter. */
static void
auth_iv(const uint8_t *sh, uint64_t ctr, uint8_t iv_p[WIRE_AUTH_IV_LEN])
{
	memcpy(iv_p, sh + SPINNIC_WIRE_SH_SRC_NID, 4);
	put64(iv_p + 4, ctr);
}

int
spinnic_wire_parse(const void *frame, size_t len, uint16_t udp_port,
		   struct spinnic_pkt *p_p)
{
	return spinnic_wire_parse_auth(frame, len, udp_port, NULL, p_p);
}

int
spinnic_wire_parse_auth(const void *frame, size_t len, uint16_t udp_port,
			struct spinnic_wire_auth *auth,
			struct spinnic_pkt *p_p)
{
	const uint8_t *f = frame;
	const uint8_t *ip, *udp, *sh;
	size_t ihl, ip_total, udp_len, spin_avail;
	struct spinnic_pkt p;
	uint64_t ctr = 0;
	uint16_t frag;

	if (len < SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN)
		return -SPINNIC_WIRE_DROP_SHORT;
	if (get16(f + 12) != ETHERTYPE_IPV4)
		return -SPINNIC_WIRE_DROP_NOT_IPV4;
	ip = f + SPINNIC_WIRE_ETH_LEN;
	if ((ip[0] >> 4) != 4)
		return -SPINNIC_WIRE_DROP_NOT_IPV4;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (ihl < SPINNIC_WIRE_IP_LEN || SPINNIC_WIRE_ETH_LEN + ihl > len)
		return -SPINNIC_WIRE_DROP_IP_HDR;
	ip_total = get16(ip + 2);
	if (ip_total < ihl || SPINNIC_WIRE_ETH_LEN + ip_total > len)
		return -SPINNIC_WIRE_DROP_IP_LEN;
	if (csum_fold(csum_add(0, ip, ihl)) != 0)
		return -SPINNIC_WIRE_DROP_IP_CSUM;
	frag = get16(ip + 6);
	if ((frag & 0x2000) || (frag & 0x1fff))
		return -SPINNIC_WIRE_DROP_IP_FRAG;
	if (ip[9] != IPPROTO_UDP_)
		return -SPINNIC_WIRE_DROP_NOT_UDP;
	if (ip_total - ihl < SPINNIC_WIRE_UDP_LEN)
		return -SPINNIC_WIRE_DROP_UDP_LEN;
	udp = ip + ihl;
	if (get16(udp + 2) != udp_port)
		return -SPINNIC_WIRE_DROP_PORT;
	udp_len = get16(udp + 4);
	if (udp_len < SPINNIC_WIRE_UDP_LEN || udp_len != ip_total - ihl)
		return -SPINNIC_WIRE_DROP_UDP_LEN;
	if (get16(udp + 6) != 0) {
		/* pseudo header + UDP header + data */
		uint32_t sum = csum_add(0, ip + 12, 8);

		sum += IPPROTO_UDP_ + (uint32_t)udp_len;
		sum = csum_add(sum, udp, udp_len);
		if (csum_fold(sum) != 0)
			return -SPINNIC_WIRE_DROP_UDP_CSUM;
	}
	spin_avail = udp_len - SPINNIC_WIRE_UDP_LEN;
	if (spin_avail < SPINNIC_WIRE_SPIN_LEN)
		return -SPINNIC_WIRE_DROP_SPIN_SHORT;
	sh = udp + SPINNIC_WIRE_UDP_LEN;
	if (auth != NULL) {
		/* nothing of the spinnic header is believed before its MAC */
		uint8_t iv[WIRE_AUTH_IV_LEN];
		size_t mac_len;

		if (!(sh[SPINNIC_WIRE_SH_FLAGS] & SPINNIC_WIRE_F_AUTH) ||
		    spin_avail < SPINNIC_WIRE_SPIN_LEN + SPINNIC_WIRE_AUTH_LEN)
			return -SPINNIC_WIRE_DROP_AUTH;
		spin_avail -= SPINNIC_WIRE_AUTH_LEN;
		mac_len = spin_avail + SPINNIC_WIRE_AUTH_CTR_LEN;
		ctr = get64(sh + spin_avail);
		auth_iv(sh, ctr, iv);
		if (wire_auth_verify(auth, iv, sh, mac_len, sh + mac_len) != 0)
			return -SPINNIC_WIRE_DROP_AUTH;
	}
	if (sh[SPINNIC_WIRE_SH_VERSION] != SPINNIC_WIRE_VERSION)
		return -SPINNIC_WIRE_DROP_VERSION;

	memset(&p, 0, sizeof(p));
	p.type = sh[SPINNIC_WIRE_SH_TYPE];
	/* keyed: F_AUTH is on every packet (checked above), not a kind */
	p.flags = auth != NULL ?
		(uint8_t)(sh[SPINNIC_WIRE_SH_FLAGS] & ~SPINNIC_WIRE_F_AUTH) :
		sh[SPINNIC_WIRE_SH_FLAGS];
	if (!kind_valid(p.type, p.flags))
		return -SPINNIC_WIRE_DROP_KIND;
	p.op = sh[SPINNIC_WIRE_SH_OP];
	p.ack_req = sh[SPINNIC_WIRE_SH_ACK_REQ];
	p.ni = sh[SPINNIC_WIRE_SH_NI];
	p.fail_type = sh[SPINNIC_WIRE_SH_FAIL];
	p.atomic_op = sh[SPINNIC_WIRE_SH_AOP];
	p.atomic_type = sh[SPINNIC_WIRE_SH_ATYPE];
	if (!op_valid(&p) || p.fail_type > SPINNIC_PTL_NI_NO_MATCH)
		return -SPINNIC_WIRE_DROP_OP;
	p.src.nid = get32(sh + SPINNIC_WIRE_SH_SRC_NID);
	p.src.pid = get32(sh + SPINNIC_WIRE_SH_SRC_PID);
	p.dst.nid = get32(sh + SPINNIC_WIRE_SH_DST_NID);
	p.dst.pid = get32(sh + SPINNIC_WIRE_SH_DST_PID);
	p.pt_index = get32(sh + SPINNIC_WIRE_SH_PT);
	p.uid = get32(sh + SPINNIC_WIRE_SH_UID);
	p.pay_len = get32(sh + SPINNIC_WIRE_SH_PAY_LEN);
	p.match_bits = get64(sh + SPINNIC_WIRE_SH_MATCH);
	p.hdr_data = get64(sh + SPINNIC_WIRE_SH_HDR_DATA);
	p.msg_id = get64(sh + SPINNIC_WIRE_SH_MSG_ID);
	p.msg_len = get64(sh + SPINNIC_WIRE_SH_MSG_LEN);
	p.offset = get64(sh + SPINNIC_WIRE_SH_OFFSET);
	p.remote_offset = get64(sh + SPINNIC_WIRE_SH_ROFF);
	p.mlength = get64(sh + SPINNIC_WIRE_SH_MLEN);
	p.epoch = get32(sh + SPINNIC_WIRE_SH_EPOCH);
	p.ack_epoch = get32(sh + SPINNIC_WIRE_SH_ACK_EPOCH);
	p.seq = get32(sh + SPINNIC_WIRE_SH_SEQ);
	p.ack_seq = get32(sh + SPINNIC_WIRE_SH_ACK_SEQ);

	/* keyed: only sequenced packets are safe from replay (reliable
	 * delivery's window); plain transport acks are idempotent, and the
	 * session handshake's answers are bound to a cookie that a change
	 * of the session or ~1 s makes worthless (app/spinnic/rel_rx.c) */
	if (auth != NULL && !(p.flags & SPINNIC_WIRE_F_REL) &&
	    p.type != SPINNIC_WIRE_T_TACK && p.type != SPINNIC_WIRE_T_CHAL &&
	    p.type != SPINNIC_WIRE_T_CHAL_ACK)
		return -SPINNIC_WIRE_DROP_UNSEQ;
	p.auth_ctr = ctr;
	if (p.type == SPINNIC_WIRE_T_TACK) {
		p.sack = p.match_bits;
		p.match_bits = 0;
		if (p.msg_id > UINT32_MAX)
			return -SPINNIC_WIRE_DROP_OP;
		p.sack_base = (uint32_t)p.msg_id;
		p.msg_id = 0;
	}
	if (p.pay_len != spin_avail - SPINNIC_WIRE_SPIN_LEN)
		return -SPINNIC_WIRE_DROP_PAY_LEN;
	if (p.msg_len > SPINNIC_WIRE_MAX_MSG_SIZE)
		return -SPINNIC_WIRE_DROP_MSG_LEN;
	switch (p.type) {
	case SPINNIC_WIRE_T_DATA:
	case SPINNIC_WIRE_T_REPLY:
		if (p.offset > p.msg_len || p.pay_len > p.msg_len - p.offset)
			return -SPINNIC_WIRE_DROP_OFFSET;
		if ((p.flags & SPINNIC_WIRE_F_HEADER) && p.offset != 0)
			return -SPINNIC_WIRE_DROP_OFFSET;
		if ((p.flags & SPINNIC_WIRE_F_COMPLETION) &&
		    p.offset + p.pay_len != p.msg_len)
			return -SPINNIC_WIRE_DROP_OFFSET;
		/* only a zero-byte message may have an empty packet */
		if (p.pay_len == 0 && p.msg_len != 0)
			return -SPINNIC_WIRE_DROP_PAY_LEN;
		break;
	default:
		/* GET request, ACK, NACK, TACK, CHAL, CHAL_ACK: no payload,
		 * no offset */
		if (p.pay_len != 0)
			return -SPINNIC_WIRE_DROP_PAY_LEN;
		if (p.offset != 0)
			return -SPINNIC_WIRE_DROP_OFFSET;
		break;
	}

	p.payload = sh + SPINNIC_WIRE_SPIN_LEN;
	memcpy(p.src_mac, f + 6, 6);
	p.src_ip = get32(ip + 12);
	p.src_port = get16(udp);
	*p_p = p;
	return 0;
}

int
spinnic_wire_seal(void *frame, size_t len, int rel, uint32_t epoch,
		  uint32_t seq)
{
	uint8_t *f = frame;
	uint8_t *ip = f + SPINNIC_WIRE_ETH_LEN;
	uint8_t *udp = ip + SPINNIC_WIRE_IP_LEN;
	uint8_t *sh = udp + SPINNIC_WIRE_UDP_LEN;
	size_t udp_len;
	uint32_t sum;
	uint16_t cs;

	if (len < SPINNIC_WIRE_HDR_LEN || ip[0] != 0x45)
		return -EINVAL;
	udp_len = get16(udp + 4);
	if (udp_len < SPINNIC_WIRE_UDP_LEN + SPINNIC_WIRE_SPIN_LEN ||
	    SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN + udp_len > len)
		return -EINVAL;
	if (rel & 1) {
		sh[SPINNIC_WIRE_SH_FLAGS] |= SPINNIC_WIRE_F_REL;
		put32(sh + SPINNIC_WIRE_SH_EPOCH, epoch);
		put32(sh + SPINNIC_WIRE_SH_SEQ, seq);
	}
	put16(udp + 6, 0);
	if (rel & SPINNIC_WIRE_SEAL_NO_CSUM)
		return 0; /* the MAC covers the datagram instead */
	sum = csum_add(0, ip + 12, 8);
	sum += IPPROTO_UDP_ + (uint32_t)udp_len;
	sum = csum_add(sum, udp, udp_len);
	cs = csum_fold(sum);
	/* a computed 0 is sent as all ones (RFC 768) */
	put16(udp + 6, cs == 0 ? 0xffff : cs);
	return 0;
}

int
spinnic_wire_auth_seal(struct spinnic_wire_auth *a, void *frame, size_t len,
		       size_t cap)
{
	uint8_t *f = frame;
	uint8_t *ip = f + SPINNIC_WIRE_ETH_LEN;
	uint8_t *udp = ip + SPINNIC_WIRE_IP_LEN;
	uint8_t *sh = udp + SPINNIC_WIRE_UDP_LEN;
	uint8_t iv[WIRE_AUTH_IV_LEN];
	uint8_t *tr = f + len;
	size_t udp_len, ip_total;
	uint64_t ctr;

	if (len < SPINNIC_WIRE_HDR_LEN || ip[0] != 0x45)
		return -EINVAL;
	ip_total = get16(ip + 2);
	udp_len = get16(udp + 4);
	if (SPINNIC_WIRE_ETH_LEN + ip_total != len ||
	    udp_len != ip_total - SPINNIC_WIRE_IP_LEN ||
	    (sh[SPINNIC_WIRE_SH_FLAGS] & SPINNIC_WIRE_F_AUTH))
		return -EINVAL;
	if (cap < len + SPINNIC_WIRE_AUTH_LEN ||
	    ip_total + SPINNIC_WIRE_AUTH_LEN > UINT16_MAX)
		return -ENOSPC;

	/* MAC over the spinnic header (with F_AUTH), payload and counter:
	 * udp_len - 8 + 8 bytes from the spinnic header on */
	/* used even when the MAC fails below: never twice */
	ctr = a->next_ctr++;
	sh[SPINNIC_WIRE_SH_FLAGS] |= SPINNIC_WIRE_F_AUTH;
	put64(tr, ctr);
	auth_iv(sh, ctr, iv);
	if (wire_auth_tag(a, iv, sh, udp_len, tr + SPINNIC_WIRE_AUTH_CTR_LEN)
	    != 0) {
		sh[SPINNIC_WIRE_SH_FLAGS] &= (uint8_t)~SPINNIC_WIRE_F_AUTH;
		return -EIO;
	}

	put16(ip + 2, (uint16_t)(ip_total + SPINNIC_WIRE_AUTH_LEN));
	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, SPINNIC_WIRE_IP_LEN)));
	put16(udp + 4, (uint16_t)(udp_len + SPINNIC_WIRE_AUTH_LEN));
	/* no UDP checksum (0, RFC 768): the MAC covers every byte it would
	 * but the IP addresses (the IP header checksum's) and the UDP source
	 * port (unused), and the receiver need not pass over the payload a
	 * second time */
	put16(udp + 6, 0);
	return (int)(len + SPINNIC_WIRE_AUTH_LEN);
}

void
spinnic_wire_nid_mac(uint32_t nid, uint8_t mac_p[6])
{
	mac_p[0] = 0x02;
	mac_p[1] = 0x00;
	put32(mac_p + 2, nid);
}

uint32_t
spinnic_wire_nid_ip(uint32_t nid)
{
	return (10u << 24) | (nid & 0xffffffu);
}

int
spinnic_wire_ip_nid(uint32_t ip, uint32_t *nid_p)
{
	if ((ip >> 24) != 10u)
		return -EINVAL;
	*nid_p = ip & 0xffffffu;
	return 0;
}

void
spinnic_wire_addr_nodes(uint32_t src_nid, uint32_t dst_nid,
			uint16_t udp_port, struct spinnic_wire_addr *a_p)
{
	spinnic_wire_nid_mac(src_nid, a_p->src_mac);
	spinnic_wire_nid_mac(dst_nid, a_p->dst_mac);
	a_p->src_ip = spinnic_wire_nid_ip(src_nid);
	a_p->dst_ip = spinnic_wire_nid_ip(dst_nid);
	a_p->src_port = udp_port;
	a_p->dst_port = udp_port;
}
