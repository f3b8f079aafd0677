/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application datatype catalog (paper 000 §5.3, Fig. 16): one receive
 * datatype per row of the figure's applications, written as a type
 * expression (DESIGN §7) from the papers and the applications' public
 * descriptions; the source of each is in apps.c and doc/NOTES.md.
 */
#ifndef SPINNIC_BENCH_APPS_H
#define SPINNIC_BENCH_APPS_H

#include <stddef.h>

struct bench_app {
	const char *name;     /**< row name, e.g. "milc_zdown" */
	const char *app;      /**< application, e.g. "MILC" */
	const char *what;     /**< the exchange it models, one line */
	/** Write the type expression (one element is the whole message)
	 * into a malloc'd string. @return it, or NULL (ENOMEM) */
	char *(*expr)(void);
};

/** The catalog, ending with a NULL name. */
extern const struct bench_app bench_apps[];

/** Entry by row name or application name (case-insensitive), starting
 * after @p prev (NULL: from the start). @return NULL when none is left */
const struct bench_app *bench_app_find(const char *key,
				       const struct bench_app *prev);

/**
 * Check a comma list of catalog rows or applications.
 * @param opt the option's name, for the message
 * @return 0; -EINVAL after one line on stderr
 */
int bench_apps_check(const char *opt, const char *list);

/** Whether comma list @p list (NULL: all) selects catalog row @p a. */
int bench_apps_selected(const char *list, const struct bench_app *a);

struct ddt_type;
/** The committed type of catalog row @p a and, if @p expr_p, its
 * expression (malloc'd). @return 0; a negative errno (logged) */
int bench_app_type(const struct bench_app *a, struct ddt_type **t_p,
		   char **expr_p);

#endif
