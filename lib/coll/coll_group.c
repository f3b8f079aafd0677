/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Group offload (paper 003; spin_coll.h spin_group_*, doc/NOTES.md "Group
 * offload (issue #19)"): a recorded pattern of sends, receives and local
 * barriers compiled onto a schedule (coll_sched.c), cached per
 * communicator by signature, so that a repeated call is one PtlCTInc.
 *
 * Agreement (the first call of a group): every rank contributes one
 * record to an offloaded allgather (compiled once per communicator):
 * its flags, the serial of the cached schedule it would reuse (0: none),
 * whether it could make room for a new one, and per peer an
 * order-insensitive digest of the (tag, k-th, length) of its sends to and
 * receives from that peer. Every rank then decides the same: a pair whose
 * digests differ fails everyone (-ENOMSG), one rank without room fails
 * everyone (-ENOSPC), equal non-zero serials are a hit, anything else a
 * miss that everyone compiles (collective, in the same order). Serials
 * count the group compiles of the communicator, the same on every rank.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spin.h>

#include "coll_internal.h"

#define GROUP_CAP_DEFAULT 64u
#define GROUP_TRIGS_DEFAULT 768u   /* of max_triggered_ops (1024) */
#define GROUP_FREE_WAIT_MS 10000u

enum { GOP_SEND, GOP_RECV };
enum { GS_REC, GS_ENDED, GS_BOUND, GS_DEAD };

struct gop {
	uint8_t kind;
	void *buf;
	size_t len;
	unsigned peer;
	uint32_t tag;
	unsigned epoch;
};

struct gentry {
	struct gentry *prev, *next;  /* LRU list: head most recent */
	uint64_t serial;
	uint64_t sig;
	struct gop *ops;
	unsigned nops;
	unsigned flags;
	unsigned refs;               /* groups bound to it */
	unsigned trigs;              /* estimate, an upper bound */
	spin_sched_t *s;
};

/* A communicator's group state, found by its pointer (no field in
 * struct spin_coll_comm: coll_comm.c stays untouched). */
struct gctx {
	struct gctx *next;
	spin_coll_comm_t *comm;
	struct gentry *head, *tail;
	unsigned nentries, trigs;
	unsigned cap, trig_budget;
	uint64_t next_serial;
	unsigned live_groups;
	spin_sched_t *agree;         /* allgather of the records */
	uint64_t *agree_in, *agree_out;
	size_t agree_blk;            /* bytes of one record */
	char dummy[8];               /* 0-byte join copies */
	struct spin_group_stats st;
};

struct spin_group {
	struct gctx *x;
	unsigned flags;
	int state;
	struct gop *ops;
	unsigned nops, capops;
	unsigned epoch;
	bool running;                /* called, not yet seen complete */
	struct gentry *e;            /* GS_BOUND */
};

/* the communicators' group states (each used by one thread at a time, as
 * its communicator; the list is shared) */
static struct gctx *ctxs;
static pthread_mutex_t ctxs_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned
env_unsigned(const char *name, unsigned def, unsigned lo, unsigned hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (v == NULL)
		return def;
	n = strtoul(v, &end, 0);
	if (*v == '\0' || *end != '\0' || n < lo || n > hi) {
		fprintf(stderr, "spin_coll: %s=%s ignored (%u..%u): %u\n",
			name, v, lo, hi, def);
		return def;
	}
	return (unsigned)n;
}

static struct gctx *
ctx_get(spin_coll_comm_t *comm, bool create)
{
	struct gctx *x;

	pthread_mutex_lock(&ctxs_lock);
	for (x = ctxs; x != NULL; x = x->next)
		if (x->comm == comm)
			break;
	if (x != NULL || !create) {
		pthread_mutex_unlock(&ctxs_lock);
		return x;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		pthread_mutex_unlock(&ctxs_lock);
		return NULL;
	}
	x->comm = comm;
	x->cap = env_unsigned("SPINNIC_GROUP_CACHE", GROUP_CAP_DEFAULT, 1,
			      1u << 20);
	x->trig_budget = env_unsigned("SPINNIC_GROUP_CACHE_TRIGS",
				      GROUP_TRIGS_DEFAULT, 1, 1u << 30);
	x->next_serial = 1;
	x->next = ctxs;
	ctxs = x;
	pthread_mutex_unlock(&ctxs_lock);
	return x;
}

/* ---- recording ------------------------------------------------------------ */

int
spin_group_start_flags(spin_coll_comm_t *comm, unsigned flags,
		       spin_group_t **g_p)
{
	struct spin_group *g;
	struct gctx *x;

	if (comm == NULL || g_p == NULL ||
	    (flags & ~(SPIN_GROUP_HOST | SPIN_GROUP_NOCACHE |
		       SPIN_GROUP_SIMPLE | SPIN_GROUP_STAGED)) != 0 ||
	    ((flags & SPIN_GROUP_SIMPLE) &&
	     (flags & ~SPIN_GROUP_STAGED) != SPIN_GROUP_SIMPLE))
		return -EINVAL;
	x = ctx_get(comm, true);
	if (x == NULL)
		return -ENOMEM;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	g->x = x;
	g->flags = flags;
	g->state = GS_REC;
	x->live_groups++;
	*g_p = g;
	return 0;
}

int
spin_group_start(spin_coll_comm_t *comm, spin_group_t **g_p)
{
	return spin_group_start_flags(comm, 0, g_p);
}

static int
group_add(spin_group_t *g, uint8_t kind, void *buf, size_t len,
	  unsigned peer, uint32_t tag)
{
	if (g == NULL || g->state != GS_REC ||
	    peer >= g->x->comm->size || tag >= SPIN_COLL_TAG_MAX ||
	    (len > 0 && buf == NULL))
		return -EINVAL;
	if (g->nops == g->capops) {
		unsigned c = g->capops ? 2 * g->capops : 16;
		struct gop *p = realloc(g->ops, (size_t)c * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		g->ops = p;
		g->capops = c;
	}
	g->ops[g->nops++] = (struct gop){ .kind = kind, .buf = buf,
		.len = len, .peer = peer, .tag = tag, .epoch = g->epoch };
	return 0;
}

int
spin_group_send(spin_group_t *g, const void *buf, size_t len, unsigned peer,
		uint32_t tag)
{
	return group_add(g, GOP_SEND, (void *)(uintptr_t)buf, len, peer, tag);
}

int
spin_group_recv(spin_group_t *g, void *buf, size_t len, unsigned peer,
		uint32_t tag)
{
	return group_add(g, GOP_RECV, buf, len, peer, tag);
}

int
spin_group_local_barrier(spin_group_t *g)
{
	if (g == NULL || g->state != GS_REC)
		return -EINVAL;
	/* a barrier with nothing before it since the last one changes
	 * nothing (but the signature: the epoch numbers) */
	g->epoch++;
	return 0;
}

int
spin_group_end(spin_group_t *g)
{
	if (g == NULL || g->state != GS_REC)
		return -EINVAL;
	g->state = GS_ENDED;
	return 0;
}

/* ---- signatures and digests ----------------------------------------------- */

static uint64_t
mix(uint64_t h, uint64_t v)
{
	/* FNV-1a over the 8 bytes of v */
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t
fin(uint64_t h)
{
	/* splitmix64 finaliser: sums of these stay well spread */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static uint64_t
group_sig(const spin_group_t *g)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned i;

	h = mix(h, g->flags);
	h = mix(h, g->nops);
	for (i = 0; i < g->nops; i++) {
		const struct gop *o = &g->ops[i];

		h = mix(h, o->kind);
		h = mix(h, (uint64_t)(uintptr_t)o->buf);
		h = mix(h, o->len);
		h = mix(h, o->peer);
		h = mix(h, o->tag);
		h = mix(h, o->epoch);
	}
	return h;
}

static bool
ops_equal(const struct gop *a, const struct gop *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i].kind != b[i].kind || a[i].buf != b[i].buf ||
		    a[i].len != b[i].len || a[i].peer != b[i].peer ||
		    a[i].tag != b[i].tag || a[i].epoch != b[i].epoch)
			return false;
	return true;
}

/*
 * Per peer, the sum of fin(hash(tag, k, len)) over the sends to it (ds)
 * and the receives from it (dr), k the op's place among those of its
 * (peer, tag): pairs up exactly when the sends of a to b and the
 * receives of b from a would match in the schedule's pre-matching (the
 * k-th of a (source, destination, tag) pairs with the k-th), whatever
 * the order between tags. A send to self is a receive from self too.
 */
static void
group_digests(const spin_group_t *g, uint64_t *ds, uint64_t *dr)
{
	unsigned i, j, P = g->x->comm->size;

	memset(ds, 0, P * sizeof(*ds));
	memset(dr, 0, P * sizeof(*dr));
	for (i = 0; i < g->nops; i++) {
		const struct gop *o = &g->ops[i];
		uint64_t k = 0, h;

		for (j = 0; j < i; j++)
			if (g->ops[j].kind == o->kind &&
			    g->ops[j].peer == o->peer &&
			    g->ops[j].tag == o->tag)
				k++;
		h = mix(mix(mix(0xcbf29ce484222325ull, o->tag), k), o->len);
		if (o->kind == GOP_SEND)
			ds[o->peer] += fin(h);
		else
			dr[o->peer] += fin(h);
	}
}

/* An upper bound of the triggered operations the group's schedule posts
 * (coll_sched.c compile_vertex: a send 1, a receive at most 2; an
 * increment per edge, per source and per sink; a join copy 1). */
static unsigned
group_trigs(const spin_group_t *g)
{
	unsigned i, lo = 0, pn = 0, n = 0, nv = 0, t = 1;

	/* host-progressed: nothing posted */
	if (g->flags & (SPIN_GROUP_HOST | SPIN_GROUP_SIMPLE))
		return 0;

	for (i = 0; i <= g->nops; i++) {
		if (i < g->nops && g->ops[i].epoch == g->ops[lo].epoch)
			continue;
		n = i - lo;
		if (n > 0) {
			if (pn > 0) {
				if (pn > 1 && n > 1 && pn * n > pn + n) {
					nv++;
					t += 1 + pn + n;
				} else {
					t += pn * n;
				}
			}
			pn = n;
		}
		lo = i;
	}
	for (i = 0; i < g->nops; i++)
		t += g->ops[i].kind == GOP_SEND ? 1 : 2;
	nv += g->nops;
	return t + 2 * nv;
}

/* ---- the cache ------------------------------------------------------------- */

static void
lru_unlink(struct gctx *x, struct gentry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		x->head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		x->tail = e->prev;
	e->prev = e->next = NULL;
}

static void
lru_front(struct gctx *x, struct gentry *e)
{
	if (x->head == e)
		return;
	if (e->prev != NULL || e->next != NULL || x->tail == e)
		lru_unlink(x, e);
	e->next = x->head;
	if (x->head != NULL)
		x->head->prev = e;
	x->head = e;
	if (x->tail == NULL)
		x->tail = e;
}

static void
entry_free(struct gctx *x, struct gentry *e)
{
	lru_unlink(x, e);
	x->nentries--;
	x->trigs -= e->trigs;
	spin_sched_free(e->s);
	free(e->ops);
	free(e);
}

/* the most recently used entry of @p g's signature (bound or idle) */
static struct gentry *
cache_find(struct gctx *x, const spin_group_t *g, uint64_t sig)
{
	struct gentry *e;

	if (g->flags & (SPIN_GROUP_NOCACHE | SPIN_GROUP_SIMPLE))
		return NULL;
	for (e = x->head; e != NULL; e = e->next)
		if (e->sig == sig && e->nops == g->nops &&
		    e->flags == g->flags && ops_equal(e->ops, g->ops, g->nops))
			return e;
	return NULL;
}

/* Whether freeing idle entries (least recently used first) would leave
 * room for one more of @p trigs operations; with @p evict, free them. */
static bool
cache_room(struct gctx *x, unsigned trigs, bool evict)
{
	unsigned n = x->nentries, t = x->trigs;
	struct gentry *e, *prev;

	for (e = x->tail; e != NULL && (n + 1 > x->cap ||
					t + trigs > x->trig_budget); e = prev) {
		prev = e->prev;
		if (e->refs != 0)
			continue;
		n--;
		t -= e->trigs;
		if (evict) {
			entry_free(x, e);
			x->st.evictions++;
		}
	}
	return n + 1 <= x->cap && t + trigs <= x->trig_budget;
}

/* ---- compile ----------------------------------------------------------------- */

/* Epoch k's ops depend on every op of the last non-empty epoch before:
 * all pairs, or through a 0-byte local copy (a join) where fewer edges. */
static int
group_build(spin_group_t *g, spin_sched_t **s_p)
{
	spin_sched_t *s;
	int *ids = NULL, rc;
	unsigned i, j, k, lo = 0, plo = 0, pn = 0;

	rc = spin_sched_create(g->x->comm, &s);
	if (rc != 0)
		return rc;
	ids = malloc((g->nops ? g->nops : 1) * sizeof(*ids));
	if (ids == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < g->nops; i++) {
		const struct gop *o = &g->ops[i];

		rc = o->kind == GOP_SEND ?
		     spin_sched_send(s, o->buf, o->len, o->peer, o->tag) :
		     spin_sched_recv(s, o->buf, o->len, o->peer, o->tag);
		if (rc < 0)
			goto fail;
		ids[i] = rc;
	}
	for (i = 0; i <= g->nops; i++) {
		unsigned n;

		if (i < g->nops && g->ops[i].epoch == g->ops[lo].epoch)
			continue;
		n = i - lo;
		if (n > 0 && pn > 0) {
			if (pn > 1 && n > 1 && pn * n > pn + n) {
				int join = spin_sched_copy(s, g->x->dummy,
							   g->x->dummy + 4, 0);

				if ((rc = join) < 0)
					goto fail;
				for (j = 0; j < pn && rc >= 0; j++)
					rc = spin_sched_dep(s, ids[plo + j],
							    join);
				for (k = 0; k < n && rc >= 0; k++)
					rc = spin_sched_dep(s, join,
							    ids[lo + k]);
			} else {
				for (j = 0; j < pn && rc >= 0; j++)
					for (k = 0; k < n && rc >= 0; k++)
						rc = spin_sched_dep(s,
							ids[plo + j],
							ids[lo + k]);
			}
			if (rc < 0)
				goto fail;
		}
		if (n > 0) {
			plo = lo;
			pn = n;
		}
		lo = i;
	}
	free(ids);
	rc = spin_sched_compile(s, ((g->flags & SPIN_GROUP_SIMPLE) ?
				    SPIN_SCHED_DYNAMIC | SPIN_SCHED_HOST :
				    (g->flags & SPIN_GROUP_HOST) ?
				    SPIN_SCHED_HOST : 0) |
				   ((g->flags & SPIN_GROUP_STAGED) ?
				    SPIN_SCHED_STAGE : 0));
	if (rc != 0) {
		spin_sched_free(s);
		return rc;
	}
	*s_p = s;
	return 0;
fail:
	free(ids);
	spin_sched_free(s);
	return rc;
}

/* ---- agreement ------------------------------------------------------------------ */

enum { AG_FLAGS, AG_SERIAL, AG_ROOM, AG_HDR };

static int
agree_setup(struct gctx *x)
{
	unsigned P = x->comm->size;
	int rc;

	if (x->agree != NULL)
		return 0;
	x->agree_blk = (AG_HDR + 2 * (size_t)P) * sizeof(uint64_t);
	x->agree_in = coll_mem_alloc(x->agree_blk);
	x->agree_out = coll_mem_alloc(x->agree_blk * P);
	if (x->agree_in == NULL || x->agree_out == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* collective: every rank's first group call gets here, in order */
	rc = spin_coll_allgather(x->comm, x->agree_in, x->agree_out,
				 x->agree_blk, &x->agree);
	if (rc != 0)
		goto fail;
	return 0;
fail:
	coll_mem_free(x->agree_in);
	coll_mem_free(x->agree_out);
	x->agree_in = x->agree_out = NULL;
	x->agree = NULL;
	return rc;
}

/* the first call: agree, then bind to a cached schedule or compile */
static int
group_first(spin_group_t *g)
{
	struct gctx *x = g->x;
	unsigned P = x->comm->size, r, p;
	uint64_t sig = group_sig(g), serial;
	unsigned trigs = group_trigs(g);
	struct gentry *e = cache_find(x, g, sig);
	bool hit = true, mismatch = false, noroom = false, flagdiff = false;
	spin_sched_t *s;
	int rc;

	rc = agree_setup(x);
	if (rc != 0)
		return rc;
	x->agree_in[AG_FLAGS] = g->flags;
	x->agree_in[AG_SERIAL] = e != NULL ? e->serial : 0;
	x->agree_in[AG_ROOM] = cache_room(x, trigs, false);
	group_digests(g, x->agree_in + AG_HDR, x->agree_in + AG_HDR + P);
	rc = spin_sched_start(x->agree);
	if (rc == 0)
		rc = spin_sched_wait(x->agree);
	if (rc != 0)
		return rc;
	/* every rank reads the same records and decides the same */
	serial = x->agree_out[AG_SERIAL];
	for (r = 0; r < P; r++) {
		const uint64_t *a = x->agree_out + r * (x->agree_blk / 8);

		if (a[AG_FLAGS] != x->agree_out[AG_FLAGS])
			flagdiff = true;
		if (a[AG_SERIAL] == 0 || a[AG_SERIAL] != serial)
			hit = false;
		if (a[AG_ROOM] == 0)
			noroom = true;
		for (p = 0; p < P; p++) {
			const uint64_t *b = x->agree_out +
					    p * (x->agree_blk / 8);

			/* r's sends to p against p's receives from r */
			if (a[AG_HDR + p] != b[AG_HDR + P + r])
				mismatch = true;
		}
	}
	if (flagdiff || mismatch) {
		x->st.failed++;
		g->state = GS_DEAD;
		return flagdiff ? -EINVAL : -ENOMSG;
	}
	if (hit) {
		/* every rank named its entry of this serial: e is it */
		x->st.hits++;
		e->refs++;
		lru_front(x, e);
		g->e = e;
		g->state = GS_BOUND;
		return 0;
	}
	if (noroom) {
		x->st.failed++;
		return -ENOSPC;
	}
	x->st.misses++;
	(void)cache_room(x, trigs, true);
	/* the serial every rank gives its compile (they all compile now) */
	serial = x->next_serial++;
	e = calloc(1, sizeof(*e));
	if (e != NULL && g->nops > 0) {
		e->ops = malloc(g->nops * sizeof(*e->ops));
		if (e->ops != NULL)
			memcpy(e->ops, g->ops, g->nops * sizeof(*e->ops));
	}
	/* out of memory here cannot be told to the peers before their
	 * compile: compile anyway (its barrier) and fail after */
	rc = group_build(g, &s);
	if (rc != 0) {
		if (e != NULL)
			free(e->ops);
		free(e);
		return rc;
	}
	if (e == NULL || (g->nops > 0 && e->ops == NULL)) {
		spin_sched_free(s);
		if (e != NULL)
			free(e->ops);
		free(e);
		return -ENOMEM;
	}
	e->serial = serial;
	e->sig = sig;
	e->nops = g->nops;
	e->flags = g->flags;
	e->trigs = trigs;
	e->s = s;
	e->refs = 1;
	lru_front(x, e);
	x->nentries++;
	x->trigs += trigs;
	g->e = e;
	g->state = GS_BOUND;
	return 0;
}

/* ---- running ------------------------------------------------------------------------ */

static void
group_unbind(spin_group_t *g)
{
	struct gentry *e = g->e;

	if (e == NULL)
		return;
	g->e = NULL;
	e->refs--;
	/* an uncached group's schedule goes with it */
	if (e->refs == 0 &&
	    (e->flags & (SPIN_GROUP_NOCACHE | SPIN_GROUP_SIMPLE)))
		entry_free(g->x, e);
}

int
spin_group_call(spin_group_t *g)
{
	int rc;

	if (g == NULL || g->state == GS_REC || g->state == GS_DEAD)
		return -EINVAL;
	if (g->running)
		return -EBUSY;
	if (g->state == GS_BOUND && (g->flags & SPIN_GROUP_NOCACHE)) {
		/* every call compiles afresh (the previous run is over) */
		group_unbind(g);
		g->state = GS_ENDED;
	}
	if (g->state == GS_BOUND && (g->flags & SPIN_GROUP_SIMPLE)) {
		/* built again per call (its schedule runs once): local, the
		 * pairing was checked at the first call */
		spin_sched_t *s;

		rc = group_build(g, &s);
		if (rc != 0)
			return rc;
		spin_sched_free(g->e->s);
		g->e->s = s;
	}
	if (g->state == GS_ENDED) {
		rc = group_first(g);
		if (rc != 0)
			return rc;
		g->x->st.first_calls++;
	}
	rc = spin_sched_start(g->e->s);
	if (rc == 0) {
		g->running = true;
		g->x->st.calls++;
		lru_front(g->x, g->e);
	}
	return rc;
}

int
spin_group_test(spin_group_t *g, bool *done_p)
{
	int rc;

	if (g == NULL || done_p == NULL)
		return -EINVAL;
	if (g->state != GS_BOUND) {
		if (g->state == GS_REC || g->state == GS_DEAD)
			return -EINVAL;
		*done_p = true;
		return 0;
	}
	if (!g->running) {
		*done_p = true;
		return 0;
	}
	rc = spin_sched_test(g->e->s, done_p);
	if (rc != 0 || *done_p)
		g->running = false;
	return rc;
}

int
spin_group_wait(spin_group_t *g)
{
	if (g == NULL)
		return -EINVAL;
	if (g->state != GS_BOUND)
		return g->state == GS_ENDED ? 0 : -EINVAL;
	if (!g->running)
		return 0;
	g->running = false;
	return spin_sched_wait(g->e->s);
}

void
spin_group_free(spin_group_t *g)
{
	if (g == NULL)
		return;
	if (g->e != NULL) {
		if (g->running &&
		    spin_sched_wait_timeout(g->e->s, GROUP_FREE_WAIT_MS) ==
		    -ETIMEDOUT) {
			/* a run that never ends: its schedule goes (a
			 * running instance is cancelled) */
			struct gentry *e = g->e;

			g->e = NULL;
			if (--e->refs == 0)
				entry_free(g->x, e);
		}
		group_unbind(g);
	}
	g->x->live_groups--;
	free(g->ops);
	free(g);
}

/* ---- statistics and release --------------------------------------------------------- */

int
spin_group_cache_stats(spin_coll_comm_t *comm, struct spin_group_stats *st_p)
{
	struct gctx *x;
	struct gentry *e;

	if (comm == NULL || st_p == NULL)
		return -EINVAL;
	x = ctx_get(comm, false);
	memset(st_p, 0, sizeof(*st_p));
	if (x == NULL) {
		st_p->capacity = env_unsigned("SPINNIC_GROUP_CACHE",
					      GROUP_CAP_DEFAULT, 1, 1u << 20);
		st_p->trig_budget = env_unsigned("SPINNIC_GROUP_CACHE_TRIGS",
						 GROUP_TRIGS_DEFAULT, 1,
						 1u << 30);
		return 0;
	}
	*st_p = x->st;
	st_p->entries = x->nentries;
	st_p->trig_ops = x->trigs;
	st_p->capacity = x->cap;
	st_p->trig_budget = x->trig_budget;
	for (e = x->head; e != NULL; e = e->next)
		st_p->idle += e->refs == 0;
	return 0;
}

int
spin_group_cache_release(spin_coll_comm_t *comm)
{
	struct gctx *x, **pp;

	if (comm == NULL)
		return -EINVAL;
	x = ctx_get(comm, false);
	if (x == NULL)
		return 0;
	if (x->live_groups != 0)
		return -EBUSY;
	while (x->head != NULL)
		entry_free(x, x->head);
	spin_sched_free(x->agree);
	coll_mem_free(x->agree_in);
	coll_mem_free(x->agree_out);
	pthread_mutex_lock(&ctxs_lock);
	for (pp = &ctxs; *pp != x; pp = &(*pp)->next)
		;
	*pp = x->next;
	pthread_mutex_unlock(&ctxs_lock);
	free(x);
	return 0;
}
