/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the demo programs. */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ddt.h>
#include <spin.h>

/** The sender's typed buffer: double k of it (blocks and gaps alike). */
static inline double
demo_value(uint64_t k)
{
	return (double)k * 0.5 + 1.0;
}

/** Fill a typed buffer of @p n doubles with the demo's values. */
static inline void
demo_fill(double *typed, uint64_t n)
{
	uint64_t k;

	for (k = 0; k < n; k++)
		typed[k] = demo_value(k);
}

static inline void __attribute__((format(printf, 1, 2), noreturn))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "demo: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline void
ptl_check(int rc, const char *what)
{
	if (rc != PTL_OK)
		die("%s: %s", what, spin_strerror(rc));
}

/** vector(count, blocklen, stride)[double], committed. */
static inline struct ddt_type *
demo_type(const char *count, const char *blocklen, const char *stride)
{
	long c = atol(count), b = atol(blocklen), s = atol(stride);
	struct ddt_type *t;

	if (c <= 0 || b <= 0 || s < b)
		die("bad vector(%s,%s,%s)", count, blocklen, stride);
	t = ddt_vector(c, b, s, ddt_base(DDT_DOUBLE));
	if (t == NULL || ddt_commit(t) != 0)
		die("cannot build vector(%ld,%ld,%ld)[double]", c, b, s);
	return t;
}

#endif
