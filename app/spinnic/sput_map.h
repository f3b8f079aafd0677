/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file sput_map.h
 * The piece map of a streaming put (outbound_stream.c): which client
 * address holds each byte of the message, built piece by piece and read
 * back by any byte range (to build a packet, or to re-create it for a
 * retransmission). libc only; not installed.
 */
#ifndef SPINNIC_SPUT_MAP_H
#define SPINNIC_SPUT_MAP_H

#include <stdbool.h>
#include <stdint.h>

/** Message bytes [msg_off, msg_off + len) are at client address addr. */
struct sput_ext {
	uint64_t msg_off;
	uint64_t addr;
	uint64_t len;
};

/** Pieces of one message, in message order (contiguous, none empty). */
struct sput_map {
	uint64_t total;         /**< declared message length */
	uint64_t avail;         /**< bytes handed so far */
	uint32_t n, cap;
	struct sput_ext *ext;
};

/** Start an empty map of a @p total byte message. */
void sput_map_init(struct sput_map *map, uint64_t total);

/** Free a map's extents (the map is empty afterwards). */
void sput_map_fini(struct sput_map *map);

/**
 * Append the next piece: @p len bytes at client address @p addr (merged
 * with the previous extent when it ends where this one starts).
 * @param eom the piece claims to end the message
 * @return 0; -ERANGE (past the declared length, or @p eom and the pieces
 *   fall short of it; the map is unchanged); -EOVERFLOW (addr + len
 *   wraps); -ENOMEM
 */
int sput_map_add(struct sput_map *map, uint64_t addr, uint64_t len, bool eom);

/** One run of client memory: bytes [dst_off, dst_off + len) of the range
 *  asked for are at @p addr. Return non-zero to stop. */
typedef int (*sput_map_fn)(void *arg, uint64_t addr, uint64_t len,
			   uint64_t dst_off);

/**
 * Visit the client runs holding message bytes [off, off + len), in order.
 * @return 0; -ERANGE (past the bytes handed so far); or the callback's
 *   non-zero value
 */
int sput_map_walk(const struct sput_map *map, uint64_t off, uint64_t len,
		  sput_map_fn fn, void *arg);

#endif
