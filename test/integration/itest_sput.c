/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming puts (PtlSPutStart/PtlSPutStream) and outbound sPIN puts
 * (PtlProcessPut) through a real spinnic, node 0 -> node 1 (paper 000
 * §3.1). The target is a child process on node 1 that reports every PUT
 * event with the bytes it received; this process is the initiator on node
 * 0 and checks that each message arrived once, whole, with exactly the
 * bytes a host pack (or the concatenated pieces) gives, and that wrong
 * totals and bad arguments are refused: by the shim, and by the NIC for
 * commands written to the ring directly. A client killed mid-stream and a
 * stream the NIC failed mid-message leave a partial message that the
 * target times out, with nothing leaked.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>

#include "../ddt/ddt_gen.h"
#include "harness.h"
#include "shim_internal.h" /* shim_cmd_post: commands the shim would refuse */

#define ME_BYTES (4u << 20)
/* app/spinnic/engine.h: a live message with no packet this long is dropped */
#define ENG_MSG_TIMEOUT_S 10
#define EV_MS 10000
#define MATCH 0x5a5a
#define RTE_MIN_D(a, b) ((a) < (b) ? (a) : (b))
#define MIN_U64(a, b) ((uint64_t)(a) < (uint64_t)(b) ? (uint64_t)(a) : \
		       (uint64_t)(b))

/* target -> initiator, per PUT event */
struct report {
	uint32_t type;
	uint32_t ni_fail;
	uint64_t match_bits;
	uint64_t rlength;
	uint64_t mlength;
};

static int
read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#define T_CHECK(x) do { \
	int rc_ = (x); \
	if (rc_ != PTL_OK) { \
		fprintf(stderr, "target: %s: %s\n", #x, spin_strerror(rc_)); \
		_exit(1); \
	} \
} while (0)

/* Child on node 1: one ME at offset 0 of a region buffer; report each
 * PUT with its bytes until the initiator closes the control pipe. */
static void
target_main(int rep, int ctl)
{
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_handle_me_t meh;
	ptl_ni_limits_t lim;
	ptl_process_t id;
	ptl_pt_index_t pt;
	ptl_me_t me;
	uint8_t *buf;
	uint32_t ready[3];

	setenv("SPINNIC_SOCKET", itest_socket_path(1), 1);
	T_CHECK(PtlInit());
	T_CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
			  PTL_PID_ANY, NULL, &lim, &ni));
	T_CHECK(PtlGetPhysId(ni, &id));
	T_CHECK(PtlEQAlloc(ni, 1024, &eq));
	T_CHECK(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt));
	buf = spin_host_alloc(ME_BYTES);
	if (buf == NULL)
		_exit(1);
	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = ME_BYTES;
	me.ct_handle = PTL_CT_NONE;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = MATCH;
	me.options = PTL_ME_OP_PUT;
	T_CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &meh));
	ready[0] = id.phys.nid;
	ready[1] = id.phys.pid;
	ready[2] = pt;
	if (write_full(rep, ready, sizeof(ready)) != 0)
		_exit(1);
	for (;;) {
		struct pollfd pfd = { .fd = ctl, .events = POLLIN };
		struct report r;
		ptl_event_t ev;
		unsigned which;
		int rc = PtlEQPoll(&eq, 1, 50, &ev, &which);

		if (rc == PTL_EQ_EMPTY) {
			if (poll(&pfd, 1, 0) > 0)
				break; /* initiator done (EOF) */
			continue;
		}
		if (rc != PTL_OK)
			_exit(2);
		if (ev.type == PTL_EVENT_LINK)
			continue;
		memset(&r, 0, sizeof(r));
		r.type = ev.type;
		r.ni_fail = ev.ni_fail_type;
		r.match_bits = ev.match_bits;
		r.rlength = ev.rlength;
		r.mlength = ev.mlength;
		if (write_full(rep, &r, sizeof(r)) != 0 ||
		    (ev.type == PTL_EVENT_PUT &&
		     write_full(rep, buf, ev.mlength) != 0))
			_exit(3);
	}
	PtlMEUnlink(meh);
	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	_exit(0);
}

/* ---- initiator ------------------------------------------------------- */

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static ptl_process_t tgt;
static ptl_pt_index_t tpt;
static int rep_fd, ctl_fd;
static pid_t child;
static uint8_t *got;
/* processed puts delivered: their packets (the HPUs build every one:
 * sput_hpu_pkts), and those of zero bytes (gathered inline) */
static uint32_t pay_size;
static long long proc_pkts, proc_empty;

static void
proc_count(int64_t size)
{
	if (size == 0)
		proc_empty++;
	else
		proc_pkts += (size + pay_size - 1) / pay_size;
}

static void
ev_wait(ptl_event_kind_t type, unsigned fail, uint64_t rlength,
	const char *what)
{
	ptl_event_t ev;
	unsigned which;
	int rc = PtlEQPoll(&eq, 1, EV_MS, &ev, &which);

	ITEST_CHECK(rc == PTL_OK, "%s: no event (%s)", what,
		    spin_strerror(rc));
	ITEST_CHECK(ev.type == type && ev.ni_fail_type == fail &&
		    ev.rlength == rlength,
		    "%s: event %d fail %d rlength %llu, want %d fail %u "
		    "rlength %llu", what, ev.type, ev.ni_fail_type,
		    (unsigned long long)ev.rlength, type, fail,
		    (unsigned long long)rlength);
}

/* SEND + ACK of a good message, then the target's one PUT with @p want. */
static void
expect_delivery(const uint8_t *want, uint64_t len, const char *what)
{
	struct report r;

	ev_wait(PTL_EVENT_SEND, PTL_NI_OK, len, what);
	ev_wait(PTL_EVENT_ACK, PTL_NI_OK, len, what);
	ITEST_CHECK(read_full(rep_fd, &r, sizeof(r)) == 0,
		    "%s: target gone", what);
	ITEST_CHECK(r.type == PTL_EVENT_PUT && r.ni_fail == PTL_NI_OK &&
		    r.rlength == len && r.mlength == len &&
		    r.match_bits == MATCH,
		    "%s: target event %u fail %u rlength %llu mlength %llu",
		    what, r.type, r.ni_fail, (unsigned long long)r.rlength,
		    (unsigned long long)r.mlength);
	ITEST_CHECK(read_full(rep_fd, got, len) == 0, "%s: target gone",
		    what);
	for (uint64_t i = 0; i < len; i++)
		ITEST_CHECK(got[i] == want[i],
			    "%s: byte %llu is %#x, want %#x", what,
			    (unsigned long long)i, got[i], want[i]);
}

/* Nothing more arrived at the target (one PUT per message). */
static void
expect_target_quiet(const char *what)
{
	struct pollfd pfd = { .fd = rep_fd, .events = POLLIN };

	ITEST_CHECK(poll(&pfd, 1, 200) == 0, "%s: target saw another event",
		    what);
}

static uint8_t *
buf_alloc(size_t len, bool region)
{
	uint8_t *p = region ? spin_host_alloc(len ? len : 1) :
		malloc(len ? len : 1);

	ITEST_CHECK(p != NULL, "no memory for %zu bytes", len);
	return p;
}

static void
buf_free(void *p, bool region)
{
	if (region)
		spin_host_free(p);
	else
		free(p);
}

static ptl_handle_md_t
md_bind(void *start, size_t len)
{
	ptl_handle_md_t md;
	ptl_md_t d;

	memset(&d, 0, sizeof(d));
	d.start = start;
	d.length = len;
	d.eq_handle = eq;
	d.ct_handle = PTL_CT_NONE;
	ITEST_CHECK(PtlMDBind(ni, &d, &md) == PTL_OK, "PtlMDBind");
	return md;
}

/*
 * A streaming put of @p total bytes whose pieces (sizes from @p sizes,
 * cycled) are taken from scattered places of a source buffer: pieces in
 * reverse order of the source, so the message is never one contiguous
 * run of it.
 */
static void
stream_case(const char *what, uint64_t total, const uint32_t *sizes,
	    unsigned nsizes, bool region, uint64_t *seed)
{
	uint64_t src_len = total * 2 + 64, msg_off = 0, src_end;
	uint8_t *src = buf_alloc(src_len, region), *want = buf_alloc(total,
								    false);
	ptl_handle_md_t md = md_bind(src, src_len);
	spin_handle_sput_t h;
	unsigned k = 0;
	bool first = true;

	for (uint64_t i = 0; i < src_len; i++)
		src[i] = (uint8_t)ddt_gen_rand(seed);
	src_end = src_len;
	do {
		uint64_t len = MIN_U64(sizes[k % nsizes], total - msg_off);
		uint64_t at = src_end - len - (k % 3); /* gaps between */
		int rc;

		k++;
		src_end = at;
		memcpy(want + msg_off, src + at, len);
		if (first) {
			rc = PtlSPutStart(md, at, len, total, PTL_ACK_REQ, tgt,
					  tpt, MATCH, 0, NULL, 0, &h);
			first = false;
		} else {
			rc = PtlSPutStream(h, md, at, len,
					   msg_off + len == total);
		}
		ITEST_CHECK(rc == PTL_OK, "%s: piece %u: %s", what, k,
			    spin_strerror(rc));
		msg_off += len;
	} while (msg_off < total);
	expect_delivery(want, total, what);
	/* a finished stream takes no more pieces */
	ITEST_CHECK(PtlSPutStream(h, md, 0, 0, 1) == PTL_ARG_INVALID,
		    "%s: finished stream took a piece", what);
	PtlMDRelease(md);
	buf_free(src, region);
	free(want);
	printf("ok %s\n", what);
}

static void
stream_tests(uint32_t payload, uint64_t *seed)
{
	const uint32_t odd[] = { 1, 7, 333, 2047, 2049, 5000, 3 };
	const uint32_t tiny[] = { 1, 2, 3, 5, 8, 13, 21, 34, 55, 64 };
	const uint32_t big[] = { 3 * 2048 + 17, 65536, 100001 };
	const uint32_t zero_first[] = { 0, 100, 0, 4000 };
	const uint32_t one[] = { 1 };
	uint32_t exact[2] = { payload, payload };

	stream_case("stream odd pieces, 40000 B", 40000, odd, 7, true, seed);
	stream_case("stream 3000 tiny pieces", 3000 * 20, tiny, 10, true,
		    seed);
	stream_case("stream pieces larger than a packet, 1 MiB", 1 << 20,
		    big, 3, true, seed);
	stream_case("stream pieces of exactly a packet", 8 * payload, exact,
		    2, true, seed);
	stream_case("stream with empty pieces", 12345, zero_first, 4, false,
		    seed);
	stream_case("stream from malloc'd memory, odd pieces", 70001, odd, 7,
		    false, seed);
	stream_case("stream of one byte", 1, one, 1, true, seed);
	stream_case("stream of one piece (the whole message)", 5000, big, 1,
		    true, seed);
	stream_case("stream of zero bytes", 0, one, 1, true, seed);
}

/* Wrong totals and bad arguments. */
static void
stream_bad(uint64_t *seed)
{
	uint8_t *src = buf_alloc(10000, true), *want = buf_alloc(10000, false);
	ptl_handle_md_t md = md_bind(src, 10000);
	spin_handle_sput_t h, hs[SPIN_SPUT_MAX + 1];
	unsigned i;

	for (i = 0; i < 10000; i++)
		src[i] = (uint8_t)ddt_gen_rand(seed);
	/* refusals before a stream exists */
	ITEST_CHECK(PtlSPutStart(md, 0, 101, 100, PTL_ACK_REQ, tgt, tpt,
				 MATCH, 0, NULL, 0, &h) == PTL_ARG_INVALID,
		    "first piece over the total accepted");
	ITEST_CHECK(PtlSPutStart(md, 9990, 20, 100, PTL_ACK_REQ, tgt, tpt,
				 MATCH, 0, NULL, 0, &h) == PTL_ARG_INVALID,
		    "piece outside the MD accepted");
	ITEST_CHECK(PtlSPutStart(md, 0, 1, 100, PTL_ACK_REQ, tgt, tpt, MATCH,
				 0, NULL, 0, NULL) == PTL_ARG_INVALID,
		    "NULL handle pointer accepted");
	ITEST_CHECK(PtlSPutStream((spin_handle_sput_t)12345, md, 0, 1, 0) ==
		    PTL_ARG_INVALID, "a made-up stream handle accepted");

	/* a wrong total is refused and changes nothing */
	ITEST_CHECK(PtlSPutStart(md, 0, 1000, 3000, PTL_ACK_REQ, tgt, tpt,
				 MATCH, 0, NULL, 0, &h) == PTL_OK, "start");
	ITEST_CHECK(PtlSPutStream(h, md, 1000, 2001, 0) == PTL_ARG_INVALID,
		    "piece past the declared length accepted");
	ITEST_CHECK(PtlSPutStream(h, md, 1000, 1000, 1) == PTL_ARG_INVALID,
		    "EOM short of the declared length accepted");
	ITEST_CHECK(PtlSPutStream(h, md, 9000, 1001, 0) == PTL_ARG_INVALID,
		    "piece outside the MD accepted");
	ITEST_CHECK(PtlSPutStream(h, md, 1000, 1000, 0) == PTL_OK, "piece 2");
	ITEST_CHECK(PtlSPutStream(h, md, 2000, 1000, 1) == PTL_OK, "piece 3");
	memcpy(want, src, 3000);
	expect_delivery(want, 3000, "stream after refused pieces");

	/* SPIN_SPUT_MAX open at once, one more refused; then all finish */
	for (i = 0; i < SPIN_SPUT_MAX; i++)
		ITEST_CHECK(PtlSPutStart(md, i, 0, 1, PTL_ACK_REQ, tgt, tpt,
					 MATCH, 0, NULL, 0, &hs[i]) == PTL_OK,
			    "open stream %u", i);
	ITEST_CHECK(PtlSPutStart(md, 0, 0, 1, PTL_ACK_REQ, tgt, tpt, MATCH, 0,
				 NULL, 0, &hs[i]) == PTL_NO_SPACE,
		    "stream %u over the limit accepted", i);
	for (i = 0; i < SPIN_SPUT_MAX; i++) {
		ITEST_CHECK(PtlSPutStream(hs[i], md, i, 1, 1) == PTL_OK,
			    "finish stream %u", i);
		expect_delivery(&src[i], 1, "one of 64 open streams");
	}
	expect_target_quiet("streams");
	PtlMDRelease(md);
	buf_free(src, true);
	free(want);
	printf("ok stream refusals\n");
}

/* ---- what the NIC refuses (commands past the shim) -------------------- */

static void
raw_post(uint16_t op, ptl_handle_md_t md, uint64_t off, uint64_t len,
	 uint64_t msg_length, uint32_t stream, uint16_t flags)
{
	struct spinnic_cmd cmd;
	struct shim_ni *sni;
	struct shim_obj *o = shim_obj_get(md, SHIM_KIND_MD, &sni);

	ITEST_CHECK(o != NULL, "MD");
	memset(&cmd, 0, sizeof(cmd));
	cmd.op = op;
	cmd.flags = flags;
	cmd.ni = sni->nic_ni;
	cmd.md = o->nic_id;
	cmd.ack_req = PTL_ACK_REQ;
	cmd.local_offset = off;
	cmd.length = len;
	cmd.msg_length = msg_length;
	cmd.stream = stream;
	cmd.target.nid = tgt.phys.nid;
	cmd.target.pid = tgt.phys.pid;
	cmd.pt_index = tpt;
	cmd.match_bits = MATCH;
	ITEST_CHECK(shim_cmd_post(&cmd) == PTL_OK, "shim_cmd_post");
}

static void
nic_refusals(uint64_t *seed)
{
	uint8_t *src = buf_alloc(20000, true);
	ptl_handle_md_t md = md_bind(src, 20000);
	const uint32_t s = SPIN_SPUT_MAX - 1; /* a slot the shim has free */

	for (unsigned i = 0; i < 20000; i++)
		src[i] = (uint8_t)ddt_gen_rand(seed);
	/* a piece of no open stream */
	raw_post(SPINNIC_CMD_SPUT_STREAM, md, 0, 10, 0, s, 0);
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 10, "piece, no stream");
	/* a start on a busy slot; then a piece past the declared length
	 * fails the open stream (nothing had left: under one packet) */
	raw_post(SPINNIC_CMD_SPUT_START, md, 0, 100, 300, s, 0);
	raw_post(SPINNIC_CMD_SPUT_START, md, 0, 10, 50, s, 0);
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 50, "start, busy slot");
	raw_post(SPINNIC_CMD_SPUT_STREAM, md, 100, 250, 0, s, 0);
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 300, "piece past total");
	/* the slot is free again: EOM short of the total after a packet
	 * left fails the put; the target times its partial message out */
	raw_post(SPINNIC_CMD_SPUT_START, md, 0, 5000, 9000, s, 0);
	raw_post(SPINNIC_CMD_SPUT_STREAM, md, 5000, 100, 0, s,
		 SPINNIC_CMD_F_EOM);
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 9000, "EOM short");
	/* a piece of the failed stream after it closed: refused again */
	raw_post(SPINNIC_CMD_SPUT_STREAM, md, 0, 1, 0, s, SPINNIC_CMD_F_EOM);
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 1, "piece after EOM");
	/* and the slot still works */
	raw_post(SPINNIC_CMD_SPUT_START, md, 100, 3000, 7000, s, 0);
	raw_post(SPINNIC_CMD_SPUT_STREAM, md, 10000, 4000, 0, s,
		 SPINNIC_CMD_F_EOM);
	{
		uint8_t want[7000];

		memcpy(want, src + 100, 3000);
		memcpy(want + 3000, src + 10000, 4000);
		expect_delivery(want, 7000, "stream after NIC refusals");
	}
	expect_target_quiet("NIC refusals");
	PtlMDRelease(md);
	buf_free(src, true);
	printf("ok NIC refusals\n");
}

/* Child (exec'd again as "mid-stream NID PID PT"): open a stream on node
 * 0, hand part of it (packets leave), say so and wait to be killed. */
static int
midstream_main(char **argv)
{
	ptl_handle_md_t md;
	ptl_ni_limits_t lim;
	spin_handle_sput_t h;
	uint8_t *src;

	tgt.phys.nid = (ptl_nid_t)strtoul(argv[2], NULL, 0);
	tgt.phys.pid = (ptl_pid_t)strtoul(argv[3], NULL, 0);
	tpt = (ptl_pt_index_t)strtoul(argv[4], NULL, 0);
	if (PtlInit() != PTL_OK ||
	    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL,
		      PTL_PID_ANY, NULL, &lim, &ni) != PTL_OK ||
	    PtlEQAlloc(ni, 64, &eq) != PTL_OK)
		return 1;
	src = buf_alloc(100000, true);
	memset(src, 0x3c, 100000);
	md = md_bind(src, 100000);
	if (PtlSPutStart(md, 0, 10000, 100000, PTL_ACK_REQ, tgt, tpt, MATCH,
			 0, NULL, 0, &h) != PTL_OK ||
	    PtlSPutStream(h, md, 10000, 5000, 0) != PTL_OK)
		return 1;
	usleep(300 * 1000);
	printf("mid\n");
	fflush(stdout);
	pause();
	return 0;
}

static void
midstream_kill(const char *self)
{
	char nid[16], pid[16], pt[16], line[8];
	int out[2], status;
	pid_t p;

	snprintf(nid, sizeof(nid), "%u", tgt.phys.nid);
	snprintf(pid, sizeof(pid), "%u", tgt.phys.pid);
	snprintf(pt, sizeof(pt), "%u", tpt);
	ITEST_CHECK(pipe(out) == 0, "pipe");
	p = fork();
	ITEST_CHECK(p >= 0, "fork");
	if (p == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		close(rep_fd);
		close(ctl_fd);
		execl(self, self, "mid-stream", nid, pid, pt, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	ITEST_CHECK(read_full(out[0], line, 4) == 0 &&
		    memcmp(line, "mid\n", 4) == 0, "mid-stream client failed");
	kill(p, SIGKILL);
	ITEST_CHECK(waitpid(p, &status, 0) == p, "waitpid");
	close(out[0]);
	printf("ok client killed mid-stream\n");
}

/* ---- outbound sPIN ---------------------------------------------------- */

/* A type in NIC memory. */
static spin_handle_nicmem_t
type_upload(struct ddt_type *t, size_t *len_p)
{
	spin_handle_nicmem_t mem;
	ssize_t n = ddt_serialize(t, NULL, 0);
	void *ser;

	ITEST_CHECK(n > 0, "ddt_serialize: %zd", n);
	ser = malloc((size_t)n);
	ITEST_CHECK(ser != NULL && ddt_serialize(t, ser, (size_t)n) == n,
		    "ddt_serialize");
	ITEST_CHECK(spin_nicmem_alloc(ni, (size_t)n, &mem) == PTL_OK,
		    "spin_nicmem_alloc");
	ITEST_CHECK(spin_nicmem_write(mem, 0, ser, (size_t)n) == PTL_OK,
		    "spin_nicmem_write");
	free(ser);
	*len_p = (size_t)n;
	return mem;
}

/* One random type, @p count elements, from region or malloc'd memory:
 * the target gets exactly ddt_pack()'s bytes. */
static void
proc_case(uint64_t *seed, unsigned idx, bool region)
{
	struct ddt_type *t = NULL;
	struct ddt_iov *map = NULL;
	int64_t n, lo, hi, count = 1 + (int64_t)(ddt_gen_rand(seed) % 3);
	int64_t size;
	spin_handle_nicmem_t mem;
	ptl_handle_md_t md;
	uint8_t *buf, *want;
	size_t span, blen;
	char what[96];

	while (t == NULL)
		t = ddt_gen_random(seed, 3, 48 * 1024);
	ITEST_CHECK(ddt_commit(t) == 0, "ddt_commit");
	size = ddt_size(t) * count;
	n = ddt_ref_typemap(t, count, &map);
	ITEST_CHECK(n >= 0, "ddt_ref_typemap");
	ddt_ref_span(map, n, &lo, &hi);
	free(map);
	if (lo > 0)
		lo = 0;
	if (hi < 0)
		hi = 0;
	span = (size_t)(hi - lo);
	buf = buf_alloc(span, region);
	for (size_t i = 0; i < span; i++)
		buf[i] = (uint8_t)ddt_gen_rand(seed);
	want = buf_alloc((size_t)size, false);
	/* the baseline: host pack */
	ITEST_CHECK(ddt_pack(t, count, buf - lo, want) == 0, "ddt_pack");
	md = md_bind(buf, span);
	mem = type_upload(t, &blen);
	snprintf(what, sizeof(what), "process put %u: %lld x %lld B, %s", idx,
		 (long long)count, (long long)ddt_size(t),
		 region ? "region" : "malloc");
	ITEST_CHECK(PtlProcessPut(md, (ptl_size_t)-lo, mem, (ptl_size_t)count,
				  (ptl_size_t)size, PTL_ACK_REQ, tgt, tpt,
				  MATCH, 0, NULL, 0) == PTL_OK, "%s", what);
	expect_delivery(want, (uint64_t)size, what);
	proc_count(size);
	ITEST_CHECK(spin_nicmem_free(mem) == PTL_OK, "spin_nicmem_free");
	PtlMDRelease(md);
	buf_free(buf, region);
	free(want);
	ddt_free(t);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * One typed message three ways, each timed from the first call to ACK and
 * checked against host pack: host pack + PtlPut (the baseline), a
 * streaming put with one piece per block the host finds (ddt_flatten), and
 * PtlProcessPut. Prints the ratios (informational: this machine is
 * shared).
 */
static void
typed_three_ways(const char *expr)
{
	struct ddt_type *t = ddt_parse(expr, NULL);
	int64_t size, lo, text, nb;
	double best[3] = { 1e9, 1e9, 1e9 };
	spin_handle_nicmem_t mem;
	ptl_handle_md_t md, pmd;
	struct ddt_iov *iov;
	uint8_t *buf, *packed, *want;
	size_t blen;
	char what[160];

	ITEST_CHECK(t != NULL && ddt_commit(t) == 0, "type %s", expr);
	size = ddt_size(t);
	lo = ddt_true_lb(t);
	text = ddt_true_extent(t);
	ITEST_CHECK(lo == 0, "%s: true lb %lld", expr, (long long)lo);
	buf = buf_alloc((size_t)text, true);
	packed = buf_alloc((size_t)size, true);
	want = buf_alloc((size_t)size, false);
	for (int64_t i = 0; i < text; i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	ITEST_CHECK(ddt_pack(t, 1, buf, want) == 0, "ddt_pack");
	nb = ddt_flatten(t, 1, NULL, 0);
	iov = malloc(sizeof(*iov) * (size_t)nb);
	ITEST_CHECK(iov != NULL && ddt_flatten(t, 1, iov, nb) == nb,
		    "ddt_flatten");
	md = md_bind(buf, (size_t)text);
	pmd = md_bind(packed, (size_t)size);
	mem = type_upload(t, &blen);
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now_s();
		spin_handle_sput_t h;

		/* host pack, then an ordinary put */
		ITEST_CHECK(ddt_pack(t, 1, buf, packed) == 0, "ddt_pack");
		ITEST_CHECK(PtlPut(pmd, 0, (ptl_size_t)size, PTL_ACK_REQ, tgt,
				   tpt, MATCH, 0, NULL, 0) == PTL_OK, "PtlPut");
		snprintf(what, sizeof(what), "%s: host pack + put", expr);
		expect_delivery(want, (uint64_t)size, what);
		best[0] = RTE_MIN_D(best[0], now_s() - t0);

		/* streaming: the host finds the blocks, the NIC packs them */
		t0 = now_s();
		ITEST_CHECK(PtlSPutStart(md, (ptl_size_t)iov[0].off,
					 (ptl_size_t)iov[0].len,
					 (ptl_size_t)size, PTL_ACK_REQ, tgt,
					 tpt, MATCH, 0, NULL, 0, &h) == PTL_OK,
			    "PtlSPutStart");
		for (int64_t b = 1; b < nb; b++)
			ITEST_CHECK(PtlSPutStream(h, md, (ptl_size_t)iov[b].off,
						  (ptl_size_t)iov[b].len,
						  b == nb - 1) == PTL_OK,
				    "PtlSPutStream %lld", (long long)b);
		snprintf(what, sizeof(what), "%s: streaming put", expr);
		expect_delivery(want, (uint64_t)size, what);
		best[1] = RTE_MIN_D(best[1], now_s() - t0);

		/* outbound sPIN: the NIC walks the type */
		t0 = now_s();
		ITEST_CHECK(PtlProcessPut(md, 0, mem, 1, (ptl_size_t)size,
					  PTL_ACK_REQ, tgt, tpt, MATCH, 0, NULL,
					  0) == PTL_OK, "PtlProcessPut");
		snprintf(what, sizeof(what), "%s: process put", expr);
		expect_delivery(want, (uint64_t)size, what);
		proc_count(size);
		best[2] = RTE_MIN_D(best[2], now_s() - t0);
	}
	printf("ok %s, %lld blocks: time to ACK relative to host pack + put: "
	       "streaming %.2f, process put %.2f\n", expr, (long long)nb,
	       best[1] / best[0], best[2] / best[0]);
	spin_nicmem_free(mem);
	PtlMDRelease(pmd);
	PtlMDRelease(md);
	free(iov);
	free(want);
	buf_free(packed, true);
	buf_free(buf, true);
	ddt_free(t);
}

static void
proc_bad(void)
{
	struct ddt_type *t = ddt_parse("vector(64,3,7)[int32]", NULL);
	uint8_t *buf = buf_alloc(64 * 7 * 4, true), junk[256];
	spin_handle_nicmem_t mem, bad;
	ptl_handle_md_t md, small;
	size_t blen;

	ITEST_CHECK(t != NULL && ddt_commit(t) == 0, "type");
	md = md_bind(buf, 64 * 7 * 4);
	small = md_bind(buf, 64 * 7 * 4 - 20);
	mem = type_upload(t, &blen);
	/* what the shim can check */
	ITEST_CHECK(PtlProcessPut(md, 0, (spin_handle_nicmem_t)777, 1, 768,
				  PTL_ACK_REQ, tgt, tpt, MATCH, 0, NULL, 0) ==
		    PTL_ARG_INVALID, "made-up type handle accepted");
	ITEST_CHECK(PtlProcessPut(md, 64 * 7 * 4 + 1, mem, 1, 768,
				  PTL_ACK_REQ, tgt, tpt, MATCH, 0, NULL, 0) ==
		    PTL_ARG_INVALID, "origin past the MD accepted");
	/* what only the NIC can check: SEND with ni_fail, nothing sent */
	ITEST_CHECK(PtlProcessPut(md, 0, mem, 1, 767, PTL_ACK_REQ, tgt, tpt,
				  MATCH, 0, NULL, 0) == PTL_OK, "post");
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 767, "wrong length");
	ITEST_CHECK(PtlProcessPut(small, 0, mem, 1, 768, PTL_ACK_REQ, tgt,
				  tpt, MATCH, 0, NULL, 0) == PTL_OK, "post");
	ev_wait(PTL_EVENT_SEND, PTL_NI_SEGV, 768, "type reaches past the MD");
	memset(junk, 0xa5, sizeof(junk));
	ITEST_CHECK(spin_nicmem_alloc(ni, sizeof(junk), &bad) == PTL_OK &&
		    spin_nicmem_write(bad, 0, junk, sizeof(junk)) == PTL_OK,
		    "junk blob");
	ITEST_CHECK(PtlProcessPut(md, 0, bad, 1, 768, PTL_ACK_REQ, tgt, tpt,
				  MATCH, 0, NULL, 0) == PTL_OK, "post");
	ev_wait(PTL_EVENT_SEND, PTL_NI_OP_VIOLATION, 768, "junk type blob");
	expect_target_quiet("refused process puts");
	spin_nicmem_free(bad);
	spin_nicmem_free(mem);
	PtlMDRelease(small);
	PtlMDRelease(md);
	buf_free(buf, true);
	ddt_free(t);
	printf("ok process put refusals\n");
}

int
main(int argc, char **argv)
{
	uint64_t seed = 0x5eed5eedull;
	struct spin_nic_info info;
	ptl_ni_limits_t lim;
	uint32_t ready[3];
	int rep[2], ctl[2], status;
	long long timeouts;
	unsigned i;

	/* SPINNIC_ITEST_FAULTS (the harness): the same over a lossy link */
	const char *faults = getenv("SPINNIC_ITEST_FAULTS");

	if (argc == 5 && strcmp(argv[1], "mid-stream") == 0)
		return midstream_main(argv);
	itest_init("itest_sput", 240);
	itest_spinnic_start(NULL);
	ITEST_CHECK(pipe(rep) == 0 && pipe(ctl) == 0, "pipe");
	child = fork();
	ITEST_CHECK(child >= 0, "fork");
	if (child == 0) {
		close(rep[0]);
		close(ctl[1]);
		target_main(rep[1], ctl[0]);
	}
	close(rep[1]);
	close(ctl[0]);
	rep_fd = rep[0];
	ctl_fd = ctl[1];
	ITEST_CHECK(read_full(rep_fd, ready, sizeof(ready)) == 0,
		    "target did not start");
	tgt.phys.nid = ready[0];
	tgt.phys.pid = ready[1];
	tpt = ready[2];

	setenv("SPINNIC_SOCKET", itest_socket_path(0), 1);
	ITEST_CHECK(PtlInit() == PTL_OK, "PtlInit");
	ITEST_CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
			      PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim,
			      &ni) == PTL_OK, "PtlNIInit");
	ITEST_CHECK(PtlEQAlloc(ni, 1024, &eq) == PTL_OK, "PtlEQAlloc");
	ITEST_CHECK(spin_nic_info(ni, &info) == PTL_OK, "spin_nic_info");
	got = malloc(ME_BYTES);
	ITEST_CHECK(got != NULL, "malloc");
	pay_size = info.payload_size;
	ITEST_CHECK(pay_size > 0, "payload size");

	stream_tests(info.payload_size, &seed);
	stream_bad(&seed);
	nic_refusals(&seed);
	midstream_kill(argv[0]);
	for (i = 0; i < 40; i++)
		proc_case(&seed, i, i % 2 == 0);
	printf("ok 40 process puts of random types\n");
	proc_bad();
	typed_three_ways("vector(4096,256,512)[byte]");
	typed_three_ways("vector(1024,1024,2048)[byte]");
	typed_three_ways("vector(16384,16,32)[byte]");
	/* the two partial messages time out at the target (no PUT event) */
	sleep(ENG_MSG_TIMEOUT_S + 2);
	expect_target_quiet("partial messages");

	PtlEQFree(eq);
	PtlNIFini(ni);
	PtlFini();
	close(ctl_fd);
	ITEST_CHECK(waitpid(child, &status, 0) == child &&
		    WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "target exited with %#x", status);
	free(got);
	itest_spinnic_finish();
	if (faults == NULL) {
		itest_expect_no_drops();
	} else {
		long long f = 0, v;
		unsigned node;

		for (node = 0; node < 2; node++) {
			v = itest_counter(node, "faults_rx");
			f += v > 0 ? v : 0;
			v = itest_counter(node, "faults_tx");
			f += v > 0 ? v : 0;
		}

		ITEST_CHECK(f > 0, "no fault was injected");
		printf("%lld faults injected\n", f);
	}
	timeouts = itest_counter(1, "timeouts");
	ITEST_CHECK(timeouts >= 2, "target timed out %lld messages, want 2",
		    timeouts);
	ITEST_CHECK(itest_counter(0, "sput_bad") >= 5, "sput_bad not counted");
	/* the HPUs gathered every packet of the processed puts (sender-side
	 * handlers), none failed or was refused for good; retransmissions
	 * re-gather inline and do not count */
	ITEST_CHECK(proc_pkts > 0 &&
		    itest_counter(0, "sput_hpu_pkts") == proc_pkts &&
		    itest_counter(0, "sput_hpu_jobs") == proc_pkts,
		    "HPU gather: %lld jobs, %lld packets, want %lld",
		    itest_counter(0, "sput_hpu_jobs"),
		    itest_counter(0, "sput_hpu_pkts"), proc_pkts);
	ITEST_CHECK(itest_counter(0, "sput_hpu_inline") == proc_empty &&
		    itest_counter(0, "sput_hpu_failed") == 0 &&
		    itest_counter(0, "sput_hpu_stale") == 0,
		    "HPU gather: inline %lld (want %lld), failed %lld, stale "
		    "%lld", itest_counter(0, "sput_hpu_inline"), proc_empty,
		    itest_counter(0, "sput_hpu_failed"),
		    itest_counter(0, "sput_hpu_stale"));
	printf("node 0: %lld processed-put packets built by the HPUs, %lld "
	       "puts of zero bytes inline\n", proc_pkts, proc_empty);
	printf("node 0: sput_streams %lld sput_procs %lld sput_bad %lld "
	       "sput_failed %lld out_detach_drops %lld drops %lld; node 1: "
	       "timeouts %lld drops %lld\n", itest_counter(0, "sput_streams"),
	       itest_counter(0, "sput_procs"), itest_counter(0, "sput_bad"),
	       itest_counter(0, "sput_failed"),
	       itest_counter(0, "out_detach_drops"), itest_counter(0, "drops"),
	       timeouts, itest_counter(1, "drops"));
	return 0;
}
