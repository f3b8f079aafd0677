/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "aa_count": Active Access access counting (paper 004 §4.2) on the NIC.
 * The access handler runs once per record of a log bound to the context
 * and adds 1 to the host counter of the record's page (writes and reads
 * apart) with an 8-byte host fetch-add; arguments in spin_handler_args.h.
 */
#include <errno.h>
#include <stdbool.h>

#include "handlers.h"
#include "spin_handler_args.h"

static int
count_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	const struct spin_aa_count_args *a = args;

	(void)state_len_p;
	if (a == NULL || args_len != sizeof(*a) ||
	    a->version != SPIN_AA_COUNT_ARGS_VERSION || a->flags != 0 ||
	    a->npages == 0 || a->npages > (1ull << 40) ||
	    a->base % 4096 != 0 || a->counters_off % 8 != 0 ||
	    (a->processed_off != SPIN_AA_NO_WORD && a->processed_off % 8 != 0))
		return -EINVAL;
	return 0;
}

static bool
kind_is_read(uint16_t kind)
{
	return kind == 3 || kind == 4 || kind == 6; /* GET_META/DATA/BLOCKED */
}

static int
count_access(const struct spin_access *r, struct spin_hctx *h)
{
	const struct spin_aa_count_args *a = spin_hctx_args(h);
	uint64_t page;

	/* the window and offsets are checked by every host call */
	if (r->addr >= a->base) {
		page = (r->addr - a->base) / 4096;
		if (page < a->npages &&
		    spin_host_fetch_add(h, a->counters_off + 8 * page +
					(kind_is_read(r->kind) ?
					 8 * a->npages : 0), 1, NULL) != 0)
			return SPIN_ERROR;
	}
	if (a->processed_off != SPIN_AA_NO_WORD &&
	    spin_host_fetch_add(h, a->processed_off, 1, NULL) != 0)
		return SPIN_ERROR;
	return SPIN_SUCCESS;
}

const struct spin_handler_family spin_handlers_aa_count = {
	.name = "aa_count",
	.init = count_init,
	.access = count_access,
};
