/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of the EAL's telemetry socket for integration tests (the v2
 * protocol dpdk-telemetry.py speaks: SOCK_SEQPACKET, an info JSON on
 * connect, then one JSON reply per command) and the few JSON lookups the
 * tests need: spinnic's replies nest one level ("name": {...}).
 */
#ifndef ITEST_TEL_H
#define ITEST_TEL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define TEL_BUF (64 * 1024)
#define TEL_TIMEOUT_MS 5000

/** tel_json_num: no such key / no such object. */
#define NO_KEY LLONG_MIN
#define NO_OBJ (LLONG_MIN + 1)

/** Connect to the socket at @p path and read its greeting (fails the
 *  test on any error). @return the socket */
int tel_connect(const char *path);

/** Send @p cmd, return its reply (malloc'd; fails the test on error). */
char *tel_query(int fd, const char *cmd);

/**
 * The object "@p obj": {...} of a reply: its text in @p out.
 * @return 0, or -1 when there is no such object
 */
int tel_json_obj(const char *json, const char *obj, char *out, size_t len);

/** Number under "@p key" in object "@p obj"; NO_KEY, NO_OBJ. */
long long tel_json_num(const char *json, const char *obj, const char *key);

/** tel_json_num that must exist (fails the test otherwise). */
long long tel_need(const char *json, const char *obj, const char *key);

/** A string value "@p key":"@p val" in object @p obj. */
bool tel_json_has_str(const char *json, const char *obj, const char *key,
		      const char *val);

#endif
