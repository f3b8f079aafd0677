/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active Access, lib/portals (aa.c, aa_host.c): the rule matrix against a
 * literal table for every bit combination; the page table (overlapping
 * marks split, equal neighbours merged, hostile ranges refused, the range
 * limit); the log ring (records parsed from the documented layout, PAD at
 * the wrap, full log counted, an invalid consumer index stops only that
 * log, nothing written outside the ring); the control operations (bad
 * arguments, another client's log, a log in use); a remote write across
 * four pages of four modes (memory and records exactly).
 */
#include <pthread.h>
#include <time.h>

#include "ptl_test.h"
#include "aa.h"

#define W SPINNIC_AA_W
#define R SPINNIC_AA_R
#define WL SPINNIC_AA_WL
#define WLD SPINNIC_AA_WLD
#define RL SPINNIC_AA_RL
#define RLD SPINNIC_AA_RLD

/* {bit, log bit, data bit, mem, fail, redirected, data, kind} */
static const unsigned write_table[8][8] = {
	{ 0, 0, 0, 0, 1, 0, 0, 0 },
	{ 0, 0, 1, 0, 0, 1, 1, SPINNIC_AA_PUT_DATA },
	{ 0, 1, 0, 0, 1, 0, 0, SPINNIC_AA_PUT_BLOCKED },
	{ 0, 1, 1, 0, 0, 1, 1, SPINNIC_AA_PUT_DATA },
	{ 1, 0, 0, 1, 0, 0, 0, 0 },
	{ 1, 0, 1, 1, 0, 0, 1, SPINNIC_AA_PUT_DATA },
	{ 1, 1, 0, 1, 0, 0, 0, SPINNIC_AA_PUT_META },
	{ 1, 1, 1, 1, 0, 0, 1, SPINNIC_AA_PUT_DATA },
};
static const unsigned read_table[8][8] = {
	{ 0, 0, 0, 0, 1, 0, 0, 0 },
	{ 0, 0, 1, 0, 1, 0, 0, SPINNIC_AA_GET_BLOCKED },
	{ 0, 1, 0, 0, 1, 0, 0, SPINNIC_AA_GET_BLOCKED },
	{ 0, 1, 1, 0, 1, 0, 0, SPINNIC_AA_GET_BLOCKED },
	{ 1, 0, 0, 1, 0, 0, 0, 0 },
	{ 1, 0, 1, 1, 0, 0, 1, SPINNIC_AA_GET_DATA },
	{ 1, 1, 0, 1, 0, 0, 0, SPINNIC_AA_GET_META },
	{ 1, 1, 1, 1, 0, 0, 1, SPINNIC_AA_GET_DATA },
};

static void
test_rule_matrix(void **state)
{
	uint32_t bits;

	(void)state;
	/* all 64 combinations: a write depends on W, WL, WLD only, a read
	 * on R, RL, RLD only */
	for (bits = 0; bits <= SPINNIC_AA_BITS; bits++) {
		unsigned wi = ((bits & W) ? 4 : 0) | ((bits & WL) ? 2 : 0) |
			      ((bits & WLD) ? 1 : 0);
		unsigned ri = ((bits & R) ? 4 : 0) | ((bits & RL) ? 2 : 0) |
			      ((bits & RLD) ? 1 : 0);
		const unsigned *w = write_table[wi], *r = read_table[ri];
		struct ptl_aa_verdict v;

		ptl_aa_rule(bits, true, &v);
		assert_int_equal(v.mem, w[3]);
		assert_int_equal(v.fail, w[4]);
		assert_int_equal(v.redirected, w[5]);
		assert_int_equal(v.data, w[6]);
		assert_int_equal(v.kind, w[7]);
		ptl_aa_rule(bits, false, &v);
		assert_int_equal(v.mem, r[3]);
		assert_int_equal(v.fail, r[4]);
		assert_int_equal(v.redirected, r[5]);
		assert_int_equal(v.data, r[6]);
		assert_int_equal(v.kind, r[7]);
	}
}

static uint32_t
find(const struct ptl_aa_table *t, uint64_t a, uint64_t *end_p)
{
	uint32_t log;

	return ptl_aa_table_find(t, a, end_p, &log);
}

static void
test_table(void **state)
{
	const uint64_t P = SPINNIC_AA_PAGE, B = 1ull << 30;
	struct ptl_aa_table t = { 0 };
	uint64_t end;
	uint32_t i;

	(void)state;
	/* hostile ranges */
	assert_int_equal(ptl_aa_table_set(&t, B + 1, P, W, 7), -EINVAL);
	assert_int_equal(ptl_aa_table_set(&t, B, P + 1, W, 7), -EINVAL);
	assert_int_equal(ptl_aa_table_set(&t, B, 0, W, 7), -EINVAL);
	assert_int_equal(ptl_aa_table_set(&t, UINT64_MAX - P + 1, 2 * P, W, 7),
			 -EINVAL);
	assert_int_equal(ptl_aa_table_set(&t, 1ull << 56, P, W, 7), -EINVAL);
	assert_int_equal(ptl_aa_table_set(&t, B, P, 0x40, 7), -EINVAL);
	assert_int_equal(t.n, 0);
	assert_int_equal(find(&t, B, &end), PTL_AA_DEFAULT);
	assert_true(end == UINT64_MAX);

	/* [B, B+8P) WL, then [B+2P, B+4P) redirect inside it: split in 3 */
	assert_int_equal(ptl_aa_table_set(&t, B, 8 * P, W | R | WL, 1), 0);
	assert_int_equal(ptl_aa_table_set(&t, B + 2 * P, 2 * P, R | WLD, 1), 0);
	assert_int_equal(t.n, 3);
	assert_int_equal(find(&t, B + P + 5, &end), W | R | WL);
	assert_true(end == B + 2 * P);
	assert_int_equal(find(&t, B + 3 * P, &end), R | WLD);
	assert_true(end == B + 4 * P);
	assert_int_equal(find(&t, B + 7 * P, &end), W | R | WL);
	assert_true(end == B + 8 * P);
	assert_int_equal(find(&t, B - 1, &end), PTL_AA_DEFAULT);
	assert_true(end == B);
	/* overlapping the middle's right edge and beyond the end */
	assert_int_equal(ptl_aa_table_set(&t, B + 3 * P, 7 * P, R, 2), 0);
	assert_int_equal(find(&t, B + 2 * P, &end), R | WLD);
	assert_true(end == B + 3 * P);
	assert_int_equal(find(&t, B + 9 * P, &end), R);
	assert_true(end == B + 10 * P);
	/* same bits back over the middle merge with the first range */
	assert_int_equal(ptl_aa_table_set(&t, B + 2 * P, P, W | R | WL, 1), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(find(&t, B, &end), W | R | WL);
	assert_true(end == B + 3 * P);
	assert_true(ptl_aa_table_uses_log(&t, 1));
	assert_false(ptl_aa_table_uses_log(&t, 3));
	/* unmarking everything empties the table */
	assert_int_equal(ptl_aa_table_set(&t, B - P, 20 * P, PTL_AA_DEFAULT,
					  SPINNIC_HANDLE_NONE), 0);
	assert_int_equal(t.n, 0);

	/* the range limit: every other page, then one more refused */
	for (i = 0; i < SPINNIC_AA_RANGES_MAX; i++)
		assert_int_equal(ptl_aa_table_set(&t, B + 2 * i * P, P, W, 1),
				 0);
	assert_int_equal(ptl_aa_table_set(&t, B + 2 * i * P, P, W, 1),
			 -ENOSPC);
	assert_int_equal(t.n, SPINNIC_AA_RANGES_MAX);
	/* a huge mark over all of them: one range */
	assert_int_equal(ptl_aa_table_set(&t, 0, 1ull << 40, R, 1), 0);
	assert_int_equal(t.n, 1);
	ptl_aa_table_clear(&t);
}

/* ---- ring: parsed from the documented layout only ---- */

struct parsed {
	uint16_t kind, flags;
	uint32_t len, mode, seq;
	uint64_t addr, msg_off;
	const uint8_t *data;
};

/* Read records at consumer position *cons of a ring (header at mem):
 * 64-byte headers, u32 seq at 0, u16 kind at 4, u16 flags at 6, u32 len
 * at 8, u32 mode at 12, u64 addr at 16, u64 msg_off at 40. */
static unsigned
parse(const uint8_t *mem, uint64_t *cons, uint32_t *seq, struct parsed *out,
      unsigned max)
{
	uint64_t prod, size;
	unsigned n = 0;

	memcpy(&prod, mem + 0, 8);
	memcpy(&size, mem + 24, 8);
	while (*cons < prod && n < max) {
		const uint8_t *h = mem + 128 + (*cons % size);
		struct parsed p;

		memcpy(&p.seq, h, 4);
		memcpy(&p.kind, h + 4, 2);
		memcpy(&p.flags, h + 6, 2);
		memcpy(&p.len, h + 8, 4);
		memcpy(&p.mode, h + 12, 4);
		memcpy(&p.addr, h + 16, 8);
		memcpy(&p.msg_off, h + 40, 8);
		p.data = h + 64;
		assert_int_equal(p.seq, *seq);
		(*seq)++;
		*cons += 64 + (p.len + 63) / 64 * 64;
		if (p.kind == SPINNIC_AA_PAD)
			continue;
		out[n++] = p;
	}
	return n;
}

static void
test_ring(void **state)
{
	const uint64_t size = SPINNIC_AA_RING_MIN, canary = 4096;
	uint8_t *mem = malloc(canary + 128 + size + canary), *ring, data[5000];
	struct spinnic_aa_ring *hdr;
	struct ptl_aa_log lg = { 0 };
	struct spinnic_aa_rec h;
	struct parsed out[8];
	uint64_t cons = 0, i;
	uint32_t seq = 1;

	(void)state;
	assert_non_null(mem);
	memset(mem, 0xa5, canary + 128 + size + canary);
	ring = mem + canary;
	hdr = (struct spinnic_aa_ring *)ring;
	assert_int_equal(ptl_aa_log_init(&lg, ring, size + 1), -EINVAL);
	assert_int_equal(ptl_aa_log_init(&lg, ring, 8192), -EINVAL);
	assert_int_equal(ptl_aa_log_init(&lg, ring, size), 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;

	/* 5000 bytes: 64 + 5056 = 5120 per record; three fit (15360) */
	memset(&h, 0, sizeof(h));
	h.kind = SPINNIC_AA_PUT_DATA;
	h.len = sizeof(data);
	for (i = 0; i < 3; i++) {
		h.msg_off = i;
		assert_int_equal(ptl_aa_log_append(&lg, &h, data), 0);
	}
	/* full: a PAD of 1024 and 5120 more do not fit */
	h.msg_off = 3;
	assert_int_equal(ptl_aa_log_append(&lg, &h, data), -ENOSPC);
	assert_int_equal(hdr->lost, 1);
	assert_int_equal(parse(ring, &cons, &seq, out, 8), 3);
	assert_int_equal(out[0].len, sizeof(data));
	assert_memory_equal(out[0].data, data, sizeof(data));
	assert_int_equal(out[2].msg_off, 2);
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
	/* room now: PAD to the end, the record at ring offset 0 */
	assert_int_equal(ptl_aa_log_append(&lg, &h, data), 0);
	assert_int_equal(parse(ring, &cons, &seq, out, 8), 1);
	assert_int_equal(out[0].msg_off, 3);
	assert_memory_equal(out[0].data, data, sizeof(data));
	assert_int_equal(hdr->prod, 15360 + 1024 + 5120);
	assert_int_equal(seq, 6); /* 4 records and a PAD */
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);

	/* the client corrupts cons: the log stops, nothing written */
	hdr->cons = hdr->prod + 64;
	h.len = 0;
	assert_int_equal(ptl_aa_log_append(&lg, &h, NULL), -EPIPE);
	assert_int_equal(hdr->err, 1);
	hdr->cons = cons; /* too late: stopped for good */
	assert_int_equal(ptl_aa_log_append(&lg, &h, NULL), -EPIPE);
	assert_int_equal(hdr->lost, 3);
	/* the canaries around header and ring */
	for (i = 0; i < canary; i++) {
		assert_int_equal(mem[i], 0xa5);
		assert_int_equal(ring[128 + size + i], 0xa5);
	}
	free(mem);
}

/* ---- control and a remote write ---- */

#define RING_OFF (512u * 1024)
#define PAGES_OFF (768u * 1024)

static int
aa_ctrl(struct t_env *e, struct ptl_client *c, uint16_t op,
	struct spinnic_ctrl_aa *a)
{
	struct spinnic_ctrl_msg m;
	int st;

	memset(&m, 0, sizeof(m));
	m.u.aa = *a;
	st = t_ctrl(e, c, op, &m);
	*a = m.u.aa;
	return st;
}

static uint32_t
log_create(struct t_env *e, struct ptl_client *c, uint32_t ni, uint64_t off)
{
	struct spinnic_ctrl_aa a = { .ni = ni, .ring_off = off,
				     .size = SPINNIC_AA_RING_MIN,
				     .flags = SPINNIC_AA_LOG_DROP };

	assert_int_equal(aa_ctrl(e, c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_OK);
	return a.log;
}

static int
assoc(struct t_env *e, struct ptl_client *c, uint32_t ni, uint64_t addr,
      uint64_t len, uint32_t bits, uint32_t log)
{
	struct spinnic_ctrl_aa a = { .ni = ni, .addr = addr, .len = len,
				     .bits = bits, .log = log };

	return aa_ctrl(e, c, SPINNIC_CTRL_AA_ASSOC, &a);
}

static void
test_ctrl(void **state)
{
	struct spinnic_ctrl_aa a;
	struct ptl_nic_stats s;
	struct ptl_client *b;
	struct t_env e;
	uint32_t log, ni_b;
	uint8_t *rb;

	(void)state;
	t_env_setup(&e);
	/* bad logs: size, alignment, outside the region, flags, NI */
	a = (struct spinnic_ctrl_aa){ .ni = e.ni, .ring_off = RING_OFF,
				      .size = 4096, .flags = 1 };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.size = SPINNIC_AA_RING_MIN;
	a.ring_off = RING_OFF + 8;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = T_REGION_SIZE - 4096;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = UINT64_MAX - 63;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = RING_OFF;
	a.flags = 0x80;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.flags = 1;
	a.ni = 0x12345;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	log = log_create(&e, e.c, e.ni, RING_OFF);
	/* a second ring over the first one */
	a = (struct spinnic_ctrl_aa){ .ni = e.ni, .ring_off = RING_OFF + 4096,
				      .size = SPINNIC_AA_RING_MIN, .flags = 1 };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	/* marks: data and flushing need a log (metadata alone goes to the
	 * fault log: test_fault_log); a bogus log; bad bits */
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       W | WLD, SPINNIC_HANDLE_NONE),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       R | RLD | WL, SPINNIC_HANDLE_NONE),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       R | SPINNIC_AA_FLUSH, SPINNIC_HANDLE_NONE),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096, WL,
			       log + 0x100), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       0x100, log), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF) + 1, 4096,
			       W, log), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       W | WL, log), SPINNIC_PTL_OK);

	/* client B names A's log, and frees it: refused */
	rb = t_region_new();
	assert_int_equal(ptl_client_attach(e.nic, rb, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)rb, getpid(),
					   getuid(), SPINNIC_PTL_PID_ANY, &b),
			 0);
	ptl_client_set_release(b, t_region_unmap, NULL);
	ni_b = t_ni_init(&e, b, SPINNIC_PTL_NI_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL);
	assert_int_equal(assoc(&e, b, ni_b, (uint64_t)(uintptr_t)rb + PAGES_OFF,
			       4096, WL, log), SPINNIC_PTL_ARG_INVALID);
	a = (struct spinnic_ctrl_aa){ .log = log };
	assert_int_equal(aa_ctrl(&e, b, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	/* B's marks on A's addresses are B's own table: A is unaffected */
	assert_int_equal(assoc(&e, b, ni_b, t_addr(&e, PAGES_OFF + 4096), 4096,
			       0, SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_false(ptl_host_marked(e.c, t_addr(&e, PAGES_OFF + 4096), 4096));
	assert_true(ptl_host_marked(b, t_addr(&e, PAGES_OFF + 4096), 4096));

	/* A's log is in use until its page is unmarked */
	a = (struct spinnic_ctrl_aa){ .log = log };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_IN_USE);
	assert_int_equal(assoc(&e, e.c, e.ni, t_addr(&e, PAGES_OFF), 4096,
			       W | R, SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_OK);
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	/* B leaves with a log and marks: nothing stays */
	log_create(&e, b, ni_b, RING_OFF);
	ptl_client_detach(e.nic, b);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_logs_live, 0);
	t_env_teardown(&e);
}

static void
test_remote_write(void **state)
{
	const uint64_t P = SPINNIC_AA_PAGE;
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .msg_id = 99 };
	uint8_t buf[3 * 4096], got[3 * 4096], zero[4096] = { 0 };
	struct ptl_nic_stats s;
	struct parsed out[8];
	uint64_t pg, cons = 0;
	uint32_t log, seq = 1, i;
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	log = log_create(&e, e.c, e.ni, RING_OFF);
	pg = t_addr(&e, PAGES_OFF);
	/* P0 written + logged, P1 redirected, P2 refused + logged, P3 plain */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, P, W | R | WL, log), 0);
	assert_int_equal(assoc(&e, e.c, e.ni, pg + P, P, R | WLD, log), 0);
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 2 * P, P, R | WL, log), 0);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	src.msg_off = 0;
	assert_int_equal(ptl_host_access_remote(e.c, pg + 1024, buf,
						sizeof(buf), true, &src),
			 -EPERM);
	assert_memory_equal(e.region + PAGES_OFF + 1024, buf, 3072);
	assert_memory_equal(e.region + PAGES_OFF + P, zero, P);
	assert_memory_equal(e.region + PAGES_OFF + 2 * P, zero, P);
	assert_memory_equal(e.region + PAGES_OFF + 3 * P, buf + 3072 + 2 * P,
			    1024);
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 8), 3);
	assert_int_equal(out[0].kind, SPINNIC_AA_PUT_META);
	assert_true(out[0].addr == pg + 1024);
	assert_int_equal(out[0].len, 0);
	assert_int_equal(out[0].msg_off, 0);
	assert_int_equal(out[1].kind, SPINNIC_AA_PUT_DATA);
	assert_int_equal(out[1].flags, SPINNIC_AA_F_REDIRECTED);
	assert_true(out[1].addr == pg + P);
	assert_int_equal(out[1].len, P);
	assert_int_equal(out[1].msg_off, 3072);
	assert_memory_equal(out[1].data, buf + 3072, P);
	assert_int_equal(out[2].kind, SPINNIC_AA_PUT_BLOCKED);
	assert_int_equal(out[2].mode, R | WL);
	assert_int_equal(out[2].msg_off, 3072 + P);
	/* a read of the same range: P2 readable, nothing logged (no RL) */
	assert_int_equal(ptl_host_access_remote(e.c, pg + 1024, got,
						sizeof(got), false, &src), 0);
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 8), 0);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_records, 3);
	assert_int_equal(s.aa_blocked, 1);
	assert_int_equal(s.aa_redirected, 1);
	/* direct pointers are refused over marked pages only */
	assert_true(ptl_host_marked(e.c, pg + P - 1, 2));
	assert_false(ptl_host_marked(e.c, pg + 3 * P, P));
	/* an unmarked page between marked ones: the region page map says
	 * so without the lock; unmarking clears it */
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 5 * P, P, W | R | WL, log),
			 0);
	assert_false(ptl_host_marked(e.c, pg + 4 * P, 8));
	assert_true(ptl_host_marked(e.c, pg + 4 * P + 4000, 200));
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 5 * P, P, W | R,
			       SPINNIC_HANDLE_NONE), 0);
	assert_false(ptl_host_marked(e.c, pg + 4 * P + 4000, 200));
	assert_true(ptl_host_marked(e.c, pg + 2 * P, 1));
	t_env_teardown(&e);
}

/* ---- the fault log (E = 0 pages) ---- */

#define FAULT_OFF (256u * 1024)

/* FAULT_READ of up to max records into c's region at FAULT_OFF */
static int
fault_read(struct t_env *e, struct ptl_client *c, uint32_t ni, uint8_t *region,
	   uint32_t max, struct spinnic_aa_rec *out, uint64_t *n_p,
	   uint64_t *logged_p, uint64_t *lost_p)
{
	struct spinnic_ctrl_aa a = { .ni = ni, .ring_off = FAULT_OFF,
				     .size = max, .log = SPINNIC_HANDLE_NONE };
	int st;

	memset(region + FAULT_OFF, 0xee, (size_t)max * 64);
	st = aa_ctrl(e, c, SPINNIC_CTRL_AA_FAULT_READ, &a);
	if (st != SPINNIC_PTL_OK)
		return st;
	assert_true(a.size <= max);
	memcpy(out, region + FAULT_OFF, (size_t)a.size * 64);
	*n_p = a.size;
	*logged_p = a.addr;
	*lost_p = a.len;
	return st;
}

/*
 * Pages marked WL/RL with no log: metadata records to the client's own
 * fault log; each client reads its own only; exact records, seq order,
 * overflow lost and counted; data bits still need a log; bad reads.
 */
static void
test_fault_log(void **state)
{
	const uint64_t P = SPINNIC_AA_PAGE;
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .msg_id = 99,
				  .hdr_data = 0x77 };
	static struct spinnic_aa_rec out[SPINNIC_AA_FAULTS_MAX];
	uint8_t buf[2 * 4096 + 64], zero[4096] = { 0 }, *rb;
	struct spinnic_ctrl_aa a;
	uint64_t pg, pgb, n, logged, lost, i;
	struct ptl_aa_client_info ci;
	struct ptl_nic_stats s;
	struct ptl_client *b;
	unsigned nl;
	struct t_env e;
	uint32_t ni_b;

	(void)state;
	t_env_setup(&e);
	rb = t_region_new();
	assert_int_equal(ptl_client_attach(e.nic, rb, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)rb, getpid(),
					   getuid(), SPINNIC_PTL_PID_ANY, &b),
			 0);
	ptl_client_set_release(b, t_region_unmap, NULL);
	ni_b = t_ni_init(&e, b, SPINNIC_PTL_NI_MATCHING |
			 SPINNIC_PTL_NI_PHYSICAL);
	pg = t_addr(&e, PAGES_OFF);
	pgb = (uint64_t)(uintptr_t)rb + PAGES_OFF;

	/* nothing marked yet: an empty read, counters 0 */
	assert_int_equal(fault_read(&e, e.c, e.ni, e.region, 4, out, &n,
				    &logged, &lost), SPINNIC_PTL_OK);
	assert_true(n == 0 && logged == 0 && lost == 0);
	/* A: P0 refuses writes (standard fault: W=0, WL), P1 logs writes,
	 * P2 refuses reads (RL); B: its page logs reads */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, P, R | WL,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_int_equal(assoc(&e, e.c, e.ni, pg + P, P, W | R | WL,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 2 * P, P, W | RL,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_int_equal(assoc(&e, b, ni_b, pgb, P, W | R | RL,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);

	/* a write over P0..P2 from pg + 4032: P0 refused (one record),
	 * P1 written and logged, P2 written, not logged (no WL) */
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 5 + 3);
	src.msg_off = 0;
	assert_int_equal(ptl_host_access_remote(e.c, pg + P - 64, buf,
						sizeof(buf), true, &src),
			 -EPERM);
	assert_memory_equal(e.region + PAGES_OFF, zero, P);
	assert_memory_equal(e.region + PAGES_OFF + P, buf + 64, P);
	assert_memory_equal(e.region + PAGES_OFF + 2 * P, buf + 64 + P, 64);
	/* a read of P2: refused, recorded; B's read of its page: logged */
	src.msg_id = 100;
	assert_int_equal(ptl_host_access_remote(e.c, pg + 2 * P + 8, buf, 16,
						false, &src), -EPERM);
	src.msg_id = 200;
	src.nid = 5;
	assert_int_equal(ptl_host_access_remote(b, pgb + 128, buf, 32, false,
						&src), 0);

	/* B sees its one record, none of A's */
	assert_int_equal(fault_read(&e, b, ni_b, rb, 8, out, &n, &logged,
				    &lost), SPINNIC_PTL_OK);
	assert_true(n == 1 && logged == 1 && lost == 0);
	assert_int_equal(out[0].seq, 1);
	assert_int_equal(out[0].kind, SPINNIC_AA_GET_META);
	assert_int_equal(out[0].len, 0);
	assert_int_equal(out[0].mode, W | R | RL);
	assert_true(out[0].addr == pgb + 128);
	assert_true(out[0].msg_id == 200 && out[0].src_nid == 5);
	assert_true(out[0].ts_ns != 0);
	/* A sees its three, in order, exactly */
	assert_int_equal(fault_read(&e, e.c, e.ni, e.region, 8, out, &n,
				    &logged, &lost), SPINNIC_PTL_OK);
	assert_true(n == 3 && logged == 3 && lost == 0);
	assert_int_equal(out[0].seq, 1);
	assert_int_equal(out[0].kind, SPINNIC_AA_PUT_BLOCKED);
	assert_int_equal(out[0].mode, R | WL);
	assert_true(out[0].addr == pg + P - 64);
	assert_true(out[0].msg_off == 0 && out[0].msg_id == 99);
	assert_true(out[0].hdr_data == 0x77 && out[0].src_nid == 3 &&
		    out[0].src_pid == 4);
	assert_int_equal(out[1].seq, 2);
	assert_int_equal(out[1].kind, SPINNIC_AA_PUT_META);
	assert_true(out[1].addr == pg + P && out[1].msg_off == 64);
	assert_int_equal(out[1].len, 0);
	assert_int_equal(out[2].seq, 3);
	assert_int_equal(out[2].kind, SPINNIC_AA_GET_BLOCKED);
	assert_true(out[2].addr == pg + 2 * P + 8 && out[2].msg_id == 100);
	/* taken: nothing more for either */
	assert_int_equal(fault_read(&e, e.c, e.ni, e.region, 8, out, &n,
				    &logged, &lost), SPINNIC_PTL_OK);
	assert_true(n == 0 && logged == 3);
	assert_int_equal(fault_read(&e, b, ni_b, rb, 8, out, &n, &logged,
				    &lost), SPINNIC_PTL_OK);
	assert_true(n == 0 && logged == 1);

	/* overflow: FAULTS_MAX + 5 refused writes of P0, the last 5 lost */
	for (i = 0; i < SPINNIC_AA_FAULTS_MAX + 5; i++) {
		src.msg_id = 1000 + i;
		assert_int_equal(ptl_host_access_remote(e.c, pg + 8, buf, 8,
							true, &src), -EPERM);
	}
	assert_memory_equal(e.region + PAGES_OFF, zero, P);
	/* B's fault log is its own: A's flood took none of its room */
	assert_int_equal(ptl_host_access_remote(b, pgb, buf, 8, false, &src),
			 0);
	/* the monitor's view: A's counters, B's apart */
	for (i = 0, n = 0; i < 64; i++) {
		if (ptl_client_aa_dump(e.nic, (uint32_t)i, &ci, NULL, 0,
				       &nl) != 0)
			continue;
		if (ci.fault_lost != 0) {
			assert_true(ci.faults == 3 + SPINNIC_AA_FAULTS_MAX &&
				    ci.fault_lost == 5 &&
				    ci.fault_held == SPINNIC_AA_FAULTS_MAX);
			n++;
		} else {
			assert_true(ci.faults == 2 && ci.fault_held == 1);
			n += 10;
		}
	}
	assert_true(n == 11);
	assert_int_equal(fault_read(&e, e.c, e.ni, e.region, 100, out, &n,
				    &logged, &lost), SPINNIC_PTL_OK);
	assert_true(n == 100 && logged == 3 + SPINNIC_AA_FAULTS_MAX &&
		    lost == 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(out[i].seq, 4 + i);
		assert_true(out[i].msg_id == 1000 + i);
		assert_int_equal(out[i].kind, SPINNIC_AA_PUT_BLOCKED);
	}
	/* room again: one more is kept, after the 156 still held */
	src.msg_id = 5000;
	assert_int_equal(ptl_host_access_remote(e.c, pg + 8, buf, 8, true,
						&src), -EPERM);
	assert_int_equal(fault_read(&e, e.c, e.ni, e.region,
				    SPINNIC_AA_FAULTS_MAX, out, &n, &logged,
				    &lost), SPINNIC_PTL_OK);
	assert_true(n == SPINNIC_AA_FAULTS_MAX - 100 + 1 && lost == 5);
	assert_true(out[0].msg_id == 1100 && out[n - 2].msg_id ==
		    1000 + SPINNIC_AA_FAULTS_MAX - 1);
	assert_true(out[n - 1].msg_id == 5000 &&
		    out[n - 1].seq == 4 + SPINNIC_AA_FAULTS_MAX);
	assert_int_equal(fault_read(&e, b, ni_b, rb, 8, out, &n, &logged,
				    &lost), SPINNIC_PTL_OK);
	assert_true(n == 1 && logged == 2 && lost == 0 &&
		    out[0].addr == pgb && out[0].seq == 2);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_faults == 3 + SPINNIC_AA_FAULTS_MAX + 1 + 2);
	assert_true(s.aa_faults_lost == 5);
	assert_true(s.aa_faults_read == s.aa_faults);
	assert_true(s.aa_records == 0 && s.aa_lost == 0);

	/* hostile reads: size, alignment, the region header, outside */
	a = (struct spinnic_ctrl_aa){ .ni = e.ni, .ring_off = FAULT_OFF };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.size = SPINNIC_AA_FAULTS_MAX + 1;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.size = 1;
	a.ring_off = FAULT_OFF + 8;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = 0;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = T_REGION_SIZE - 64;
	a.size = 2;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.ring_off = UINT64_MAX - 63;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a = (struct spinnic_ctrl_aa){ .ni = 0x12345, .ring_off = FAULT_OFF,
				      .size = 1 };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_FAULT_READ, &a),
			 SPINNIC_PTL_ARG_INVALID);
	/* unmarking drops the E = 0 pages; B leaves with records held */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, 3 * P, W | R,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	assert_int_equal(ptl_host_access_remote(e.c, pg + 8, buf, 8, true,
						&src), 0);
	assert_int_equal(ptl_host_access_remote(b, pgb, buf, 8, false, &src),
			 0);
	ptl_client_detach(e.nic, b);
	t_env_teardown(&e);
}

/* ---- the IOTLB model ---- */

/* @p rounds passes over pages first, first + step, .. (k of them) of
 * domain dom; @return the hits */
static uint64_t
tlb_cycle(struct ptl_aa_iotlb *t, uint32_t dom, uint64_t first,
	  uint64_t step, uint32_t k, uint32_t rounds)
{
	uint64_t hits = 0;
	uint32_t r, i;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < k; i++)
			hits += ptl_aa_iotlb_lookup(t, dom, first + i * step);
	return hits;
}

/*
 * The model alone, against counts worked out by hand: a cyclic pass over
 * k pages of one set misses k times when k fits its ways and every time
 * (LRU) when k exceeds them; sets are page mod sets; domains are apart
 * and invalidated alone; random replacement is deterministic and never
 * evicts while a set has room; bad geometries refused.
 */
static void
test_iotlb_model(void **state)
{
	struct ptl_aa_iotlb t, u;
	uint64_t h1, h2;

	(void)state;
	assert_int_equal(ptl_aa_iotlb_init(&t, 3, 1, 0), -EINVAL);
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 16, 0), -EINVAL);
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 3, 0), -EINVAL);
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 2, 2), -EINVAL);
	assert_int_equal(ptl_aa_iotlb_init(&t, 1u << 17, 1, 0), -EINVAL);
	/* off: nothing cached */
	assert_int_equal(ptl_aa_iotlb_init(&t, 0, 0, 0), 0);
	assert_int_equal(tlb_cycle(&t, 1, 0, 1, 4, 3), 0);
	ptl_aa_iotlb_fini(&t);

	/* fully associative LRU, 8 entries (ways 0: all) */
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 0, PTL_AA_IOTLB_LRU), 0);
	assert_int_equal(t.sets, 1);
	assert_int_equal(tlb_cycle(&t, 1, 100, 1, 8, 5), 8 * 4); /* 8 miss */
	assert_int_equal(ptl_aa_iotlb_inval(&t, 1), 8);
	assert_int_equal(tlb_cycle(&t, 1, 100, 1, 9, 5), 0);    /* thrash */
	/* another domain's same pages: its own entries */
	assert_int_equal(ptl_aa_iotlb_inval(&t, 1), 8);
	assert_int_equal(tlb_cycle(&t, 1, 100, 1, 4, 1), 0);
	assert_int_equal(tlb_cycle(&t, 2, 100, 1, 4, 2), 4);
	assert_int_equal(tlb_cycle(&t, 1, 100, 1, 4, 1), 4);
	assert_int_equal(ptl_aa_iotlb_inval(&t, 2), 4);
	assert_int_equal(tlb_cycle(&t, 1, 100, 1, 4, 1), 4);
	assert_int_equal(ptl_aa_iotlb_inval(&t, 3), 0);
	ptl_aa_iotlb_fini(&t);

	/* direct mapped, 8 sets: pages 8 apart share a set */
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 1, PTL_AA_IOTLB_LRU), 0);
	assert_int_equal(tlb_cycle(&t, 1, 0, 8, 2, 10), 0);
	/* page 8 held set 0: the first pass misses all 8 */
	assert_int_equal(tlb_cycle(&t, 1, 0, 1, 8, 3), 16);
	ptl_aa_iotlb_fini(&t);

	/* 2 ways, 4 sets: 2 pages of a set stay, 3 thrash under LRU */
	assert_int_equal(ptl_aa_iotlb_init(&t, 8, 2, PTL_AA_IOTLB_LRU), 0);
	assert_int_equal(t.sets, 4);
	assert_int_equal(tlb_cycle(&t, 1, 1, 4, 2, 6), 10);
	assert_int_equal(ptl_aa_iotlb_inval(&t, 1), 2);
	assert_int_equal(tlb_cycle(&t, 1, 1, 4, 3, 6), 0);
	/* LRU keeps the recently used: a, b, a, c (evicts b), a hits */
	assert_int_equal(ptl_aa_iotlb_inval(&t, 1), 2);
	assert_false(ptl_aa_iotlb_lookup(&t, 1, 0));
	assert_false(ptl_aa_iotlb_lookup(&t, 1, 4));
	assert_true(ptl_aa_iotlb_lookup(&t, 1, 0));
	assert_false(ptl_aa_iotlb_lookup(&t, 1, 8));
	assert_true(ptl_aa_iotlb_lookup(&t, 1, 0));
	assert_false(ptl_aa_iotlb_lookup(&t, 1, 4));
	ptl_aa_iotlb_fini(&t);

	/* random: no eviction while room; the same pattern, the same
	 * counts (a fixed seed); thrashing misses more than cold */
	assert_int_equal(ptl_aa_iotlb_init(&t, 16, 4, PTL_AA_IOTLB_RND), 0);
	assert_int_equal(ptl_aa_iotlb_init(&u, 16, 4, PTL_AA_IOTLB_RND), 0);
	assert_int_equal(tlb_cycle(&t, 1, 0, 1, 16, 4), 16 * 3);
	h1 = tlb_cycle(&t, 1, 0, 1, 40, 20);
	assert_int_equal(tlb_cycle(&u, 1, 0, 1, 16, 4), 16 * 3);
	h2 = tlb_cycle(&u, 1, 0, 1, 40, 20);
	assert_true(h1 == h2 && h1 < 40 * 20 - 40);
	ptl_aa_iotlb_fini(&t);
	ptl_aa_iotlb_fini(&u);
}

/*
 * The model in the AA lookup path (spinnic --aa-iotlb 4,2): remote writes
 * to marked pages look up one entry per 4 KiB piece; a mark invalidates
 * the client's entries; an unmarked client is never looked up; counts and
 * walk reads (4 per miss at 4 KiB pages) as worked out by hand.
 */
static void
test_iotlb_path(void **state)
{
	const uint64_t P = SPINNIC_AA_PAGE;
	struct ptl_aa_src src = { .nid = 3, .pid = 4 };
	uint8_t buf[2 * 4096 + 32] = { 0 };
	struct ptl_nic_conf cf;
	struct ptl_nic_stats s;
	struct t_env e;
	uint64_t pg, hits = 0, misses = 0;
	uint32_t r, i;

	(void)state;
	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.aa_iotlb_entries = 4;
	cf.aa_iotlb_ways = 2;
	cf.aa_iotlb_ways = 3;
	assert_int_equal(ptl_nic_create(&cf, &e.nic), -EINVAL);
	cf.aa_iotlb_ways = 2;
	t_env_setup_opts(&e, 64, 0, &cf);
	pg = t_addr(&e, PAGES_OFF);
	/* no marks: the fast path, no lookup */
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 8, true, &src),
			 0);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_iotlb_hits == 0 && s.aa_iotlb_misses == 0);
	/* 8 pages marked W (R = 0: marked, nothing logged) */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, 8 * P, W,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	/* 4 pages, 2 per set (consecutive pages alternate sets): 3 passes,
	 * 4 misses then 8 hits */
	for (r = 0; r < 3; r++)
		for (i = 0; i < 4; i++)
			assert_int_equal(ptl_host_access_remote(e.c, pg + i * P
					 + 8, buf, 8, true, &src), 0);
	hits += 8;
	misses += 4;
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_iotlb_hits == hits && s.aa_iotlb_misses == misses);
	/* then 6 pages twice: 0..3 hit, 4 and 5 evict 0 and 1 (their
	 * sets' least recent), and from there each page finds its set's
	 * two entries the next two pages of that set: all miss */
	for (r = 0; r < 2; r++)
		for (i = 0; i < 6; i++)
			assert_int_equal(ptl_host_access_remote(e.c, pg + i * P,
					 buf, 8, true, &src), 0);
	hits += 4;
	misses += 8;
	/* one write of 8 KiB + 32 from 16 bytes before page 7: pieces in
	 * pages 6, 7, 8, 9, one lookup each, all new (miss); 8 and 9 are
	 * unmarked but in an access that takes the AA path: looked up */
	assert_int_equal(ptl_host_access_remote(e.c, pg + 6 * P + 4096 - 16,
						buf, sizeof(buf), true, &src),
			 0);
	misses += 4;
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_iotlb_hits == hits && s.aa_iotlb_misses == misses);
	assert_true(s.aa_iotlb_walk_reads == 4 * misses);
	/* a mark drops the client's 4 entries: page 8's set is cold */
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 8 * P, P, W,
			       SPINNIC_HANDLE_NONE), SPINNIC_PTL_OK);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_iotlb_inval == 4);
	assert_int_equal(ptl_host_access_remote(e.c, pg + 7 * P, buf, 8, true,
						&src), 0);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_iotlb_misses == misses + 1);
	t_env_teardown(&e);
}

/* A back-pressuring log (no DROP flag) refuses a whole write it cannot
 * log: nothing written, nothing logged; after consuming, it goes. */
static void
test_backpressure(void **state)
{
	struct spinnic_ctrl_aa a = { 0 };
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .may_block = true };
	struct spinnic_aa_ring *hdr;
	uint8_t buf[64], zero[64] = { 0 };
	struct ptl_nic_stats s;
	struct parsed out[300];
	uint64_t pg, cons = 0;
	uint32_t log, seq = 1, i;
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	a.ni = e.ni;
	a.ring_off = RING_OFF;
	a.size = SPINNIC_AA_RING_MIN;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_OK);
	log = a.log;
	hdr = (struct spinnic_aa_ring *)(e.region + RING_OFF);
	pg = t_addr(&e, PAGES_OFF);
	assert_int_equal(assoc(&e, e.c, e.ni, pg, SPINNIC_AA_PAGE, R | WLD,
			       log), 0);
	memset(buf, 0x5c, sizeof(buf));
	/* 128-byte records: 128 fill the 16 KiB ring */
	for (i = 0; i < 128; i++)
		assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true,
							&src), 0);
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 -EAGAIN);
	assert_int_equal(hdr->lost, 0);
	assert_int_equal(hdr->prod, SPINNIC_AA_RING_MIN);
	assert_memory_equal(e.region + PAGES_OFF, zero, sizeof(zero));
	/* without may_block it is lost */
	src.may_block = false;
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 -ENOSPC);
	assert_int_equal(hdr->lost, 1);
	src.may_block = true;
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 300),
			 128);
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 0);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_backpressure, 1);
	/* a corrupt cons never blocks: the append stops the log */
	hdr->cons = hdr->prod + 64;
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 -ENOSPC);
	assert_int_equal(hdr->err, 1);
	t_env_teardown(&e);
}

/*
 * A handler's DMA (s->defer) into a full back-pressuring log is never
 * refused: memory as the bits say at once, the records held on the NIC
 * and appended in order as the consumer makes room (ptl_aa_poll, later
 * accesses); meanwhile accesses that can come again are refused even
 * where the ring has room (held records go first), and a flush mark
 * taken then waits for the held records. Past PTL_AA_BACKLOG_MAX bytes
 * held, records are lost and counted; a log freed with held records
 * drops them.
 */
static void
test_held_records(void **state)
{
	struct ptl_aa_src hsrc = { .nid = 3, .pid = 4, .handler = true,
				   .defer = true };
	struct ptl_aa_src psrc = { .nid = 3, .pid = 4, .may_block = true };
	static uint8_t big[SPINNIC_AA_PAGE];
	struct spinnic_ctrl_aa a = { 0 };
	struct spinnic_aa_ring *hdr;
	struct ptl_nic_stats s;
	struct parsed out[256];
	struct ptl_match mt;
	uint64_t pg, fpg, cons = 0, mark;
	uint32_t log, flog, seq = 1, i, got = 0, n, lost;
	uint64_t unheld;
	uint8_t buf[64];
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	a.ni = e.ni;
	a.ring_off = RING_OFF;
	a.size = SPINNIC_AA_RING_MIN;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_OK);
	log = a.log;
	hdr = (struct spinnic_aa_ring *)(e.region + RING_OFF);
	pg = t_addr(&e, PAGES_OFF);
	fpg = pg + SPINNIC_AA_PAGE;
	assert_int_equal(assoc(&e, e.c, e.ni, pg, SPINNIC_AA_PAGE,
			       W | R | WLD, log), 0);
	assert_int_equal(assoc(&e, e.c, e.ni, fpg, SPINNIC_AA_PAGE,
			       R | SPINNIC_AA_FLUSH, log), 0);
	memset(&mt, 0, sizeof(mt));
	mt.c = e.c;
	mt.start = fpg;

	/* 128 records of 128 bytes fill the ring; 72 more are held */
	for (i = 0; i < 200; i++) {
		memset(buf, (int)i, sizeof(buf));
		assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true,
							&hsrc), 0);
		/* the write itself is not held back */
		assert_int_equal(e.region[PAGES_OFF], (uint8_t)i);
	}
	assert_int_equal(hdr->prod, SPINNIC_AA_RING_MIN);
	assert_int_equal(hdr->lost, 0);
	assert_true(ptl_aa_backlogged(e.c));
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_dma_waits, 72);
	assert_int_equal(s.aa_dma_wait_lost, 0);
	/* a flush now counts the held records */
	assert_true(ptl_match_flush_mark(&mt, 64, &flog, &mark));
	assert_int_equal(flog, log);
	assert_false(ptl_aa_flush_done(e.c, log, &mark));

	/* one record consumed: room for one, but 72 are held: a put
	 * packet's record is refused, the oldest held one goes in */
	n = parse(e.region + RING_OFF, &cons, &seq, out, 1);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].data[0], 0);
	got = 1;
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true,
						&psrc), -EAGAIN);
	assert_int_equal(hdr->prod, SPINNIC_AA_RING_MIN + 128);

	/* the consumer goes on; the NIC's poll appends the held ones (the
	 * last one gone moves ptl_aa_unheld, the receiver's cue) */
	unheld = ptl_aa_unheld(e.nic);
	while (got < 200) {
		n = parse(e.region + RING_OFF, &cons, &seq, out, 256);
		for (i = 0; i < n; i++) {
			assert_int_equal(out[i].kind, SPINNIC_AA_PUT_DATA);
			assert_int_equal(out[i].flags, SPINNIC_AA_F_HANDLER);
			assert_int_equal(out[i].len, 64);
			assert_int_equal(out[i].data[0], (uint8_t)(got + i));
			assert_int_equal(out[i].data[63], (uint8_t)(got + i));
		}
		got += n;
		__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);
		if (got < 200)
			assert_false(ptl_aa_flush_done(e.c, log, &mark));
		(void)ptl_aa_poll(e.nic, NULL, NULL, 64);
		assert_true(n > 0 || ptl_aa_backlogged(e.c));
	}
	assert_int_equal(got, 200);
	assert_false(ptl_aa_backlogged(e.c));
	assert_int_equal(ptl_aa_unheld(e.nic), unheld + 1);
	assert_true(ptl_aa_flush_done(e.c, log, &mark));
	assert_int_equal(hdr->lost, 0);
	/* the packet's turn now */
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true,
						&psrc), 0);
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 256), 1);
	__atomic_store_n(&hdr->cons, cons, __ATOMIC_RELEASE);

	/* the bound: page-sized records past PTL_AA_BACKLOG_MAX held are
	 * lost and counted (the write still happens: not redirected) */
	memset(big, 0x77, sizeof(big));
	n = PTL_AA_BACKLOG_MAX / sizeof(big) + 64;
	for (i = 0; i < n; i++)
		assert_int_equal(ptl_host_access_remote(e.c, pg, big,
							sizeof(big), true,
							&hsrc), 0);
	lost = (uint32_t)hdr->lost;
	/* the ring took a few (3 or 4, as the PAD falls) */
	assert_true(lost + 4 >= n - PTL_AA_BACKLOG_MAX /
		    (sizeof(struct ptl_aa_bl) + sizeof(big)));
	assert_true(lost + 3 <= n - PTL_AA_BACKLOG_MAX /
		    (sizeof(struct ptl_aa_bl) + sizeof(big)));
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_dma_wait_lost, lost);
	/* freed with held records: they go, and nothing is held */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, 2 * SPINNIC_AA_PAGE, W | R,
			       SPINNIC_HANDLE_NONE), 0);
	a = (struct spinnic_ctrl_aa){ .log = log };
	assert_true(ptl_aa_backlogged(e.c));
	unheld = ptl_aa_unheld(e.nic);
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_OK);
	assert_false(ptl_aa_backlogged(e.c));
	assert_int_equal(ptl_aa_unheld(e.nic), unheld + 1);

	/* a client that corrupts its consumer index while records are
	 * held: the log stops, the held records are lost and counted, and
	 * nothing is held any more (its packets are not refused for ever) */
	a = (struct spinnic_ctrl_aa){ .ni = e.ni, .ring_off = RING_OFF,
				      .size = SPINNIC_AA_RING_MIN };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_OK);
	assert_int_equal(assoc(&e, e.c, e.ni, pg, SPINNIC_AA_PAGE,
			       W | R | WLD, a.log), 0);
	for (i = 0; i < 138; i++)
		assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true,
							&hsrc), 0);
	assert_true(ptl_aa_backlogged(e.c));
	assert_int_equal(hdr->lost, 0);
	hdr->cons = hdr->prod + 64;
	(void)ptl_aa_poll(e.nic, NULL, NULL, 64);
	assert_false(ptl_aa_backlogged(e.c));
	assert_int_equal(hdr->err, 1);
	assert_int_equal(hdr->lost, 10);
	t_env_teardown(&e);
}

/* Two HPUs polling at once: each takes a log the other is not
 * consuming; the access functions overlap (each waits, up to 2 s, for
 * the other to be inside too). */
struct overlap {
	struct ptl_nic *nic;
	unsigned inside;   /* atomic */
	unsigned met;      /* atomic: calls that saw the other inside */
	unsigned calls;    /* atomic */
	uint32_t ctx_seen[2];
};

static int
on_overlap(void *arg, struct ptl_client *c, uint32_t ctx, uint64_t win_addr,
	   uint64_t win_len, const struct spinnic_aa_rec *rec,
	   const void *data)
{
	const struct timespec nap = { 0, 100000 };
	struct overlap *o = arg;
	unsigned k, i;

	(void)c;
	(void)win_addr;
	(void)win_len;
	(void)rec;
	(void)data;
	i = __atomic_fetch_add(&o->calls, 1, __ATOMIC_ACQ_REL);
	if (i < 2)
		o->ctx_seen[i] = ctx;
	__atomic_fetch_add(&o->inside, 1, __ATOMIC_ACQ_REL);
	for (k = 0; k < 20000; k++) {
		if (__atomic_load_n(&o->inside, __ATOMIC_ACQUIRE) >= 2) {
			__atomic_fetch_add(&o->met, 1, __ATOMIC_ACQ_REL);
			break;
		}
		nanosleep(&nap, NULL);
	}
	/* stay until the other saw this one */
	for (k = 0; k < 20000 &&
	     __atomic_load_n(&o->met, __ATOMIC_ACQUIRE) < 2 &&
	     __atomic_load_n(&o->inside, __ATOMIC_ACQUIRE) >= 2; k++)
		nanosleep(&nap, NULL);
	__atomic_fetch_sub(&o->inside, 1, __ATOMIC_ACQ_REL);
	return 0;
}

static void *
overlap_poller(void *arg)
{
	struct overlap *o = arg;

	return (void *)(uintptr_t)ptl_aa_poll(o->nic, on_overlap, o, 1);
}

static void
test_parallel_logs(void **state)
{
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .may_block = true };
	struct overlap o = { 0 };
	struct spinnic_ctrl_aa a;
	uint8_t buf[64] = { 0 };
	void *r0, *r1;
	pthread_t t0, t1;
	uint64_t pg;
	uint32_t k;
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	o.nic = e.nic;
	pg = t_addr(&e, PAGES_OFF);
	/* two logs served on the NIC (contexts 7 and 8), a page each, one
	 * record each */
	for (k = 0; k < 2; k++) {
		a = (struct spinnic_ctrl_aa){
			.ni = e.ni, .size = SPINNIC_AA_RING_MIN,
			.ring_off = RING_OFF + k * 2 * SPINNIC_AA_RING_MIN,
			.flags = SPINNIC_AA_LOG_HANDLER, .ctx = 7 + k,
			.addr = pg, .len = 2 * SPINNIC_AA_PAGE,
		};
		assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE,
					 &a), SPINNIC_PTL_OK);
		assert_int_equal(assoc(&e, e.c, e.ni,
				       pg + k * SPINNIC_AA_PAGE,
				       SPINNIC_AA_PAGE, W | R | WL, a.log), 0);
		assert_int_equal(ptl_host_access_remote(e.c,
							pg + k * SPINNIC_AA_PAGE,
							buf, 8, true, &src), 0);
	}
	assert_int_equal(pthread_create(&t0, NULL, overlap_poller, &o), 0);
	assert_int_equal(pthread_create(&t1, NULL, overlap_poller, &o), 0);
	assert_int_equal(pthread_join(t0, &r0), 0);
	assert_int_equal(pthread_join(t1, &r1), 0);
	/* one record each, both logs, at the same time */
	assert_int_equal((uintptr_t)r0, 1);
	assert_int_equal((uintptr_t)r1, 1);
	assert_int_equal(o.calls, 2);
	assert_int_equal(o.met, 2);
	assert_int_equal(o.ctx_seen[0] + o.ctx_seen[1], 7 + 8);
	t_env_teardown(&e);
}

/* --aa-page-size (ptl_nic_conf.aa_page): marks aligned to the NIC's page,
 * the page size in every AA reply (and the all-zero ASSOC a query of
 * it), records still cut at 4 KiB inside a bigger page. */
static void
test_page_size(void **state)
{
	const uint64_t big = 64 * 1024;
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .may_block = true };
	struct spinnic_ctrl_aa a = { 0 };
	struct spinnic_aa_ring *hdr;
	struct ptl_nic_conf cf;
	struct parsed out[8];
	struct ptl_nic *nic;
	uint8_t buf[8192], zero[8192] = { 0 };
	uint64_t pg, cons = 0;
	uint32_t log, seq = 1;
	struct t_env e;

	(void)state;
	/* powers of two from 4 KiB to 1 GiB only */
	ptl_nic_conf_default(&cf, 1);
	assert_int_equal(cf.aa_page, SPINNIC_AA_PAGE);
	cf.aa_page = 2048;
	assert_int_equal(ptl_nic_create(&cf, &nic), -EINVAL);
	cf.aa_page = 3 * 4096;
	assert_int_equal(ptl_nic_create(&cf, &nic), -EINVAL);
	cf.aa_page = 2ull << 30;
	assert_int_equal(ptl_nic_create(&cf, &nic), -EINVAL);
	cf.aa_page = 1ull << 30;
	assert_int_equal(ptl_nic_create(&cf, &nic), 0);
	ptl_nic_destroy(nic);

	/* the default NIC says 4096 */
	t_env_setup(&e);
	a.ni = e.ni;
	a.log = SPINNIC_HANDLE_NONE;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_ASSOC, &a),
			 SPINNIC_PTL_OK);
	assert_int_equal(a.page_shift, 12);
	t_env_teardown(&e);

	ptl_nic_conf_default(&cf, 1);
	cf.max_ops = 64;
	cf.aa_page = big;
	t_env_setup_opts(&e, 64, 0, &cf);
	/* the query: nothing marked, the page said */
	memset(&a, 0, sizeof(a));
	a.ni = e.ni;
	a.log = SPINNIC_HANDLE_NONE;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_ASSOC, &a),
			 SPINNIC_PTL_OK);
	assert_int_equal(a.page_shift, 16);
	assert_false(ptl_aa_active(e.c));
	log = log_create(&e, e.c, e.ni, RING_OFF);
	hdr = (struct spinnic_aa_ring *)(e.region + RING_OFF);
	pg = (t_addr(&e, PAGES_OFF) + big - 1) & ~(big - 1);
	/* 4 KiB alignment is not enough any more */
	assert_int_equal(assoc(&e, e.c, e.ni, pg + 4096, big, R | WLD, log),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, pg, 4096, R | WLD, log),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(assoc(&e, e.c, e.ni, pg, big + 4096, R | WLD, log),
			 SPINNIC_PTL_ARG_INVALID);
	assert_false(ptl_aa_active(e.c));
	assert_int_equal(assoc(&e, e.c, e.ni, pg, big, R | WLD, log), 0);
	/* the whole 64 KiB page redirects; 8 KiB at 4 KiB in: two records
	 * of 4096 bytes, memory untouched */
	memset(buf, 0x3c, sizeof(buf));
	assert_int_equal(ptl_host_access_remote(e.c, pg + 4096, buf,
						sizeof(buf), true, &src), 0);
	assert_memory_equal((void *)(uintptr_t)(pg + 4096), zero,
			    sizeof(zero));
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 8), 2);
	assert_int_equal(out[0].kind, SPINNIC_AA_PUT_DATA);
	assert_int_equal(out[0].addr, pg + 4096);
	assert_int_equal(out[0].len, 4096);
	assert_int_equal(out[1].addr, pg + 8192);
	assert_int_equal(out[1].len, 4096);
	assert_int_equal(hdr->lost, 0);
	/* the last 4 KiB of the page too */
	assert_int_equal(ptl_host_access_remote(e.c, pg + big - 8, buf, 8,
						true, &src), 0);
	assert_int_equal(parse(e.region + RING_OFF, &cons, &seq, out, 8), 1);
	assert_int_equal(out[0].addr, pg + big - 8);
	t_env_teardown(&e);
}

struct served {
	unsigned n;
	uint64_t last_addr;
	uint32_t ctx;
	uint64_t wa, wl;
	uint8_t first;
};

static int
on_served(void *arg, struct ptl_client *c, uint32_t ctx, uint64_t win_addr,
	  uint64_t win_len, const struct spinnic_aa_rec *rec, const void *data)
{
	struct served *sv = arg;

	(void)c;
	sv->n++;
	sv->last_addr = rec->addr;
	sv->ctx = ctx;
	sv->wa = win_addr;
	sv->wl = win_len;
	sv->first = rec->len ? *(const uint8_t *)data : 0;
	return 0;
}

/* A log served on the NIC (SPINNIC_AA_LOG_HANDLER): ptl_aa_poll hands
 * each record to the callback once, in order, and advances cons (space,
 * flush); a ring the client scribbles on stops that log only; the timed
 * wake; hostile descriptions refused. */
static void
test_nic_consumer(void **state)
{
	struct spinnic_ctrl_aa a = { 0 };
	struct ptl_aa_src src = { .nid = 3, .pid = 4, .may_block = true };
	struct spinnic_aa_ring *hdr;
	struct served sv = { 0 };
	struct ptl_nic_stats s;
	uint8_t buf[64];
	uint64_t pg, mark;
	uint32_t log, i;
	struct t_env e;

	(void)state;
	t_env_setup(&e);
	pg = t_addr(&e, PAGES_OFF);
	/* hostile: no window, wrapping window, unknown flag, long timer */
	a = (struct spinnic_ctrl_aa){ .ni = e.ni, .ring_off = RING_OFF,
				      .size = SPINNIC_AA_RING_MIN,
				      .flags = SPINNIC_AA_LOG_HANDLER,
				      .ctx = 7 };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.addr = UINT64_MAX - 10;
	a.len = 100;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.addr = pg;
	a.len = SPINNIC_AA_PAGE;
	a.flags = 0x4;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.flags = SPINNIC_AA_LOG_HANDLER;
	a.notify_us = SPINNIC_AA_NOTIFY_US_MAX + 1;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_ARG_INVALID);
	a.notify_us = 1;
	a.notify_every = 1000;
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_CREATE, &a),
			 SPINNIC_PTL_OK);
	log = a.log;
	hdr = (struct spinnic_aa_ring *)(e.region + RING_OFF);
	assert_int_equal(assoc(&e, e.c, e.ni, pg, SPINNIC_AA_PAGE, R | WLD,
			       log), 0);
	/* nothing to serve: nothing called */
	assert_int_equal(ptl_aa_poll(e.nic, on_served, &sv, 64), 0);
	/* 300 redirected writes through a 128-record ring: served as they
	 * come, so back-pressure never refuses one */
	for (i = 0; i < 300; i++) {
		memset(buf, (int)i, sizeof(buf));
		assert_int_equal(ptl_host_access_remote(e.c, pg + 64 * (i % 64),
							buf, 64, true, &src),
				 0);
		if (i % 100 == 99)
			(void)ptl_aa_poll(e.nic, on_served, &sv, 1000);
	}
	(void)ptl_aa_poll(e.nic, on_served, &sv, 1000);
	assert_int_equal(sv.n, 300);
	assert_int_equal(sv.first, 299 & 0xff);
	assert_int_equal(sv.last_addr, pg + 64 * (299 % 64));
	assert_int_equal(sv.ctx, 7);
	assert_int_equal(sv.wa, pg);
	assert_int_equal(sv.wl, SPINNIC_AA_PAGE);
	assert_int_equal(hdr->cons, hdr->prod);
	assert_int_equal(hdr->lost, 0);
	/* a flush mark is reached once served */
	mark = hdr->prod;
	assert_true(ptl_aa_flush_done(e.c, log, &mark));
	/* the timed wake: a sleeper, a record, 1 us later a wake */
	hdr->waiters = 1;
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 0);
	usleep(2000);
	(void)ptl_aa_poll(e.nic, NULL, NULL, 64);
	ptl_nic_stats_get(e.nic, &s);
	assert_true(s.aa_timer_wakes >= 1);
	hdr->waiters = 0;
	/* the client overwrites a record before the NIC serves it: the log
	 * stops, nothing is called for it or after it */
	sv.n = 0;
	(void)ptl_aa_poll(e.nic, on_served, &sv, 1000);
	assert_int_equal(sv.n, 1);
	assert_int_equal(ptl_host_access_remote(e.c, pg, buf, 64, true, &src),
			 0);
	mark = hdr->cons % SPINNIC_AA_RING_MIN;
	memset(e.region + RING_OFF + sizeof(*hdr) + mark, 0xff, 8);
	sv.n = 0;
	(void)ptl_aa_poll(e.nic, on_served, &sv, 1000);
	assert_int_equal(sv.n, 0);
	assert_int_equal(hdr->err, 1);
	ptl_nic_stats_get(e.nic, &s);
	assert_int_equal(s.aa_handled, 301);
	assert_true(s.aa_log_err >= 1);
	/* the watch list empties with the log */
	assert_int_equal(assoc(&e, e.c, e.ni, pg, SPINNIC_AA_PAGE, W | R,
			       SPINNIC_HANDLE_NONE), 0);
	a = (struct spinnic_ctrl_aa){ .log = log };
	assert_int_equal(aa_ctrl(&e, e.c, SPINNIC_CTRL_AA_LOG_FREE, &a),
			 SPINNIC_PTL_OK);
	assert_int_equal(ptl_aa_poll(e.nic, on_served, &sv, 1000), 0);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_matrix),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_ring),
		cmocka_unit_test(test_ctrl),
		cmocka_unit_test(test_remote_write),
		cmocka_unit_test(test_fault_log),
		cmocka_unit_test(test_iotlb_model),
		cmocka_unit_test(test_iotlb_path),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_held_records),
		cmocka_unit_test(test_page_size),
		cmocka_unit_test(test_nic_consumer),
		cmocka_unit_test(test_parallel_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
