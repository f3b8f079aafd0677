/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Active Access use cases of paper 004 §4 consumed on the NIC, one
 * plugin of three handler families (arguments in active_access.h):
 *  - "aa_count": access counting (§4.2): 1 added to the host counter of
 *    each record's page, writes and reads apart;
 *  - "aa_dirty": the incremental checkpoint's dirty set (§4.3): the byte
 *    of each page a remote write reached set in a host bitmap;
 *  - "aa_dht": the distributed hashtable insert (§4.1, Listing 3's
 *    local_insert) with 8-byte host atomics, per redirected put of a key
 *    to a table slot; its payload handler does the same insert for an
 *    active message (key as payload, slot as header data).
 *
 * Where each callback runs and what it touches:
 *  - init: spinnic's control thread, at spin_ctx_install(): checks the
 *    client's arguments (no state: everything lives in the host window).
 *  - access: an HPU, once per record of the Active Access log the context
 *    is bound to, one record at a time per log, in log order. Its window
 *    is the log owner's (given when the log was created); every host call
 *    (spin_host_fetch_add/cas/swap, spin_dma_to_host) is checked against
 *    it, so a hostile record or argument block reaches nothing outside.
 *  - payload (aa_dht only): an HPU, once per packet of a message to an ME
 *    carrying the context; inserts of several messages run at the same
 *    time, which the host atomics make safe (as Listing 3 on the CPU).
 *
 * Built against the handler SDK alone (spin_handler.h, pkg-config
 * spinnic-handler); loaded with spinnic --handlers libactive_access.so.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <spin_handler.h>

#include "active_access.h"

/* Record kinds (struct spin_access .kind) */
#define K_PUT_META 1u
#define K_PUT_DATA 2u
#define K_GET_META 3u
#define K_GET_DATA 4u
#define K_GET_BLOCKED 6u
#define K_ATOMIC 7u
/* Record flags: the put's data went to the log, not to memory */
#define F_REDIRECTED 0x1u

#define PAGE 4096u
#define MAX_PAGES (1ull << 40)

/* ---- "aa_count" --------------------------------------------------------- */

static int
count_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct aa_count_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != AA_COUNT_ARGS_VERSION || a->flags != 0 ||
	    a->npages == 0 || a->npages > MAX_PAGES ||
	    a->base % PAGE != 0 || a->counters_off % 8 != 0 ||
	    (a->processed_off != AA_NO_WORD && a->processed_off % 8 != 0))
		return -EINVAL;
	return 0;
}

static bool
kind_is_read(uint16_t kind)
{
	return kind == K_GET_META || kind == K_GET_DATA ||
	       kind == K_GET_BLOCKED;
}

static int
count_access(const struct spin_access *r, struct spin_hctx *h)
{
	const struct aa_count_args *a = spin_hctx_args(h);
	uint64_t page;

	/* the window and offsets are checked by every host call */
	if (r->addr >= a->base) {
		page = (r->addr - a->base) / PAGE;
		if (page < a->npages &&
		    spin_host_fetch_add(h, a->counters_off + 8 * page +
					(kind_is_read(r->kind) ?
					 8 * a->npages : 0), 1, NULL) != 0)
			return SPIN_ERROR;
	}
	if (a->processed_off != AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static const struct spin_handler_family aa_count = {
	.name = AA_COUNT_FAMILY,
	.init = count_init,
	.access = count_access,
};

/* ---- "aa_dirty" --------------------------------------------------------- */

static int
dirty_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct aa_dirty_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != AA_DIRTY_ARGS_VERSION || a->flags != 0 ||
	    a->npages == 0 || a->npages > MAX_PAGES ||
	    a->base % PAGE != 0 ||
	    (a->processed_off != AA_NO_WORD && a->processed_off % 8 != 0))
		return -EINVAL;
	return 0;
}

/* Did the record's write change memory? PUT_META, PUT_DATA unless
 * redirected, ATOMIC; never refused writes or reads. */
static bool
wrote_memory(const struct spin_access *r)
{
	return r->kind == K_PUT_META ||
	       (r->kind == K_PUT_DATA && !(r->flags & F_REDIRECTED)) ||
	       r->kind == K_ATOMIC;
}

static int
dirty_access(const struct spin_access *r, struct spin_hctx *h)
{
	const struct aa_dirty_args *a = spin_hctx_args(h);
	static const uint8_t one = 1;
	uint64_t page;

	/* the window and offsets are checked by every host call */
	if (wrote_memory(r) && r->addr >= a->base) {
		page = (r->addr - a->base) / PAGE;
		if (page < a->npages &&
		    spin_dma_to_host(h, a->bitmap_off + page, &one, 1, 0) != 0)
			return SPIN_ERROR;
	}
	if (a->processed_off != AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

static const struct spin_handler_family aa_dirty = {
	.name = AA_DIRTY_FAMILY,
	.init = dirty_init,
	.access = dirty_access,
};

/* ---- "aa_dht" ----------------------------------------------------------- */

static bool
off_ok(uint64_t off)
{
	return off % 8 == 0;
}

static int
dht_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct aa_dht_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != AA_DHT_ARGS_VERSION || a->flags != 0 ||
	    a->nslot == 0 || a->nslot > MAX_PAGES ||
	    a->nheap > MAX_PAGES || !off_ok(a->table_off) ||
	    !off_ok(a->head_off) || !off_ok(a->heap_off) ||
	    !off_ok(a->next_free_off) || !off_ok(a->overflow_off) ||
	    (a->processed_off != AA_NO_WORD && !off_ok(a->processed_off)))
		return -EINVAL;
	return 0;
}

/* Listing 3's local_insert with the host's atomics */
static int
dht_insert(const struct aa_dht_args *a, struct spin_hctx *h, uint64_t pos,
	   uint64_t key)
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
	const struct aa_dht_args *a = spin_hctx_args(h);
	uint64_t key, pos = 0;
	int rc = 0;

	if (r->kind != K_PUT_DATA || r->len != 8 ||
	    r->win_off == UINT64_MAX || r->win_off < a->table_off ||
	    (r->win_off - a->table_off) % 8 != 0 ||
	    (pos = (r->win_off - a->table_off) / 8) >= a->nslot)
		rc = -EINVAL;           /* not an insert: counted, skipped */
	if (rc == 0) {
		memcpy(&key, r->data, 8);
		rc = key != 0 ? dht_insert(a, h, pos, key) : -EINVAL;
	}
	if (a->processed_off != AA_NO_WORD &&
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
	const struct aa_dht_args *a = spin_hctx_args(h);
	uint64_t key, pos = pkt->info->hdr_data;
	int rc = -EINVAL;

	if (pkt->len == 8 && pkt->offset == 0 && pos < a->nslot) {
		memcpy(&key, pkt->payload, 8);
		rc = key != 0 ? dht_insert(a, h, pos, key) : -EINVAL;
	}
	if (a->processed_off != AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return rc == 0 ? SPIN_SUCCESS : SPIN_ERROR;
}

static const struct spin_handler_family aa_dht = {
	.name = AA_DHT_FAMILY,
	.payload = dht_payload,
	.init = dht_init,
	.access = dht_access,
};

SPIN_HANDLER_PLUGIN(&aa_count, &aa_dirty, &aa_dht);
