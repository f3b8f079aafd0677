/* SPDX-License-Identifier: BSD-3-Clause */
/* Forked client processes of one integration test (kid.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kid.h"

unsigned kid_line_ms = 20000;

void
kid_say(struct kid *k, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(k->wr, line, (size_t)n) != n)
		_exit(3);
}

int
kid_line(struct kid *k, char *buf, size_t len, unsigned timeout_ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = k->rd, .events = POLLIN };
		char ch;

		if (poll(&p, 1, (int)timeout_ms) != 1 ||
		    read(k->rd, &ch, 1) != 1)
			return -1;
		if (ch == '\n')
			break;
		buf[n++] = ch;
	}
	buf[n] = '\0';
	return 0;
}

void
kid_start(struct kid *k, const char *name, unsigned node, bool huge,
	  kid_fn fn, void *arg)
{
	int down[2], up[2];

	ITEST_CHECK(pipe(down) == 0 && pipe(up) == 0, "pipe: %s",
		    strerror(errno));
	fflush(stdout);
	fflush(stderr);
	k->name = name;
	k->pid = fork();
	ITEST_CHECK(k->pid >= 0, "fork: %s", strerror(errno));
	if (k->pid == 0) {
		struct kid self = { .rd = down[0], .wr = up[1], .name = name };

		close(down[1]);
		close(up[0]);
		/* a test that failed (exit) takes its kids with it: one
		 * blocked in a wait would otherwise hold the test's output
		 * open and meson waits for its timeout */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		setenv("SPINNIC_REGION_SIZE", "16M", 1);
		if (huge)
			unsetenv("SPINNIC_HUGEPAGES");
		else
			setenv("SPINNIC_HUGEPAGES", "0", 1);
		signal(SIGALRM, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		alarm(60);
		setenv("SPINNIC_SOCKET", itest_socket_path(node), 1);
		_exit(fn(&self, arg));
	}
	close(down[0]);
	close(up[1]);
	k->rd = up[0];
	k->wr = down[1];
}

void
kid_tell(struct kid *k, const char *line)
{
	size_t n = strlen(line);

	ITEST_CHECK(write(k->wr, line, n) == (ssize_t)n &&
		    write(k->wr, "\n", 1) == 1, "%s: write", k->name);
}

void
kid_expect(struct kid *k, const char *prefix, char *buf, size_t len)
{
	int rc = kid_line(k, buf, len, kid_line_ms);

	ITEST_CHECK(itest_spinnic_alive(),
		    "spinnic died while %s ran (a SIGBUS leaves no log); "
		    "%s said \"%s\"", k->name, k->name, rc == 0 ? buf : "");
	ITEST_CHECK(rc == 0, "%s: no line (wanted \"%s...\")", k->name,
		    prefix);
	ITEST_CHECK(strncmp(buf, prefix, strlen(prefix)) == 0,
		    "%s: said \"%s\", wanted \"%s...\"", k->name, buf, prefix);
}

void
kid_end(struct kid *k)
{
	int st = -1, i;

	close(k->wr);
	for (i = 0; i < 2000; i++) {
		if (waitpid(k->pid, &st, WNOHANG) == k->pid)
			break;
		usleep(10000);
	}
	if (i == 2000) {
		kill(k->pid, SIGKILL);
		waitpid(k->pid, &st, 0);
		itest_fail("%s: did not exit", k->name);
	}
	close(k->rd);
	ITEST_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		    "%s: exit status 0x%x", k->name, (unsigned)st);
}

int
kid_ni_open(struct kid *self, struct kid_ni *n, unsigned eq_count)
{
	int rc;

	KCHECK(self, PtlInit() == PTL_OK, "PtlInit");
	rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, &n->lim, &n->ni);
	KCHECK(self, rc == PTL_OK, "PtlNIInit: %d", rc);
	KCHECK(self, PtlGetPhysId(n->ni, &n->id) == PTL_OK, "PtlGetPhysId");
	KCHECK(self, PtlEQAlloc(n->ni, eq_count, &n->eq) == PTL_OK,
	       "PtlEQAlloc");
	KCHECK(self, PtlPTAlloc(n->ni, 0, n->eq, PTL_PT_ANY, &n->pt) ==
		     PTL_OK, "PtlPTAlloc");
	return 0;
}

void
kid_ni_close(struct kid_ni *n)
{
	PtlPTFree(n->ni, n->pt);
	PtlEQFree(n->eq);
	PtlNIFini(n->ni);
	PtlFini();
}

bool
kid_bytes_all(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

int
kid_want_event(struct kid *self, struct kid_ni *n, ptl_event_kind_t type,
	       ptl_ni_fail_t fail, ptl_event_t *ev_p)
{
	unsigned which;
	int rc;

	rc = PtlEQPoll(&n->eq, 1, 30000, ev_p, &which);
	KCHECK(self, rc == PTL_OK, "no event (wanted %d): %d", type, rc);
	KCHECK(self, ev_p->type == type && ev_p->ni_fail_type == fail,
	       "event %d fail %d, wanted %d fail %d", ev_p->type,
	       ev_p->ni_fail_type, type, fail);
	return 0;
}
