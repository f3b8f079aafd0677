/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real-NIC options on ports that can be had without one (doc/REAL-NIC.md):
 *  - --flow-isolate on PMDs without rte_flow isolated mode (net_ring of
 *    --virtual, net_null from --vdev) fails cleanly: exit status 1, one
 *    line naming the port, its driver and the option, never "ready";
 *  - the same port without the option runs and stops cleanly (so the
 *    failure is the option's), and with --rx-queues 4 it sets up and polls
 *    four RX queues;
 *  - --rx-queues with virtual nodes is a usage error (exit 2);
 *  - --xdp-reset of an unknown interface fails before the EAL starts with
 *    one line; of an interface without XDP (lo, root only) it says so and
 *    spinnic runs;
 *  - net_tap (root only) implements isolated mode and rte_flow over the
 *    kernel's TC flower: spinnic's rule is either created (spinnic runs and
 *    stops cleanly) or, on a kernel without the qdiscs the PMD needs,
 *    refused with exactly one line naming the rule, after the isolation
 *    and rte_flow_validate passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define RUN_MS 30000

/* Lines of the log containing @p s. */
static unsigned
log_lines_with(const char *s)
{
	const char *l = itest_spinnic_log(), *p;
	unsigned n = 0;

	for (p = strstr(l, s); p != NULL; p = strstr(p, s)) {
		n++;
		p = strchr(p, '\n');
		if (p == NULL)
			break;
	}
	return n;
}

/* The EAL runtime dir of --file-prefix @p prefix (our own EAL args):
 * the telemetry socket stays there after exit. */
static void
eal_dir_remove(const char *prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *bases[] = { "/var/run/dpdk", "/tmp/dpdk", NULL, NULL };
	char xdir[256], path[512];
	unsigned i;

	if (xdg != NULL && xdg[0] == '/') {
		snprintf(xdir, sizeof(xdir), "%s/dpdk", xdg);
		bases[2] = xdir;
	}
	for (i = 0; bases[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s/dpdk_telemetry.v2",
			 bases[i], prefix);
		(void)unlink(path);
		snprintf(path, sizeof(path), "%s/%s", bases[i], prefix);
		(void)rmdir(path);
	}
}

static char eal_prefix[64];

static void
eal_prefix_remove(void)
{
	eal_dir_remove(eal_prefix);
}

static void
skip_if_no_eal(void)
{
	if (strstr(itest_spinnic_log(), "EAL initialization failed") != NULL) {
		fprintf(stderr, "itest_flow: SKIP: the EAL cannot start here\n%s",
			itest_spinnic_log());
		exit(ITEST_SKIP);
	}
}

/* Exit 1 with exactly one "flow isolated mode refused" line for @p drv. */
static void
expect_isolate_refused(const char *what, const char *const *args,
		       const char *drv)
{
	char want[64];
	int st = itest_spinnic_run(args, RUN_MS);

	skip_if_no_eal();
	snprintf(want, sizeof(want), "(%s): flow isolated mode refused: ", drv);
	ITEST_CHECK(st == 1, "%s: exit status %d, want 1\n%s", what, st,
		    itest_spinnic_log());
	ITEST_CHECK(log_lines_with(want) == 1 &&
		    log_lines_with("flow isolated mode refused") == 1,
		    "%s: want one line \"...%s...\"\n%s", what, want,
		    itest_spinnic_log());
	ITEST_CHECK(log_lines_with("drop --flow-isolate") == 1,
		    "%s: the error does not name the option\n%s", what,
		    itest_spinnic_log());
	ITEST_CHECK(strstr(itest_spinnic_log(), "spinnic: ready") == NULL,
		    "%s: spinnic said ready", what);
	fprintf(stderr, "itest_flow: %s: refused cleanly\n", what);
}

int
main(void)
{
	char sdir[300], sock[300], prefix[96], ring[16];
	int st;

	itest_init("itest_flow", 150);
	snprintf(sdir, sizeof(sdir), "%s/v", itest_dir());
	snprintf(sock, sizeof(sock), "%s/null.sock", itest_dir());
	snprintf(eal_prefix, sizeof(eal_prefix), "itest-flow%d", (int)getpid());
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", eal_prefix);
	atexit(eal_prefix_remove);
	snprintf(ring, sizeof(ring), "%u", 256u);

	{
		const char *a[] = { "--", "--virtual", "2", "--socket-dir",
				    sdir, "--flow-isolate", NULL };

		expect_isolate_refused("--virtual 2 --flow-isolate (net_ring)",
				       a, "net_ring");
	}
	{
		const char *a[] = { "-l", "0", "--no-pci", "--no-huge",
				    "--no-shconf", "-m", "512", prefix,
				    "--vdev", "net_null0", "--", "--socket",
				    sock, "--flow-isolate", NULL };

		expect_isolate_refused("--vdev net_null0 --flow-isolate", a,
				       "net_null");
	}
	{
		/* the same port without the option, four RX queues polled */
		const char *a[] = { "-l", "0", "--no-pci", "--no-huge",
				    "--no-shconf", "-m", "512", prefix,
				    "--vdev", "net_null0", "--", "--socket",
				    sock, "--rx-queues", "4", "--ring-size",
				    ring, "--duration", "1", NULL };

		st = itest_spinnic_run(a, RUN_MS);
		skip_if_no_eal();
		ITEST_CHECK(st == 0, "net_null --rx-queues 4: exit status %d\n%s",
			    st, itest_spinnic_log());
		ITEST_CHECK(strstr(itest_spinnic_log(), "spinnic: ready") &&
			    strstr(itest_spinnic_log(),
				   "(net_null) MAC") &&
			    strstr(itest_spinnic_log(), " 4 RX, 1 TX queue(s),"),
			    "net_null --rx-queues 4: not ready with 4 RX queues\n%s",
			    itest_spinnic_log());
		ITEST_CHECK(itest_counter(0, "pkts") > 0,
			    "net_null --rx-queues 4: nothing received\n%s",
			    itest_spinnic_log());
		fprintf(stderr, "itest_flow: net_null with 4 RX queues ran\n");
	}
	{
		const char *a[] = { "--", "--virtual", "2", "--socket-dir",
				    sdir, "--rx-queues", "2", NULL };

		st = itest_spinnic_run(a, RUN_MS);
		ITEST_CHECK(st == 2 && log_lines_with("--rx-queues 2:") == 1,
			    "--virtual 2 --rx-queues 2: status %d\n%s", st,
			    itest_spinnic_log());
	}
	{
		const char *a[] = { "--", "--virtual", "1", "--socket", sock,
				    "--xdp-reset", "spinnic-nosuch0", NULL };

		st = itest_spinnic_run(a, RUN_MS);
		ITEST_CHECK(st == 1 &&
			    log_lines_with("--xdp-reset spinnic-nosuch0: no such interface") == 1 &&
			    strstr(itest_spinnic_log(), "EAL") == NULL,
			    "--xdp-reset of an unknown interface: status %d\n%s",
			    st, itest_spinnic_log());
		fprintf(stderr, "itest_flow: --xdp-reset of an unknown interface refused before the EAL\n");
	}
	if (geteuid() == 0) {
		const char *a[] = { "--", "--virtual", "1", "--socket", sock,
				    "--xdp-reset", "lo", "--duration", "1",
				    NULL };

		st = itest_spinnic_run(a, RUN_MS);
		skip_if_no_eal();
		ITEST_CHECK(st == 0 &&
			    log_lines_with("--xdp-reset lo: no XDP program attached") == 1 &&
			    strstr(itest_spinnic_log(), "spinnic: ready"),
			    "--xdp-reset lo: status %d\n%s", st,
			    itest_spinnic_log());
		fprintf(stderr, "itest_flow: --xdp-reset lo: nothing to detach, spinnic ran\n");
	}
	if (geteuid() == 0) {
		char vdev[64];
		const char *a[] = { "-l", "0", "--no-pci", "--no-huge",
				    "--no-shconf", "-m", "512", prefix,
				    "--vdev", vdev, "--", "--socket", sock,
				    "--flow-isolate", "--payload", "1024",
				    "--duration", "1", NULL };

		snprintf(vdev, sizeof(vdev), "net_tap0,iface=sntf%d",
			 (int)(getpid() % 100000));
		st = itest_spinnic_run(a, RUN_MS);
		skip_if_no_eal();
		if (strstr(itest_spinnic_log(), "no ports:") != NULL) {
			fprintf(stderr, "itest_flow: net_tap not available, not checked\n");
		} else if (st == 0) {
			ITEST_CHECK(log_lines_with("flow isolated; rule: ingress pattern eth / ipv4 / udp dst is 5777 / end actions queue index 0 / end") == 1 &&
				    strstr(itest_spinnic_log(), "spinnic: ready"),
				    "net_tap --flow-isolate ran without its rule\n%s",
				    itest_spinnic_log());
			fprintf(stderr, "itest_flow: net_tap: isolated, rule created, ran\n");
		} else {
			ITEST_CHECK(st == 1 &&
				    log_lines_with("flow rule 'ingress pattern eth / ipv4 / udp dst is 5777 / end actions queue index 0 / end' refused by rte_flow_create: ") == 1 &&
				    log_lines_with("spinnic: port") == 1 &&
				    strstr(itest_spinnic_log(), "spinnic: ready") == NULL,
				    "net_tap --flow-isolate: status %d, want 0, or 1 with one rte_flow_create line\n%s",
				    st, itest_spinnic_log());
			fprintf(stderr, "itest_flow: net_tap: isolated, rule validated, creation refused by this kernel cleanly\n");
		}
	}
	return 0;
}
