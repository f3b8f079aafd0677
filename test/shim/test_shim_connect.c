/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PtlNIInit without a working spinnic: nothing at the path, a socket file
 * nobody listens on, a spinnic that accepts but never answers, one that
 * hangs up. Each must fail promptly with one line on stderr, never hang.
 */
#include <errno.h>
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
#include "shim_internal.h"

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

/* A bound socket file at path nobody listens on (a node's socket). */
static void
make_socket_file(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
}

static void
clear_rank_env(void)
{
	unsetenv("SPINNIC_RANK");
	unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
	unsetenv("MPI_LOCALRANKID");
	unsetenv("SLURM_LOCALID");
}

/* SPINNIC_SOCKET's %r and %n, the rank from a launcher's environment
 * (README "MPI over spinnic") */
static void
test_socket_pattern(void **state)
{
	char dir[] = "/tmp/spinnic-shim-pat-XXXXXX";
	char pat[128], path[128], want[160];

	(void)state;
	assert_non_null(mkdtemp(dir));
	clear_rank_env();
	/* no pattern: the path as given, % only as %% */
	setenv("SPINNIC_SOCKET", "/x/a%%b.sock", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	assert_string_equal(path, "/x/a%b.sock");
	/* %r: no rank variable is rank 0; Open MPI's local rank; SPINNIC_RANK
	 * first */
	snprintf(pat, sizeof(pat), "%s/node%%r.sock", dir);
	setenv("SPINNIC_SOCKET", pat, 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/node0.sock", dir);
	assert_string_equal(path, want);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "13", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/node13.sock", dir);
	assert_string_equal(path, want);
	setenv("SPINNIC_RANK", "2", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/node2.sock", dir);
	assert_string_equal(path, want);
	unsetenv("SPINNIC_RANK");
	/* %n: modulo the sockets that exist (node0..node2; node4 is beyond a
	 * gap, node3 a plain file: neither counts) */
	for (int i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "%s/node%d.sock", dir, i);
		make_socket_file(want);
	}
	snprintf(want, sizeof(want), "%s/node3.sock", dir);
	close(open(want, O_CREAT | O_WRONLY, 0600));
	snprintf(want, sizeof(want), "%s/node4.sock", dir);
	make_socket_file(want);
	snprintf(pat, sizeof(pat), "%s/node%%n.sock", dir);
	setenv("SPINNIC_SOCKET", pat, 1);
	for (int r = 0; r < 7; r++) {
		char v[8];

		snprintf(v, sizeof(v), "%d", r);
		setenv("OMPI_COMM_WORLD_LOCAL_RANK", v, 1);
		assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
		snprintf(want, sizeof(want), "%s/node%d.sock", dir, r % 3);
		assert_string_equal(path, want);
	}
	/* Hydra's and Slurm's variables */
	unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
	setenv("MPI_LOCALRANKID", "4", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/node1.sock", dir);
	assert_string_equal(path, want);
	unsetenv("MPI_LOCALRANKID");
	setenv("SLURM_LOCALID", "2", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/node2.sock", dir);
	assert_string_equal(path, want);
	/* PtlNIInit connects to the expanded path (nobody listens there) */
	expect_init_fails(want);
	unsetenv("SLURM_LOCALID");
	for (int i = 0; i < 5; i++) {
		snprintf(want, sizeof(want), "%s/node%d.sock", dir, i);
		unlink(want);
	}
	/* %n with no node at all: node 0's path, named by the failure */
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5", 1);
	snprintf(want, sizeof(want), "%s/node0.sock", dir);
	expect_init_fails(want);
	clear_rank_env();
	rmdir(dir);
}

/* Hostile values: a clear line and a failed PtlNIInit, never a crash */
static void
test_socket_pattern_bad(void **state)
{
	static const char *const bad_rank[] = {
		"", "x", "-1", "+1", " 1", "1x", "99999999999999999999", "1048576",
	};
	char path[64];

	(void)state;
	clear_rank_env();
	/* bad patterns: two directives, an unknown one, a trailing % */
	setenv("SPINNIC_SOCKET", "/tmp/n%r-%n.sock", 1);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), -EINVAL);
	expect_init_fails("SPINNIC_SOCKET");
	setenv("SPINNIC_SOCKET", "/tmp/n%s.sock", 1);
	expect_init_fails("only one %r");
	setenv("SPINNIC_SOCKET", "/tmp/n%", 1);
	expect_init_fails("SPINNIC_SOCKET");
	/* bad ranks ("" counts as unset) */
	setenv("SPINNIC_SOCKET", "/tmp/node%r.sock", 1);
	for (size_t i = 0; i < sizeof(bad_rank) / sizeof(bad_rank[0]); i++) {
		setenv("OMPI_COMM_WORLD_LOCAL_RANK", bad_rank[i], 1);
		if (i == 0) {
			assert_int_equal(shim_ctrl_socket_path(path,
					 sizeof(path)), 0);
			assert_string_equal(path, "/tmp/node0.sock");
			continue;
		}
		stderr_capture();
		assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)),
				 -EINVAL);
		if (strstr(stderr_release(), "OMPI_COMM_WORLD_LOCAL_RANK") == NULL)
			fail_msg("no variable named for '%s'", bad_rank[i]);
	}
	expect_init_fails("OMPI_COMM_WORLD_LOCAL_RANK");
	/* too long once expanded */
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1048575", 1);
	setenv("SPINNIC_SOCKET", "/tmp/abcdefghijklmnopqrstuvwxyz0123456789/%r",
	       1);
	assert_int_equal(shim_ctrl_socket_path(path, 48), -ENAMETOOLONG);
	assert_int_equal(shim_ctrl_socket_path(path, sizeof(path)), 0);
	clear_rank_env();
	unsetenv("SPINNIC_SOCKET");
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
		cmocka_unit_test(test_socket_pattern),
		cmocka_unit_test(test_socket_pattern_bad),
	};

	setenv("SPINNIC_REGION_SIZE", "4M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
