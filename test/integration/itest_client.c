/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * itest_client: the client process of the integration tests. Uses only the
 * client API (portals4.h, spin.h). One role per run, chosen by argv[1],
 * options as key=value:
 *
 *   ROLE := target | search | put | get | stream | hold
 *
 * The grammar, every key with its type, default and roles, and what each
 * role prints: test/integration/README.md, "The client mini-language".
 * Tests may also build the arguments from typed structs (harness.h,
 * struct itest_pair).
 *
 * The data of a message with seed S is pattern(i, S) at byte i.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ddt.h>
#include <portals4.h>
#include <spin.h>
#include <spin_handler_args.h>

#define EV_TIMEOUT_MS 15000

static const char *role = "client";
static uint64_t payload_size = 2048;


struct opts {
	const char *op, *buf, *list, *handler, *expect, *target;
	uint64_t len, match, seed, pt, tail;
	unsigned count;
	unsigned window;
	bool me;
	bool le;
	long vec_count, vec_blocklen, vec_stride;
};

static void __attribute__((format(printf, 1, 2), noreturn))
fail(const char *fmt, ...)
{
	va_list ap;

	printf("fail %s: ", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

#define CHECK_PTL(call) do { \
	int rc_ = (call); \
	if (rc_ != PTL_OK) \
		fail("%s: rc %d", #call, rc_); \
} while (0)

static inline uint8_t
pattern(uint64_t i, uint64_t seed)
{
	return (uint8_t)(i * 131 + (i >> 9) + seed * 17 + 1);
}

static void
opts_parse(struct opts *o, int argc, char **argv)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->op = "put";
	o->buf = "region";
	o->list = "priority";
	o->handler = "none";
	o->expect = "ok";
	o->len = 1;
	o->match = 0x5a5a;
	o->count = 1;
	o->seed = 1;
	for (i = 2; i < argc; i++) {
		char *v = strchr(argv[i], '=');

		if (v == NULL)
			fail("bad option %s", argv[i]);
		*v++ = '\0';
		if (strcmp(argv[i], "op") == 0)
			o->op = v;
		else if (strcmp(argv[i], "buf") == 0)
			o->buf = v;
		else if (strcmp(argv[i], "list") == 0)
			o->list = v;
		else if (strcmp(argv[i], "handler") == 0)
			o->handler = v;
		else if (strcmp(argv[i], "expect") == 0)
			o->expect = v;
		else if (strcmp(argv[i], "target") == 0)
			o->target = v;
		else if (strcmp(argv[i], "len") == 0)
			o->len = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "match") == 0)
			o->match = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "seed") == 0)
			o->seed = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "pt") == 0)
			o->pt = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "ni") == 0)
			o->le = strcmp(v, "nomatch") == 0;
		else if (strcmp(argv[i], "window") == 0)
			o->window = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "me") == 0)
			o->me = strcmp(v, "1") == 0;
		else if (strcmp(argv[i], "count") == 0)
			o->count = (unsigned)strtoul(v, NULL, 0);
		else if (strcmp(argv[i], "tail") == 0)
			o->tail = strtoull(v, NULL, 0);
		else if (strcmp(argv[i], "vec") == 0) {
			if (sscanf(v, "%ld,%ld,%ld", &o->vec_count,
				   &o->vec_blocklen, &o->vec_stride) != 3)
				fail("bad vec=%s", v);
		} else
			fail("unknown option %s", argv[i]);
	}
}

/* buf=early: one malloc made before PtlInit (as an MPI program's arrays
 * are before MPI_Init), handed out a piece at a time */
#define EARLY_POOL (8u << 20)
static uint8_t *early_pool;
static uint64_t early_used;

static void *
buf_alloc(const struct opts *o, uint64_t len)
{
	void *p;

	if (len == 0)
		len = 1;
	if (strcmp(o->buf, "region") == 0) {
		p = spin_host_alloc(len);
	} else if (strcmp(o->buf, "malloc") == 0) {
		p = malloc(len);
	} else if (strcmp(o->buf, "early") == 0) {
		if (early_pool == NULL || len > EARLY_POOL - early_used)
			fail("buf=early: %" PRIu64 " bytes do not fit the %u "
			     "malloc'd before PtlInit", len, EARLY_POOL);
		p = early_pool + early_used;
		early_used += (len + 63) & ~(uint64_t)63;
	} else {
		fail("buf=%s: region, malloc or early", o->buf);
	}
	if (p == NULL)
		fail("cannot allocate %" PRIu64 " bytes (%s)", len, o->buf);
	return p;
}

static void
buf_free(const struct opts *o, void *p)
{
	if (strcmp(o->buf, "region") == 0)
		spin_host_free(p);
	else
		free(p);
}

static ptl_process_t
target_parse(const struct opts *o)
{
	ptl_process_t t;
	unsigned nid, pid;

	if (o->target == NULL || sscanf(o->target, "%u:%u", &nid, &pid) != 2)
		fail("target=NID:PID missing");
	t.phys.nid = nid;
	t.phys.pid = pid;
	return t;
}

struct ni {
	ptl_handle_ni_t ni;
	ptl_handle_eq_t eq;
	ptl_process_t id;
};

static void
ni_open(struct ni *n, const struct opts *o)
{
	struct spin_nic_info info;
	ptl_ni_limits_t lim;

	CHECK_PTL(PtlInit());
	CHECK_PTL(PtlNIInit(PTL_IFACE_DEFAULT,
			    (o->le ? PTL_NI_NO_MATCHING : PTL_NI_MATCHING) |
			    PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, &lim, &n->ni));
	CHECK_PTL(PtlGetPhysId(n->ni, &n->id));
	CHECK_PTL(PtlEQAlloc(n->ni, 256, &n->eq));
	CHECK_PTL(spin_nic_info(n->ni, &info));
	payload_size = info.payload_size;
}

static void
ni_close(struct ni *n)
{
	PtlEQFree(n->eq);
	PtlNIFini(n->ni);
	PtlFini();
}

static const char *
ev_name(ptl_event_kind_t k)
{
	switch (k) {
	case PTL_EVENT_GET: return "GET";
	case PTL_EVENT_PUT: return "PUT";
	case PTL_EVENT_PUT_OVERFLOW: return "PUT_OVERFLOW";
	case PTL_EVENT_REPLY: return "REPLY";
	case PTL_EVENT_SEND: return "SEND";
	case PTL_EVENT_ACK: return "ACK";
	case PTL_EVENT_LINK: return "LINK";
	case PTL_EVENT_AUTO_UNLINK: return "AUTO_UNLINK";
	case PTL_EVENT_AUTO_FREE: return "AUTO_FREE";
	case PTL_EVENT_SEARCH: return "SEARCH";
	default: return "other";
	}
}

/* Next event that is not a LINK/UNLINK notification. */
static void
ev_next(struct ni *n, ptl_event_t *ev)
{
	for (;;) {
		unsigned which;
		int rc = PtlEQPoll(&n->eq, 1, EV_TIMEOUT_MS, ev, &which);

		if (rc == PTL_EQ_EMPTY)
			fail("no event within %d ms", EV_TIMEOUT_MS);
		if (rc == PTL_EQ_DROPPED)
			fail("event queue overflowed");
		if (rc != PTL_OK)
			fail("PtlEQPoll: rc %d", rc);
		if (ev->type == PTL_EVENT_LINK ||
		    ev->type == PTL_EVENT_AUTO_UNLINK ||
		    ev->type == PTL_EVENT_AUTO_FREE)
			continue;
		return;
	}
}

/* What the checksum handler wrote after the data of message m. */
static void
checksum_check(const struct opts *o, unsigned m, const uint8_t *win)
{
	struct spin_csum_result r;
	uint64_t sum = 0, wsum = 0, i, pkts;

	for (i = 0; i < o->len; i++) {
		uint8_t b = pattern(i, o->seed + m);

		sum += b;
		wsum += (i + 1) * b;
	}
	memcpy(&r, win + o->len, sizeof(r));
	pkts = (o->len + payload_size - 1) / payload_size;
	if (pkts == 0)
		pkts = 1;
	if (r.sum != sum || r.wsum != wsum || r.bytes != o->len ||
	    r.pkts != pkts)
		fail("checksum of message %u: sum %" PRIu64 "/%" PRIu64
		     " wsum %" PRIu64 "/%" PRIu64 " bytes %" PRIu64 "/%" PRIu64
		     " pkts %" PRIu64 "/%" PRIu64, m, r.sum, sum, r.wsum, wsum,
		     r.bytes, o->len, r.pkts, pkts);
}

static void
ev_expect(struct ni *n, ptl_event_kind_t kind, ptl_event_t *ev)
{
	ev_next(n, ev);
	if (ev->type != kind)
		fail("expected a %s event, got %s (%d), ni_fail_type %d",
		     ev_name(kind), ev_name(ev->type), (int)ev->type,
		     (int)ev->ni_fail_type);
}

/* ---- handler contexts ---------------------------------------------------- */

/* The vector handler's type: vector(count, blocklen, stride)[double]. */
static struct ddt_type *
vec_type(const struct opts *o)
{
	struct ddt_type *t = ddt_vector(o->vec_count, o->vec_blocklen,
					o->vec_stride, ddt_base(DDT_DOUBLE));

	if (t == NULL || ddt_commit(t) != 0)
		fail("vector(%ld,%ld,%ld)[double]: %s", o->vec_count,
		     o->vec_blocklen, o->vec_stride, strerror(errno));
	return t;
}

/* The vector handler's arguments for one element of @p t at window 0. */
static void
ctx_vector_args(const struct opts *o, struct spin_ctx_desc *d)
{
	static struct spin_vec_args a;

	memset(&a, 0, sizeof(a));
	a.version = SPIN_VEC_ARGS_VERSION;
	a.blocklen = (uint64_t)o->vec_blocklen * sizeof(double);
	a.count = (uint64_t)o->vec_count;
	a.stride = o->vec_stride * (int64_t)sizeof(double);
	a.extent = 0;
	a.nelem = 1;
	a.base = 0;
	d->family = "ddt_vector";
	d->args = &a;
	d->args_len = sizeof(a);
}

/* The checksum handler: copy the payload, result right after it. */
static void
ctx_checksum_args(struct spin_ctx_desc *d)
{
	static struct spin_csum_args a;

	memset(&a, 0, sizeof(a));
	a.version = SPIN_CSUM_ARGS_VERSION;
	a.flags = SPIN_CSUM_F_COPY;
	a.result_off = SPIN_CSUM_RESULT_AFTER;
	d->family = "checksum";
	d->args = &a;
	d->args_len = sizeof(a);
}

/* ---- roles ---------------------------------------------------------------- */

static int
role_target(const struct opts *o, bool search)
{
	bool vector = strcmp(o->handler, "vector") == 0;
	bool checksum = strcmp(o->handler, "checksum") == 0;
	bool handler = strcmp(o->handler, "none") != 0;
	bool get = strcmp(o->op, "get") == 0;
	struct ddt_type *type = NULL;
	uint64_t win_len = o->len, i;
	ptl_handle_ct_t ct;
	ptl_handle_me_t meh;
	ptl_pt_index_t pt;
	ptl_ct_event_t cte;
	ptl_event_t ev;
	spin_handle_ctx_t ctx = SPIN_CTX_NONE;
	struct ni n;
	uint8_t *buf;
	ptl_me_t me;
	unsigned m;

	ni_open(&n, o);
	if ((vector || checksum) && o->count != 1)
		fail("handler=%s takes count=1", o->handler);
	if (o->tail != 0 && (o->count != 1 || vector || o->tail > 4096))
		fail("tail=%" PRIu64 ": count=1, no vector, at most 4096",
		     o->tail);
	if (vector) {
		type = vec_type(o);
		win_len = (uint64_t)ddt_true_extent(type);
		if ((uint64_t)ddt_size(type) != o->len)
			fail("len=%" PRIu64 " but the vector packs %" PRId64
			     " bytes", o->len, ddt_size(type));
	} else if (checksum) {
		win_len = o->len + sizeof(struct spin_csum_result);
	}
	win_len += o->tail;
	buf = buf_alloc(o, win_len * o->count);
	if (get)
		for (i = 0; i < o->len; i++)
			buf[i] = pattern(i, o->seed);
	else
		memset(buf, 0, win_len * o->count);
	CHECK_PTL(PtlPTAlloc(n.ni, 0, n.eq, PTL_PT_ANY, &pt));
	CHECK_PTL(PtlCTAlloc(n.ni, &ct));
	if (handler) {
		struct spin_ctx_desc d;

		memset(&d, 0, sizeof(d));
		d.family = o->handler;
		if (vector)
			ctx_vector_args(o, &d);
		else if (checksum)
			ctx_checksum_args(&d);
		CHECK_PTL(spin_ctx_install(n.ni, &d, &ctx));
	}

	memset(&me, 0, sizeof(me));
	me.start = buf;
	me.length = win_len * o->count;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.match_id.phys.nid = PTL_NID_ANY;
	me.match_id.phys.pid = PTL_PID_ANY;
	me.match_bits = o->match;
	me.ignore_bits = 0;
	me.options = (get ? PTL_ME_OP_GET : PTL_ME_OP_PUT) |
		PTL_ME_EVENT_CT_COMM | PTL_ME_MANAGE_LOCAL;
	if (o->le) {
		/* non-matching NI: the first list entry takes it */
		ptl_le_t le;

		memset(&le, 0, sizeof(le));
		le.start = me.start;
		le.length = me.length;
		le.ct_handle = me.ct_handle;
		le.uid = PTL_UID_ANY;
		/* no locally managed offset for LEs: one message */
		le.options = me.options & ~(unsigned)PTL_ME_MANAGE_LOCAL;
		if (handler || search || o->count != 1)
			fail("ni=nomatch: no handler, no search, count=1");
		CHECK_PTL(PtlLEAppend(n.ni, pt, &le, PTL_PRIORITY_LIST, buf,
				      &meh));
	} else if (handler)
		CHECK_PTL(spin_me_append(n.ni, pt, &me,
					 search ? PTL_OVERFLOW_LIST :
					 PTL_PRIORITY_LIST, ctx, buf, &meh));
	else
		CHECK_PTL(PtlMEAppend(n.ni, pt, &me,
				      search || strcmp(o->list, "overflow") == 0 ?
				      PTL_OVERFLOW_LIST : PTL_PRIORITY_LIST,
				      buf, &meh));
	printf("ready %u %u %u\n", n.id.phys.nid, n.id.phys.pid, pt);
	fflush(stdout);

	for (m = 0; m < o->count; m++) {
		/* locally managed offset: messages land back to back */
		uint64_t base = (uint64_t)m * o->len;

		ev_expect(&n, get ? PTL_EVENT_GET : PTL_EVENT_PUT, &ev);
		if (ev.ni_fail_type != PTL_NI_OK)
			fail("event %u: ni_fail_type %d", m, ev.ni_fail_type);
		if (ev.rlength != o->len || ev.mlength != o->len)
			fail("event %u: rlength %" PRIu64 " mlength %" PRIu64
			     ", want %" PRIu64, m, (uint64_t)ev.rlength,
			     (uint64_t)ev.mlength, o->len);
		if (!o->le && ev.match_bits != o->match)
			fail("event %u: match bits %" PRIx64, m,
			     (uint64_t)ev.match_bits);
		if (ev.user_ptr != buf)
			fail("event %u: user_ptr %p, want %p", m, ev.user_ptr,
			     (void *)buf);
		if (!get && ev.hdr_data != o->seed + m)
			fail("event %u: hdr_data %" PRIu64 ", want %" PRIu64,
			     m, (uint64_t)ev.hdr_data, o->seed + m);
		if (!get && !vector && ev.start != buf + base)
			fail("event %u: start %p, want %p", m, ev.start,
			     (void *)(buf + base));
		if (get)
			continue;
		if (vector) {
			uint8_t *want = calloc(1, win_len), *packed;

			packed = malloc(o->len);
			if (want == NULL || packed == NULL)
				fail("out of memory");
			for (i = 0; i < o->len; i++)
				packed[i] = pattern(i, o->seed + m);
			if (ddt_unpack(type, 1, packed, want) != 0)
				fail("ddt_unpack");
			if (memcmp(want, buf + base, win_len) != 0)
				fail("message %u: vector data differs", m);
			free(want);
			free(packed);
		} else {
			for (i = 0; i < o->len; i++)
				if (buf[base + i] != pattern(i, o->seed + m))
					fail("message %u byte %" PRIu64
					     ": %u, want %u", m, i,
					     buf[base + i],
					     pattern(i, o->seed + m));
		}
		if (checksum)
			checksum_check(o, m, buf + base);
		if (o->tail != 0) {
			printf("tail ");
			for (i = 0; i < o->tail; i++)
				printf("%02x", buf[win_len - o->tail + i]);
			printf("\n");
			fflush(stdout);
		}
	}
	{
		/* the counter may be bumped just after the event */
		ptl_size_t want = o->count;
		unsigned which;
		int rc = PtlCTPoll(&ct, &want, 1, EV_TIMEOUT_MS, &cte, &which);

		if (rc != PTL_OK && rc != PTL_CT_NONE_REACHED)
			fail("PtlCTPoll: rc %d", rc);
	}
	CHECK_PTL(PtlCTGet(ct, &cte));
	if (cte.success != o->count || cte.failure != 0)
		fail("CT success %" PRIu64 " failure %" PRIu64 ", want %u/0",
		     (uint64_t)cte.success, (uint64_t)cte.failure, o->count);

	if (search) {
		/* the message is in the overflow buffer: find its header */
		CHECK_PTL(PtlMESearch(n.ni, pt, &me, PTL_SEARCH_ONLY, buf));
		ev_expect(&n, PTL_EVENT_SEARCH, &ev);
		if (ev.ni_fail_type != PTL_NI_OK || ev.mlength != o->len ||
		    ev.match_bits != o->match)
			fail("search: ni_fail_type %d mlength %" PRIu64,
			     ev.ni_fail_type, (uint64_t)ev.mlength);
		me.match_bits = o->match + 1;
		CHECK_PTL(PtlMESearch(n.ni, pt, &me, PTL_SEARCH_ONLY, buf));
		ev_expect(&n, PTL_EVENT_SEARCH, &ev);
		if (ev.ni_fail_type != PTL_NI_NO_MATCH)
			fail("search for nothing: ni_fail_type %d",
			     ev.ni_fail_type);
	}
	printf("ok %s %u message(s) of %" PRIu64 " bytes\n", o->op, o->count,
	       o->len);
	fflush(stdout);
	if (o->le)
		PtlLEUnlink(meh);
	else
		PtlMEUnlink(meh);
	if (ctx != SPIN_CTX_NONE)
		spin_ctx_free(ctx);
	PtlCTFree(ct);
	PtlPTFree(n.ni, pt);
	ni_close(&n);
	buf_free(o, buf);
	if (type != NULL)
		ddt_free(type);
	return 0;
}

/* Check one event of put m; @return true when the put is complete. */
static bool
put_event(const struct opts *o, const ptl_event_t *ev, uint8_t *state)
{
	bool want_ok = strcmp(o->expect, "ok") == 0;
	bool send_fail = strcmp(o->expect, "sendfail") == 0;
	bool undeliv = strcmp(o->expect, "undeliverable") == 0;

	if (undeliv) {
		/* the peer went silent: SEND fails (no ACK follows), or SEND
		 * went and the ACK fails */
		if (ev->type == PTL_EVENT_SEND && !(*state & 1)) {
			*state |= ev->ni_fail_type == PTL_NI_UNDELIVERABLE ?
				3 : 1;
			if (ev->ni_fail_type != PTL_NI_UNDELIVERABLE &&
			    ev->ni_fail_type != PTL_NI_OK)
				fail("SEND: ni_fail_type %d, want "
				     "UNDELIVERABLE", ev->ni_fail_type);
		} else if (ev->type == PTL_EVENT_ACK && !(*state & 2)) {
			if (ev->ni_fail_type != PTL_NI_UNDELIVERABLE)
				fail("ACK: ni_fail_type %d, want "
				     "UNDELIVERABLE", ev->ni_fail_type);
			*state |= 2;
		} else {
			fail("unexpected %s event (ni_fail_type %d)",
			     ev_name(ev->type), ev->ni_fail_type);
		}
		return *state == 3;
	}
	if (ev->type == PTL_EVENT_SEND && !(*state & 1)) {
		if (send_fail) {
			/* failed before leaving: no ACK comes */
			if (ev->ni_fail_type == PTL_NI_OK)
				fail("SEND: ni_fail_type OK for an "
				     "unreachable node");
			*state |= 2;
		} else if (ev->ni_fail_type != PTL_NI_OK) {
			fail("SEND: ni_fail_type %d", ev->ni_fail_type);
		}
		*state |= 1;
	} else if (ev->type == PTL_EVENT_ACK && !(*state & 2) && !send_fail) {
		if (want_ok && ev->ni_fail_type != PTL_NI_OK)
			fail("ACK: ni_fail_type %d", ev->ni_fail_type);
		if (!want_ok && ev->ni_fail_type == PTL_NI_OK)
			fail("ACK: ni_fail_type OK for a put that cannot "
			     "match");
		if (want_ok && ev->mlength != o->len)
			fail("ACK: mlength %" PRIu64, (uint64_t)ev->mlength);
		*state |= 2;
	} else {
		fail("unexpected %s event (ni_fail_type %d)",
		     ev_name(ev->type), ev->ni_fail_type);
	}
	return *state == 3;
}

/*
 * Puts m = 0..count-1 of pattern(seed + m), up to window=W in flight (each
 * from its own slot of the MD, refilled after its SEND), SEND and ACK
 * checked for each.
 */
static int
role_put(const struct opts *o)
{
	ptl_process_t t = target_parse(o);
	unsigned window = o->window == 0 ? 1 : o->window;
	unsigned next = 0, done = 0, m;
	uint8_t *state, *buf;
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	ptl_md_t md;
	struct ni n;
	uint64_t i;

	ni_open(&n, o);
	buf = buf_alloc(o, o->len * window);
	state = calloc(o->count + 1, 1);
	if (state == NULL)
		fail("out of memory");
	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = o->len * window;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(n.ni, &md, &mdh));
	while (done < o->count) {
		/* a slot is free once the put before in it was SENT */
		while (next < o->count &&
		       (next < window || (state[next - window] & 1))) {
			uint8_t *slot = buf + (next % window) * o->len;

			for (i = 0; i < o->len; i++)
				slot[i] = pattern(i, o->seed + next);
			CHECK_PTL(PtlPut(mdh, (next % window) * o->len, o->len,
					 PTL_ACK_REQ, t, (ptl_pt_index_t)o->pt,
					 o->match, 0,
					 (void *)(uintptr_t)(next + 1),
					 o->seed + next));
			next++;
		}
		ev_next(&n, &ev);
		m = (unsigned)((uintptr_t)ev.user_ptr - 1);
		if (m >= next)
			fail("%s event: user_ptr %p", ev_name(ev.type),
			     ev.user_ptr);
		if (put_event(o, &ev, &state[m]))
			done++;
	}
	printf("ok put %u message(s) of %" PRIu64 " bytes, ack %s\n", o->count,
	       o->len, strcmp(o->expect, "ok") == 0 ? "ok" :
	       "failed as expected");
	/* the events went (in order) where the window expected them */
	fflush(stdout);
	PtlMDRelease(mdh);
	ni_close(&n);
	buf_free(o, buf);
	free(state);
	return 0;
}

static int
role_get(const struct opts *o)
{
	ptl_process_t t = target_parse(o);
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	uint8_t *buf;
	ptl_md_t md;
	struct ni n;
	uint64_t i;

	ni_open(&n, o);
	buf = buf_alloc(o, o->len);
	memset(buf, 0, o->len);
	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = o->len;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(n.ni, &md, &mdh));
	CHECK_PTL(PtlGet(mdh, 0, o->len, t, (ptl_pt_index_t)o->pt, o->match, 0,
			 (void *)(uintptr_t)7));
	ev_expect(&n, PTL_EVENT_REPLY, &ev);
	if (strcmp(o->expect, "fail") == 0 ||
	    strcmp(o->expect, "undeliverable") == 0) {
		if (ev.ni_fail_type == PTL_NI_OK)
			fail("REPLY: ni_fail_type OK for a get that cannot "
			     "match");
		if (strcmp(o->expect, "undeliverable") == 0 &&
		    ev.ni_fail_type != PTL_NI_UNDELIVERABLE)
			fail("REPLY: ni_fail_type %d, want UNDELIVERABLE",
			     ev.ni_fail_type);
		printf("ok get failed as expected (ni_fail_type %d)\n",
		       ev.ni_fail_type);
		fflush(stdout);
		PtlMDRelease(mdh);
		ni_close(&n);
		buf_free(o, buf);
		return 0;
	}
	if (ev.ni_fail_type != PTL_NI_OK || ev.mlength != o->len)
		fail("REPLY: ni_fail_type %d mlength %" PRIu64, ev.ni_fail_type,
		     (uint64_t)ev.mlength);
	for (i = 0; i < o->len; i++)
		if (buf[i] != pattern(i, o->seed))
			fail("reply byte %" PRIu64 ": %u, want %u", i, buf[i],
			     pattern(i, o->seed));
	printf("ok get of %" PRIu64 " bytes\n", o->len);
	fflush(stdout);
	PtlMDRelease(mdh);
	ni_close(&n);
	buf_free(o, buf);
	return 0;
}

/* Keeps puts in flight until killed (never exits on its own). */
static int
role_stream(const struct opts *o)
{
	ptl_process_t t = target_parse(o);
	ptl_handle_md_t mdh;
	ptl_event_t ev;
	uint8_t *buf;
	ptl_md_t md;
	struct ni n;
	uint64_t sent = 0;
	unsigned which;

	ni_open(&n, o);
	buf = buf_alloc(o, o->len);
	memset(buf, 0xab, o->len);
	memset(&md, 0, sizeof(md));
	md.start = buf;
	md.length = o->len;
	md.eq_handle = n.eq;
	md.ct_handle = PTL_CT_NONE;
	CHECK_PTL(PtlMDBind(n.ni, &md, &mdh));
	printf("ready %u %u 0\n", n.id.phys.nid, n.id.phys.pid);
	fflush(stdout);
	for (;;) {
		int rc = PtlPut(mdh, 0, o->len, PTL_NO_ACK_REQ, t,
				(ptl_pt_index_t)o->pt, o->match, 0, NULL, 0);

		if (rc != PTL_OK && rc != PTL_NO_SPACE)
			fail("PtlPut: rc %d", rc);
		if (rc == PTL_OK && ++sent == 4) {
			printf("streaming\n");
			fflush(stdout);
		}
		/* drain events so the queue never overflows */
		while (PtlEQPoll(&n.eq, 1, rc == PTL_OK ? 0 : 10, &ev,
				 &which) == PTL_OK)
			;
	}
	return 0;
}

static int
role_hold(const struct opts *o)
{
	spin_handle_ctx_t ctx = SPIN_CTX_NONE;
	ptl_handle_me_t meh = 0;
	ptl_pt_index_t pt;
	void *me_buf = NULL;
	struct ni n;
	char line[64];

	ni_open(&n, o);
	CHECK_PTL(PtlPTAlloc(n.ni, 0, n.eq, PTL_PT_ANY, &pt));
	if (o->me) {
		bool checksum = strcmp(o->handler, "checksum") == 0;
		uint64_t len = o->len +
			(checksum ? sizeof(struct spin_csum_result) : 0);
		ptl_me_t me;

		if (checksum) {
			struct spin_ctx_desc d;

			memset(&d, 0, sizeof(d));
			ctx_checksum_args(&d);
			CHECK_PTL(spin_ctx_install(n.ni, &d, &ctx));
		} else if (strcmp(o->handler, "none") != 0) {
			fail("hold: handler=none or checksum");
		}
		memset(&me, 0, sizeof(me));
		me_buf = buf_alloc(o, len);
		me.start = me_buf;
		me.length = len;
		me.ct_handle = PTL_CT_NONE;
		me.uid = PTL_UID_ANY;
		me.match_id.phys.nid = PTL_NID_ANY;
		me.match_id.phys.pid = PTL_PID_ANY;
		me.match_bits = o->match;
		me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_COMM_DISABLE |
			PTL_ME_EVENT_LINK_DISABLE;
		CHECK_PTL(spin_me_append(n.ni, pt, &me, PTL_PRIORITY_LIST, ctx,
					 NULL, &meh));
	}
	printf("ready %u %u %u\n", n.id.phys.nid, n.id.phys.pid, pt);
	fflush(stdout);
	/* "status" prints the NI's status registers (PtlNIStatus) */
	while (fgets(line, sizeof(line), stdin) != NULL) {
		ptl_sr_value_t v[PTL_SR_LAST];
		unsigned r;

		if (strncmp(line, "status", 6) != 0)
			continue;
		for (r = 0; r < PTL_SR_LAST; r++)
			CHECK_PTL(PtlNIStatus(n.ni, (ptl_sr_index_t)r, &v[r]));
		printf("status %d %d %d\n", v[PTL_SR_DROP_COUNT],
		       v[PTL_SR_PERMISSION_VIOLATIONS],
		       v[PTL_SR_OPERATION_VIOLATIONS]);
		fflush(stdout);
	}
	if (o->me) {
		PtlMEUnlink(meh);
		buf_free(o, me_buf);
	}
	if (ctx != SPIN_CTX_NONE)
		spin_ctx_free(ctx);
	PtlPTFree(n.ni, pt);
	ni_close(&n);
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;

	if (argc < 2) {
		fprintf(stderr, "usage: %s target|search|put|get|stream|hold "
			"[key=value...]\n", argv[0]);
		return 2;
	}
	role = argv[1];
	opts_parse(&o, argc, argv);
	if (strcmp(o.buf, "early") == 0) {
		early_pool = malloc(EARLY_POOL);
		if (early_pool == NULL)
			fail("buf=early: no memory");
	}
	if (strcmp(role, "target") == 0)
		return role_target(&o, false);
	if (strcmp(role, "search") == 0)
		return role_target(&o, true);
	if (strcmp(role, "put") == 0)
		return role_put(&o);
	if (strcmp(role, "get") == 0)
		return role_get(&o);
	if (strcmp(role, "stream") == 0)
		return role_stream(&o);
	if (strcmp(role, "hold") == 0)
		return role_hold(&o);
	fail("unknown role");
}
