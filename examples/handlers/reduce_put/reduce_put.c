/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "reduce_put": sums the int32s of a message on the NIC and, once the
 * whole message arrived, puts the 8-byte total to a peer. No byte of the
 * message reaches the host buffer of the ME it matched.
 *
 * Where each callback runs and what it touches:
 *  - init: spinnic's control thread, at spin_ctx_install(): checks the
 *    client's arguments and asks for 8 bytes of state (the running total).
 *  - header: an HPU, once per message, before any payload handler of it:
 *    zeroes the total.
 *  - payload: an HPU, once per packet; packets run at the same time on
 *    several HPUs and in any order, so each one adds its partial sum with
 *    one NIC-memory atomic (spin_nic_fetch_add), never a plain store.
 *  - completion: an HPU, once, after every payload handler returned:
 *    puts the total, straight from NIC memory, to the peer.
 * The state belongs to the context, not to a message: send one message at
 * a time to an ME carrying it (or install one context per ME).
 *
 * Build: cc -shared -fPIC $(pkg-config --cflags spinnic-handler) ...
 */
#include <errno.h>
#include <string.h>

#include <spin_handler.h>

#include "reduce_put.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "byte_part() assumes little-endian int32s"
#endif

static int
reduce_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct reduce_put_args *a = args;

	if (args_len != sizeof(*a) || a->version != REDUCE_PUT_ARGS_VERSION)
		return -EINVAL; /* spin_ctx_install() fails: PTL_ARG_INVALID */
	*state_len_p = sizeof(int64_t);
	return 0;
}

static int
reduce_header(const struct spin_hdr *hdr, struct spin_hctx *h)
{
	/* not an int32 array: drop it (no payload or completion handler) */
	if (hdr->info->length % 4 != 0)
		return SPIN_DROP;
	__atomic_store_n((uint64_t *)spin_hctx_state(h), 0, __ATOMIC_RELAXED);
	return SPIN_SUCCESS;
}

/* What byte k (0..3) of a little-endian int32 adds to its value. */
static inline int64_t
byte_part(uint8_t b, unsigned k)
{
	return k == 3 ? (int64_t)(int8_t)b * (1 << 24) : (int64_t)b << (8 * k);
}

static int
reduce_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const uint8_t *p = pkt->payload;
	uint32_t j = 0;
	int64_t sum = 0;
	int32_t v;

	/*
	 * Packets hold whole int32s when the NIC's payload size is a multiple
	 * of 4 (the default, 2048). With another size (spinnic --payload) an
	 * int32 straddles two packets: each of its bytes then adds its own
	 * part of the value, the top byte sign-extended, and the parts add up
	 * to the int32 whichever packet runs first.
	 */
	for (; j < pkt->len && (pkt->offset + j) % 4 != 0; j++)
		sum += byte_part(p[j], (pkt->offset + j) % 4);
	for (; j + 4 <= pkt->len; j += 4) {
		memcpy(&v, p + j, 4); /* the payload need not be 4-aligned */
		sum += v;
	}
	for (; j < pkt->len; j++)
		sum += byte_part(p[j], (pkt->offset + j) % 4);

	/* one atomic per packet; two's complement: adding mod 2^64 is the
	 * signed sum */
	if (spin_nic_fetch_add(h, 0, (uint64_t)sum, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static int
reduce_completion(const struct spin_done *done, struct spin_hctx *h)
{
	const struct reduce_put_args *a = spin_hctx_args(h);
	struct spin_put_req req = {
		.nid = a->peer_nid,
		.pid = a->peer_pid,
		.pt_index = a->peer_pt,
		.match_bits = a->match_bits,
	};

	/* a packet failed: the total is wrong, send nothing (the message
	 * completes with an error at the ME's owner) */
	if (done->errors != 0)
		return SPIN_ERROR;
	/* the put copies the 8 bytes into its packet before it returns. A
	 * handler never waits: without packet memory now (-ENOBUFS) the
	 * total is not sent and the message completes with an error */
	if (spin_put_from_nic(h, &req, spin_hctx_state(h),
			      sizeof(int64_t)) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static const struct spin_handler_family reduce_put_family = {
	.name = REDUCE_PUT_FAMILY,
	.init = reduce_init,
	.header = reduce_header,
	.payload = reduce_payload,
	.completion = reduce_completion,
};

/* what spinnic --handlers looks up in this shared object */
SPIN_HANDLER_PLUGIN(&reduce_put_family);
