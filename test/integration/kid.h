/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Forked client processes of one integration test ("kids"), linked with
 * libspinnic, talking to the test over a pipe one line at a time
 * (itest_isolation.c, itest_region.c).
 */
#ifndef ITEST_KID_H
#define ITEST_KID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <portals4.h>

struct kid {
	pid_t pid;
	int rd;            /* parent: the kid's lines; kid: the parent's */
	int wr;
	const char *name;
};

/* What kid_ni_open() sets up: a matching physical NI, an EQ, a PT. */
struct kid_ni {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_process_t id;
	ptl_pt_index_t pt;
	ptl_ni_limits_t lim;   /* what PtlNIInit gave */
};

typedef int (*kid_fn)(struct kid *self, void *arg);

/* How long kid_expect() waits for a line (ms); a test may change it. */
extern unsigned kid_line_ms;

/* A line to the other side (a newline is added); exits 3 if it fails. */
void kid_say(struct kid *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One line from the other side (without the newline), or -1. */
int kid_line(struct kid *k, char *buf, size_t len, unsigned timeout_ms);
/*
 * Start @p fn in a child attached to node @p node (SPINNIC_SOCKET), with a
 * 16 MiB region on hugepages when @p huge (the shim tries hugetlb), else
 * ordinary pages; it exits with fn's return value, never through the
 * harness's atexit cleanup.
 */
void kid_start(struct kid *k, const char *name, unsigned node, bool huge,
	       kid_fn fn, void *arg);
/* Send @p line to the kid. */
void kid_tell(struct kid *k, const char *line);
/* The kid's next line must start with @p prefix; spinnic must be alive
 * (checked first: a dead spinnic explains every missing line). */
void kid_expect(struct kid *k, const char *prefix, char *buf, size_t len);
/* Wait for a kid; its exit status must be 0. */
void kid_end(struct kid *k);

/* In a kid: on failure say "fail ..." and return 1. */
#define KCHECK(self, cond, ...) do { \
	if (!(cond)) { \
		kid_say(self, "fail " __VA_ARGS__); \
		return 1; \
	} \
} while (0)

/* In a kid: PtlInit, a matching physical NI, an EQ of @p eq_count, a PT.
 * @return 0, 1 after saying why */
int kid_ni_open(struct kid *self, struct kid_ni *n, unsigned eq_count);
/* Undo kid_ni_open(). */
void kid_ni_close(struct kid_ni *n);

/* In a kid: the next event of @p n's EQ (30 s) must be @p type with
 * @p fail; it goes to *ev_p. @return 0, 1 after saying why */
int kid_want_event(struct kid *self, struct kid_ni *n, ptl_event_kind_t type,
		   ptl_ni_fail_t fail, ptl_event_t *ev_p);

/* Whether all @p len bytes at @p p are @p v. */
bool kid_bytes_all(const uint8_t *p, size_t len, uint8_t v);

#endif
