/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access (paper 004; doc/NOTES.md "Active Access"): the pure parts,
 * libc only — a client's page table (sorted ranges of marked pages), the
 * rule that turns a page's bits into what an access does, and the writer
 * of an access log ring. aa_host.c applies them to client memory.
 */
#ifndef PTL_AA_H
#define PTL_AA_H

#include <stdbool.h>
#include <stdint.h>

#include "spinnic_abi.h"

/** Log of a range marked with logging bits and no log (the paper's
 *  E = 0): its records go to the client's fault log (never a handle:
 *  a log handle's low byte is below SPINNIC_AA_LOGS_MAX). */
#define PTL_AA_LOG_FAULT 0xfffffffeu

/** Bits of an unmarked page. */
#define PTL_AA_DEFAULT (SPINNIC_AA_W | SPINNIC_AA_R)

/** Consecutive pages [start, end) with the same bits and log. */
struct ptl_aa_range {
	uint64_t start, end;
	uint32_t bits;
	uint32_t log;   /* log index, or SPINNIC_HANDLE_NONE */
};

/** A client's page table: sorted, non-overlapping, never default. */
struct ptl_aa_table {
	struct ptl_aa_range *r;
	uint32_t n;
};

/** What one access does to one page piece. */
struct ptl_aa_verdict {
	bool mem;          /* memory is read or written */
	bool fail;         /* the access fails (PERM_VIOLATION) */
	bool redirected;   /* a write whose bytes go to the log instead */
	bool data;         /* the record carries the bytes */
	uint16_t kind;     /* enum spinnic_aa_kind, 0: no record */
};

/**
 * The rule matrix (doc/NOTES.md "Active Access", bit table).
 * @param bits  a page's SPINNIC_AA_* bits
 * @param write true for a put (or atomic), false for a get
 * @param v_p   filled
 */
void ptl_aa_rule(uint32_t bits, bool write, struct ptl_aa_verdict *v_p);

/**
 * Set the bits and log of every page of [addr, addr + len), replacing
 * what was there; default bits with no log remove the marks.
 * @return 0; -EINVAL bad range (unaligned, empty, wrapping, above
 *   2^56); -ENOSPC more than SPINNIC_AA_RANGES_MAX ranges (table
 *   unchanged); -ENOMEM
 */
int ptl_aa_table_set(struct ptl_aa_table *t, uint64_t addr, uint64_t len,
		     uint32_t bits, uint32_t log);

/**
 * The bits of the page holding addr.
 * @param end_p the end of the run of pages with these bits and log
 *   (UINT64_MAX past the last range)
 * @param log_p the run's log
 * @return its bits (PTL_AA_DEFAULT when unmarked)
 */
uint32_t ptl_aa_table_find(const struct ptl_aa_table *t, uint64_t addr,
			   uint64_t *end_p, uint32_t *log_p);

/** @return true when a range of the table names log */
bool ptl_aa_table_uses_log(const struct ptl_aa_table *t, uint32_t log);

/** Free the table's ranges (it is empty after). */
void ptl_aa_table_clear(struct ptl_aa_table *t);

/**
 * A record that a handler's DMA made while its back-pressuring log was
 * full, held on the NIC until the ring has room (doc/NOTES.md "Active
 * Access: records wait on the NIC"): the header as it will be appended,
 * then h.len bytes of data.
 */
struct ptl_aa_bl {
	struct ptl_aa_bl *next;
	struct spinnic_aa_rec h;
	uint8_t data[];
};

/** Most bytes of held records (struct ptl_aa_bl + data) per client. */
#define PTL_AA_BACKLOG_MAX (4u << 20)

/** The NIC's side of one access log; the ring is in the client region. */
struct ptl_aa_log {
	struct spinnic_aa_ring *ring;  /* header; records follow */
	uint64_t size;     /* ring bytes, power of two */
	uint64_t prod;     /* NIC-private: never read back from the ring */
	uint64_t lost;
	uint64_t records;
	uint32_t seq;      /* last seq written */
	uint32_t notify_every;
	uint32_t since;    /* records since the last wake */
	uint32_t flags;
	uint32_t gen;
	bool used;
	bool err;
	/* notification after T: ns after the first record not woken for */
	uint64_t notify_ns;
	uint64_t first_ns;
	/* consumed on the NIC by an access handler (ctx != NONE) */
	uint32_t ctx;
	uint32_t cseq;     /* last seq consumed */
	uint64_t ccons;    /* bytes consumed (NIC-private) */
	uint64_t win_addr, win_len;
	bool cbusy;        /* a poller is consuming it */
	/* records held on the NIC (handler DMAs into a full ring), FIFO:
	 * while there are any, they go to the ring before anything else */
	struct ptl_aa_bl *bl_head, *bl_tail;
	uint64_t bl_in, bl_out; /* records held so far, appended from it */
};

/**
 * Start a log over ring memory (header + size bytes): zeroes the header
 * and writes version and size; the ring bytes are not touched.
 * @return 0; -EINVAL size not a power of two in range
 */
int ptl_aa_log_init(struct ptl_aa_log *lg, void *mem, uint64_t size);

/**
 * Append one record: data (len bytes of h->len) first, then the header,
 * the seq word last with release order; a PAD record first when the
 * record would cross the ring's end. Single producer (caller's lock).
 * The client's cons is read once and checked: cons <= prod,
 * prod - cons <= size, 64-aligned, else the log stops (err).
 * @param h     the header; seq is set here
 * @param data  h->len bytes, or NULL for none (h->len 0)
 * @return 0; -ENOSPC log full (lost counted); -EPIPE log stopped (cons
 *   was invalid, lost counted); -EINVAL record larger than the ring
 */
int ptl_aa_log_append(struct ptl_aa_log *lg, struct spinnic_aa_rec *h,
		      const void *data);

/**
 * Would a record of len data bytes fit the ring now (no side effect)?
 * A record the append would refuse whatever the room (larger than half
 * the ring, a stopped log, a corrupt cons) says true: the append
 * decides and counts it.
 */
bool ptl_aa_log_fits(const struct ptl_aa_log *lg, uint32_t len);

/** Count one record lost to the log (lost, and the ring's lost word). */
void ptl_aa_log_lose(struct ptl_aa_log *lg);

/** IOTLB replacement policies (paper 004 Fig. 7c: lru, rnd). */
enum ptl_aa_iotlb_policy {
	PTL_AA_IOTLB_LRU = 0,
	PTL_AA_IOTLB_RND = 1,
};

/** Most IOTLB entries of the model. */
#define PTL_AA_IOTLB_MAX 65536u

/**
 * An IOTLB model (doc/NOTES.md "Active Access", IOTLB): @c sets sets of
 * @c ways entries, each caching one (domain, page) translation; a page
 * maps to set (page mod sets). A miss fills an empty way, else evicts the
 * least recently used (LRU) or a pseudo-random way (RND, xorshift64 from
 * a fixed seed: deterministic). It only counts: translations are not
 * taken from it.
 */
struct ptl_aa_iotlb {
	uint64_t *tag;     /* entries: 0 empty, else 1 + (dom << 44 | page) */
	uint64_t *stamp;   /* LRU: the clock at the last use */
	uint32_t entries, ways, sets;
	uint32_t policy;   /* enum ptl_aa_iotlb_policy */
	uint64_t clock;
	uint64_t rnd;
};

/**
 * Set up a model: entries 0 (off: lookups are not made) or a power of two
 * up to PTL_AA_IOTLB_MAX; ways a power of two dividing entries (entries:
 * fully associative; 0 means that too).
 * @return 0; -EINVAL; -ENOMEM
 */
int ptl_aa_iotlb_init(struct ptl_aa_iotlb *t, uint32_t entries,
		      uint32_t ways, uint32_t policy);

/** Free the model's arrays. */
void ptl_aa_iotlb_fini(struct ptl_aa_iotlb *t);

/**
 * Translate page @p page (address >> page shift, below 2^44) of domain
 * @p dom (below 2^20): a hit, or a miss that fills the entry.
 * @return true on a hit
 */
bool ptl_aa_iotlb_lookup(struct ptl_aa_iotlb *t, uint32_t dom,
			 uint64_t page);

/**
 * Drop every entry of domain @p dom (a domain-selective invalidation).
 * @return the entries dropped
 */
uint32_t ptl_aa_iotlb_inval(struct ptl_aa_iotlb *t, uint32_t dom);

#endif
