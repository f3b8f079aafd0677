/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture with dpdk-dumpcap: spinnic --capture (a multi-process EAL on
 * hugepages, rte_pdump_init), dpdk-dumpcap attached to node 0's port
 * while node 0 puts (one and several packets), gets and puts to nothing on
 * node 1; tshark with tools/spinnic.lua must decode DATA H/P/C and H|C,
 * ACK, NACK, GET and REPLY H/P/C frames without a malformed-packet note.
 * Exit 77 without tshark, dpdk-dumpcap (Debian: dpdk-dev) or hugepages.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define HUGE_MIN_MB 256ull

static char huge_prefix[128];   /* spinnic's file prefix, once known */
static char runtime_dir[256];   /* its EAL runtime directory */

/*
 * A spinnic killed by a failing test (SIGKILL) cannot remove the hugepage
 * and runtime files a multi-process EAL leaves: do it here (atexit, after
 * the harness killed and reaped it).
 */
static void
leftovers_remove(void)
{
	char cmd[1024], mnt[512], type[64], line[1024];
	FILE *f;

	if (huge_prefix[0] == '\0' || itest_spinnic_alive())
		return;
	f = fopen("/proc/mounts", "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*s %511s %63s", mnt, type) != 2 ||
		    strcmp(type, "hugetlbfs") != 0)
			continue;
		snprintf(cmd, sizeof(cmd), "rm -f '%s/%smap_'* 2>/dev/null",
			 mnt, huge_prefix);
		(void)system(cmd);
	}
	if (f != NULL)
		fclose(f);
	if (runtime_dir[0] == '/') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s' 2>/dev/null",
			 runtime_dir);
		(void)system(cmd);
	}
}

static void
skip(const char *why)
{
	fprintf(stderr, "itest_capture: SKIP: %s\n", why);
	exit(ITEST_SKIP);
}

/* Hugepages the EAL can use with a shared configuration: free pages of
 * the default size and a hugetlbfs mount. */
static bool
hugepages_usable(void)
{
	unsigned long long free_pages = 0, page_kb = 0, v;
	bool mounted = false;
	char line[512], type[64];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "HugePages_Free: %llu", &v) == 1)
			free_pages = v;
		else if (sscanf(line, "Hugepagesize: %llu kB", &v) == 1)
			page_kb = v;
	}
	fclose(f);
	f = fopen("/proc/mounts", "r");
	if (f == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%*s %*s %63s", type) == 1 &&
		    strcmp(type, "hugetlbfs") == 0)
			mounted = true;
	fclose(f);
	return mounted && free_pages * page_kb / 1024 >= HUGE_MIN_MB;
}

/* Whether the file at @p path contains @p s. */
static bool
file_has(const char *path, const char *s)
{
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, s) != NULL;
}

/* Lines of the file at @p path that start with @p prefix. */
static unsigned
lines_with(const char *path, const char *prefix)
{
	char line[1024];
	unsigned n = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, prefix, strlen(prefix)) == 0;
	fclose(f);
	return n;
}

static void
run_client(unsigned node, const char *name, const char *const *argv)
{
	struct itest_client c;
	char line[256];
	int st;

	itest_client_start(&c, node, name, argv);
	itest_client_expect(&c, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(&c, 5000);
	if (st != 0)
		itest_fail("%s: exit status %d", name, st);
}

int
main(void)
{
	/* the Info column of each kind (tools/spinnic.lua) */
	static const char *const kinds[] = {
		"PUT H msg", "PUT P msg", "PUT C msg", "PUT H|C msg",
		"ACK PUT msg", "NACK PUT msg", "GET msg", "REPLY GET H msg",
		"REPLY GET P msg", "REPLY GET C msg",
	};
	const char *src = getenv("SPINNIC_SOURCE_DIR");
	const char *const extra[] = { "--capture", NULL };
	char lua[512], prefix[128], port[128], marker[192], pcap[300];
	char dlog[300], tlog[300], terr[300], cmd[2048], fpx[160];
	char none_target[64], none_pt[32];
	const char *dumpcap[16];
	struct itest_client hold;
	unsigned nid, pid, ptn, i, tries;
	struct stat st;
	pid_t dpid;
	int rc;

	itest_init("itest_capture", 100);
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip("tshark not installed");
	if (system("command -v dpdk-dumpcap >/dev/null 2>&1") != 0)
		skip("dpdk-dumpcap not installed (Debian: dpdk-dev)");
	if (!hugepages_usable())
		skip("needs 256 MiB of free hugepages and a hugetlbfs mount");
	if (src == NULL)
		itest_fail("SPINNIC_SOURCE_DIR is not set (run through meson test)");
	snprintf(lua, sizeof(lua), "%s/tools/spinnic.lua", src);
	if (access(lua, R_OK) != 0)
		itest_fail("%s: %s", lua, strerror(errno));

	itest_spinnic_start(extra);
	if (itest_log_word("capture: node 0: dpdk-dumpcap --file-prefix=",
			   prefix, sizeof(prefix)) != 0)
		itest_fail("spinnic did not log the dpdk-dumpcap command");
	snprintf(marker, sizeof(marker),
		 "node 0: dpdk-dumpcap --file-prefix=%s -i ", prefix);
	if (itest_log_word(marker, port, sizeof(port)) != 0)
		itest_fail("spinnic did not log node 0's port name");
	snprintf(huge_prefix, sizeof(huge_prefix), "%s", prefix);
	if (itest_log_word("telemetry: ", runtime_dir,
			   sizeof(runtime_dir)) == 0 &&
	    strrchr(runtime_dir, '/') != NULL &&
	    strstr(runtime_dir, prefix) != NULL)
		*strrchr(runtime_dir, '/') = '\0';
	else
		runtime_dir[0] = '\0';
	atexit(leftovers_remove);
	if (strstr(itest_spinnic_log(), "rte_pdump_init") != NULL)
		itest_fail("spinnic could not set up pdump");

	snprintf(pcap, sizeof(pcap), "%s/capture.pcapng", itest_dir());
	snprintf(dlog, sizeof(dlog), "%s/dumpcap.log", itest_dir());
	i = 0;
	snprintf(fpx, sizeof(fpx), "--file-prefix=%s", prefix);
	/* its "Capturing on" line goes to stdout: line-buffer it */
	dumpcap[i++] = "stdbuf";
	dumpcap[i++] = "-oL";
	dumpcap[i++] = "dpdk-dumpcap";
	dumpcap[i++] = fpx;
	dumpcap[i++] = "-i";
	dumpcap[i++] = port;
	dumpcap[i++] = "-s";
	/* whole frames (2 KiB payloads); -s 65535 overflows its mbufs */
	dumpcap[i++] = "9000";
	dumpcap[i++] = "-w";
	dumpcap[i++] = pcap;
	dumpcap[i] = NULL;
	/*
	 * A secondary process must map the primary's memory at the same
	 * addresses; where its own layout (ASLR, a sanitizer's shadow) took
	 * them already, its EAL gives up ("Cannot get a virtual area"):
	 * chance, so it gets three tries.
	 */
	for (tries = 0; tries < 3; tries++) {
		bool exited = false;

		dpid = itest_spawn(dumpcap, dlog);
		/* it says so once the primary installed its callbacks */
		for (i = 0; i < 1000 && !file_has(dlog, "Capturing on"); i++) {
			int status;

			if (waitpid(dpid, &status, WNOHANG) == dpid) {
				exited = true;
				break;
			}
			usleep(20000);
		}
		if (!exited)
			break;
		fprintf(stderr, "---- dpdk-dumpcap ----\n");
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", dlog);
		(void)system(cmd);
		if (!file_has(dlog, "Cannot get a virtual area") || tries == 2)
			itest_fail("dpdk-dumpcap exited before capturing");
		fprintf(stderr, "itest_capture: dpdk-dumpcap could not map the primary's memory at its addresses; again\n");
	}
	if (!file_has(dlog, "Capturing on"))
		itest_fail("dpdk-dumpcap did not start capturing in 20 s");

	/* put of several packets: DATA H, P, C and an ACK */
	{
		const char *t[] = { "target", "op=put", "len=5000", "seed=6",
				    NULL };
		const char *in[] = { "put", "len=5000", "seed=6", NULL };

		itest_run_pair("put 5000", 1, t, 0, in);
	}
	/* put of one packet: H|C */
	{
		const char *t[] = { "target", "op=put", "len=100", "seed=7",
				    NULL };
		const char *in[] = { "put", "len=100", "seed=7", NULL };

		itest_run_pair("put 100", 1, t, 0, in);
	}
	/* get: GET, then REPLY H, P, C */
	{
		const char *t[] = { "target", "op=get", "len=5000", "seed=8",
				    NULL };
		const char *in[] = { "get", "len=5000", "seed=8", NULL };

		itest_run_pair("get 5000", 1, t, 0, in);
	}
	/* put to a PT without any ME: NACK */
	{
		const char *h[] = { "hold", NULL };
		const char *in[] = { "put", "len=300", "expect=fail",
				     none_target, none_pt, NULL };

		itest_client_ready(&hold, 1, "nothing/hold", h, &nid, &pid,
				   &ptn);
		snprintf(none_target, sizeof(none_target), "target=%u:%u", nid,
			 pid);
		snprintf(none_pt, sizeof(none_pt), "pt=%u", ptn);
		run_client(0, "nothing/put", in);
		itest_client_kill(&hold);
	}

	rc = itest_spawn_stop(dpid, SIGINT, 10000);
	if (rc != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", dlog);
		(void)system(cmd);
		itest_fail("dpdk-dumpcap exit status %d after SIGINT", rc);
	}
	if (stat(pcap, &st) != 0 || st.st_size == 0)
		itest_fail("%s: no capture written", pcap);

	/* decode: the Info column and expert notes of every frame */
	snprintf(tlog, sizeof(tlog), "%s/tshark.txt", itest_dir());
	snprintf(terr, sizeof(terr), "%s/tshark.err", itest_dir());
	snprintf(cmd, sizeof(cmd),
		 "timeout 60 tshark -X 'lua_script:%s' -r '%s' -T fields "
		 "-e _ws.col.Info -e _ws.expert > '%s' 2> '%s'",
		 lua, pcap, tlog, terr);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", terr);
		(void)system(cmd);
		itest_fail("tshark failed");
	}
	snprintf(cmd, sizeof(cmd), "cat '%s' >&2", tlog);
	(void)system(cmd);
	if (file_has(terr, "Lua") || file_has(terr, "lua:")) {
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", terr);
		(void)system(cmd);
		itest_fail("Lua errors in tshark");
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (lines_with(tlog, kinds[i]) == 0)
			itest_fail("no \"%s\" frame decoded", kinds[i]);
	if (!file_has(tlog, "NI_OK"))
		itest_fail("no acknowledgement with NI_OK");
	if (file_has(tlog, "Malformed") || file_has(tlog, "Expert Info"))
		itest_fail("a frame decoded with an expert note (malformed)");
	fprintf(stderr, "itest_capture: every packet kind captured and decoded\n");

	itest_spinnic_finish();
	return 0;
}
