/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PtlNIInit without a working spinnic: nothing at the path, a socket file
 * nobody listens on, a spinnic that accepts but never answers, one that
 * hangs up. Each must fail promptly with one line on stderr, never hang.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_nic.h"
#include "portals4.h"

static char errbuf[4096];
static int saved_stderr = -1;
static char errpath[] = "/tmp/spinnic-shim-err-XXXXXX";
static int errfd = -1;

/* Send stderr to a file so the messages can be checked. */
static void
stderr_capture(void)
{
	fflush(stderr);
	errfd = mkstemp(errpath);
	assert_true(errfd >= 0);
	saved_stderr = dup(2);
	dup2(errfd, 2);
}

static const char *
stderr_release(void)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	n = pread(errfd, errbuf, sizeof(errbuf) - 1, 0);
	errbuf[n > 0 ? n : 0] = '\0';
	close(errfd);
	unlink(errpath);
	strcpy(errpath + strlen(errpath) - 6, "XXXXXX");
	return errbuf;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* PtlNIInit must fail with PTL_FAIL and one line naming why. */
static void
expect_init_fails(const char *must_contain)
{
	ptl_handle_ni_t ni;
	const char *msg;
	double t0;
	int rc;

	assert_int_equal(PtlInit(), PTL_OK);
	stderr_capture();
	t0 = now_s();
	rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, NULL, &ni);
	msg = stderr_release();
	assert_int_equal(rc, PTL_FAIL);
	/* "promptly": far below any hang, generous for a loaded machine */
	assert_true(now_s() - t0 < 4.0);
	assert_int_equal(count_lines(msg), 1);
	if (must_contain != NULL && strstr(msg, must_contain) == NULL)
		fail_msg("message '%s' lacks '%s'", msg, must_contain);
	PtlFini();
}

static void
test_no_init(void **state)
{
	ptl_handle_ni_t ni;

	(void)state;
	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
				   PTL_PID_ANY, NULL, NULL, &ni), PTL_NO_INIT);
}

static void
test_missing_path(void **state)
{
	(void)state;
	setenv("SPINNIC_SOCKET", "/tmp/spinnic-shim-nonexistent/node0.sock", 1);
	expect_init_fails("/tmp/spinnic-shim-nonexistent/node0.sock");
}

static void
test_default_path(void **state)
{
	char dir[] = "/tmp/spinnic-shim-xdg-XXXXXX";
	char want[128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	unsetenv("SPINNIC_SOCKET");
	setenv("XDG_RUNTIME_DIR", dir, 1);
	snprintf(want, sizeof(want), "%s/spinnic/node0.sock", dir);
	expect_init_fails(want);
	rmdir(dir);
}

static void
test_nobody_listens(void **state)
{
	char dir[] = "/tmp/spinnic-shim-dead-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/node0.sock", dir);
	/* a socket file left behind by a spinnic that exited */
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	setenv("SPINNIC_SOCKET", sa.sun_path, 1);
	expect_init_fails("not running");
	unlink(sa.sun_path);
	rmdir(dir);
}

static void
test_silent_nic(void **state)
{
	struct fake_nic f;

	(void)state;
	assert_int_equal(fake_nic_start(&f, FAKE_SILENT), 0);
	setenv("SPINNIC_CTRL_TIMEOUT_MS", "300", 1);
	expect_init_fails("no reply");
	unsetenv("SPINNIC_CTRL_TIMEOUT_MS");
	fake_nic_stop(&f);
}

/* A slow spinnic (busy CPUs) is waited for past the notice: one line on
 * stderr, and the call succeeds (the connection is not given up) */
static void
test_slow_nic(void **state)
{
	struct fake_nic f;
	ptl_handle_ni_t ni;
	const char *msg;
	int rc;

	(void)state;
	assert_int_equal(fake_nic_start(&f, FAKE_ANSWER), 0);
	f.delay_op = SPINNIC_CTRL_ATTACH;
	f.delay_ms = 5500;
	assert_int_equal(PtlInit(), PTL_OK);
	stderr_capture();
	rc = PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, NULL, &ni);
	msg = stderr_release();
	assert_int_equal(rc, PTL_OK);
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "has not answered"));
	PtlNIFini(ni);
	PtlFini();
	fake_nic_stop(&f);
}

static void
test_hangup_at_attach(void **state)
{
	struct fake_nic f;

	(void)state;
	assert_int_equal(fake_nic_start(&f, FAKE_ANSWER), 0);
	f.hangup_op = SPINNIC_CTRL_ATTACH;
	expect_init_fails("lost the connection");
	fake_nic_stop(&f);
}

/* After a failure, a spinnic that comes up later is usable. */
static void
test_retry_after_failure(void **state)
{
	struct fake_nic f;
	ptl_handle_ni_t ni;

	(void)state;
	setenv("SPINNIC_SOCKET", "/tmp/spinnic-shim-nonexistent/node0.sock", 1);
	expect_init_fails(NULL);
	assert_int_equal(fake_nic_start(&f, FAKE_ANSWER), 0);
	assert_int_equal(PtlInit(), PTL_OK);
	assert_int_equal(PtlNIInit(0, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
				   PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
	assert_int_equal(PtlNIFini(ni), PTL_OK);
	PtlFini();
	fake_nic_stop(&f);
	assert_int_equal(f.bad_msgs, 0);
	assert_int_equal(f.nops[SPINNIC_CTRL_DETACH], 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_init),
		cmocka_unit_test(test_missing_path),
		cmocka_unit_test(test_default_path),
		cmocka_unit_test(test_nobody_listens),
		cmocka_unit_test(test_silent_nic),
		cmocka_unit_test(test_slow_nic),
		cmocka_unit_test(test_hangup_at_attach),
		cmocka_unit_test(test_retry_after_failure),
	};

	setenv("SPINNIC_REGION_SIZE", "4M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
