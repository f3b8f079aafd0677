/* SPDX-License-Identifier: BSD-3-Clause */
/* Authenticated wire of a node (auth.h). */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "auth.h"

_Static_assert(sizeof(((struct spinnic_cfg *)0)->wire_key) ==
	       SPINNIC_WIRE_KEY_LEN, "spinnic_cfg.wire_key holds a MAC key");

/* source nid in the spinnic header: 14 + 20 + 8 + 12 */
#define SRC_NID_OFF (SPINNIC_WIRE_ETH_LEN + SPINNIC_WIRE_IP_LEN + \
		     SPINNIC_WIRE_UDP_LEN + 12u)

int
spinnic_auth_init(struct spinnic_node *node,
		  const uint8_t key[SPINNIC_WIRE_KEY_LEN])
{
	struct spinnic_auth *au;

	au = rte_zmalloc_socket("spinnic_auth", sizeof(*au),
				RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	if (au == NULL)
		return -ENOMEM;
	au->tx = spinnic_wire_auth_create(key);
	au->rx = spinnic_wire_auth_create(key);
	if (au->tx == NULL || au->rx == NULL) {
		int rc = -errno;

		spinnic_wire_auth_free(au->tx);
		spinnic_wire_auth_free(au->rx);
		rte_free(au);
		return rc;
	}
	node->auth = au;
	return 0;
}

void
spinnic_auth_fini(struct spinnic_node *node)
{
	struct spinnic_auth *au = node->auth;

	if (au == NULL)
		return;
	node->auth = NULL;
	spinnic_wire_auth_free(au->tx);
	spinnic_wire_auth_free(au->rx);
	rte_free(au);
}

int
spinnic_auth_seal(struct spinnic_node *node, struct rte_mbuf *m)
{
	struct spinnic_auth *au = node->auth;
	uint16_t len = rte_pktmbuf_data_len(m);
	const char *why = "not a spinnic frame";
	uint8_t *f;
	uint32_t src;
	int rc;

	if (m->nb_segs != 1 || len < SPINNIC_WIRE_HDR_LEN)
		goto fail;
	f = rte_pktmbuf_mtod(m, uint8_t *);
	/* the IV's nid must be ours: one counter per source nid */
	src = (uint32_t)f[SRC_NID_OFF] << 24 | (uint32_t)f[SRC_NID_OFF + 1] << 16 |
		(uint32_t)f[SRC_NID_OFF + 2] << 8 | f[SRC_NID_OFF + 3];
	if (src != node->nid) {
		why = "source nid not this node's";
		goto fail;
	}
	if (rte_pktmbuf_append(m, SPINNIC_WIRE_AUTH_LEN) == NULL) {
		why = "no tailroom for the trailer";
		goto fail;
	}
	rc = spinnic_wire_auth_seal(au->tx, f, len,
				    (size_t)len + SPINNIC_WIRE_AUTH_LEN);
	if (rc < 0) {
		rte_pktmbuf_trim(m, SPINNIC_WIRE_AUTH_LEN);
		why = rc == -EIO ? "libcrypto failed" : "bad frame layout";
		goto fail;
	}
	au->sealed++;
	return 0;
fail:
	if (au->seal_failed++ == 0)
		SPINNIC_LOG(ERR, "node %u: cannot authenticate a frame (%s): dropped; further ones only counted (auth_seal_failed)",
			    node->index, why);
	return -EINVAL;
}
