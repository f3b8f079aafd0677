/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Integration-test harness (harness.h). spinnic's stdout and stderr go to
 * a log file in the test's directory; the harness polls that file for the
 * ready line, so nothing blocks on a pipe spinnic might never write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"

#define MAX_CLIENTS 32
#define READY_LINE "spinnic: ready"
#define START_TIMEOUT_MS 20000
#define STOP_GRACE_MS 5000

static const char *test_name = "itest";
static char dir[256];
static char log_path[300];
static pid_t spinnic_pid = -1;
static pid_t clients[MAX_CLIENTS];
static unsigned nb_clients;
static char *log_text;
static int exiting;
/* virtual nodes of the next spinnic (itest_set_nodes) */
static unsigned nb_nodes = 2;
static char nb_nodes_arg[8] = "2";
/* SPINNIC_ITEST_LINK (harness.h): two spinnic processes, one node each,
 * linked by a port instead of one --virtual spinnic */
enum { LINK_VIRTUAL, LINK_MEMIF, LINK_AFXDP };
static int link_kind = -1;               /* -1: not read yet */
static pid_t link_pids[2] = { -1, -1 };
static char link_logs[2][300];
static char link_ns[2][48];               /* af_xdp: the namespaces */

static void link_ns_del(void);

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void
forget_client(pid_t pid)
{
	unsigned i;

	for (i = 0; i < nb_clients; i++)
		if (clients[i] == pid)
			clients[i] = -1;
}

/* Async-signal-safe part of the cleanup: kill what we started. */
static void
kill_all(int sig)
{
	unsigned i;

	for (i = 0; i < nb_clients; i++)
		if (clients[i] > 0)
			kill(clients[i], SIGKILL);
	if (spinnic_pid > 0)
		kill(-spinnic_pid, sig); /* its process group */
	for (i = 0; i < 2; i++)
		if (link_pids[i] > 0)
			kill(-link_pids[i], sig);
}

static void
dump_log(void)
{
	const char *l = itest_spinnic_log();

	if (l[0] != '\0')
		fprintf(stderr, "---- spinnic output ----\n%s---- end ----\n", l);
}

static void
remove_dir(void)
{
	char cmd[300];

	if (dir[0] == '\0')
		return;
	/* sockets and the log; the name came from mkdtemp */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s: could not remove %s\n", test_name, dir);
	dir[0] = '\0';
}

static void
cleanup(void)
{
	unsigned i;

	exiting = 1;
	for (i = 0; i < nb_clients; i++)
		if (clients[i] > 0) {
			kill(clients[i], SIGKILL);
			waitpid(clients[i], NULL, 0);
			clients[i] = -1;
		}
	if (spinnic_pid > 0 || link_pids[0] > 0 || link_pids[1] > 0)
		itest_spinnic_stop();
	link_ns_del();
	remove_dir();
}

static void
on_alarm(int sig)
{
	static const char msg[] = "itest: TIMEOUT, killing everything\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	kill_all(SIGKILL);
	link_ns_del();
	_exit(1);
}

static void
on_term(int sig)
{
	kill_all(SIGKILL);
	link_ns_del();
	_exit(128 + sig);
}

void
itest_init(const char *name, unsigned timeout_s)
{
	const char *tmp = getenv("TMPDIR");

	test_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	alarm(timeout_s);
	snprintf(dir, sizeof(dir), "%s/spinnic-itest-XXXXXX",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "%s: mkdtemp: %s\n", name, strerror(errno));
		dir[0] = '\0';
		exit(1);
	}
	snprintf(log_path, sizeof(log_path), "%s/spinnic.log", dir);
	atexit(cleanup);
}

/* A failing test with spinnic still running: every thread's stack, for
 * a hang whose cause the log cannot show (gdb, where installed; 20 s at
 * most, then SIGKILL: a gdb stuck attaching once ignored timeout's
 * SIGTERM for 15 minutes and held the failing test; SPINNIC_ITEST_STACKS=0
 * skips it) */
static void
spinnic_stacks(void)
{
	const char *e = getenv("SPINNIC_ITEST_STACKS");
	char cmd[200];

	if (spinnic_pid <= 0 || (e != NULL && strcmp(e, "0") == 0) ||
	    access("/usr/bin/gdb", X_OK) != 0 || kill(spinnic_pid, 0) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "timeout -k 2 20 /usr/bin/gdb -p %d -batch -nx "
		 "-ex 'thread apply all bt' </dev/null 1>&2 2>/dev/null",
		 (int)spinnic_pid);
	fprintf(stderr, "---- spinnic's threads (gdb) ----\n");
	fflush(stderr);
	if (system(cmd) != 0)
		fprintf(stderr, "(gdb could not attach)\n");
	fprintf(stderr, "---- end ----\n");
}

void
itest_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: FAIL: ", test_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (!exiting) {
		spinnic_stacks();
		kill_all(SIGKILL);
		if (spinnic_pid > 0) {
			waitpid(spinnic_pid, NULL, 0);
			spinnic_pid = -1;
		}
		for (unsigned i = 0; i < 2; i++)
			if (link_pids[i] > 0) {
				waitpid(link_pids[i], NULL, 0);
				link_pids[i] = -1;
			}
		dump_log();
	}
	exit(1);
}

/* ---- two spinnic processes linked by a port (SPINNIC_ITEST_LINK) -------- */

static int
link_kind_get(void)
{
	const char *e;

	if (link_kind >= 0)
		return link_kind;
	e = getenv("SPINNIC_ITEST_LINK");
	if (e == NULL || e[0] == '\0')
		link_kind = LINK_VIRTUAL;
	else if (strcmp(e, "memif") == 0)
		link_kind = LINK_MEMIF;
	else if (strcmp(e, "afxdp") == 0)
		link_kind = LINK_AFXDP;
	else {
		link_kind = LINK_VIRTUAL;
		itest_fail("SPINNIC_ITEST_LINK=%s: want memif or afxdp", e);
	}
	return link_kind;
}

static bool
link_on(void)
{
	return link_kind_get() != LINK_VIRTUAL;
}

unsigned
itest_link_nodes(void)
{
	return link_on() ? 2 : 0;
}

pid_t
itest_spinnic_pid(void)
{
	return spinnic_pid;
}

pid_t
itest_link_pid(unsigned node)
{
	return node < 2 ? link_pids[node] : -1;
}

/* the whole file, NUL-terminated, malloc'd (empty when unreadable) */
static char *
read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char *t = NULL;
	long n;

	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		t = calloc(1, (size_t)n + 1);
		rewind(f);
		if (t != NULL && fread(t, 1, (size_t)n, f) != (size_t)n)
			t[0] = '\0';
	}
	if (f != NULL)
		fclose(f);
	return t != NULL ? t : calloc(1, 1);
}

/* both processes' output, one after the other */
static const char *
link_log(void)
{
	char *a = read_all(link_logs[0]), *b = read_all(link_logs[1]);
	size_t n = (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 128;

	log_text = calloc(1, n);
	if (log_text != NULL)
		snprintf(log_text, n, "==== spinnic nid 0 ====\n%s"
			 "==== spinnic nid 1 ====\n%s", a ? a : "", b ? b : "");
	free(a);
	free(b);
	return log_text != NULL ? log_text : "";
}

/* `ip netns del` of the af_xdp namespaces (fork + exec: also from the
 * alarm and signal handlers) */
static void
link_ns_del(void)
{
	unsigned i;

	for (i = 0; i < 2; i++) {
		pid_t p;

		if (link_ns[i][0] == '\0')
			continue;
		p = fork();
		if (p == 0) {
			int null = open("/dev/null", O_WRONLY);

			if (null >= 0) {
				dup2(null, 1);
				dup2(null, 2);
			}
			execl("/bin/sh", "sh", "-c", "exec ip netns del \"$0\"",
			      link_ns[i], (char *)NULL);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
		link_ns[i][0] = '\0';
	}
}

static void __attribute__((noreturn))
link_skip(const char *why)
{
	fprintf(stderr, "%s: SKIP: %s\n", test_name, why);
	exit(ITEST_SKIP);
}

/* af_xdp: a veth pair, one end in each of two network namespaces, as
 * test/wire/test_afxdp.sh sets it up; 77 when this machine cannot */
static void
link_afxdp_setup(const char *obj)
{
	char cmd[1024];
	unsigned i;

	if (geteuid() != 0)
		link_skip("SPINNIC_ITEST_LINK=afxdp needs root (network "
			  "namespaces, XDP)");
	if (access(obj, R_OK) != 0)
		link_skip("no XDP object (clang or libbpf-dev missing at "
			  "build)");
	if (system("command -v ip >/dev/null 2>&1") != 0)
		link_skip("ip (iproute2) is not installed");
	for (i = 0; i < 2; i++) {
		snprintf(link_ns[i], sizeof(link_ns[i]), "snxl-%c-%d",
			 'a' + (int)i, (int)getpid());
		snprintf(cmd, sizeof(cmd), "ip netns add %s 2>/dev/null",
			 link_ns[i]);
		if (system(cmd) != 0) {
			link_ns[i][0] = '\0';
			link_skip("cannot create a network namespace");
		}
	}
	/* one queue each way: every packet arrives on rx queue 0 */
	snprintf(cmd, sizeof(cmd), "ip -n %s link add va numtxqueues 1 "
		 "numrxqueues 1 type veth peer name vb netns %s numtxqueues 1 "
		 "numrxqueues 1 2>/dev/null", link_ns[0], link_ns[1]);
	if (system(cmd) != 0)
		link_skip("no veth");
	for (i = 0; i < 2; i++) {
		snprintf(cmd, sizeof(cmd), "ip -n %s addr add 10.179.0.%u/24 "
			 "dev v%c && ip -n %s link set v%c mtu 3000 up && "
			 "ip -n %s link set lo up", link_ns[i], i + 1,
			 'a' + (int)i, link_ns[i], 'a' + (int)i, link_ns[i]);
		ITEST_CHECK(system(cmd) == 0, "af_xdp: %s", cmd);
	}
}

static unsigned
link_second_cpu(void)
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

/*
 * In a spinnic child before exec: the NIC ahead of the test's ranks. On
 * the 2-core machine, 16 ranks of one test and 16 of another left each
 * busy-polling spinnic lcore about 4% of a CPU (its fair share among
 * ~34 runnable threads): coll_memif_results_p16 ran for over 8 minutes
 * beside group_patterns_p16, where it takes 50 s alone. A real NIC is
 * hardware beside the host's cores; nice -10 gives spinnic about 9 times
 * a rank's share. Root only (CI runs as root); others run as they are.
 */
static void
nic_priority(void)
{
	(void)!setpriority(PRIO_PROCESS, 0, -10);
}

/* Node @p nid alone in its own spinnic process on one end of the link
 * (memif as test/integration/itest_wire_auth.c, af_xdp as
 * test/wire/test_afxdp.sh). */
static void
link_spawn(unsigned nid, const char *bin, const char *const *extra)
{
	static char lcore[16], prefix[2][64], vdev[2][600], sock[2][320],
		nidb[2][16], faults[256];
	const char *argv[80];
	unsigned n = 0, i;
	int fd;

	snprintf(lcore, sizeof(lcore), "%u", nid == 0 ? 0 : link_second_cpu());
	snprintf(prefix[nid], sizeof(prefix[nid]), "itest-link-%d-%u",
		 (int)getpid(), nid);
	if (link_kind == LINK_MEMIF)
		snprintf(vdev[nid], sizeof(vdev[nid]),
			 "net_memif0,role=%s,id=0,socket=%s/memif.sock",
			 nid == 0 ? "server" : "client", dir);
	else
		snprintf(vdev[nid], sizeof(vdev[nid]), "net_af_xdp0,iface=v%c,"
			 "start_queue=0,queue_count=1,xdp_prog=%s/bpf/"
			 "spinnic_xdp.o", 'a' + (int)nid,
			 getenv("SPINNIC_BUILD_DIR"));
	snprintf(sock[nid], sizeof(sock[nid]), "%s/node%u.sock", dir, nid);
	snprintf(nidb[nid], sizeof(nidb[nid]), "%u", nid);
	if (link_kind == LINK_AFXDP) {
		argv[n++] = "ip";
		argv[n++] = "netns";
		argv[n++] = "exec";
		argv[n++] = link_ns[nid];
	}
	argv[n++] = bin;
	argv[n++] = "-l";
	argv[n++] = nid == 0 ? "0" : lcore;
	argv[n++] = "--no-pci";
	argv[n++] = "--no-huge";
	argv[n++] = "--no-shconf";
	argv[n++] = "-m";
	argv[n++] = "512";
	argv[n++] = "--file-prefix";
	argv[n++] = prefix[nid];
	argv[n++] = "--vdev";
	argv[n++] = vdev[nid];
	argv[n++] = "--";
	argv[n++] = "--socket";
	argv[n++] = sock[nid];
	argv[n++] = "--nid-base";
	argv[n++] = nidb[nid];
	/* memif frames are at most 1518 bytes (doc/NOTES.md) */
	if (link_kind == LINK_MEMIF) {
		argv[n++] = "--payload";
		argv[n++] = "1280";
	}
	/*
	 * A loaded 2-core machine (CI, load 15-28) left a memif peer
	 * unanswered for 5 s, the default --peer-timeout-ms: every
	 * outstanding operation to it failed (PTL_NI_UNDELIVERABLE) and
	 * the collectives' waits ended with -EIO (coll_memif_results_p16
	 * and _p7 failed so). A link here is two processes on one machine,
	 * not a network: 60 s. A test's own --peer-timeout-ms (coll_lost_*)
	 * comes later in argv and wins.
	 */
	argv[n++] = "--peer-timeout-ms";
	argv[n++] = "60000";
	for (i = 0; extra != NULL && extra[i] != NULL && n < 60; i++)
		argv[n++] = extra[i];
	if (getenv("SPINNIC_ITEST_HANDLERS") != NULL && n < 62) {
		argv[n++] = "--handlers";
		argv[n++] = getenv("SPINNIC_ITEST_HANDLERS");
	}
	if (getenv("SPINNIC_ITEST_FAULTS") != NULL) {
		char *save = NULL, *tok;

		snprintf(faults, sizeof(faults), "%s",
			 getenv("SPINNIC_ITEST_FAULTS"));
		for (tok = strtok_r(faults, " ", &save);
		     tok != NULL && n < 74; tok = strtok_r(NULL, " ", &save)) {
			argv[n++] = "--fault-inject";
			argv[n++] = tok;
		}
		argv[n++] = "--fault-seed";
		argv[n++] = nid == 0 ? "11" : "12";
	}
	argv[n] = NULL;

	snprintf(link_logs[nid], sizeof(link_logs[nid]), "%s/spinnic-nid%u.log",
		 dir, nid);
	fd = open(link_logs[nid], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND,
		  0600);
	if (fd < 0)
		itest_fail("%s: %s", link_logs[nid], strerror(errno));
	link_pids[nid] = fork();
	if (link_pids[nid] < 0)
		itest_fail("fork: %s", strerror(errno));
	if (link_pids[nid] == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		setpgid(0, 0);
		nic_priority();
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(link_pids[nid], link_pids[nid]);
	close(fd);
}

/* wait for nid's ready line; 77 when the port cannot run here */
static void
link_ready(unsigned nid)
{
	static const char *const unavailable[] = {
		"EAL: FATAL", "Cannot init EAL", "EAL: Cannot", "No probed",
		"no ports", "Cannot allocate", "Cannot create mbuf pool",
		"Failed to create xsk socket", "xsk_socket__create",
		"Address family not supported",
	};
	uint64_t t0 = now_ms();
	unsigned i;

	for (;;) {
		char *t = read_all(link_logs[nid]);
		int st;

		if (strstr(t, READY_LINE) != NULL) {
			free(t);
			return;
		}
		if (waitpid(link_pids[nid], &st, WNOHANG) == link_pids[nid]) {
			link_pids[nid] = -1;
			for (i = 0; i < sizeof(unavailable) /
				     sizeof(unavailable[0]); i++)
				if (strstr(t, unavailable[i]) != NULL) {
					fprintf(stderr, "%s: SKIP: spinnic on "
						"%s cannot start here:\n%s\n",
						test_name,
						getenv("SPINNIC_ITEST_LINK"), t);
					free(t);
					exit(ITEST_SKIP);
				}
			free(t);
			itest_fail("spinnic nid %u exited before ready "
				   "(status 0x%x)", nid, st);
		}
		free(t);
		if (now_ms() - t0 > START_TIMEOUT_MS)
			itest_fail("spinnic nid %u not ready after %u ms", nid,
				   START_TIMEOUT_MS);
		sleep_ms(20);
	}
}

static void
link_start(const char *bin, const char *const *extra)
{
	char obj[600];

	if (nb_nodes != 2)
		itest_fail("SPINNIC_ITEST_LINK: %u nodes asked, a link has 2",
			   nb_nodes);
	if (link_kind == LINK_AFXDP) {
		snprintf(obj, sizeof(obj), "%s/bpf/spinnic_xdp.o",
			 getenv("SPINNIC_BUILD_DIR"));
		link_afxdp_setup(obj);
	}
	/* the memif server first: the client connects to its socket */
	link_spawn(0, bin, extra);
	link_ready(0);
	link_spawn(1, bin, extra);
	link_ready(1);
	fprintf(stderr, "%s: two spinnic processes (nid 0, nid 1) linked by "
		"%s\n", test_name, getenv("SPINNIC_ITEST_LINK"));
}

static bool
link_alive(void)
{
	unsigned i;
	int st;

	for (i = 0; i < 2; i++) {
		if (link_pids[i] <= 0)
			return false;
		if (waitpid(link_pids[i], &st, WNOHANG) == link_pids[i]) {
			link_pids[i] = -1;
			return false;
		}
	}
	return true;
}

/* SIGTERM each, nid 1 first, and wait for it before the next: DPDK
 * 22.11's memif PMD handles the peer's disconnect in its interrupt thread
 * and crashed (SIGSEGV in the EAL) when that came while its own process
 * was in rte_eal_cleanup() (both stopped at once: 2 of about 40 runs
 * of itest_put); stopped in turn, the survivor sees the disconnect while it
 * runs. @return 0 when both exited 0 */
static int
link_stop(void)
{
	int ret = 0;
	unsigned k;

	for (k = 0; k < 2; k++) {
		unsigned i = 1 - k;
		uint64_t t0 = now_ms();
		int st;

		if (link_pids[i] <= 0) {
			ret = -1;
			continue;
		}
		kill(link_pids[i], SIGTERM);
		for (;;) {
			if (waitpid(link_pids[i], &st, WNOHANG) ==
			    link_pids[i]) {
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					fprintf(stderr, "%s: spinnic nid %u: "
						"status 0x%x\n", test_name, i,
						(unsigned)st);
					ret = WIFEXITED(st) ?
					      WEXITSTATUS(st) : -1;
				}
				break;
			}
			if (now_ms() - t0 > STOP_GRACE_MS) {
				fprintf(stderr, "%s: spinnic nid %u ignored "
					"SIGTERM, killing\n", test_name, i);
				kill(-link_pids[i], SIGKILL);
				waitpid(link_pids[i], &st, 0);
				ret = -1;
				break;
			}
			sleep_ms(10);
		}
		link_pids[i] = -1;
	}
	return ret;
}

const char *
itest_spinnic_log(void)
{
	FILE *f;
	long n;

	free(log_text);
	log_text = NULL;
	if (link_on())
		return link_log();
	f = log_path[0] != '\0' ? fopen(log_path, "r") : NULL;
	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		log_text = calloc(1, (size_t)n + 1);
		rewind(f);
		if (log_text != NULL && fread(log_text, 1, (size_t)n, f) != (size_t)n)
			log_text[0] = '\0';
	}
	if (f != NULL)
		fclose(f);
	if (log_text == NULL)
		log_text = calloc(1, 1);
	return log_text != NULL ? log_text : "";
}

/* spinnic failed before ready: a lack of resources is a skip. */
static bool
start_failure_is_resources(int status)
{
	static const char *const signs[] = {
		"EAL initialization failed", "Cannot init EAL", "EAL: Cannot",
		"EAL: FATAL",
		"Cannot allocate", "cannot allocate", "No free hugepages",
		"Cannot create mbuf pool", "mempool", "hugepage",
		"Cannot get hugepage", "Out of memory", "ENOMEM",
		"lack of resources",
	};
	const char *l = itest_spinnic_log();
	size_t i;

	if (WIFEXITED(status) && WEXITSTATUS(status) == ITEST_SKIP)
		return true;
	for (i = 0; i < sizeof(signs) / sizeof(signs[0]); i++)
		if (strstr(l, signs[i]) != NULL)
			return true;
	return false;
}

/* Start spinnic in its own process group, its output into the log. */
static void
spinnic_spawn(const char *bin, const char *const *argv)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);

	if (fd < 0)
		itest_fail("%s: %s", log_path, strerror(errno));
	spinnic_pid = fork();
	if (spinnic_pid < 0)
		itest_fail("fork: %s", strerror(errno));
	if (spinnic_pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		setpgid(0, 0);
		nic_priority();
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	/* also here: the child may not have run yet when we kill it */
	setpgid(spinnic_pid, spinnic_pid);
	close(fd);
}

void
itest_spinnic_start(const char *const *extra)
{
	const char *bdir = getenv("SPINNIC_BUILD_DIR");
	char bin[512], sdir[300];
	const char *argv[64];
	unsigned argc = 0, i;
	uint64_t t0;
	int status;

	if (bdir == NULL)
		itest_fail("SPINNIC_BUILD_DIR is not set (run through meson test)");
	snprintf(bin, sizeof(bin), "%s/app/spinnic/spinnic", bdir);
	if (access(bin, X_OK) != 0)
		itest_fail("%s: %s", bin, strerror(errno));
	if (link_on()) {
		link_start(bin, extra);
		return;
	}
	snprintf(sdir, sizeof(sdir), "%s", dir);
	argv[argc++] = bin;
	argv[argc++] = "--";
	argv[argc++] = "--virtual";
	argv[argc++] = nb_nodes_arg;
	argv[argc++] = "--socket-dir";
	argv[argc++] = sdir;
	for (i = 0; extra != NULL && extra[i] != NULL && argc < 54; i++)
		argv[argc++] = extra[i];
	/* SPINNIC_ITEST_HANDLERS=PLUGIN (harness.h): --handlers PLUGIN */
	if (getenv("SPINNIC_ITEST_HANDLERS") != NULL) {
		argv[argc++] = "--handlers";
		argv[argc++] = getenv("SPINNIC_ITEST_HANDLERS");
	}
	/* SPINNIC_ITEST_FAULTS="SPEC [SPEC]": --fault-inject SPEC for every
	 * spinnic of the test (meson's *_lossy variants, DESIGN §11) */
	if (getenv("SPINNIC_ITEST_FAULTS") != NULL) {
		static char specs[256];
		char *save = NULL, *tok;

		snprintf(specs, sizeof(specs), "%s",
			 getenv("SPINNIC_ITEST_FAULTS"));
		for (tok = strtok_r(specs, " ", &save);
		     tok != NULL && argc < 60; tok = strtok_r(NULL, " ", &save)) {
			argv[argc++] = "--fault-inject";
			argv[argc++] = tok;
		}
		argv[argc++] = "--fault-seed";
		argv[argc++] = "11";
	}
	argv[argc] = NULL;

	spinnic_spawn(bin, argv);

	t0 = now_ms();
	for (;;) {
		pid_t r = waitpid(spinnic_pid, &status, WNOHANG);

		if (strstr(itest_spinnic_log(), READY_LINE) != NULL)
			return;
		if (r == spinnic_pid) {
			spinnic_pid = -1;
			if (start_failure_is_resources(status)) {
				fprintf(stderr, "%s: SKIP: spinnic cannot start "
					"(resources)\n", test_name);
				dump_log();
				exit(ITEST_SKIP);
			}
			itest_fail("spinnic exited before ready (status 0x%x)",
				   status);
		}
		if (now_ms() - t0 > START_TIMEOUT_MS)
			itest_fail("spinnic not ready after %u ms",
				   START_TIMEOUT_MS);
		sleep_ms(20);
	}
}

bool
itest_spinnic_alive(void)
{
	int status;

	if (link_on())
		return link_alive();
	if (spinnic_pid <= 0)
		return false;
	if (waitpid(spinnic_pid, &status, WNOHANG) == spinnic_pid) {
		spinnic_pid = -1;
		return false;
	}
	return true;
}

int
itest_spinnic_stop(void)
{
	uint64_t t0 = now_ms();
	int status;

	if (link_on() && (link_pids[0] > 0 || link_pids[1] > 0))
		return link_stop();
	if (spinnic_pid <= 0)
		return -1;
	kill(spinnic_pid, SIGTERM);
	for (;;) {
		if (waitpid(spinnic_pid, &status, WNOHANG) == spinnic_pid)
			break;
		if (now_ms() - t0 > STOP_GRACE_MS) {
			fprintf(stderr, "%s: spinnic ignored SIGTERM, killing\n",
				test_name);
			kill(-spinnic_pid, SIGKILL);
			waitpid(spinnic_pid, &status, 0);
			spinnic_pid = -1;
			return -1;
		}
		sleep_ms(10);
	}
	spinnic_pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const char *
itest_socket_path(unsigned node)
{
	static char path[300];

	snprintf(path, sizeof(path), "%s/node%u.sock", dir, node);
	return path;
}

void
itest_client_start(struct itest_client *c, unsigned node, const char *name,
		   const char *const *argv)
{
	const char *bdir = getenv("SPINNIC_BUILD_DIR");
	char bin[512], sock[300];
	const char *av[64];
	int out[2], in[2];
	unsigned n = 0;

	if (nb_clients >= MAX_CLIENTS)
		itest_fail("too many clients");
	/* SPINNIC_ITEST_CLIENT: another build of itest_client (itest_heap's,
	 * linked with the shared libspinnic) */
	if (getenv("SPINNIC_ITEST_CLIENT") != NULL)
		snprintf(bin, sizeof(bin), "%s", getenv("SPINNIC_ITEST_CLIENT"));
	else
		snprintf(bin, sizeof(bin), "%s/test/integration/itest_client",
			 bdir);
	snprintf(sock, sizeof(sock), "%s/node%u.sock", dir, node);
	av[n++] = bin;
	while (argv[n - 1] != NULL && n < 63) {
		av[n] = argv[n - 1];
		n++;
	}
	av[n] = NULL;
	fprintf(stderr, "%s: %s on node %u: itest_client", test_name, name,
		node);
	for (n = 1; av[n] != NULL; n++)
		fprintf(stderr, " %s", av[n]);
	fprintf(stderr, "\n");
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(in, O_CLOEXEC) != 0)
		itest_fail("pipe: %s", strerror(errno));
	c->name = name;
	c->pid = fork();
	if (c->pid < 0)
		itest_fail("fork: %s", strerror(errno));
	if (c->pid == 0) {
		dup2(out[1], 1);
		dup2(in[0], 0);
		setenv("SPINNIC_SOCKET", sock, 1);
		execv(bin, (char *const *)av);
		fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(in[0]);
	c->out = out[0];
	c->in = in[1];
	clients[nb_clients++] = c->pid;
}

int
itest_client_line(struct itest_client *c, char *buf, size_t len,
		  unsigned timeout_ms)
{
	uint64_t t0 = now_ms();
	size_t n = 0;

	/* byte by byte: the rest of the stream stays in the pipe */
	while (n + 1 < len) {
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		uint64_t el = now_ms() - t0;
		ssize_t r;
		char ch;

		if (el >= timeout_ms) {
			fprintf(stderr, "%s: no line from %s in %u ms\n",
				test_name, c->name, timeout_ms);
			return -1;
		}
		if (poll(&p, 1, (int)(timeout_ms - el)) <= 0)
			continue;
		r = read(c->out, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "%s: %s closed its output\n",
				test_name, c->name);
			return -1;
		}
		if (ch == '\n')
			break;
		buf[n++] = ch;
	}
	buf[n] = '\0';
	fprintf(stderr, "%s> %s\n", c->name, buf);
	return 0;
}

void
itest_client_expect(struct itest_client *c, const char *prefix, char *buf,
		    size_t len, unsigned timeout_ms)
{
	uint64_t t0 = now_ms();

	for (;;) {
		uint64_t el = now_ms() - t0;

		if (el >= timeout_ms ||
		    itest_client_line(c, buf, len,
				      (unsigned)(timeout_ms - el)) != 0)
			itest_fail("%s: expected a line \"%s...\"", c->name,
				   prefix);
		if (strncmp(buf, prefix, strlen(prefix)) == 0)
			return;
	}
}

void
itest_client_say(struct itest_client *c, const char *line)
{
	size_t n = strlen(line);

	if (write(c->in, line, n) != (ssize_t)n || write(c->in, "\n", 1) != 1)
		itest_fail("%s: cannot write to it: %s", c->name,
			   strerror(errno));
}

int
itest_client_wait(struct itest_client *c, unsigned timeout_ms)
{
	uint64_t t0 = now_ms();
	int status;

	for (;;) {
		pid_t r = waitpid(c->pid, &status, WNOHANG);

		if (r == c->pid)
			break;
		if (now_ms() - t0 > timeout_ms) {
			fprintf(stderr, "%s: %s did not exit in %u ms\n",
				test_name, c->name, timeout_ms);
			itest_client_kill(c);
			return -1;
		}
		sleep_ms(5);
	}
	forget_client(c->pid);
	close(c->out);
	close(c->in);
	c->pid = -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void
itest_client_kill(struct itest_client *c)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	forget_client(c->pid);
	close(c->out);
	close(c->in);
	c->pid = -1;
}

static long long
counter_in(const char *l, unsigned node, const char *name)
{
	char hdr[32];
	const char *p, *end;

	/* the final counters: the last block of the node */
	snprintf(hdr, sizeof(hdr), "node %u", node);
	p = NULL;
	/* "node 1" is not "node 12" (itest_set_nodes: up to 16 nodes) */
	for (const char *q = strstr(l, hdr); q != NULL;
	     q = strstr(q + 1, hdr))
		if (q[strlen(hdr)] < '0' || q[strlen(hdr)] > '9')
			p = q;
	if (p == NULL)
		return -1;
	snprintf(hdr, sizeof(hdr), "node %u", node + 1);
	for (end = strstr(p, hdr); end != NULL &&
	     end[strlen(hdr)] >= '0' && end[strlen(hdr)] <= '9';
	     end = strstr(end + 1, hdr))
		;
	for (const char *q = strstr(p, name); q != NULL && (end == NULL || q < end);
	     q = strstr(q + 1, name)) {
		const char *v = q + strlen(name);

		/* whole word: not part of a longer counter name */
		if ((*v >= 'a' && *v <= 'z') || *v == '_' ||
		    (q > l && ((q[-1] >= 'a' && q[-1] <= 'z') || q[-1] == '_')))
			continue;
		while (*v != '\0' && *v != '\n' && (*v < '0' || *v > '9'))
			v++;
		if (*v >= '0' && *v <= '9')
			return strtoll(v, NULL, 10);
	}
	return -1;
}

long long
itest_counter(unsigned node, const char *name)
{
	char *t;
	long long v;

	if (!link_on())
		return counter_in(itest_spinnic_log(), node, name);
	/* a process of the link has one node, its node 0; its final block
	 * is its last "--- spinnic counters" (lines after it name node 0
	 * too) */
	if (node > 1)
		return -1;
	t = read_all(link_logs[node]);
	{
		const char *b = NULL, *q, *k;

		char *e;

		for (q = strstr(t, "--- spinnic counters"); q != NULL;
		     q = strstr(q + 1, "--- spinnic counters"))
			b = q;
		k = strstr(t, "mbufs kept by the af_xdp PMD's fill ring");
		/* the block ends where spinnic's own lines start again */
		if (b != NULL && (e = strstr(b, "\nspinnic: ")) != NULL)
			e[1] = '\0';
		v = b != NULL ? counter_in(b, 0, name) : -1;
		/* af_xdp: DPDK 22.11's PMD keeps the mbufs of its fill ring
		 * (the umem is the pool) at close; spinnic says how many,
		 * after the block. The rest must be back. */
		if (link_kind == LINK_AFXDP && v > 0 && k != NULL &&
		    (strcmp(name, "in_use") == 0 ||
		     strcmp(name, "mbufs_in_use") == 0)) {
			const char *d = k;
			long long kept;

			while (d > t && d[-1] != ':')
				d--;
			kept = strtoll(d, NULL, 10);
			if (kept > 0 && kept <= v)
				v -= kept;
		}
	}
	free(t);
	return v;
}

void
itest_client_ready(struct itest_client *c, unsigned node, const char *name,
		   const char *const *argv, unsigned *nid_p, unsigned *pid_p,
		   unsigned *pt_p)
{
	char line[256];

	itest_client_start(c, node, name, argv);
	itest_client_expect(c, "ready ", line, sizeof(line), 10000);
	if (sscanf(line, "ready %u %u %u", nid_p, pid_p, pt_p) != 3)
		itest_fail("%s: bad ready line \"%s\"", name, line);
}

/* both sides of an exchange print "ok" and exit 0 */
static void
pair_finish(const char *what, struct itest_client *t, struct itest_client *i)
{
	char line[256];
	int st;

	itest_client_expect(i, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(i, 5000);
	if (st != 0)
		itest_fail("%s: initiator exit status %d", what, st);
	itest_client_expect(t, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(t, 5000);
	if (st != 0)
		itest_fail("%s: target exit status %d", what, st);
	if (!itest_spinnic_alive())
		itest_fail("%s: spinnic died", what);
	fprintf(stderr, "%s: %s passed\n", test_name, what);
}

void
itest_run_pair(const char *what, unsigned tnode, const char *const *targv,
	       unsigned inode, const char *const *iargv)
{
	struct itest_client t, i;
	char target[64], pt[32], tname[96], iname[96];
	const char *av[64];
	unsigned nid, pid, ptn, n = 0;

	snprintf(tname, sizeof(tname), "%s/target", what);
	snprintf(iname, sizeof(iname), "%s/initiator", what);
	itest_client_ready(&t, tnode, tname, targv, &nid, &pid, &ptn);
	snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
	snprintf(pt, sizeof(pt), "pt=%u", ptn);
	while (iargv[n] != NULL && n < 60) {
		av[n] = iargv[n];
		n++;
	}
	av[n++] = target;
	av[n++] = pt;
	av[n] = NULL;
	itest_client_start(&i, inode, iname, av);
	pair_finish(what, &t, &i);
}

/* the argv of a typed client, built in place */
#define ARGV_MAX 24

struct client_argv {
	char s[ARGV_MAX][80];
	const char *av[ARGV_MAX + 1];
	unsigned n;
};

static void __attribute__((format(printf, 2, 3)))
argv_add(struct client_argv *a, const char *fmt, ...)
{
	va_list ap;

	if (a->n >= ARGV_MAX)
		itest_fail("more than %u client arguments", ARGV_MAX);
	va_start(ap, fmt);
	vsnprintf(a->s[a->n], sizeof(a->s[0]), fmt, ap);
	va_end(ap);
	a->av[a->n] = a->s[a->n];
	a->av[++a->n] = NULL;
}

/* the keys both roles share; a zero field keeps the client's default */
static void
argv_msg(struct client_argv *a, const struct itest_msg *m,
	 enum itest_buf buf)
{
	argv_add(a, "len=%" PRIu64, m->len);
	argv_add(a, "buf=%s", buf == ITEST_BUF_MALLOC ? "malloc" : "region");
	if (m->match != 0)
		argv_add(a, "match=0x%" PRIx64, m->match);
	if (m->seed != 0)
		argv_add(a, "seed=%" PRIu64, m->seed);
	if (m->count != 0)
		argv_add(a, "count=%u", m->count);
	if (m->nomatch)
		argv_add(a, "ni=nomatch");
}

void
itest_target_start(struct itest_client *c, unsigned node, const char *name,
		   const struct itest_msg *m, const struct itest_target_opts *o,
		   struct itest_peer *peer_p)
{
	struct client_argv a = { .n = 0 };

	argv_add(&a, "target");
	argv_add(&a, "op=%s", m->op == ITEST_GET ? "get" : "put");
	argv_msg(&a, m, o->buf);
	if (o->overflow)
		argv_add(&a, "list=overflow");
	if (o->handler != NULL)
		argv_add(&a, "handler=%s", o->handler);
	if (o->tail != 0)
		argv_add(&a, "tail=%" PRIu64, o->tail);
	if (o->vec.count != 0)
		argv_add(&a, "vec=%ld,%ld,%ld", o->vec.count,
			 o->vec.blocklen, o->vec.stride);
	itest_client_ready(c, node, name, a.av, &peer_p->nid, &peer_p->pid,
			   &peer_p->pt);
}

void
itest_initiator_start(struct itest_client *c, unsigned node, const char *name,
		      const struct itest_msg *m,
		      const struct itest_initiator_opts *o,
		      const struct itest_peer *peer)
{
	static const char *const expect[] = {
		[ITEST_EXPECT_OK] = "ok",
		[ITEST_EXPECT_FAIL] = "fail",
		[ITEST_EXPECT_SENDFAIL] = "sendfail",
		[ITEST_EXPECT_UNDELIVERABLE] = "undeliverable",
	};
	struct client_argv a = { .n = 0 };

	argv_add(&a, "%s", m->op == ITEST_GET ? "get" : "put");
	argv_msg(&a, m, o->buf);
	if (o->expect != ITEST_EXPECT_OK)
		argv_add(&a, "expect=%s", expect[o->expect]);
	if (o->window != 0)
		argv_add(&a, "window=%u", o->window);
	argv_add(&a, "target=%u:%u", peer->nid, peer->pid);
	argv_add(&a, "pt=%u", peer->pt);
	itest_client_start(c, node, name, a.av);
}

void
itest_pair_run(const char *what, const struct itest_pair *p)
{
	struct itest_client t, i;
	struct itest_peer peer;
	char tname[96], iname[96];

	snprintf(tname, sizeof(tname), "%s/target", what);
	snprintf(iname, sizeof(iname), "%s/initiator", what);
	itest_target_start(&t, p->tnode, tname, &p->msg, &p->t, &peer);
	itest_initiator_start(&i, p->inode, iname, &p->msg, &p->i, &peer);
	pair_finish(what, &t, &i);
}

/* spinnic's slow control operations (an ATTACH or a detach over 0.5 s,
 * an lcore stuck): repeated in the test's output, where a run under load
 * shows them */
static void
slow_lines(void)
{
	static const char *const marks[] = {
		"took", "has not finished a round", "waits: inbound",
	};
	const char *l = itest_spinnic_log(), *e;
	unsigned i;

	for (; l != NULL && *l != '\0'; l = e + (*e != '\0')) {
		e = strchr(l, '\n');
		if (e == NULL)
			e = l + strlen(l);
		for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
			const char *m = memmem(l, (size_t)(e - l), marks[i],
					       strlen(marks[i]));

			if (m != NULL) {
				fprintf(stderr, "%s: spinnic said: %.*s\n",
					test_name, (int)(e - l), l);
				break;
			}
		}
	}
}

void
itest_spinnic_finish(void)
{
	unsigned node;
	int st = itest_spinnic_stop();

	if (st != 0)
		itest_fail("spinnic exit status %d after SIGTERM", st);
	slow_lines();
	for (node = 0; node < nb_nodes; node++) {
		long long in_use = itest_counter(node, "in_use");
		long long clients = itest_counter(node, "clients");

		if (in_use != 0)
			itest_fail("node %u: %lld mbufs still in use at exit",
				   node, in_use);
		if (clients != 0)
			itest_fail("node %u: %lld clients attached at exit",
				   node, clients);
		if (itest_counter(node, "contexts") != 0)
			itest_fail("node %u: %lld sPIN contexts left at exit",
				   node, itest_counter(node, "contexts"));
	}
}

void
itest_expect_no_drops(void)
{
	unsigned node;

	for (node = 0; node < nb_nodes; node++) {
		long long d = itest_counter(node, "drops"), rd;

		/* under injected faults the losses are the point: what was
		 * dropped must have been resent (checked by the data) */
		if (getenv("SPINNIC_ITEST_FAULTS") != NULL) {
			fprintf(stderr, "%s: node %u: %lld drops, %lld "
				"retransmits (faults injected)\n", test_name,
				node, d, itest_counter(node, "retransmits"));
			continue;
		}
		/* a resend that was not needed (the peer was slow to ack,
		 * on a shared machine) arrives as a duplicate: not a loss */
		rd = itest_counter(node, "drop_rel_dup");
		if (rd > 0)
			d -= rd;
		/* nor is what a new session's sender sent before its epoch
		 * was verified (resent once the challenge is answered) */
		rd = itest_counter(node, "drop_rel_epoch");
		if (rd > 0)
			d -= rd;
		if (d != 0)
			itest_fail("node %u dropped %lld packets", node, d);
	}
}

/* ---- spinnic with explicit arguments ------------------------------------ */

const char *
itest_dir(void)
{
	return dir;
}

int
itest_spinnic_run(const char *const *args, unsigned timeout_ms)
{
	const char *bdir = getenv("SPINNIC_BUILD_DIR");
	char bin[512];
	const char *argv[64];
	unsigned argc = 0, i;
	uint64_t t0;
	int status;

	if (bdir == NULL)
		itest_fail("SPINNIC_BUILD_DIR is not set (run through meson test)");
	if (spinnic_pid > 0)
		itest_fail("itest_spinnic_run: spinnic already running");
	snprintf(bin, sizeof(bin), "%s/app/spinnic/spinnic", bdir);
	argv[argc++] = bin;
	for (i = 0; args[i] != NULL && argc < 63; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	spinnic_spawn(bin, argv);
	t0 = now_ms();
	for (;;) {
		if (waitpid(spinnic_pid, &status, WNOHANG) == spinnic_pid)
			break;
		if (now_ms() - t0 > timeout_ms) {
			fprintf(stderr, "%s: spinnic still running after %u ms, killing\n",
				test_name, timeout_ms);
			kill(-spinnic_pid, SIGKILL);
			waitpid(spinnic_pid, &status, 0);
			spinnic_pid = -1;
			return -1;
		}
		sleep_ms(10);
	}
	spinnic_pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
itest_log_word(const char *marker, char *out, size_t len)
{
	const char *p = strstr(itest_spinnic_log(), marker);
	size_t n = 0;

	if (p == NULL || len == 0)
		return -1;
	p += strlen(marker);
	while (p[n] != '\0' && p[n] != ' ' && p[n] != '\n' && p[n] != '\t' &&
	       p[n] != ';' && p[n] != ')' && n + 1 < len) {
		out[n] = p[n];
		n++;
	}
	out[n] = '\0';
	return n > 0 ? 0 : -1;
}

pid_t
itest_spawn(const char *const *argv, const char *log)
{
	pid_t pid;
	int fd;

	if (nb_clients >= MAX_CLIENTS)
		itest_fail("too many processes");
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		itest_fail("%s: %s", log, strerror(errno));
	pid = fork();
	if (pid < 0)
		itest_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd);
	clients[nb_clients++] = pid;
	return pid;
}

int
itest_spawn_stop(pid_t pid, int sig, unsigned timeout_ms)
{
	uint64_t t0 = now_ms();
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, sig);
	for (;;) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (now_ms() - t0 > timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			forget_client(pid);
			return -1;
		}
		sleep_ms(10);
	}
	forget_client(pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void
itest_client_forget(const struct itest_client *c)
{
	unsigned i;

	for (i = 0; i < nb_clients; i++) {
		if (clients[i] == c->pid) {
			clients[i] = clients[--nb_clients];
			return;
		}
	}
}

void
itest_expect_no_leaks(void)
{
	static const char *const names[] = {
		"clients_live", "regions_live", "region_bytes", "mes_live",
		"nic_mem_used", "ctxs_live", "blobs_live", "mbufs_in_use",
		"aa_logs_live",
	};
	unsigned node, i;

	for (node = 0; node < nb_nodes; node++)
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			long long v = itest_counter(node, names[i]);

			if (v != 0)
				itest_fail("node %u: %s %lld at exit, want 0%s",
					   node, names[i], v,
					   v < 0 ? " (not printed)" : "");
		}
}

void
itest_set_nodes(unsigned n)
{
	if (n < 1 || n > 16)
		itest_fail("itest_set_nodes: %u nodes (1..16)", n);
	nb_nodes = n;
	snprintf(nb_nodes_arg, sizeof(nb_nodes_arg), "%u", n);
}
