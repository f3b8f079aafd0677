/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives (spin.h, DESIGN §7, paper 000 §3.2.6): preparing a
 * committed ddt type for one (NI, count) — its window in the receive
 * buffer, its class, the strategy (forced, SPINNIC_DDT_STRATEGY, or by
 * class) — and releasing it. The arguments are built by shim_ddt_args.c,
 * uploaded by shim_ddt_nic.c at the first receive (shim_ddt_recv.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim_ddt.h"

/* lib/ddt bounds offsets by 2^61 at commit */
#define TYPE_OFF_MAX ((int64_t)1 << 61)

static const char *const strat_names[SPIN_TYPE_COUNT] = {
	[SPIN_TYPE_AUTO] = "auto",
	[SPIN_TYPE_HOST] = "host",
	[SPIN_TYPE_IOVEC] = "iovec",
	[SPIN_TYPE_SPECIALIZED] = "specialized",
	[SPIN_TYPE_HPU_LOCAL] = "hpu-local",
	[SPIN_TYPE_RO_CP] = "ro-cp",
	[SPIN_TYPE_RW_CP] = "rw-cp",
	[SPIN_TYPE_CONTIG] = "contig",
};

const char *
spin_type_strategy_name(enum spin_type_strategy s)
{
	return (unsigned)s < SPIN_TYPE_COUNT ? strat_names[s] : "unknown";
}

int
shim_type_strategy_env(void)
{
	const char *v = getenv("SPINNIC_DDT_STRATEGY");
	unsigned i;

	if (v == NULL || *v == '\0')
		return SPIN_TYPE_AUTO;
	for (i = SPIN_TYPE_HOST; i <= SPIN_TYPE_RW_CP; i++)
		if (strcmp(v, strat_names[i]) == 0)
			return (int)i;
	SHIM_ERR("SPINNIC_DDT_STRATEGY=%s: expected host, iovec, specialized, "
		 "hpu-local, ro-cp or rw-cp", v);
	return -EINVAL;
}

/* Packed size and data window [lo, hi) of count elements of t.
 * @return 0 or -EINVAL (too large) */
static int
type_window(const struct ddt_type *t, int64_t count, int64_t *size_p,
	    int64_t *lo_p, int64_t *hi_p)
{
	int64_t size = ddt_size(t), ext = ddt_extent(t), sh = 0;
	/* the window holds the data (MPICH's true bounds may reach past) */
	int64_t tlb = ddt_data_lb(t), text = ddt_data_extent(t);

	if (__builtin_mul_overflow(size, count, &size) ||
	    (count > 0 && __builtin_mul_overflow(ext, count - 1, &sh)) ||
	    size > TYPE_OFF_MAX)
		return -EINVAL;
	*lo_p = tlb + (sh < 0 ? sh : 0);
	*hi_p = tlb + text + (sh > 0 ? sh : 0);
	if (*lo_p < -TYPE_OFF_MAX || *hi_p > TYPE_OFF_MAX)
		return -EINVAL;
	*size_p = size;
	return 0;
}

/* The strategy of a layout: @p strat forced, else the environment's, else
 * by class. @return the strategy or -EINVAL */
static int
strategy_choose(int strat, const struct ddt_class_info *ci, int64_t size)
{
	if (strat == SPIN_TYPE_AUTO) {
		strat = shim_type_strategy_env();
		if (strat < 0)
			return strat;
	}
	if (strat == SPIN_TYPE_AUTO) {
		switch (ci->cls) {
		case DDT_CLASS_CONTIG:
			strat = SPIN_TYPE_CONTIG;
			break;
		case DDT_CLASS_VECTOR:
		case DDT_CLASS_INDEXED_BLOCK:
			strat = SPIN_TYPE_SPECIALIZED;
			break;
		default:
			strat = SPIN_TYPE_RW_CP;
			break;
		}
	} else if (strat == SPIN_TYPE_CONTIG && ci->cls != DDT_CLASS_CONTIG) {
		return -EINVAL;
	}
	/* an empty message needs no handler whatever was asked */
	if (size == 0 && strat != SPIN_TYPE_HOST)
		strat = SPIN_TYPE_CONTIG;
	return strat;
}

static void
type_destroy(struct spin_type_offload *o)
{
	free(o->args);
	free(o->list);
	ddt_free(o->t);
	free(o);
}

int
shim_type_prepare(ptl_handle_ni_t ni_handle, const struct ddt_type *t,
	     int64_t count, int strat, struct spin_type_offload **off_p)
{
	struct spin_type_offload *o;
	struct ddt_class_info ci;
	int64_t size, lo, hi;
	int rc;

	rc = type_window(t, count, &size, &lo, &hi);
	if (rc != 0)
		return rc;
	memset(&ci, 0, sizeof(ci));
	ci.cls = DDT_CLASS_CONTIG;
	/* lib/ddt's refusal is an invalid type; its -ENOMEM stays */
	if (size > 0 && (rc = ddt_classify(t, count, &ci)) != 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	strat = strategy_choose(strat, &ci, size);
	if (strat < 0)
		return strat;
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	o->ni = ni_handle;
	o->t = ddt_ref((struct ddt_type *)(uintptr_t)t);
	o->count = count;
	o->strat = (enum spin_type_strategy)strat;
	o->size = size;
	o->lo = strat != SPIN_TYPE_CONTIG ? lo : size == 0 ? 0 : ci.first_off;
	o->span = strat != SPIN_TYPE_CONTIG ? (uint64_t)(hi - lo) :
		(uint64_t)size;
	rc = shim_type_args_build(o, &ci);
	if (rc != 0) {
		type_destroy(o);
		return rc;
	}
	/* only what the NIC holds competes for NIC memory: a host or
	 * contiguous type is never loaded, and preparing one takes no lock */
	if (strat != SPIN_TYPE_HOST && strat != SPIN_TYPE_CONTIG) {
		pthread_mutex_lock(&shim_type_lock);
		shim_type_lru_add(o);
		o->on_lru = true;
		pthread_mutex_unlock(&shim_type_lock);
	}
	*off_p = o;
	return 0;
}

int
spin_type_offload(ptl_handle_ni_t ni_handle, const struct ddt_type *t,
		  int64_t count, enum spin_type_strategy strategy,
		  struct spin_type_offload **off_p)
{
	struct shim_ni *ni;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || t == NULL || off_p == NULL || count < 0 ||
	    (unsigned)strategy >= SPIN_TYPE_COUNT ||
	    (ni->options & PTL_NI_NO_MATCHING) || !ddt_is_committed(t))
		return PTL_ARG_INVALID;
	return shim_ptl(shim_type_prepare(ni_handle, t, count, (int)strategy,
				     off_p));
}

enum spin_type_strategy
spin_type_offload_strategy(const struct spin_type_offload *off)
{
	return off->strat;
}

int
spin_type_offload_free(struct spin_type_offload *off)
{
	if (off == NULL)
		return PTL_OK;
	pthread_mutex_lock(&shim_type_lock);
	if (__atomic_load_n(&off->posted, __ATOMIC_ACQUIRE) != 0) {
		pthread_mutex_unlock(&shim_type_lock);
		return PTL_IN_USE;
	}
	/* a context the NIC still holds (an entry it has not let go of)
	 * goes with the client at detach */
	if (shim_type_unload(off) != 0) {
		shim_type_st.nic_bytes -= off->nic_bytes;
		off->loaded = false;
	}
	if (off->on_lru)
		shim_type_lru_del(off);
	pthread_mutex_unlock(&shim_type_lock);
	type_destroy(off);
	return PTL_OK;
}
