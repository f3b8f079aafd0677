/* SPDX-License-Identifier: BSD-3-Clause */
/* The telemetry socket client of the integration tests (tel.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "tel.h"

/* One SEQPACKET message, with a timeout; NUL-terminated in @p buf. */
static void
tel_recv(int fd, char *buf, size_t len, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, TEL_TIMEOUT_MS) != 1)
		itest_fail("telemetry: no reply to %s in %u ms", what,
			   TEL_TIMEOUT_MS);
	n = recv(fd, buf, len - 1, 0);
	if (n <= 0)
		itest_fail("telemetry: %s: %s", what,
			   n < 0 ? strerror(errno) : "connection closed");
	buf[n] = '\0';
}

int
tel_connect(const char *tel_path)
{
	struct sockaddr_un sa;
	char *buf;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(tel_path) >= sizeof(sa.sun_path))
		itest_fail("telemetry socket path too long: %s", tel_path);
	memcpy(sa.sun_path, tel_path, strlen(tel_path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		itest_fail("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		itest_fail("telemetry: connect %s: %s", tel_path,
			   strerror(errno));
	buf = malloc(TEL_BUF);
	if (buf == NULL)
		itest_fail("out of memory");
	tel_recv(fd, buf, TEL_BUF, "connect");
	if (strstr(buf, "\"version\"") == NULL ||
	    strstr(buf, "\"max_output_len\"") == NULL)
		itest_fail("telemetry: unexpected greeting %s", buf);
	free(buf);
	return fd;
}

/* Send @p cmd, return its reply (malloc'd). */
char *
tel_query(int fd, const char *cmd)
{
	char *buf = malloc(TEL_BUF);

	if (buf == NULL)
		itest_fail("out of memory");
	if (send(fd, cmd, strlen(cmd), 0) != (ssize_t)strlen(cmd))
		itest_fail("telemetry: send %s: %s", cmd, strerror(errno));
	tel_recv(fd, buf, TEL_BUF, cmd);
	return buf;
}

/*
 * The object "@p obj": {...} of a reply (the replies nest one level, so
 * its end is the first '}'): its text in @p out.
 * @return 0, or -1 when there is no such object
 */
int
tel_json_obj(const char *json, const char *obj, char *out, size_t len)
{
	char key[160];
	const char *p, *end;

	/* the socket sends compact JSON, dpdk-telemetry.py spaces it */
	snprintf(key, sizeof(key), "\"%s\":", obj);
	p = strstr(json, key);
	if (p == NULL)
		return -1;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (*p++ != '{')
		return -1;
	end = strchr(p, '}');
	if (end == NULL || (size_t)(end - p) >= len)
		return -1;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return 0;
}

long long
tel_json_num(const char *json, const char *obj, const char *key)
{
	char body[8192], k[96];
	const char *p;

	if (tel_json_obj(json, obj, body, sizeof(body)) != 0)
		return NO_OBJ;
	/* at the start or after a ',': a whole key */
	snprintf(k, sizeof(k), "\"%s\":", key);
	for (p = strstr(body, k); p != NULL; p = strstr(p + 1, k))
		if (p == body || p[-1] == ',' || p[-1] == ' ')
			break;
	if (p == NULL)
		return NO_KEY;
	p += strlen(k);
	while (*p == ' ')
		p++;
	if (*p == '-' || (*p >= '0' && *p <= '9'))
		return strtoll(p, NULL, 10);
	return NO_KEY;
}

long long
tel_need(const char *json, const char *obj, const char *key)
{
	long long v = tel_json_num(json, obj, key);

	if (v == NO_OBJ)
		itest_fail("telemetry: no \"%s\" in %s", obj, json);
	if (v == NO_KEY)
		itest_fail("telemetry: no number \"%s\" in \"%s\" of %s", key,
			   obj, json);
	return v;
}

bool
tel_json_has_str(const char *json, const char *obj, const char *key,
	     const char *val)
{
	char body[8192], kv[160];

	if (tel_json_obj(json, obj, body, sizeof(body)) != 0)
		return false;
	snprintf(kv, sizeof(kv), "\"%s\":\"%s\"", key, val);
	return strstr(body, kv) != NULL;
}
