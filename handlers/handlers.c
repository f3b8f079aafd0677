/* SPDX-License-Identifier: BSD-3-Clause */
/* The explicit table of handler families (STYLE 11), NULL-terminated. */
#include <stddef.h>

#include "handlers.h"

const struct spin_handler_family *const spin_handler_families[] = {
	&spin_handlers_checksum,
	&spin_handlers_ddt_vector,
	&spin_handlers_ddt_iblock,
	&spin_handlers_ddt_general,
	&spin_handlers_ddt_iovec,
	&spin_handlers_ddt_gather,
	NULL,
};
