/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file spin_aa.h
 * Active Access (paper 004; doc/NOTES.md "Active Access"): a client marks
 * pages of its own memory so that remote puts, gets and atomics to them
 * are refused, redirected into an access log, or logged, and consumes the
 * log by polling. Part of libspinnic; every function returns a PTL_* code
 * of portals4.h.
 */
#ifndef SPIN_AA_H
#define SPIN_AA_H

#include <stddef.h>
#include <stdint.h>

#include <portals4.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Handle of an access log (a ptl_handle_any_t). */
typedef ptl_handle_any_t spin_handle_aalog_t;
/** "No log": spin_aa_assoc() with bits that log nothing. */
#define SPIN_AA_LOG_NONE ((spin_handle_aalog_t)0x7fffffff)

/** Marks cover whole pages of at least this many bytes (the NIC's page,
 *  spinnic --aa-page-size, may be larger: spin_aa_page_size()); a record
 *  covers at most this many. */
#define SPIN_AA_PAGE 4096u

/** Page bits (the paper's IOMMU PTE bits); an unmarked page is W|R. */
#define SPIN_AA_W   0x01u /**< remote writes reach memory */
#define SPIN_AA_R   0x02u /**< remote reads return memory */
#define SPIN_AA_WL  0x04u /**< log metadata of writes */
#define SPIN_AA_WLD 0x08u /**< log metadata and data of writes (with W=0:
			       redirected, memory untouched) */
#define SPIN_AA_RL  0x10u /**< log metadata of reads */
#define SPIN_AA_RLD 0x20u /**< log metadata and the data returned */
#define SPIN_AA_FLUSH 0x80u /**< flushing page of its log (needs R): a get
				 of it is answered once the log was consumed
				 past the get's arrival (spin_aa_flush) */

/** Fault records (E = 0 pages) the NIC holds per process; past it the
 *  new ones are lost and counted (spin_aa_fault_read). */
#define SPIN_AA_FAULTS_MAX 256u

/** Log flag: a full log loses records and counts them. Default (0):
 *  back-pressure — a put packet whose records do not fit is not
 *  acknowledged and comes again (reliable delivery), nothing lost; get
 *  replies, atomics and handler DMAs still lose and count. */
#define SPIN_AA_LOG_DROP 0x1u
/** Log flag: the log is consumed on the NIC, record by record, by the
 *  `access` handler of the execution context desc.ctx (the paper's
 *  dedicated hardware thread; spin_handler.h spin_access_fn) over the
 *  window [desc.win_addr, + desc.win_len) of the caller's memory; the
 *  client does not poll it (spin_aa_log_poll and spin_aa_log_wait refuse
 *  it) and an active flush answers once the handler returned for every
 *  record before it. */
#define SPIN_AA_LOG_HANDLER 0x2u

/** Record kinds (struct spin_aa_rec.kind). */
enum spin_aa_kind {
	SPIN_AA_PUT_META = 1,
	SPIN_AA_PUT_DATA = 2,
	SPIN_AA_GET_META = 3,
	SPIN_AA_GET_DATA = 4,
	SPIN_AA_PUT_BLOCKED = 5,
	SPIN_AA_GET_BLOCKED = 6,
	SPIN_AA_ATOMIC = 7,
};
/** Record flags. */
#define SPIN_AA_F_REDIRECTED 0x1u /**< memory untouched: data only here */
#define SPIN_AA_F_HANDLER    0x2u /**< an sPIN handler's DMA (msg_off:
				       the offset in the ME window) */

/** One access of one page piece, as spin_aa_log_poll() delivers it. */
struct spin_aa_rec {
	unsigned kind;        /**< enum spin_aa_kind */
	unsigned flags;       /**< SPIN_AA_F_* */
	uint32_t len;         /**< bytes at data (0 for metadata records) */
	uint32_t mode;        /**< the page's bits at the access */
	void *addr;           /**< address of the piece's first byte */
	ptl_process_t initiator; /**< physical nid/pid */
	uint64_t msg_id;      /**< initiator's message id */
	uint64_t msg_off;     /**< offset of the piece in its message */
	uint64_t hdr_data;    /**< the put's header data */
	uint64_t ts_ns;       /**< CLOCK_MONOTONIC when logged */
	const void *data;     /**< len bytes, valid during the callback */
};

/**
 * Record callback. @return 0 to consume the record and go on; anything
 * else stops polling with the record not consumed.
 */
typedef int (*spin_aa_fn)(void *arg, const struct spin_aa_rec *r);

/** What spin_aa_log_status() reports. */
struct spin_aa_log_status {
	uint64_t prod;    /**< bytes the NIC has written */
	uint64_t cons;    /**< bytes consumed */
	uint64_t lost;    /**< records the NIC could not log */
	uint32_t err;     /**< 1: the NIC stopped the log (invalid cons) */
	uint32_t pad;
};

/** What spin_aa_log_create() makes. */
struct spin_aa_log_desc {
	size_t size;            /**< ring bytes, a power of two from 16 KiB
				     to 64 MiB */
	unsigned flags;         /**< 0 (back-pressure) or SPIN_AA_LOG_DROP,
				     and SPIN_AA_LOG_HANDLER */
	unsigned notify_every;  /**< spin_aa_log_wait() sleepers are woken
				     once this many records accumulated
				     (0: 1) */
	unsigned notify_us;     /**< ... or once this many µs passed since
				     the first record they were not woken
				     for (0: never; at most 1000000) */
	ptl_handle_any_t ctx;   /**< SPIN_AA_LOG_HANDLER: the context (a
				     spin_handle_ctx_t of spin.h) */
	void *win_addr;         /**< SPIN_AA_LOG_HANDLER: the handler's
				     window (any memory of the caller) */
	size_t win_len;         /**< ... and its length (> 0) */
};

/**
 * Create an access log: a ring in the client's region that the NIC
 * writes records into.
 * @param ni_handle an initialized NI
 * @param d     size, flags, notification
 * @param log_p receives the handle
 * @return PTL_OK; PTL_ARG_INVALID (NI, d, size, flags, log_p,
 *   notify_us; SPIN_AA_LOG_HANDLER: not a context of this NI, its family
 *   has no access handler, an empty or wrapping window);
 *   PTL_NO_SPACE (region heap, or 16 logs per client, or 64 clients of
 *   the NIC with logs it serves: access handlers, notify_us); PTL_NO_INIT
 */
int spin_aa_log_create(ptl_handle_ni_t ni_handle,
		       const struct spin_aa_log_desc *d,
		       spin_handle_aalog_t *log_p);

/**
 * Sleep until the log has a record to poll (the paper's interrupt
 * scheme): the NIC wakes sleepers (futex on the ring header) once
 * notify_every records accumulated since its last wake, or notify_us
 * after the first of them (checked by the NIC's HPU threads each round);
 * returns at once when a record is there already.
 * @param timeout_ms at most this long (< 0: no limit)
 * @return PTL_OK (a record is there); PTL_EQ_EMPTY (timed out, or woken
 *   with fewer than notify_every records and none to poll);
 *   PTL_ARG_INVALID (also a log consumed on the NIC,
 *   SPIN_AA_LOG_HANDLER); PTL_FAIL the log was stopped; PTL_NO_INIT
 */
int spin_aa_log_wait(spin_handle_aalog_t log, int timeout_ms);

/**
 * Free a log no page names any more.
 * @return PTL_OK; PTL_ARG_INVALID (not a log); PTL_IN_USE (pages still
 *   name it: re-mark them first); PTL_NO_INIT
 */
int spin_aa_log_free(spin_handle_aalog_t log);

/**
 * The NIC's marking page: spin_aa_assoc() ranges are aligned to it
 * (spinnic --aa-page-size: a power of two, 4 KiB .. 1 GiB).
 * @param ni_handle an initialized NI
 * @param size_p receives the page size in bytes
 * @return PTL_OK; PTL_ARG_INVALID (NI, size_p); PTL_NO_INIT
 */
int spin_aa_page_size(ptl_handle_ni_t ni_handle, uint64_t *size_p);

/**
 * Mark every page of [addr, addr + len) of this process's memory (region
 * or not) with bits, bound to log; replaces earlier marks of those pages,
 * SPIN_AA_W | SPIN_AA_R with SPIN_AA_LOG_NONE unmarks. Effective for
 * every remote access that starts after the call returns.
 * @param ni_handle an initialized NI (marks are per process, all NIs)
 * @param addr  aligned to the NIC's page (spin_aa_page_size(), at least
 *   SPIN_AA_PAGE)
 * @param len   a multiple of that page, > 0
 * @param bits  SPIN_AA_* page bits
 * @param log   a log of this process, required when bits hold WLD, RLD
 *   or SPIN_AA_FLUSH; SPIN_AA_LOG_NONE with WL and/or RL (the paper's
 *   E = 0) sends the pages' records (metadata only) to this process's
 *   fault log on the NIC instead: spin_aa_fault_read()
 * @return PTL_OK; PTL_ARG_INVALID (alignment, range, bits, log);
 *   PTL_NO_SPACE (more than 1024 marked ranges); PTL_NO_INIT
 */
int spin_aa_assoc(ptl_handle_ni_t ni_handle, void *addr, size_t len,
		  unsigned bits, spin_handle_aalog_t log);

/** What spin_aa_fault_read() reports beside the records. */
struct spin_aa_fault_status {
	uint64_t logged;  /**< fault records logged for this process so far */
	uint64_t lost;    /**< ... lost so far: its fault log was full */
};

/**
 * Take this process's oldest fault records: the records of pages marked
 * with WL or RL and no log (E = 0), kept by the NIC for this process
 * only (no process sees another's), oldest first, at most
 * SPIN_AA_FAULTS_MAX held; records past that are lost and counted.
 * Records carry no data (len 0, data NULL); seq order is log order.
 * @param ni_handle an initialized NI
 * @param recs  receives up to max records (their data pointers NULL)
 * @param max   > 0 (more than SPIN_AA_FAULTS_MAX reads that many)
 * @param n_p   receives the records taken (may be NULL)
 * @param st_p  receives the counters (may be NULL)
 * @return PTL_OK (at least one record); PTL_EQ_EMPTY (none);
 *   PTL_ARG_INVALID (NI, recs, max); PTL_NO_SPACE (region heap);
 *   PTL_FAIL (the NIC's answer did not parse); PTL_NO_INIT
 */
int spin_aa_fault_read(ptl_handle_ni_t ni_handle, struct spin_aa_rec *recs,
		       unsigned max, unsigned *n_p,
		       struct spin_aa_fault_status *st_p);

/**
 * Consume up to max committed records, in log order, calling fn on each.
 * Never blocks. Any thread; calls on one log are serialized.
 * @param n_p receives the records consumed (may be NULL)
 * @return PTL_OK (also when none); PTL_EQ_EMPTY when no record was
 *   ready; PTL_ARG_INVALID (log, fn; a log consumed on the NIC,
 *   SPIN_AA_LOG_HANDLER); PTL_FAIL the ring is corrupt or the
 *   NIC stopped the log (spin_aa_log_status); PTL_NO_INIT
 */
int spin_aa_log_poll(spin_handle_aalog_t log, spin_aa_fn fn, void *arg,
		     unsigned max, unsigned *n_p);

/**
 * Read a log's counters.
 * @return PTL_OK; PTL_ARG_INVALID; PTL_NO_INIT
 */
int spin_aa_log_status(spin_handle_aalog_t log,
		       struct spin_aa_log_status *st_p);

/**
 * Copy the raw ring (128-byte header, then the ring bytes) for tools
 * that parse it from doc/NOTES.md's layout.
 * @param buf   receives min(len, header + ring) bytes
 * @param len_p receives header + ring bytes (may be NULL)
 * @return PTL_OK; PTL_ARG_INVALID; PTL_NO_INIT
 */
int spin_aa_log_dump(spin_handle_aalog_t log, void *buf, size_t len,
		     size_t *len_p);

/**
 * Active flush (paper 004 §3.6): returns once the target has consumed
 * its log past every access this process sent it before the call —
 * an 8-byte get of the target's flushing page (an ME over a page marked
 * SPIN_AA_R | SPIN_AA_FLUSH, bound to the log), through a private MD and
 * EQ, waited for. The target NIC answers it when the log's consumer
 * index reached the log's write position at the get's arrival; earlier
 * packets of this process have all arrived by then (in-order matching).
 * Accesses still in sPIN handlers at the target are not waited for.
 * @param ni_handle the NI to send on
 * @param target, pt_index, match_bits, remote_offset the flushing page's ME
 * @param val_p receives the page's first 8 bytes as read after the
 *   consumer got there (e.g. a processed count it keeps there); may be NULL
 * @param timeout_ms give up after this long (< 0: wait forever)
 * @return PTL_OK; PTL_EQ_EMPTY timed out (the get stays in flight until
 *   answered; its EQ and MD are then leaked); PTL_FAIL the get failed
 *   (no match, refused); PTL_ARG_INVALID; PTL_NO_SPACE; PTL_NO_INIT
 */
int spin_aa_flush(ptl_handle_ni_t ni_handle, ptl_process_t target,
		  ptl_pt_index_t pt_index, ptl_match_bits_t match_bits,
		  ptl_size_t remote_offset, uint64_t *val_p, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
