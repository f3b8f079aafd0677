/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-mkpcap: write a classic pcap file (written by hand, no libpcap)
 * holding one spinnic frame of every packet kind and flag combination the
 * parser accepts, built with spinnic_wire_build() and checked with
 * spinnic_wire_parse(). Prints, one line per frame, the header fields it
 * put in each, tab-separated in the order of FIELDS below, so a test can
 * compare them with what a dissector decodes (test/wire/test_dissector.sh).
 * The last frames are authenticated (spinnic --wire-key: F_AUTH and the
 * counter + MAC trailer), sealed with a demo key and checked with
 * spinnic_wire_parse_auth().
 *
 *   spinnic-mkpcap OUT.pcap [UDP_PORT]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

#define PCAP_MAGIC 0xa1b2c3d4u
#define PCAP_LINKTYPE_ETHERNET 1u
#define PCAP_SNAPLEN 65535u
/* payload of a DATA/REPLY packet in the multi-packet messages */
#define PAY 64u

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t version_major;
	uint16_t version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct pcap_rec_hdr {
	uint32_t ts_sec;
	uint32_t ts_usec;
	uint32_t incl_len;
	uint32_t orig_len;
};

/* One frame to write: kind, op and placement; the rest is derived. */
struct frame_spec {
	uint8_t type, flags, op;
	uint8_t fail_type, atomic_op, atomic_type;
	uint64_t msg_len, offset;
	uint32_t pay_len;
	uint8_t auth; /* sealed with the demo key (sequenced unless a TACK) */
};

#define H SPINNIC_WIRE_F_HEADER
#define P SPINNIC_WIRE_F_PAYLOAD
#define C SPINNIC_WIRE_F_COMPLETION

static const struct frame_spec specs[] = {
	/* put of 3 packets: header, payload, completion */
	{SPINNIC_WIRE_T_DATA, H, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 3 * PAY, 0, PAY},
	{SPINNIC_WIRE_T_DATA, P, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 3 * PAY, PAY, PAY},
	{SPINNIC_WIRE_T_DATA, C, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 3 * PAY,
	 2 * PAY, PAY},
	/* one-packet put, and a zero-byte one */
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 100, 0, 100},
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 0, 0, 0},
	/* atomics: PTL_SUM on PTL_INT64_T, PTL_MAX on PTL_DOUBLE, PTL_CSWAP */
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_ATOMIC, 0, 2, 6, 8, 0, 8},
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_FETCH_ATOMIC, 0, 1, 10,
	 8, 0, 8},
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_SWAP, 0, 11, 7, 16, 0, 16},
	/* get request and its reply of 3 packets, and a one-packet reply */
	{SPINNIC_WIRE_T_GET, H | C, SPINNIC_WIRE_OP_GET, 0, 0, 0, 3 * PAY, 0, 0},
	{SPINNIC_WIRE_T_REPLY, H, SPINNIC_WIRE_OP_GET, 0, 0, 0, 3 * PAY, 0, PAY},
	{SPINNIC_WIRE_T_REPLY, P, SPINNIC_WIRE_OP_GET, 0, 0, 0, 3 * PAY, PAY,
	 PAY},
	{SPINNIC_WIRE_T_REPLY, C, SPINNIC_WIRE_OP_GET, 0, 0, 0, 3 * PAY,
	 2 * PAY, PAY},
	{SPINNIC_WIRE_T_REPLY, H | C, SPINNIC_WIRE_OP_FETCH_ATOMIC, 0, 1, 10,
	 8, 0, 8},
	/* acknowledgements */
	{SPINNIC_WIRE_T_ACK, 0, SPINNIC_WIRE_OP_PUT, SPINNIC_PTL_NI_OK, 0, 0,
	 0, 0, 0},
	{SPINNIC_WIRE_T_NACK, 0, SPINNIC_WIRE_OP_PUT, SPINNIC_PTL_NI_NO_MATCH,
	 0, 0, 0, 0, 0},
	{SPINNIC_WIRE_T_NACK, 0, SPINNIC_WIRE_OP_GET,
	 SPINNIC_PTL_NI_PERM_VIOLATION, 0, 0, 0, 0, 0},
	/* transport acks: plain, and a probe (sequenced) */
	{SPINNIC_WIRE_T_TACK, 0, 0, 0, 0, 0, 0, 0, 0},
	{SPINNIC_WIRE_T_TACK, SPINNIC_WIRE_F_REL, 0, 0, 0, 0, 0, 0, 0},
	/* the session handshake: a challenge and its answer */
	{SPINNIC_WIRE_T_CHAL, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	{SPINNIC_WIRE_T_CHAL_ACK, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	/* authenticated: a one-packet put (odd length), a transport ack */
	{SPINNIC_WIRE_T_DATA, H | C, SPINNIC_WIRE_OP_PUT, 0, 0, 0, 77, 0, 77,
	 1},
	{SPINNIC_WIRE_T_TACK, 0, 0, 0, 0, 0, 0, 0, 0, 1},
};

/* the header fields printed per frame, dissector field names without the
 * "spinnic." prefix */
static const char *const fields[] = {
	"version", "type", "flags", "op", "ack_req", "ni", "fail_type",
	"atomic_op", "atomic_type", "src_nid", "src_pid", "dst_nid",
	"dst_pid", "pt_index", "uid", "pay_len", "match_bits", "hdr_data",
	"msg_id", "msg_len", "offset", "remote_offset", "mlength", "epoch",
	"seq", "ack_epoch", "ack_seq", "sack_base", "sack", "auth_ctr",
};

static void
spec_to_pkt(const struct frame_spec *s, unsigned int i, struct spinnic_pkt *p)
{
	memset(p, 0, sizeof(*p));
	p->type = s->type;
	p->flags = s->flags;
	p->op = s->op;
	p->ack_req = (uint8_t)(i % 4);
	p->ni = (uint8_t)(i % SPINNIC_WIRE_NI_KINDS);
	p->fail_type = s->fail_type;
	p->atomic_op = s->atomic_op;
	p->atomic_type = s->atomic_type;
	p->src.nid = 1;
	p->src.pid = 100 + i;
	p->dst.nid = 2;
	p->dst.pid = 200 + i;
	p->pt_index = i % 8;
	p->uid = 1000;
	/* distinct, with the high bit set somewhere to catch 64-bit slips */
	p->match_bits = 0x8000000000000000ull | ((uint64_t)i << 32) | 0xabcdu;
	p->hdr_data = 0x0123456789abcdefull + i;
	p->msg_id = 0x100000000ull + i;
	p->msg_len = s->msg_len;
	p->offset = s->offset;
	p->remote_offset = (uint64_t)i * 4096;
	p->mlength = s->type == SPINNIC_WIRE_T_ACK ? 3 * PAY : 0;
	p->pay_len = s->pay_len;
	/* every other frame is sequenced (reliable delivery), every
	 * authenticated one but a transport ack; never the handshake */
	if (s->type != SPINNIC_WIRE_T_TACK && s->type != SPINNIC_WIRE_T_CHAL &&
	    s->type != SPINNIC_WIRE_T_CHAL_ACK && (i % 2 || s->auth))
		p->flags |= SPINNIC_WIRE_F_REL;
	if (s->type == SPINNIC_WIRE_T_CHAL ||
	    s->type == SPINNIC_WIRE_T_CHAL_ACK) {
		p->ack_req = 0;
		p->ni = 0;
	}
	p->epoch = 0xfeed0000u | i;
	p->seq = 7 + i;
	p->ack_epoch = i ? 0xbeef0000u | i : 0;
	p->ack_seq = i ? 6 + i : 0;
	if (s->type == SPINNIC_WIRE_T_TACK) {
		/* no Portals fields; the sack rides in the match_bits slot */
		p->ack_req = 0;
		p->ni = 0;
		p->match_bits = 0;
		p->msg_id = 0;
		p->sack_base = 0x70000000u + i;
		p->sack = 0x8000000000000001ull | ((uint64_t)i << 8);
	}
}

/* Values as tshark -T fields prints them for spinnic.lua's field types;
 * @p auth: the frame was sealed with counter @p ctr. */
static void
print_fields(FILE *f, const struct spinnic_pkt *p, int auth, uint64_t ctr)
{
	fprintf(f, "%u\t%u\t0x%02x\t%u\t%u\t0x%02x\t%u\t%u\t%u\t",
		SPINNIC_WIRE_VERSION, p->type,
		p->flags | (auth ? SPINNIC_WIRE_F_AUTH : 0), p->op, p->ack_req,
		p->ni, p->fail_type, p->atomic_op, p->atomic_type);
	fprintf(f, "%u\t%u\t%u\t%u\t%u\t%u\t%u\t", p->src.nid, p->src.pid,
		p->dst.nid, p->dst.pid, p->pt_index, p->uid, p->pay_len);
	/* a TACK has no match bits: its slot carries the sack */
	if (p->type == SPINNIC_WIRE_T_TACK)
		fprintf(f, "\t");
	else
		fprintf(f, "0x%016" PRIx64 "\t", p->match_bits);
	fprintf(f, "0x%016" PRIx64 "\t", p->hdr_data);
	if (p->type == SPINNIC_WIRE_T_TACK)
		fprintf(f, "\t");
	else
		fprintf(f, "0x%016" PRIx64 "\t", p->msg_id);
	fprintf(f, "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t",
		p->msg_len, p->offset, p->remote_offset, p->mlength);
	fprintf(f, "0x%08x\t%u\t0x%08x\t%u\t", p->epoch, p->seq,
		p->ack_epoch, p->ack_seq);
	if (p->type == SPINNIC_WIRE_T_TACK)
		fprintf(f, "%u\t0x%016" PRIx64 "\t", p->sack_base, p->sack);
	else
		fprintf(f, "\t\t");
	if (auth)
		fprintf(f, "%" PRIu64 "\n", ctr);
	else
		fprintf(f, "\n");
}

int
main(int argc, char **argv)
{
	static uint8_t frame[SPINNIC_WIRE_HDR_LEN + 4096 +
			     SPINNIC_WIRE_AUTH_LEN];
	/* the demo key: public, for this capture only */
	static const char secret[] = "spinnic-mkpcap demo secret, not for use";
	uint8_t payload[4096], key[SPINNIC_WIRE_KEY_LEN];
	struct spinnic_wire_auth *wa;
	struct pcap_file_hdr fh = {
		.magic = PCAP_MAGIC, .version_major = 2, .version_minor = 4,
		.snaplen = PCAP_SNAPLEN, .linktype = PCAP_LINKTYPE_ETHERNET,
	};
	struct spinnic_wire_addr a;
	unsigned long port = SPINNIC_WIRE_UDP_PORT;
	unsigned int i;
	FILE *out;

	if (argc < 2 || argc > 3 || argv[1][0] == '-') {
		fprintf(stderr, "usage: %s OUT.pcap [UDP_PORT]\n", argv[0]);
		return 2;
	}
	if (argc == 3) {
		char *end;

		port = strtoul(argv[2], &end, 10);
		if (*end != '\0' || port == 0 || port > 65535) {
			fprintf(stderr, "%s: bad UDP port '%s'\n", argv[0],
				argv[2]);
			return 2;
		}
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	spinnic_wire_addr_nodes(1, 2, (uint16_t)port, &a);
	if (spinnic_wire_key_derive(secret, sizeof(secret) - 1, key) != 0 ||
	    (wa = spinnic_wire_auth_create(key)) == NULL) {
		fprintf(stderr, "%s: demo key: libcrypto failed\n", argv[0]);
		return 1;
	}

	out = fopen(argv[1], "wb");
	if (out == NULL) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1],
			strerror(errno));
		return 1;
	}
	if (fwrite(&fh, sizeof(fh), 1, out) != 1)
		goto write_err;
	printf("#");
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		printf("%s%s", i ? "\t" : "", fields[i]);
	printf("\n");

	for (i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct pcap_rec_hdr rh;
		struct spinnic_pkt p, q;
		int len, rc;

		spec_to_pkt(&specs[i], i, &p);
		p.payload = payload;
		len = spinnic_wire_build(frame, sizeof(frame), &a, &p);
		if (len > 0 && specs[i].auth) {
			spinnic_wire_seal(frame, (size_t)len, 0, 0, 0);
			len = spinnic_wire_auth_seal(wa, frame, (size_t)len,
						     sizeof(frame));
		}
		if (len < 0) {
			fprintf(stderr, "%s: frame %u: build: %s\n", argv[0],
				i, strerror(-len));
			fclose(out);
			return 1;
		}
		/* every frame must be one the parser accepts (keyed: with
		 * the demo key) */
		rc = spinnic_wire_parse_auth(frame, (size_t)len, (uint16_t)port,
					     specs[i].auth ? wa : NULL, &q);
		if (rc != 0) {
			fprintf(stderr, "%s: frame %u: parse: %s\n", argv[0],
				i, spinnic_wire_drop_name(rc));
			fclose(out);
			return 1;
		}
		rh.ts_sec = 1700000000u + i;
		rh.ts_usec = 0;
		rh.incl_len = rh.orig_len = (uint32_t)len;
		if (fwrite(&rh, sizeof(rh), 1, out) != 1 ||
		    fwrite(frame, (size_t)len, 1, out) != 1)
			goto write_err;
		print_fields(stdout, &p, specs[i].auth, q.auth_ctr);
	}
	spinnic_wire_auth_free(wa);
	if (fclose(out) != 0) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], argv[1],
			strerror(errno));
		return 1;
	}
	return 0;

write_err:
	fprintf(stderr, "%s: %s: write failed\n", argv[0], argv[1]);
	fclose(out);
	return 1;
}
