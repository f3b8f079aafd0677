/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "aa_dirty": Active Access dirty-page tracking (paper 004 §4.3, the
 * incremental checkpoint's dirty set) on the NIC. The access handler runs
 * once per record of a log bound to the context and sets the byte of the
 * record's page in a host bitmap when the write reached memory; arguments
 * in spin_handler_args.h.
 */
#include <errno.h>
#include <stdbool.h>

#include "handlers.h"
#include "spin_handler_args.h"

static int
dirty_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_aa_dirty_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != SPIN_AA_DIRTY_ARGS_VERSION || a->flags != 0 ||
	    a->npages == 0 || a->npages > (1ull << 40) ||
	    a->base % 4096 != 0 ||
	    (a->processed_off != SPIN_AA_NO_WORD && a->processed_off % 8 != 0))
		return -EINVAL;
	return 0;
}

/* Did the record's write change memory? PUT_META, PUT_DATA unless
 * redirected (flags bit 0), ATOMIC; never refused writes or reads. */
static bool
wrote_memory(const struct spin_access *r)
{
	return r->kind == 1 || (r->kind == 2 && !(r->flags & 0x1)) ||
	       r->kind == 7;
}

static int
dirty_access(const struct spin_access *r, struct spin_hctx *h)
{
	const struct spin_aa_dirty_args *a = spin_hctx_args(h);
	static const uint8_t one = 1;
	uint64_t page;

	/* the window and offsets are checked by every host call */
	if (wrote_memory(r) && r->addr >= a->base) {
		page = (r->addr - a->base) / 4096;
		if (page < a->npages &&
		    spin_dma_to_host(h, a->bitmap_off + page, &one, 1, 0) != 0)
			return SPIN_ERROR;
	}
	if (a->processed_off != SPIN_AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

const struct spin_handler_family spin_handlers_aa_dirty = {
	.name = "aa_dirty",
	.init = dirty_init,
	.access = dirty_access,
};
