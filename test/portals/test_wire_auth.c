/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated wire (spinnic --wire-key; lib/portals wire.h, wire_auth.c):
 * key files, seal/verify round trip, every covered bit, wrong key, frames
 * without a trailer, counters (IVs) of consecutive frames, unsequenced
 * frames.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "wire.h"
#include "wire_test.h"


static uint8_t payload[4096];
static struct spinnic_wire_auth *ka, *kb; /* two keys */

static void
pkt_data(struct spinnic_pkt *p, uint32_t pay_len)
{
	memset(p, 0, sizeof(*p));
	p->type = SPINNIC_WIRE_T_DATA;
	p->flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	p->op = SPINNIC_WIRE_OP_PUT;
	p->ack_req = SPINNIC_PTL_ACK_REQ;
	p->src.nid = 0x010203;
	p->src.pid = 4;
	p->dst.nid = 5;
	p->dst.pid = 6;
	p->pt_index = 7;
	p->uid = 1001;
	p->match_bits = 0x1122334455667788ull;
	p->hdr_data = 0x99aabbccddeeff00ull;
	p->msg_id = 0xfedcba9876543210ull;
	p->msg_len = pay_len;
	p->pay_len = pay_len;
	p->payload = payload;
}

/* build, then (like the data path) spinnic_wire_seal with @p rel, then
 * spinnic_wire_auth_seal with @p a. @return the frame length */
static int
make(uint8_t *f, size_t cap, const struct spinnic_pkt *p, int rel,
     struct spinnic_wire_auth *a)
{
	struct spinnic_wire_addr ad;
	int len;

	spinnic_wire_addr_nodes(p->src.nid, p->dst.nid, PORT, &ad);
	len = spinnic_wire_build(f, cap, &ad, p);
	assert_true(len > 0);
	assert_int_equal(spinnic_wire_seal(f, (size_t)len, rel, 0x77, 9), 0);
	if (a == NULL)
		return len;
	len = spinnic_wire_auth_seal(a, f, (size_t)len, cap);
	assert_true(len > 0);
	return len;
}

static int
setup(void **state)
{
	static const uint8_t sa[SPINNIC_WIRE_SECRET_MIN] = "spinnic test secret A ........";
	static const uint8_t sb[SPINNIC_WIRE_SECRET_MIN] = "spinnic test secret B ........";
	uint8_t key[SPINNIC_WIRE_KEY_LEN];
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	if (spinnic_wire_key_derive(sa, sizeof(sa), key) != 0)
		return -1;
	ka = spinnic_wire_auth_create(key);
	if (spinnic_wire_key_derive(sb, sizeof(sb), key) != 0)
		return -1;
	kb = spinnic_wire_auth_create(key);
	return ka != NULL && kb != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	(void)state;
	spinnic_wire_auth_free(ka);
	spinnic_wire_auth_free(kb);
	return 0;
}

/* ---- key files ---------------------------------------------------------- */

static char kdir[] = "/tmp/spinnic-wire-auth-XXXXXX";

static const char *
key_file(const char *name, const void *data, size_t len, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", kdir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static void
test_key_load(void **state)
{
	uint8_t raw[SPINNIC_WIRE_SECRET_MAX + 1], k1[32], k2[32], k3[32];
	char hex[2 * sizeof(raw) + 2];
	unsigned i;

	(void)state;
	assert_non_null(mkdtemp(kdir));
	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i * 151 + 7);
	for (i = 0; i < sizeof(raw); i++)
		sprintf(hex + 2 * i, "%02x", raw[i]);

	assert_int_equal(spinnic_wire_key_load("/nonexistent/spinnic.key", k1),
			 -ENOENT);
	assert_int_equal(spinnic_wire_key_load(kdir, k1), -EINVAL);
	/* readable by group or others, even only executable: too open */
	assert_int_equal(spinnic_wire_key_load(key_file("g", raw, 32, 0640),
					       k1), -EPERM);
	assert_int_equal(spinnic_wire_key_load(key_file("o", raw, 32, 0604),
					       k1), -EPERM);
	assert_int_equal(spinnic_wire_key_load(key_file("x", raw, 32, 0601),
					       k1), -EPERM);
	/* too short: 31 raw bytes, 62 hex digits (31 bytes) */
	assert_int_equal(spinnic_wire_key_load(key_file("s", raw, 31, 0600),
					       k1), -EMSGSIZE);
	assert_int_equal(spinnic_wire_key_load(key_file("sh", hex, 62, 0600),
					       k1), -EMSGSIZE);
	assert_int_equal(spinnic_wire_key_load(key_file("e", raw, 0, 0600),
					       k1), -EMSGSIZE);
	/* too long */
	assert_int_equal(spinnic_wire_key_load(key_file("l", raw, sizeof(raw),
							0600), k1), -EFBIG);
	/* 32 raw bytes, and the same 32 bytes as hex text: one key */
	assert_int_equal(spinnic_wire_key_load(key_file("r", raw, 32, 0600),
					       k1), 0);
	hex[64] = '\n';
	assert_int_equal(spinnic_wire_key_load(key_file("h", hex, 65, 0400),
					       k2), 0);
	assert_memory_equal(k1, k2, sizeof(k1));
	/* the key is derived, not the file's bytes */
	assert_memory_not_equal(k1, raw, sizeof(k1));
	/* another secret, another key */
	assert_int_equal(spinnic_wire_key_load(key_file("r2", raw + 1, 32,
							0600), k3), 0);
	assert_memory_not_equal(k1, k3, sizeof(k1));
	/* a derived key of a too short secret is refused too */
	assert_int_equal(spinnic_wire_key_derive(raw, 31, k3), -EINVAL);
	{
		char cmd[160];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", kdir);
		assert_int_equal(system(cmd), 0);
	}
}

/* ---- frames ------------------------------------------------------------- */

#define SAME(f) assert_true(q.f == p.f)

/* seal + verify at payload lengths of every parity, UDP checksum filled or
 * not before; every field and byte comes back, the UDP checksum is 0 (the
 * MAC replaces it) */
static void
test_round_trip(void **state)
{
	static const uint32_t lens[] = { 0, 1, 2, 3, 100, 1001, 2048, 4096 };
	static uint8_t f[8192];
	struct spinnic_pkt p, q;
	unsigned i, c;

	(void)state;
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (c = 0; c < 2; c++) {
			uint64_t ctr = spinnic_wire_auth_next_ctr(ka);
			int len, plain;

			pkt_data(&p, lens[i]);
			plain = make(f, sizeof(f), &p, 1, NULL);
			if (c == 1)
				put16(f + UDP + 6, 0); /* no checksum */
			len = spinnic_wire_auth_seal(ka, f, (size_t)plain,
						     sizeof(f));
			assert_int_equal(len, plain + SPINNIC_WIRE_AUTH_LEN);
			assert_int_equal(spinnic_wire_auth_next_ctr(ka),
					 ctr + 1);
			assert_int_equal(get16(f + IP + 2), len - ETH);
			assert_int_equal(get16(f + UDP + 4), len - UDP);
			assert_true(f[SH + 2] & SPINNIC_WIRE_F_AUTH);
			assert_int_equal(spinnic_wire_get64(f + plain), ctr);
			assert_int_equal(get16(f + UDP + 6), 0);
			memset(&q, 0, sizeof(q));
			assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len,
								 PORT, ka, &q),
					 0);
			p.flags |= SPINNIC_WIRE_F_REL;
			SAME(type); SAME(flags); SAME(op); SAME(ack_req);
			SAME(src.nid); SAME(src.pid); SAME(dst.nid);
			SAME(dst.pid); SAME(pt_index); SAME(uid);
			SAME(match_bits); SAME(hdr_data); SAME(msg_id);
			SAME(msg_len); SAME(pay_len);
			assert_int_equal(q.epoch, 0x77);
			assert_int_equal(q.seq, 9);
			assert_int_equal(q.auth_ctr, ctr);
			assert_memory_equal(q.payload, payload, lens[i]);
			/* Ethernet padding after the datagram is ignored */
			memset(f + len, 0xee, 60);
			assert_int_equal(spinnic_wire_parse_auth(f,
					(size_t)len + 60, PORT, ka, &q), 0);
			/* an unkeyed node: F_AUTH is an unknown flag, as it
			 * was before keys existed */
			assert_int_equal(spinnic_wire_parse(f, (size_t)len,
							    PORT, &q),
					 -SPINNIC_WIRE_DROP_KIND);
			/* sealed once only */
			assert_int_equal(spinnic_wire_auth_seal(ka, f,
					(size_t)len, sizeof(f)), -EINVAL);
		}
	}
	/* not a frame of the build layout, no room */
	assert_int_equal(spinnic_wire_auth_seal(ka, f, 20, sizeof(f)), -EINVAL);
	pkt_data(&p, 10);
	i = (unsigned)make(f, sizeof(f), &p, 1, NULL);
	assert_int_equal(spinnic_wire_auth_seal(ka, f, i, i + 23), -ENOSPC);
	assert_int_equal(spinnic_wire_auth_seal(ka, f, i - 1, sizeof(f)),
			 -EINVAL);
}

/* a flipped bit anywhere the MAC covers (spinnic header, payload,
 * counter, tag) is refused by the MAC (authenticated frames carry no UDP
 * checksum), also with a valid UDP checksum put back */
static void
test_bit_flips(void **state)
{
	static uint8_t f[1024], g[1024];
	struct spinnic_pkt p, q;
	int len, bit, nbits;

	(void)state;
	pkt_data(&p, 101);
	len = make(f, sizeof(f), &p, 1, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 0);
	nbits = (len - SH) * 8;
	for (bit = 0; bit < nbits; bit++) {
		int rc;

		memcpy(g, f, (size_t)len);
		g[SH + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rc = spinnic_wire_parse_auth(g, (size_t)len, PORT, ka, &q);
		if (rc != -SPINNIC_WIRE_DROP_AUTH)
			fail_msg("bit %d of %d flipped: %s, want auth", bit,
				 nbits, spinnic_wire_drop_name(rc));
		/* a checksum that matches the flipped bytes does not help */
		put16(g + UDP + 6, (uint16_t)~ref_udp_sum(g, len));
		rc = spinnic_wire_parse_auth(g, (size_t)len, PORT, ka, &q);
		if (rc != -SPINNIC_WIRE_DROP_AUTH)
			fail_msg("bit %d flipped, UDP checksum valid: %s, want "
				 "auth", bit, spinnic_wire_drop_name(rc));
	}
	/* what it does not cover: the mutable IP fields (TTL here) */
	memcpy(g, f, (size_t)len);
	g[IP + 8] = 3;
	ip_fix(g);
	assert_int_equal(spinnic_wire_parse_auth(g, (size_t)len, PORT, ka, &q),
			 0);
}

static void
test_wrong_key(void **state)
{
	static uint8_t f[4096];
	struct spinnic_pkt p, q;
	int len;

	(void)state;
	pkt_data(&p, 2048);
	len = make(f, sizeof(f), &p, 1, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, kb, &q),
			 -SPINNIC_WIRE_DROP_AUTH);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 0);
	/* the IV is rebuilt from the source nid: another nid, another IV */
	f[SH + 15] ^= 1;
	put16(f + UDP + 6, 0);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_AUTH);
}

/* keyed: no trailer, the flag without a trailer, a cut trailer */
static void
test_no_trailer(void **state)
{
	static uint8_t f[4096];
	struct spinnic_pkt p, q;
	int len, cut;

	(void)state;
	pkt_data(&p, 500);
	len = make(f, sizeof(f), &p, 1, NULL);
	assert_int_equal(spinnic_wire_parse(f, (size_t)len, PORT, &q), 0);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_AUTH);
	/* the flag alone: the last 24 payload bytes taken for a trailer */
	f[SH + 2] |= SPINNIC_WIRE_F_AUTH;
	put16(f + UDP + 6, 0);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_AUTH);
	/* a TACK (no payload) with the flag and no room for a trailer */
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = 1;
	p.dst.nid = 2;
	len = make(f, sizeof(f), &p, 0, NULL);
	f[SH + 2] |= SPINNIC_WIRE_F_AUTH;
	put16(f + UDP + 6, 0);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_AUTH);
	/* trailers cut short by 1..24 bytes (lengths made consistent) */
	for (cut = 1; cut <= (int)SPINNIC_WIRE_AUTH_LEN; cut++) {
		pkt_data(&p, 64);
		len = make(f, sizeof(f), &p, 1, ka);
		len -= cut;
		put16(f + IP + 2, (uint16_t)(len - ETH));
		ip_fix(f);
		put16(f + UDP + 4, (uint16_t)(len - UDP));
		put16(f + UDP + 6, 0);
		assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT,
							 ka, &q),
				 -SPINNIC_WIRE_DROP_AUTH);
	}
}

/* consecutive frames never share an IV (source nid, counter): also not
 * a retransmission of the same packet, also not a context made later */
static void
test_iv_unique(void **state)
{
	static uint8_t f[4096], g[4096];
	struct spinnic_wire_auth *later;
	uint8_t key[SPINNIC_WIRE_KEY_LEN];
	struct spinnic_pkt p, q;
	uint64_t prev = 0, last;
	struct timespec ts;
	int i, len = 0, glen;

	(void)state;
	pkt_data(&p, 700);
	for (i = 0; i < 1000; i++) {
		len = make(f, sizeof(f), &p, 1, ka);
		assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT,
							 ka, &q), 0);
		if (i > 0)
			assert_true(q.auth_ctr == prev + 1);
		prev = q.auth_ctr;
	}
	/* the same packet again (a resend of the same seq): its own IV, so
	 * its own tag, and both verify */
	glen = make(g, sizeof(g), &p, 1, ka);
	assert_int_equal(glen, len);
	assert_memory_equal(f + SH, g + SH, (size_t)(len - SH) -
			    SPINNIC_WIRE_AUTH_LEN);
	assert_memory_not_equal(f + len - SPINNIC_WIRE_AUTH_LEN,
				g + len - SPINNIC_WIRE_AUTH_LEN,
				SPINNIC_WIRE_AUTH_LEN);
	assert_memory_not_equal(f + len - SPINNIC_WIRE_AUTH_TAG_LEN,
				g + len - SPINNIC_WIRE_AUTH_TAG_LEN,
				SPINNIC_WIRE_AUTH_TAG_LEN);
	assert_int_equal(spinnic_wire_parse_auth(g, (size_t)glen, PORT, ka, &q),
			 0);
	last = q.auth_ctr;
	/* a context created now (a restart) starts at the clock: above
	 * every counter used so far, as long as fewer than one frame per ns
	 * was sealed */
	clock_gettime(CLOCK_REALTIME, &ts);
	memset(key, 7, sizeof(key));
	later = spinnic_wire_auth_create(key);
	assert_non_null(later);
	assert_true(spinnic_wire_auth_next_ctr(later) >=
		    (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	assert_true(spinnic_wire_auth_next_ctr(later) > last);
	spinnic_wire_auth_free(later);
}

/* keyed: only sequenced packets and plain transport acks */
static void
test_unseq(void **state)
{
	static uint8_t f[4096];
	struct spinnic_pkt p, q;
	int len;

	(void)state;
	pkt_data(&p, 100);
	len = make(f, sizeof(f), &p, 0, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_UNSEQ);
	len = make(f, sizeof(f), &p, 1, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 0);
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_ACK;
	p.op = SPINNIC_WIRE_OP_PUT;
	p.src.nid = 1;
	p.dst.nid = 2;
	len = make(f, sizeof(f), &p, 0, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 -SPINNIC_WIRE_DROP_UNSEQ);
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = 1;
	p.dst.nid = 2;
	p.ack_seq = 5;
	p.sack = 3;
	p.sack_base = 5;
	len = make(f, sizeof(f), &p, 0, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 0);
	assert_int_equal(q.flags, 0);
	assert_int_equal(q.sack, 3);
	/* a probe (sequenced TACK) */
	len = make(f, sizeof(f), &p, 1, ka);
	assert_int_equal(spinnic_wire_parse_auth(f, (size_t)len, PORT, ka, &q),
			 0);
	assert_int_equal(q.flags, SPINNIC_WIRE_F_REL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_load),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_no_trailer),
		cmocka_unit_test(test_iv_unique),
		cmocka_unit_test(test_unseq),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
