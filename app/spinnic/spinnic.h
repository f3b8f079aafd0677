/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spinnic.h
 * Internal header of the spinnic binary: options, nodes (one per port),
 * clients, lcore roles, the control plane, and the contract between the
 * process skeleton (main.c, options.c, ports.c, lcore.c, ctrl.c, stats.c)
 * and the data path (inbound.c, outbound.c, msgtab.c, engine.h). Threads:
 * lcores run non-blocking role polls (lcore.c); the control thread (ctrl.c)
 * is the only one that waits. doc/datapath.md, "Who runs what".
 */
#ifndef SPINNIC_APP_H
#define SPINNIC_APP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "spinnic_abi.h"

struct spin_handler_family;

struct rte_mempool;
struct rte_ring;
struct ptl_nic;         /* lib/portals: the NIC-side Portals state of a node */
struct ptl_client;      /* lib/portals: one attached client process */
struct spin_rt;         /* lib/spin: the sPIN runtime of a node */
struct spinnic_engine;  /* data path: message table and engine state */
struct spinnic_ctrl;    /* ctrl.c: control thread state */
struct rte_flow;        /* rte_flow.h: a flow rule (flow.c) */
struct spinnic_auth;    /* auth.h: MAC contexts of a node (--wire-key) */

extern int spinnic_logtype;
/** Send lib/portals' log messages to the spinnic.portals log type (log.c). */
void spinnic_log_portals(void);
#define SPINNIC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, spinnic_logtype, "spinnic: " fmt "\n", \
		##__VA_ARGS__)

/** Most nodes (ports) one process drives. */
#define SPINNIC_NODES_MAX 16
/** Most HPUs per node. */
#define SPINNIC_HPUS_MAX 64
/** Most clients attached to one node at the same time. */
#define SPINNIC_CLIENTS_MAX 64
/** Most role tasks one lcore runs. */
#define SPINNIC_TASKS_MAX (SPINNIC_NODES_MAX * (2 + SPINNIC_HPUS_MAX))
/** Slots of RX drop counters (indexed by the wire parser's reason code). */
#define SPINNIC_RX_DROP_MAX 32
/** Queue ids: every node has RX queue 0 and TX queue 0 (outbound role). */
#define SPINNIC_RXQ 0
#define SPINNIC_TXQ 0
/** Room reserved in an mbuf for Ethernet + IPv4 + UDP + spinnic headers. */
#define SPINNIC_HDR_ROOM 256
/** Interface name buffer (IFNAMSIZ of net/if.h). */
#define SPINNIC_IFNAMSIZ 16
/** Most RX queues per port (--rx-queues). */
#define SPINNIC_RXQ_MAX 16
/** Most uids --allow-uid takes. */
#define SPINNIC_ALLOW_UIDS_MAX 32
/** Most --handlers options (each a plugin file or a folder of them). */
#define SPINNIC_HANDLER_PATHS_MAX 16
/** Most plugins loaded in all. */
#define SPINNIC_PLUGINS_MAX 64

/* ---------------------------------------------------------------------- */
/* Options                                                                 */
/* ---------------------------------------------------------------------- */

/** Poll roles an lcore runs (the control role is a thread, ctrl.c). */
enum spinnic_role {
	SPINNIC_ROLE_INBOUND = 0,
	SPINNIC_ROLE_OUTBOUND,
	SPINNIC_ROLE_HPU,
	SPINNIC_ROLE_MAX,
};

/** Fault injection of one direction (--fault-inject, DESIGN §11). */
struct spinnic_fault_cfg {
	double loss;        /**< probability a packet is dropped */
	double dup;         /**< ... sent/received twice */
	double corrupt;     /**< ... has one bit flipped */
	unsigned reorder;   /**< window in packets within which the order is
				 shuffled (0: kept) */
};

/** Fault directions (spinnic_cfg.faults). */
enum { SPINNIC_FAULT_RX = 0, SPINNIC_FAULT_TX, SPINNIC_FAULT_DIRS };

/** Parsed command-line options after the EAL's `--`. */
struct spinnic_cfg {
	unsigned virtual_nodes;     /**< --virtual N: 0 = real ports */
	char socket_dir[PATH_MAX];  /**< --socket-dir: D/node<i>.sock */
	char socket_path[PATH_MAX]; /**< --socket: single node only */
	uint32_t payload;           /**< --payload: bytes per packet */
	uint64_t nic_mem;           /**< --nic-mem: bytes per node */
	unsigned hpus;              /**< --hpus: HPUs per node */
	uint16_t udp_port;          /**< --udp-port */
	uint32_t nid_base;          /**< --nid-base: nid of node 0 */
	unsigned stats_interval;    /**< --stats-interval S, 0 = only at exit */
	unsigned duration;          /**< --duration S, 0 = until a signal */
	unsigned idle_sleep_us;     /**< --idle-sleep-us: idle backoff */
	unsigned nb_mbufs;          /**< --mbufs: per node pool size, 0 = auto */
	unsigned max_trig;          /**< --max-triggered-ops, 0 = default */
	uint64_t aa_page;           /**< --aa-page-size, 0 = 4096 */
	unsigned aa_iotlb[3];       /**< --aa-iotlb: entries (0 = off),
				         ways (0 = fully associative),
				         policy (0 lru, 1 rnd) */
	unsigned ring_size;         /**< --ring-size: RX/TX descriptors */
	char lcore_roles[256];      /**< --lcore-roles, as given ("" = default) */
	char lcores[128];           /**< --lcores: EAL -l when no EAL args */
	/** Parsed --lcore-roles: lcore sets per role (bit i%64 of word i/64). */
	uint64_t role_mask[SPINNIC_ROLE_MAX][RTE_MAX_LCORE / 64];
	unsigned roles_given;       /**< bit per role set by --lcore-roles */
	int ctrl_lcore;             /**< ctrl=L, or -1: unpinned (EAL ctrl set) */
	/** Fault injection (DESIGN §11): RX by the inbound role, TX by the
	 *  outbound role (--fault-inject, --rx-loss/--rx-dup/--rx-reorder) */
	struct spinnic_fault_cfg faults[SPINNIC_FAULT_DIRS];
	uint64_t fault_seed;        /**< --fault-seed N */
	/** Reliable delivery: a peer silent this long with packets or
	 *  operations outstanding fails them (--peer-timeout-ms) */
	unsigned peer_timeout_ms;
	unsigned rto_us;            /**< --rto-us: first retransmission timer */
	/* Real NICs (ports.c, flow.c; doc/REAL-NIC.md). */
	/** --xdp-reset IFACE (repeatable): detached before rte_eal_init */
	char xdp_reset[SPINNIC_NODES_MAX][SPINNIC_IFNAMSIZ];
	unsigned nb_xdp_reset;
	/** --flow-isolate 1, --no-flow-isolate 0, -1: on for mlx5 only */
	int flow_isolate;
	unsigned rx_queues;         /**< --rx-queues N: RX queues per port */
	/** --capture: default EAL args let secondary processes (dpdk-dumpcap)
	 *  attach: shared config and hugepages, no --in-memory */
	bool capture;
	/* Isolation between clients (ctrl.c; doc/NOTES.md), appended. */
	uint64_t nic_mem_per_client; /**< --nic-mem-per-client, 0: no cap */
	/** --allow-uid: uids that may attach besides root and spinnic's
	 *  own effective uid */
	uint32_t allow_uids[SPINNIC_ALLOW_UIDS_MAX];
	unsigned nb_allow_uids;
	bool allow_any_uid;          /**< --allow-uid any */
	/* Authenticated wire (auth.c; doc/NOTES.md), appended. */
	bool wire_keyed;             /**< --wire-key given */
	/** the MAC key derived from the --wire-key file (HKDF); wiped once
	 *  the nodes' MAC contexts hold it */
	uint8_t wire_key[32];
	/* Handler plugins (plugins.c), appended. */
	/** --handlers PATH (repeatable), in order: pointers into argv */
	const char *handler_paths[SPINNIC_HANDLER_PATHS_MAX];
	unsigned nb_handler_paths;
	/* Handler statistics (lib/spin spin_hstats.c; doc/NOTES.md). */
	unsigned handler_budget_us;  /**< --handler-budget-us, 0: off */
	unsigned handler_trace;      /**< --handler-trace: per context */
	unsigned handler_time_every; /**< --handler-time-every */
};

/* ---------------------------------------------------------------------- */
/* Counters                                                                */
/* ---------------------------------------------------------------------- */

/*
 * Each block has one writer (the role named), so plain increments are
 * enough; stats.c reads them relaxed from another thread.
 */

/** Written by the inbound role. */
struct spinnic_rx_stats {
	uint64_t pkts;          /**< packets received (rte_eth_rx_burst) */
	uint64_t bytes;
	/** by parser reason: index -rc - SPINNIC_WIRE_DROP_BASE of
	 *  spinnic_wire_parse() (wire.h); later slots are the engine's */
	uint64_t drop[SPINNIC_RX_DROP_MAX];
	uint64_t drops;         /**< sum of drop[] */
	uint64_t matches;       /**< messages matched to an ME */
	uint64_t no_match;      /**< messages dropped for lack of an ME */
	uint64_t hers;          /**< HERs submitted to the sPIN runtime */
	uint64_t her_full;      /**< HER submission refused (queue full) */
	uint64_t msgs_done;     /**< messages completed */
	uint64_t detach_drops;  /**< in-flight messages dropped on detach */
	uint64_t faults;        /**< injected loss/reorder/dup events */
} __rte_cache_aligned;

/** Written by the outbound role. */
struct spinnic_tx_stats {
	uint64_t pkts;          /**< packets handed to rte_eth_tx_burst */
	uint64_t bytes;
	uint64_t full;          /**< packets the port did not take, freed */
	uint64_t cmds;          /**< commands consumed from command rings */
	uint64_t bad_cmds;      /**< commands rejected */
	uint64_t retransmits;
	/** frames to the node's own nid on a real port, handed to its own
	 *  RX through node->loop instead of the wire (appended) */
	uint64_t loopback;
} __rte_cache_aligned;

/** Written by the control thread. */
struct spinnic_ctrl_stats {
	uint64_t clients;       /**< attached now */
	uint64_t attaches;      /**< attaches accepted since start */
	uint64_t detaches;      /**< detaches (hang-up or DETACH) */
	uint64_t msgs;          /**< control messages received */
	uint64_t bad_msgs;      /**< rejected: length, version, op, fd, creds */
	uint64_t errors;        /**< well-formed requests that failed */
	uint64_t uid_denied;    /**< ATTACH refused: uid not allowed */
	uint64_t orphaned;      /**< detached: the process exited while
				     its connection stayed open */
	uint64_t region_refused; /**< ATTACH refused: region cannot be
				     sealed or backed (ctrl.c) */
	uint64_t batches;       /**< BATCH requests (ABI 7) */
	uint64_t batch_recs;    /**< records of batches read */
	uint64_t batch_refused; /**< whole batches (offset, count) and
				     records (op, reference) refused */
	uint64_t batch_rollbacks; /**< batches stopped by a failing record,
				       what they created destroyed */
	uint64_t batch_undo_failed; /**< rollback frees that failed (the
					 object goes at detach) */
} __rte_cache_aligned;

/**
 * Per-client counters of a node, indexed by Portals pid (telemetry.c).
 * Several writers (inbound and HPU lcores, outbound, control thread):
 * relaxed atomic adds. The control thread resets a slot when a client
 * attaches to its pid (spinnic_client_stats_reset), after the previous
 * client's detach quiesced the lcores.
 */
struct spinnic_client_stats {
	uint64_t msgs_in;       /**< messages delivered into its MEs (target) */
	uint64_t bytes_in;      /**< ... their bytes (mlength) */
	uint64_t ops_out;       /**< puts and gets it started (initiator) */
	uint64_t bytes_out;     /**< bytes of the puts it started */
	uint64_t bad_msgs;      /**< control requests rejected */
	/* the NIC's time of the messages delivered into it (ptl_match
	 * nic_ns: first packet matched to completion, without the wait for
	 * the sender to start) */
	uint64_t nic_timed;     /**< messages timed */
	uint64_t nic_ns_sum;
	uint64_t nic_ns_max;
};

/* ---------------------------------------------------------------------- */
/* Nodes                                                                   */
/* ---------------------------------------------------------------------- */

struct spinnic;

/** One port = one NIC with its own node id. */
struct spinnic_node {
	struct spinnic *sn;         /**< back pointer */
	unsigned index;             /**< 0..nb_nodes-1 */
	uint32_t nid;               /**< cfg.nid_base + index */
	uint16_t port_id;           /**< ethdev port */
	uint16_t nb_txq;            /**< TX queues (see spinnic_node_txq()) */
	bool is_virtual;            /**< ring-backed port (--virtual) */
	struct rte_ether_addr mac;  /**< port MAC */
	uint32_t payload;           /**< cfg.payload */
	uint16_t udp_port;          /**< cfg.udp_port */
	uint16_t mbuf_data_room;    /**< data room of pool mbufs */
	struct rte_mempool *pool;   /**< NIC packet memory */
	/**
	 * TX staging ring, multi-producer / single-consumer: the inbound role
	 * enqueues its built acks here; the outbound role drains it into the
	 * TX queues, so only one lcore ever calls rte_eth_tx_burst on a node.
	 * (Operations, such as handler puts, go to the engine's submit queue:
	 * eng_submit.)
	 */
	struct rte_ring *txr;
	struct ptl_nic *nic;        /**< lib/portals state of this NIC */
	struct spin_rt *rt;         /**< lib/spin runtime of this NIC */
	struct spinnic_engine *eng; /**< data path state (spinnic_engine_init) */
	char sock_path[PATH_MAX];   /**< control socket of this node */
	/**
	 * Attached clients by Portals pid (< SPINNIC_CLIENTS_MAX), for the
	 * outbound role's command-ring polling. The control thread stores an
	 * entry (release) once the client is attached and clears it before
	 * teardown, then waits with spinnic_quiesce() before it drops its
	 * reference: a role may use an entry it loaded (acquire) until the
	 * end of its round without taking a reference of its own.
	 */
	struct ptl_client *clients[SPINNIC_CLIENTS_MAX];

	struct spinnic_rx_stats rx;
	struct spinnic_tx_stats tx;
	struct spinnic_ctrl_stats ctrl;

	/* Real NICs (ports.c, flow.c), after the counters: appended. */
	uint16_t nb_rxq;            /**< RX queues the inbound role polls */
	uint16_t rxq_next;          /**< inbound role: next queue to poll */
	bool flow_isolated;         /**< rte_flow isolated mode is on */
	struct rte_flow *flow;      /**< spinnic's ingress rule, or NULL */

	/** Per-client counters by Portals pid (telemetry.c), appended. */
	struct spinnic_client_stats cl_stats[SPINNIC_CLIENTS_MAX];

	/** --wire-key: MAC contexts and counters (auth.h), else NULL;
	 *  appended */
	struct spinnic_auth *auth;

	/** Real ports: frames to the node's own nid (two clients of one
	 *  node, a triggered put to self). The wire would not bring them
	 *  back (a virtual port's TX queue to itself does): the outbound
	 *  role enqueues them here, the inbound role takes them with the
	 *  port's bursts (ports.c, tx.c, inbound.c). NULL on virtual
	 *  nodes; appended. */
	struct rte_ring *loop;
} __rte_cache_aligned;

/**
 * TX queue of @p node that reaches node id @p dst_nid.
 *
 * Real ports have one TX queue (the wire forwards). Virtual nodes form a
 * software switch: port i has one TX queue per virtual node, TX queue j
 * enqueues into node j's RX ring (j == i is loopback), so sending to a nid
 * is choosing the queue.
 *
 * @param node sending node
 * @param dst_nid destination node id
 * @return the queue id, or UINT16_MAX when @p dst_nid is not reachable
 *   (virtual mode, nid outside the virtual nodes): drop and count.
 */
static inline uint16_t
spinnic_node_txq(const struct spinnic_node *node, uint32_t dst_nid)
{
	uint32_t j;

	if (!node->is_virtual)
		return SPINNIC_TXQ;
	j = dst_nid - (node->nid - node->index);
	return j < node->nb_txq ? (uint16_t)j : UINT16_MAX;
}

/* ---------------------------------------------------------------------- */
/* Clients (ctrl.c)                                                        */
/* ---------------------------------------------------------------------- */

/** One attached client process (one control connection). */
struct spinnic_client {
	struct spinnic_node *node;
	struct ptl_client *pc;      /**< lib/portals client, after ATTACH */
	uint32_t pid;               /**< Portals pid granted at ATTACH */
	int32_t os_pid;             /**< SO_PEERCRED pid */
	uint32_t uid, gid;          /**< SO_PEERCRED */
	int sock;                   /**< control connection */
	int region_fd;              /**< memfd from ATTACH, -1 before */
	void *region;               /**< our mapping of the region */
	uint64_t region_size;
	uint64_t region_base_va;    /**< where the client mapped it */
	uint64_t msgs, bad_msgs;    /**< per-client control counters */
	bool attached;
	bool detaching;             /**< set when teardown started */
};

/* ---------------------------------------------------------------------- */
/* Lcores and roles                                                        */
/* ---------------------------------------------------------------------- */

/** One role instance an lcore polls. */
struct spinnic_task {
	enum spinnic_role role;
	struct spinnic_node *node;
	unsigned hpu;               /**< SPINNIC_ROLE_HPU: HPU id in the node */
	/** SPINNIC_ROLE_HPU: the node's inbound role runs on this lcore too,
	 *  so the messages this HPU finishes are completed (events, acks)
	 *  right after it, not a round later (spinnic_inbound_done). */
	bool drain;
};


/** Per-lcore state, written only by that lcore (except at setup). */
struct spinnic_lcore {
	unsigned nb_tasks;
	struct spinnic_task tasks[SPINNIC_TASKS_MAX];
	/** Completed rounds; bumped (release) after every round, so a change
	 *  proves the lcore holds nothing from before (spinnic_quiesce). */
	volatile uint64_t rounds __rte_cache_aligned;
	volatile bool running;      /**< inside its loop */
	uint64_t work;              /**< total work units returned */
	uint64_t idle_rounds;
	uint64_t sleeps;
} __rte_cache_aligned;

/** The process. */
struct spinnic {
	struct spinnic_cfg cfg;
	unsigned nb_nodes;
	struct spinnic_node *nodes[SPINNIC_NODES_MAX];
	/** Stop requested: SIGINT/SIGTERM, --duration, or a fatal error.
	 *  The control thread then detaches every client (the engines still
	 *  run) and sets lcores_stop. */
	volatile int stop;
	/** The role loops leave when set. */
	volatile int lcores_stop;
	/** eventfd the control thread waits on; written to wake it. */
	int wake_fd;
	struct spinnic_ctrl *ctrl;
	uint64_t start_tsc;
	struct spinnic_lcore lcores[RTE_MAX_LCORE];
	/** every node's handler families: the built-in table, then the
	 *  plugins' (spinnic_plugins_families()) */
	const struct spin_handler_family *const *families;
};

/* ---------------------------------------------------------------------- */
/* Data path (inbound.c, outbound.c, msgtab.c)                              */
/* ---------------------------------------------------------------------- */

/**
 * Host operations of the sPIN runtime (DMA into client memory, msg_done,
 * pkt_release, ...), implemented by the data path. main.c creates each
 * node->rt with them (spin_rt_create, conf from the options: --nic-mem,
 * --hpus, --payload, handler table sn->families) before
 * spinnic_engine_init(); the `host` argument is whatever the inbound
 * engine passes to spin_msg_start().
 */
struct spin_host_ops;
extern const struct spin_host_ops spinnic_engine_host_ops;

/**
 * ptl_aa_access_fn of the HPU tasks (host_ops.c): run an Active Access
 * record's access handler on the HPU of task @p arg (a struct
 * spinnic_task).
 */
int spinnic_aa_access(void *arg, struct ptl_client *c, uint32_t ctx,
		      uint64_t win_addr, uint64_t win_len,
		      const struct spinnic_aa_rec *rec, const void *data);

/** HER slots of each node's runtime (spin_rt_conf.max_hers); the mbuf
 *  pool is sized to hold this many packets in flight on HPUs. */
#define SPINNIC_MAX_HERS 8192u
/** Messages in flight per node runtime (spin_rt_conf.max_msgs). */
#define SPINNIC_MAX_MSGS 1024u

/**
 * Set up the data-path state of @p node (node->eng) after its port,
 * ptl_nic and spin_rt exist and before any lcore runs.
 * @return 0, or a negative errno (spinnic exits).
 */
int spinnic_engine_init(struct spinnic_node *node);

/**
 * Release node->eng at exit. Order in main.c: every lcore stopped and
 * every client detached (spinnic_engine_client_detach ran for each), then
 * spin_rt_destroy(node->rt) (node->rt is NULL now: every spin_msg and HER
 * is gone, pkt_release ran for each packet the runtime held, msg_done did
 * not run for messages still in flight), then this, then
 * ptl_nic_destroy(node->nic), then the ports and pools. Release what the
 * engine still holds (ptl matches, mbufs) without touching spin_msg
 * pointers.
 */
void spinnic_engine_fini(struct spinnic_node *node);

/**
 * Inbound role: RX burst, parse, message table, matching, HERs.
 * @return work done (packets handled); 0 lets the lcore back off.
 */
unsigned spinnic_inbound_poll(struct spinnic_node *node);

/**
 * Inbound role: complete the messages the node's HPUs finished (events,
 * Portals acks). Only on the lcore of the node's inbound role.
 * @return messages completed
 */
unsigned spinnic_inbound_done(struct spinnic_node *node);

/**
 * Outbound role: command rings and the submit queue -> packets, GET
 * replies, staged acks (node->txr) -> TX.
 * @return work done; 0 lets the lcore back off.
 */
unsigned spinnic_outbound_poll(struct spinnic_node *node);

/**
 * A client of @p node is going away. Called from the control thread (not
 * an lcore; it may wait) after lib/portals stopped matching for the client
 * and before its sPIN contexts are freed and its region unmapped. Returns
 * only when the engine no longer holds or will create state (in-flight
 * messages, held mbufs, pending HERs) that points at the client or its
 * region; dropped messages are counted in node->rx.detach_drops.
 */
void spinnic_engine_client_detach(struct spinnic_node *node,
				  const struct spinnic_client *cl);

/**
 * Whether the engine of @p node has nothing in flight: every sequenced
 * packet acknowledged, nothing parked, staged or held for TX. Read from
 * the control thread at stop (relaxed: a hint to wait for, not a lock).
 */
bool spinnic_engine_quiet(const struct spinnic_node *node);

/**
 * Print the engine's own counters of @p node (indented, one per line).
 */
void spinnic_engine_stats_print(const struct spinnic_node *node, FILE *f);

/* ---------------------------------------------------------------------- */
/* Skeleton                                                                */
/* ---------------------------------------------------------------------- */

/* options.c */
/**
 * Parse the options after the EAL's `--` into @p cfg.
 * @return 0; 1 when --help was printed; -EINVAL after printing one line
 *   naming the bad option (main exits 2).
 */
int spinnic_options_parse(struct spinnic_cfg *cfg, int argc, char **argv);
/**
 * Check the parsed options against this machine before the EAL starts:
 * every lcore of --lcore-roles is one the EAL will have (its -l, -c or
 * --lcores; spinnic's --lcores or 0 when it builds the EAL args; else
 * every CPU this process may run on), spinnic's --lcores names CPUs that
 * exist (as the EAL detects them), and the socket directory is a
 * directory or can be created (--socket: its directory exists). An EAL
 * lcore list this cannot read is left to the EAL and to the check after
 * it (lcore.c).
 * @param cfg parsed options
 * @param argc, argv the whole command line (EAL args before "--")
 * @return 0, or -EINVAL after printing one line (main exits 2)
 */
int spinnic_options_check(const struct spinnic_cfg *cfg, int argc,
			  char **argv);
void spinnic_options_usage(FILE *f, const char *prog);

/* plugins.c */
struct spinnic_plugins;
/**
 * Load the handler plugins of --handlers, before the EAL: each PATH a
 * plugin file or a folder whose *.so files load in name order. Every file
 * is checked (a regular file owned by root or spinnic's effective uid,
 * not writable by group or others, in a folder no one else may write
 * unless sticky), dlopen()ed (RTLD_NOW | RTLD_LOCAL) and its
 * SPIN_HANDLER_PLUGIN_SYMBOL checked: ABI version, 1 to
 * SPIN_HANDLER_PLUGIN_FAMILIES_MAX families, none NULL, each passing
 * spin_family_check() with a name no built-in or earlier family has.
 * @param cfg parsed options
 * @param plugins_p receives the plugins (NULL when there are none)
 * @return 0, or -EINVAL after printing one line naming the file and the
 *   reason (main exits 2); -ENOMEM.
 */
int spinnic_plugins_load(const struct spinnic_cfg *cfg,
			 struct spinnic_plugins **plugins_p);
/**
 * The NULL-terminated family table of every node: spin_handler_families,
 * then the families of each plugin in load order.
 * @param p plugins (NULL: the built-in table)
 */
const struct spin_handler_family *const *
spinnic_plugins_families(const struct spinnic_plugins *p);
/** Log one line per loaded plugin: its file and families. */
void spinnic_plugins_log(const struct spinnic_plugins *p);
/**
 * Close the plugins (dlclose) and free @p p (NULL: nothing). Only once
 * no runtime uses their families any more.
 */
void spinnic_plugins_unload(struct spinnic_plugins *p);
/**
 * Build the EAL argument vector: the user's EAL args, or safe defaults
 * for this machine when none were given.
 * @return argc of the EAL part of @p argv_p (NULL-terminated, malloc'd).
 */
int spinnic_eal_args(const struct spinnic_cfg *cfg, int argc, char **argv,
		     char ***argv_p);

/* ports.c */
/** Create the nodes: virtual ring ports or every probed ethdev. */
int spinnic_ports_init(struct spinnic *sn);
/** Stop and close ports, free pools and rings. */
void spinnic_ports_fini(struct spinnic *sn);

/* lcore.c */
/** Assign role tasks to lcores per cfg.lcore_roles. */
int spinnic_lcores_assign(struct spinnic *sn);
/** Launch the role loops on all lcores (main included; returns at stop). */
int spinnic_lcores_run(struct spinnic *sn);
/**
 * Wait until every running lcore completed a round started after this
 * call: afterwards no role holds a pointer it loaded before the call.
 * Control thread only.
 */
void spinnic_quiesce(struct spinnic *sn);

/* ctrl.c */
/** Open the node sockets; start the control thread. */
int spinnic_ctrl_start(struct spinnic *sn);
/** Join the control thread (it detaches every client and sets
 *  lcores_stop once sn->stop is seen) and free its state. */
void spinnic_ctrl_stop(struct spinnic *sn);
/** Print the control plane's process-wide counters. */
void spinnic_ctrl_stats_print(struct spinnic *sn, FILE *f);

/* stats.c */
/** Print every node's counters to @p f. */
void spinnic_stats_print(struct spinnic *sn, FILE *f);

/* main.c */
/** Ask the process to stop (async-signal-safe). */
void spinnic_stop(struct spinnic *sn);

/* ports.c: af_xdp ports */
/**
 * Detach every XDP program from the interfaces of --xdp-reset (all modes:
 * generic, driver, offload), before rte_eal_init(): recovery from a
 * program a killed spinnic left behind, which makes the af_xdp PMD's probe
 * fail. Prints one line per interface on stderr.
 * @return 0; -ENODEV for an unknown interface, or the negative errno of a
 *   detach that failed (a program is still attached).
 */
int spinnic_xdp_reset(const struct spinnic_cfg *cfg);

/* flow.c: rte_flow steering (mlx5 bifurcated mode) */
/**
 * Before rte_eth_dev_configure(): turn on flow isolated mode on the port
 * of @p node when --flow-isolate is given, or by default when its driver
 * is mlx5_pci (--no-flow-isolate turns it off). Sets node->flow_isolated.
 * @param driver the port's driver name (rte_eth_dev_info)
 * @return 0; the negative errno of rte_flow_isolate (one line logged: a
 *   port that refuses isolation is never run taking all traffic).
 */
int spinnic_flow_isolate(struct spinnic_node *node, const char *driver);
/**
 * After rte_eth_dev_start() of an isolated port: validate and create the
 * ingress rule ETH / IPV4 / UDP dst == node->udp_port -> QUEUE 0, or RSS
 * over node->nb_rxq queues (IPv4/UDP hash) when there are several.
 * No-op when the port is not isolated.
 * @return 0, or the negative errno of rte_flow_validate/create (logged
 *   with the PMD's rte_flow_error message).
 */
int spinnic_flow_start(struct spinnic_node *node);
/** Destroy the rule of spinnic_flow_start(), before the port stops. */
void spinnic_flow_stop(struct spinnic_node *node);

/* telemetry.c and client counters (stats.c) */
/**
 * Count traffic of the client at Portals pid @p pid of @p node (any
 * thread; relaxed atomic adds).
 * @param in    true: a message delivered into it; false: one it started
 * @param bytes bytes of that message (puts; 0 for a get it started)
 */
static inline void
spinnic_client_count(struct spinnic_node *node, uint32_t pid, bool in,
		     uint64_t bytes)
{
	struct spinnic_client_stats *cs;

	if (pid >= SPINNIC_CLIENTS_MAX)
		return;
	cs = &node->cl_stats[pid];
	__atomic_fetch_add(in ? &cs->msgs_in : &cs->ops_out, 1,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(in ? &cs->bytes_in : &cs->bytes_out, bytes,
			   __ATOMIC_RELAXED);
}

/**
 * Add a message's NIC time (ptl_match.nic_ns, 0: not timed) to the
 * client at Portals pid @p pid of @p node (the node's inbound role).
 */
static inline void
spinnic_client_nic_time(struct spinnic_node *node, uint32_t pid,
			uint32_t ns)
{
	struct spinnic_client_stats *cs;

	if (pid >= SPINNIC_CLIENTS_MAX || ns == 0)
		return;
	cs = &node->cl_stats[pid];
	__atomic_fetch_add(&cs->nic_timed, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cs->nic_ns_sum, ns, __ATOMIC_RELAXED);
	if (ns > __atomic_load_n(&cs->nic_ns_max, __ATOMIC_RELAXED))
		__atomic_store_n(&cs->nic_ns_max, ns, __ATOMIC_RELAXED);
}

/** Zero the counters of Portals pid @p pid (control thread, at attach). */
void spinnic_client_stats_reset(struct spinnic_node *node, uint32_t pid);

/**
 * Register the /spinnic/... telemetry commands (rte_telemetry, read with
 * dpdk-telemetry.py) and let them see @p sn; log the telemetry socket
 * path. Call after the nodes are set up. Commands stay registered (the
 * telemetry library cannot unregister them) but answer nothing after
 * spinnic_telemetry_fini().
 * @return 0, or a negative errno of rte_telemetry_register_cmd
 */
int spinnic_telemetry_init(struct spinnic *sn);
/** Stop answering: returns once no telemetry callback uses @p sn. Call
 *  before the nodes are torn down. */
void spinnic_telemetry_fini(struct spinnic *sn);
/**
 * After rte_eal_cleanup() of a --capture run with spinnic's own file
 * prefix: a multi-process EAL leaves its hugepage files (for secondaries)
 * and its runtime files behind; remove those of this prefix, so that the
 * hugepages return. @p runtime_dir "" does nothing.
 */
void spinnic_capture_cleanup(const char *runtime_dir);

#endif
