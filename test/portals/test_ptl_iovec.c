/* SPDX-License-Identifier: BSD-3-Clause */
/* iovec MDs and MEs (doc/NOTES.md "iovec MDs and MEs"): the translation
 * helper ptl_iov_access, the checks at MD bind and ME append, data and
 * atomics of a match on an iovec ME. The client is this process: its
 * region is t_region_new()'s, malloc'd memory is reached with
 * process_vm_readv/writev on our own pid (the slow path). */
#include "ptl_test.h"

#define ARR_OFF (T_BUF_OFF + 64u * 1024) /* the ptl_iovec_t arrays */

static void
pattern(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* a ptl_iovec_t array at ARR_OFF of the region */
static struct ptl_iov_ent *
arr(struct t_env *e)
{
	return (struct ptl_iov_ent *)(e->region + ARR_OFF);
}

static int
md_bind(struct t_env *e, uint64_t start, uint64_t count, uint32_t *md_p)
{
	struct spinnic_ctrl_msg m;
	int st;

	memset(&m, 0, sizeof(m));
	m.u.md.ni = e->ni;
	m.u.md.start = start;
	m.u.md.length = count;
	m.u.md.options = SPINNIC_PTL_IOVEC;
	m.u.md.eq = SPINNIC_HANDLE_NONE;
	m.u.md.ct = SPINNIC_HANDLE_NONE;
	st = t_ctrl(e, e->c, SPINNIC_CTRL_MD_BIND, &m);
	if (md_p != NULL)
		*md_p = m.u.md.md;
	return st;
}

/* Segments at entry boundaries, zero-length entries skipped, region and
 * malloc'd pieces in one access, past the end refused. */
static void
test_iov_access(void **state)
{
	struct t_env e;
	uint8_t *heap = malloc(7);
	uint8_t want[22], got[22];
	struct ptl_iov_ent v[5];

	(void)state;
	t_env_setup(&e);
	assert_non_null(heap);
	v[0] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF), 10 };
	v[1] = (struct ptl_iov_ent){ 0, 0 }; /* empty: address unused */
	v[2] = (struct ptl_iov_ent){ (uint64_t)(uintptr_t)heap, 7 };
	v[3] = (struct ptl_iov_ent){ 8, 0 };
	v[4] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF + 100), 5 };

	pattern(want, sizeof(want), 3);
	assert_int_equal(ptl_iov_access(e.c, v, 5, 0, want, 22, true), 0);
	assert_memory_equal(e.region + T_BUF_OFF, want, 10);
	assert_memory_equal(heap, want + 10, 7);
	assert_memory_equal(e.region + T_BUF_OFF + 100, want + 17, 5);
	/* across A's end, the empty entry and into B */
	memset(got, 0, sizeof(got));
	assert_int_equal(ptl_iov_access(e.c, v, 5, 9, got, 3, false), 0);
	assert_memory_equal(got, want + 9, 3);
	/* exactly one entry, starting on its boundary */
	assert_int_equal(ptl_iov_access(e.c, v, 5, 10, got, 7, false), 0);
	assert_memory_equal(got, want + 10, 7);
	/* the last byte, and nothing at the end */
	assert_int_equal(ptl_iov_access(e.c, v, 5, 21, got, 1, false), 0);
	assert_int_equal(got[0], want[21]);
	assert_int_equal(ptl_iov_access(e.c, v, 5, 22, got, 0, false), 0);
	/* past the end */
	assert_int_equal(ptl_iov_access(e.c, v, 5, 20, got, 3, false),
			 -ERANGE);
	assert_int_equal(ptl_iov_access(e.c, v, 5, 22, got, 1, true),
			 -ERANGE);
	assert_int_equal(ptl_iov_access(e.c, v, 0, 0, got, 1, false),
			 -ERANGE);
	free(heap);
	t_env_teardown(&e);
}

/* What MD bind checks (count, wrap, the array readable), what it does
 * not (an entry nobody maps fails at use), the copy it keeps. */
static void
test_md_bind(void **state)
{
	struct t_env e;
	struct ptl_iov_ent *a;
	uint8_t b[16];
	uint32_t md;

	(void)state;
	t_env_setup(&e);
	a = arr(&e);
	for (unsigned i = 0; i <= PTL_MAX_IOVECS; i++)
		a[i] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF + i), 1 };
	/* the NI advertises its limit, and holds to it */
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), PTL_MAX_IOVECS + 1,
				 NULL), SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), 0, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), PTL_MAX_IOVECS,
				 &md), SPINNIC_PTL_OK);
	/* an entry that wraps */
	a[3] = (struct ptl_iov_ent){ UINT64_MAX - 2, 4 };
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), 4, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	/* entries summing past INT64_MAX */
	a[3] = (struct ptl_iov_ent){ 0, INT64_MAX };
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), 4, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	/* the array itself where the client has nothing */
	assert_int_equal(md_bind(&e, 4096, 2, NULL), SPINNIC_PTL_ARG_INVALID);

	/* an entry outside any memory of the client: bound, fails at use */
	a[0] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF), 4 };
	a[1] = (struct ptl_iov_ent){ 4096, 4 };
	a[2] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF + 8), 4 };
	assert_int_equal(md_bind(&e, t_addr(&e, ARR_OFF), 3, &md),
			 SPINNIC_PTL_OK);
	assert_int_equal(ptl_md_access(e.c, md, 0, b, 4, false), 0);
	assert_int_equal(ptl_md_access(e.c, md, 2, b, 4, false), -EFAULT);
	assert_int_equal(ptl_md_access(e.c, md, 8, b, 4, false), 0);
	assert_int_equal(ptl_md_access(e.c, md, 8, b, 5, false), -ERANGE);

	/* the entries were copied at bind: changing the array does nothing */
	pattern(e.region + T_BUF_OFF, 16, 9);
	a[0] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF + 12), 4 };
	assert_int_equal(ptl_md_access(e.c, md, 0, b, 4, false), 0);
	assert_memory_equal(b, e.region + T_BUF_OFF, 4);
	assert_int_equal(ptl_md_access(e.c, md, 8, b, 4, false), 0);
	assert_memory_equal(b, e.region + T_BUF_OFF + 8, 4);

	/* released: an access in flight would learn it */
	{
		struct spinnic_ctrl_msg m;

		memset(&m, 0, sizeof(m));
		m.u.md.md = md;
		assert_int_equal(t_ctrl(&e, e.c, SPINNIC_CTRL_MD_RELEASE, &m),
				 SPINNIC_PTL_OK);
	}
	assert_int_equal(ptl_md_access(e.c, md, 0, b, 4, false), -EBADF);
	t_env_teardown(&e);
}

/* An iovec ME: checks at append, a put placed through its entries, the
 * event's start the array's address, atomics entry by entry. */
static void
test_me_iovec(void **state)
{
	struct t_env e;
	struct ptl_iov_ent *a;
	struct spinnic_event ev;
	struct spinnic_pkt h;
	struct ptl_match mt;
	uint8_t *heap = malloc(8);
	uint8_t want[24];
	struct t_me me;
	uint32_t x[2] = { 5, 6 };

	(void)state;
	t_env_setup(&e);
	assert_non_null(heap);
	memset(heap, 0, 8);
	a = arr(&e);
	a[0] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF), 8 };
	a[1] = (struct ptl_iov_ent){ 0, 0 };
	a[2] = (struct ptl_iov_ent){ (uint64_t)(uintptr_t)heap, 8 };
	a[3] = (struct ptl_iov_ent){ t_addr(&e, T_BUF_OFF + 64), 8 };
	t_me_default(&me);
	me.options |= SPINNIC_PTL_IOVEC;
	me.off = ARR_OFF;
	me.match_bits = 0x77;
	/* too many entries; an execution context */
	me.length = PTL_MAX_IOVECS + 1;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	me.length = 4;
	me.ctx = 0x1234;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_APPEND, &me, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	me.ctx = SPINNIC_HANDLE_NONE;
	/* ME search takes no iovec */
	me.list = SPINNIC_PTL_SEARCH_ONLY;
	assert_int_equal(t_me_op(&e, SPINNIC_CTRL_ME_SEARCH, &me, NULL),
			 SPINNIC_PTL_ARG_INVALID);
	me.list = SPINNIC_PTL_PRIORITY_LIST;
	t_me_append(&e, &me);
	t_ev_drain(&e, T_EQ_OFF);

	/* a 30-byte put: 24 bytes fit (truncated), placed across entries */
	t_hdr(&e, &h, 0x77, 30);
	assert_int_equal(ptl_nic_match(e.nic, &h, &mt), 0);
	assert_non_null(mt.iov);
	assert_int_equal(mt.mlength, 24);
	assert_int_equal(mt.start, t_addr(&e, ARR_OFF));
	/* the client's array changes: the ME's entries do not */
	a[3].len = 1;
	pattern(want, sizeof(want), 1);
	assert_int_equal(ptl_match_access(&mt, 0, want, 5, true), 0);
	assert_int_equal(ptl_match_access(&mt, 5, want + 5, 19, true), 0);
	assert_int_equal(ptl_match_access(&mt, 20, want, 5, true), -ERANGE);
	assert_memory_equal(e.region + T_BUF_OFF, want, 8);
	assert_memory_equal(heap, want + 8, 8);
	assert_memory_equal(e.region + T_BUF_OFF + 64, want + 16, 8);

	/* atomics: whole elements per entry; one across two is refused
	 * before anything is applied */
	mt.local_offset = 4;
	assert_int_equal(ptl_match_atomic(&mt, SPINNIC_PTL_SUM,
					  SPINNIC_PTL_UINT64_T, x, NULL, 8,
					  NULL), -EINVAL);
	assert_memory_equal(e.region + T_BUF_OFF, want, 8);
	assert_memory_equal(heap, want + 8, 8);
	{
		uint32_t old[2], r0, h0;

		memcpy(&r0, e.region + T_BUF_OFF + 4, 4);
		memcpy(&h0, heap, 4);
		assert_int_equal(ptl_match_atomic(&mt, SPINNIC_PTL_SUM,
						  SPINNIC_PTL_INT32_T, x, NULL,
						  8, old), 0);
		assert_int_equal(old[0], r0);
		assert_int_equal(old[1], h0);
		memcpy(old, e.region + T_BUF_OFF + 4, 4);
		memcpy(old + 1, heap, 4);
		assert_int_equal(old[0], r0 + 5);
		assert_int_equal(old[1], h0 + 6);
	}
	mt.local_offset = 0;

	ptl_match_complete(e.nic, &mt, SPINNIC_PTL_NI_OK);
	assert_null(mt.iov);
	assert_int_equal(t_ev_next(&e, T_EQ_OFF, &ev), SPINNIC_PTL_EVENT_PUT);
	assert_int_equal(ev.start, t_addr(&e, ARR_OFF));
	assert_int_equal(ev.mlength, 24);
	assert_int_equal(ev.rlength, 30);
	free(heap);
	t_env_teardown(&e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iov_access),
		cmocka_unit_test(test_md_bind),
		cmocka_unit_test(test_me_iovec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
