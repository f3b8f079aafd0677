/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the spinnic-bench tests share (bench_test.c): the tool and the
 * test folder found by group_setup(), running the tool, reading its CSV.
 */
#ifndef SPINNIC_BENCH_TEST_H
#define SPINNIC_BENCH_TEST_H

#include <stdbool.h>

#include "tool_run.h"

extern char tool[4096];
extern char tmpdir[4096];

/* Run spinnic-bench with the NULL-terminated arguments; into @p r. */
void run(struct tool_result *r, ...);
/* @p name in the test folder (a static buffer). */
char *path(const char *name);
/* Split one CSV line (no quoted fields) in place. @return fields */
int split(char *line, char **f, int max);
/* The index of column @p name in @p hdr, or -1. */
int col(char **hdr, int n, const char *name);

/* Read a CSV written by the tool: header fields and up to max rows. */
struct csv {
	char hdr_line[4096];
	char *hdr[32];
	int nh;
	char lines[64][1024];
	char *f[64][32];
	int rows;
};

void csv_read(struct csv *c, const char *file);
/* The EAL or spinnic could not start here (memory, hugepages): skip. */
int lacks_resources(const struct tool_result *r);

/* Run spinnic-bench with the NULL-terminated arguments and "--csv
 * @p csv_name" (in the test folder); a failure fails the test. @return
 * the CSV read (malloc'd), or NULL when the bench lacks resources here
 * (then skip) */
struct csv *run_csv(struct tool_result *r, const char *csv_name, ...);

/* Is @p q (printed to 0.01) the ratio @p t / @p h of two times printed
 * to 0.1, within what the rounding allows? */
bool ratio_of(double q, double t, double h);

/* cmocka group setup and teardown: the tool, a fresh test folder. */
int group_setup(void **state);
int group_teardown(void **state);

#endif
