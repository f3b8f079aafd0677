/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Schedules (cDAGs) compiled to Portals counters and triggered operations
 * (spin_coll.h; paper 002 §IV; doc/NOTES.md "lib/coll").
 *
 * Per vertex v: en[v], its enable counter, gets +1 from each finished
 * predecessor (or from the start counter for a source) plus what its
 * protocol adds (a credit or an RTR); D[v], its done counter, gets
 * done_per[v] per instance. Every triggered operation is (counter,
 * threshold t, period p): instance i fires it at t + i*p. The counters
 * only grow, so nothing is reset between instances.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spin.h>

#include "coll_internal.h"

enum vkind { V_SEND, V_RECV, V_COPY, V_REDUCE };

struct vtx {
	uint8_t kind;
	bool eager;
	bool accumulate;       /* send/recv: atomics into the receiver */
	void *buf;             /* send: source; recv, copy, reduce: target */
	const void *src;       /* copy, reduce: the input */
	size_t len;            /* bytes */
	unsigned peer;
	uint32_t tag;
	unsigned seq;
	ptl_op_t op;
	ptl_datatype_t type;
	unsigned indeg;
	int *succ;
	unsigned nsucc, capsucc;
	ptl_handle_ct_t en, done;
	ptl_size_t en_per, done_per;
	size_t sb_off;
};

/* enum TP_* and struct trig: coll_internal.h (coll_host.c reads them) */

struct spin_sched {
	spin_coll_comm_t *comm;
	struct vtx *v;
	unsigned nv, capv;
	struct trig *t;
	unsigned nt, capt;
	bool compiled;
	bool persistent;
	bool dynamic;           /* SPIN_SCHED_DYNAMIC: no compile barrier */
	bool running;
	bool sb_region;
	unsigned stag;
	ptl_handle_ct_t start, done;
	ptl_size_t nsinks;
	uint64_t inst;
	uint8_t *sb;
	size_t sb_len;
	ptl_handle_md_t sb_md;
	ptl_handle_ct_t *cts;
	unsigned ncts, capcts;
	ptl_handle_me_t *mes;
	unsigned nmes, capmes;
	ptl_handle_md_t *mds;
	unsigned nmds, capmds;
	void **owned;           /* coll_sched_alloc(): the region's, or
				   the heap's where the region is full */
	unsigned nowned, capowned;
	char dummy[8];
	bool host;              /* SPIN_SCHED_HOST: coll_host.c runs it */
	bool stage;             /* SPIN_SCHED_STAGE: sends' MDs staged */
	uint64_t ctl_fail0;     /* coll_ctl_failures() when it started */
	struct coll_host *hst;
	spin_batch_t *batch;    /* compile: the objects go here (spin.h),
				   unless SPINNIC_COLL_BATCH=0 */
	unsigned *bme;          /* ... and these records are entries */
	unsigned nbme, capbme;
};

/* ---- growing arrays ----------------------------------------------------- */

static int
grow(void **arr, unsigned *cap, unsigned n, size_t elt)
{
	void *p;
	unsigned c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, (size_t)c * elt);
	if (p == NULL)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static int
push_handle(ptl_handle_any_t **arr, unsigned *n, unsigned *cap,
	    ptl_handle_any_t h)
{
	if (grow((void **)arr, cap, *n, sizeof(**arr)) != 0)
		return -ENOMEM;
	(*arr)[(*n)++] = h;
	return 0;
}

static int
ptl_err_at(int rc, const char *what, int line)
{
	if (rc != PTL_OK && rc != PTL_NO_SPACE && rc != PTL_LIST_TOO_LONG)
		fprintf(stderr, "spin_coll: %s (coll_sched.c:%d): Portals "
			"error %d\n", what, line, rc);
	switch (rc) {
	case PTL_OK:
		return 0;
	case PTL_NO_SPACE:
	case PTL_LIST_TOO_LONG:
		return -ENOSPC;
	case PTL_ARG_INVALID:
		return -EINVAL;
	default:
		return -EIO;
	}
}

size_t
spin_coll_type_size(ptl_datatype_t type)
{
	static const unsigned char sz[PTL_DATATYPE_LAST] = {
		[PTL_INT8_T] = 1, [PTL_UINT8_T] = 1, [PTL_INT16_T] = 2,
		[PTL_UINT16_T] = 2, [PTL_INT32_T] = 4, [PTL_UINT32_T] = 4,
		[PTL_INT64_T] = 8, [PTL_UINT64_T] = 8, [PTL_FLOAT] = 4,
		[PTL_FLOAT_COMPLEX] = 8, [PTL_DOUBLE] = 8,
		[PTL_DOUBLE_COMPLEX] = 16,
		[PTL_LONG_DOUBLE] = sizeof(long double),
		[PTL_LONG_DOUBLE_COMPLEX] = 2 * sizeof(long double),
	};

	return (unsigned)type < PTL_DATATYPE_LAST ? sz[type] : 0;
}

#define ptl_err(rc) ptl_err_at((rc), __func__, __LINE__)

spin_coll_comm_t *
coll_sched_comm(spin_sched_t *s)
{
	return s->comm;
}

void
coll_sched_me(spin_sched_t *s, const struct trig *t, ptl_me_t *me)
{
	memset(me, 0, sizeof(*me));
	me->start = t->len > 0 ? t->me_start : s->dummy;
	me->length = t->len;
	me->ct_handle = t->ct;
	me->uid = PTL_UID_ANY;
	me->match_id.rank = PTL_RANK_ANY;
	me->match_bits = t->bits;
	me->options = PTL_ME_OP_PUT | (t->me_keep ? 0 : PTL_ME_USE_ONCE) |
		      PTL_ME_EVENT_CT_COMM |
		      PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		      PTL_ME_EVENT_UNLINK_DISABLE |
		      (t->me_ack ? 0 : PTL_ME_ACK_DISABLE);
}

int
coll_sched_keep_me(spin_sched_t *s, ptl_handle_me_t h)
{
	return push_handle(&s->mes, &s->nmes, &s->capmes, h);
}

/* ---- building ----------------------------------------------------------- */

int
spin_sched_create(spin_coll_comm_t *comm, spin_sched_t **s_p)
{
	spin_sched_t *s;

	if (comm == NULL || s_p == NULL)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->comm = comm;
	s->start = s->done = PTL_CT_NONE;
	s->sb_md = PTL_INVALID_HANDLE;
	comm->live_scheds++;
	*s_p = s;
	return 0;
}

static int
vtx_add(spin_sched_t *s, const struct vtx *v)
{
	if (s == NULL || s->compiled)
		return -EINVAL;
	if (s->nv >= (1u << 24) - 1)
		return -E2BIG;
	if (grow((void **)&s->v, &s->capv, s->nv, sizeof(*s->v)) != 0)
		return -ENOMEM;
	s->v[s->nv] = *v;
	s->v[s->nv].en = s->v[s->nv].done = PTL_CT_NONE;
	return (int)s->nv++;
}

int
spin_sched_send(spin_sched_t *s, const void *buf, size_t len, unsigned dst,
		uint32_t tag)
{
	if (s == NULL || dst >= s->comm->size || tag >= SPIN_COLL_TAG_MAX ||
	    (buf == NULL && len > 0))
		return -EINVAL;
	return vtx_add(s, &(struct vtx){ .kind = V_SEND, .buf = (void *)buf,
					 .len = len, .peer = dst, .tag = tag });
}

int
spin_sched_recv(spin_sched_t *s, void *buf, size_t len, unsigned src,
		uint32_t tag)
{
	if (s == NULL ||
	    (src >= s->comm->size && src != SPIN_SCHED_ANY_SOURCE) ||
	    (tag >= SPIN_COLL_TAG_MAX && tag != SPIN_SCHED_ANY_TAG) ||
	    (buf == NULL && len > 0))
		return -EINVAL;
	return vtx_add(s, &(struct vtx){ .kind = V_RECV, .buf = buf,
					 .len = len, .peer = src, .tag = tag });
}

int
spin_sched_copy(spin_sched_t *s, void *dst, const void *src, size_t len)
{
	if (s == NULL || (len > 0 && (dst == NULL || src == NULL)))
		return -EINVAL;
	if (len > 0 && (const uint8_t *)src < (uint8_t *)dst + len &&
	    (uint8_t *)dst < (const uint8_t *)src + len)
		return -EINVAL;
	return vtx_add(s, &(struct vtx){ .kind = V_COPY, .buf = dst,
					 .src = src, .len = len });
}

/* (op, type) pairs PtlAtomic() takes (notes-002_003 §3.4) */
bool
coll_atomic_ok(ptl_op_t op, ptl_datatype_t type)
{
	bool integer = type <= PTL_UINT64_T;
	bool complex = type == PTL_FLOAT_COMPLEX ||
		       type == PTL_DOUBLE_COMPLEX ||
		       type == PTL_LONG_DOUBLE_COMPLEX;

	if ((unsigned)type >= PTL_DATATYPE_LAST)
		return false;
	switch (op) {
	case PTL_MIN:
	case PTL_MAX:
		return !complex;
	case PTL_SUM:
	case PTL_PROD:
		return true;
	case PTL_LOR:
	case PTL_LAND:
	case PTL_BOR:
	case PTL_BAND:
	case PTL_LXOR:
	case PTL_BXOR:
		return integer;
	default:
		return false;
	}
}

int
spin_sched_reduce(spin_sched_t *s, void *acc, const void *in, size_t count,
		  ptl_op_t op, ptl_datatype_t type)
{
	size_t esz = spin_coll_type_size(type);

	if (s == NULL || !coll_atomic_ok(op, type) || esz == 0 ||
	    (count > 0 && (acc == NULL || in == NULL)) ||
	    count > SIZE_MAX / esz)
		return -EINVAL;
	return vtx_add(s, &(struct vtx){ .kind = V_REDUCE, .buf = acc,
					 .src = in, .len = count * esz,
					 .op = op, .type = type });
}

/* An accumulating send or receive (@p kind) of @p count elements */
static int
acc_add(spin_sched_t *s, enum vkind kind, void *buf, size_t count, ptl_op_t op,
	ptl_datatype_t type, unsigned peer, uint32_t tag)
{
	size_t esz = spin_coll_type_size(type);
	bool recv = kind == V_RECV;

	if (s == NULL || !coll_atomic_ok(op, type) || esz == 0 ||
	    (peer >= s->comm->size &&
	     !(recv && peer == SPIN_SCHED_ANY_SOURCE)) ||
	    (tag >= SPIN_COLL_TAG_MAX &&
	     !(recv && tag == SPIN_SCHED_ANY_TAG)) ||
	    (count > 0 && buf == NULL) || count > SIZE_MAX / esz)
		return -EINVAL;
	return vtx_add(s, &(struct vtx){ .kind = kind, .accumulate = true,
					 .buf = buf, .len = count * esz,
					 .peer = peer, .tag = tag, .op = op,
					 .type = type });
}

int
spin_sched_send_reduce(spin_sched_t *s, const void *in, size_t count,
		       ptl_op_t op, ptl_datatype_t type, unsigned dst,
		       uint32_t tag)
{
	return acc_add(s, V_SEND, (void *)in, count, op, type, dst, tag);
}

int
spin_sched_recv_reduce(spin_sched_t *s, void *acc, size_t count,
		       ptl_op_t op, ptl_datatype_t type, unsigned src,
		       uint32_t tag)
{
	return acc_add(s, V_RECV, acc, count, op, type, src, tag);
}

int
spin_sched_dep(spin_sched_t *s, int from, int to)
{
	struct vtx *f;

	if (s == NULL || s->compiled || from < 0 || to < 0 ||
	    (unsigned)from >= s->nv || (unsigned)to >= s->nv || from == to)
		return -EINVAL;
	f = &s->v[from];
	if (grow((void **)&f->succ, &f->capsucc, f->nsucc,
		 sizeof(*f->succ)) != 0)
		return -ENOMEM;
	f->succ[f->nsucc++] = to;
	s->v[to].indeg++;
	return 0;
}

uint64_t
spin_sched_instances(const spin_sched_t *s)
{
	return s->inst;
}

void *
coll_sched_alloc(spin_sched_t *s, size_t len)
{
	void *p;

	if (grow((void **)&s->owned, &s->capowned, s->nowned,
		 sizeof(*s->owned)) != 0)
		return NULL;
	/* the region when it has room (the NIC reaches it directly), else
	 * the heap: a 1 MiB allreduce must not fail for a small region */
	p = coll_mem_alloc(len);
	if (p == NULL)
		return NULL;
	s->owned[s->nowned++] = p;
	return p;
}

/* ---- compiling ---------------------------------------------------------- */

/* Kahn: @return true when the graph has no cycle */
static bool
acyclic(const spin_sched_t *s)
{
	unsigned *deg, *queue, head = 0, tail = 0, i, j, seen = 0;
	bool ok;

	if (s->nv == 0)
		return true;
	deg = malloc(s->nv * sizeof(*deg));
	queue = malloc(s->nv * sizeof(*queue));
	if (deg == NULL || queue == NULL) {
		free(deg);
		free(queue);
		return false;
	}
	for (i = 0; i < s->nv; i++) {
		deg[i] = s->v[i].indeg;
		if (deg[i] == 0)
			queue[tail++] = i;
	}
	while (head < tail) {
		const struct vtx *v = &s->v[queue[head++]];

		seen++;
		for (j = 0; j < v->nsucc; j++)
			if (--deg[v->succ[j]] == 0)
				queue[tail++] = (unsigned)v->succ[j];
	}
	ok = seen == s->nv;
	free(deg);
	free(queue);
	return ok;
}

static int
trig_add(spin_sched_t *s, const struct trig *t)
{
	if (grow((void **)&s->t, &s->capt, s->nt, sizeof(*s->t)) != 0)
		return -ENOMEM;
	s->t[s->nt++] = *t;
	return 0;
}

/*
 * The one place a triggered operation is posted: persistent (the NIC
 * re-arms it, spin_trig_set_period), once at compile, at the threshold of
 * the first instance it belongs to (t->when) with period per, one-shot
 * for a TW_FIRST one; or one-shot for instance @p inst at thr + inst * per
 * (SPINNIC_COLL_REPOST=1), nothing when the op is not of that instance.
 */
static int
trig_post(spin_sched_t *s, const struct trig *t, uint64_t inst)
{
	ptl_process_t to = { .rank = t->rank };
	ptl_size_t thr = t->thr + inst * t->per, per = 0;
	int rc = PTL_OK;

	if (s->persistent) {
		thr = t->thr + (t->when == TW_LATER ? t->per : 0);
		per = t->when == TW_FIRST ? 0 : t->per;
	} else if (t->when == TW_FIRST ? inst > 0 :
		   t->when == TW_LATER && inst == 0) {
		return 0;
	}
	if (per > 0) {
		rc = spin_trig_set_period(s->comm->ni, per);
		if (rc != PTL_OK)
			return ptl_err(rc);
	}
	switch (t->kind) {
	case TP_PUT:
		rc = PtlTriggeredPut(t->md, t->loff, t->len, t->ack, to,
				     s->comm->pt, t->bits, t->roff, NULL, 0,
				     t->trig, thr);
		break;
	case TP_ATOMIC:
		rc = PtlTriggeredAtomic(t->md, t->loff, t->len, t->ack, to,
					s->comm->pt, t->bits, t->roff, NULL,
					0, t->op, t->type, t->trig, thr);
		break;
	case TP_CTINC:
		rc = PtlTriggeredCTInc(t->ct, (ptl_ct_event_t){ 1, 0 },
				       t->trig, thr);
		break;
	case TP_MEAPPEND: {
		ptl_handle_me_t h;
		ptl_me_t me;

		if (t->rsv != 0) {
			/* reserved in the compile's batch, kept in s->mes */
			rc = spin_triggered_me_link(t->rsv, t->trig, thr);
			break;
		}
		coll_sched_me(s, t, &me);
		rc = PtlTriggeredMEAppend(s->comm->ni, s->comm->pt, &me,
					  PTL_PRIORITY_LIST, NULL, &h, t->trig,
					  thr);
		/* an entry never appended or already used: PtlMEUnlink
		 * at free cancels it or finds it gone */
		if (rc == PTL_OK &&
		    push_handle(&s->mes, &s->nmes, &s->capmes, h) != 0) {
			PtlMEUnlink(h);
			return -ENOMEM;
		}
		break;
	}
	}
	if (per > 0)
		(void)spin_trig_set_period(s->comm->ni, 0);
	return ptl_err(rc);
}

/*
 * Batched compile (spin.h spin_batch_*; doc/NOTES.md "Batched setup"):
 * ct_new, md_new, me_new and the dynamic schedules' entry reservations
 * add records to s->batch, and compile_submit creates them all in one
 * control round trip (per 256). CT and MD handles are usable in the
 * batch at once (pushed as usual); entries get theirs at the submit.
 */
static int
batch_me(spin_sched_t *s, const ptl_me_t *me, bool reserve)
{
	unsigned i = spin_batch_count(s->batch);
	int rc;

	if (grow((void **)&s->bme, &s->capbme, s->nbme, sizeof(*s->bme)) != 0)
		return -ENOMEM;
	rc = reserve ? spin_batch_me_reserve(s->batch, s->comm->pt, me,
					     PTL_PRIORITY_LIST, NULL, NULL) :
		       spin_batch_me_append(s->batch, s->comm->pt, me,
					    PTL_PRIORITY_LIST, NULL, NULL);
	if (rc != PTL_OK)
		return ptl_err(rc);
	s->bme[s->nbme++] = i;
	return 0;
}

/* Reserve the entries of the TP_MEAPPENDs posted at compile (dynamic
 * schedules), then create everything; the reserved handles go to
 * t->rsv for trig_post. On failure the batch released its objects. */
static int
compile_submit(spin_sched_t *s)
{
	unsigned i, k, first = s->nbme;
	int rc = 0;

	for (i = 0; i < s->nt && s->dynamic && !s->host && rc == 0; i++)
		if (s->t[i].kind == TP_MEAPPEND) {
			ptl_me_t me;

			coll_sched_me(s, &s->t[i], &me);
			rc = batch_me(s, &me, true);
		}
	if (rc == 0)
		rc = spin_batch_count(s->batch) == 0 ? 0 :
		     ptl_err(spin_batch_submit(s->batch, NULL));
	if (rc != 0)
		return rc; /* spin_sched_compile's fail: forgets them */
	for (i = 0; i < s->nbme && rc == 0; i++)
		rc = push_handle(&s->mes, &s->nmes, &s->capmes,
				 spin_batch_handle(s->batch, s->bme[i]));
	for (i = 0, k = first; i < s->nt && k < s->nbme; i++)
		if (s->t[i].kind == TP_MEAPPEND)
			s->t[i].rsv = spin_batch_handle(s->batch, s->bme[k++]);
	spin_batch_free(s->batch);
	s->batch = NULL;
	return rc;
}

static int
ct_new(spin_sched_t *s, ptl_handle_ct_t *ct_p)
{
	int rc = s->batch != NULL ? spin_batch_ct_alloc(s->batch, ct_p) :
		 PtlCTAlloc(s->comm->ni, ct_p);

	if (rc != PTL_OK)
		return ptl_err(rc);
	if (push_handle(&s->cts, &s->ncts, &s->capcts, *ct_p) != 0) {
		PtlCTFree(*ct_p);
		return -ENOMEM;
	}
	return 0;
}

/* Options of a data send's MD: staged in a SPIN_SCHED_STAGE schedule
 * (atomics, control puts and local copies never are). */
#define SEND_OPTS(s) ((s)->stage ? SPIN_MD_STAGE : 0u)

/* An MD with @p opts besides the CT's. */
static int
md_new(spin_sched_t *s, const void *buf, size_t len, ptl_handle_ct_t ct,
       unsigned opts, ptl_handle_md_t *md_p)
{
	ptl_md_t md;
	int rc;

	memset(&md, 0, sizeof(md));
	md.start = len > 0 ? (void *)buf : s->dummy;
	md.length = len;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = ct;
	md.options = (ct != PTL_CT_NONE ? PTL_MD_EVENT_CT_ACK : 0) | opts;
	rc = s->batch != NULL ? spin_batch_md_bind(s->batch, &md, md_p) :
	     PtlMDBind(s->comm->ni, &md, md_p);
	if (rc != PTL_OK)
		return ptl_err(rc);
	if (push_handle(&s->mds, &s->nmds, &s->capmds, *md_p) != 0) {
		PtlMDRelease(*md_p);
		return -ENOMEM;
	}
	return 0;
}

/* A persistent entry counting its matches into @p ct, no events. */
static int
me_new(spin_sched_t *s, void *buf, size_t len, ptl_match_bits_t bits,
       ptl_handle_ct_t ct, bool ack)
{
	ptl_handle_me_t h;
	ptl_me_t me;
	int rc;

	memset(&me, 0, sizeof(me));
	me.start = len > 0 ? buf : s->dummy;
	me.length = len;
	me.ct_handle = ct;
	me.uid = PTL_UID_ANY;
	me.match_id.rank = PTL_RANK_ANY;
	me.match_bits = bits;
	me.ignore_bits = 0;
	me.min_free = 0;
	me.options = PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM |
		     PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
		     PTL_ME_EVENT_UNLINK_DISABLE |
		     (ack ? 0 : PTL_ME_ACK_DISABLE);
	if (s->batch != NULL)
		return batch_me(s, &me, false);
	rc = PtlMEAppend(s->comm->ni, s->comm->pt, &me, PTL_PRIORITY_LIST,
			 NULL, &h);
	if (rc != PTL_OK)
		return ptl_err(rc);
	if (push_handle(&s->mes, &s->nmes, &s->capmes, h) != 0) {
		PtlMEUnlink(h);
		return -ENOMEM;
	}
	return 0;
}

/* k-th send (or receive) of one (peer, tag) in creation order: the
 * pre-matching of paper 002 §IV-A (coll_match.c); with @p x_p, the
 * exchange of compile @p gen that resolves wildcard receives too */
static int
number_messages(spin_sched_t *s, uint32_t gen, struct coll_xchg **x_p)
{
	struct coll_msg *m;
	unsigned i, n = 0;
	int rc;

	m = malloc((s->nv ? s->nv : 1) * sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	for (i = 0; i < s->nv; i++) {
		const struct vtx *v = &s->v[i];

		if (v->kind == V_SEND || v->kind == V_RECV)
			m[n++] = (struct coll_msg){ .send = v->kind == V_SEND,
				.acc = v->accumulate, .peer = v->peer,
				.tag = v->tag, .len = v->len, .vid = i };
	}
	rc = coll_match_number(m, n);
	if (rc == 0 && x_p != NULL)
		rc = coll_match_exchange(s->comm, gen, m, n, x_p);
	for (i = 0; i < n && rc == 0; i++) {
		struct vtx *v = &s->v[m[i].vid];

		v->peer = m[i].peer;
		v->tag = m[i].tag;
		v->seq = m[i].seq;
	}
	free(m);
	return rc;
}

/* atomics of an accumulating message: chunks of max_atomic_size (at
 * least one: a 0-byte put stands for an empty one) */
static ptl_size_t
acc_chunks(const spin_sched_t *s, const struct vtx *v)
{
	size_t esz = spin_coll_type_size(v->type);
	size_t chunk = s->comm->max_atomic / esz * esz;

	return v->len == 0 ? 1 : (v->len + chunk - 1) / chunk;
}

/* the pre-matched rendezvous (Fig. 5) whose data are atomics: the
 * receiver's RTR says its accumulator is ready; each chunk acknowledged */
static int
compile_acc_send(spin_sched_t *s, struct vtx *v, ptl_size_t npred)
{
	spin_coll_comm_t *c = s->comm;
	size_t esz = spin_coll_type_size(v->type);
	size_t chunk = c->max_atomic / esz * esz, off;
	ptl_match_bits_t bits = coll_bits(COLL_T_DATA, s->stag, c->rank,
					  v->seq, v->tag);
	ptl_handle_md_t md;
	int rc;

	v->en_per = npred + 1;
	v->done_per = acc_chunks(s, v);
	rc = me_new(s, NULL, 0, coll_bits(COLL_T_RTR, s->stag, v->peer,
					  v->seq, v->tag), v->en, false);
	if (rc == 0)
		rc = md_new(s, v->buf, v->len, v->done, 0, &md);
	if (rc != 0)
		return rc;
	if (v->len == 0)
		return trig_add(s, &(struct trig){ .kind = TP_PUT, .md = md,
			.ack = PTL_CT_ACK_REQ, .rank = v->peer, .bits = bits,
			.trig = v->en, .thr = npred + 1, .per = npred + 1 });
	for (off = 0; off < v->len && rc == 0; off += chunk)
		rc = trig_add(s, &(struct trig){ .kind = TP_ATOMIC, .md = md,
			.loff = off, .roff = off,
			.len = v->len - off < chunk ? v->len - off : chunk,
			.ack = PTL_CT_ACK_REQ, .rank = v->peer, .bits = bits,
			.op = v->op, .type = v->type, .trig = v->en,
			.thr = npred + 1, .per = npred + 1 });
	return rc;
}

/*
 * The steady RTS and RTR of a dynamic schedule carry this bit of the seq
 * field (so its messages keep seq below it): a first-instance RTS or RTR
 * never matches a steady entry, nor the reverse.
 */
#define COLL_SEQ_STEADY 0x800u

/* The data of a dynamic send, fired at @p trig >= thr (+ i * per): one
 * put, or the atomics of an accumulating one (chunks as
 * compile_acc_send's), each acknowledged into D */
static int
dyn_data(spin_sched_t *s, const struct vtx *v, ptl_handle_md_t md,
	 ptl_match_bits_t bits, uint8_t when, ptl_handle_ct_t trig,
	 ptl_size_t thr, ptl_size_t per)
{
	size_t esz = spin_coll_type_size(v->type), chunk, off;
	int rc = 0;

	if (!v->accumulate || v->len == 0)
		return trig_add(s, &(struct trig){ .kind = TP_PUT,
			.when = when, .md = md, .len = v->len,
			.ack = PTL_CT_ACK_REQ, .rank = v->peer, .bits = bits,
			.trig = trig, .thr = thr, .per = per });
	chunk = s->comm->max_atomic / esz * esz;
	for (off = 0; off < v->len && rc == 0; off += chunk)
		rc = trig_add(s, &(struct trig){ .kind = TP_ATOMIC,
			.when = when, .md = md, .loff = off, .roff = off,
			.len = v->len - off < chunk ? v->len - off : chunk,
			.ack = PTL_CT_ACK_REQ, .rank = v->peer, .bits = bits,
			.op = v->op, .type = v->type, .trig = trig,
			.thr = thr, .per = per });
	return rc;
}

/*
 * SPIN_SCHED_DYNAMIC (doc/NOTES.md "Fig. 6 (SPIN_SCHED_DYNAMIC)");
 * instances are counted from 1 here, from 0 in the thresholds.
 *
 * Instance 1 is Fig. 6, one-shot (TW_FIRST): on activation the sender
 * appends its RTR entry (use-once, counting into G) and then sends an
 * RTS; G >= 1 releases the data. The receiver appends its data entry and
 * its RTS entry (use-once, counting into G) and then sends an RTR; an
 * RTS that finds its entry (so the first RTR may have come before the
 * sender's RTR entry and been dropped) sends a second RTR. An RTR or RTS
 * that finds nothing is dropped, harmlessly. Issue order on one trigger
 * links each entry before the message that may answer it leaves.
 *
 * Instances k >= 2 (TW_LATER, posted persistent at compile): the data
 * entry stays (appended persistent, not use-once), and each side has a
 * steady catcher linked at compile, with COLL_SEQ_STEADY bits, counting
 * into its counter C: the receiver's for the steady RTS, the sender's
 * for the steady RTR. The sender's start_k sends a steady RTS; the
 * receiver's start_k adds 1 to its C and sends the steady RTR at
 * C >= 2(k-1); the sender sends the data at its C >= k-1. The receiver's
 * C reaches 2(k-1) exactly when both start_k and RTS_k happened:
 * start_{k+1} needs this rank's wait of k, RTS_{k+1} the sender's wait of
 * k, and both need the data of k, which needs RTR_k. So data_k arrives
 * after start_k (the buffer is ready). A steady message leaves only after
 * its peer took part in instance 1 (the sender's RTS_2 after an RTR of
 * instance 1), so after its peer's compile linked the catcher it goes
 * to. What instance 1 leaves (an RTS entry its RTS missed, a surplus
 * RTR) has first-instance bits no later message carries; free unlinks
 * what is linked.
 */
static int
compile_dynamic(spin_sched_t *s, struct vtx *v, ptl_size_t npred)
{
	spin_coll_comm_t *c = s->comm;
	unsigned sseq = v->seq | COLL_SEQ_STEADY;
	ptl_match_bits_t data = coll_bits(COLL_T_DATA, s->stag,
		v->kind == V_SEND ? c->rank : v->peer, v->seq, v->tag);
	ptl_handle_ct_t g, cs;
	ptl_handle_md_t md;
	int rc;

	if (v->seq >= COLL_SEQ_STEADY)
		return -E2BIG;
	/* accumulating: its atomics count into D, one per chunk */
	if (v->accumulate)
		v->done_per = acc_chunks(s, v);
	rc = ct_new(s, &g);
	if (rc == 0)
		rc = ct_new(s, &cs);
	if (rc != 0)
		return rc;
	if (v->kind == V_SEND) {
		rc = md_new(s, v->buf, v->len, v->done, SEND_OPTS(s), &md);
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_MEAPPEND,
				.when = TW_FIRST,
				.bits = coll_bits(COLL_T_RTR, s->stag, v->peer,
						  v->seq, v->tag),
				.ct = g, .trig = v->en, .thr = npred,
				.per = npred });
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.when = TW_FIRST, .md = c->ctl_md,
				.ack = PTL_NO_ACK_REQ, .rank = v->peer,
				.bits = coll_bits(COLL_T_RTS, s->stag, c->rank,
						  v->seq, v->tag),
				.trig = v->en, .thr = npred, .per = npred });
		if (rc == 0)
			rc = dyn_data(s, v, md, data, TW_FIRST, g, 1, 1);
		/* steady: the RTR catcher; instance i >= 1 (from 0) sends
		 * its RTS at activation and its data at C >= i */
		if (rc == 0)
			rc = me_new(s, NULL, 0, coll_bits(COLL_T_RTR, s->stag,
				    v->peer, sseq, v->tag), cs, false);
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.when = TW_LATER, .md = c->ctl_md,
				.ack = PTL_NO_ACK_REQ, .rank = v->peer,
				.bits = coll_bits(COLL_T_RTS, s->stag, c->rank,
						  sseq, v->tag),
				.trig = v->en, .thr = npred, .per = npred });
		if (rc == 0)
			rc = dyn_data(s, v, md, data, TW_LATER, cs, 0, 1);
		return rc;
	}
	/* the data entry stays for every instance (an accumulating
	 * message's atomics land in it too): data only leaves after an
	 * RTR, so after this receive started */
	rc = trig_add(s, &(struct trig){ .kind = TP_MEAPPEND,
		.when = TW_FIRST, .me_start = v->buf, .len = v->len,
		.me_ack = true, .me_keep = true, .bits = data, .ct = v->done,
		.trig = v->en, .thr = npred, .per = npred });
	if (rc == 0)
		rc = trig_add(s, &(struct trig){ .kind = TP_MEAPPEND,
			.when = TW_FIRST,
			.bits = coll_bits(COLL_T_RTS, s->stag, v->peer, v->seq,
					  v->tag),
			.ct = g, .trig = v->en, .thr = npred, .per = npred });
	for (int k = 0; k < 2 && rc == 0; k++)
		rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
			.when = TW_FIRST, .md = c->ctl_md,
			.ack = PTL_NO_ACK_REQ, .rank = v->peer,
			.bits = coll_bits(COLL_T_RTR, s->stag, c->rank, v->seq,
					  v->tag),
			.trig = k == 0 ? v->en : g, .thr = k == 0 ? npred : 1,
			.per = k == 0 ? npred : 1 });
	/* steady: the RTS catcher; instance i >= 1 (from 0) adds 1 to C
	 * at activation and sends its RTR at C >= 2i (its activation and
	 * the sender's RTS) */
	if (rc == 0)
		rc = me_new(s, NULL, 0, coll_bits(COLL_T_RTS, s->stag, v->peer,
			    sseq, v->tag), cs, false);
	if (rc == 0)
		rc = trig_add(s, &(struct trig){ .kind = TP_CTINC,
			.when = TW_LATER, .ct = cs, .trig = v->en,
			.thr = npred, .per = npred });
	if (rc == 0)
		rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
			.when = TW_LATER, .md = c->ctl_md,
			.ack = PTL_NO_ACK_REQ, .rank = v->peer,
			.bits = coll_bits(COLL_T_RTR, s->stag, c->rank, sseq,
					  v->tag),
			.trig = cs, .thr = 0, .per = 2 });
	return rc;
}

static int
compile_vertex(spin_sched_t *s, unsigned id)
{
	spin_coll_comm_t *c = s->comm;
	struct vtx *v = &s->v[id];
	ptl_size_t npred = v->indeg ? v->indeg : 1;
	ptl_handle_md_t md;
	int rc;

	rc = ct_new(s, &v->en);
	if (rc == 0)
		rc = ct_new(s, &v->done);
	if (rc != 0)
		return rc;
	v->en_per = npred;
	v->done_per = 1;
	if (s->dynamic && (v->kind == V_SEND || v->kind == V_RECV))
		return compile_dynamic(s, v, npred);
	switch (v->kind) {
	case V_SEND:
		if (v->accumulate)
			return compile_acc_send(s, v, npred);
		v->eager = v->len <= c->eager_max;
		/* eager: a credit per instance after the first (the
		 * receiver's copy of the previous instance is done);
		 * rendezvous: the receiver's RTR (Fig. 5) */
		v->en_per = npred + 1;
		rc = me_new(s, NULL, 0,
			    coll_bits(v->eager ? COLL_T_CREDIT : COLL_T_RTR,
				      s->stag, v->peer, v->seq, v->tag),
			    v->en, false);
		if (rc == 0)
			rc = md_new(s, v->buf, v->len, v->done,
				    SEND_OPTS(s), &md);
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.md = md, .len = v->len, .ack = PTL_CT_ACK_REQ,
				.rank = v->peer,
				.bits = coll_bits(COLL_T_DATA, s->stag, c->rank,
						  v->seq, v->tag),
				.trig = v->en,
				.thr = v->eager ? npred : npred + 1,
				.per = npred + 1 });
		return rc;
	case V_RECV:
		/* accumulating: the atomics count into D, one per chunk */
		if (v->accumulate)
			v->done_per = acc_chunks(s, v);
		else
			v->eager = v->len <= c->eager_max;
		if (v->accumulate || !v->eager) {
			/* the data entry counts into D; the RTR goes once
			 * the buffer is ready (its predecessors done) */
			rc = me_new(s, v->buf, v->len,
				    coll_bits(COLL_T_DATA, s->stag, v->peer,
					      v->seq, v->tag), v->done, true);
			if (rc == 0)
				rc = trig_add(s, &(struct trig){
					.kind = TP_PUT, .md = c->ctl_md,
					.ack = PTL_NO_ACK_REQ, .rank = v->peer,
					.bits = coll_bits(COLL_T_RTR, s->stag,
							  c->rank, v->seq,
							  v->tag),
					.trig = v->en, .thr = npred,
					.per = npred });
			return rc;
		}
		/* Fig. 7: the shadow buffer's entry counts into en, which
		 * the activation also counts: the copy fires at both */
		v->en_per = npred + 1;
		rc = me_new(s, s->sb + v->sb_off, v->len,
			    coll_bits(COLL_T_DATA, s->stag, v->peer, v->seq,
				      v->tag), v->en, true);
		if (rc == 0)
			rc = me_new(s, v->buf, v->len,
				    coll_bits(COLL_T_COPY, s->stag, 0, 0, id),
				    v->done, false);
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.md = s->sb_md, .loff = v->sb_off,
				.len = v->len, .ack = PTL_NO_ACK_REQ,
				.rank = c->rank,
				.bits = coll_bits(COLL_T_COPY, s->stag, 0, 0,
						  id),
				.trig = v->en, .thr = npred + 1,
				.per = npred + 1 });
		/* the credit: the shadow buffer is free again */
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.md = c->ctl_md, .ack = PTL_NO_ACK_REQ,
				.rank = v->peer,
				.bits = coll_bits(COLL_T_CREDIT, s->stag,
						  c->rank, v->seq, v->tag),
				.trig = v->done, .thr = 1, .per = 1 });
		return rc;
	case V_COPY:
		rc = me_new(s, v->buf, v->len,
			    coll_bits(COLL_T_COPY, s->stag, 0, 0, id), v->done,
			    false);
		if (rc == 0)
			rc = md_new(s, v->src, v->len, PTL_CT_NONE, 0, &md);
		if (rc == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_PUT,
				.md = md, .len = v->len, .ack = PTL_NO_ACK_REQ,
				.rank = c->rank,
				.bits = coll_bits(COLL_T_COPY, s->stag, 0, 0,
						  id),
				.trig = v->en, .thr = npred, .per = npred });
		return rc;
	case V_REDUCE: {
		size_t esz = spin_coll_type_size(v->type);
		size_t chunk = c->max_atomic / esz * esz, off;
		bool zero = v->len == 0;

		rc = me_new(s, v->buf, v->len,
			    coll_bits(COLL_T_COPY, s->stag, 0, 0, id), v->done,
			    false);
		if (rc == 0)
			rc = md_new(s, v->src, v->len, PTL_CT_NONE, 0, &md);
		if (rc != 0)
			return rc;
		if (zero) /* nothing to combine: a 0-byte put completes it */
			return trig_add(s, &(struct trig){ .kind = TP_PUT,
				.md = md, .ack = PTL_NO_ACK_REQ,
				.rank = c->rank,
				.bits = coll_bits(COLL_T_COPY, s->stag, 0, 0,
						  id),
				.trig = v->en, .thr = npred, .per = npred });
		v->done_per = 0;
		for (off = 0; off < v->len && rc == 0; off += chunk) {
			size_t n = v->len - off < chunk ? v->len - off : chunk;

			v->done_per++;
			rc = trig_add(s, &(struct trig){ .kind = TP_ATOMIC,
				.md = md, .loff = off, .roff = off, .len = n,
				.ack = PTL_NO_ACK_REQ, .rank = c->rank,
				.bits = coll_bits(COLL_T_COPY, s->stag, 0, 0,
						  id),
				.op = v->op, .type = v->type,
				.trig = v->en, .thr = npred, .per = npred });
		}
		return rc;
	}
	}
	return -EINVAL;
}

static void sched_release(spin_sched_t *s);

int
spin_sched_compile(spin_sched_t *s, unsigned flags)
{
	spin_coll_comm_t *c;
	struct coll_xchg *x = NULL;
	unsigned i, j;
	uint32_t bad;
	ptl_md_t md;
	int rc;

	if (s == NULL || s->compiled ||
	    (flags & ~(SPIN_SCHED_DYNAMIC | SPIN_SCHED_HOST |
		       SPIN_SCHED_STAGE)) != 0 ||
	    !acyclic(s))
		return -EINVAL;
	flags |= s->comm->sched_flags;
	s->dynamic = (flags & SPIN_SCHED_DYNAMIC) != 0;
	s->host = (flags & SPIN_SCHED_HOST) != 0;
	s->stage = (flags & SPIN_SCHED_STAGE) != 0;
	/* Fig. 6 cannot resolve a wildcard: the RTR's destination and bits
	 * would come from the matched RTS (doc/NOTES.md) */
	for (i = 0; i < s->nv && s->dynamic; i++)
		if (s->v[i].kind == V_RECV &&
		    (s->v[i].peer == SPIN_SCHED_ANY_SOURCE ||
		     s->v[i].tag == SPIN_SCHED_ANY_TAG))
			return -ENOTSUP;
	c = s->comm;
	rc = number_messages(s, 0, NULL);
	if (rc != 0)
		return rc;
	/* every rank takes the next tag in compile order, the same one */
	s->stag = c->next_stag++ % COLL_SCHED_TAGS;
	if (c->stag_used[s->stag])
		return -ENOSPC;
	c->stag_used[s->stag] = 1;
	s->compiled = true;
	/* pre-matched: the send tables (wildcards resolved) */
	if (!s->dynamic) {
		rc = number_messages(s, c->next_stag - 1, &x);
		if (rc != 0)
			goto fail;
	}
	/* shadow buffers of the eager receives, one MD over them */
	for (i = 0; i < s->nv; i++) {
		struct vtx *v = &s->v[i];

		if (v->kind == V_RECV && v->len <= c->eager_max &&
		    !v->accumulate && !s->dynamic) {
			v->sb_off = s->sb_len;
			s->sb_len += (v->len + 63) & ~(size_t)63;
		}
	}
	if (s->sb_len == 0)
		s->sb_len = 64;
	s->sb = spin_host_alloc(s->sb_len);
	s->sb_region = s->sb != NULL;
	if (s->sb == NULL)
		s->sb = malloc(s->sb_len);
	if (s->sb == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	memset(&md, 0, sizeof(md));
	md.start = s->sb;
	md.length = s->sb_len;
	md.eq_handle = PTL_EQ_NONE;
	md.ct_handle = PTL_CT_NONE;
	s->batch = NULL;
	if ((getenv("SPINNIC_COLL_BATCH") == NULL ||
	     strcmp(getenv("SPINNIC_COLL_BATCH"), "0") != 0) &&
	    spin_batch_create(c->ni, &s->batch) != PTL_OK)
		s->batch = NULL; /* unbatched, as before */
	rc = ptl_err(s->batch != NULL ?
		     spin_batch_md_bind(s->batch, &md, &s->sb_md) :
		     PtlMDBind(c->ni, &md, &s->sb_md));
	if (rc != 0) {
		s->sb_md = PTL_INVALID_HANDLE;
		goto fail;
	}
	rc = ct_new(s, &s->start);
	if (rc == 0)
		rc = ct_new(s, &s->done);
	for (i = 0; i < s->nv && rc == 0; i++)
		rc = compile_vertex(s, i);
	if (rc != 0)
		goto fail;
	/* edges, sources and sinks: counter increments on the NIC */
	for (i = 0; i < s->nv && rc == 0; i++) {
		struct vtx *v = &s->v[i];

		if (v->indeg == 0)
			rc = trig_add(s, &(struct trig){ .kind = TP_CTINC,
				.ct = v->en, .trig = s->start, .thr = 1,
				.per = 1 });
		for (j = 0; j < v->nsucc && rc == 0; j++)
			rc = trig_add(s, &(struct trig){ .kind = TP_CTINC,
				.ct = s->v[v->succ[j]].en, .trig = v->done,
				.thr = v->done_per, .per = v->done_per });
		if (v->nsucc == 0 && rc == 0) {
			s->nsinks++;
			rc = trig_add(s, &(struct trig){ .kind = TP_CTINC,
				.ct = s->done, .trig = v->done,
				.thr = v->done_per, .per = v->done_per });
		}
	}
	if (s->nv == 0 && rc == 0) {
		s->nsinks = 1;
		rc = trig_add(s, &(struct trig){ .kind = TP_CTINC,
			.ct = s->done, .trig = s->start, .thr = 1, .per = 1 });
	}
	if (rc == 0 && s->batch != NULL)
		rc = compile_submit(s);
	if (rc == 0 && s->host) /* nothing posted: coll_host.c issues */
		rc = coll_host_prepare(&s->hst, s->t, s->nt, s->cts, s->ncts);
	if (rc != 0)
		goto fail;
	/* persistent: posted once, re-armed by the NIC every period;
	 * SPINNIC_COLL_REPOST=1 re-posts them one-shot at each start;
	 * SPIN_SCHED_HOST: never posted */
	s->persistent = getenv("SPINNIC_COLL_REPOST") == NULL && !s->host;
	for (i = 0; i < s->nt && s->persistent && rc == 0; i++)
		rc = trig_post(s, &s->t[i], 0);
	if (rc != 0)
		goto fail;
	/* dynamic: no barrier, nothing is posted that a peer could miss
	 * (compile_dynamic) */
	if (s->dynamic)
		return 0;
	/* every entry of every rank is posted before anything is sent; the
	 * OR says whether a rank failed (then all fail) */
	bad = 0;
	rc = coll_comm_sync_or(c, &bad);
	coll_match_end(x);
	if (rc == 0 && bad != 0)
		rc = -ECANCELED;
	if (rc != 0)
		sched_release(s);
	return rc;
fail:
	if (s->batch != NULL) {
		/* not submitted, or the submit failed: nothing it held
		 * exists (any more) */
		spin_batch_free(s->batch);
		s->batch = NULL;
		s->ncts = s->nmds = 0;
		s->start = s->done = PTL_CT_NONE;
		s->sb_md = PTL_INVALID_HANDLE;
	}
	if (!s->dynamic) {
		/* the compile barrier all the same, saying this rank failed:
		 * the others fail too instead of waiting for it 30 s */
		bad = 1;
		(void)coll_comm_sync_or(c, &bad);
	}
	coll_match_end(x);
	sched_release(s);
	return rc;
}

/* ---- running ------------------------------------------------------------ */

int
spin_sched_start(spin_sched_t *s)
{
	unsigned i;
	int rc;

	if (s == NULL || !s->compiled || s->start == PTL_CT_NONE)
		return -EINVAL;
	if (s->running)
		return -EBUSY;
	s->ctl_fail0 = coll_ctl_failures(s->comm);
	if (s->host) {
		s->inst++;
		s->running = true;
		rc = coll_host_inc(s->hst, s->start);
		return rc != 0 ? rc : coll_host_progress(s->hst, s, s->t,
							 s->inst);
	}
	if (!s->persistent)
		for (i = 0; i < s->nt; i++) {
			rc = trig_post(s, &s->t[i], s->inst);
			if (rc != 0) {
				/* what was posted stays behind counters that
				 * never reach it: cancel it */
				unsigned k;

				for (k = 0; k < s->ncts; k++)
					PtlCTCancelTriggered(s->cts[k]);
				return rc;
			}
		}
	s->inst++;
	s->running = true;
	return ptl_err(PtlCTInc(s->start, (ptl_ct_event_t){ 1, 0 }));
}

static int
sched_failures(spin_sched_t *s)
{
	unsigned i;

	for (i = 0; i < s->ncts; i++) {
		ptl_ct_event_t ev;

		if (PtlCTGet(s->cts[i], &ev) != PTL_OK || ev.failure != 0)
			return -EIO;
	}
	return 0;
}

/* A control put of the communicator failed since the instance started:
 * the RTS, RTR or credit it waits for behind it will never come. */
static bool
ctl_lost(spin_sched_t *s)
{
	return coll_ctl_failures(s->comm) != s->ctl_fail0;
}

/* How long a wait sleeps on the done counter before it looks for
 * failures that will never let it reach its value (ms). */
#define WAIT_SLICE_MS 100u

int
spin_sched_test(spin_sched_t *s, bool *done_p)
{
	ptl_ct_event_t ev;
	bool lost;

	if (s == NULL || done_p == NULL || !s->compiled)
		return -EINVAL;
	if (!s->running) {
		*done_p = true;
		return 0;
	}
	if (s->host) {
		int rc = coll_host_progress(s->hst, s, s->t, s->inst);

		if (rc != 0) {
			/* a counter failed (or a call did): the instance
			 * is over, as the offloaded one's wait says */
			s->running = false;
			*done_p = true;
			return rc;
		}
		ev.success = coll_host_value(s->hst, s->done);
		ev.failure = 0;
	} else if (PtlCTGet(s->done, &ev) != PTL_OK) {
		return -EIO;
	}
	*done_p = ev.success + ev.failure >= s->nsinks * s->inst;
	lost = ctl_lost(s);
	if (!*done_p && !lost)
		return 0;
	/* done, or never: a lost control put ends the instance */
	*done_p = true;
	s->running = false;
	return lost ? -EIO : sched_failures(s);
}

/* SPIN_SCHED_HOST: progress until done (0: no limit), spinning as an MPI
 * library's wait does */
static int
host_wait(spin_sched_t *s, unsigned timeout_ms)
{
	struct timespec t0, now;
	bool done = false;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		rc = spin_sched_test(s, &done);
		if (rc != 0 || done)
			return rc;
		/* the peers may share this CPU (one host core for all) */
		sched_yield();
		if (timeout_ms == 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000 >= (long)timeout_ms)
			return -ETIMEDOUT;
	}
}

/*
 * Wait for the done counter up to @p timeout_ms (@p forever: no limit) in
 * slices of WAIT_SLICE_MS. Between slices, failures that keep it from its
 * value end the wait: a failed counter of the schedule (a data put or
 * atomic its peer's node gave up on) or a lost control put of the
 * communicator. The first slice is the whole cost when nothing failed.
 */
static int
offload_wait(spin_sched_t *s, unsigned timeout_ms, bool forever)
{
	ptl_size_t want = s->nsinks * s->inst;
	unsigned waited = 0;

	for (;;) {
		unsigned slice = forever ? WAIT_SLICE_MS :
			timeout_ms - waited < WAIT_SLICE_MS ?
			timeout_ms - waited : WAIT_SLICE_MS;
		ptl_ct_event_t ev;
		unsigned which;
		int rc;

		rc = PtlCTPoll(&s->done, &want, 1, slice, &ev, &which);
		if (rc == PTL_OK)
			break;
		if (rc != PTL_CT_NONE_REACHED)
			return -EIO;
		if (ctl_lost(s) || sched_failures(s) != 0) {
			s->running = false;
			return -EIO;
		}
		waited += slice;
		if (!forever && waited >= timeout_ms)
			return -ETIMEDOUT;
	}
	s->running = false;
	return sched_failures(s);
}

int
spin_sched_wait_timeout(spin_sched_t *s, unsigned timeout_ms)
{
	if (s == NULL || !s->compiled)
		return -EINVAL;
	if (!s->running)
		return 0;
	if (s->host)
		return host_wait(s, timeout_ms);
	return offload_wait(s, timeout_ms, false);
}

int
spin_sched_wait(spin_sched_t *s)
{
	if (s == NULL || !s->compiled)
		return -EINVAL;
	if (!s->running)
		return 0;
	if (s->host)
		return host_wait(s, 0);
	return offload_wait(s, 0, true);
}

static void
sched_release(spin_sched_t *s)
{
	unsigned i;

	for (i = 0; i < s->ncts; i++)
		PtlCTCancelTriggered(s->cts[i]);
	for (i = 0; i < s->nmes; i++) {
		int k;

		/* a message still landing keeps it busy a moment */
		for (k = 0; k < 1000 && PtlMEUnlink(s->mes[i]) == PTL_IN_USE;
		     k++)
			usleep(100);
	}
	for (i = 0; i < s->nmds; i++)
		PtlMDRelease(s->mds[i]);
	if (s->sb_md != PTL_INVALID_HANDLE)
		PtlMDRelease(s->sb_md);
	for (i = 0; i < s->ncts; i++)
		PtlCTFree(s->cts[i]);
	if (s->sb_region)
		spin_host_free(s->sb);
	else
		free(s->sb);
	s->sb = NULL;
	s->sb_md = PTL_INVALID_HANDLE;
	s->ncts = s->nmes = s->nmds = 0;
	s->start = s->done = PTL_CT_NONE;
	s->nt = 0;
	if (s->compiled)
		s->comm->stag_used[s->stag] = 0;
	s->running = false;
	coll_host_free(s->hst);
	s->hst = NULL;
}

void
spin_sched_free(spin_sched_t *s)
{
	unsigned i;

	if (s == NULL)
		return;
	sched_release(s);
	for (i = 0; i < s->nv; i++)
		free(s->v[i].succ);
	free(s->v);
	free(s->t);
	free(s->cts);
	free(s->mes);
	free(s->mds);
	free(s->bme);
	for (i = 0; i < s->nowned; i++)
		coll_mem_free(s->owned[i]);
	free(s->owned);
	s->comm->live_scheds--;
	free(s);
}
