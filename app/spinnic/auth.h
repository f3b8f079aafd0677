/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated wire of a node (spinnic --wire-key; lib/portals wire.h,
 * doc/NOTES.md "Authenticated wire"). Two MAC contexts per node, one per
 * role that touches frames: the outbound role seals every frame just
 * before it enters a TX queue (eng_tx_push, the single TX point of a
 * node: the frame counter, hence the GCM IV, needs no atomics), the
 * inbound role checks every frame in spinnic_wire_parse_auth() before
 * anything else is believed.
 */
#ifndef SPINNIC_AUTH_H
#define SPINNIC_AUTH_H

#include <stdint.h>

#include <rte_common.h>

#include "spinnic.h"
#include "wire.h"

struct rte_mbuf;

/** Per node, NULL without --wire-key. */
struct spinnic_auth {
	/* outbound role */
	struct spinnic_wire_auth *tx;  /**< seals; holds the frame counter */
	uint64_t sealed;               /**< frames sealed */
	uint64_t seal_failed;          /**< frames dropped: could not seal */
	/* inbound role */
	struct spinnic_wire_auth *rx __rte_cache_aligned; /**< verifies */
} __rte_cache_aligned;

/**
 * Make the node's MAC contexts (after its engine).
 * @param node the node
 * @param key  the derived key (spinnic_wire_key_load)
 * @return 0, -ENOMEM, -EIO (libcrypto)
 */
int spinnic_auth_init(struct spinnic_node *node,
		      const uint8_t key[SPINNIC_WIRE_KEY_LEN]);

/** Free the node's MAC contexts (NULL auth is fine). */
void spinnic_auth_fini(struct spinnic_node *node);

/**
 * Seal a finished frame of the node (outbound role only): grow it by the
 * trailer and authenticate it (spinnic_wire_auth_seal).
 * @return 0; -EINVAL (counted in seal_failed, logged once) when the frame
 *   cannot be sealed: the caller frees it, a loss the transport repairs
 */
int spinnic_auth_seal(struct spinnic_node *node, struct rte_mbuf *m);

/** The inbound role's MAC context, or NULL (no key). */
static inline struct spinnic_wire_auth *
spinnic_auth_rx(const struct spinnic_node *node)
{
	return node->auth != NULL ? node->auth->rx : NULL;
}

#endif
