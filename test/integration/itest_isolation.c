/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control sockets are reachable only by their owner (DESIGN §4):
 * spinnic creates a missing --socket-dir and its missing parents 0700,
 * each socket is 0600, and an existing directory that others can enter
 * is reported in the log (spinnic still serves it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static unsigned
mode_of(const char *path, bool want_dir)
{
	struct stat st;

	ITEST_CHECK(stat(path, &st) == 0, "stat %s: %s", path,
		    strerror(errno));
	ITEST_CHECK(want_dir ? S_ISDIR(st.st_mode) : S_ISSOCK(st.st_mode),
		    "%s: not a %s", path, want_dir ? "directory" : "socket");
	ITEST_CHECK(st.st_uid == geteuid(), "%s: owner %u", path,
		    (unsigned)st.st_uid);
	return st.st_mode & 07777;
}

int
main(void)
{
	char parent[300], sdir[320], open_dir[300], sock[340];
	const char *opts[] = { "--socket-dir", sdir, NULL };
	const char *opts2[] = { "--socket-dir", open_dir, NULL };
	unsigned node, m;

	itest_init("itest_isolation", 60);
	snprintf(parent, sizeof(parent), "%s/a", itest_dir());
	snprintf(sdir, sizeof(sdir), "%s/b", parent);
	itest_spinnic_start(opts);

	m = mode_of(parent, true);
	ITEST_CHECK(m == 0700, "created parent %s has mode %03o", parent, m);
	m = mode_of(sdir, true);
	ITEST_CHECK(m == 0700, "socket directory %s has mode %03o", sdir, m);
	for (node = 0; node < 2; node++) {
		snprintf(sock, sizeof(sock), "%s/node%u.sock", sdir, node);
		m = mode_of(sock, false);
		ITEST_CHECK(m == 0600, "%s has mode %03o", sock, m);
	}
	printf("itest_isolation: %s 0700, sockets 0600\n", sdir);
	itest_spinnic_finish();

	/* a directory others can enter: served, but reported */
	snprintf(open_dir, sizeof(open_dir), "%s/open", itest_dir());
	ITEST_CHECK(mkdir(open_dir, 0700) == 0 && chmod(open_dir, 0755) == 0,
		    "mkdir %s: %s", open_dir, strerror(errno));
	itest_spinnic_start(opts2);
	ITEST_CHECK(strstr(itest_spinnic_log(),
			   "lets other users reach the control sockets") != NULL,
		    "no warning for a socket directory of mode 0755");
	itest_spinnic_finish();
	printf("itest_isolation: ok\n");
	return 0;
}
