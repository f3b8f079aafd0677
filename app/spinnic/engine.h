/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file engine.h
 * Internals of the data path (engine.c, inbound.c, host_ops.c, outbound.c,
 * commands.c, outbound_stream.c, tx.c, rel_tx.c, rel_rx.c, faults.c): the
 * engine state of a node, its two halves by writer, and what the engine
 * files call of each other. Not installed.
 * The tables' bounds and why: doc/NOTES.md, "Message table under a header
 * flood"; the engine's walk: doc/datapath.md.
 */
#ifndef SPINNIC_ENGINE_H
#define SPINNIC_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "msgtab.h"

/* ---------------------------------------------------------------------- */
/* Engine state of a node (node->eng)                                      */
/* ---------------------------------------------------------------------- */

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

#include <rte_common.h>

#include "ptl_nic.h"
#include "rel.h"
#include "spin_rt.h"
#include "spinnic.h"
#include "wire.h"

struct rte_mbuf;
struct rte_ring;
struct rte_mempool;
struct out_op;

/** Entries of the inbound message table (live + tombstones). */
#define ENG_MSGS 8192u
/** Entries of the reply table (gets of this node being answered). */
#define ENG_REPLIES 2048u
/** A live message with no packet for this long is dropped (seconds). */
#define ENG_MSG_TIMEOUT_S 10
/** Live entries of eng->msgs for unsequenced messages (no F_REL: anyone
 *  on the LAN may forge them), all sources together. */
#define ENG_MSGS_UNSEQ_MAX (ENG_MSGS / 8)
/** Live entries of eng->msgs for one source nid. */
#define ENG_MSGS_NID_MAX (ENG_MSGS / 4)
/** Packet bitmap memory of eng->msgs, and of unsequenced messages in it. */
#define ENG_MSGS_SEEN_BYTES (16ull << 20)
#define ENG_MSGS_SEEN_BYTES_UNSEQ (ENG_MSGS_SEEN_BYTES / 8)
/** Packet bitmap memory of eng->replies. */
#define ENG_REPLIES_SEEN_BYTES (8ull << 20)
/** An unsequenced message that got one packet of several and nothing
 *  since for this long is dropped (forged headers; milliseconds). */
#define ENG_MSG_UNSEQ_IDLE_MS 1000
/** RX burst size. */
#define ENG_RX_BURST 64u
/** Packets in hand after a burst: new ones, their duplicates, and those
 *  the RX fault stage lets out of its reorder window. */
#define ENG_RX_HAND (2 * ENG_RX_BURST + 32)
/** Packets the outbound engine builds per poll (all clients). */
#define ENG_TX_BUDGET 64u
/** Packets (or commands) one client's command ring may take of a visit
 *  (commands.c eng_commands_poll) before the next client's turn. */
#define ENG_CMD_QUANTUM 32u
/** Packets of a put from outside the client's region whose payloads one
 *  process_vm_readv reads (commands.c put_batch). */
#define ENG_PUT_BATCH 32u
/** A get from this node's own clients up to this size is answered from a
 *  copy taken when it matched, and its GET event posted then, before the
 *  REPLY (doc/NOTES.md "A get to oneself"). */
#define ENG_GET_KEEP_MAX (64u << 10)
/** Packets held per TX queue when the port does not take them. */
#define ENG_TX_HOLD 512u
/** Slots of a TX hold only staged packets (acks) may use. */
#define ENG_TX_RESERVE 64u
/** Largest handler put, in packets (its payload copied at once). */
#define ENG_HPUT_PKTS 64u
/** Acks the inbound engine keeps when node->txr is full. */
#define ENG_ACK_HOLD 64u

/** Peers (other nodes, or this one) with reliable-delivery state. */
#define ENG_PEERS 64u
/** Packets parked until their sender's earlier packets arrive (in-order
 *  matching, inbound.c). */
#define ENG_PARK 512u
/** Active flushes waiting for message handlers at once, per node (the
 *  bits of in_msg.fwait_mask). */
#define ENG_FLUSH_WAIT 16u
/** Most packets a fault stage holds back to reorder (--fault-inject). */
#define ENG_FAULT_WIN 32u
/** A fail code (uint8_t) meaning "no event": the match is released
 *  without one (reply_job_end: detach, fini). Above every
 *  SPINNIC_PTL_NI_* code. */
#define ENG_FAIL_SILENT UINT8_MAX

/** Fault injection of one direction (faults.c; DESIGN §11). */
struct fault_stage {
	double loss, dup, corrupt;      /**< probabilities */
	unsigned window;                /**< reorder window, packets */
	uint64_t rng;
	struct rte_mempool *pool;       /**< for duplicates */
	struct rte_mbuf *win[ENG_FAULT_WIN];
	unsigned nwin;
	uint64_t events;                /**< losses, dups, corruptions, holds */
};

/**
 * Re-create a packet's payload for a resend: @p len bytes of message
 * @p msg_id from byte @p off into @p dst. @return 0 or a negative errno
 * (the source is gone: a filler goes instead)
 */
typedef int (*rel_refill_fn)(void *arg, uint64_t msg_id, uint64_t off,
			     uint32_t len, uint8_t *dst);

/** Where a packet's payload comes from when it must be sent again, and
 *  what waits for its acknowledgement. */
struct rel_src {
	struct ptl_client *c;   /**< re-read pay_len bytes from this client */
	uint64_t addr;          /**< ... at this address */
	uint64_t send_id;       /**< put whose SEND waits for this packet's
				     ack (0: none) */
	struct reply_job *job;  /**< get reply whose GET event (at this
				     target) waits for this packet's ack */
	rel_refill_fn refill;   /**< or: bytes re-created by the source (a
				     streamed or processed put) */
	void *refill_arg;
};

/** A sequenced packet in flight (outbound role). */
struct rel_txent {
	struct ptl_client *c;           /**< payload source (referenced) */
	struct rte_mbuf *copy;          /**< or a private copy of the frame */
	uint64_t addr;
	uint64_t send_id;
	struct reply_job *job;
	rel_refill_fn refill;           /**< or re-created by its source */
	void *refill_arg;
	uint64_t first, sent;           /**< tsc: first and last transmission */
	uint32_t pay_len;
	uint8_t acked, tries;
	uint8_t small_kept;             /**< or the payload is in small[] */
	uint8_t hdr[SPINNIC_WIRE_HDR_LEN]; /**< headers as first sent */
	uint8_t small[REL_SMALL];       /**< a payload of <= REL_SMALL bytes
					     with no source to re-read */
};

/** Send side of one peer (outbound role). */
struct rel_tx {
	uint32_t nid, epoch;
	uint32_t base, next;            /**< [base, next) in flight */
	uint32_t high;                  /**< highest seq acknowledged + 1 */
	uint8_t backoff;                /**< timer expiries without progress */
	uint64_t timer;                 /**< tsc: retransmission timer */
	uint64_t progress;              /**< tsc: last ack of something new */
	uint64_t last_tx;               /**< tsc of the last sequenced packet */
	bool ops_pending;               /**< operations await this peer */
	bool kick;                      /**< verified by the peer: resend
					     every unacknowledged entry now */
	uint32_t kick_seq;              /**< ... from this seq on */
	uint64_t last_kick;             /**< tsc of the last kick */
	struct rel_txent ent[REL_WIN];
};

/** Receive side of one peer (inbound role). */
struct rel_rx {
	uint32_t nid;
	struct rel_rxwin win;
	uint32_t pending;               /**< marked since the last TACK */
	bool ack_now;                   /**< a duplicate came: ack at once */
	uint64_t due;                   /**< tsc: TACK by then */
	uint64_t last_rx;               /**< tsc: last packet taken */
};

/** Ack of a peer, inbound -> outbound (eng->rel_acks). */
struct rel_ack_rec {
	uint32_t nid, epoch, ack_seq, sack_base;
	uint64_t sack;
	uint64_t cookie;        /**< REL_REC_CHAL: to echo */
	uint32_t kind;          /**< enum rel_rec_kind */
	uint32_t pad;
};

/** What a struct rel_ack_rec carries to the outbound role. */
enum rel_rec_kind {
	REL_REC_ACK,            /**< a transport ack (TACK) */
	REL_REC_CHAL,           /**< a challenge of our epoch @c epoch */
};

/** Why an inbound packet was dropped after parsing (engine counters). */
enum eng_drop {
	ENG_DROP_NOT_ME,     /**< destination nid is another node */
	ENG_DROP_NO_MATCH,   /**< matching failed (any ni_fail) */
	ENG_DROP_LATE,       /**< packet of a finished or failed message */
	ENG_DROP_DUP,        /**< packet already received */
	ENG_DROP_BAD_OFFSET, /**< offset not on a packet boundary */
	ENG_DROP_INCONSISTENT, /**< header fields differ from the first packet */
	ENG_DROP_TABLE_FULL, /**< message table full */
	ENG_DROP_NO_MEM,     /**< no memory for per-message state */
	ENG_DROP_SPIN,       /**< sPIN runtime refused the message/packet */
	ENG_DROP_UNKNOWN_OP, /**< ack/reply for no operation of ours */
	ENG_DROP_HOST,       /**< host memory write failed */
	ENG_DROP_REL_DUP,    /**< sequence number already received */
	ENG_DROP_REL_EPOCH,  /**< sequenced in an epoch not (yet) verified:
				  a challenge went to the sender */
	ENG_DROP_REL_BEYOND, /**< sequence number past the window */
	ENG_DROP_PARK_FULL,  /**< out of order, no room to park (resent), or
				  parked past ENG_MSG_TIMEOUT_S */
	ENG_DROP_UNSEQUENCED, /**< unsequenced where only a session may
				   speak: a REPLY/ACK/NACK, a GET, or any
				   request of a peer with a session */
	ENG_DROP_BAD_COOKIE, /**< a challenge answer we did not ask for */
	ENG_DROP_PEERS_FULL, /**< a verified peer found no receive slot */
	ENG_DROP_AA_FULL,    /**< an Active Access log has no room for the
				  packet's records (back-pressure: resent) */
	ENG_DROP_TABLE_SHARE, /**< new message over its source's share of the
				   message table (ENG_MSGS_UNSEQ_MAX,
				   ENG_MSGS_NID_MAX) */
	ENG_DROP_MAX,
};

/** A verdict of a check that may drop a packet: keep it (not dropped). */
#define ENG_KEEP ENG_DROP_MAX

/** Telemetry and stats names of enum eng_drop, in order (engine.c). */
extern const char *const eng_drop_names[ENG_DROP_MAX];

/** Inbound counters (written by the inbound role). */
struct eng_in_stats {
	uint64_t drop[ENG_DROP_MAX];
	uint64_t msgs_np;       /**< messages completed, non-processing path */
	uint64_t msgs_spin;     /**< messages completed by the sPIN runtime */
	uint64_t msgs_failed;   /**< messages completed with an error */
	uint64_t bytes_np;      /**< payload bytes placed, non-processing */
	uint64_t acks_sent, nacks_sent;
	uint64_t acks_rcvd, nacks_rcvd;
	uint64_t gets_served;   /**< GET requests matched */
	uint64_t replies_done;  /**< gets of ours completed */
	uint64_t reply_bytes;
	uint64_t timeouts;      /**< live messages dropped for inactivity */
	uint64_t stalls;        /**< polls that waited for a free resource */
	uint64_t ack_held;      /**< acks held back: staging ring full */
	uint64_t tacks_sent;    /**< transport acks sent */
	uint64_t tacks_rcvd;    /**< transport acks received */
	uint64_t rel_resets;    /**< peers' epochs verified and taken */
	uint64_t chal_sent;     /**< challenges of unverified epochs */
	uint64_t chal_limited;  /**< challenges not sent: rate limit */
	uint64_t unsequenced;   /**< unsequenced requests taken (no session:
				     test generators) */
	uint64_t rel_unacked;   /**< packets dropped for a short resource,
				     left for the sender to resend */
	uint64_t ack_ring_full; /**< acks not passed to the outbound role */
	uint64_t parked;        /**< packets parked to match in order */
	uint64_t atomics;       /**< atomic requests applied */
	uint64_t wb_flushes;    /**< batched writes outside regions (calls of
				     wb_flush with something staged) */
	uint64_t wb_pkts;       /**< ... packets they wrote */
	uint64_t aa_flush_waits;  /**< active flushes that waited for the
				       handlers of earlier messages */
	uint64_t aa_flush_nowait; /**< ... that could not (slots full) */
};

/** Outbound counters (written by the outbound role). */
struct eng_out_stats {
	uint64_t puts, gets;
	uint64_t data_pkts, get_pkts, reply_pkts, staged_pkts;
	uint64_t held;          /**< packets the port refused, kept to retry */
	uint64_t no_mbuf;       /**< builds postponed: pool empty */
	uint64_t ops_full;      /**< commands postponed: op table full */
	uint64_t read_faults;   /**< host reads that failed (op failed) */
	uint64_t stage_puts;    /**< puts copied into NIC memory first
				     (SPIN_MD_STAGE) */
	uint64_t stage_bytes;   /**< bytes those copies moved */
	uint64_t stage_no_mem;  /**< staged puts failed: no NIC memory */
	uint64_t aa_waits;      /**< reply packets postponed: an Active
				     Access log without room */
	uint64_t unreachable;   /**< packets for a nid no queue reaches */
	uint64_t detach_drops;  /**< commands/replies dropped on detach */
	uint64_t rel_full;      /**< builds postponed: peer window full */
	uint64_t rel_acked;     /**< packets acknowledged */
	uint64_t rel_timeouts;  /**< retransmission timers expired */
	uint64_t rel_probes;    /**< probes of peers owing us an answer */
	uint64_t rel_fillers;   /**< resent as fillers: source memory gone */
	uint64_t peer_fails;    /**< peers given up (--peer-timeout-ms) */
	uint64_t peer_failed_ops; /**< operations failed with them */
	uint64_t rel_stalls;    /**< gaps of over 10 ms between this
				     engine's own polls (its lcore not
				     running): not counted as peers' silence */
	uint64_t peers_full;    /**< sends postponed: no peer slot free */
	uint64_t chal_answered; /**< challenges of our epoch answered */
	uint64_t chal_ignored;  /**< challenges of another epoch or nid */
	uint64_t tacks_dropped; /**< transport acks the TX queue refused */
	uint64_t submitted;     /**< operations of the submit queue started
				     (handler puts) */
	uint64_t atomics;       /**< atomic commands (ATOMIC, FETCH_ATOMIC,
				     SWAP) started */
};

/** Streaming and processed puts (outbound_stream.c; outbound role). */
struct eng_sput_stats {
	uint64_t streams;       /**< streaming puts opened */
	uint64_t pieces;        /**< pieces (SPUT_START + SPUT_STREAM) taken */
	uint64_t procs;         /**< processed puts (PROCESS_PUT) started */
	uint64_t bad;           /**< refused: unknown or busy stream, pieces
				     past the declared length, EOM short of
				     it, a type that does not load or fit */
	uint64_t failed;        /**< streams/processed puts failed (SEND
				     with ni_fail) after their start */
	uint64_t absorbed;      /**< pieces of a failed stream discarded */
	uint64_t hpu_jobs;      /**< processed-put packets given to the HPUs
				     (outbound jobs of "ddt_gather") */
	uint64_t hpu_pkts;      /**< of them, built by an HPU and sent */
	uint64_t hpu_failed;    /**< jobs that came back failed (the put
				     ends with PTL_NI_SEGV) */
	uint64_t hpu_stale;     /**< jobs back after their put ended
				     (failed, detached): dropped */
	uint64_t hpu_full;      /**< submits refused, runtime full: retried */
	uint64_t hpu_inline;    /**< processed puts gathered inline (no
				     gather context: NIC memory, type too
				     deep; or zero bytes) */
};

/** What both inbound streams keep per message (a put's DATA in eng->msgs,
 *  a get's REPLY in eng->replies): the part stream_accept (inbound.c)
 *  checks and fills. */
struct in_stream {
	struct spinnic_msg_link link;   /* first */
	uint64_t rlength;               /**< msg_len */
	uint64_t got;                   /**< payload bytes received */
	uint8_t fail;                   /**< SPINNIC_PTL_NI_*: why placing
					     data failed (OK so far) */
};

/**
 * Where an inbound message stands. Every transition is made by the
 * inbound role (inbound.c); the runtime only says msg_done (done ring).
 *
 *  state         event                          next          by
 *  NEW           matched, no execution context  NP            rx_data
 *  NEW           matched, execution context     SPIN_WAIT     rx_data
 *  NEW           no match                       DONE          rx_data
 *  NP            last byte placed               DONE (event)  rx_data
 *  SPIN_WAIT     spin_msg_start took it         SPIN          msg_spin_start
 *  SPIN_WAIT     the context went away          DONE (event)  rx_data
 *  SPIN          the runtime has every byte     SPIN_FED      rx_data
 *  SPIN          timeout (spin_msg_abort)       ABORT_TIMEOUT expire_msg
 *  SPIN, FED     detach (SPIN: spin_msg_abort)  ABORT_DETACH  purge_msg
 *  SPIN, FED     msg_done                       DONE (event)  done_drain
 *  ABORT_*       msg_done                       DONE (none)   done_drain
 *  NP, SPIN_WAIT timeout, detach                DONE (none)   expire_msg,
 *                                                             purge_msg
 *  any but DONE  engine stops                   DONE (none)   eng_in_fini
 *
 * A timeout leaves SPIN_FED and ABORT_* alone, a detach ABORT_* (the
 * runtime holds them: msg_done ends them). DONE is the entry's tombstone
 * (or a GET's entry, which only recognises duplicates). ABORT_DETACH
 * messages are counted in eng->live_aborts until msg_done.
 */
enum in_msg_state {
	MSG_S_NEW = 0,                  /**< inserted, not matched yet */
	MSG_S_NP,                       /**< non-processing path: receiving */
	MSG_S_SPIN_WAIT,                /**< sPIN path, runtime not started
					     (no message slot yet) */
	MSG_S_SPIN,                     /**< the runtime has it, packets go
					     to it (sm) */
	MSG_S_SPIN_FED,                 /**< the runtime has every byte */
	MSG_S_SPIN_HELD,                /**< the runtime finished; the
					     completion waits until the
					     client holds no Active Access
					     records on the NIC (rx.held) */
	MSG_S_SPIN_ABORT_TIMEOUT,       /**< aborted, msg_done releases it */
	MSG_S_SPIN_ABORT_DETACH,        /**< aborted, msg_done releases it */
	MSG_S_DONE,                     /**< completed or forgotten */
};

/** An inbound message (entry of eng->msgs). */
struct in_msg {
	struct in_stream s;             /* first */
	struct spinnic_engine *eng;
	struct ptl_match match;         /**< from NP on */
	struct spin_msg *sm;            /**< MSG_S_SPIN only */
	struct spin_msg_result res;     /**< written by msg_done */
	uint64_t spin_bytes;            /**< bytes given to the runtime */
	enum in_msg_state state;
	bool zero_sent;                 /**< sPIN: a packet was delivered */
	bool unseq;                     /**< came unsequenced (a generator's,
					     no session): no ACK goes back */
	uint16_t fwait_mask;            /**< active flushes (rx.fwait slots)
					     waiting for this sPIN message */
	bool aa_wait;                   /**< an atomic matched but parked: an
					     Active Access log lacked room
					     for its records; its resend
					     applies it */
	struct in_msg *held_next;       /**< MSG_S_SPIN_HELD: rx.held list */
};

/** A GET, or a fetching atomic, being answered (REPLY packets built by
 *  the outbound engine). */
struct reply_job {
	struct reply_job *next;
	struct ptl_match match;         /**< completed already (match.c NULL)
					     when kept: the target's event went
					     when the data was taken */
	struct spinnic_pid src;         /**< the target process (REPLY's src) */
	uint64_t off;                   /**< next byte to send */
	uint8_t ni_kind;
	uint8_t abandon;                /**< the initiator's node is gone */
	uint8_t op;                     /**< SPINNIC_WIRE_OP_GET, _FETCH_ATOMIC
					     or _SWAP */
	bool kept;                      /**< the reply is data[] (the old
					     values of an atomic, a get to
					     this node: never read again
					     from the ME) */
	bool aa_flush;                  /**< an active flush not answered
					     yet: waits for aa_log's consumer
					     to reach aa_mark */
	uint32_t aa_log;
	uint64_t aa_mark;
	uint8_t data[];                 /**< kept: match.mlength bytes */
};

/** An inbound REPLY stream of a get of ours (entry of eng->replies);
 *  s.fail starts as the REPLY's fail_type. */
struct in_reply {
	struct in_stream s;             /* first */
};

/**
 * An initiator operation being turned into packets (commands.c): a
 * client's command read from its ring, or one submitted by the engine
 * (eng_submit: a handler's put).
 */
struct out_op {
	struct ptl_client *c;           /**< initiator, referenced */
	struct ptl_cmd cmd;             /**< command in progress */
	uint64_t msg_id;
	uint64_t off;                   /**< next byte to send */
	bool have_cmd;                  /**< cmd read, op not started yet */
	bool active;                    /**< op started, packets to build */
	struct rte_mbuf **pay;          /**< payloads built on an HPU, one
					     mbuf per packet; NULL: read from
					     the client's memory at
					     cmd.local_addr */
	uint8_t *stage;                 /**< SPIN_MD_STAGE: the put's copy
					     in NIC memory (cmd.length
					     bytes), NULL: none */
	uint64_t staged;                /**< bytes copied into stage */
};

/** An operation of the submit queue (eng->ops, eng->submit). */
struct out_sub {
	struct out_op op;
	struct rte_mbuf *pay[ENG_HPUT_PKTS];
};

/** Outbound state of one client pid. */
struct out_client {
	struct out_op op;               /**< its command in progress */
	struct out_sput *sput;          /**< streams and processed put of the
					     client (outbound_stream.c) */
};

/** Packets built but not yet taken by one TX queue. */
struct tx_hold {
	unsigned n, head;
	struct rte_mbuf *pkts[ENG_TX_HOLD];
};

/**
 * Inbound half of the engine: written by the inbound role only (inbound.c,
 * the receive side of reliable delivery, rel_rx.c); the control thread
 * reads the counters (telemetry) and detach_ack.
 */
struct eng_rx {
	struct spinnic_msgtab *msgs;    /**< put/get requests being received */
	struct spinnic_msgtab *replies; /**< REPLY streams of our gets */
	struct rte_mbuf *burst[ENG_RX_HAND];
	unsigned burst_n, burst_i;      /**< burst in hand (stalled) */
	struct rte_mbuf *acks[ENG_ACK_HOLD];
	unsigned n_acks;
	uint64_t next_expire;
	uint32_t live_aborts;           /**< aborted sPIN messages not done */
	struct eng_in_stats stats;
	struct rel_rx *peers[ENG_PEERS]; /**< receive side, by peer */
	unsigned n_peers;
	uint64_t next_ack_check;
	bool transient;                 /**< this packet's drop is short-lived */
	uint64_t chal_next;             /**< tsc: rate limit of challenges */
	/** challenges sent lately: one per nid and epoch per RTO */
	struct { uint32_t nid, epoch; uint64_t tsc; } chal_recent[16];
	unsigned chal_slot;             /**< chal_recent: next slot (mod 16) */
	/** challenge cookies' HMAC, keyed with a random secret (rel_init);
	 *  an OpenSSL EVP_MAC_CTX, reused for every cookie */
	struct evp_mac_ctx_st *mac;
	struct fault_stage *faults;     /**< RX fault injection, or NULL */
	struct park_ent {
		struct rte_mbuf *m;
		uint32_t nid, epoch, seq;
	} park[ENG_PARK];               /**< waiting to match in order */
	unsigned n_park;
	/** active flushes whose reply waits for the sPIN messages its
	 *  initiator sent the client before it (in_msg.fwait_mask) */
	struct eng_fwait {
		struct reply_job *j;    /**< NULL: slot free */
		uint32_t left;          /**< messages not finished */
	} fwait[ENG_FLUSH_WAIT];
	unsigned n_fwait;               /**< slots in use */
	/** finished sPIN messages whose client holds Active Access
	 *  records on the NIC: completed (ack) once they are in its log,
	 *  so an ack never comes before its handlers' records */
	struct in_msg *held_head, *held_tail;
	uint64_t held_gen;              /**< ptl_aa_unheld() at the last scan */
	bool held_rescan;               /**< scan again although it did not
					     move (ack room, a detach) */
	uint64_t rel_moves;             /**< a peer's window moved (count) */
	uint64_t park_seen;             /**< rel_moves at the last drain */
	uint64_t park_tsc;              /**< parked packets last moved */
	uint64_t detach_seen;           /**< detach request in progress */
	volatile uint64_t detach_ack;   /**< detach request done (the control
					     thread polls it) */
	/** put packets bound for client memory outside its region, written
	 *  with one process_vm_writev per client and burst, their messages
	 *  completed after (inbound.c wb_flush; each holds an ack slot) */
	struct in_wb {
		struct in_msg *e;
		struct rte_mbuf *m;     /**< the packet, held ... */
		const uint8_t *pay;     /**< ... for its payload */
		uint64_t addr;          /**< client address */
		uint32_t len;
		bool last;              /**< the message's last bytes */
	} wb[ENG_RX_BURST];
	unsigned n_wb;
} __rte_cache_aligned;
/* a staged write holds an ack slot: they never outnumber wb[] */
static_assert(ENG_ACK_HOLD <= ENG_RX_BURST, "wb[] holds ENG_ACK_HOLD");

/**
 * Outbound half of the engine: written by the outbound role only
 * (outbound.c, commands.c, outbound_stream.c, the send side of reliable
 * delivery rel_tx.c, tx.c); the control thread reads the counters,
 * n_staged and detach_ack, the HPUs gather (atomic load).
 */
struct eng_tx {
	struct out_client clients[SPINNIC_CLIENTS_MAX]; /**< by pid */
	struct out_sub *sub;            /**< submitted operation in progress */
	struct reply_job *job_head, *job_tail;
	struct tx_hold *hold;           /**< one per TX queue */
	unsigned rr_pid;                /**< client served last (round robin) */
	uint64_t next_scan;
	struct eng_out_stats stats;
	struct rel_tx *peers[ENG_PEERS]; /**< send side, by peer */
	unsigned n_peers;
	uint64_t next_probe_scan;
	uint64_t last_poll;             /**< tsc of the last rel_tx_poll */
	uint32_t failed[ENG_PEERS];     /**< peers given up by rel_tx_poll,
					     not yet told to the builders */
	unsigned n_failed;
	struct rte_mbuf *staged[32];    /**< staged packets waiting for room */
	unsigned n_staged;
	struct fault_stage *faults;     /**< TX fault injection, or NULL */
	struct eng_sput_stats sput;     /**< outbound_stream.c counters */
	struct out_gather *gather;      /**< outbound_stream.c: processed-put
					     packets out on the HPUs */
	volatile uint64_t detach_ack;   /**< detach request done (the control
					     thread polls it) */
} __rte_cache_aligned;

/**
 * Engine state of a node. Three lcores/threads write it, so it is laid out
 * by writer (STYLE.md item 9), each part starting on its own cache line
 * (checked below):
 *
 *  part            written by                         read by
 *  shared          spinnic_engine_init, then nobody   every role
 *  rx (inbound)    the inbound role                   control thread
 *  tx (outbound)   the outbound role                  control thread, HPUs
 *  detach          the control thread (client detach) both roles
 *
 * Every field has one writer role: what passes between the roles goes
 * through the rings (separate objects; their pointers are in the shared
 * part). Init and fini (engine.c) run while the roles are stopped.
 */
struct spinnic_engine {
	/* ---- shared, read-mostly: set at init ---- */
	struct spinnic_node *node;
	uint64_t hz;
	struct rte_ring *done;          /**< msg_done -> inbound (MP/SC) */
	/* inbound -> outbound: GETs to answer (SP/SC) */
	struct rte_ring *jobs;
	/* inbound -> outbound: peers' acks (SP/SC, struct rel_ack_rec) */
	struct rte_ring *rel_acks;
	/* inbound -> outbound: our transport acks, built (SP/SC) */
	struct rte_ring *tacks;
	/* HPUs (handler puts), later triggers -> outbound: operations to
	 * originate (MP/SC, struct out_sub; commands.c) */
	struct rte_ring *submit;
	struct rte_mempool *ops;        /**< struct out_sub, for submit */

	struct eng_rx rx;               /**< inbound half */
	struct eng_tx tx;               /**< outbound half */

	/* ---- client detach handshake: written by the control thread ---- */
	pthread_mutex_t detach_lock __rte_cache_aligned; /* first of the part */
	struct ptl_client *volatile detach_pc; /**< client being detached */
	volatile uint64_t detach_req;   /**< request number (roles ack it) */
} __rte_cache_aligned;

/* Each writer's part starts a cache line of its own, after the previous
 * part (so no two parts share a line), and the engine ends on a line
 * boundary (nothing else shares its last line). */
static_assert(offsetof(struct spinnic_engine, rx) %
	      RTE_CACHE_LINE_SIZE == 0, "inbound half not on a cache line");
static_assert(offsetof(struct spinnic_engine, tx) %
	      RTE_CACHE_LINE_SIZE == 0, "outbound half not on a cache line");
static_assert(sizeof(struct eng_rx) % RTE_CACHE_LINE_SIZE == 0 &&
	      sizeof(struct eng_tx) % RTE_CACHE_LINE_SIZE == 0,
	      "a half does not end on a cache line");
static_assert(offsetof(struct spinnic_engine, detach_lock) %
	      RTE_CACHE_LINE_SIZE == 0, "detach words not on a cache line");
static_assert(sizeof(struct spinnic_engine) % RTE_CACHE_LINE_SIZE == 0,
	      "engine does not end on a cache line");

/* Reply jobs (outbound.c answers them, rel_tx.c waits for their acks). */
/** A reply job's last packet was acknowledged (or will never be): the
 *  target's GET event, the job freed. SPINNIC_PTL_NI_* @p fail, or
 *  ENG_FAIL_SILENT to release the match without an event (detach, fini). */
static inline void
reply_job_end(struct ptl_nic *nic, struct reply_job *j, uint8_t fail)
{
	if (fail == ENG_FAIL_SILENT)
		ptl_match_release(nic, &j->match);
	else
		ptl_match_complete(nic, &j->match, fail);
	free(j);
}

/* inbound.c: the inbound role */
/** Inbound side of a detach: purge the client's messages. */
void eng_in_detach(struct spinnic_engine *eng, struct ptl_client *pc);
/** Drop every inbound state (fini). */
void eng_in_fini(struct spinnic_engine *eng);
/** Drop a received packet, counted by @p why (a short-lived reason marks
 *  it transient: not acknowledged, so resent). */
void eng_in_drop(struct spinnic_engine *eng, struct rte_mbuf *m,
		 enum eng_drop why);
/** Stage a packet of the inbound role for the outbound one (acks).
 *  @return 0, -ENOSPC (the caller keeps it) */
int eng_in_stage(struct spinnic_engine *eng, struct rte_mbuf *m);

/* outbound.c: the outbound role */
/** Outbound side of a detach: forget the client's commands and replies. */
void eng_out_detach(struct spinnic_engine *eng, struct ptl_client *pc);
/** Drop every outbound state (fini). */
void eng_out_fini(struct spinnic_engine *eng);

/* commands.c: every initiator operation, the one originate path */
/**
 * Originate an operation from inside the engine (a handler's put, a fired
 * triggered operation): queued for the outbound role, which starts it
 * and builds its packets as it does a client's command. Any thread.
 * @param c      initiator (a reference is taken)
 * @param cmd    the command (PUT with @p src; else any command but the
 *               streaming and processed puts)
 * @param src    payload bytes to send (copied now into mbufs), or NULL
 *               to read them from @p c's memory at cmd->local_addr when
 *               the packets are built
 * @return 0, -EINVAL (too long: over ENG_HPUT_PKTS packets; a stream
 *   command), -ENOBUFS
 *   (the queue or the mbuf pool is full: try again)
 */
int eng_submit(struct spinnic_engine *eng, struct ptl_client *c,
	       const struct ptl_cmd *cmd, const void *src);
/** Look for attached and gone clients (outbound role). */
void eng_clients_scan(struct spinnic_engine *eng);
/** Build up to @p budget packets of commands. @return packets built */
unsigned eng_commands_poll(struct spinnic_engine *eng, unsigned budget);
/** Forget a client's command and streams (detach, gone, fini). */
void eng_client_forget(struct spinnic_engine *eng, struct out_client *oc);
/** Free @p op's staged copy in NIC memory (SPIN_MD_STAGE), if it has one:
 *  when the op ends, fails or is dropped. */
void eng_op_unstage(struct spinnic_engine *eng, struct out_op *op);
/** The peer @p dst_nid was given up: build nothing more for it. */
void eng_commands_peer_failed(struct spinnic_engine *eng, uint32_t dst_nid);
/** Outbound side of a detach for commands: forget the client's. */
void eng_commands_detach(struct spinnic_engine *eng, struct ptl_client *pc);
/** Drop every submitted operation (fini). */
void eng_commands_fini(struct spinnic_engine *eng);
/**
 * The NIC's originate hook (ptl_nic_set_originate): a fired triggered
 * operation through eng_submit, its bytes read when its packets are built.
 * Any thread. @param arg the engine. @return as eng_submit
 */
int eng_originate(void *arg, struct ptl_client *c, const struct ptl_cmd *cmd);

/* tx.c: the TX path (outbound role) */
/** Free slots of TX queue @p q's hold. */
unsigned eng_tx_hold_free(const struct spinnic_engine *eng, uint16_t q);
/** Room in @p dst_nid's TX queue for one more packet (resends). */
bool eng_tx_hold_room(const struct spinnic_engine *eng, uint32_t dst_nid);
/** A sealed frame through the TX fault stage to its queue. */
void eng_tx_push(struct spinnic_engine *eng, struct rte_mbuf *m,
		 uint32_t dst_nid);
/** Hand held packets to the port. @return packets sent */
unsigned eng_tx_flush(struct spinnic_engine *eng);
/** Idle: packets the TX fault stage holds back to reorder go now. */
void eng_tx_fault_idle(struct spinnic_engine *eng);
/** Free the held packets and the TX fault stage (fini). */
void eng_tx_fini(struct spinnic_engine *eng);

/* rel_tx.c: reliable delivery, send side (outbound role) */
/**
 * Hand a built packet to its destination's TX queue, sequenced (unless it
 * is a plain transport ack), sealed and through the TX fault stage.
 * @param src where its payload is re-read for a retransmission; NULL:
 *   a copy of the frame is kept instead (header-only frames: the header)
 * @return 0 (the packet is the engine's), -ENOSPC no room in the TX queue
 *   or the peer's window (the caller keeps the packet)
 */
int rel_tx_send(struct spinnic_engine *eng, struct rte_mbuf *m,
		uint32_t dst_nid, const struct rel_src *src);
/** Room to send one more data packet to @p dst_nid now. */
bool rel_tx_room(const struct spinnic_engine *eng, uint32_t dst_nid);
/** Data packets of the window to @p dst_nid still free (up to @p max):
 *  as many rel_tx_send calls may succeed, room in the TX queue allowing. */
unsigned rel_tx_window_free(const struct spinnic_engine *eng,
			    uint32_t dst_nid, unsigned max);
/** Sequence, keep for retransmission and seal a frame.
 *  @return 0, -ENOSPC window full or no peer slot free */
int rel_track(struct spinnic_engine *eng, struct rte_mbuf *m,
	      uint32_t dst_nid, const struct rel_src *src);
/** Acks from the inbound role, timers, probes, peer timeouts; peers given
 *  up are left in eng->tx.failed for the caller. @return packets sent */
unsigned rel_tx_poll(struct spinnic_engine *eng, uint64_t now);
/** Release everything (fini). */
void rel_tx_fini(struct spinnic_engine *eng);
/** Forget the packets of a detached client @p pc, or of the refill source
 *  @p refill_arg (a stream that is gone), either may be NULL: none is
 *  re-read; each becomes a filler if it must be resent. */
void rel_tx_forget(struct spinnic_engine *eng, const struct ptl_client *pc,
		   const void *refill_arg);

/* rel_rx.c: reliable delivery, receive side (inbound role) */
/** The session cookies' key (random). @return 0, -EIO no randomness */
int rel_init(struct spinnic_engine *eng);
/**
 * Before a packet is handled: is it new in its sender's session? Only
 * data of a node without a session may come unsequenced (test
 * generators); REPLY, ACK, NACK and GET never (they would end our
 * operations or make us send to a forged nid).
 * @return ENG_KEEP to handle it, or why to drop it (a duplicate, of an
 *   unverified epoch: a challenge went to its sender, out of the window,
 *   unsequenced where a session must speak)
 */
enum eng_drop rel_rx_begin(struct spinnic_engine *eng,
			   const struct spinnic_pkt *p);
/** Every earlier packet of this packet's sender arrived (or it is not
 *  sequenced). */
bool rel_rx_in_order(struct spinnic_engine *eng, const struct spinnic_pkt *p);
/** After it was handled (RX_DONE): mark it received unless
 *  eng->rx.transient says it must come again. */
void rel_rx_end(struct spinnic_engine *eng, const struct spinnic_pkt *p);
/** A transport ack for the outbound role. */
void rel_rx_tack(struct spinnic_engine *eng, const struct spinnic_pkt *p);
/** A challenge (for the outbound role) or its answer (takes the epoch it
 *  names when its cookie is ours). @return ENG_KEEP, or why to drop it */
enum eng_drop rel_rx_handshake(struct spinnic_engine *eng,
			       const struct spinnic_pkt *p);
/** Send the transport acks that are due. @return sent */
unsigned rel_rx_acks(struct spinnic_engine *eng, uint64_t now);
/** Release (fini). */
void rel_rx_fini(struct spinnic_engine *eng);

/** Keyed (--wire-key): no UDP checksum, the MAC sealed at TX covers it. */
static inline int
rel_seal_flags(const struct spinnic_engine *eng)
{
	return eng->node->auth != NULL ? SPINNIC_WIRE_SEAL_NO_CSUM : 0;
}

/** --peer-timeout-ms in timer cycles. */
static inline uint64_t
rel_peer_timeout_tsc(const struct spinnic_engine *eng)
{
	return eng->hz * eng->node->sn->cfg.peer_timeout_ms / 1000u;
}

/* faults.c: --fault-inject */
/** A stage for one direction, or NULL when nothing is injected there. */
struct fault_stage *fault_stage_new(const struct spinnic_fault_cfg *fc,
				    uint64_t seed, struct rte_mempool *pool);
void fault_stage_free(struct fault_stage *fs);
/**
 * Pass packets through the stage: lost ones are freed, duplicated and
 * corrupted ones made, reordering within the window. @p n == 0 flushes the
 * window (call when idle, or held packets would wait for traffic).
 * @param out room for 2 * n + ENG_FAULT_WIN packets
 * @return packets written to @p out
 */
unsigned fault_apply(struct fault_stage *fs, struct rte_mbuf **in,
		     unsigned n, struct rte_mbuf **out);

#endif
