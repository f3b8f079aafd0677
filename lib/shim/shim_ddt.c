/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Typed receives (spin.h, DESIGN §7, paper 000 §3.2.6): a committed ddt
 * type is prepared once per (NI, count) — strategy chosen, handler
 * arguments, checkpoints or iovec list built in host memory — and
 * uploaded to NIC memory at its first receive. NIC memory short: release
 * least recently used prepared types that no posted receive uses and
 * retry; still short: receive into a contiguous staging buffer and unpack
 * on the host at completion. Completion is an explicit call on the
 * receive's event (spin_typed_recv_complete()), so event delivery
 * (shim_eq.c) stays untouched and the unpack runs on the thread that
 * consumed the event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddt.h"
#include "shim_internal.h"
#include "spin_ddt_args.h"
#include "spin_handler_args.h"

/* HPUs assumed by HPU-local and the checkpoint model when spinnic does not
 * say (it does not tell clients yet): spinnic's default --hpus. */
#define TYPE_HPUS_DEFAULT 2u
/* Line rate the checkpoint model assumes for T_pkt (bits/s). */
#define TYPE_LINE_BPS 100e9
/* Checkpoints travel in the context arguments (spinnic takes at most
 * 1 MiB of them): the model gets at most this much NIC memory. */
#define TYPE_CKPT_MEM_MAX (768u << 10)

/* Largest argument block spinnic installs (CTX_ARGS_MAX of
 * app/spinnic/ctrl.c): a larger one (huge indexed-block displacement
 * lists, checkpoints) cannot be offloaded at all. */
#define TYPE_ARGS_MAX (1u << 20)

#define RECV_MAGIC 0x54524356u /* "TRCV" */

struct spin_type_offload {
	struct spin_type_offload *prev, *next; /* LRU, most recent first */
	ptl_handle_ni_t ni;
	struct ddt_type *t;
	int64_t count;
	enum spin_type_strategy strat;
	int64_t size;              /* packed bytes of count elements */
	int64_t lo;                /* window = buf + lo ... */
	uint64_t span;             /* ... for span bytes */
	/* what the NIC needs, kept to upload again after an eviction */
	const char *family;
	void *args;
	size_t args_len;
	void *list;                /* iovec entries (blob) */
	size_t list_len;
	struct spin_ddt_sched sched;
	/* NIC side */
	int loaded;
	spin_handle_ctx_t ctx;
	spin_handle_nicmem_t blob;
	uint64_t nic_bytes;
	uint32_t posted;           /* receives posted and not completed */
};

struct spin_typed_recv {
	uint32_t magic;
	enum spin_type_strategy strat; /* HOST after a fallback */
	struct spin_type_offload *off;
	ptl_handle_me_t me;
	uint8_t *buf;              /* MPI buffer origin */
	uint8_t *stage;            /* HOST: staging buffer */
	int stage_region;          /* stage from spin_host_alloc() */
	void *user_ptr;
};

static pthread_mutex_t type_lock = PTHREAD_MUTEX_INITIALIZER;
static struct spin_type_offload *lru_head;
static struct spin_type_stats type_st;

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

/* SPINNIC_DDT_STRATEGY: @return the strategy, AUTO when unset, or -EINVAL */
static int
strategy_from_env(void)
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
 * even that fits the model's memory (the upload then decides). */
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

/* Build the handler arguments (and list) of o->strat. @return PTL_* */
static int
offload_build(struct spin_type_offload *o, const struct ddt_class_info *ci)
{
	int64_t origin = -o->lo;
	ssize_t need;

	switch (o->strat) {
	case SPIN_TYPE_CONTIG:
	case SPIN_TYPE_HOST:
		return PTL_OK;
	case SPIN_TYPE_SPECIALIZED:
		if (ci->cls == DDT_CLASS_VECTOR ||
		    ci->cls == DDT_CLASS_CONTIG) {
			o->family = "ddt_vector";
			o->args_len = sizeof(struct spin_vec_args);
			o->args = calloc(1, o->args_len);
			if (o->args == NULL)
				return PTL_NO_SPACE;
			if (spin_ddt_vec_args(o->t, o->count, origin,
					      o->args) != 0)
				return PTL_ARG_INVALID;
			return PTL_OK;
		}
		if (ci->cls != DDT_CLASS_INDEXED_BLOCK) {
			SHIM_DBG("specialized: no handler for the %s class",
				 ddt_class_name(ci->cls));
			return PTL_ARG_INVALID;
		}
		o->family = "ddt_iblock";
		need = spin_ddt_iblock_args(o->t, o->count, origin, NULL, 0);
		if (need <= 0)
			return PTL_ARG_INVALID;
		o->args = malloc((size_t)need);
		if (o->args == NULL)
			return PTL_NO_SPACE;
		o->args_len = (size_t)need;
		if (spin_ddt_iblock_args(o->t, o->count, origin, o->args,
					 o->args_len) != need)
			return PTL_ARG_INVALID;
		return PTL_OK;
	case SPIN_TYPE_IOVEC: {
		struct spin_iovec_args a;

		o->family = "ddt_iovec";
		need = spin_ddt_iovec_args(o->t, o->count, origin, 0, &a,
					   NULL, 0);
		if (need < 0)
			return need == -ENOMEM ? PTL_NO_SPACE : PTL_ARG_INVALID;
		o->list = malloc(need > 0 ? (size_t)need : 1);
		o->args = malloc(sizeof(a));
		if (o->list == NULL || o->args == NULL)
			return PTL_NO_SPACE;
		o->list_len = (size_t)need;
		o->args_len = sizeof(a);
		if (spin_ddt_iovec_args(o->t, o->count, origin, 0, o->args,
					o->list, o->list_len) != need)
			return PTL_ARG_INVALID;
		return PTL_OK;
	}
	case SPIN_TYPE_HPU_LOCAL:
	case SPIN_TYPE_RO_CP:
	case SPIN_TYPE_RW_CP: {
		struct spin_ddt_plan plan;
		uint32_t hpus = type_hpus();

		memset(&plan, 0, sizeof(plan));
		plan.strategy = o->strat == SPIN_TYPE_HPU_LOCAL ?
			SPIN_DDT_HPU_LOCAL : o->strat == SPIN_TYPE_RO_CP ?
			SPIN_DDT_RO_CP : SPIN_DDT_RW_CP;
		plan.nhpu = hpus;
		plan.pkt_payload = shim_g.payload_size;
		plan.origin = origin;
		plan.stats_off = SPIN_DDT_STATS_NONE;
		if (plan.strategy != SPIN_DDT_HPU_LOCAL) {
			if (plan.pkt_payload == 0)
				return PTL_FAIL;
			plan.interval = ckpt_interval(o, plan.pkt_payload,
						      hpus);
			if (plan.interval <= 0)
				return plan.interval == -ENOMEM ?
					PTL_NO_SPACE : PTL_ARG_INVALID;
		}
		o->family = "ddt_general";
		need = spin_ddt_general_args(o->t, o->count, &plan, NULL, 0,
					     &o->sched);
		if (need <= 0)
			return need == -ENOMEM ? PTL_NO_SPACE : PTL_ARG_INVALID;
		o->args = aligned_alloc(8, ((size_t)need + 7) & ~(size_t)7);
		if (o->args == NULL)
			return PTL_NO_SPACE;
		o->args_len = (size_t)need;
		if (spin_ddt_general_args(o->t, o->count, &plan, o->args,
					  o->args_len, &o->sched) != need)
			return PTL_ARG_INVALID;
		return PTL_OK;
	}
	default:
		return PTL_ARG_INVALID;
	}
}

static void
offload_destroy(struct spin_type_offload *o)
{
	free(o->args);
	free(o->list);
	ddt_free(o->t);
	free(o);
}

int
spin_type_offload(ptl_handle_ni_t ni_handle, const struct ddt_type *t,
		  int64_t count, enum spin_type_strategy strategy,
		  struct spin_type_offload **off_p)
{
	struct spin_type_offload *o;
	struct ddt_class_info ci;
	struct shim_ni *ni;
	int64_t size, ext, tlb, text, lo, hi, sh = 0;
	int strat = strategy, rc;

	SHIM_ENTER();
	ni = shim_to_ni(ni_handle, NULL);
	if (ni == NULL || t == NULL || off_p == NULL || count < 0 ||
	    (unsigned)strategy >= SPIN_TYPE_COUNT ||
	    (ni->options & PTL_NI_NO_MATCHING) || !ddt_is_committed(t))
		return PTL_ARG_INVALID;
	size = ddt_size(t);
	ext = ddt_extent(t);
	/* the window holds the data (MPICH's true bounds may reach past) */
	tlb = ddt_data_lb(t);
	text = ddt_data_extent(t);
	/* lib/ddt bounds offsets by 2^61 at commit; count elements too */
	if (__builtin_mul_overflow(size, count, &size) ||
	    (count > 0 && __builtin_mul_overflow(ext, count - 1, &sh)) ||
	    size > ((int64_t)1 << 61))
		return PTL_ARG_INVALID;
	lo = tlb + (sh < 0 ? sh : 0);
	hi = tlb + text + (sh > 0 ? sh : 0);
	if (lo < -((int64_t)1 << 61) || hi > ((int64_t)1 << 61))
		return PTL_ARG_INVALID;
	if (strat == SPIN_TYPE_AUTO) {
		strat = strategy_from_env();
		if (strat < 0)
			return PTL_ARG_INVALID;
	}
	if (size == 0) {
		memset(&ci, 0, sizeof(ci));
		ci.cls = DDT_CLASS_CONTIG;
	} else {
		rc = ddt_classify(t, count, &ci);
		if (rc != 0)
			return rc == -ENOMEM ? PTL_NO_SPACE : PTL_ARG_INVALID;
	}
	if (strat == SPIN_TYPE_AUTO) {
		switch (ci.cls) {
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
	} else if (strat == SPIN_TYPE_CONTIG && ci.cls != DDT_CLASS_CONTIG) {
		return PTL_ARG_INVALID;
	}
	/* an empty message needs no handler whatever was asked */
	if (size == 0 && strat != SPIN_TYPE_HOST)
		strat = SPIN_TYPE_CONTIG;

	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return PTL_NO_SPACE;
	o->ni = ni_handle;
	o->t = ddt_ref((struct ddt_type *)(uintptr_t)t);
	o->count = count;
	o->strat = (enum spin_type_strategy)strat;
	o->size = size;
	if (strat == SPIN_TYPE_CONTIG) {
		o->lo = size == 0 ? 0 : ci.first_off;
		o->span = (uint64_t)size;
	} else {
		o->lo = lo;
		o->span = (uint64_t)(hi - lo);
	}
	rc = offload_build(o, &ci);
	if (rc != PTL_OK) {
		offload_destroy(o);
		return rc;
	}
	pthread_mutex_lock(&type_lock);
	o->next = lru_head;
	if (lru_head != NULL)
		lru_head->prev = o;
	lru_head = o;
	pthread_mutex_unlock(&type_lock);
	*off_p = o;
	return PTL_OK;
}

enum spin_type_strategy
spin_type_offload_strategy(const struct spin_type_offload *off)
{
	return off->strat;
}

/* Give the NIC memory of o back (type_lock held). @return PTL_* */
static int
offload_unload(struct spin_type_offload *o)
{
	int rc;

	if (!o->loaded)
		return PTL_OK;
	rc = spin_ctx_free(o->ctx);
	if (rc == PTL_IN_USE)
		return rc;
	if (o->list_len > 0)
		spin_nicmem_free(o->blob);
	o->loaded = 0;
	type_st.nic_bytes -= o->nic_bytes;
	o->nic_bytes = 0;
	return PTL_OK;
}

/* Upload args (and list) of o (type_lock held). @return PTL_* */
static int
offload_load_once(struct spin_type_offload *o)
{
	struct spin_ctx_desc d;
	uint32_t id;
	int rc;

	if (o->list_len > 0) {
		rc = spin_nicmem_alloc(o->ni, o->list_len, &o->blob);
		if (rc != PTL_OK)
			return rc;
		rc = spin_nicmem_write(o->blob, 0, o->list, o->list_len);
		if (rc == PTL_OK)
			rc = spin_nicmem_id(o->blob, &id);
		if (rc != PTL_OK) {
			spin_nicmem_free(o->blob);
			return rc;
		}
		((struct spin_iovec_args *)o->args)->list = id;
	}
	memset(&d, 0, sizeof(d));
	d.family = o->family;
	d.args = o->args;
	d.args_len = o->args_len;
	d.policy = o->sched.blocked_rr ? SPIN_SCHED_BLOCKED_RR :
		SPIN_SCHED_DEFAULT;
	d.delta_p = o->sched.delta_p;
	d.nvhpu = o->sched.nvhpu;
	rc = spin_ctx_install(o->ni, &d, &o->ctx);
	if (rc != PTL_OK) {
		if (o->list_len > 0)
			spin_nicmem_free(o->blob);
		return rc;
	}
	o->loaded = 1;
	o->nic_bytes = o->args_len + o->list_len;
	type_st.nic_bytes += o->nic_bytes;
	type_st.uploads++;
	return PTL_OK;
}

/* Upload o, evicting least recently used idle types while NIC memory is
 * short (type_lock held). @return PTL_OK; PTL_NO_SPACE nothing left to
 * evict; another error of the upload */
static int
offload_load(struct spin_type_offload *o)
{
	struct spin_type_offload *v;
	int rc;

	if (o->args_len > TYPE_ARGS_MAX)
		return PTL_NO_SPACE;
	for (;;) {
		rc = offload_load_once(o);
		if (rc != PTL_NO_SPACE)
			return rc;
		/* more than the whole NIC memory: evicting cannot help */
		if (shim_g.nic_mem_total > 0 &&
		    o->args_len + o->list_len > shim_g.nic_mem_total)
			return PTL_NO_SPACE;
		/* the least recently used idle one of this NI: the tail end */
		for (v = lru_head; v != NULL && v->next != NULL; v = v->next)
			;
		for (; v != NULL; v = v->prev)
			if (v != o && v->loaded && v->posted == 0 &&
			    v->ni == o->ni && offload_unload(v) == PTL_OK)
				break;
		if (v == NULL)
			return PTL_NO_SPACE;
		type_st.evictions++;
		SHIM_DBG("NIC memory short: released a %s type of %llu bytes",
			 strat_names[v->strat],
			 (unsigned long long)(v->args_len + v->list_len));
	}
}

int
spin_type_offload_free(struct spin_type_offload *off)
{
	if (off == NULL)
		return PTL_OK;
	pthread_mutex_lock(&type_lock);
	if (off->posted != 0) {
		pthread_mutex_unlock(&type_lock);
		return PTL_IN_USE;
	}
	/* a context the NIC still holds (an entry it has not let go of)
	 * goes with the client at detach */
	if (offload_unload(off) != PTL_OK) {
		type_st.nic_bytes -= off->nic_bytes;
		off->loaded = 0;
	}
	if (off->prev != NULL)
		off->prev->next = off->next;
	else
		lru_head = off->next;
	if (off->next != NULL)
		off->next->prev = off->prev;
	pthread_mutex_unlock(&type_lock);
	offload_destroy(off);
	return PTL_OK;
}

/* Move o to the LRU head (type_lock held). */
static void
offload_touch(struct spin_type_offload *o)
{
	if (lru_head == o)
		return;
	o->prev->next = o->next;
	if (o->next != NULL)
		o->next->prev = o->prev;
	o->prev = NULL;
	o->next = lru_head;
	lru_head->prev = o;
	lru_head = o;
}

static void
recv_free(struct spin_typed_recv *r)
{
	if (r->stage_region)
		spin_host_free(r->stage);
	else
		free(r->stage);
	r->magic = 0;
	free(r);
}

/* Staging buffer of a host-based receive. @return PTL_* */
static int
recv_stage(struct spin_typed_recv *r, size_t size)
{
	if (size == 0)
		size = 1;
	r->stage = spin_host_alloc(size);
	if (r->stage != NULL) {
		r->stage_region = 1;
		return PTL_OK;
	}
	/* outside the region: still valid, through process_vm_writev */
	r->stage = malloc(size);
	return r->stage != NULL ? PTL_OK : PTL_NO_SPACE;
}

#define TYPED_BAD_OPTIONS (PTL_ME_OP_GET | PTL_ME_MANAGE_LOCAL | PTL_IOVEC | \
			   PTL_ME_EVENT_COMM_DISABLE | \
			   PTL_ME_EVENT_SUCCESS_DISABLE | \
			   PTL_ME_EVENT_OVER_DISABLE | \
			   PTL_ME_LOCAL_INC_UH_RLENGTH)

int
spin_me_append_typed(ptl_handle_ni_t ni_handle, ptl_pt_index_t pt_index,
		     const ptl_me_t *me, struct spin_type_offload *off,
		     void *buf, void *user_ptr, struct spin_typed_recv **r_p)
{
	struct spin_typed_recv *r;
	spin_handle_ctx_t ctx = SPIN_CTX_NONE;
	ptl_me_t e;
	int rc, nic;

	SHIM_ENTER();
	if (me == NULL || off == NULL || r_p == NULL || off->ni != ni_handle ||
	    (buf == NULL && off->size > 0) ||
	    (me->options & TYPED_BAD_OPTIONS))
		return PTL_ARG_INVALID;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return PTL_NO_SPACE;
	r->magic = RECV_MAGIC;
	r->off = off;
	r->buf = buf;
	r->user_ptr = user_ptr;
	r->strat = off->strat;
	e = *me;
	/* the receive is freed at completion: no event may follow it */
	e.options |= PTL_ME_OP_PUT | PTL_ME_USE_ONCE |
		PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_LINK_DISABLE;

	pthread_mutex_lock(&type_lock);
	offload_touch(off);
	nic = off->strat != SPIN_TYPE_HOST && off->strat != SPIN_TYPE_CONTIG;
	if (nic && !off->loaded) {
		rc = offload_load(off);
		if (rc == PTL_NO_SPACE) {
			r->strat = SPIN_TYPE_HOST;
			nic = 0;
		} else if (rc != PTL_OK) {
			pthread_mutex_unlock(&type_lock);
			free(r);
			return rc;
		}
	}
	if (nic)
		ctx = off->ctx;
	off->posted++;
	pthread_mutex_unlock(&type_lock);

	if (r->strat == SPIN_TYPE_HOST) {
		rc = recv_stage(r, (size_t)off->size);
		if (rc != PTL_OK)
			goto fail;
		e.start = r->stage;
		e.length = (ptl_size_t)off->size;
	} else {
		e.start = (uint8_t *)buf + off->lo;
		e.length = off->span;
	}
	rc = spin_me_append(ni_handle, pt_index, &e, PTL_PRIORITY_LIST, ctx,
			    r, &r->me);
	if (rc != PTL_OK)
		goto fail;
	pthread_mutex_lock(&type_lock);
	if (r->strat == SPIN_TYPE_HOST && off->strat == SPIN_TYPE_HOST)
		type_st.host++;
	else if (r->strat == SPIN_TYPE_HOST)
		type_st.fallbacks++;
	else
		type_st.offloaded++;
	pthread_mutex_unlock(&type_lock);
	*r_p = r;
	return PTL_OK;
fail:
	pthread_mutex_lock(&type_lock);
	off->posted--;
	pthread_mutex_unlock(&type_lock);
	recv_free(r);
	return rc;
}

/* Unpack the first len bytes of the stream at src into buf. @return 0 or
 * a negative errno */
static int
type_unpack(const struct spin_type_offload *o, const void *src,
	    uint64_t len, void *buf)
{
	struct ddt_segment *s;
	int rc;

	if (len == (uint64_t)o->size)
		return ddt_unpack(o->t, o->count, src, buf);
	s = ddt_segment_create(o->t, o->count);
	if (s == NULL)
		return -ENOMEM;
	rc = ddt_segment_unpack(s, 0, (int64_t)len, src, buf);
	ddt_segment_free(s);
	return rc;
}

static void
recv_done(struct spin_typed_recv *r)
{
	pthread_mutex_lock(&type_lock);
	r->off->posted--;
	pthread_mutex_unlock(&type_lock);
	recv_free(r);
}

int
spin_typed_recv_complete(struct spin_typed_recv *r, const ptl_event_t *ev,
			 void **user_ptr_p)
{
	const struct spin_type_offload *o;
	int rc = PTL_OK, urc = 0;

	if (r == NULL || ev == NULL || r->magic != RECV_MAGIC ||
	    ev->user_ptr != r ||
	    (ev->type != PTL_EVENT_PUT && ev->type != PTL_EVENT_PUT_OVERFLOW))
		return PTL_ARG_INVALID;
	o = r->off;
	if (user_ptr_p != NULL)
		*user_ptr_p = r->user_ptr;
	if (ev->ni_fail_type != PTL_NI_OK ||
	    ev->mlength > (ptl_size_t)o->size) {
		rc = PTL_FAIL;
	} else if (ev->type == PTL_EVENT_PUT_OVERFLOW) {
		/* unexpected: the data is where the overflow entry put it */
		urc = type_unpack(o, ev->start, ev->mlength, r->buf);
		pthread_mutex_lock(&type_lock);
		type_st.unexpected++;
		pthread_mutex_unlock(&type_lock);
	} else if (r->strat == SPIN_TYPE_HOST) {
		urc = type_unpack(o, r->stage, ev->mlength, r->buf);
		pthread_mutex_lock(&type_lock);
		type_st.host_unpacks++;
		pthread_mutex_unlock(&type_lock);
	}
	if (urc != 0)
		rc = PTL_FAIL;
	if (rc != PTL_OK) {
		pthread_mutex_lock(&type_lock);
		type_st.errors++;
		pthread_mutex_unlock(&type_lock);
	}
	recv_done(r);
	return rc;
}

int
spin_typed_recv_cancel(struct spin_typed_recv *r)
{
	int rc;

	if (r == NULL || r->magic != RECV_MAGIC)
		return PTL_ARG_INVALID;
	rc = PtlMEUnlink(r->me);
	if (rc == PTL_ARG_INVALID)
		return PTL_IN_USE; /* the NIC unlinked it: it matched */
	if (rc != PTL_OK)
		return rc;
	recv_done(r);
	return PTL_OK;
}

enum spin_type_strategy
spin_typed_recv_strategy(const struct spin_typed_recv *r)
{
	return r->strat;
}

int
spin_type_unpack(const struct spin_type_offload *off, const void *src,
		 size_t len, void *buf)
{
	if (off == NULL || (len > 0 && (src == NULL || buf == NULL)) ||
	    len > (uint64_t)off->size)
		return PTL_ARG_INVALID;
	if (type_unpack(off, src, len, buf) != 0)
		return PTL_ARG_INVALID;
	pthread_mutex_lock(&type_lock);
	type_st.unexpected++;
	pthread_mutex_unlock(&type_lock);
	return PTL_OK;
}

void
spin_type_stats(struct spin_type_stats *s_p)
{
	pthread_mutex_lock(&type_lock);
	*s_p = type_st;
	pthread_mutex_unlock(&type_lock);
}
