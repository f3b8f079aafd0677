/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "aa_dht": the paper's distributed hashtable insert (paper 004 §4.1,
 * Listing 3's local_insert) run on the NIC: the access handler of a log
 * bound to the context takes each redirected put of a key to a table
 * slot and inserts it with 8-byte host atomics (CAS, fetch-add, swap)
 * and DMAs; arguments and layout in spin_handler_args.h. The payload
 * handler does the same insert for an active message (key as payload,
 * slot as header data) on an ME carrying the context.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "handlers.h"
#include "spin_handler_args.h"

static bool
off_ok(uint64_t off)
{
	return off % 8 == 0;
}

static int
dht_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_aa_dht_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != SPIN_AA_DHT_ARGS_VERSION || a->flags != 0 ||
	    a->nslot == 0 || a->nslot > (1ull << 40) ||
	    a->nheap > (1ull << 40) || !off_ok(a->table_off) ||
	    !off_ok(a->head_off) || !off_ok(a->heap_off) ||
	    !off_ok(a->next_free_off) || !off_ok(a->overflow_off) ||
	    (a->processed_off != SPIN_AA_NO_WORD &&
	     !off_ok(a->processed_off)))
		return -EINVAL;
	return 0;
}

/* Listing 3's local_insert with the host's atomics */
static int
dht_insert(const struct spin_aa_dht_args *a, struct spin_hctx *h,
	   uint64_t pos, uint64_t key)
{
	uint64_t cell, old;
	int rc;

	rc = spin_host_cas(h, a->table_off + 8 * pos, 0, key, &old);
	if (rc == 0)
		return 0;               /* the slot was empty */
	if (rc != -EAGAIN)
		return rc;
	rc = spin_host_fetch_add(h, a->next_free_off, 1, &cell);
	if (rc != 0)
		return rc;
	if (cell >= a->nheap)           /* the paper's overflow check */
		return spin_host_fetch_add(h, a->overflow_off, 1, NULL);
	rc = spin_dma_to_host(h, a->heap_off + 16 * cell, &key, 8,
			      SPIN_DMA_NO_EVENT);
	if (rc == 0)
		rc = spin_host_swap(h, a->head_off + 8 * pos, cell + 1, &old);
	if (rc == 0)
		rc = spin_dma_to_host(h, a->heap_off + 16 * cell + 8, &old, 8,
				      SPIN_DMA_NO_EVENT);
	return rc;
}

static int
dht_access(const struct spin_access *r, struct spin_hctx *h)
{
	const struct spin_aa_dht_args *a = spin_hctx_args(h);
	uint64_t key, pos;
	int rc = 0;

	if (r->kind != 2 /* PUT_DATA */ || r->len != 8 ||
	    r->win_off == UINT64_MAX || r->win_off < a->table_off ||
	    (r->win_off - a->table_off) % 8 != 0 ||
	    (pos = (r->win_off - a->table_off) / 8) >= a->nslot)
		rc = -EINVAL;           /* not an insert: counted, skipped */
	if (rc == 0) {
		memcpy(&key, r->data, 8);
		rc = key != 0 ? dht_insert(a, h, pos, key) : -EINVAL;
	}
	if (a->processed_off != SPIN_AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return rc == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

/*
 * The same insert as an active message (the paper's other baseline): a
 * put of the 8-byte key to an ME with an aa_dht context, the slot in its
 * header data; the payload handler inserts, nothing reaches the window
 * by the non-processing path.
 */
static int
dht_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
	const struct spin_aa_dht_args *a = spin_hctx_args(h);
	uint64_t key, pos = pkt->info->hdr_data;
	int rc = -EINVAL;

	if (pkt->len == 8 && pkt->offset == 0 && pos < a->nslot) {
		memcpy(&key, pkt->payload, 8);
		rc = key != 0 ? dht_insert(a, h, pos, key) : -EINVAL;
	}
	if (a->processed_off != SPIN_AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return rc == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

const struct spin_handler_family spin_handlers_aa_dht = {
	.name = "aa_dht",
	.payload = dht_payload,
	.init = dht_init,
	.access = dht_access,
};
