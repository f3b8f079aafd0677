/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spinnic's telemetry commands over the EAL's telemetry socket (the v2
 * protocol dpdk-telemetry.py speaks: SOCK_SEQPACKET, an info JSON on
 * connect, then one JSON reply per command):
 *   /spinnic/stats    rx/tx packet counters grow by at least the packets
 *                     of a put
 *   /spinnic/clients  lists a client while it is attached (ids, objects,
 *                     bytes delivered, NIC memory), not after it left
 *   /spinnic/mes      shows that client's ME (pt, match bits, length, ctx)
 *   /spinnic/hpus     one entry per HPU; HERs run after a handler put
 *   /spinnic/handlers the checksum family and the client's context after
 *                     that put: exact invocations per kind, durations,
 *                     DMA bytes; /spinnic/handler_trace its six entries
 *                     (spinnic runs with --handler-trace 16)
 * plus a bad parameter (null reply) and, when installed, dpdk-telemetry.py;
 * at exit the final counters' handlers block.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "tel.h"

#define HPUS 2          /* spinnic's default --hpus */

static char tel_path[256];
static char tel_prefix[128];

static long long
stat_of(int fd, unsigned node, const char *key)
{
	char obj[16], *r = tel_query(fd, "/spinnic/stats");
	long long v;

	snprintf(obj, sizeof(obj), "node%u", node);
	v = tel_need(r, obj, key);
	free(r);
	return v;
}

/* Both nodes' rx and tx packet counters grow by at least the put's. */
static void
check_stats(int fd)
{
	const char *t[] = { "target", "op=put", "len=100000", "seed=3", NULL };
	const char *in[] = { "put", "len=100000", "seed=3", NULL };
	long long tx0 = stat_of(fd, 0, "tx_pkts"), rx1 = stat_of(fd, 1, "rx_pkts");
	long long rx0 = stat_of(fd, 0, "rx_pkts"), in1 = stat_of(fd, 1, "msgs_in");
	long long txb0 = stat_of(fd, 0, "tx_bytes");
	/* 100000 bytes of 2048-byte payloads: 49 packets, one ack back */
	const long long pkts = (100000 + 2047) / 2048;
	char *r;

	itest_run_pair("put node0->node1", 1, t, 0, in);
	ITEST_CHECK(stat_of(fd, 0, "tx_pkts") - tx0 >= pkts,
		    "node0 tx_pkts grew by %lld, expected at least %lld",
		    stat_of(fd, 0, "tx_pkts") - tx0, pkts);
	ITEST_CHECK(stat_of(fd, 1, "rx_pkts") - rx1 >= pkts,
		    "node1 rx_pkts grew by %lld, expected at least %lld",
		    stat_of(fd, 1, "rx_pkts") - rx1, pkts);
	ITEST_CHECK(stat_of(fd, 0, "rx_pkts") - rx0 >= 1,
		    "node0 received no ack");
	ITEST_CHECK(stat_of(fd, 1, "msgs_in") - in1 >= 1,
		    "node1 msgs_in did not grow");
	ITEST_CHECK(stat_of(fd, 0, "tx_bytes") - txb0 >= 100000,
		    "node0 tx_bytes grew by less than the message");
	/* the other counter groups are there */
	r = tel_query(fd, "/spinnic/stats,1");
	tel_need(r, "node1", "drop_no_match");
	tel_need(r, "node1", "drop_short");
	tel_need(r, "node1", "ptl_match_priority");
	ITEST_CHECK(tel_need(r, "node1", "nic_mem_total") > 0,
		    "nic_mem_total is 0: %s", r);
	ITEST_CHECK(tel_json_num(r, "node0", "rx_pkts") == NO_OBJ,
		    "/spinnic/stats,1 answered node0 too: %s", r);
	free(r);
	/* a node that does not exist: no data */
	r = tel_query(fd, "/spinnic/stats,7");
	ITEST_CHECK(strstr(r, "\"/spinnic/stats\":null") != NULL ||
		    strstr(r, "\"/spinnic/stats\": null") != NULL,
		    "/spinnic/stats,7: expected null, got %s", r);
	free(r);
	fprintf(stderr, "itest_telemetry: /spinnic/stats passed\n");
}

/* Sum of @p key over node @p node's HPUs, checking one entry per HPU. */
static long long
hpu_sum(int fd, unsigned node, const char *key)
{
	char obj[32], *r = tel_query(fd, "/spinnic/hpus");
	long long sum = 0;
	unsigned h;

	for (h = 0; h < HPUS; h++) {
		snprintf(obj, sizeof(obj), "node%u/hpu%u", node, h);
		sum += tel_need(r, obj, key);
	}
	snprintf(obj, sizeof(obj), "node%u/hpu%u", node, HPUS);
	ITEST_CHECK(tel_json_num(r, obj, "hers") == NO_OBJ,
		    "an entry for HPU %u of %u: %s", HPUS, HPUS, r);
	free(r);
	return sum;
}

/*
 * The handler put of check_clients() (8192 bytes, 4 packets of 2048, to
 * a checksum context that copies them and writes a 32-byte result): the
 * only checksum message node 1 ran. Its family and context show exactly
 * one header, four payload and one completion invocation, all ok, with
 * durations; the trace ring holds the six.
 */
static void
check_handlers(int fd, unsigned pid, long long ctx, pid_t os_pid)
{
	const char *fam = "node1/family/checksum";
	const char *kinds[] = { "header", "payload", "completion" };
	const long long calls[] = { 1, 4, 1 };
	char obj[64], cmd[64], key[64], *r = NULL;
	bool seen[4] = { false };
	unsigned i, k;

	snprintf(obj, sizeof(obj), "node1/ctx%lld", ctx);
	/* the HPUs store their counts before the ack; allow a moment */
	for (i = 0;; i++) {
		r = tel_query(fd, "/spinnic/handlers,1");
		if ((tel_json_num(r, fam, "calls") == 6 &&
		     tel_json_num(r, obj, "calls") == 6) || i == 100)
			break;
		free(r);
		usleep(20000);
	}
	for (i = 0; i < 2; i++) {
		const char *o = i == 0 ? fam : obj;

		for (k = 0; k < 3; k++) {
			snprintf(key, sizeof(key), "%s_calls", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) == calls[k],
				    "%s: %s %lld, expected %lld: %s", o, key,
				    tel_need(r, o, key), calls[k], r);
			snprintf(key, sizeof(key), "%s_ok", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) == calls[k],
				    "%s: %s: %s", o, key, r);
			snprintf(key, sizeof(key), "%s_error", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) == 0, "%s: %s: %s", o,
				    key, r);
			snprintf(key, sizeof(key), "%s_mean_ns", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) > 0, "%s: %s: %s", o,
				    key, r);
			snprintf(key, sizeof(key), "%s_max_ns", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) > 0, "%s: %s: %s", o,
				    key, r);
			snprintf(key, sizeof(key), "%s_p99_ns", kinds[k]);
			ITEST_CHECK(tel_need(r, o, key) > 0, "%s: %s: %s", o,
				    key, r);
		}
		ITEST_CHECK(tel_need(r, o, "calls") == 6 &&
			    tel_need(r, o, "errors") == 0, "%s: calls: %s", o,
			    r);
		ITEST_CHECK(tel_need(r, o, "dma_bytes_to_host") == 8192 + 32,
			    "%s: dma_bytes_to_host %lld: %s", o,
			    tel_need(r, o, "dma_bytes_to_host"), r);
		ITEST_CHECK(tel_need(r, o, "dma_bytes_from_host") == 0 &&
			    tel_need(r, o, "dma_rejects") == 0,
			    "%s: dma: %s", o, r);
		/* the checksum family has no sender-side handler */
		ITEST_CHECK(tel_json_num(r, o, "outbound_calls") == NO_KEY,
			    "%s: outbound_calls: %s", o, r);
	}
	ITEST_CHECK(tel_need(r, fam, "budget_us") == 100, "budget_us: %s", r);
	ITEST_CHECK(tel_need(r, obj, "pid") == pid, "%s pid: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "os_pid") == (long long)os_pid,
		    "%s os_pid: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "live") == 1 &&
		    tel_need(r, obj, "msgs") == 1, "%s live, msgs: %s", obj, r);
	ITEST_CHECK(tel_json_has_str(r, obj, "family", "checksum"),
		    "%s family: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "traced") == 6, "%s traced: %s", obj, r);
	ITEST_CHECK(tel_json_num(r, "node0/family/checksum", "calls") == NO_OBJ,
		    "/spinnic/handlers,1 answered node0: %s", r);
	free(r);
	/* paging: the family is entry 0, the context entry 1 */
	r = tel_query(fd, "/spinnic/handlers,1,1");
	ITEST_CHECK(tel_json_num(r, fam, "calls") == NO_OBJ &&
		    tel_need(r, obj, "calls") == 6 &&
		    strstr(r, "\"not_shown\":0") != NULL,
		    "/spinnic/handlers,1,1: %s", r);
	free(r);

	/* the trace: header first, completion last, the four packets */
	snprintf(cmd, sizeof(cmd), "/spinnic/handler_trace,1,%lld", ctx);
	r = tel_query(fd, cmd);
	ITEST_CHECK(tel_need(r, "/spinnic/handler_trace", "head") == 6 ||
		    strstr(r, "\"head\":6") != NULL,
		    "%s: head: %s", cmd, r);
	ITEST_CHECK(tel_json_has_str(r, "e1", "kind", "header") &&
		    tel_json_has_str(r, "e6", "kind", "completion"),
		    "%s: header, completion: %s", cmd, r);
	for (i = 2; i <= 5; i++) {
		long long off;

		snprintf(key, sizeof(key), "e%u", i);
		ITEST_CHECK(tel_json_has_str(r, key, "kind", "payload") &&
			    tel_json_has_str(r, key, "rc", "ok") &&
			    tel_need(r, key, "len") == 2048 &&
			    tel_need(r, key, "ns") > 0,
			    "%s: %s: %s", cmd, key, r);
		off = tel_need(r, key, "offset");
		ITEST_CHECK(off % 2048 == 0 && off / 2048 < 4 &&
			    !seen[off / 2048], "%s: %s offset: %s", cmd, key,
			    r);
		seen[off / 2048] = true;
	}
	ITEST_CHECK(tel_json_num(r, "e7", "len") == NO_OBJ, "%s: e7: %s", cmd,
		    r);
	free(r);
	/* no such context: no data */
	r = tel_query(fd, "/spinnic/handler_trace,1,65534");
	ITEST_CHECK(strstr(r, "null") != NULL, "trace of no context: %s", r);
	free(r);
	fprintf(stderr, "itest_telemetry: /spinnic/handlers, /spinnic/handler_trace passed\n");
}

static void
check_clients(int fd)
{
	const char *hold[] = { "hold", "me=1", "len=8192", "match=0x42",
			       "handler=checksum", NULL };
	struct itest_client h, p;
	char obj[64], target[64], pt[32], line[256], cmd[64], *r;
	const char *put[] = { "put", "len=8192", "match=0x42", "seed=4",
			      target, pt, NULL };
	unsigned nid, pid, ptn, i;
	long long hers0, v, ctx;
	int st;

	hers0 = hpu_sum(fd, 1, "hers");
	itest_client_ready(&h, 1, "hold", hold, &nid, &pid, &ptn);

	/* /spinnic/clients: the hold client, with its objects */
	r = tel_query(fd, "/spinnic/clients");
	snprintf(obj, sizeof(obj), "node1/pid%u", pid);
	ITEST_CHECK(tel_need(r, obj, "os_pid") == (long long)h.pid,
		    "os_pid of %s is not %d: %s", obj, (int)h.pid, r);
	ITEST_CHECK(tel_need(r, obj, "pid") == pid, "pid of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "uid") == (long long)getuid(),
		    "uid of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "nis") >= 1, "no NI in %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "pts") >= 1, "no PT in %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "mes") == 1, "MEs of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "eqs") >= 1, "no EQ in %s: %s", obj, r);
	tel_need(r, obj, "cts");
	tel_need(r, obj, "bad_msgs");
	ITEST_CHECK(tel_need(r, obj, "nic_mem_used") > 0,
		    "a checksum context uses NIC memory: %s", r);
	ITEST_CHECK(tel_need(r, obj, "bytes_in") == 0,
		    "bytes_in before a put: %s", r);
	free(r);

	/* /spinnic/mes: its ME */
	snprintf(cmd, sizeof(cmd), "/spinnic/mes,1,%u", pid);
	r = tel_query(fd, cmd);
	snprintf(obj, sizeof(obj), "node1/pid%u/me0", pid);
	ITEST_CHECK(tel_need(r, obj, "pt") == ptn, "pt of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "match_bits") == 0x42,
		    "match_bits of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "ignore_bits") == 0,
		    "ignore_bits of %s: %s", obj, r);
	ITEST_CHECK(tel_need(r, obj, "length") >= 8192, "length of %s: %s", obj,
		    r);
	ctx = tel_need(r, obj, "ctx");
	ITEST_CHECK(ctx >= 0, "no ctx in %s: %s", obj, r);
	ITEST_CHECK(strstr(r, "\"list\":\"priority\"") != NULL,
		    "list of %s: %s", obj, r);
	snprintf(obj, sizeof(obj), "node1/pid%u/me1", pid);
	ITEST_CHECK(tel_json_num(r, obj, "pt") == NO_OBJ, "a second ME: %s", r);
	free(r);
	/* all clients: it is there too */
	r = tel_query(fd, "/spinnic/mes");
	snprintf(obj, sizeof(obj), "node1/pid%u/me0", pid);
	ITEST_CHECK(tel_need(r, obj, "match_bits") == 0x42, "/spinnic/mes: %s",
		    r);
	free(r);

	/* a handler put: HERs on node 1's HPUs, bytes into the client */
	snprintf(target, sizeof(target), "target=%u:%u", nid, pid);
	snprintf(pt, sizeof(pt), "pt=%u", ptn);
	itest_client_start(&p, 0, "handler put", put);
	itest_client_expect(&p, "ok", line, sizeof(line), 20000);
	st = itest_client_wait(&p, 5000);
	ITEST_CHECK(st == 0, "handler put: exit status %d", st);
	/* the ack follows the completion: the counters are final, but
	 * allow the HPU a moment to store its own */
	for (i = 0; i < 100 && (hpu_sum(fd, 1, "hers") - hers0 < 6 ||
				hpu_sum(fd, 1, "rc_success") < 6); i++)
		usleep(20000);
	v = hpu_sum(fd, 1, "hers") - hers0;
	/* header, 4 payloads, completion */
	ITEST_CHECK(v >= 6, "node1 HPUs ran %lld HERs for a 4-packet handler put",
		    v);
	ITEST_CHECK(hpu_sum(fd, 1, "rc_success") >= 6, "handler results");
	ITEST_CHECK(hpu_sum(fd, 1, "dma_bytes_to_host") >= 8192,
		    "DMA bytes of the checksum handler");
	/* no processed put here: sender-side jobs are reported, none ran */
	ITEST_CHECK(hpu_sum(fd, 1, "out_jobs") == 0 &&
		    hpu_sum(fd, 1, "out_failures") == 0,
		    "outbound jobs on node1's HPUs without a processed put");
	/* the budget's burst checks are reported (a loaded host may have
	 * made some; tel_need() fails when the key is missing) */
	ITEST_CHECK(hpu_sum(fd, 1, "budget_rechecks") >= 0,
		    "budget_rechecks of node1's HPUs");
	r = tel_query(fd, "/spinnic/clients,1");
	snprintf(obj, sizeof(obj), "node1/pid%u", pid);
	ITEST_CHECK(tel_need(r, obj, "msgs_in") == 1, "msgs_in of %s: %s", obj,
		    r);
	ITEST_CHECK(tel_need(r, obj, "bytes_in") == 8192, "bytes_in of %s: %s",
		    obj, r);
	/* the NIC's time of that message, without its sender's wait */
	ITEST_CHECK(tel_need(r, obj, "nic_timed") == 1 &&
		    tel_need(r, obj, "nic_ns_mean") > 0 &&
		    tel_need(r, obj, "nic_ns_max") ==
		    tel_need(r, obj, "nic_ns_mean"), "NIC time of %s: %s", obj,
		    r);
	free(r);
	snprintf(obj, sizeof(obj), "node1/pid%u/me0", pid);
	for (i = 0;; i++) {
		bool ok;

		r = tel_query(fd, cmd);
		ok = tel_need(r, obj, "ctx_msgs") == 1 &&
		     tel_need(r, obj, "ctx_hers") >= 6 &&
		     tel_need(r, obj, "ctx_dma_bytes") >= 8192;
		if (!ok && i == 50)
			itest_fail("context counters of %s: %s", obj, r);
		free(r);
		if (ok)
			break;
		usleep(20000);
	}
	fprintf(stderr, "itest_telemetry: /spinnic/clients, /spinnic/mes, /spinnic/hpus passed\n");
	check_handlers(fd, pid, ctx, h.pid);

	/* gone once it detached */
	close(h.in);
	h.in = open("/dev/null", O_WRONLY);
	st = itest_client_wait(&h, 5000);
	ITEST_CHECK(st == 0, "hold client exit status %d", st);
	snprintf(obj, sizeof(obj), "node1/pid%u", pid);
	for (i = 0; i < 100; i++) {
		r = tel_query(fd, "/spinnic/clients");
		v = tel_json_num(r, obj, "pid");
		free(r);
		if (v == NO_OBJ)
			break;
		usleep(20000);
	}
	ITEST_CHECK(v == NO_OBJ, "%s still listed after it exited", obj);
}

/* The same through dpdk-telemetry.py, when it is installed. */
static void
check_script(void)
{
	char cmd[512], out[4096];
	size_t n;
	FILE *f;

	if (system("command -v dpdk-telemetry.py >/dev/null 2>&1") != 0) {
		fprintf(stderr, "itest_telemetry: dpdk-telemetry.py not installed (Debian: dpdk-dev), not tried\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "echo /spinnic/stats,0 | timeout 20 dpdk-telemetry.py -f '%s' 2>&1",
		 tel_prefix);
	f = popen(cmd, "r");
	if (f == NULL)
		itest_fail("popen: %s", strerror(errno));
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	pclose(f);
	ITEST_CHECK(strstr(out, "\"/spinnic/stats\"") != NULL &&
		    strstr(out, "rx_pkts") != NULL,
		    "dpdk-telemetry.py -f %s: %s", tel_prefix, out);
	fprintf(stderr, "itest_telemetry: dpdk-telemetry.py passed\n");
}

int
main(void)
{
	const char *const opts[] = { "--handler-trace", "16", NULL };
	const char *log;
	int fd;

	itest_init("itest_telemetry", 80);
	itest_spinnic_start(opts);
	if (itest_log_word("telemetry: ", tel_path, sizeof(tel_path)) != 0 ||
	    tel_path[0] != '/')
		itest_fail("spinnic did not log its telemetry socket");
	if (itest_log_word("dpdk-telemetry.py -f ", tel_prefix,
			   sizeof(tel_prefix)) != 0)
		itest_fail("spinnic did not log its file prefix");
	fd = tel_connect(tel_path);
	check_stats(fd);
	check_clients(fd);
	check_script();
	close(fd);
	itest_spinnic_finish();
	itest_expect_no_drops();
	/* the final counters: the checksum family's block */
	log = itest_spinnic_log();
	ITEST_CHECK(strstr(log, "  handlers: checksum (budget 100.0 us)\n    header     calls 1 ok 1 drop 0 proceed 0 error 0, mean ") != NULL &&
		    strstr(log, "\n    payload    calls 4 ok 4 drop 0 proceed 0 error 0, mean ") != NULL &&
		    strstr(log, "\n    completion calls 1 ok 1 ") != NULL &&
		    strstr(log, "\n    dma 8224 B to host, 0 B from host, rejects 0 failures 0 put_errors 0\n") != NULL,
		    "no handlers block for checksum in the final counters");
	return 0;
}
