/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler plugins spinnic --handlers must refuse (itest_plugins), one per
 * build, chosen by -DPLUGIN_BAD_<what>:
 *   ABI     the plugin symbol by hand, with ABI version 999
 *   NOSYM   a family, but no SPIN_HANDLER_PLUGIN()
 *   DUP     a family named like a built-in one ("checksum")
 *   NOCB    a family without any handler
 *   ZERO    a plugin that lists no family
 *   WINDOW  calls spin_dma_window(), which spinnic does not export
 *   NAME    a family name with a space
 */
#include <stddef.h>

#include "spin_handler.h"

#ifndef PLUGIN_BAD_NOCB
static int
bad_payload(const struct spin_pkt *pkt, struct spin_hctx *h)
{
#ifdef PLUGIN_BAD_WINDOW
	uint64_t len;

	if (spin_dma_window(h, &len) == NULL)
		return SPIN_ERROR;
#endif
	(void)pkt;
	(void)h;
	return SPIN_SUCCESS;
}
#endif

static int
bad_init(const void *args, uint32_t args_len, uint32_t *state_len_p)
{
	(void)args;
	(void)args_len;
	(void)state_len_p;
	return 0;
}

#if defined(PLUGIN_BAD_DUP)
#define BAD_NAME "checksum"
#elif defined(PLUGIN_BAD_NAME)
#define BAD_NAME "test bad"
#else
#define BAD_NAME "test_bad"
#endif

static const struct spin_handler_family bad = {
	.name = BAD_NAME,
#ifndef PLUGIN_BAD_NOCB
	.payload = bad_payload,
#endif
	.init = bad_init,
};

#if defined(PLUGIN_BAD_ABI)
static const struct spin_handler_family *const bad_families[] = { &bad };
__attribute__((visibility("default")))
const struct spin_handler_plugin spin_handler_plugin = {
	999, 1, bad_families,
};
#elif defined(PLUGIN_BAD_ZERO)
__attribute__((visibility("default")))
const struct spin_handler_plugin spin_handler_plugin = {
	SPIN_HANDLER_ABI_VERSION, 0, NULL,
};
/* keep the family (and its callbacks) used */
const struct spin_handler_family *bad_unused = &bad;
#elif defined(PLUGIN_BAD_NOSYM)
__attribute__((visibility("default")))
const struct spin_handler_family *const not_the_plugin_symbol = &bad;
#else
SPIN_HANDLER_PLUGIN(&bad);
#endif
