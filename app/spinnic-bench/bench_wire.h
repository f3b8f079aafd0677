/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic-bench's wire mode (DESIGN §10): the packets of a message cross a
 * real DPDK ethdev pair before the NIC sees them. Two ring-backed ports
 * (rte_eth_from_rings, the PMD spinnic --virtual uses) face each other: a
 * generator in this process builds spinnic frames (lib/portals wire.h:
 * Ethernet, IPv4, UDP, spinnic header, payload; untimed, before the clock)
 * and sends them with rte_eth_tx_burst on one port; the NIC's inbound loop
 * takes them with rte_eth_rx_burst on the other, validates every frame
 * with spinnic_wire_parse, starts the message at its header packet and
 * hands each payload, in place in its mbuf, to its own lib/spin runtime
 * (the mbuf is freed when the runtime releases it). Timed: the first
 * frame sent to the last byte placed (msg_done).
 *
 * What it adds over the preloaded mode: the ethdev TX/RX path, frame
 * parsing and validation, and the mbuf life cycle per packet. What it is
 * not: a physical link (no serialization at a line rate, no loss); the
 * generator shares the core with HPU 0.
 */
#ifndef SPINNIC_BENCH_WIRE_H
#define SPINNIC_BENCH_WIRE_H

#include <stdint.h>

#include <spin_rt.h>

struct bench_wire;

/**
 * A wire NIC (after bench_nic_eal_init()): a port pair, a pool, a runtime
 * with @p nhpu HPUs (threads for HPUs 1..nhpu-1), @p payload bytes per
 * packet.
 * @return the NIC, or NULL (logged) with errno set
 */
struct bench_wire *bench_wire_create(unsigned nhpu, uint32_t payload);
void bench_wire_destroy(struct bench_wire *w);

unsigned bench_wire_nhpu(const struct bench_wire *w);
uint32_t bench_wire_payload(const struct bench_wire *w);

/** Install / free an execution context (as bench_nic_ctx()). */
int bench_wire_ctx(struct bench_wire *w, const struct spin_ctx_conf *c,
		   uint32_t *ctx_p);
void bench_wire_ctx_free(struct bench_wire *w, uint32_t ctx);
/** A NIC memory blob of @p len bytes for the next context (freed with
 *  it). @return 0; -ENOSPC (too many, or NIC memory short); -errno */
int bench_wire_blob(struct bench_wire *w, const void *data, uint64_t len,
		    uint32_t *handle_p);
/** Free the blobs made for a context that was not installed. */
void bench_wire_blobs_free(struct bench_wire *w);

/**
 * One timed receive of the @p len bytes at @p msg through context @p ctx
 * into [win, win + win_len); frames are built before the clock starts.
 * @param r_p receives the runtime's result
 * @return seconds; < 0 on failure (logged): frames dropped by the parser,
 *   no message slot, packets refused, not done in time
 */
double bench_wire_run(struct bench_wire *w, uint32_t ctx, const void *msg,
		      uint64_t len, void *win, uint64_t win_len,
		      struct spin_msg_result *r_p);

/**
 * One timed contiguous receive (the host strategies' first half): the
 * same frames, each payload copied to @p dst at its offset by the inbound
 * loop. @return seconds; < 0 on failure (logged)
 */
double bench_wire_run_contig(struct bench_wire *w, const void *msg,
			     uint64_t len, void *dst);

#endif
