/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the fuzz targets and the seed generator: a NIC with one client
 * whose host region is plain static memory, mapped at a fixed client
 * address (FZ_BASE_VA) so that handles and addresses in a seed are the
 * same on every run. The client's OS pid does not exist: an address
 * outside the region reaches process_vm_* and fails (-EFAULT) instead of
 * touching the fuzzer's own memory.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "ptl_nic.h"

#define FZ_REGION_SIZE (512u * 1024)
#define FZ_BASE_VA 0x10000000000ull
#define FZ_CMD_OFF 4096u
#define FZ_CMD_ENTRIES 16u
#define FZ_EQ_OFF (64u * 1024)
#define FZ_EQ_COUNT 64u
#define FZ_EQ2_OFF (96u * 1024)
#define FZ_CT_OFF (128u * 1024)
#define FZ_BUF_OFF (256u * 1024)
#define FZ_BUF_LEN (FZ_REGION_SIZE - FZ_BUF_OFF)
#define FZ_OS_PID 0x7ffffff0 /* above any pid_max: no such process */
#define FZ_UID 1000u
#define FZ_NID 1u

struct fz_env {
	struct ptl_nic *nic;
	struct ptl_client *c;
	uint8_t *region;
};

static _Alignas(4096) uint8_t fz_region_mem[FZ_REGION_SIZE];

static inline uint64_t
fz_addr(uint64_t off)
{
	return FZ_BASE_VA + off;
}

/* A ptl_iovec_t array in the region for iovec MDs and MEs (fuzz_ctrl):
 * two pieces of the region, an empty entry, one outside it (fails at
 * use: process_vm_* on a pid that does not exist). */
#define FZ_IOV_OFF (FZ_BUF_OFF + 64u * 1024)
/* fuzz_ctrl copies its messages here, where a BATCH may name them as
 * records (64 at most, before the iovec array) */
#define FZ_BATCH_OFF (FZ_BUF_OFF + 32u * 1024)
#define FZ_IOV_N 4u

static inline void
fz_iov_fill(uint8_t *region)
{
	const uint64_t v[2 * FZ_IOV_N] = {
		fz_addr(FZ_BUF_OFF), 100, 0, 0,
		fz_addr(FZ_BUF_OFF + 4096), 3000, 0x1000, 64,
	};

	memcpy(region + FZ_IOV_OFF, v, sizeof(v));
}

/* NIC (nid 1, 64 ops) and one attached client at pid 0; 0 or -errno */
static inline int
fz_env_init(struct fz_env *e)
{
	struct spinnic_region_hdr *h = (struct spinnic_region_hdr *)fz_region_mem;
	struct ptl_nic_conf cf;
	int rc;

	memset(e, 0, sizeof(*e));
	memset(fz_region_mem, 0, sizeof(fz_region_mem));
	h->magic = SPINNIC_REGION_MAGIC;
	h->version = SPINNIC_ABI_VERSION;
	h->hdr_size = sizeof(*h);
	h->size = FZ_REGION_SIZE;
	h->cmd_off = FZ_CMD_OFF;
	h->cmd_entries = FZ_CMD_ENTRIES;
	h->heap_off = FZ_BUF_OFF;
	h->heap_size = FZ_BUF_LEN;
	e->region = fz_region_mem;
	ptl_nic_conf_default(&cf, FZ_NID);
	cf.max_clients = 4;
	cf.max_ops = 64;
	cf.limits.max_entries = 256;
	cf.limits.max_unexpected_headers = 64;
	cf.limits.max_mds = 16;
	cf.limits.max_cts = 16;
	cf.limits.max_eqs = 16;
	rc = ptl_nic_create(&cf, &e->nic);
	if (rc != 0)
		return rc;
	rc = ptl_client_attach(e->nic, e->region, FZ_REGION_SIZE, FZ_BASE_VA,
			       FZ_OS_PID, FZ_UID, 0, &e->c);
	if (rc != 0) {
		ptl_nic_destroy(e->nic);
		return rc;
	}
	return 0;
}

static inline void
fz_env_fini(struct fz_env *e)
{
	ptl_nic_destroy(e->nic);
	e->nic = NULL;
	e->c = NULL;
}

/* one control request; returns the reply status, or -1 if not handled */
static inline int
fz_ctrl(struct fz_env *e, uint16_t op, struct spinnic_ctrl_msg *m)
{
	m->version = SPINNIC_ABI_VERSION;
	m->op = op;
	if (ptl_nic_ctrl(e->nic, e->c, m, m) != 0)
		return -1;
	return m->status;
}

/* the usual objects: matching physical NI, EQ, CT, PT with the EQ */
struct fz_objs {
	uint32_t ni, eq, ct, pt;
};

static inline int
fz_objs_setup(struct fz_env *e, struct fz_objs *o)
{
	struct spinnic_ctrl_msg m;

	memset(&m, 0, sizeof(m));
	m.u.ni.options = SPINNIC_PTL_NI_MATCHING | SPINNIC_PTL_NI_PHYSICAL;
	if (fz_ctrl(e, SPINNIC_CTRL_NI_INIT, &m) != 0)
		return -1;
	o->ni = m.u.ni.ni;
	memset(&m, 0, sizeof(m));
	m.u.eq.ni = o->ni;
	m.u.eq.ring_off = FZ_EQ_OFF;
	m.u.eq.count = FZ_EQ_COUNT;
	if (fz_ctrl(e, SPINNIC_CTRL_EQ_ALLOC, &m) != 0)
		return -1;
	o->eq = m.u.eq.eq;
	memset(&m, 0, sizeof(m));
	m.u.ct.ni = o->ni;
	m.u.ct.ct_off = FZ_CT_OFF;
	if (fz_ctrl(e, SPINNIC_CTRL_CT_ALLOC, &m) != 0)
		return -1;
	o->ct = m.u.ct.ct;
	memset(&m, 0, sizeof(m));
	m.u.pt.ni = o->ni;
	m.u.pt.eq = o->eq;
	m.u.pt.pt_index = SPINNIC_PTL_PT_ANY;
	if (fz_ctrl(e, SPINNIC_CTRL_PT_ALLOC, &m) != 0)
		return -1;
	o->pt = m.u.pt.pt_index;
	return 0;
}

/* Two entries ring commands may name (ME_APPEND, ME_UNLINK): me_p[0]
 * reserved for a triggered append (SPINNIC_CTRL_F_ME_RESERVE), me_p[1]
 * linked. @return 0 or -1 */
static inline int
fz_me_setup(struct fz_env *e, const struct fz_objs *o, uint32_t *me_p)
{
	struct spinnic_ctrl_msg m;
	unsigned k;

	for (k = 0; k < 2; k++) {
		memset(&m, 0, sizeof(m));
		m.flags = k == 0 ? SPINNIC_CTRL_F_ME_RESERVE : 0;
		m.u.me.ni = o->ni;
		m.u.me.pt_index = o->pt;
		m.u.me.list = SPINNIC_PTL_PRIORITY_LIST;
		m.u.me.start = fz_addr(FZ_BUF_OFF);
		m.u.me.length = 4096;
		m.u.me.options = SPINNIC_PTL_ME_OP_PUT;
		m.u.me.ct = o->ct;
		m.u.me.uid = SPINNIC_PTL_UID_ANY;
		m.u.me.ctx = SPINNIC_HANDLE_NONE;
		m.u.me.match_id.nid = SPINNIC_PTL_NID_ANY;
		m.u.me.match_id.pid = SPINNIC_PTL_PID_ANY;
		if (fz_ctrl(e, SPINNIC_CTRL_ME_APPEND, &m) != 0)
			return -1;
		me_p[k] = m.u.me.me;
	}
	return 0;
}

/* keep the client's EQ from filling: the consumer side, untrusting */
static inline void
fz_eq_drain(struct fz_env *e, uint64_t off)
{
	struct spinnic_eq *q = (struct spinnic_eq *)(e->region + off);

	q->tail = q->head;
}

#endif
