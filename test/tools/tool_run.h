/* SPDX-License-Identifier: BSD-3-Clause */
/* Tools tests: find a built tool and run it, capturing its output. */
#ifndef SPINNIC_TOOL_RUN_H
#define SPINNIC_TOOL_RUN_H

#include <stddef.h>

/** What a run of a tool left behind. */
struct tool_result {
	int status;          /**< exit status, or -1 when killed by a signal */
	char out[1 << 16];   /**< standard output (truncated, NUL-terminated) */
	char err[4096];      /**< standard error */
};

/**
 * Find the executable `name` of app/<name> in $SPINNIC_BUILD_DIR (or the
 * current directory): <build>/app/<name>/<name>, then <build>/app/<name>.
 * $<env> overrides the search when set.
 * @return 0 and the path in path_p, or -1 when not found
 */
int tool_find(const char *name, const char *env, char *path_p, size_t len);

/**
 * Run tool with argv (argv[0] is set to tool), capturing stdout and stderr
 * through files in dir. @return 0, or -1 when the run could not be made
 */
int tool_run(const char *tool, const char *dir, const char *const *args,
	     struct tool_result *r);

/** 1 when err is exactly one non-empty line ending in a newline. */
int tool_one_line(const char *err);

#endif
