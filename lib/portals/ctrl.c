/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-message dispatch: every request validated, status as PTL_*. */
#include "ptl_internal.h"

int
ptl_nic_ctrl(struct ptl_nic *nic, struct ptl_client *c,
	     const struct spinnic_ctrl_msg *req, struct spinnic_ctrl_msg *rep)
{
	struct spinnic_ctrl_msg m;
	int st;

	switch (req->op) {
	case SPINNIC_CTRL_ATTACH:
	case SPINNIC_CTRL_DETACH:
	case SPINNIC_CTRL_CTX_INSTALL:
	case SPINNIC_CTRL_CTX_FREE:
	case SPINNIC_CTRL_NICMEM_ALLOC:
	case SPINNIC_CTRL_NICMEM_WRITE:
	case SPINNIC_CTRL_NICMEM_FREE:
		return -EOPNOTSUPP;
	default:
		break;
	}
	/* work on a private copy; req and rep may alias */
	memcpy(&m, req, sizeof(m));
	if (m.version != SPINNIC_ABI_VERSION || c == NULL || c->nic != nic) {
		st = SPINNIC_PTL_ARG_INVALID;
		goto out;
	}
	ptl_lock(&nic->lock);
	if (!ptl_client_is_alive(c)) {
		st = SPINNIC_PTL_NO_INIT;
	} else {
		switch (m.op) {
		case SPINNIC_CTRL_NI_INIT:
		case SPINNIC_CTRL_NI_FINI:
			st = ptl_ctrl_ni(nic, c, m.op, &m.u.ni);
			break;
		case SPINNIC_CTRL_PT_ALLOC:
		case SPINNIC_CTRL_PT_FREE:
		case SPINNIC_CTRL_PT_ENABLE:
		case SPINNIC_CTRL_PT_DISABLE:
			st = ptl_ctrl_pt(nic, c, m.op, &m.u.pt);
			break;
		case SPINNIC_CTRL_EQ_ALLOC:
		case SPINNIC_CTRL_EQ_FREE:
			st = ptl_ctrl_eq(nic, c, m.op, &m.u.eq);
			break;
		case SPINNIC_CTRL_CT_ALLOC:
		case SPINNIC_CTRL_CT_FREE:
			st = ptl_ctrl_ct(nic, c, m.op, &m.u.ct);
			break;
		case SPINNIC_CTRL_MD_BIND:
		case SPINNIC_CTRL_MD_RELEASE:
			st = ptl_ctrl_md(nic, c, m.op, &m.u.md);
			break;
		case SPINNIC_CTRL_NI_STATUS:
			st = ptl_ctrl_status(c, &m.u.status);
			break;
		case SPINNIC_CTRL_AA_LOG_CREATE:
		case SPINNIC_CTRL_AA_LOG_FREE:
		case SPINNIC_CTRL_AA_ASSOC:
			st = ptl_ctrl_aa(nic, c, m.op, &m.u.aa);
			break;
		case SPINNIC_CTRL_ME_APPEND:
		case SPINNIC_CTRL_ME_UNLINK:
		case SPINNIC_CTRL_ME_SEARCH:
			st = ptl_ctrl_me(nic, c, m.op, m.flags, &m.u.me);
			break;
		default:
			st = SPINNIC_PTL_ARG_INVALID;
			break;
		}
	}
	ptl_unlock(&nic->lock);
out:
	if (st == SPINNIC_PTL_OK) {
		PTL_STAT(nic, ctrl_ok);
	} else {
		PTL_STAT(nic, bad_ctrl);
		PTL_DBG("client pid %u: control op %u refused: status %d",
			c ? c->pid : 0, m.op, st);
	}
	m.status = st;
	memcpy(rep, &m, sizeof(m));
	return 0;
}
