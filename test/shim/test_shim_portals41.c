/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * portals4.h against the Portals 4.x specification (issue #13): every name
 * the specification defines compiles, each prototype has the spec's type
 * (assigned to a pointer of that type), the masks cover their bits, and
 * the calls spinnic does not implement yet (the triggered atomics)
 * return PTL_FAIL without posting anything (PTL_NO_INIT before PtlInit).
 * Uses test/shim's fake spinnic.
 */
#include <assert.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fake_nic.h"
#include "portals4.h"
#include "spin.h"

/* ---- compile time: names, values, prototypes ---------------------------- */

static_assert(PTL_SIZE_MAX == UINT64_MAX, "PTL_SIZE_MAX");
static_assert(sizeof(PTL_SIZE_MAX) == sizeof(ptl_size_t), "PTL_SIZE_MAX");
static_assert(PTL_IGNORED != PTL_OK && PTL_IGNORED < PTL_STATUS_LAST &&
	      PTL_IGNORED > PTL_ABORTED, "PTL_IGNORED");
static_assert((PTL_PT_ALLOC_OPTIONS_MASK & (PTL_PT_ONLY_USE_ONCE |
	      PTL_PT_ONLY_TRUNCATE | PTL_PT_FLOWCTRL)) ==
	      (PTL_PT_ONLY_USE_ONCE | PTL_PT_ONLY_TRUNCATE | PTL_PT_FLOWCTRL),
	      "PT mask");
static_assert((PTL_NI_INIT_OPTIONS_MASK & (PTL_NI_MATCHING |
	      PTL_NI_NO_MATCHING | PTL_NI_LOGICAL | PTL_NI_PHYSICAL)) ==
	      (PTL_NI_MATCHING | PTL_NI_NO_MATCHING | PTL_NI_LOGICAL |
	       PTL_NI_PHYSICAL), "NI mask");

#define MD_BITS (PTL_MD_EVENT_SUCCESS_DISABLE | PTL_MD_EVENT_SEND_DISABLE | \
	PTL_MD_EVENT_CT_SEND | PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_CT_ACK | \
	PTL_MD_EVENT_CT_BYTES | PTL_MD_UNORDERED | PTL_MD_VOLATILE | PTL_IOVEC)
static_assert(PTL_MD_OPTIONS_MASK == MD_BITS, "MD mask");

#define ME_BITS (PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_MANAGE_LOCAL | \
	PTL_ME_NO_TRUNCATE | PTL_ME_USE_ONCE | PTL_ME_MAY_ALIGN | \
	PTL_ME_ACK_DISABLE | PTL_ME_UNEXPECTED_HDR_DISABLE | \
	PTL_ME_IS_ACCESSIBLE | PTL_ME_EVENT_COMM_DISABLE | \
	PTL_ME_EVENT_FLOWCTRL_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE | \
	PTL_ME_EVENT_OVER_DISABLE | PTL_ME_EVENT_UNLINK_DISABLE | \
	PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_CT_COMM | \
	PTL_ME_EVENT_CT_OVERFLOW | PTL_ME_EVENT_CT_BYTES | \
	PTL_ME_AUTH_USE_JID | PTL_ME_LOCAL_INC_UH_RLENGTH | PTL_IOVEC)
static_assert(PTL_ME_OPTIONS_MASK == ME_BITS, "ME mask");
/* BXI's extensions compile, and ask for nothing */
static_assert((PTL_ME_OV_RDV_PUT_ONLY | PTL_ME_OV_RDV_PUT_DISABLE |
	       PTL_ME_MANAGE_LOCAL_STOP_IF_UH) == 0, "BXI names");
static_assert((PTL_LE_OPTIONS_MASK & ~PTL_ME_OPTIONS_MASK) == 0 &&
	      (PTL_LE_OPTIONS_MASK & PTL_LE_EVENT_CT_BYTES) != 0 &&
	      (PTL_LE_OPTIONS_MASK & PTL_ME_MANAGE_LOCAL) == 0, "LE mask");

/* the operations in the reference implementation's order */
static_assert(PTL_MIN == 0 && PTL_MAX == 1 && PTL_SUM == 2 &&
	      PTL_PROD == 3 && PTL_LOR == 4 && PTL_LAND == 5 &&
	      PTL_BOR == 6 && PTL_BAND == 7 && PTL_LXOR == 8 &&
	      PTL_BXOR == 9 && PTL_SWAP == 10 && PTL_CSWAP == 11 &&
	      PTL_CSWAP_NE == 12 && PTL_CSWAP_LE == 13 &&
	      PTL_CSWAP_LT == 14 && PTL_CSWAP_GE == 15 &&
	      PTL_CSWAP_GT == 16 && PTL_MSWAP == 17 && PTL_OP_LAST == 18,
	      "ptl_op_t");
static_assert(PTL_INT8_T != PTL_UINT8_T && PTL_INT16_T != PTL_UINT16_T &&
	      PTL_INT32_T != PTL_UINT32_T && PTL_INT64_T != PTL_UINT64_T &&
	      PTL_FLOAT != PTL_DOUBLE && PTL_FLOAT_COMPLEX !=
	      PTL_DOUBLE_COMPLEX && PTL_LONG_DOUBLE !=
	      PTL_LONG_DOUBLE_COMPLEX && PTL_DATATYPE_LAST == 14,
	      "ptl_datatype_t");
static_assert(PTL_CT_OPERATION != PTL_CT_BYTE, "ptl_ct_type_t");
static_assert(sizeof(((ptl_event_t *)0)->atomic_operation) ==
	      sizeof(ptl_op_t) &&
	      sizeof(((ptl_event_t *)0)->atomic_type) ==
	      sizeof(ptl_datatype_t), "event fields");

/* Each prototype as the specification writes it. */
static int (*const atomic_p)(ptl_handle_md_t, ptl_size_t, ptl_size_t,
			     ptl_ack_req_t, ptl_process_t, ptl_pt_index_t,
			     ptl_match_bits_t, ptl_size_t, void *,
			     ptl_hdr_data_t, ptl_op_t, ptl_datatype_t) =
	PtlAtomic;
static int (*const fetch_p)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t,
			    ptl_size_t, ptl_size_t, ptl_process_t,
			    ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
			    void *, ptl_hdr_data_t, ptl_op_t,
			    ptl_datatype_t) = PtlFetchAtomic;
static int (*const swap_p)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t,
			   ptl_size_t, ptl_size_t, ptl_process_t,
			   ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
			   void *, ptl_hdr_data_t, const void *, ptl_op_t,
			   ptl_datatype_t) = PtlSwap;
static int (*const sync_p)(void) = PtlAtomicSync;
static int (*const tput_p)(ptl_handle_md_t, ptl_size_t, ptl_size_t,
			   ptl_ack_req_t, ptl_process_t, ptl_pt_index_t,
			   ptl_match_bits_t, ptl_size_t, void *,
			   ptl_hdr_data_t, ptl_handle_ct_t, ptl_size_t) =
	PtlTriggeredPut;
static int (*const tget_p)(ptl_handle_md_t, ptl_size_t, ptl_size_t,
			   ptl_process_t, ptl_pt_index_t, ptl_match_bits_t,
			   ptl_size_t, void *, ptl_handle_ct_t, ptl_size_t) =
	PtlTriggeredGet;
static int (*const tatomic_p)(ptl_handle_md_t, ptl_size_t, ptl_size_t,
			      ptl_ack_req_t, ptl_process_t, ptl_pt_index_t,
			      ptl_match_bits_t, ptl_size_t, void *,
			      ptl_hdr_data_t, ptl_op_t, ptl_datatype_t,
			      ptl_handle_ct_t, ptl_size_t) =
	PtlTriggeredAtomic;
static int (*const tfetch_p)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t,
			     ptl_size_t, ptl_size_t, ptl_process_t,
			     ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
			     void *, ptl_hdr_data_t, ptl_op_t,
			     ptl_datatype_t, ptl_handle_ct_t, ptl_size_t) =
	PtlTriggeredFetchAtomic;
static int (*const tswap_p)(ptl_handle_md_t, ptl_size_t, ptl_handle_md_t,
			    ptl_size_t, ptl_size_t, ptl_process_t,
			    ptl_pt_index_t, ptl_match_bits_t, ptl_size_t,
			    void *, ptl_hdr_data_t, const void *, ptl_op_t,
			    ptl_datatype_t, ptl_handle_ct_t, ptl_size_t) =
	PtlTriggeredSwap;
static int (*const tinc_p)(ptl_handle_ct_t, ptl_ct_event_t, ptl_handle_ct_t,
			   ptl_size_t) = PtlTriggeredCTInc;
static int (*const tset_p)(ptl_handle_ct_t, ptl_ct_event_t, ptl_handle_ct_t,
			   ptl_size_t) = PtlTriggeredCTSet;
static int (*const cancel_p)(ptl_handle_ct_t) = PtlCTCancelTriggered;
static int (*const start_p)(ptl_handle_ni_t) = PtlStartBundle;
static int (*const end_p)(ptl_handle_ni_t) = PtlEndBundle;

/* ---- run time ------------------------------------------------------------ */

static ptl_process_t
phys(ptl_nid_t nid, ptl_pid_t pid)
{
	ptl_process_t p = { .phys = { .nid = nid, .pid = pid } };

	return p;
}

/* The triggered calls spinnic has: PTL_NO_INIT before PtlInit */
static void
trig_calls_return(ptl_handle_md_t md, ptl_handle_ct_t ct, int rc)
{
	ptl_ct_event_t one = { .success = 1, .failure = 0 };

	assert_int_equal(tput_p(md, 0, 8, PTL_NO_ACK_REQ, phys(0, 1), 0, 0, 0,
				NULL, 0, ct, 1), rc);
	assert_int_equal(tget_p(md, 0, 8, phys(0, 1), 0, 0, 0, NULL, ct, 1),
			 rc);
	assert_int_equal(tinc_p(ct, one, ct, 1), rc);
	assert_int_equal(tset_p(ct, one, ct, 1), rc);
}

/* The triggered atomics once with md/ct; all must return rc. */
static void
trig_atomics_return(ptl_handle_md_t md, ptl_handle_ct_t ct, int rc)
{
	uint64_t operand = 0;

	assert_int_equal(tatomic_p(md, 0, 8, PTL_NO_ACK_REQ, phys(0, 1), 0, 0,
				   0, NULL, 0, PTL_MIN, PTL_DOUBLE, ct, 1), rc);
	assert_int_equal(tfetch_p(md, 0, md, 8, 8, phys(0, 1), 0, 0, 0, NULL,
				  0, PTL_MAX, PTL_FLOAT, ct, 1), rc);
	assert_int_equal(tswap_p(md, 0, md, 8, 8, phys(0, 1), 0, 0, 0, NULL, 0,
				 &operand, PTL_SWAP, PTL_INT32_T, ct, 1), rc);
}

static void
test_no_init(void **state)
{
	(void)state;
	trig_atomics_return(PTL_INVALID_HANDLE, PTL_CT_NONE, PTL_NO_INIT);
	trig_calls_return(PTL_INVALID_HANDLE, PTL_CT_NONE, PTL_NO_INIT);
	assert_int_equal(atomic_p(PTL_INVALID_HANDLE, 0, 8, PTL_NO_ACK_REQ,
				  phys(0, 1), 0, 0, 0, NULL, 0, PTL_SUM,
				  PTL_INT64_T), PTL_NO_INIT);
	assert_int_equal(sync_p(), PTL_NO_INIT);
	assert_int_equal(cancel_p(PTL_CT_NONE), PTL_NO_INIT);
}

static void
test_calls_post(void **state)
{
	struct fake_nic f;
	uint8_t *buf;
	ptl_handle_ni_t ni;
	ptl_handle_md_t mdh;
	ptl_handle_ct_t cth;
	struct spinnic_cmd c;
	ptl_md_t md = { .length = 64, .eq_handle = PTL_EQ_NONE,
			.ct_handle = PTL_CT_NONE };

	(void)state;
	assert_int_equal(fake_nic_start(&f, FAKE_ANSWER), 0);
	assert_int_equal(PtlInit(), PTL_OK);
	assert_int_equal(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING |
				   PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL,
				   &ni), PTL_OK);
	buf = spin_host_alloc(64);
	assert_non_null(buf);
	md.start = buf;
	assert_int_equal(PtlMDBind(ni, &md, &mdh), PTL_OK);
	assert_int_equal(PtlCTAlloc(ni, &cth), PTL_OK);

	/* the triggered atomics: each a TRIG slot, then the atomic */
	trig_atomics_return(mdh, cth, PTL_OK);
	for (int k = 0; k < 3; k++) {
		assert_true(fake_nic_cmd_pop(&f, &c));
		assert_int_equal(c.op, SPINNIC_CMD_TRIG);
		assert_true(fake_nic_cmd_pop(&f, &c));
		assert_int_equal(c.op, k == 0 ? SPINNIC_CMD_ATOMIC :
				 k == 1 ? SPINNIC_CMD_FETCH_ATOMIC :
				 SPINNIC_CMD_SWAP);
	}
	/* refused like the plain call: MIN has no complex type */
	assert_int_equal(tatomic_p(mdh, 0, 8, PTL_NO_ACK_REQ, phys(0, 1), 0,
				   0, 0, NULL, 0, PTL_MIN, PTL_FLOAT_COMPLEX,
				   cth, 1), PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&f, &c));
	/* the atomics post their commands */
	{
		uint64_t cmpv = 42;

		assert_int_equal(atomic_p(mdh, 0, 16, PTL_NO_ACK_REQ,
					  phys(0, 1), 3, 7, 8, NULL, 5, PTL_SUM,
					  PTL_INT64_T), PTL_OK);
		assert_true(fake_nic_cmd_pop(&f, &c));
		assert_int_equal(c.op, SPINNIC_CMD_ATOMIC);
		assert_int_equal(c.atomic_op, PTL_SUM);
		assert_int_equal(c.atomic_type, PTL_INT64_T);
		assert_int_equal(c.length, 16);
		assert_int_equal(c.ack_req, PTL_NO_ACK_REQ);
		assert_int_equal(swap_p(mdh, 8, mdh, 0, 8, phys(0, 1), 3, 7, 0,
					NULL, 0, &cmpv, PTL_CSWAP,
					PTL_UINT64_T), PTL_OK);
		assert_true(fake_nic_cmd_pop(&f, &c));
		assert_int_equal(c.op, SPINNIC_CMD_SWAP);
		assert_int_equal(c.get_offset, 8);
		assert_memory_equal(c.operand, &cmpv, 8);
		/* refused: not the call's operation, part of an element, a
		 * conditional swap of two elements, past the get MD */
		assert_int_equal(fetch_p(mdh, 0, mdh, 0, 8, phys(0, 1), 0, 0,
					 0, NULL, 0, PTL_CSWAP, PTL_INT64_T),
				 PTL_ARG_INVALID);
		assert_int_equal(atomic_p(mdh, 0, 6, PTL_NO_ACK_REQ,
					  phys(0, 1), 0, 0, 0, NULL, 0, PTL_SUM,
					  PTL_INT32_T), PTL_ARG_INVALID);
		assert_int_equal(swap_p(mdh, 0, mdh, 0, 16, phys(0, 1), 0, 0,
					0, NULL, 0, &cmpv, PTL_CSWAP,
					PTL_INT64_T), PTL_ARG_INVALID);
		assert_int_equal(fetch_p(mdh, 60, mdh, 0, 8, phys(0, 1), 0, 0,
					 0, NULL, 0, PTL_SUM, PTL_INT64_T),
				 PTL_ARG_INVALID);
		assert_false(fake_nic_cmd_pop(&f, &c));
	}
	/* implemented: nothing to flush; triggered ones: test_shim_trig */
	assert_int_equal(sync_p(), PTL_OK);
	trig_calls_return(mdh, mdh, PTL_ARG_INVALID);
	assert_int_equal(cancel_p(mdh), PTL_ARG_INVALID);
	assert_false(fake_nic_cmd_pop(&f, &c));
	assert_int_equal(start_p(ni), PTL_OK);
	assert_int_equal(end_p(ni), PTL_OK);
	/* the masks are what the calls check */
	md.options = ~PTL_MD_OPTIONS_MASK & (1u << 20);
	assert_int_equal(PtlMDBind(ni, &md, &mdh), PTL_ARG_INVALID);
	assert_string_equal(spin_strerror(PTL_IGNORED), "PTL_IGNORED");

	assert_int_equal(PtlCTFree(cth), PTL_OK);
	assert_int_equal(PtlNIFini(ni), PTL_OK);
	PtlFini();
	assert_int_equal(f.bad_msgs, 0);
	fake_nic_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_init),
		cmocka_unit_test(test_calls_post),
	};

	setenv("SPINNIC_REGION_SIZE", "4M", 1);
	setenv("SPINNIC_HUGEPAGES", "0", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
