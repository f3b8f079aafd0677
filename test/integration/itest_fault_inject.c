/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --fault-inject (app/spinnic/options.c) and reliable delivery (rel.c):
 * malformed specifications are refused before the EAL, and so are options
 * that do not fit the machine (an --lcore-roles lcore the EAL will not
 * have, a socket directory that is a file); loss, duplication,
 * corruption and reordering injected on both RX and TX are repaired by
 * retransmission, with every byte delivered exactly once, and the counters
 * show each mechanism at work (corrupted frames dropped by the checksum,
 * duplicates by sequence number, losses resent).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void
expect_refused(const char *spec)
{
	const char *a[] = { "--", "--virtual", "2", "--fault-inject", spec,
			    NULL };
	int st = itest_spinnic_run(a, 30000);

	if (st != 2 || strstr(itest_spinnic_log(), "--fault-inject:") == NULL)
		itest_fail("--fault-inject %s: status %d, want 2 and a "
			   "--fault-inject line\n%s", spec, st,
			   itest_spinnic_log());
	fprintf(stderr, "itest_fault_inject: '%s' refused\n", spec);
}

/* A reliable-delivery option with a bad value: refused before the EAL. */
static void
expect_opt_refused(const char *opt, const char *val)
{
	const char *a[] = { "--", "--virtual", "2", opt, val, NULL };
	int st = itest_spinnic_run(a, 30000);

	if (st != 2 || strstr(itest_spinnic_log(), opt) == NULL)
		itest_fail("%s %s: status %d, want 2 and a line naming it\n%s",
			   opt, val, st, itest_spinnic_log());
	fprintf(stderr, "itest_fault_inject: %s %s refused\n", opt, val);
}

/*
 * spinnic run with @p args (after "--") must stop with status 2 and exactly
 * one line naming @p opt, before the EAL said anything ("EAL: ...").
 */
static void
expect_early(const char *opt, const char *const *args)
{
	const char *a[16] = { "--" };
	const char *log, *nl;
	unsigned n = 1;
	int st;

	while (*args != NULL && n + 1 < 16)
		a[n++] = *args++;
	a[n] = NULL;
	st = itest_spinnic_run(a, 30000);
	log = itest_spinnic_log();
	nl = strchr(log, '\n');
	if (st != 2 || strstr(log, opt) == NULL || nl == NULL ||
	    nl[1] != '\0' || strstr(log, "EAL:") != NULL)
		itest_fail("%s: status %d, want 2 and one line naming it, "
			   "before the EAL\n%s", opt, st, log);
	fprintf(stderr, "itest_fault_inject: refused before the EAL: %s", log);
}

/* Options that do not fit this machine: refused before the EAL. */
static void
machine_checks(void)
{
	char file[512], below[600], sock[600], cpus[32];
	int fd, cpu;

	{
		const char *a[] = { "--virtual", "2", "--lcore-roles",
				    "inbound=5", NULL };

		/* the default EAL args are -l 0 */
		expect_early("--lcore-roles", a);
	}
	{
		const char *a[] = { "--virtual", "2", "--lcores", "0",
				    "--lcore-roles", "hpu=0,ctrl=1", NULL };

		expect_early("--lcore-roles", a);
	}
	/* a CPU that does not exist, as --lcores */
	for (cpu = 1; cpu < 128; cpu++) {
		char p[80];

		snprintf(p, sizeof(p),
			 "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
		if (access(p, F_OK) != 0)
			break;
	}
	if (cpu < 128) {
		const char *a[] = { "--virtual", "2", "--lcores", cpus, NULL };

		snprintf(cpus, sizeof(cpus), "0,%d", cpu);
		expect_early("--lcores", a);
	}
	snprintf(file, sizeof(file), "%s/a-file", itest_dir());
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	ITEST_CHECK(fd >= 0, "%s: %s", file, strerror(errno));
	close(fd);
	snprintf(below, sizeof(below), "%s/sub", file);
	snprintf(sock, sizeof(sock), "%s/x.sock", file);
	{
		const char *a[] = { "--virtual", "2", "--socket-dir", file,
				    NULL };
		const char *b[] = { "--virtual", "2", "--socket-dir", below,
				    NULL };
		const char *c[] = { "--virtual", "1", "--socket", sock, NULL };

		expect_early("--socket-dir", a);
		expect_early("--socket-dir", b);
		expect_early("--socket", c);
	}
}

/* a counter of both nodes; one a node never printed (never hit) is 0 */
static long long
both(const char *name)
{
	long long a = itest_counter(0, name), b = itest_counter(1, name);

	return (a > 0 ? a : 0) + (b > 0 ? b : 0);
}

int
main(void)
{
	static const char *const opts[] = {
		"--fault-inject", "rx:loss=3,dup=5,corrupt=2,reorder=10",
		"--fault-inject", "tx:loss=3,dup=1,corrupt=2,reorder=4",
		"--fault-seed", "9", NULL };
	long long faults, dups, resent, csum;

	itest_init("itest_fault_inject", 90);
	expect_refused("loss=150");
	expect_refused("dup=");
	expect_refused("jitter=1");
	expect_refused("");
	expect_refused("tx:");
	expect_refused("rx:reorder=2.5");
	expect_refused("reorder=33");
	expect_refused("tx:loss=60,dup=50");
	expect_refused("xx:loss=1");
	expect_opt_refused("--peer-timeout-ms", "5");
	expect_opt_refused("--peer-timeout-ms", "soon");
	expect_opt_refused("--rto-us", "0");
	expect_opt_refused("--rx-reorder", "0.5");
	machine_checks();

	itest_spinnic_start(opts);
	{
		const char *t[] = { "target", "op=put", "len=1048576",
				    "count=2", "seed=31", NULL };
		const char *in[] = { "put", "len=1048576", "buf=malloc",
				     "count=2", "seed=31", NULL };

		itest_run_pair("put 2 x 1 MiB", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=get", "len=300000",
				    "seed=32", NULL };
		const char *in[] = { "get", "len=300000", "seed=32", NULL };

		itest_run_pair("get 300000", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=put", "len=300000",
				    "handler=checksum", "seed=33", NULL };
		const char *in[] = { "put", "len=300000", "seed=33", NULL };

		itest_run_pair("checksum handler 300000", 1, t, 0, in);
	}
	{
		const char *t[] = { "target", "op=put", "len=100",
				    "count=200", "seed=34", NULL };
		const char *in[] = { "put", "len=100", "count=200",
				     "seed=34", NULL };

		itest_run_pair("put 200 x 100 B", 1, t, 0, in);
	}
	itest_spinnic_finish();
	faults = both("faults_rx") + both("faults_tx");
	dups = both("drop_rel_dup");
	resent = both("retransmits");
	csum = both("udp_csum") + both("ip_csum");
	fprintf(stderr, "itest_fault_inject: %lld faults injected, %lld "
		"duplicates dropped, %lld corrupted frames dropped, %lld "
		"packets resent\n", faults, dups, csum, resent);
	if (faults <= 0 || dups <= 0 || resent <= 0 || csum <= 0)
		itest_fail("a fault or its repair did not happen");
	return 0;
}
