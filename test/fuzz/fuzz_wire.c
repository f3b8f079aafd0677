/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the packet parser (spinnic_wire_parse, DESIGN §5). The input
 * is one Ethernet frame, parsed as is and again with its IPv4 header
 * checksum recomputed (so mutated IP headers get past the checksum).
 * Whatever the parser accepts must be consistent (payload inside the
 * frame, offsets inside the message, known kind and op) and must survive
 * a round trip: spinnic_wire_build of the parsed fields gives a frame that
 * parses to the same fields and payload.
 *
 * The authenticated wire (--wire-key): every frame is also parsed keyed
 * (spinnic_wire_parse_auth, the fuzz key of fuzz_wire_key.h; the sealed
 * seeds *-auth-* reach the MAC and trailer checks), and sealed first with
 * spinnic_wire_auth_seal when it has the build layout, so that mutated
 * headers and trailer lengths get past the MAC to the checks behind it.
 * A keyed accept must also be authenticated, sequenced or a plain TACK,
 * with its trailer inside the frame, and survive a keyed round trip.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_wire_key.h"
#include "wire.h"

static uint8_t rebuilt[SPINNIC_WIRE_HDR_LEN + 65536];
static uint8_t sealed[SPINNIC_WIRE_HDR_LEN + 65536 + SPINNIC_WIRE_AUTH_LEN];

static void
check_accepted(const uint8_t *f, size_t len, const struct spinnic_pkt *q)
{
	FZ_CHECK(q->type >= SPINNIC_WIRE_T_DATA && q->type < SPINNIC_WIRE_T_MAX);
	if (q->type == SPINNIC_WIRE_T_TACK || q->type == SPINNIC_WIRE_T_CHAL ||
	    q->type == SPINNIC_WIRE_T_CHAL_ACK) {
		/* transport: no Portals operation; the handshake never
		 * sequenced */
		FZ_CHECK(q->op == 0 && q->ack_req == 0 && q->ni == 0);
		if (q->type != SPINNIC_WIRE_T_TACK)
			FZ_CHECK(q->flags == 0);
	} else {
		FZ_CHECK(q->op >= SPINNIC_WIRE_OP_PUT &&
			 q->op < SPINNIC_WIRE_OP_MAX);
	}
	FZ_CHECK(q->ni < SPINNIC_WIRE_NI_KINDS);
	FZ_CHECK(q->payload >= f + SPINNIC_WIRE_ETH_LEN);
	FZ_CHECK(q->payload + q->pay_len <= f + len);
	FZ_CHECK(q->pay_len <= SPINNIC_WIRE_MAX_PAYLOAD);
	FZ_CHECK(q->msg_len <= SPINNIC_WIRE_MAX_MSG_SIZE);
	if (q->type == SPINNIC_WIRE_T_DATA || q->type == SPINNIC_WIRE_T_REPLY) {
		FZ_CHECK(q->offset <= q->msg_len);
		FZ_CHECK(q->pay_len <= q->msg_len - q->offset);
		if (q->flags & SPINNIC_WIRE_F_HEADER)
			FZ_CHECK(q->offset == 0);
		if (q->flags & SPINNIC_WIRE_F_COMPLETION)
			FZ_CHECK(q->offset + q->pay_len == q->msg_len);
	} else {
		FZ_CHECK(q->pay_len == 0);
	}
}

static void
check_accepted_keyed(const uint8_t *f, size_t len, const struct spinnic_pkt *q)
{
	check_accepted(f, len, q);
	FZ_CHECK(!(q->flags & SPINNIC_WIRE_F_AUTH));
	FZ_CHECK((q->flags & SPINNIC_WIRE_F_REL) ||
		 q->type == SPINNIC_WIRE_T_TACK ||
		 q->type == SPINNIC_WIRE_T_CHAL ||
		 q->type == SPINNIC_WIRE_T_CHAL_ACK);
	/* the trailer follows the payload, inside the frame */
	FZ_CHECK(q->payload + q->pay_len + SPINNIC_WIRE_AUTH_LEN <= f + len);
	{
		uint64_t ctr = 0;
		unsigned i;

		for (i = 0; i < SPINNIC_WIRE_AUTH_CTR_LEN; i++)
			ctr = ctr << 8 | q->payload[q->pay_len + i];
		FZ_CHECK(ctr == q->auth_ctr);
	}
}

/* rebuild @p q; keyed: sealed, parsed with the key */
static void
check_round_trip(const struct spinnic_pkt *q, int keyed)
{
	struct spinnic_wire_addr a;
	struct spinnic_pkt p = *q, r;
	int len, rc;

	spinnic_wire_addr_nodes(q->src.nid & 0xffffff, FZ_NID,
				SPINNIC_WIRE_UDP_PORT, &a);
	len = spinnic_wire_build(rebuilt, sizeof(rebuilt) -
				 SPINNIC_WIRE_AUTH_LEN, &a, &p);
	FZ_CHECK(len > 0);
	if (keyed) {
		struct spinnic_wire_auth *k = fz_wire_auth();

		len = spinnic_wire_auth_seal(k, rebuilt, (size_t)len,
					     sizeof(rebuilt));
		FZ_CHECK(len > 0);
		rc = spinnic_wire_parse_auth(rebuilt, (size_t)len,
					     SPINNIC_WIRE_UDP_PORT, k, &r);
	} else {
		rc = spinnic_wire_parse(rebuilt, (size_t)len,
					SPINNIC_WIRE_UDP_PORT, &r);
	}
	FZ_CHECK(rc == 0);
#define SAME(f) FZ_CHECK(r.f == q->f)
	SAME(type); SAME(flags); SAME(op); SAME(ack_req); SAME(ni);
	SAME(fail_type); SAME(atomic_op); SAME(atomic_type);
	SAME(src.nid); SAME(src.pid); SAME(dst.nid); SAME(dst.pid);
	SAME(pt_index); SAME(uid); SAME(match_bits); SAME(hdr_data);
	SAME(msg_id); SAME(msg_len); SAME(offset); SAME(remote_offset);
	SAME(mlength); SAME(epoch); SAME(ack_epoch); SAME(pay_len);
	SAME(seq); SAME(ack_seq); SAME(sack); SAME(sack_base);
#undef SAME
	FZ_CHECK(memcmp(r.payload, q->payload, q->pay_len) == 0);
}

static void
check_rc(int rc)
{
	FZ_CHECK(-rc >= SPINNIC_WIRE_DROP_BASE && -rc < SPINNIC_WIRE_DROP_END);
	FZ_CHECK(strcmp(spinnic_wire_drop_name(rc), "unknown") != 0);
}

/* unkeyed, then keyed */
static void
parse_one(const uint8_t *f, size_t size)
{
	struct spinnic_pkt q;
	int rc;

	memset(&q, 0, sizeof(q));
	rc = spinnic_wire_parse(f, size, SPINNIC_WIRE_UDP_PORT, &q);
	if (rc == 0) {
		/* a node without a key never takes an authenticated frame */
		FZ_CHECK(!(q.flags & SPINNIC_WIRE_F_AUTH));
		check_accepted(f, size, &q);
		check_round_trip(&q, 0);
	} else {
		check_rc(rc);
	}
	memset(&q, 0, sizeof(q));
	rc = spinnic_wire_parse_auth(f, size, SPINNIC_WIRE_UDP_PORT,
				     fz_wire_auth(), &q);
	if (rc == 0) {
		check_accepted_keyed(f, size, &q);
		check_round_trip(&q, 1);
	} else {
		check_rc(rc);
	}
}

/* seal a frame of the build layout with the fuzz key, then parse it: the
 * MAC holds, so the checks behind it see the mutated fields */
static void
parse_sealed(const uint8_t *f, size_t size)
{
	int len;

	if (size > sizeof(sealed) - SPINNIC_WIRE_AUTH_LEN)
		return;
	memcpy(sealed, f, size);
	len = spinnic_wire_auth_seal(fz_wire_auth(), sealed, size,
				     size + SPINNIC_WIRE_AUTH_LEN);
	if (len <= 0) {
		FZ_CHECK(len == -EINVAL || len == -ENOSPC);
		return;
	}
	FZ_CHECK((size_t)len == size + SPINNIC_WIRE_AUTH_LEN);
	parse_one(sealed, (size_t)len);
}

/* recompute the IPv4 header checksum when the header is in the frame;
 * @return 1 when the frame changed */
static int
ip_reseal(uint8_t *f, size_t size)
{
	size_t ihl, i;
	uint32_t sum = 0;
	uint16_t old;

	if (size < SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN ||
	    f[12] != 0x08 || f[13] != 0x00)
		return 0;
	ihl = (size_t)(f[14] & 0xf) * 4;
	if (ihl < SPINNIC_WIRE_IP_LEN || SPINNIC_WIRE_ETH_LEN + ihl > size)
		return 0;
	old = (uint16_t)(f[24] << 8 | f[25]);
	f[24] = f[25] = 0;
	for (i = 0; i < ihl; i += 2)
		sum += (uint32_t)(f[14 + i] << 8 | f[15 + i]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	f[24] = (uint8_t)(sum >> 8);
	f[25] = (uint8_t)sum;
	return old != sum;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f;

	/* an exact-size heap copy: ASan sees any read past the frame */
	f = malloc(size ? size : 1);
	if (f == NULL)
		return 0;
	memcpy(f, data, size);
	parse_one(f, size);
	parse_sealed(f, size);
	/* again with a valid IP checksum, so that mutations of the IP
	 * header reach the checks behind it */
	if (ip_reseal(f, size)) {
		parse_one(f, size);
		parse_sealed(f, size);
	}
	free(f);
	return 0;
}
