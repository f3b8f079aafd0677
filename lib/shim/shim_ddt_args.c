/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives: the handler arguments of a prepared type, per strategy
 * ("ddt_vector", "ddt_iblock", "ddt_iovec" and its block list,
 * "ddt_general" with Δr from paper 000's checkpoint model), built in host
 * memory once per spin_type_offload(). Called by shim_ddt_type.c; the
 * upload is shim_ddt_nic.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim_ddt.h"
#include "spin_handler_args.h"

/* HPUs assumed by HPU-local and the checkpoint model when spinnic does not
 * say (it does not tell clients yet): spinnic's default --hpus. */
#define TYPE_HPUS_DEFAULT 2u
/* Line rate the checkpoint model assumes for T_pkt (bits/s). */
#define TYPE_LINE_BPS 100e9
/* Checkpoints travel in the context arguments (spinnic takes at most
 * 1 MiB of them): the model gets at most this much NIC memory. */
#define TYPE_CKPT_MEM_MAX (768u << 10)

static uint32_t
type_hpus(void)
{
	const char *v = getenv("SPINNIC_DDT_HPUS");
	char *end;
	unsigned long n;

	if (v == NULL || *v == '\0')
		return TYPE_HPUS_DEFAULT;
	n = strtoul(v, &end, 10);
	if (*end != '\0' || n == 0 || n > 64) {
		SHIM_ERR("SPINNIC_DDT_HPUS=%s: expected 1..64, using %u", v,
			 TYPE_HPUS_DEFAULT);
		return TYPE_HPUS_DEFAULT;
	}
	return (uint32_t)n;
}

/* Δr of RO-CP/RW-CP: paper 000's model (ε = 0.2, packets at line rate,
 * handlers as fast as the packets); one checkpoint per message when not
 * even that fits the model's memory (the upload then decides).
 * @return Δr, or a negative errno */
static int64_t
ckpt_interval(const struct spin_type_offload *o, uint32_t k, uint32_t hpus)
{
	struct ddt_ckpt_model m;
	struct ddt_ckpt_set *cs;
	int64_t iv;

	cs = ddt_ckpt_create(o->t, o->count, o->size);
	if (cs == NULL)
		return -ENOMEM;
	memset(&m, 0, sizeof(m));
	m.epsilon = 0.2;
	m.nic_mem = shim_g.nic_mem_total / 8;
	if (m.nic_mem == 0 || m.nic_mem > TYPE_CKPT_MEM_MAX)
		m.nic_mem = TYPE_CKPT_MEM_MAX;
	m.hpus = hpus;
	m.pkt_payload = k;
	m.t_pkt = (double)k * 8 / TYPE_LINE_BPS;
	m.t_ph = m.t_pkt;
	m.ckpt_size = ddt_ckpt_size(cs);
	m.msg_size = o->size;
	ddt_ckpt_free(cs);
	iv = ddt_ckpt_select_interval(&m);
	if (iv == -ENOSPC)
		iv = ((o->size + k - 1) / k) * k;
	return iv;
}

/* lib/ddt's refusals of a layout are the caller's invalid argument; its
 * -ENOMEM stays (the decision where lib/ddt's errors enter the shim). */
static int
ddt_err(int64_t rc)
{
	return rc == -ENOMEM ? -ENOMEM : -EINVAL;
}

static int
args_vector(struct spin_type_offload *o, int64_t origin)
{
	o->family = "ddt_vector";
	o->args_len = sizeof(struct spin_vec_args);
	o->args = calloc(1, o->args_len);
	if (o->args == NULL)
		return -ENOMEM;
	if (spin_ddt_vec_args(o->t, o->count, origin, o->args) != 0)
		return -EINVAL;
	return 0;
}

static int
args_iblock(struct spin_type_offload *o, int64_t origin)
{
	ssize_t need;

	o->family = "ddt_iblock";
	need = spin_ddt_iblock_args(o->t, o->count, origin, NULL, 0);
	if (need <= 0)
		return -EINVAL;
	o->args = malloc((size_t)need);
	if (o->args == NULL)
		return -ENOMEM;
	o->args_len = (size_t)need;
	if (spin_ddt_iblock_args(o->t, o->count, origin, o->args,
				 o->args_len) != need)
		return -EINVAL;
	return 0;
}

static int
args_specialized(struct spin_type_offload *o, int64_t origin,
		 const struct ddt_class_info *ci)
{
	if (ci->cls == DDT_CLASS_VECTOR || ci->cls == DDT_CLASS_CONTIG)
		return args_vector(o, origin);
	if (ci->cls == DDT_CLASS_INDEXED_BLOCK)
		return args_iblock(o, origin);
	SHIM_DBG("specialized: no handler for the %s class",
		 ddt_class_name(ci->cls));
	return -EINVAL;
}

static int
args_iovec(struct spin_type_offload *o, int64_t origin)
{
	struct spin_iovec_args a;
	ssize_t need;

	o->family = "ddt_iovec";
	need = spin_ddt_iovec_args(o->t, o->count, origin, 0, &a, NULL, 0);
	if (need < 0)
		return ddt_err(need);
	o->list = malloc(need > 0 ? (size_t)need : 1);
	o->args = malloc(sizeof(a));
	if (o->list == NULL || o->args == NULL)
		return -ENOMEM;
	o->list_len = (size_t)need;
	o->args_len = sizeof(a);
	if (spin_ddt_iovec_args(o->t, o->count, origin, 0, o->args,
				o->list, o->list_len) != need)
		return -EINVAL;
	return 0;
}

static int
args_general(struct spin_type_offload *o, int64_t origin)
{
	struct spin_ddt_plan plan;
	uint32_t hpus = type_hpus();
	ssize_t need;

	memset(&plan, 0, sizeof(plan));
	plan.strategy = o->strat == SPIN_TYPE_HPU_LOCAL ? SPIN_DDT_HPU_LOCAL :
		o->strat == SPIN_TYPE_RO_CP ? SPIN_DDT_RO_CP : SPIN_DDT_RW_CP;
	plan.nhpu = hpus;
	plan.pkt_payload = shim_g.payload_size;
	plan.origin = origin;
	plan.stats_off = SPIN_DDT_STATS_NONE;
	/* the type's compiled form: handlers place each packet through it,
	 * resuming without segments or checkpoints (lib/ddt/prog.c) */
	plan.flags = SPIN_DDT_F_PROG;
	if (plan.strategy != SPIN_DDT_HPU_LOCAL) {
		if (plan.pkt_payload == 0)
			return -EIO;
		plan.interval = ckpt_interval(o, plan.pkt_payload, hpus);
		if (plan.interval <= 0)
			return ddt_err(plan.interval);
	}
	o->family = "ddt_general";
	need = spin_ddt_general_args(o->t, o->count, &plan, NULL, 0,
				     &o->sched);
	if (need > (ssize_t)TYPE_ARGS_MAX) {
		/* the form does not fit NIC memory's share: segments alone */
		plan.flags &= ~SPIN_DDT_F_PROG;
		need = spin_ddt_general_args(o->t, o->count, &plan, NULL, 0,
					     &o->sched);
	}
	if (need <= 0)
		return ddt_err(need);
	o->args = aligned_alloc(8, ((size_t)need + 7) & ~(size_t)7);
	if (o->args == NULL)
		return -ENOMEM;
	o->args_len = (size_t)need;
	if (spin_ddt_general_args(o->t, o->count, &plan, o->args,
				  o->args_len, &o->sched) != need)
		return -EINVAL;
	return 0;
}

int
shim_type_args_build(struct spin_type_offload *o,
		     const struct ddt_class_info *ci)
{
	int64_t origin = -o->lo;

	switch (o->strat) {
	case SPIN_TYPE_CONTIG:
	case SPIN_TYPE_HOST:
		return 0;
	case SPIN_TYPE_SPECIALIZED:
		return args_specialized(o, origin, ci);
	case SPIN_TYPE_IOVEC:
		return args_iovec(o, origin);
	case SPIN_TYPE_HPU_LOCAL:
	case SPIN_TYPE_RO_CP:
	case SPIN_TYPE_RW_CP:
		return args_general(o, origin);
	default:
		return -EINVAL;
	}
}
