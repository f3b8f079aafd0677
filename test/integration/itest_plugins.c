/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler plugins (spinnic --handlers, app/spinnic/plugins.c): every way a
 * plugin is refused stops spinnic with status 2 and exactly one line that
 * names the file and the reason, before the EAL (no port, no "ready");
 * a good plugin (test/spin/plugin_ok.c, family "test_count"), given as a
 * file and as a folder, serves a client that selects its family by name
 * like a built-in one, checked byte for byte: the data its payload
 * handlers copied and the counts its completion handler wrote after it.
 *
 * Arguments (meson): the plugin files of test/spin, plugin_ok.so first.
 * They are copied into the test's private folder (0700, ours), where
 * their owner and mode are what the test makes them, whatever the build
 * folder's umask.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define TEST_COUNT_MAGIC 0x544e554f43545354ull
#define PAYLOAD 2048u /* spinnic's default --payload */

/* what plugin_ok's completion handler writes after the data */
struct test_count_result {
	uint64_t magic, msgs, pkts, bytes, sum;
};

static char plugdir[400];

/* itest_client's data: byte i of a message with seed S */
static uint8_t
pattern(uint64_t i, uint64_t seed)
{
	return (uint8_t)(i * 131 + (i >> 9) + seed * 17 + 1);
}

static void
copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(from, O_RDONLY | O_CLOEXEC);
	ITEST_CHECK(in >= 0, "%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ITEST_CHECK(out >= 0, "%s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ITEST_CHECK(write(out, buf, (size_t)n) == n, "%s: %s", to,
			    strerror(errno));
	ITEST_CHECK(n == 0, "%s: %s", from, strerror(errno));
	close(in);
	close(out);
	/* explicitly: the umask does not narrow chmod */
	ITEST_CHECK(chmod(to, mode) == 0, "chmod %s: %s", to,
		    strerror(errno));
}

static void
make_dir(const char *path, mode_t mode)
{
	ITEST_CHECK(mkdir(path, 0700) == 0, "mkdir %s: %s", path,
		    strerror(errno));
	ITEST_CHECK(chmod(path, mode) == 0, "chmod %s: %s", path,
		    strerror(errno));
}

static void
write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ITEST_CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	ITEST_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text),
		    "%s: %s", path, strerror(errno));
	close(fd);
}

/* The copy of the built plugin whose file name is @p base, in plugdir. */
static const char *
plugin(int argc, char **argv, const char *base)
{
	static char paths[16][512];
	static unsigned n;
	char path[512];
	unsigned k;
	int i;

	snprintf(path, sizeof(path), "%s/%s", plugdir, base);
	for (k = 0; k < n; k++)
		if (strcmp(paths[k], path) == 0)
			return paths[k];
	for (i = 1; i < argc; i++) {
		const char *b = strrchr(argv[i], '/');

		b = b != NULL ? b + 1 : argv[i];
		if (strcmp(b, base) != 0)
			continue;
		ITEST_CHECK(n < 16, "too many plugins");
		snprintf(paths[n], sizeof(paths[n]), "%s", path);
		copy_file(argv[i], paths[n], 0755);
		return paths[n++];
	}
	itest_fail("no %s among the arguments (run through meson test)",
		   base);
}

/*
 * spinnic --handlers @p path (and @p path2 when not NULL) must exit 2 with
 * one line, "spinnic: --handlers FILE: ..." naming @p file and containing
 * @p reason, before the EAL started (nothing else printed: no "EAL:", no
 * "ready").
 */
static void
expect_refused(const char *path, const char *path2, const char *file,
	       const char *reason)
{
	const char *a[] = { "--", "--virtual", "2", "--handlers", path,
			    path2 != NULL ? "--handlers" : NULL, path2, NULL };
	char head[700];
	const char *log, *nl;
	int st;

	st = itest_spinnic_run(a, 30000);
	log = itest_spinnic_log();
	nl = strchr(log, '\n');
	snprintf(head, sizeof(head), "spinnic: --handlers %s: ", file);
	if (st != 2 || nl == NULL || nl[1] != '\0' ||
	    strncmp(log, head, strlen(head)) != 0 ||
	    strstr(log, reason) == NULL || strstr(log, "ready") != NULL ||
	    strstr(log, "EAL:") != NULL)
		itest_fail("--handlers %s: status %d, want 2 and one line "
			   "'%s...%s...'; got:\n%s", path, st, head, reason,
			   log);
	fprintf(stderr, "itest_plugins: refused: %s", log);
}

/* The "tail" line a test_count target prints for @p len bytes, seed. */
static void
expected_tail(uint64_t len, uint64_t seed, char *hex, size_t size)
{
	struct test_count_result r = { .magic = TEST_COUNT_MAGIC, .msgs = 1 };
	const uint8_t *b = (const uint8_t *)&r;
	uint64_t i;
	size_t off = 0;

	r.pkts = len == 0 ? 1 : (len + PAYLOAD - 1) / PAYLOAD;
	r.bytes = len;
	for (i = 0; i < len; i++)
		r.sum += pattern(i, seed);
	off += (size_t)snprintf(hex, size, "tail ");
	for (i = 0; i < sizeof(r); i++)
		off += (size_t)snprintf(hex + off, size - off, "%02x", b[i]);
}

/*
 * A put of @p len bytes from node 0 to a target on node 1 whose ME
 * carries a context of family test_count (selected by name, like any
 * built-in): the target checks every data byte, the test the result the
 * completion handler wrote after them.
 */
static void
count_pair(uint64_t len, uint64_t seed)
{
	char lenarg[40], seedarg[40], target[64], pt[32], line[512],
	     want[512];
	const char *targv[] = { "target", "op=put", lenarg, "buf=region",
				"handler=test_count", "tail=40", seedarg,
				NULL };
	const char *iargv[] = { "put", lenarg, "buf=malloc", seedarg, target,
				pt, NULL };
	struct itest_client t, in;
	unsigned nid, pid, ptn;
	int st;

	snprintf(lenarg, sizeof(lenarg), "len=%" PRIu64, len);
	snprintf(seedarg, sizeof(seedarg), "seed=%" PRIu64, seed);
	itest_client_ready(&t, 1, "test_count target", targv, &nid, &pid,
			   &ptn);
	snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
	snprintf(pt, sizeof(pt), "pt=%u", ptn);
	itest_client_start(&in, 0, "test_count initiator", iargv);
	itest_client_expect(&in, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(&in, 5000);
	ITEST_CHECK(st == 0, "initiator exit status %d", st);
	itest_client_expect(&t, "tail ", line, sizeof(line), 20000);
	expected_tail(len, seed, want, sizeof(want));
	ITEST_CHECK(strcmp(line, want) == 0,
		    "test_count result of %" PRIu64 " bytes:\n got  %s\n want %s",
		    len, line, want);
	itest_client_expect(&t, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(&t, 5000);
	ITEST_CHECK(st == 0, "target exit status %d", st);
	itest_client_forget(&in);
	itest_client_forget(&t);
	ITEST_CHECK(itest_spinnic_alive(), "spinnic died");
	fprintf(stderr, "itest_plugins: test_count, %" PRIu64 " bytes: data "
		"and result right\n", len);
}

/* A built-in family next to the plugin's: the table has both. */
static void
checksum_pair(void)
{
	const char *t[] = { "target", "op=put", "len=5000",
			    "handler=checksum", "seed=5", NULL };
	const char *in[] = { "put", "len=5000", "seed=5", NULL };

	itest_run_pair("checksum beside the plugin", 1, t, 0, in);
}

static void
refusals(int argc, char **argv)
{
	char p[1300], q[1300], d[1200];
	const char *ok = plugin(argc, argv, "plugin_ok.so");

	snprintf(p, sizeof(p), "%s/missing.so", plugdir);
	expect_refused(p, NULL, p, "cannot open: No such file or directory");
	snprintf(p, sizeof(p), "%s/x.so", plugdir);
	write_text(p, "not an ELF file, a text file named x.so\n");
	expect_refused(p, NULL, p, "not a loadable shared object: ");
	/* spinnic's SPIN_HANDLER_ABI_VERSION: 3 since payload_burst */
	expect_refused(plugin(argc, argv, "plugin_abi.so"), NULL,
		       plugin(argc, argv, "plugin_abi.so"),
		       "handler ABI version 999, this spinnic's is 3");
	expect_refused(plugin(argc, argv, "plugin_nosym.so"), NULL,
		       plugin(argc, argv, "plugin_nosym.so"),
		       "no symbol spin_handler_plugin");
	expect_refused(plugin(argc, argv, "plugin_dup.so"), NULL,
		       plugin(argc, argv, "plugin_dup.so"),
		       "family 'checksum': name taken by a built-in family");
	expect_refused(plugin(argc, argv, "plugin_nocb.so"), NULL,
		       plugin(argc, argv, "plugin_nocb.so"),
		       "family 0 'test_bad': no handler");
	expect_refused(plugin(argc, argv, "plugin_zero.so"), NULL,
		       plugin(argc, argv, "plugin_zero.so"),
		       "0 families (a plugin defines 1 to 64)");
	expect_refused(plugin(argc, argv, "plugin_name.so"), NULL,
		       plugin(argc, argv, "plugin_name.so"),
		       "family 0: name not printable");
	/* the handler API exported to plugins is the bounds-checked one */
	expect_refused(plugin(argc, argv, "plugin_window.so"), NULL,
		       plugin(argc, argv, "plugin_window.so"),
		       "undefined symbol: spin_dma_window");
	/* the same family from two plugins */
	snprintf(p, sizeof(p), "%s/again", plugdir);
	make_dir(p, 0755);
	snprintf(q, sizeof(q), "%s/again/plugin_ok.so", plugdir);
	copy_file(ok, q, 0755);
	snprintf(d, sizeof(d), "name taken by plugin %s", ok);
	expect_refused(ok, q, q, d);

	/* who may have written it */
	snprintf(p, sizeof(p), "%s/gw.so", plugdir);
	copy_file(ok, p, 0775);
	expect_refused(p, NULL, p, "file writable by group or others");
	snprintf(d, sizeof(d), "%s/ww", plugdir);
	make_dir(d, 0777);
	snprintf(p, sizeof(p), "%s/ww/plugin_ok.so", plugdir);
	copy_file(ok, p, 0755);
	expect_refused(p, NULL, p, "its folder is writable by group or others");
	expect_refused(d, NULL, d, "folder writable by group or others");
	snprintf(p, sizeof(p), "%s/fifo.so", plugdir);
	ITEST_CHECK(mkfifo(p, 0644) == 0, "mkfifo %s: %s", p,
		    strerror(errno));
	expect_refused(p, NULL, p, "neither a regular file nor a folder");

	/* folders: every *.so, in name order, each checked */
	snprintf(d, sizeof(d), "%s/empty", plugdir);
	make_dir(d, 0755);
	snprintf(p, sizeof(p), "%s/not-a-plugin.txt", d);
	write_text(p, "ignored: not *.so\n");
	expect_refused(d, NULL, d, "no *.so file in this folder");
	snprintf(d, sizeof(d), "%s/mixed", plugdir);
	make_dir(d, 0755);
	snprintf(p, sizeof(p), "%s/a.so", d);
	copy_file(ok, p, 0755);
	snprintf(q, sizeof(q), "%s/b.so", d);
	write_text(q, "text\n");
	expect_refused(d, NULL, q, "not a loadable shared object: ");
	snprintf(q, sizeof(q), "%s/b.so", d);
	copy_file(plugin(argc, argv, "plugin_dup.so"), q, 0755);
	expect_refused(d, NULL, q, "family 'checksum': name taken");
}

int
main(int argc, char **argv)
{
	char dir[600], p[700], word[600];
	const char *ok;

	itest_init("itest_plugins", 150);
	snprintf(plugdir, sizeof(plugdir), "%s/plugins", itest_dir());
	make_dir(plugdir, 0755);
	ok = plugin(argc, argv, "plugin_ok.so");

	refusals(argc, argv);

	/* a plugin file */
	{
		const char *opts[] = { "--handlers", ok, NULL };

		itest_spinnic_start(opts);
	}
	snprintf(p, sizeof(p), "handler plugin %s: 1 family: ", ok);
	ITEST_CHECK(itest_log_word(p, word, sizeof(word)) == 0 &&
		    strcmp(word, "test_count") == 0,
		    "no '%s test_count' line:\n%s", p, itest_spinnic_log());
	count_pair(5000, 7);
	count_pair(1, 8);
	checksum_pair();
	itest_spinnic_finish();
	itest_expect_no_drops();

	/* a folder of them */
	snprintf(dir, sizeof(dir), "%s/dir", plugdir);
	make_dir(dir, 0755);
	snprintf(p, sizeof(p), "%s/10-count.so", dir);
	copy_file(ok, p, 0755);
	snprintf(p, sizeof(p), "%s/README", dir);
	write_text(p, "only *.so files load\n");
	{
		const char *opts[] = { "--handlers", dir, NULL };

		itest_spinnic_start(opts);
	}
	snprintf(p, sizeof(p), "handler plugin %s/10-count.so: 1 family: ",
		 dir);
	ITEST_CHECK(itest_log_word(p, word, sizeof(word)) == 0 &&
		    strcmp(word, "test_count") == 0,
		    "no '%s test_count' line:\n%s", p, itest_spinnic_log());
	count_pair(300000, 9);
	itest_spinnic_finish();
	itest_expect_no_drops();
	return 0;
}
