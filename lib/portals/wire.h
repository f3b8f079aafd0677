/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file wire.h
 * spinnic wire format (DESIGN §5): Ethernet + IPv4 + UDP + spinnic header,
 * all in network byte order, then the payload. Every packet carries every
 * header field, so packets can be processed in any order. libc only:
 * frames are byte buffers here (the app wraps mbufs).
 *
 * A message of N payload bytes is cut into packets of at most the
 * configured payload size; the first packet has SPINNIC_WIRE_F_HEADER, the
 * last SPINNIC_WIRE_F_COMPLETION, the others SPINNIC_WIRE_F_PAYLOAD; a
 * one-packet message is HEADER|COMPLETION (a zero-byte message too).
 */
#ifndef SPINNIC_WIRE_H
#define SPINNIC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "spinnic_abi.h"

/** Version carried in every spinnic header. */
#define SPINNIC_WIRE_VERSION 1u
/** Default UDP destination (and source) port. */
#define SPINNIC_WIRE_UDP_PORT 5777u
/** Largest message length the parser accepts (bytes). */
#define SPINNIC_WIRE_MAX_MSG_SIZE (1ull << 32)

#define SPINNIC_WIRE_ETH_LEN 14u
#define SPINNIC_WIRE_IP_LEN 20u   /**< IPv4 header as built (no options) */
#define SPINNIC_WIRE_UDP_LEN 8u
#define SPINNIC_WIRE_SPIN_LEN 112u /**< spinnic header */
/** Bytes before the payload in a frame built by spinnic_wire_build(). */
#define SPINNIC_WIRE_HDR_LEN (SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN + \
			      SPINNIC_WIRE_UDP_LEN + SPINNIC_WIRE_SPIN_LEN)
/** Frame offset of the spinnic header in a frame of spinnic_wire_build(). */
#define SPINNIC_WIRE_SPIN_OFF (SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN + \
			       SPINNIC_WIRE_UDP_LEN)
/** Frame offset of the IPv4 destination address. */
#define SPINNIC_WIRE_IP_DST_OFF (SPINNIC_WIRE_ETH_LEN + 16u)

/** Offsets of the spinnic header's fields from its start, each in network
 *  byte order. */
enum spinnic_wire_sh {
	SPINNIC_WIRE_SH_VERSION = 0,
	SPINNIC_WIRE_SH_TYPE = 1,
	SPINNIC_WIRE_SH_FLAGS = 2,
	SPINNIC_WIRE_SH_OP = 3,
	SPINNIC_WIRE_SH_ACK_REQ = 4,
	SPINNIC_WIRE_SH_NI = 5,
	SPINNIC_WIRE_SH_FAIL = 6,
	SPINNIC_WIRE_SH_AOP = 7,
	SPINNIC_WIRE_SH_ATYPE = 8,
	/* 9..11 reserved, zero */
	SPINNIC_WIRE_SH_SRC_NID = 12,
	SPINNIC_WIRE_SH_SRC_PID = 16,
	SPINNIC_WIRE_SH_DST_NID = 20,
	SPINNIC_WIRE_SH_DST_PID = 24,
	SPINNIC_WIRE_SH_PT = 28,
	SPINNIC_WIRE_SH_UID = 32,
	SPINNIC_WIRE_SH_PAY_LEN = 36,
	SPINNIC_WIRE_SH_MATCH = 40,
	SPINNIC_WIRE_SH_HDR_DATA = 48,
	SPINNIC_WIRE_SH_MSG_ID = 56,
	SPINNIC_WIRE_SH_MSG_LEN = 64,
	SPINNIC_WIRE_SH_OFFSET = 72,
	SPINNIC_WIRE_SH_ROFF = 80,
	SPINNIC_WIRE_SH_MLEN = 88,
	SPINNIC_WIRE_SH_EPOCH = 96,
	SPINNIC_WIRE_SH_ACK_EPOCH = 100,
	SPINNIC_WIRE_SH_SEQ = 104,
	SPINNIC_WIRE_SH_ACK_SEQ = 108,
	SPINNIC_WIRE_SH_END = 112,
};

/** Largest payload of one packet (IPv4 total length is 16 bits). */
#define SPINNIC_WIRE_MAX_PAYLOAD (65535u - SPINNIC_WIRE_IP_LEN - \
				  SPINNIC_WIRE_UDP_LEN - SPINNIC_WIRE_SPIN_LEN)

/** Packet type (spinnic_pkt.type). */
enum spinnic_wire_type {
	SPINNIC_WIRE_T_DATA = 1,  /**< request data (put, atomic); H/P/C flags */
	SPINNIC_WIRE_T_REPLY = 2, /**< get / fetch reply data; H/P/C flags */
	SPINNIC_WIRE_T_ACK = 3,   /**< ack of a put: mlength, fail_type */
	SPINNIC_WIRE_T_NACK = 4,  /**< negative ack: fail_type says why */
	SPINNIC_WIRE_T_GET = 5,   /**< get request: no payload, msg_len = bytes
				       asked for; flags HEADER|COMPLETION */
	SPINNIC_WIRE_T_TACK = 6,  /**< transport ack: ack_epoch, ack_seq, sack;
				       no Portals meaning. With F_REL it is a
				       probe (sequenced, to be acked) */
	SPINNIC_WIRE_T_CHAL = 7,  /**< session challenge: "do you send in
				       epoch ack_epoch?"; cookie in hdr_data.
				       Never sequenced, no payload */
	SPINNIC_WIRE_T_CHAL_ACK = 8, /**< answer to a challenge by the node
				       whose epoch it names: ack_epoch, the
				       cookie echoed in hdr_data, ack_seq =
				       its first unacknowledged seq. Never
				       sequenced, no payload */
	SPINNIC_WIRE_T_MAX,
};

/** Packet kind flags (spinnic_pkt.flags), for DATA and REPLY (and GET). */
#define SPINNIC_WIRE_F_HEADER 1u
#define SPINNIC_WIRE_F_PAYLOAD 2u
#define SPINNIC_WIRE_F_COMPLETION 4u
/** Sequenced (reliable delivery): seq and epoch are valid, the receiver
 *  acknowledges the packet. Allowed on every type; packets without it
 *  bypass the transport (test generators, older tools). */
#define SPINNIC_WIRE_F_REL 8u
/** Authenticated (spinnic --wire-key): the datagram ends in a trailer of
 *  SPINNIC_WIRE_AUTH_LEN bytes after the payload (a 64-bit frame counter,
 *  then a 16-byte AES-256-GMAC tag over the spinnic header, the payload
 *  and the counter); the IP and UDP lengths cover it. Allowed on every
 *  type, only where the parser is given a key (spinnic_wire_parse_auth);
 *  set by spinnic_wire_auth_seal(), never by spinnic_wire_build(). */
#define SPINNIC_WIRE_F_AUTH 16u

/** Authentication trailer: counter (network order), then the tag. */
#define SPINNIC_WIRE_AUTH_CTR_LEN 8u
#define SPINNIC_WIRE_AUTH_TAG_LEN 16u
#define SPINNIC_WIRE_AUTH_LEN (SPINNIC_WIRE_AUTH_CTR_LEN + \
			       SPINNIC_WIRE_AUTH_TAG_LEN)
/** Derived MAC key (AES-256). */
#define SPINNIC_WIRE_KEY_LEN 32u
/** Shortest and longest secret accepted from a key file (bytes, after
 *  hex decoding when the file is hex text). */
#define SPINNIC_WIRE_SECRET_MIN 32u
#define SPINNIC_WIRE_SECRET_MAX 4096u

/** Operation (spinnic_pkt.op). */
enum spinnic_wire_op {
	SPINNIC_WIRE_OP_PUT = 1,
	SPINNIC_WIRE_OP_GET = 2,
	SPINNIC_WIRE_OP_ATOMIC = 3,
	SPINNIC_WIRE_OP_FETCH_ATOMIC = 4,
	SPINNIC_WIRE_OP_SWAP = 5,
	SPINNIC_WIRE_OP_MAX,
};

/** Atomic operation (spinnic_pkt.atomic_op of an ATOMIC, FETCH_ATOMIC or
 *  SWAP request, spinnic_event.atomic_op): portals4.h's ptl_op_t, same
 *  numbers (the reference implementation's order). */
#define SPINNIC_PTL_MIN      0
#define SPINNIC_PTL_MAX      1
#define SPINNIC_PTL_SUM      2
#define SPINNIC_PTL_PROD     3
#define SPINNIC_PTL_LOR      4
#define SPINNIC_PTL_LAND     5
#define SPINNIC_PTL_BOR      6
#define SPINNIC_PTL_BAND     7
#define SPINNIC_PTL_LXOR     8
#define SPINNIC_PTL_BXOR     9
#define SPINNIC_PTL_SWAP     10
#define SPINNIC_PTL_CSWAP    11
#define SPINNIC_PTL_CSWAP_NE 12
#define SPINNIC_PTL_CSWAP_LE 13
#define SPINNIC_PTL_CSWAP_LT 14
#define SPINNIC_PTL_CSWAP_GE 15
#define SPINNIC_PTL_CSWAP_GT 16
#define SPINNIC_PTL_MSWAP    17
#define SPINNIC_PTL_OP_LAST  18 /**< one past the last operation */

/** Atomic datatype (spinnic_pkt.atomic_type, spinnic_event.atomic_type):
 *  portals4.h's ptl_datatype_t, same numbers (spinnic's own order: the
 *  specification fixes names only). */
#define SPINNIC_PTL_INT8_T              0
#define SPINNIC_PTL_UINT8_T             1
#define SPINNIC_PTL_INT16_T             2
#define SPINNIC_PTL_UINT16_T            3
#define SPINNIC_PTL_INT32_T             4
#define SPINNIC_PTL_UINT32_T            5
#define SPINNIC_PTL_INT64_T             6
#define SPINNIC_PTL_UINT64_T            7
#define SPINNIC_PTL_FLOAT               8
#define SPINNIC_PTL_FLOAT_COMPLEX       9
#define SPINNIC_PTL_DOUBLE              10
#define SPINNIC_PTL_DOUBLE_COMPLEX      11
#define SPINNIC_PTL_LONG_DOUBLE         12
#define SPINNIC_PTL_LONG_DOUBLE_COMPLEX 13
#define SPINNIC_PTL_DATATYPE_LAST       14 /**< one past the last type */

/** NI kind of the initiator (spinnic_pkt.ni): the target uses the NI of the
 *  same kind. Bit 0: non-matching; bit 1: logical addressing. */
#define SPINNIC_WIRE_NI_NO_MATCHING 1u
#define SPINNIC_WIRE_NI_LOGICAL 2u
#define SPINNIC_WIRE_NI_KINDS 4u

/** A packet, header fields in host byte order. */
struct spinnic_pkt {
	uint8_t type;          /**< enum spinnic_wire_type */
	uint8_t flags;         /**< SPINNIC_WIRE_F_* */
	uint8_t op;            /**< enum spinnic_wire_op */
	uint8_t ack_req;       /**< SPINNIC_PTL_*_ACK_REQ */
	uint8_t ni;            /**< SPINNIC_WIRE_NI_* kind bits */
	uint8_t fail_type;     /**< ACK/NACK (and REPLY): SPINNIC_PTL_NI_* */
	uint8_t atomic_op;
	uint8_t atomic_type;
	struct spinnic_pid src; /**< initiator */
	struct spinnic_pid dst; /**< target */
	uint32_t pt_index;
	uint32_t uid;          /**< initiator's user id */
	uint64_t match_bits;
	uint64_t hdr_data;
	uint64_t msg_id;       /**< unique per source node; ACK/NACK/REPLY
				    carry the id of the request */
	uint64_t msg_len;      /**< whole message (GET: bytes asked for) */
	uint64_t offset;       /**< this packet's offset in the message */
	uint64_t remote_offset;
	uint64_t mlength;      /**< ACK/REPLY: bytes the target took */
	uint32_t pay_len;      /**< this packet's payload bytes */
	/* reliable delivery (DESIGN §11), per ordered pair of nodes */
	uint32_t epoch;        /**< F_REL: the sender's epoch for this peer */
	uint32_t seq;          /**< F_REL: sequence number in that epoch */
	uint32_t ack_epoch;    /**< TACK: the epoch acknowledged */
	uint32_t ack_seq;      /**< TACK: every seq below it was received */
	/** TACK: bit i set = seq sack_base + i was received (selective
	 *  ack); on the wire in the match_bits slot, which TACK lacks */
	uint64_t sack;
	uint32_t sack_base;    /**< TACK: first seq of sack (msg_id slot) */
	/** parse only, F_AUTH: the trailer's frame counter (the IV is the
	 *  source nid and this; unique per frame sent) */
	uint64_t auth_ctr;
	/** parse: points at the payload inside the frame; build: bytes copied
	 *  after the headers, or NULL to leave them for the caller */
	const uint8_t *payload;
	/** parse only: the L2/L3 source seen on the wire */
	uint8_t src_mac[6];
	uint16_t src_port;
	uint32_t src_ip;
};

/**
 * Kind flags of packet [@p off, @p off + @p len) of a message of
 * @p msg_len bytes: HEADER on the first, COMPLETION on the last, PAYLOAD
 * on the others (a one-packet message is HEADER|COMPLETION).
 * @param off     the packet's offset in the message
 * @param len     its payload bytes
 * @param msg_len the whole message
 * @return SPINNIC_WIRE_F_* flags
 */
static inline uint8_t
spinnic_wire_pkt_flags(uint64_t off, uint64_t len, uint64_t msg_len)
{
	uint8_t f = (uint8_t)((off == 0 ? SPINNIC_WIRE_F_HEADER : 0) |
			      (off + len == msg_len ?
			       SPINNIC_WIRE_F_COMPLETION : 0));

	return f != 0 ? f : (uint8_t)SPINNIC_WIRE_F_PAYLOAD;
}

/**
 * Make @p p the packet [@p off, @p off + @p len) of its message
 * (p->msg_len): set offset, pay_len and the kind flags.
 * @param p   a DATA or REPLY packet, msg_len set
 * @param off the packet's offset in the message
 * @param len its payload bytes
 */
static inline void
spinnic_wire_pkt_seg(struct spinnic_pkt *p, uint64_t off, uint32_t len)
{
	p->offset = off;
	p->pay_len = len;
	p->flags = spinnic_wire_pkt_flags(off, len, p->msg_len);
}

/* ---- reading a built frame ----------------------------------------------
 * For frames of spinnic_wire_build()'s layout (a frame the caller built,
 * or its saved headers, or one spinnic_wire_parse() accepted), at least
 * SPINNIC_WIRE_HDR_LEN bytes: no checks. */

/** Big-endian 32-bit value at @p b. */
static inline uint32_t
spinnic_wire_get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		(uint32_t)b[2] << 8 | b[3];
}

/** Big-endian 64-bit value at @p b. */
static inline uint64_t
spinnic_wire_get64(const uint8_t *b)
{
	return (uint64_t)spinnic_wire_get32(b) << 32 | spinnic_wire_get32(b + 4);
}

/** Packet type (enum spinnic_wire_type) of a built frame. */
static inline uint8_t
spinnic_wire_frame_type(const void *frame)
{
	return ((const uint8_t *)frame)[SPINNIC_WIRE_SPIN_OFF +
					SPINNIC_WIRE_SH_TYPE];
}

/** Kind flags (SPINNIC_WIRE_F_*) of a built frame. */
static inline uint8_t
spinnic_wire_frame_flags(const void *frame)
{
	return ((const uint8_t *)frame)[SPINNIC_WIRE_SPIN_OFF +
					SPINNIC_WIRE_SH_FLAGS];
}

/** Message id of a built frame (its msg_id field). */
static inline uint64_t
spinnic_wire_frame_msg_id(const void *frame)
{
	return spinnic_wire_get64((const uint8_t *)frame +
				  SPINNIC_WIRE_SPIN_OFF +
				  SPINNIC_WIRE_SH_MSG_ID);
}

/** Offset in its message of a built frame's payload. */
static inline uint64_t
spinnic_wire_frame_offset(const void *frame)
{
	return spinnic_wire_get64((const uint8_t *)frame +
				  SPINNIC_WIRE_SPIN_OFF +
				  SPINNIC_WIRE_SH_OFFSET);
}

/** IPv4 destination address of a built frame, host byte order (needs only
 *  the Ethernet and IPv4 headers). */
static inline uint32_t
spinnic_wire_frame_dst_ip(const void *frame)
{
	return spinnic_wire_get32((const uint8_t *)frame +
				  SPINNIC_WIRE_IP_DST_OFF);
}

/** L2/L3 addressing of a frame (host byte order for ip/port). */
struct spinnic_wire_addr {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip;
	uint32_t dst_ip;
	uint16_t src_port;
	uint16_t dst_port;
};

/**
 * Drop reasons of spinnic_wire_parse(), returned negated. Project codes
 * above the errno range (STYLE 4).
 */
enum spinnic_wire_drop {
	SPINNIC_WIRE_DROP_BASE = 4200,
	SPINNIC_WIRE_DROP_SHORT = SPINNIC_WIRE_DROP_BASE, /**< frame < headers */
	SPINNIC_WIRE_DROP_NOT_IPV4,   /**< ethertype / IP version */
	SPINNIC_WIRE_DROP_IP_HDR,     /**< IHL < 5 or header past frame */
	SPINNIC_WIRE_DROP_IP_LEN,     /**< total length vs frame / header */
	SPINNIC_WIRE_DROP_IP_CSUM,    /**< header checksum */
	SPINNIC_WIRE_DROP_IP_FRAG,    /**< fragments are not reassembled */
	SPINNIC_WIRE_DROP_NOT_UDP,    /**< IP protocol */
	SPINNIC_WIRE_DROP_PORT,       /**< UDP destination port */
	SPINNIC_WIRE_DROP_UDP_LEN,    /**< UDP length vs IP payload */
	SPINNIC_WIRE_DROP_UDP_CSUM,   /**< non-zero UDP checksum wrong */
	SPINNIC_WIRE_DROP_SPIN_SHORT, /**< UDP payload < spinnic header */
	SPINNIC_WIRE_DROP_VERSION,    /**< spinnic header version */
	SPINNIC_WIRE_DROP_KIND,       /**< unknown type or flag combination */
	SPINNIC_WIRE_DROP_OP,         /**< unknown operation / ack_req / ni */
	SPINNIC_WIRE_DROP_PAY_LEN,    /**< pay_len vs the bytes in the frame,
					   or payload on a kind without one */
	SPINNIC_WIRE_DROP_OFFSET,     /**< offset+pay_len past msg_len, header
					   not at 0, completion not at end */
	SPINNIC_WIRE_DROP_MSG_LEN,    /**< msg_len over the maximum */
	SPINNIC_WIRE_DROP_AUTH,       /**< keyed: F_AUTH missing, trailer
					   short, or MAC wrong */
	SPINNIC_WIRE_DROP_UNSEQ,      /**< keyed: not sequenced (no F_REL)
					   and not a transport ack: replay
					   is caught only for sequenced
					   packets */
	SPINNIC_WIRE_DROP_END,
};
#define SPINNIC_WIRE_DROP_COUNT (SPINNIC_WIRE_DROP_END - SPINNIC_WIRE_DROP_BASE)

/**
 * Finish a frame built by spinnic_wire_build() (payload in place): when
 * @p rel, set F_REL, @p epoch and @p seq; then fill the UDP checksum over
 * the whole datagram (the parser verifies a non-zero one, so a corrupted
 * payload is dropped, not delivered).
 * @return 0, -EINVAL not a frame of spinnic_wire_build()'s layout
 */
int spinnic_wire_seal(void *frame, size_t len, int rel, uint32_t epoch,
		      uint32_t seq);
/** Or'ed into spinnic_wire_seal()'s @p rel: leave the UDP checksum 0, for a
 *  frame that spinnic_wire_auth_seal() will cover with its MAC. */
#define SPINNIC_WIRE_SEAL_NO_CSUM 2

/** Per-reason counters, owned by the caller (one per lcore or atomics). */
struct spinnic_wire_stats {
	uint64_t ok;
	uint64_t drop[SPINNIC_WIRE_DROP_COUNT];
};

/**
 * Count one parse result.
 * @param s  counters
 * @param rc return value of spinnic_wire_parse()
 */
static inline void
spinnic_wire_stats_count(struct spinnic_wire_stats *s, int rc)
{
	if (rc == 0)
		s->ok++;
	else if (-rc >= SPINNIC_WIRE_DROP_BASE && -rc < SPINNIC_WIRE_DROP_END)
		s->drop[-rc - SPINNIC_WIRE_DROP_BASE]++;
}

/**
 * Short name of a drop reason ("short", "ip_csum", ...).
 * @param rc a drop reason, negated or not, or 0
 * @return a static string; "ok" for 0, "unknown" for anything else
 */
const char *spinnic_wire_drop_name(int rc);

/**
 * Write Ethernet, IPv4, UDP and spinnic headers (and the payload when
 * p->payload is set) into a frame. The IPv4 checksum is filled; the UDP
 * checksum is 0 (none). The payload goes at SPINNIC_WIRE_HDR_LEN.
 * @param frame output buffer
 * @param cap   its size
 * @param l2l3  addresses and ports
 * @param p     header fields; p->pay_len payload bytes follow
 * @return frame length (> 0), -ENOSPC when cap is too small, -EINVAL when
 *         pay_len > SPINNIC_WIRE_MAX_PAYLOAD or type/op is unknown
 */
int spinnic_wire_build(void *frame, size_t cap,
		       const struct spinnic_wire_addr *l2l3,
		       const struct spinnic_pkt *p);

/**
 * Parse and validate a frame. Nothing in it is trusted until this returns
 * 0: lengths, kind, op and offsets are all checked (see enum
 * spinnic_wire_drop). Trailing Ethernet padding after the IP datagram is
 * ignored.
 * @param frame    the frame, from the Ethernet header
 * @param len      bytes in frame
 * @param udp_port expected UDP destination port (host order)
 * @param p_p      filled on success; p_p->payload points into frame
 * @return 0, or -SPINNIC_WIRE_DROP_* (count with spinnic_wire_stats_count)
 */
int spinnic_wire_parse(const void *frame, size_t len, uint16_t udp_port,
		       struct spinnic_pkt *p_p);

/* ---- authenticated wire (spinnic --wire-key; doc/NOTES.md) ------------ */

/** A MAC context: the derived key and one reusable libcrypto cipher
 *  context. Not thread-safe: one per lcore (role) that seals or parses. */
struct spinnic_wire_auth;

/**
 * Derive the MAC key from a cluster's shared secret (HKDF-SHA256, fixed
 * salt and info naming the spinnic wire and its version).
 * @param secret the secret (a key file's contents)
 * @param len    its length, SPINNIC_WIRE_SECRET_MIN..SPINNIC_WIRE_SECRET_MAX
 * @param key_p  SPINNIC_WIRE_KEY_LEN bytes written
 * @return 0, -EINVAL length out of range, -EIO libcrypto failed
 */
int spinnic_wire_key_derive(const void *secret, size_t len,
			    uint8_t key_p[SPINNIC_WIRE_KEY_LEN]);

/**
 * Read a key file and derive the MAC key from it. The file must be a
 * regular file that neither group nor others may access (mode & 077 == 0,
 * as ssh asks of private keys). Its contents are the secret: hex text
 * (only hex digits, white space at the end allowed; at least 64 digits)
 * is decoded, anything else is taken as raw bytes (at least 32).
 * `openssl rand -hex 32 > F` or `head -c 32 /dev/urandom > F`, then
 * `chmod 600 F`.
 * @param path  the file
 * @param key_p SPINNIC_WIRE_KEY_LEN bytes written
 * @return 0; -errno of open/read (-ENOENT missing, -EACCES unreadable);
 *   -EPERM group or others may access it; -EINVAL not a regular file;
 *   -EMSGSIZE under SPINNIC_WIRE_SECRET_MIN bytes of secret; -EFBIG over
 *   SPINNIC_WIRE_SECRET_MAX; -EIO libcrypto failed
 */
int spinnic_wire_key_load(const char *path,
			  uint8_t key_p[SPINNIC_WIRE_KEY_LEN]);

/**
 * A MAC context for @p key (AES-256-GCM used as GMAC: everything is
 * authenticated, nothing encrypted). It also holds the frame counter of
 * the frames it seals, starting at CLOCK_REALTIME in nanoseconds (see
 * spinnic_wire_auth_seal()).
 * @return the context, or NULL with errno (ENOMEM, EIO libcrypto)
 */
struct spinnic_wire_auth *spinnic_wire_auth_create(
	const uint8_t key[SPINNIC_WIRE_KEY_LEN]);

/** Free a MAC context (NULL is fine). */
void spinnic_wire_auth_free(struct spinnic_wire_auth *a);

/**
 * The counter the next frame sealed with @p a gets.
 * @param a MAC context
 * @return the counter
 */
uint64_t spinnic_wire_auth_next_ctr(const struct spinnic_wire_auth *a);

/**
 * Authenticate a finished frame (spinnic_wire_build() layout, UDP checksum
 * filled or not by spinnic_wire_seal()): set F_AUTH, append the trailer
 * with the context's next counter and the tag, grow the IP and UDP
 * lengths, redo the IP checksum and clear the UDP checksum (0: none; the
 * MAC covers the datagram but the IP addresses, which the IP header
 * checksum covers, and the UDP source port, which nothing uses).
 *
 * The GCM IV is the frame's source nid (32 bits) and the counter (64
 * bits), and must never repeat under one key. The counter starts at
 * CLOCK_REALTIME in nanoseconds when the context is created and grows by
 * one per frame, so it stays below the clock while fewer than one frame
 * per nanosecond is sealed, and a context created later (a restart)
 * starts above every counter used before, unless the clock goes back.
 * Hence: exactly one sealing context per source nid at a time (all of a
 * node's frames go out through one role), and node ids unique in the
 * cluster (as addressing needs anyway).
 * @param a     MAC context (its counter advances)
 * @param frame the frame, with SPINNIC_WIRE_AUTH_LEN bytes of room after
 *              @p len
 * @param len   frame length (exactly the IP datagram, no padding)
 * @param cap   bytes available at @p frame
 * @return the new length (len + SPINNIC_WIRE_AUTH_LEN); -EINVAL not a
 *   frame of that layout or already authenticated; -ENOSPC no room (cap,
 *   or the IPv4 length); -EIO libcrypto failed
 */
int spinnic_wire_auth_seal(struct spinnic_wire_auth *a, void *frame,
			   size_t len, size_t cap);

/**
 * spinnic_wire_parse() for a keyed node. With @p a, the MAC is checked
 * right after the IPv4/UDP framing (lengths, checksums) and before any
 * spinnic header field is believed: a frame without F_AUTH, with a short
 * trailer or a wrong tag is -SPINNIC_WIRE_DROP_AUTH; a valid one that is
 * neither sequenced (F_REL) nor a plain transport ack is
 * -SPINNIC_WIRE_DROP_UNSEQ. p_p->flags comes without F_AUTH (every
 * packet accepted has it), p_p->auth_ctr is the counter; pay_len excludes
 * the trailer. With @p a NULL this is
 * spinnic_wire_parse() (F_AUTH is then an unknown flag: drop "kind").
 * @param a MAC context of the calling lcore, or NULL
 * @return 0, or -SPINNIC_WIRE_DROP_*
 */
int spinnic_wire_parse_auth(const void *frame, size_t len, uint16_t udp_port,
			    struct spinnic_wire_auth *a,
			    struct spinnic_pkt *p_p);

/**
 * MAC address of a node: 02:00:nid (nid big-endian in the last 4 bytes).
 * @param nid   node id
 * @param mac_p 6 bytes written
 */
void spinnic_wire_nid_mac(uint32_t nid, uint8_t mac_p[6]);

/**
 * IPv4 address of a node, host order: 10.x.y.z with x.y.z = nid.
 * @param nid node id (< 2^24)
 * @return the address, host byte order
 */
uint32_t spinnic_wire_nid_ip(uint32_t nid);

/**
 * Node id of an IPv4 address built by spinnic_wire_nid_ip().
 * @param ip address, host byte order
 * @param nid_p the node id
 * @return 0, or -EINVAL when ip is not in 10.0.0.0/8
 */
int spinnic_wire_ip_nid(uint32_t ip, uint32_t *nid_p);

/**
 * Fill the addressing for a frame from node src_nid to node dst_nid.
 * @param src_nid  sending node
 * @param dst_nid  receiving node
 * @param udp_port UDP port (source and destination)
 * @param a_p      filled
 */
void spinnic_wire_addr_nodes(uint32_t src_nid, uint32_t dst_nid,
			     uint16_t udp_port, struct spinnic_wire_addr *a_p);

#endif
