/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libspinnic-heap.so under real clients (lib/heap, DESIGN §4): itest
 * clients linked with the shared libspinnic (itest_client_so) put and get
 * between malloc'd buffers through spinnic --virtual 2, every byte checked
 * by the clients. Three runs (argv[1]):
 *  - preload: LD_PRELOAD=libspinnic-heap.so: the buffers come from the
 *    region, so neither node makes a single process_vm_readv/writev
 *    (slow_path_calls 0) and both copy the messages' bytes directly
 *    (fast_bytes), also for buffers malloc'd before PtlInit (buf=early);
 *  - plain: the same traffic without the preload: both nodes go through
 *    process_vm_* (slow_path_calls > 0), the check above fails there;
 *  - full: the preload with a 2 MiB region and 4 MiB messages: the
 *    buffers fall back to libc, the bytes still arrive (slow path).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MiB (1ull << 20)

static void
pair(const char *what, enum itest_op op, uint64_t len, unsigned count,
     unsigned tnode, unsigned window)
{
	itest_pair_run(what, &(struct itest_pair){
		.msg = { .op = op, .len = len, .count = count, .seed = 3 },
		.tnode = tnode, .t.buf = ITEST_BUF_MALLOC,
		.inode = 0, .i = { .buf = ITEST_BUF_MALLOC, .window = window },
	});
}

int
main(int argc, char **argv)
{
	const char *bdir = getenv("SPINNIC_BUILD_DIR");
	const char *mode = argc > 1 ? argv[1] : "preload";
	bool preload = strcmp(mode, "plain") != 0;
	bool full = strcmp(mode, "full") == 0;
	char heap[512], client[512];
	long long slow0, slow1, fast0, fast1;

	itest_init("itest_heap", 90);
	if (bdir == NULL)
		itest_fail("SPINNIC_BUILD_DIR is not set");
	snprintf(heap, sizeof(heap), "%s/lib/heap/libspinnic-heap.so", bdir);
	snprintf(client, sizeof(client),
		 "%s/test/integration/itest_client_so", bdir);
	ITEST_CHECK(access(heap, R_OK) == 0 && access(client, X_OK) == 0,
		    "%s or %s missing", heap, client);
	itest_spinnic_start(NULL);
	/* the clients inherit these; spinnic has started without them */
	setenv("SPINNIC_ITEST_CLIENT", client, 1);
	setenv("SPINNIC_HEAP_STATS", "1", 1);
	if (preload)
		setenv("LD_PRELOAD", heap, 1);
	if (full) {
		setenv("SPINNIC_REGION_SIZE", "2M", 1);
		pair("put 4 MiB malloc->malloc, region 2 MiB", ITEST_PUT,
		     4 * MiB, 1, 1, 0);
		pair("get 4 MiB malloc<-malloc, region 2 MiB", ITEST_GET,
		     4 * MiB, 1, 1, 0);
	} else {
		pair("put 1 MiB malloc->malloc", ITEST_PUT, MiB, 3, 1, 0);
		pair("put 100 B malloc->malloc, 4 in flight", ITEST_PUT, 100,
		     16, 1, 4);
		pair("get 256 KiB malloc<-malloc", ITEST_GET, 256 << 10, 1, 1,
		     0);
		pair("put 5000 B malloc->malloc loopback", ITEST_PUT, 5000, 2,
		     0, 0);
		/* buffers malloc'd before PtlInit (before MPI_Init) */
		itest_run_pair("put 64 KiB early malloc->early malloc", 1,
			       (const char *const[]){ "target", "op=put",
				       "len=65536", "buf=early", "count=2",
				       NULL },
			       0, (const char *const[]){ "put", "op=put",
				       "len=65536", "buf=early", "count=2",
				       NULL });
	}
	unsetenv("LD_PRELOAD");
	unsetenv("SPINNIC_ITEST_CLIENT");
	itest_spinnic_finish();
	/* zero counters are not printed (-1) */
	slow0 = itest_counter(0, "slow_path_calls");
	slow1 = itest_counter(1, "slow_path_calls");
	fast0 = itest_counter(0, "fast_bytes");
	fast1 = itest_counter(1, "fast_bytes");
	printf("itest_heap %s: node 0: %lld process_vm calls, %lld direct "
	       "bytes; node 1: %lld, %lld\n", mode, slow0, fast0, slow1, fast1);
	if (preload && !full) {
		ITEST_CHECK(slow0 <= 0 && slow1 <= 0,
			    "malloc'd buffers went through process_vm_*: "
			    "node 0 %lld calls, node 1 %lld", slow0, slow1);
		/* node 0 reads 3 MiB + 1600 B and writes 256 KiB, node 1
		 * receives 3 MiB and reads 256 KiB */
		ITEST_CHECK(fast0 >= (long long)(3 * MiB) &&
			    fast1 >= (long long)(3 * MiB),
			    "direct bytes: node 0 %lld, node 1 %lld", fast0,
			    fast1);
	} else {
		ITEST_CHECK(slow0 > 0 && slow1 > 0,
			    "%s: expected process_vm calls on both nodes: "
			    "%lld, %lld", mode, slow0, slow1);
	}
	itest_expect_no_drops();
	itest_expect_no_leaks();
	return 0;
}
