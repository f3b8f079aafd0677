/* SPDX-License-Identifier: BSD-3-Clause */
/* Tools tests: find a built tool and run it, capturing its output. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool_run.h"

int
tool_find(const char *name, const char *env, char *path_p, size_t len)
{
	const char *over = env ? getenv(env) : NULL;
	const char *bd = getenv("SPINNIC_BUILD_DIR");
	struct stat st;

	if (over != NULL) {
		snprintf(path_p, len, "%s", over);
		return access(path_p, X_OK) == 0 ? 0 : -1;
	}
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(path_p, len, "%s/app/%s/%s", bd ? bd : ".",
				 name, name);
		else
			snprintf(path_p, len, "%s/app/%s", bd ? bd : ".", name);
		if (stat(path_p, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path_p, X_OK) == 0)
			return 0;
	}
	return -1;
}

static void
slurp(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
}

int
tool_run(const char *tool, const char *dir, const char *const *args,
	 struct tool_result *r)
{
	const char *argv[64];
	char opath[4200], epath[4200];
	int ofd, efd, n = 0, st;
	pid_t pid;

	argv[n++] = tool;
	while (args[n - 1] != NULL && n < 63) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	snprintf(opath, sizeof(opath), "%s/stdout", dir);
	snprintf(epath, sizeof(epath), "%s/stderr", dir);
	ofd = open(opath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	efd = open(epath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (ofd < 0 || efd < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(tool, (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp(ofd, r->out, sizeof(r->out));
	slurp(efd, r->err, sizeof(r->err));
	close(ofd);
	close(efd);
	return 0;
}

int
tool_one_line(const char *err)
{
	size_t len = strlen(err);

	return len > 1 && err[len - 1] == '\n' &&
	       strchr(err, '\n') == err + len - 1;
}
