/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-forge: a hostile neighbour on the LAN, for the tests that attack
 * spinnic from outside (test_hostile.sh). It sends crafted spinnic frames
 * through an AF_PACKET socket on an interface (root), built with the
 * project's own wire builder so that every frame parses: what is tested is
 * what spinnic does with well-formed lies, not the parser (fuzzed apart).
 *
 *   spinnic-forge IFACE UDP_PORT epoch SRC DST [EPOCH]
 *       one sequenced probe (TACK + F_REL) claiming to be SRC, in EPOCH
 *       (default: now in ms + 2^30, "newer" than any clock-based epoch)
 *   spinnic-forge IFACE UDP_PORT nids DST FIRST COUNT
 *       from each of COUNT node ids from FIRST: a sequenced probe, and an
 *       unsequenced one-packet put to portal 63 asking for an ack
 *   spinnic-forge IFACE UDP_PORT flood SRC DST[:PID] COUNT MSG_LEN PT MATCH RATE
 *       COUNT unsequenced header-only put packets, a new message id each,
 *       claiming MSG_LEN bytes, at RATE packets/s (0: as fast as possible)
 *   spinnic-forge IFACE UDP_PORT reply SRC DST LEN SEQS SLOTS
 *       forged get replies (LEN bytes of 0xee, one packet) and then ACKs,
 *       for every message id (seq << 24 | slot), seq 1..SEQS, slot
 *       0..SLOTS-1: the ids a node hands out first when they are a plain
 *       sequence. Each unsequenced, then sequenced in a random epoch.
 *   spinnic-forge IFACE UDP_PORT replay COUNT SECONDS
 *       capture up to COUNT spinnic frames (UDP_PORT) seen on IFACE within
 *       SECONDS, then send each of them again, byte for byte
 *
 * Prints one line: what it sent. Exit 0, 1 on a bad argument or a socket
 * error (77 when AF_PACKET sockets are refused: not root).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

#define FRAME_MAX 9216u

static int sock = -1;
static struct sockaddr_ll to;
static uint16_t udp_port;

static void
die(const char *what)
{
	fprintf(stderr, "spinnic-forge: %s: %s\n", what, strerror(errno));
	exit(errno == EPERM || errno == EACCES ? 77 : 1);
}

static uint64_t
num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || end == s) {
		fprintf(stderr, "spinnic-forge: not a number: '%s'\n", s);
		exit(1);
	}
	return v;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t
rnd32(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint32_t)now_ns();
	return v;
}

/* Build, optionally sequence (F_REL, epoch, seq), checksum and send. */
static void
send_pkt(const struct spinnic_pkt *p, int rel, uint32_t epoch, uint32_t seq)
{
	static uint8_t f[FRAME_MAX];
	struct spinnic_wire_addr a;
	int len;

	spinnic_wire_addr_nodes(p->src.nid, p->dst.nid, udp_port, &a);
	len = spinnic_wire_build(f, sizeof(f), &a, p);
	if (len < 0) {
		fprintf(stderr, "spinnic-forge: build: %s\n", strerror(-len));
		exit(1);
	}
	spinnic_wire_seal(f, (size_t)len, rel, epoch, seq);
	if (sendto(sock, f, (size_t)len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != len)
		die("sendto");
}

static void
probe(uint32_t src, uint32_t dst, uint32_t epoch)
{
	struct spinnic_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_TACK;
	p.src.nid = src;
	p.dst.nid = dst;
	send_pkt(&p, 1, epoch, 0);
}

static int
cmd_epoch(int argc, char **argv)
{
	uint32_t epoch;

	if (argc != 2 && argc != 3)
		return -1;
	if (argc == 3) {
		epoch = (uint32_t)num(argv[2]);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		epoch = (uint32_t)((uint64_t)ts.tv_sec * 1000u +
				   (uint64_t)ts.tv_nsec / 1000000u) +
			(1u << 30);
	}
	probe((uint32_t)num(argv[0]), (uint32_t)num(argv[1]), epoch);
	printf("sent a sequenced probe from nid %s in epoch %" PRIu32 "\n",
	       argv[0], epoch);
	return 0;
}

static int
cmd_nids(int argc, char **argv)
{
	uint32_t dst, first, count, i;

	if (argc != 3)
		return -1;
	dst = (uint32_t)num(argv[0]);
	first = (uint32_t)num(argv[1]);
	count = (uint32_t)num(argv[2]);
	for (i = 0; i < count; i++) {
		struct spinnic_pkt p;

		probe(first + i, dst, rnd32());
		/* and an unsequenced put that matches nothing, asking for an
		 * ack: a NACK back would need a send slot for the nid */
		memset(&p, 0, sizeof(p));
		p.type = SPINNIC_WIRE_T_DATA;
		p.op = SPINNIC_WIRE_OP_PUT;
		p.flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
		p.ack_req = SPINNIC_PTL_ACK_REQ;
		p.src.nid = first + i;
		p.dst.nid = dst;
		p.pt_index = 63;
		p.msg_id = ((uint64_t)rnd32() << 24) | i;
		p.msg_len = 8;
		p.pay_len = 8;
		p.payload = (const uint8_t *)"forged!!";
		send_pkt(&p, 0, 0, 0);
	}
	printf("sent sequenced probes and unsequenced puts from nids %" PRIu32 "..%" PRIu32 "\n",
	       first, first + count - 1);
	return 0;
}

static int
cmd_flood(int argc, char **argv)
{
	static uint8_t flood_pay[2048];
	uint64_t count, rate, i, t0;
	struct spinnic_pkt p;

	if (argc != 7)
		return -1;
	memset(&p, 0, sizeof(p));
	p.type = SPINNIC_WIRE_T_DATA;
	p.op = SPINNIC_WIRE_OP_PUT;
	p.flags = SPINNIC_WIRE_F_HEADER;
	p.src.nid = (uint32_t)num(argv[0]);
	/* DST: NID or NID:PID (the Portals pid of the client flooded) */
	{
		char nid[32];
		const char *colon = strchr(argv[1], ':');
		size_t n = colon != NULL ? (size_t)(colon - argv[1]) :
			   strlen(argv[1]);

		if (n >= sizeof(nid))
			return -1;
		memcpy(nid, argv[1], n);
		nid[n] = '\0';
		p.dst.nid = (uint32_t)num(nid);
		if (colon != NULL)
			p.dst.pid = (uint32_t)num(colon + 1);
	}
	count = num(argv[2]);
	p.msg_len = num(argv[3]);
	p.pt_index = (uint32_t)num(argv[4]);
	p.match_bits = num(argv[5]);
	rate = num(argv[6]);
	/* a whole first packet (spinnic's default payload), as a real
	 * sender's: a shorter one would be dropped for its offset */
	memset(flood_pay, 0x46, sizeof(flood_pay));
	p.pay_len = sizeof(flood_pay);
	p.payload = flood_pay;
	if (p.msg_len < p.pay_len)
		p.msg_len = p.pay_len;
	t0 = now_ns();
	for (i = 0; i < count; i++) {
		p.msg_id = ((uint64_t)rnd32() << 32) | i;
		send_pkt(&p, 0, 0, 0);
		if (rate > 0)
			while (now_ns() - t0 < (i + 1) * 1000000000ull / rate)
				;
	}
	printf("sent %" PRIu64 " unsequenced headers of %" PRIu64 "-byte messages\n",
	       count, p.msg_len);
	return 0;
}

static int
cmd_reply(int argc, char **argv)
{
	static uint8_t pay[2048];
	uint64_t len, seqs, slots, seq, slot, n = 0;
	struct spinnic_pkt p;
	int pass, kind;

	if (argc != 5)
		return -1;
	len = num(argv[2]);
	seqs = num(argv[3]);
	slots = num(argv[4]);
	if (len == 0 || len > sizeof(pay))
		return -1;
	memset(pay, 0xee, sizeof(pay));
	for (kind = 0; kind < 2; kind++)
		for (pass = 0; pass < 2; pass++)
			for (seq = 1; seq <= seqs; seq++)
				for (slot = 0; slot < slots; slot++) {
					memset(&p, 0, sizeof(p));
					p.src.nid = (uint32_t)num(argv[0]);
					p.dst.nid = (uint32_t)num(argv[1]);
					p.msg_id = seq << 24 | slot;
					p.msg_len = len;
					if (kind == 0) {
						p.type = SPINNIC_WIRE_T_REPLY;
						p.op = SPINNIC_WIRE_OP_GET;
						p.flags = SPINNIC_WIRE_F_HEADER |
							SPINNIC_WIRE_F_COMPLETION;
						p.pay_len = (uint32_t)len;
						p.payload = pay;
						p.mlength = len;
					} else {
						p.type = SPINNIC_WIRE_T_ACK;
						p.op = SPINNIC_WIRE_OP_PUT;
						p.mlength = len;
					}
					send_pkt(&p, pass, rnd32(), 0);
					n++;
				}
	printf("sent %" PRIu64 " forged replies and acks\n", n);
	return 0;
}

static int
cmd_replay(int argc, char **argv)
{
	static uint8_t frames[256][FRAME_MAX];
	static ssize_t lens[256];
	uint64_t count, deadline;
	unsigned n = 0, i;

	if (argc != 2)
		return -1;
	count = num(argv[0]);
	if (count > 256)
		count = 256;
	deadline = now_ns() + num(argv[1]) * 1000000000ull;
	while (n < count && now_ns() < deadline) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		struct spinnic_pkt p;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		lens[n] = recv(sock, frames[n], FRAME_MAX, MSG_DONTWAIT);
		if (lens[n] <= 0)
			continue;
		/* spinnic frames only (any that parse; keyed ones too) */
		if (spinnic_wire_parse(frames[n], (size_t)lens[n], udp_port,
				       &p) == 0 ||
		    (lens[n] > (ssize_t)SPINNIC_WIRE_HDR_LEN &&
		     frames[n][12] == 0x08 && frames[n][13] == 0 &&
		     frames[n][23] == IPPROTO_UDP &&
		     (frames[n][36] << 8 | frames[n][37]) == udp_port))
			n++;
	}
	for (i = 0; i < n; i++)
		if (sendto(sock, frames[i], (size_t)lens[i], 0,
			   (struct sockaddr *)&to, sizeof(to)) != lens[i])
			die("sendto");
	printf("replayed %u frames\n", n);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "epoch", cmd_epoch }, { "nids", cmd_nids },
		{ "flood", cmd_flood }, { "reply", cmd_reply },
		{ "replay", cmd_replay },
	};
	unsigned i;
	int ifx;

	if (argc < 4) {
		fprintf(stderr, "usage: spinnic-forge IFACE UDP_PORT epoch|nids|flood|reply|replay ARGS (see the source)\n");
		return 1;
	}
	ifx = (int)if_nametoindex(argv[1]);
	if (ifx == 0)
		die(argv[1]);
	udp_port = (uint16_t)num(argv[2]);
	sock = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (sock < 0)
		die("socket(AF_PACKET)");
	memset(&to, 0, sizeof(to));
	to.sll_family = AF_PACKET;
	to.sll_protocol = htons(ETH_P_ALL);
	to.sll_ifindex = ifx;
	to.sll_halen = 6;
	if (bind(sock, (struct sockaddr *)&to, sizeof(to)) != 0)
		die("bind");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[3], cmds[i].name) == 0) {
			if (cmds[i].fn(argc - 4, argv + 4) != 0) {
				fprintf(stderr, "spinnic-forge %s: bad arguments\n",
					argv[3]);
				return 1;
			}
			return 0;
		}
	fprintf(stderr, "spinnic-forge: unknown command '%s'\n", argv[3]);
	return 1;
}
