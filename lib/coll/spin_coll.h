/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_coll.h
 * Fully offloaded collectives (paper 002; doc/DESIGN.md §2, doc/NOTES.md
 * "lib/coll"): communication schedules (cDAGs of sends, receives, local
 * copies and local reductions) compiled to Portals counters and triggered
 * operations only, so that once started a schedule runs on the NIC with
 * no host involvement until it completes, and collectives built on them.
 *
 * Uses only the public client API (portals4.h, spin.h). A communicator
 * and its schedules are used by one thread at a time. Every function
 * returns 0 (or a non-negative id) on success, a negative errno on
 * failure; constructors write their object through the last argument.
 *
 * Model (paper 002 §II-A): a send (buf, len, dst, tag) matches the
 * receive (buf, len, src, tag) of its destination with the same source,
 * tag and length. Messages are pre-matched at compile time: the k-th send
 * from a to b with tag t (in creation order at a) matches the k-th
 * receive at b from a with tag t (in creation order at b). A receive may
 * name SPIN_SCHED_ANY_SOURCE or SPIN_SCHED_ANY_TAG: compile then resolves
 * it to one send (see "Wildcards" at spin_sched_compile()).
 * A dependency edge (u, v) means v does not start before u completed.
 * A send completes when its data was delivered (acknowledged), a receive
 * when its data is in the user buffer, a copy or reduction when its
 * result is in the destination.
 *
 * Lengths at most eager_max (default 4096, environment variable
 * SPINNIC_COLL_EAGER) go eagerly into a shadow buffer and are copied to
 * the user buffer by a triggered put to self; longer ones use the
 * pre-matched rendezvous (the receiver's ready-to-receive releases the
 * data).
 */
#ifndef SPIN_COLL_H
#define SPIN_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A communicator: the ranks of a logical NI's map, one portal index. */
typedef struct spin_coll_comm spin_coll_comm_t;
/** A communication schedule (cDAG) of one communicator. */
typedef struct spin_sched spin_sched_t;

/** Largest communicator (12 rank bits in the match bits). */
#define SPIN_COLL_RANKS_MAX 4096u
/** Largest user tag + 1 (24 tag bits). */
#define SPIN_COLL_TAG_MAX (1u << 24)
/** Default eager threshold in bytes (SPINNIC_COLL_EAGER overrides). */
#define SPIN_COLL_EAGER_DEFAULT 4096u
/**
 * spin_sched_recv() and spin_sched_recv_reduce() source: a send from any
 * rank (resolved at compile; see "Wildcards" at spin_sched_compile()).
 */
#define SPIN_SCHED_ANY_SOURCE 0xffffffffu
/**
 * spin_sched_recv() and spin_sched_recv_reduce() tag: a send with any
 * tag (resolved at compile; see "Wildcards" at spin_sched_compile()).
 */
#define SPIN_SCHED_ANY_TAG 0xffffffffu

/**
 * Create a communicator over the ranks of a logical NI. Collective: every
 * rank of the NI's map calls it with the same @p pt_index; it returns
 * once every rank's entries are posted (a host-driven barrier that
 * retries a put refused because a peer is not there yet, for up to 30 s).
 * @param ni a PTL_NI_MATCHING | PTL_NI_LOGICAL NI whose map is set
 *   (PtlSetMap); the caller's rank is its place in the map.
 * @param pt_index the portal index the communicator allocates (the same
 *   on every rank, free on this NI).
 * @param comm_p receives the communicator.
 * @return 0; -EINVAL (not a logical matching NI, no map, more than
 *   SPIN_COLL_RANKS_MAX ranks, @p comm_p NULL); -ENOMEM; -EBUSY (the
 *   portal index is taken); -ETIMEDOUT (a peer never answered); -EIO (a
 *   Portals call failed).
 */
int spin_coll_comm_create(ptl_handle_ni_t ni, ptl_pt_index_t pt_index,
			  spin_coll_comm_t **comm_p);

/**
 * Free a communicator (collective: a host barrier first, so no peer still
 * needs its entries). Its schedules must be freed before.
 * @param comm the communicator (NULL is ignored).
 * @return 0; -EBUSY (schedules left; nothing freed); -ETIMEDOUT (the
 *   barrier; freed anyway).
 */
int spin_coll_comm_free(spin_coll_comm_t *comm);

/** @return the caller's rank in @p comm. */
unsigned spin_coll_comm_rank(const spin_coll_comm_t *comm);
/** @return the number of ranks of @p comm. */
unsigned spin_coll_comm_size(const spin_coll_comm_t *comm);
/**
 * @return the eager threshold of @p comm (bytes; a message of at most this
 *   many bytes goes eagerly).
 */
size_t spin_coll_comm_eager_max(const spin_coll_comm_t *comm);

/**
 * Host-driven barrier over @p comm (dissemination; each put retried until
 * acknowledged). Used by compile and free; not offloaded (see
 * spin_coll_barrier() for the offloaded one).
 * @param comm the communicator.
 * @return 0; -ETIMEDOUT (30 s); -EIO.
 */
int spin_coll_comm_sync(spin_coll_comm_t *comm);

/**
 * Flags every later spin_sched_compile() of @p comm adds to its own (the
 * collectives' included), e.g. SPIN_SCHED_HOST to run them host-progressed.
 * @param flags 0, SPIN_SCHED_HOST, SPIN_SCHED_DYNAMIC (defined below) or
 *   both.
 * @return 0; -EINVAL (other flags).
 */
int spin_coll_comm_set_sched_flags(spin_coll_comm_t *comm, unsigned flags);

/* ---- schedules ---------------------------------------------------------- */

/**
 * Start an empty schedule.
 * @param comm its communicator.
 * @param s_p receives it.
 * @return 0; -EINVAL; -ENOMEM.
 */
int spin_sched_create(spin_coll_comm_t *comm, spin_sched_t **s_p);

/**
 * Add a send of @p len bytes at @p buf to rank @p dst with tag @p tag.
 * The buffer is read when the send starts (each instance).
 * @return the vertex id (>= 0); -EINVAL (bad rank or tag, NULL buffer
 *   with len > 0, schedule compiled); -ENOMEM; -E2BIG (2^24 - 1 vertices).
 */
int spin_sched_send(spin_sched_t *s, const void *buf, size_t len,
		    unsigned dst, uint32_t tag);

/**
 * Add a receive of exactly @p len bytes into @p buf from rank @p src with
 * tag @p tag.
 * @param src a rank, or SPIN_SCHED_ANY_SOURCE.
 * @param tag a tag, or SPIN_SCHED_ANY_TAG (wildcards: resolved at
 *   compile, see spin_sched_compile(); refused by SPIN_SCHED_DYNAMIC).
 * @return the vertex id; -EINVAL; -ENOMEM; -E2BIG.
 */
int spin_sched_recv(spin_sched_t *s, void *buf, size_t len, unsigned src,
		    uint32_t tag);

/**
 * Add a local copy of @p len bytes from @p src to @p dst (a triggered put
 * to self). The ranges must not overlap.
 * @return the vertex id; -EINVAL; -ENOMEM.
 */
int spin_sched_copy(spin_sched_t *s, void *dst, const void *src,
		    size_t len);

/**
 * Add a local reduction acc[i] = acc[i] op in[i] for @p count elements of
 * @p type (triggered atomics to self, in chunks of at most the NI's
 * max_atomic_size).
 * @param op a ptl_op_t of PtlAtomic() (PTL_MIN .. PTL_BXOR) valid for
 *   @p type.
 * @return the vertex id; -EINVAL (bad op or type, NULL buffers);
 *   -ENOMEM.
 */
int spin_sched_reduce(spin_sched_t *s, void *acc, const void *in,
		      size_t count, ptl_op_t op, ptl_datatype_t type);

/**
 * Add a send whose data is combined into the receiver's buffer
 * (acc[i] = acc[i] op in[i] there): triggered atomics, in chunks of
 * max_atomic_size, released by the receiver's ready-to-receive (the
 * pre-matched rendezvous, whatever the size). It matches the receiver's
 * spin_sched_recv_reduce() as a send matches a receive (same source, tag,
 * sequence and length; op and type should agree: the sender's apply).
 * @return the vertex id; -EINVAL (bad op, type, rank or tag); -ENOMEM.
 */
int spin_sched_send_reduce(spin_sched_t *s, const void *in, size_t count,
			   ptl_op_t op, ptl_datatype_t type, unsigned dst,
			   uint32_t tag);

/**
 * Add the receiving end of spin_sched_send_reduce(): @p acc takes the
 * sender's atomics once this vertex starts (its predecessors, e.g. the
 * copy that initialises @p acc, are done); it completes when all of
 * them were applied.
 * @param src a rank, or SPIN_SCHED_ANY_SOURCE.
 * @param tag a tag, or SPIN_SCHED_ANY_TAG (a wildcard matches only an
 *   accumulating send, as a plain receive only a plain one).
 * @return the vertex id; -EINVAL; -ENOMEM.
 */
int spin_sched_recv_reduce(spin_sched_t *s, void *acc, size_t count,
			   ptl_op_t op, ptl_datatype_t type, unsigned src,
			   uint32_t tag);

/**
 * Add the edge @p from -> @p to: @p to starts after @p from completed.
 * @return 0; -EINVAL (bad ids, a self edge, compiled); -ENOMEM.
 */
int spin_sched_dep(spin_sched_t *s, int from, int to);

/**
 * spin_sched_compile() flag: paper 002's rendezvous without pre-set
 * entries (Fig. 6): in the first instance every send and receive,
 * whatever its size, appends its entries when it starts
 * (PtlTriggeredMEAppend) and the two sides meet by RTS and RTR, so
 * compile posts nothing a peer could miss and ends without the host
 * barrier (it is local: ranks may start before their peers compiled).
 * Like any schedule it is re-armed: later instances are started with
 * spin_sched_start() again (one PtlCTInc), each message by an RTS and an
 * RTR on entries the first instance left (the receive's data entry) or
 * compile linked (the RTS and RTR catchers), with no new append; built
 * per call, as in the paper, it costs a compile per call instead.
 * Accumulating messages take the same protocol (their atomics land in
 * the kept data entry). At most 2048 messages of one (peer, tag)
 * (-E2BIG). With SPIN_SCHED_HOST the host issues the same
 * operations.
 */
#define SPIN_SCHED_DYNAMIC 1u

/**
 * spin_sched_compile() flag: the same schedule, progressed by the host
 * instead of the NIC (paper 002's cDAG over MPI; a baseline for
 * benchmarks): no triggered operation is posted; spin_sched_start()
 * issues what is ready, spin_sched_test() and spin_sched_wait() read the
 * counters and issue, as plain PtlPut(), PtlAtomic() and PtlMEAppend(),
 * what became due (the dependency increments are counted host-side).
 * Between those calls nothing progresses: a rank that computes without
 * calling the library delays its peers. Results are those of the
 * offloaded schedule.
 */
#define SPIN_SCHED_HOST 2u

/**
 * spin_sched_compile() flag: every send's data is staged: bound with
 * spin.h's SPIN_MD_STAGE, so spinnic copies it whole into NIC memory
 * before its first packet leaves (paper 003 Fig. 4, the BluesMPI
 * analog; a baseline for benchmarks). Control messages and local copies
 * are not staged. Combines with the other flags.
 */
#define SPIN_SCHED_STAGE 4u

/**
 * Compile a schedule (collective over its communicator: every rank
 * compiles its schedules in the same order). Allocates the counters,
 * descriptors, entries and shadow buffers, posts the triggered
 * operations and ends with a host barrier, after which every entry of
 * every rank is posted. The NIC objects (and a dynamic schedule's
 * reserved entries) are created in one control batch (spin.h
 * spin_batch_*: one round trip per 256 objects); with SPINNIC_COLL_BATCH=0
 * in the environment, one round trip each, for comparison. A schedule
 * with a cycle is refused.
 *
 * Wildcards (SPIN_SCHED_ANY_TAG, SPIN_SCHED_ANY_SOURCE; not with
 * SPIN_SCHED_DYNAMIC): a pre-matched compile (eager, rendezvous,
 * SPIN_SCHED_HOST) writes each rank's send table (per destination, in
 * creation order: tag, length, plain or accumulating) where one entry of
 * the communicator exposes it; a rank with wildcard receives reads
 * (PtlGet) the tables of the ranks they may match (every rank for
 * SPIN_SCHED_ANY_SOURCE) and resolves its receives from those ranks,
 * deterministically: first the
 * specific ones, in creation order, each taking the earliest unmatched
 * send of its source, tag, length and kind; then the wildcards, in
 * creation order, each taking the earliest remaining send of its length
 * and kind (and its tag or source where given), the lowest source rank
 * first. The result is fixed for every instance. As in paper 002's model
 * the user makes sure every matching the model allows (any send with no
 * path ordering it) is correct; this rule picks one of them. A receive
 * left with no send fails the compile on every rank (the closing barrier
 * carries the outcome); a send left with no receive fails at wait with
 * -EIO, as without wildcards. A pre-matched compile that fails on one
 * rank after its schedule tag was taken fails on all of them (-ECANCELED
 * on the others) instead of leaving them waiting in the barrier; one
 * refused before (-EINVAL, -ENOTSUP, -E2BIG) must be refused on every
 * rank alike, or the ranks' schedule tags diverge. Cost on schedules
 * without wildcards: writing the table in memory (the entry is appended
 * at the communicator's first compile and when the table grows).
 * @param s the schedule.
 * @param flags 0, SPIN_SCHED_DYNAMIC, SPIN_SCHED_HOST or both.
 * @return 0; -EINVAL (cycle, flags, already compiled); -ENOTSUP (a
 *   wildcard receive in a dynamic schedule); -ENOMSG (a receive of this
 *   rank matches no send: printed on stderr); -ECANCELED (another rank's
 *   compile failed); -EPROTO (a peer's send table is malformed); -ENOMEM;
 *   -ENOSPC (NIC objects or triggered operations exhausted, or the
 *   schedule tag 8192 compiles back still held); -E2BIG (over 4095
 *   messages of one (peer, tag), over 2048 with SPIN_SCHED_DYNAMIC);
 *   -ETIMEDOUT (a peer never came, 30 s); -EIO. A failed compile leaves
 *   a schedule that can only be freed.
 */
int spin_sched_compile(spin_sched_t *s, unsigned flags);

/**
 * Start the next instance of a compiled schedule. The previous instance
 * must have completed (spin_sched_wait(), or spin_sched_test() saying
 * done). One PtlCTInc(): the triggered operations were posted once, at
 * compile, persistent (spin_trig_set_period), and the NIC re-arms them
 * for every instance. With SPINNIC_COLL_REPOST=1 in the environment at
 * compile, start re-posts the instance's operations one-shot instead
 * (ring commands, no control round trip; unbatched,
 * SPINNIC_COLL_BATCH=0, a SPIN_SCHED_DYNAMIC schedule's first start
 * also reserves its triggered appends' entries, a round trip each), for
 * comparison.
 * @return 0; -EINVAL (not compiled); -EBUSY (an instance is running:
 *   this rank's previous one was not waited for);
 *   -ENOSPC (triggered operations exhausted); -EIO.
 */
int spin_sched_start(spin_sched_t *s);

/**
 * Whether the running instance completed (never blocks).
 * @param done_p receives true when it did (or none runs, or it never
 *   will: -EIO).
 * @return 0; -EIO (it completed and a counter of the schedule holds a
 *   failure, or a control message of the communicator (RTS, RTR, credit)
 *   was lost since it started: its peer's node gave up on it, so what
 *   waits behind it would never come; the instance is over); -EINVAL.
 */
int spin_sched_test(spin_sched_t *s, bool *done_p);

/**
 * Wait for the running instance to complete. A failure that keeps it
 * from completing ends the wait within 100 ms of being counted (a
 * message its peer's node gave up on: reliable delivery fails a peer
 * silent for 5 s).
 * @return 0; -EIO (a counter of the schedule holds a failure: a message
 *   was not delivered; or a control message of the communicator was lost
 *   since the instance started); -EINVAL.
 */
int spin_sched_wait(spin_sched_t *s);

/**
 * spin_sched_wait() with a limit.
 * @param timeout_ms milliseconds.
 * @return 0; -ETIMEDOUT (still running); -EIO; -EINVAL.
 */
int spin_sched_wait_timeout(spin_sched_t *s, unsigned timeout_ms);

/** Instances started so far. */
uint64_t spin_sched_instances(const spin_sched_t *s);

/**
 * Free a schedule and everything it holds on the NIC. A running instance
 * is cancelled first.
 * @param s the schedule (NULL is ignored).
 */
void spin_sched_free(spin_sched_t *s);

/* ---- collectives (each returns a compiled, reusable schedule) --------- */

/** Broadcast algorithms. */
enum spin_coll_bcast_algo {
	SPIN_COLL_BCAST_BINOMIAL = 0, /**< binomial tree */
	SPIN_COLL_BCAST_KNOMIAL = 1,  /**< k-nomial tree (k = radix) */
	SPIN_COLL_BCAST_RING = 2,     /**< ring (a chain from the root) */
};

/** Alltoall algorithms. */
enum spin_coll_alltoall_algo {
	SPIN_COLL_ALLTOALL_PAIRWISE = 0, /**< P-1 steps, one after the other */
	SPIN_COLL_ALLTOALL_SCATTER = 1,  /**< all sends and receives at once */
};

/**
 * Broadcast @p len bytes at @p buf from @p root.
 * @param algo an enum spin_coll_bcast_algo.
 * @param radix k of the k-nomial tree (>= 2; ignored otherwise).
 * @param s_p receives the compiled schedule.
 * @return as spin_sched_compile(); -EINVAL (bad root, algo, radix).
 */
int spin_coll_bcast(spin_coll_comm_t *comm, void *buf, size_t len,
		    unsigned root, unsigned algo, unsigned radix,
		    spin_sched_t **s_p);

/**
 * Barrier (dissemination: ceil(log2 P) rounds of 0-byte messages).
 * @return as spin_sched_compile().
 */
int spin_coll_barrier(spin_coll_comm_t *comm, spin_sched_t **s_p);

/**
 * Allreduce of @p count elements of @p type with @p op (recursive
 * doubling: non-powers of two fold the extra ranks in first and out
 * last; the local combine is a triggered self-atomic). @p sendbuf is
 * copied into @p recvbuf first unless they are equal (in place).
 * @return as spin_sched_compile(); -EINVAL (bad op or type).
 */
int spin_coll_allreduce(spin_coll_comm_t *comm, const void *sendbuf,
			void *recvbuf, size_t count, ptl_op_t op,
			ptl_datatype_t type, spin_sched_t **s_p);

/** Allreduce algorithms. */
enum spin_coll_allreduce_algo {
	SPIN_COLL_ALLREDUCE_RD = 0,          /**< recursive doubling */
	/** binomial reduce to rank 0 by triggered atomics into each
	 *  parent's buffer (the Portals specification's example), then a
	 *  binomial bcast */
	SPIN_COLL_ALLREDUCE_REDUCE_BCAST = 1,
};

/**
 * spin_coll_allreduce() with a choice of algorithm.
 * @param algo an enum spin_coll_allreduce_algo.
 * @return as spin_coll_allreduce(); -EINVAL (bad algo).
 */
int spin_coll_allreduce_algo(spin_coll_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, ptl_op_t op,
			     ptl_datatype_t type, unsigned algo,
			     spin_sched_t **s_p);

/**
 * spin_coll_bcast() in segments of @p segment bytes, each its own tree
 * (its own tag), so that a node forwards a segment while the next
 * arrives (pipelined; 0: one segment).
 * @return as spin_coll_bcast(); -EINVAL (over 65536 segments).
 */
int spin_coll_bcast_pipelined(spin_coll_comm_t *comm, void *buf, size_t len,
			      unsigned root, unsigned algo, unsigned radix,
			      size_t segment, spin_sched_t **s_p);

/**
 * Alltoall: block j of @p sendbuf (@p blk bytes) goes to rank j, which
 * puts it in block i (this rank) of its @p recvbuf.
 * @param algo an enum spin_coll_alltoall_algo.
 * @return as spin_sched_compile(); -EINVAL.
 */
int spin_coll_alltoall(spin_coll_comm_t *comm, const void *sendbuf,
		       void *recvbuf, size_t blk, unsigned algo,
		       spin_sched_t **s_p);

/**
 * Allgather (ring): @p sendbuf (@p blk bytes) of rank i ends in block i
 * of every rank's @p recvbuf.
 * @return as spin_sched_compile().
 */
int spin_coll_allgather(spin_coll_comm_t *comm, const void *sendbuf,
			void *recvbuf, size_t blk, spin_sched_t **s_p);

/** Allgather algorithms. */
enum spin_coll_allgather_algo {
	SPIN_COLL_ALLGATHER_RING = 0,  /**< ring: P - 1 steps of one block */
	/** dissemination (Bruck): ceil(log2 P) rounds, any P; in round k
	 *  each rank sends the min(2^k, P - 2^k) blocks it holds to rank
	 *  - 2^k (one or two messages: blocks stay in place, a run that
	 *  wraps past the last block is sent as two) */
	SPIN_COLL_ALLGATHER_BRUCK = 1,
};

/**
 * spin_coll_allgather() with a choice of algorithm.
 * @param algo an enum spin_coll_allgather_algo.
 * @return as spin_coll_allgather(); -EINVAL (bad algo).
 */
int spin_coll_allgather_algo(spin_coll_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t blk, unsigned algo,
			     spin_sched_t **s_p);
/* ---- group offload (paper 003; doc/NOTES.md "Group offload (issue #19)") */

/** A recorded communication pattern (P003's OffloadGroupRequest). */
typedef struct spin_group spin_group_t;

/**
 * spin_group_start_flags() flag: run the group's schedule host-progressed
 * (SPIN_SCHED_HOST; the benchmarks' baseline): nothing moves between
 * call and test/wait.
 */
#define SPIN_GROUP_HOST 1u
/**
 * spin_group_start_flags() flag: never cache: every call compiles a
 * fresh schedule (collective, with the host barrier) and frees it at the
 * next call or at free ("uncached group" of the benchmarks).
 */
#define SPIN_GROUP_NOCACHE 2u
/**
 * spin_group_start_flags() flag: the "simple" baseline (P003 Fig. 15):
 * no triggered operation and no cached metadata; every call builds the
 * pattern again as a host-progressed schedule with paper 002's
 * per-message rendezvous (SPIN_SCHED_DYNAMIC | SPIN_SCHED_HOST): per
 * transfer an RTS, an RTR and the data, each issued and its completion
 * seen by the host, only inside spin_group_test()/spin_group_wait().
 * The first call still checks the pairing (collective).
 */
#define SPIN_GROUP_SIMPLE 4u
/**
 * spin_group_start_flags() flag: the group's sends are staged through
 * NIC memory (SPIN_SCHED_STAGE; P003's BluesMPI baseline, Fig. 4 and
 * 13). Combines with SPIN_GROUP_HOST and SPIN_GROUP_NOCACHE, and with
 * SPIN_GROUP_SIMPLE.
 */
#define SPIN_GROUP_STAGED 8u

/**
 * Start recording a group on @p comm (Group_Offload_start). Recording is
 * local. Groups are collective objects: every rank of the communicator
 * starts, ends, first-calls and frees its groups in the same order (the
 * k-th group of every rank is one group; a rank with no part records an
 * empty one), and calls it as often as its peers do.
 * @param comm the communicator.
 * @param g_p receives the group.
 * @return 0; -EINVAL; -ENOMEM.
 */
int spin_group_start(spin_coll_comm_t *comm, spin_group_t **g_p);

/**
 * spin_group_start() with flags.
 * @param flags 0, or SPIN_GROUP_HOST, SPIN_GROUP_NOCACHE (or both), or
 *   SPIN_GROUP_SIMPLE alone; any of these with SPIN_GROUP_STAGED; every
 *   rank passes the same for the same
 *   group (checked at the first call).
 * @return 0; -EINVAL (other flags); -ENOMEM.
 */
int spin_group_start_flags(spin_coll_comm_t *comm, unsigned flags,
			   spin_group_t **g_p);

/**
 * Record a send of @p len bytes at @p buf to rank @p peer with tag @p tag
 * (Send_Goffload). The buffer is read at every call, when the send's
 * epoch starts. It matches the k-th receive of @p peer from this rank
 * with the same tag (k-th in record order on both sides) and must have
 * its length.
 * @return 0; -EINVAL (bad rank or tag, NULL buffer with len > 0, group
 *   ended); -ENOMEM.
 */
int spin_group_send(spin_group_t *g, const void *buf, size_t len,
		    unsigned peer, uint32_t tag);

/**
 * Record a receive of exactly @p len bytes into @p buf from rank @p peer
 * with tag @p tag (Recv_Goffload).
 * @return 0; -EINVAL; -ENOMEM.
 */
int spin_group_recv(spin_group_t *g, void *buf, size_t len, unsigned peer,
		    uint32_t tag);

/**
 * Record a local barrier (Local_barrier_Goffload): the operations
 * recorded after it (epoch k + 1) start once every operation recorded
 * before it since the previous barrier (epoch k) completed; local to the
 * rank, enforced by the NIC (counters), not the host.
 * @return 0; -EINVAL (group ended).
 */
int spin_group_local_barrier(spin_group_t *g);

/**
 * End the recording (Group_Offload_end). Local.
 * @return 0; -EINVAL (already ended).
 */
int spin_group_end(spin_group_t *g);

/**
 * Call the group (Group_Offload_call): start one run of the whole
 * pattern and return; the NIC moves everything, with no host step until
 * completion (except under SPIN_GROUP_HOST). The first call of a group
 * is collective: the ranks exchange, in one offloaded allgather, which
 * cached schedule each would reuse (by signature: operations, buffers,
 * sizes, peers, tags, epochs, flags) and a digest of each pair's
 * messages; all reuse it when all named the same one (a hit), all
 * compile a new one otherwise (a miss: batched upload and the host
 * barrier, the cold start), all fail when a send and a receive do not
 * pair up. Later calls of the same group are one PtlCTInc().
 * The previous run must have completed (spin_group_wait()).
 * @return 0; -EINVAL (not ended, NULL, the group failed before, or the
 *   ranks' flags differ); -ENOMSG (a send or receive of some rank has
 *   no partner with the same peer, tag and length: every rank returns
 *   it, the group can only be freed); -EBUSY (running, or a group with
 *   the same schedule is); -ENOSPC (the cache cannot make room on some
 *   rank: every rank returns it); as spin_sched_compile() and
 *   spin_sched_start().
 */
int spin_group_call(spin_group_t *g);

/**
 * Whether the group's run completed (never blocks).
 * @param done_p receives true when it did (or none runs).
 * @return 0; -EIO (a message was not delivered); -EINVAL.
 */
int spin_group_test(spin_group_t *g, bool *done_p);

/**
 * Wait for the group's run to complete (Group_Wait).
 * @return 0; -EIO; -EINVAL.
 */
int spin_group_wait(spin_group_t *g);

/**
 * Free a group. Its compiled schedule stays in the communicator's cache,
 * idle, for a later group of the same signature, until evicted (least
 * recently used first) or spin_group_cache_release(). A running run is
 * waited for (up to 10 s, then cancelled and the schedule freed).
 * @param g the group (NULL is ignored).
 */
void spin_group_free(spin_group_t *g);

/** Counters of a communicator's group cache (spin_group_cache_stats()). */
struct spin_group_stats {
	uint64_t calls;       /**< spin_group_call()s that started a run */
	uint64_t first_calls; /**< ... of them the first of a group */
	uint64_t hits;        /**< first calls that reused a cached schedule */
	uint64_t misses;      /**< first calls that compiled */
	uint64_t evictions;   /**< idle schedules freed to make room */
	uint64_t failed;      /**< first calls refused (-ENOMSG, -ENOSPC) */
	unsigned entries;     /**< schedules cached now (bound or idle) */
	unsigned idle;        /**< ... of them bound to no group */
	unsigned trig_ops;    /**< triggered operations they hold (bound) */
	unsigned capacity;    /**< entries at most (SPINNIC_GROUP_CACHE) */
	unsigned trig_budget; /**< triggered ops at most
				   (SPINNIC_GROUP_CACHE_TRIGS) */
};

/**
 * The group cache's counters on this rank.
 * @return 0; -EINVAL.
 */
int spin_group_cache_stats(spin_coll_comm_t *comm,
			   struct spin_group_stats *st_p);

/**
 * Free the communicator's group cache: every idle schedule and the
 * agreement allgather (local; needed before spin_coll_comm_free(),
 * which refuses a communicator with schedules).
 * @return 0; -EBUSY (groups of @p comm not freed; nothing freed).
 */
int spin_group_cache_release(spin_coll_comm_t *comm);

/**
 * Bytes of one element of a Portals datatype.
 * @return the size, 0 for an unknown type.
 */
size_t spin_coll_type_size(ptl_datatype_t type);

#ifdef __cplusplus
}
#endif

#endif
