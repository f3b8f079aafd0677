/* SPDX-License-Identifier: BSD-3-Clause */
/* What the spinnic-bench tests share (bench_test.h). */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>

#include <cmocka.h>

#include "bench_test.h"

char tool[4096];
char tmpdir[4096];

void
run(struct tool_result *r, ...)
{
	const char *args[32];
	va_list ap;
	int n = 0;

	va_start(ap, r);
	while ((args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	assert_int_equal(tool_run(tool, tmpdir, args, r), 0);
}

struct csv *
run_csv(struct tool_result *r, const char *csv_name, ...)
{
	const char *args[32];
	char file[4200];
	struct csv *c;
	va_list ap;
	int n = 0;

	snprintf(file, sizeof(file), "%s/%s", tmpdir, csv_name);
	va_start(ap, csv_name);
	while (n < 29 && (args[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	args[n++] = "--csv";
	args[n++] = file;
	args[n] = NULL;
	assert_int_equal(tool_run(tool, tmpdir, args, r), 0);
	if (lacks_resources(r))
		return NULL;
	if (r->status != 0)
		fail_msg("spinnic-bench %s failed (%d): %s", args[0], r->status,
			 r->err);
	c = malloc(sizeof(*c));
	assert_non_null(c);
	csv_read(c, file);
	return c;
}

char *
path(const char *name)
{
	static char p[4200];

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	return p;
}

/* Split one CSV line (no quoted fields) in place. @return fields */
int
split(char *line, char **f, int max)
{
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++)
		if (*p == ',') {
			*p = '\0';
			f[n++] = p + 1;
		}
	return n;
}

int
col(char **hdr, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(hdr[i], name) == 0)
			return i;
	return -1;
}

void
csv_read(struct csv *c, const char *file)
{
	FILE *f = fopen(file, "r");

	assert_non_null(f);
	memset(c, 0, sizeof(*c));
	assert_non_null(fgets(c->hdr_line, sizeof(c->hdr_line), f));
	c->hdr_line[strcspn(c->hdr_line, "\n")] = '\0';
	c->nh = split(c->hdr_line, c->hdr, 32);
	while (c->rows < 64 &&
	       fgets(c->lines[c->rows], sizeof(c->lines[0]), f) != NULL) {
		c->lines[c->rows][strcspn(c->lines[c->rows], "\n")] = '\0';
		assert_int_equal(split(c->lines[c->rows], c->f[c->rows], 32),
				 c->nh);
		c->rows++;
	}
	fclose(f);
}

/* The EAL or spinnic could not start here (memory, hugepages): skip. */
int
lacks_resources(const struct tool_result *r)
{
	return r->status != 0 &&
	       (strstr(r->err, "EAL") != NULL ||
		strstr(r->err, "exited before ready") != NULL);
}

int
group_setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	if (tool_find("spinnic-bench", "SPINNIC_BENCH", tool,
		      sizeof(tool)) < 0) {
		fprintf(stderr, "spinnic-bench not found (SPINNIC_BUILD_DIR=%s)\n",
			getenv("SPINNIC_BUILD_DIR") ?: "unset");
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/spinnic-bench-test.XXXXXX",
		 t ? t : "/tmp");
	return mkdtemp(tmpdir) != NULL ? 0 : -1;
}

int
group_teardown(void **state)
{
	char cmd[4300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/*
 * Is @p q (printed to 0.01) the ratio @p t / @p h of two times printed to
 * 0.1? Within what the rounding allows: a fast machine prints times of a
 * few microseconds, where 0.05 is a percent or more of each.
 */
bool
ratio_of(double q, double t, double h)
{
	double r = t / h;

	return h > 0 && t > 0 &&
	       fabs(q - r) <= 0.006 + r * (0.051 / t + 0.051 / h) + 0.002 * q;
}
