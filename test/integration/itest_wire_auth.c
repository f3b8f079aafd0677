/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Authenticated wire (spinnic --wire-key, doc/NOTES.md):
 *
 *  1. bad key files are refused before the EAL starts, with one line
 *     (missing, readable by others, too short, a directory);
 *  2. spinnic --virtual 2 --wire-key F: puts and gets (one packet, many,
 *     loopback, region and malloc'd buffers), every byte checked by the
 *     clients; every frame sent was sealed, none refused, nothing lost;
 *  3. two spinnic processes over memif (one node each):
 *     - same key: puts and gets both ways (the link works);
 *     - the other node with a different key, then with none: its puts
 *       and gets to the keyed node fail PTL_NI_UNDELIVERABLE after
 *       --peer-timeout-ms, the keyed node counts them as "drop auth" and
 *       matches nothing; the keyed node's puts to the unkeyed one fail
 *       the same way (F_AUTH is an unknown flag there: "drop kind").
 *     Skipped (77) when memif cannot run here.
 * With SPINNIC_ITEST_FAULTS (itest_wire_auth_lossy) part 2 runs over the
 * lossy link and part 3 is left out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

#define KEY1 "3f1c0a6b9e2d4c8f7a5b1e0d3c2b4a6978695a4b3c2d1e0f1a2b3c4d5e6f7081\n"
#define KEY2 "0011223344556677889900aabbccddeeff00112233445566778899aabbccddee\n"

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ITEST_CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	ITEST_CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text),
		    "write %s", path);
	ITEST_CHECK(fchmod(fd, mode) == 0, "chmod %s", path);
	close(fd);
}

static const char *
spinnic_bin(void)
{
	static char bin[512];

	snprintf(bin, sizeof(bin), "%s/app/spinnic/spinnic",
		 getenv("SPINNIC_BUILD_DIR"));
	return bin;
}

/* 1: refused before the EAL, one line naming the problem */
static void
bad_key_files(const char *good)
{
	static const struct {
		const char *file, *text, *want;
		mode_t mode;
	} cases[] = {
		{ "nokey", NULL, "No such file", 0 },
		{ "open.key", KEY1, "group or others may access", 0644 },
		{ "short.key", "0123456789abcdef0123456789abcdef\n",
		  "under 32 bytes", 0600 },
		{ ".", NULL, "not a regular file", 0 },
	};
	char path[400];
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = { "--", "--virtual", "2", "--socket-dir",
				       itest_dir(), "--wire-key", path, NULL };
		const char *log, *nl;
		int st;

		snprintf(path, sizeof(path), "%s/%s", itest_dir(),
			 cases[i].file);
		if (cases[i].text != NULL)
			write_file(path, cases[i].text, cases[i].mode);
		st = itest_spinnic_run(args, 10000);
		log = itest_spinnic_log();
		ITEST_CHECK(st != 0, "--wire-key %s accepted", cases[i].file);
		ITEST_CHECK(strstr(log, "spinnic: --wire-key: ") == log &&
			    strstr(log, cases[i].want) != NULL,
			    "--wire-key %s: want one line with '%s', got: %s",
			    cases[i].file, cases[i].want, log);
		nl = strchr(log, '\n');
		ITEST_CHECK(nl != NULL && nl[1] == '\0' &&
			    strstr(log, "EAL") == NULL,
			    "--wire-key %s: more than one line (EAL started?): %s",
			    cases[i].file, log);
	}
	/* the good one as a check of the harness: accepted, then --help */
	{
		const char *args[] = { "--", "--wire-key", good, "--help",
				       NULL };

		ITEST_CHECK(itest_spinnic_run(args, 10000) == 0,
			    "--wire-key with a good file refused: %s",
			    itest_spinnic_log());
		ITEST_CHECK(strstr(itest_spinnic_log(), "--wire-key FILE") !=
			    NULL, "--help does not list --wire-key");
	}
	printf("ok: bad key files refused before the EAL, one line each\n");
}

/* 2: both virtual nodes keyed */
static void
virtual_keyed(const char *key)
{
	static const struct {
		const char *what, *op, *len, *tbuf, *ibuf;
		unsigned tnode;
	} cases[] = {
		{ "put 1 B", "put", "len=1", "buf=region", "buf=region", 1 },
		{ "put 2048 B (one full packet)", "put", "len=2048",
		  "buf=region", "buf=malloc", 1 },
		{ "put 1 MiB", "put", "len=1048576", "buf=region",
		  "buf=region", 1 },
		{ "put 0 B", "put", "len=0", "buf=region", "buf=region", 1 },
		{ "put 100000 B loopback", "put", "len=100000", "buf=malloc",
		  "buf=region", 0 },
		{ "get 1 B", "get", "len=1", "buf=region", "buf=region", 1 },
		{ "get 1 MiB", "get", "len=1048576", "buf=malloc",
		  "buf=region", 1 },
	};
	const char *extra[] = { "--wire-key", key, NULL };
	unsigned i, node;

	itest_spinnic_start(extra);
	ITEST_CHECK(strstr(itest_spinnic_log(), "wire: authenticated") != NULL,
		    "no 'wire: authenticated' line at start");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* puts twice (count=2), gets once */
		bool put = strcmp(cases[i].op, "put") == 0;
		char op[16], what[96];
		const char *t[] = { "target", op, cases[i].len, cases[i].tbuf,
				    "match=0x77", "seed=21",
				    put ? "count=2" : NULL, NULL };
		const char *in[] = { cases[i].op, cases[i].len, cases[i].ibuf,
				     "match=0x77", "seed=21",
				     put ? "count=2" : NULL, NULL };

		snprintf(op, sizeof(op), "op=%s", cases[i].op);
		snprintf(what, sizeof(what), "keyed: %s node0->node%u",
			 cases[i].what, cases[i].tnode);
		itest_run_pair(what, cases[i].tnode, t, 0, in);
	}
	itest_spinnic_finish();
	itest_expect_no_drops();
	itest_expect_no_leaks();
	for (node = 0; node < 2; node++) {
		long long sealed = itest_counter(node, "sealed");
		long long pkts = itest_counter(node, "pkts");

		ITEST_CHECK(sealed > 0, "node %u sealed %lld frames", node,
			    sealed);
		ITEST_CHECK(itest_counter(node, "seal_failed") == 0,
			    "node %u: frames it could not seal", node);
		/* rx pkts comes first in the block: every frame received
		 * passed the MAC (no drop auth / unseq lines); under
		 * injected corruption the MAC is what catches it (sealed
		 * frames carry no UDP checksum) */
		ITEST_CHECK(pkts > 0, "node %u received nothing", node);
		ITEST_CHECK(itest_counter(node, "drop unseq") < 0,
			    "node %u: unsequenced frames in its cluster", node);
		if (getenv("SPINNIC_ITEST_FAULTS") == NULL)
			ITEST_CHECK(itest_counter(node, "drop auth") < 0,
				    "node %u refused frames of its own cluster",
				    node);
		else
			printf("node %u: %lld corrupted frames refused by the "
			       "MAC\n", node, itest_counter(node, "drop auth"));
	}
	printf("ok: --virtual 2 --wire-key: puts and gets, every frame sealed "
	       "(%lld, %lld), none refused\n", itest_counter(0, "sealed"),
	       itest_counter(1, "sealed"));
}

/* ---- 3: two processes over memif ----------------------------------------- */

struct proc {
	pid_t pid;
	char log[400];
	char name[8];
};

static char *
read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *t = NULL;
	long n;

	if (f == NULL)
		return calloc(1, 1);
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		t = calloc(1, (size_t)n + 1);
		rewind(f);
		if (t != NULL && fread(t, 1, (size_t)n, f) != (size_t)n)
			t[0] = '\0';
	}
	fclose(f);
	return t != NULL ? t : calloc(1, 1);
}

/* Value after "NAME " in a final counters block of @p p's log, or -1. */
static long long
proc_counter(const struct proc *p, const char *name)
{
	char *t = read_text(p->log), *c, *s;
	long long v = -1;

	c = strstr(t, "--- spinnic counters");
	if (c != NULL && (s = strstr(c, name)) != NULL)
		sscanf(s + strlen(name), " %lld", &v);
	free(t);
	return v;
}

static unsigned
second_cpu(void)
{
	cpu_set_t set;
	unsigned i, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set) && n++ == 1)
			return i;
	return 0;
}

/* Node @p nid alone in a process, on one end of a memif link. */
static void
proc_start(struct proc *p, unsigned nid, const char *key,
	   const char *peer_timeout)
{
	static const char *const unavailable[] = {
		"EAL: FATAL", "Cannot init EAL", "EAL: Cannot", "No probed",
		"no ports", "Cannot allocate", "Cannot create mbuf pool",
	};
	char lcore[16], prefix[64], vdev[400], sock[400], nidb[16];
	const char *argv[40];
	unsigned n = 0, i, w;
	char *t;

	snprintf(p->name, sizeof(p->name), "nid%u", nid);
	snprintf(p->log, sizeof(p->log), "%s/%s.log", itest_dir(), p->name);
	unlink(p->log);
	snprintf(lcore, sizeof(lcore), "%u", nid == 0 ? 0 : second_cpu());
	snprintf(prefix, sizeof(prefix), "itest-wauth-%d-%u", (int)getpid(),
		 nid);
	snprintf(vdev, sizeof(vdev), "net_memif0,role=%s,id=0,socket=%s/memif.sock",
		 nid == 0 ? "server" : "client", itest_dir());
	snprintf(sock, sizeof(sock), "%s/node%u.sock", itest_dir(), nid);
	snprintf(nidb, sizeof(nidb), "%u", nid);
	argv[n++] = spinnic_bin();
	argv[n++] = "-l";
	argv[n++] = lcore;
	argv[n++] = "--no-pci";
	argv[n++] = "--no-huge";
	argv[n++] = "--no-shconf";
	argv[n++] = "-m";
	argv[n++] = "256";
	argv[n++] = "--file-prefix";
	argv[n++] = prefix;
	argv[n++] = "--vdev";
	argv[n++] = vdev;
	argv[n++] = "--";
	argv[n++] = "--socket";
	argv[n++] = sock;
	argv[n++] = "--nid-base";
	argv[n++] = nidb;
	/* memif frames are at most 1518 bytes (doc/NOTES.md) */
	argv[n++] = "--payload";
	argv[n++] = "1280";
	argv[n++] = "--peer-timeout-ms";
	argv[n++] = peer_timeout;
	if (key != NULL) {
		argv[n++] = "--wire-key";
		argv[n++] = key;
	}
	argv[n] = NULL;
	p->pid = itest_spawn(argv, p->log);
	for (w = 0; w < 2000; w++) {
		int st;

		t = read_text(p->log);
		if (strstr(t, "spinnic: ready") != NULL) {
			free(t);
			return;
		}
		if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
			for (i = 0; i < sizeof(unavailable) /
				     sizeof(unavailable[0]); i++)
				if (strstr(t, unavailable[i]) != NULL) {
					fprintf(stderr, "SKIP: spinnic on memif "
						"cannot start here:\n%s\n", t);
					exit(ITEST_SKIP);
				}
			itest_fail("%s exited before ready: %s", p->name, t);
		}
		free(t);
		usleep(10000);
	}
	itest_fail("%s not ready after 20 s", p->name);
}

static void
proc_stop(struct proc *p)
{
	struct itest_client me = { .pid = p->pid };
	int st;

	/* off the harness's list (it holds 32): stopped and reaped here */
	itest_client_forget(&me);
	st = itest_spawn_stop(p->pid, SIGTERM, 8000);

	ITEST_CHECK(st == 0, "%s: exit status %d", p->name, st);
	p->pid = -1;
}

/* itest_run_pair() for the nodes of proc_start() (the harness's own
 * spinnic is not running) */
static void
pair(const char *what, unsigned tnode, const char *const *targv,
     unsigned inode, const char *const *iargv)
{
	struct itest_client t, i;
	char target[64], pt[32], line[256];
	const char *av[16];
	unsigned nid, pid, ptn, n = 0;

	itest_client_ready(&t, tnode, what, targv, &nid, &pid, &ptn);
	snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
	snprintf(pt, sizeof(pt), "pt=%u", ptn);
	while (iargv[n] != NULL && n < 12) {
		av[n] = iargv[n];
		n++;
	}
	av[n++] = target;
	av[n++] = pt;
	av[n] = NULL;
	itest_client_start(&i, inode, what, av);
	itest_client_expect(&i, "ok", line, sizeof(line), 30000);
	ITEST_CHECK(itest_client_wait(&i, 5000) == 0, "%s: initiator failed",
		    what);
	itest_client_expect(&t, "ok", line, sizeof(line), 30000);
	ITEST_CHECK(itest_client_wait(&t, 5000) == 0, "%s: target failed",
		    what);
	itest_client_forget(&i);
	itest_client_forget(&t);
	printf("ok: %s\n", what);
}

/* an initiator on @p node that must fail UNDELIVERABLE (nothing of it
 * reaches the target) */
static void
expect_undeliverable(unsigned node, const char *what, const char *op,
		     const char *target)
{
	const char *argv[] = { op, "len=5000", target, "pt=0",
			       "expect=undeliverable", "seed=3", NULL };
	struct itest_client c;
	char line[512];
	int st;

	itest_client_start(&c, node, what, argv);
	itest_client_expect(&c, "ok", line, sizeof(line), 30000);
	st = itest_client_wait(&c, 10000);
	itest_client_forget(&c);
	ITEST_CHECK(st == 0, "%s: client exit status %d", what, st);
	printf("ok: %s: %s\n", what, line);
}

static void
two_processes(const char *key1, const char *key2)
{
	struct proc a, b;
	long long v;

	/* same key: the link works both ways */
	proc_start(&a, 0, key1, "3000");
	proc_start(&b, 1, key1, "3000");
	{
		const char *t[] = { "target", "op=put", "len=1048576",
				    "match=0x77", "seed=31", NULL };
		const char *in[] = { "put", "len=1048576", "match=0x77",
				     "seed=31", NULL };
		const char *tg[] = { "target", "op=get", "len=300000",
				     "buf=malloc", "match=0x12", "seed=32",
				     NULL };
		const char *ig[] = { "get", "len=300000", "match=0x12",
				     "seed=32", NULL };

		pair("memif, same key: put 1 MiB nid1->nid0", 0, t, 1, in);
		pair("memif, same key: put 1 MiB nid0->nid1", 1, t, 0, in);
		pair("memif, same key: get 300000 B nid0<-nid1", 1, tg, 0, ig);
	}
	proc_stop(&b);
	proc_stop(&a);
	ITEST_CHECK(proc_counter(&a, "sealed") > 0 &&
		    proc_counter(&b, "sealed") > 0, "memif: nothing sealed");
	ITEST_CHECK(proc_counter(&a, "drop auth") < 0 &&
		    proc_counter(&b, "drop auth") < 0,
		    "memif, same key: frames refused");
	printf("ok: memif, same key: puts and gets both ways\n");

	/* another key: nothing of nid 1 gets through */
	proc_start(&a, 0, key1, "600");
	proc_start(&b, 1, key2, "600");
	expect_undeliverable(1, "memif, other key: put nid1->nid0", "put",
			     "target=0:0");
	expect_undeliverable(1, "memif, other key: get nid0<-nid1", "get",
			     "target=0:0");
	proc_stop(&b);
	proc_stop(&a);
	v = proc_counter(&a, "drop auth");
	ITEST_CHECK(v > 0, "memif, other key: keyed node counted drop auth %lld",
		    v);
	ITEST_CHECK(proc_counter(&a, "matches") == 0,
		    "memif, other key: something matched at the keyed node");
	ITEST_CHECK(proc_counter(&b, "peer_fails") > 0,
		    "memif, other key: the sender never gave up its peer");
	printf("ok: memif, other key: %lld frames refused (drop auth)\n", v);

	/* no key: the same, and the keyed node cannot deliver to it */
	proc_start(&a, 0, key1, "600");
	proc_start(&b, 1, NULL, "600");
	expect_undeliverable(1, "memif, no key: put nid1->nid0", "put",
			     "target=0:0");
	expect_undeliverable(0, "memif, no key: put nid0->nid1 (keyed to "
			     "unkeyed)", "put", "target=1:0");
	proc_stop(&b);
	proc_stop(&a);
	v = proc_counter(&a, "drop auth");
	ITEST_CHECK(v > 0, "memif, no key: keyed node counted drop auth %lld",
		    v);
	ITEST_CHECK(proc_counter(&a, "matches") == 0 &&
		    proc_counter(&b, "matches") == 0,
		    "memif, no key: something matched");
	ITEST_CHECK(proc_counter(&b, "drop kind") > 0,
		    "memif, no key: the unkeyed node did not refuse F_AUTH");
	printf("ok: memif, no key: %lld frames refused (drop auth), %lld by "
	       "the unkeyed node (drop kind)\n", v,
	       proc_counter(&b, "drop kind"));
}

int
main(void)
{
	char k1[400], k2[400];

	itest_init("itest_wire_auth", 150);
	snprintf(k1, sizeof(k1), "%s/cluster.key", itest_dir());
	snprintf(k2, sizeof(k2), "%s/other.key", itest_dir());
	write_file(k1, KEY1, 0600);
	write_file(k2, KEY2, 0400);
	if (getenv("SPINNIC_ITEST_FAULTS") == NULL)
		bad_key_files(k1);
	virtual_keyed(k1);
	if (getenv("SPINNIC_ITEST_FAULTS") == NULL)
		two_processes(k1, k2);
	return 0;
}
