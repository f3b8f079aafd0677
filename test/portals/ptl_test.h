/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers for the lib/portals unit tests: a fake client region in plain
 * memory (client addresses == NIC addresses: same process), control
 * requests, header packets, EQ reading. */
#ifndef PTL_TEST_H
#define PTL_TEST_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "ptl_nic.h"

#define T_REGION_SIZE (1u << 20)
#define T_CMD_OFF 4096u
#define T_CMD_ENTRIES 16u
#define T_EQ_OFF (64u * 1024)
#define T_EQ2_OFF (96u * 1024)
#define T_CT_OFF (128u * 1024)
#define T_BUF_OFF (256u * 1024)

struct t_env {
	struct ptl_nic *nic;
	uint8_t *region;
	struct ptl_client *c;
	uint32_t ni;     /* matching physical NI */
	uint32_t eq;
	uint32_t pt;     /* pt index */
	uint32_t eq_count;
};

static inline void
t_region_init(uint8_t *r, size_t size)
{
	struct spinnic_region_hdr *h = (struct spinnic_region_hdr *)r;

	memset(r, 0, size);
	h->magic = SPINNIC_REGION_MAGIC;
	h->version = SPINNIC_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->size = size;
	h->cmd_off = T_CMD_OFF;
	h->cmd_entries = T_CMD_ENTRIES;
	h->heap_off = T_BUF_OFF;
	h->heap_size = size - T_BUF_OFF;
}

static inline uint8_t *
t_region_new(void)
{
	void *p = mmap(NULL, T_REGION_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	t_region_init(p, T_REGION_SIZE);
	return p;
}

static inline void
t_region_unmap(void *arg, void *region, size_t size)
{
	(void)arg;
	munmap(region, size);
}

static inline int
t_ctrl(struct t_env *e, struct ptl_client *c, uint16_t op,
       struct spinnic_ctrl_msg *m)
{
	m->version = SPINNIC_ABI_VERSION;
	m->op = op;
	assert_int_equal(ptl_nic_ctrl(e->nic, c, m, m), 0);
	return m->status;
}

static inline uint32_t
t_eq_alloc(struct t_env *e, struct ptl_client *c, uint32_t ni, uint64_t off,
	   uint32_t count)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.eq.ni = ni;
	m.u.eq.ring_off = off;
	m.u.eq.count = count;
	assert_int_equal(t_ctrl(e, c, SPINNIC_CTRL_EQ_ALLOC, &m),
			 SPINNIC_PTL_OK);
	return m.u.eq.eq;
}

static inline uint32_t
t_ni_init(struct t_env *e, struct ptl_client *c, uint32_t options)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.ni.options = options;
	assert_int_equal(t_ctrl(e, c, SPINNIC_CTRL_NI_INIT, &m),
			 SPINNIC_PTL_OK);
	return m.u.ni.ni;
}

static inline uint32_t
t_pt_alloc(struct t_env *e, uint32_t options, uint32_t eq)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.pt.ni = e->ni;
	m.u.pt.options = options;
	m.u.pt.eq = eq;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	assert_int_equal(t_ctrl(e, e->c, SPINNIC_CTRL_PT_ALLOC, &m),
			 SPINNIC_PTL_OK);
	return m.u.pt.pt_index;
}

/* a full env: NIC nid 1, client pid 0, matching NI, EQ, PT */
static inline void
t_env_setup_opts(struct t_env *e, uint32_t eq_count, uint32_t pt_options,
		 const struct ptl_nic_conf *conf)
{
	struct ptl_nic_conf cf;

	memset(e, 0, sizeof(*e));
	if (conf == NULL) {
		ptl_nic_conf_default(&cf, 1);
		cf.max_ops = 64;
		conf = &cf;
	}
	assert_int_equal(ptl_nic_create(conf, &e->nic), 0);
	e->region = t_region_new();
	assert_int_equal(ptl_client_attach(e->nic, e->region, T_REGION_SIZE,
					   (uint64_t)(uintptr_t)e->region,
					   getpid(), getuid(),
					   SPINNIC_PTL_PID_ANY, &e->c), 0);
	ptl_client_set_release(e->c, t_region_unmap, NULL);
	e->ni = t_ni_init(e, e->c, SPINNIC_PTL_NI_MATCHING |
			  SPINNIC_PTL_NI_PHYSICAL);
	e->eq_count = eq_count;
	e->eq = t_eq_alloc(e, e->c, e->ni, T_EQ_OFF, eq_count);
	e->pt = t_pt_alloc(e, pt_options, e->eq);
}

static inline void
t_env_setup(struct t_env *e)
{
	t_env_setup_opts(e, 64, 0, NULL);
}

static inline void
t_env_teardown(struct t_env *e)
{
	ptl_nic_destroy(e->nic);
}

static inline uint64_t
t_addr(struct t_env *e, uint64_t off)
{
	return (uint64_t)(uintptr_t)e->region + off;
}

static inline struct spinnic_eq *
t_eq(struct t_env *e, uint64_t off)
{
	return (struct spinnic_eq *)(e->region + off);
}

/* next event of the EQ at off, or -1 when empty */
static inline int
t_ev_next(struct t_env *e, uint64_t off, struct spinnic_event *ev_p)
{
	struct spinnic_eq *q = t_eq(e, off);
	uint32_t tail = q->tail;
	struct spinnic_event *s;

	/* the consumer protocol: acquire head/seq, copy, release tail */
	if (__atomic_load_n(&q->head, __ATOMIC_ACQUIRE) == tail)
		return -1;
	s = &q->slots[tail & q->mask];
	assert_int_equal(__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE),
			 tail + 1);
	*ev_p = *s;
	__atomic_store_n(&q->tail, tail + 1, __ATOMIC_RELEASE);
	return ev_p->type;
}

static inline void
t_ev_drain(struct t_env *e, uint64_t off)
{
	struct spinnic_event ev;

	while (t_ev_next(e, off, &ev) >= 0)
		;
}

struct t_me {
	uint32_t list, options, uid, ct, ctx;
	uint64_t off, length, match_bits, ignore_bits, min_free, user_ptr;
	struct spinnic_pid match_id;
};

static inline void
t_me_default(struct t_me *me)
{
	memset(me, 0, sizeof(*me));
	me->list = SPINNIC_PTL_PRIORITY_LIST;
	me->options = SPINNIC_PTL_ME_OP_PUT | SPINNIC_PTL_ME_OP_GET;
	me->uid = SPINNIC_PTL_UID_ANY;
	me->ct = SPINNIC_HANDLE_NONE;
	me->ctx = SPINNIC_HANDLE_NONE;
	me->off = T_BUF_OFF;
	me->length = 4096;
	me->match_id.nid = SPINNIC_PTL_NID_ANY;
	me->match_id.pid = SPINNIC_PTL_PID_ANY;
}

static inline int
t_me_op(struct t_env *e, uint16_t op, const struct t_me *me, uint32_t *h_p)
{
	struct spinnic_ctrl_msg m;
	int st;

	memset(&m, 0, sizeof(m));
	m.u.me.ni = e->ni;
	m.u.me.pt_index = e->pt;
	m.u.me.list = me->list;
	m.u.me.start = t_addr(e, me->off);
	m.u.me.length = me->length;
	m.u.me.options = me->options;
	m.u.me.ct = me->ct;
	m.u.me.uid = me->uid;
	m.u.me.ctx = me->ctx;
	m.u.me.match_id = me->match_id;
	m.u.me.match_bits = me->match_bits;
	m.u.me.ignore_bits = me->ignore_bits;
	m.u.me.min_free = me->min_free;
	m.u.me.user_ptr = me->user_ptr;
	st = t_ctrl(e, e->c, op, &m);
	if (h_p != NULL)
		*h_p = m.u.me.me;
	return st;
}

static inline uint32_t
t_me_append(struct t_env *e, const struct t_me *me)
{
	uint32_t h;

	assert_int_equal(t_me_op(e, SPINNIC_CTRL_ME_APPEND, me, &h),
			 SPINNIC_PTL_OK);
	return h;
}

/* a one-packet put header to the env's client */
static inline void
t_hdr(struct t_env *e, struct spinnic_pkt *p, uint64_t bits, uint64_t len)
{
	memset(p, 0, sizeof(*p));
	p->type = SPINNIC_WIRE_T_DATA;
	p->flags = SPINNIC_WIRE_F_HEADER | SPINNIC_WIRE_F_COMPLETION;
	p->op = SPINNIC_WIRE_OP_PUT;
	p->ack_req = SPINNIC_PTL_ACK_REQ;
	p->src.nid = 2;
	p->src.pid = 7;
	p->dst = ptl_client_id(e->c);
	p->pt_index = e->pt;
	p->uid = 1000;
	p->match_bits = bits;
	p->hdr_data = 0xdada;
	p->msg_id = 99;
	p->msg_len = len;
	p->pay_len = (uint32_t)len;
}

#endif
