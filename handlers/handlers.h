/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The families of handlers/, one per file, collected in handlers.c's
 * spin_handler_families[] (declared in spin_handler.h). Not installed.
 */
#ifndef SPIN_HANDLERS_H
#define SPIN_HANDLERS_H

#include "spin_handler.h"

extern const struct spin_handler_family spin_handlers_checksum;
extern const struct spin_handler_family spin_handlers_ddt_vector;
extern const struct spin_handler_family spin_handlers_ddt_iblock;
extern const struct spin_handler_family spin_handlers_ddt_general;
extern const struct spin_handler_family spin_handlers_ddt_iovec;
extern const struct spin_handler_family spin_handlers_ddt_gather;

#endif
