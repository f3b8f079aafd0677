/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives against MPICH (issue #16): a real spinnic
 * with injected faults (RX loss, duplication, reordering), the aware
 * chooser with its calibration measured through the NIC in this run,
 * random layouts (test/ddt/ddt_gen.c) used 1, 4 and 16 times, in the
 * region and in malloc'd memory. Every receive through
 * spin_me_append_ddt() must leave its window, guards included, byte for
 * byte as the system MPI's MPI_Unpack of the same packed stream leaves a
 * copy of it; the first use of every layout is host-based (or a plain
 * entry when contiguous); the cache's decision counters add up to the
 * receives.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>

#include "ddt_gen.h"
#include "ddt_mpi.h"
#include "harness.h"
#include "shim_ddt.h"
#include "shim_ddt_calib.h"

#define GUARD 64
#define NODE 1u
#define EV_TIMEOUT_MS 20000

#define CFAIL(...) do { \
	fprintf(stderr, "itest_ddt_mpi client: %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	_exit(1); \
} while (0)
#define CCHECK(c, ...) do { if (!(c)) CFAIL(__VA_ARGS__); } while (0)
#define CPTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) \
		CFAIL("%s: %s", #call, spin_strerror(rc_)); \
} while (0)

static char calib_path[300];

struct node {
	ptl_handle_ni_t ni;
	ptl_process_t id;
	ptl_handle_eq_t eq;
	ptl_pt_index_t pt;
};

/* Wait for the PUT event of receive @p r (into *put) and the ACK of the
 * put tagged @p tag, in either order; SEND events are dropped, none may
 * have failed. */
static void
ev_wait2(struct node *n, void *r, void *tag, ptl_event_t *put)
{
	bool got_put = false, got_ack = false;
	ptl_event_t ev;

	while (!got_put || !got_ack) {
		unsigned which;
		int rc = PtlEQPoll(&n->eq, 1, EV_TIMEOUT_MS, &ev, &which);

		if (rc == PTL_EQ_EMPTY)
			CFAIL("no event within %d ms", EV_TIMEOUT_MS);
		CCHECK(rc == PTL_OK, "PtlEQPoll: %s", spin_strerror(rc));
		CCHECK(ev.ni_fail_type == PTL_NI_OK, "event %d failed: %d",
		       ev.type, ev.ni_fail_type);
		if (ev.type == PTL_EVENT_PUT && ev.user_ptr == r) {
			*put = ev;
			got_put = true;
		} else if (ev.type == PTL_EVENT_ACK && ev.user_ptr == tag) {
			got_ack = true;
		}
	}
}

/* One receive of @p packed (size bytes) into a fresh window; compared
 * with MPI_Unpack into a copy of the window. @return the strategy */
static enum spin_type_strategy
recv_check(struct node *n, const struct ddt_type *t, int64_t count,
	   MPI_Datatype mt, const uint8_t *packed, uint64_t size,
	   int64_t lo, uint64_t span, int region, uint64_t match,
	   const char *what)
{
	size_t len = span + 2 * GUARD;
	uint8_t *w = region ? spin_host_alloc(len) : malloc(len);
	uint8_t *ref = malloc(len), *src = spin_host_alloc(size + 1);
	ptl_md_t md = {
		.start = src, .length = size, .eq_handle = n->eq,
		.ct_handle = PTL_CT_NONE,
	};
	struct spin_typed_recv *r;
	enum spin_type_strategy s;
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	ptl_me_t me;
	size_t i;
	int pos = 0;

	CCHECK(w != NULL && ref != NULL && src != NULL, "no memory");
	memcpy(src, packed, size);
	memset(w, 0xee, len);
	memset(w + GUARD, 0x11, span);
	memcpy(ref, w, len);
	memset(&me, 0, sizeof(me));
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = match;
	CPTL(spin_me_append_ddt(n->ni, n->pt, &me, t, count, w + GUARD - lo,
				NULL, &r));
	s = spin_typed_recv_strategy(r);
	CPTL(PtlMDBind(n->ni, &md, &mdh));
	CPTL(PtlPut(mdh, 0, size, PTL_ACK_REQ, n->id, n->pt, match, 0, src,
		    0));
	ev_wait2(n, r, src, &ev);
	CPTL(spin_typed_recv_complete(r, &ev, NULL));
	CPTL(PtlMDRelease(mdh));
	CCHECK(MPI_Unpack(packed, (int)size, &pos, ref + GUARD - lo,
			  (int)count, mt, MPI_COMM_WORLD) == MPI_SUCCESS &&
	       (uint64_t)pos == size, "%s: MPI_Unpack", what);
	for (i = 0; i < len; i++)
		CCHECK(w[i] == ref[i], "%s x%" PRId64 " (%s, %s): byte %zu "
		       "of the window (guard %d) is %u, MPI_Unpack's %u", what,
		       count, spin_type_strategy_name(s),
		       region ? "region" : "malloc", i, GUARD, w[i], ref[i]);
	if (region)
		spin_host_free(w);
	else
		free(w);
	free(ref);
	spin_host_free(src);
	return s;
}

static int
client(void)
{
	static const unsigned uses[] = { 1, 4, 16 };
	uint64_t seed = 0x5eed16, match = 1, posts = 0, nic = 0, layouts = 0;
	struct shim_lc_stats st;
	struct node n;
	unsigned k, u;

	setenv("SPINNIC_DDT_CALIB", "force", 1);
	setenv("SPINNIC_DDT_CALIB_FILE", calib_path, 1);
	unsetenv("SPINNIC_DDT_CHOOSER");
	unsetenv("SPINNIC_DDT_STRATEGY");
	CCHECK(ddt_mpi_init() == 0, "MPI_Init");
	CPTL(PtlInit());
	CPTL(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		       PTL_PID_ANY, NULL, NULL, &n.ni));
	CPTL(PtlGetPhysId(n.ni, &n.id));
	CPTL(PtlEQAlloc(n.ni, 1024, &n.eq));
	CPTL(PtlPTAlloc(n.ni, 0, n.eq, PTL_PT_ANY, &n.pt));
	for (k = 0; k < 36; k++) {
		struct ddt_type *t = ddt_gen_random(&seed, 4, 32 << 10);
		struct ddt_iov *map = NULL;
		int64_t count, nmap, lo, hi;
		MPI_Datatype mt;
		uint8_t *packed;
		uint64_t size, i;
		char what[300];

		if (t == NULL)
			continue;
		CCHECK(ddt_commit(t) == 0, "commit");
		count = ddt_size(t) > 0 && ddt_size(t) < 4096 ?
			4096 / ddt_size(t) : 1;
		if (ddt_mpi_type(t, DDT_MPI_MATCH_BOUNDS, &mt, NULL) != 0) {
			ddt_free(t);
			continue;
		}
		ddt_print(t, what, sizeof(what));
		size = (uint64_t)(ddt_size(t) * count);
		nmap = ddt_ref_typemap(t, count, &map);
		CCHECK(nmap >= 0, "typemap");
		ddt_ref_span(map, nmap, &lo, &hi);
		free(map);
		packed = malloc(size + 1);
		CCHECK(packed != NULL, "malloc");
		for (i = 0; i < size; i++)
			packed[i] = (uint8_t)(ddt_gen_rand(&seed) | 1);
		/* a layout of the lower three quarters of its uses */
		if (size > 0 && hi > lo) {
			layouts++;
			for (u = 0; u < uses[k % 3]; u++) {
				struct shim_lc_stats a, b;
				enum spin_type_strategy s;

				shim_lc_stats_get(&a);
				s = recv_check(&n, t, count, mt, packed, size, lo,
					       (uint64_t)(hi - lo), (int)(u & 1),
					       match++, what);
				shim_lc_stats_get(&b);
				if (b.misses > a.misses)
					CCHECK(s == SPIN_TYPE_HOST ||
					       s == SPIN_TYPE_CONTIG,
					       "%s: a first use went %s", what,
					       spin_type_strategy_name(s));
				posts++;
				if (s != SPIN_TYPE_HOST &&
				    s != SPIN_TYPE_CONTIG)
					nic++;
			}
		}
		free(packed);
		ddt_mpi_type_free(&mt);
		ddt_free(t);
		if (k == 2) {
			/* from here on with the calibrated table */
			for (u = 0; u < 3000 && !shim_lc_calibrated(NULL); u++)
				usleep(10000);
			CCHECK(shim_lc_calibrated(NULL), "no calibration");
		}
	}
	shim_lc_stats_get(&st);
	CCHECK(st.host_choices + st.nic_choices == posts,
	       "decisions %" PRIu64 " + %" PRIu64 " for %" PRIu64 " posts",
	       st.host_choices, st.nic_choices, posts);
	CCHECK(st.nic_choices == nic, "NIC decisions %" PRIu64 ", NIC "
	       "receives %" PRIu64, st.nic_choices, nic);
	CCHECK(layouts >= 20, "only %" PRIu64 " layouts", layouts);
	fprintf(stderr, "itest_ddt_mpi: %" PRIu64 " layouts, %" PRIu64
		" receives equal to MPI_Unpack, %" PRIu64 " by the NIC, %"
		PRIu64 " cache misses, %" PRIu64 " preparations\n", layouts,
		posts, nic, st.misses, st.prep_done);
	CPTL(spin_type_cache_flush(n.ni));
	CPTL(PtlPTFree(n.ni, n.pt));
	CPTL(PtlEQFree(n.eq));
	CPTL(PtlNIFini(n.ni));
	PtlFini();
	return 0;
}

int
main(void)
{
	static const char *const faults[] = {
		"--fault-inject", "rx:loss=1,dup=5,reorder=10",
		"--fault-seed", "16", NULL,
	};
	long long nfaults;
	time_t t0;
	pid_t pid;
	int st;

	itest_init("itest_ddt_mpi", 280);
	snprintf(calib_path, sizeof(calib_path), "%s/ddt-calib", itest_dir());
	itest_spinnic_start(faults);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		itest_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		setenv("SPINNIC_SOCKET", itest_socket_path(NODE), 1);
		_exit(client());
	}
	t0 = time(NULL);
	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (time(NULL) - t0 > 240) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			itest_fail("client still running after 240 s");
		}
		usleep(20000);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		itest_fail("client failed (status 0x%x)\nspinnic:\n%s", st,
			   itest_spinnic_log());
	itest_spinnic_finish();
	/* the faults happened (names as itest_offload reads them) */
	nfaults = itest_counter(NODE, "faults_rx");
	if (nfaults < 0)
		nfaults = itest_counter(NODE, "faults");
	fprintf(stderr, "itest_ddt_mpi: %lld faults injected\n", nfaults);
	if (nfaults <= 0)
		itest_fail("the fault injection did not happen");
	return 0;
}
