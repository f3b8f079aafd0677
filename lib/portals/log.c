/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/portals' log sink: set once by the application before it serves. */
#include <stdarg.h>

#include "ptl_internal.h"

static ptl_log_fn log_fn;
static int log_max = PTL_LOG_NOTICE;

void
ptl_set_log(ptl_log_fn fn, int max_level)
{
	log_fn = fn;
	log_max = max_level;
}

void
ptl_log_emit(int level, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_fn != NULL)
		log_fn(level, line);
	else
		fprintf(stderr, "spinnic.portals: %s\n", line);
}
