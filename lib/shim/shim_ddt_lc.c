/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Layout-aware typed receives (paper 001 §IV-C, doc/NOTES.md): the layout
 * cache behind spin_me_append_ddt(). One entry per (NI, serialized type,
 * count), equal types created anew included; bounded in entries and bytes
 * (LRU of idle entries). A post decides with shim_ddt_choose.c and never
 * waits: a layout not yet prepared goes to the host path while a thread of
 * the shim (started at the first need) prepares it (Algorithm 2).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim_ddt.h"
#include "shim_ddt_calib.h"

#define LC_BUCKETS 256u
#define LC_MAX_ENTRIES 256u
#define LC_MAX_BYTES (64ull << 20)
/* a layout whose preparation failed is tried again after so many uses */
#define LC_RETRY_USES 64u
/* keys of recently posted type objects (direct-mapped by address): the
 * fourth slice's key serialized and hashed the whole type, O(blocks) for
 * an indexed one (1.5 ms a post for specfem3d_oc's 32222 blocks in
 * spinnic-bench layout --figure 13); the key is O(1) now (type_hash()),
 * and the memo still saves its classification, since an MPI library
 * posts the same object every iteration */
#define LC_MEMO 16u
/* dropped entries are released by the thread once so many are waiting
 * (or with other work): a miss that evicts does not wake it each time */
#define LC_DEAD_BATCH 16u

/* SPINNIC_DDT_CALIB */
enum { CALIB_AUTO, CALIB_OFF, CALIB_FORCE };
/* Calibration of the aware table: none wanted, wanted (the thread runs
 * it), running, done (a table or none). */
enum { CAL_NONE, CAL_WANTED, CAL_RUNNING, CAL_DONE };

enum lc_state { LC_NEW, LC_QUEUED, LC_PREPARING, LC_READY, LC_FAILED };

struct shim_lc_entry {
	struct shim_lc_entry *hnext;       /* hash chain */
	struct shim_lc_entry *prev, *next; /* LRU, most recent first */
	struct shim_lc_entry *qnext;       /* preparation queue, dead list */
	ptl_handle_ni_t ni;
	uint64_t id;                       /* by creation (trace) */
	uint64_t hash;
	int64_t count;
	struct ddt_type *t;                /* referenced */
	struct shim_ddt_feat feat;         /* in_region as of the first use */
	enum spin_type_strategy nic;       /* the candidate being prepared */
	enum lc_state state;
	bool sync;                         /* static or forced: off built at
					      creation, loaded at the post */
	struct spin_type_offload *host;    /* HOST or CONTIG: no NIC, no lock */
	struct spin_type_offload *off;     /* NIC object (READY or sync) */
	uint64_t bytes;                    /* host bytes of off's arguments */
	uint64_t uses, uses_host, uses_nic, retry_at;
	struct shim_ddt_obs obs;           /* measured times (refinement) */
	double prep_ns;                    /* its last build + load, ns
					      (0: none measured) */
};

static int real_build(ptl_handle_ni_t ni, const struct ddt_type *t,
		      int64_t count, enum spin_type_strategy strat,
		      struct spin_type_offload **off_p);
static int real_load(struct spin_type_offload *off);
static void real_release(struct spin_type_offload *off);

static const struct shim_lc_ops real_ops = {
	real_build, real_load, real_release,
};

/* Guarded by lc.lock (held briefly by posts and by the thread between
 * steps; never across a build, an upload or a release). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;          /* queue or dead list not empty */
	pthread_cond_t idle;          /* a preparation finished */
	bool configured;
	int cfg_err;                  /* bad environment */
	struct shim_lc_config cfg;
	struct shim_lc_ops ops;
	struct shim_lc_entry *bucket[LC_BUCKETS];
	struct shim_lc_entry *lru_head, *lru_tail;
	struct shim_lc_entry *q_head, *q_tail;
	struct shim_lc_entry *dead;
	unsigned ndead;               /* entries on dead since it was taken */
	unsigned preparing;
	bool thread_on, stop;
	pthread_t thread;
	struct shim_lc_stats st;
	uint64_t next_id;
	/* calibration: lc.cfg.costs points at calib.costs once done */
	int calib_mode;
	int calib_state;
	ptl_handle_ni_t calib_ni;
	struct shim_calib calib;
	char calib_path[512];         /* "" : no cache file */
	/* type_hash() of (t, count); t referenced, so that its address
	 * is not reused while it is here */
	struct lc_memo {
		struct ddt_type *t;
		int64_t count;
		uint64_t h;
	} memo[LC_MEMO];
	/* preparation per strategy, learned from the preparations that ran:
	 * ns per block beyond the table's fixed cost (least of the first
	 * three, then a clipped EWMA: shim_ddt_obs_add()) */
	double prep_blk_ns[SPIN_TYPE_COUNT];
	uint32_t prep_blk_n[SPIN_TYPE_COUNT];
	const struct shim_ddt_costs *prep_costs; /* the table they go with */
	/* the completion latency of shim_ddt_ctx_sample() (< 0: none) */
	double lat_ns;
} lc = {
	.lat_ns = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static int
real_build(ptl_handle_ni_t ni, const struct ddt_type *t, int64_t count,
	   enum spin_type_strategy strat, struct spin_type_offload **off_p)
{
	return shim_type_prepare(ni, t, count, (int)strat, off_p);
}

static int
real_load(struct spin_type_offload *off)
{
	int rc;

	pthread_mutex_lock(&shim_type_lock);
	rc = off->loaded ? 0 : shim_type_load(off);
	pthread_mutex_unlock(&shim_type_lock);
	return rc;
}

static void
real_release(struct spin_type_offload *off)
{
	if (spin_type_offload_free(off) != PTL_OK)
		SHIM_ERR("typed-receive layout cache: a released type is "
			 "still posted");
}

/* SPINNIC_DDT_TRACE: one line per decision (lc.lock held: a debugging
 * aid that costs the post a formatted write). The format is documented in
 * doc/NOTES.md ("The trace file") and read by test/tools/ddt_trace_replay.py:
 * change both with it. Times are %.17g, exact when read back. */
static const char *const chooser_names[] = { "aware", "static", "threshold" };
static const char *const gate_names[] = { "second", "eager", "rent" };
static const char *const state_names[] = {
	"new", "queued", "preparing", "ready", "failed",
};

static void
trace_file(const struct shim_lc_trace *t, void *arg)
{
	unsigned ch = (unsigned)lc.cfg.chooser, g = (unsigned)lc.cfg.gate;
	unsigned st = (unsigned)t->state;

	fprintf((FILE *)arg,
		"id %" PRIu64 " use %" PRIu64 " ch %s gate %s table %d"
		" state %s cls %s size %" PRId64 " blocks %" PRId64
		" l %.17g pkts %" PRId64 " region %d ready %d"
		" host %.17g/%u nic %.17g/%u on_nic %d at %" PRIu64 "/%"
		PRIu64 " xn %u built %s cand %s"
		" prepare %d t_host %.17g t_nic %.17g prep %.17g queued %d"
		" explored %d fallback %d -> %s\n", t->id, t->uses,
		ch < 3 ? chooser_names[ch] : "?", g < 3 ? gate_names[g] : "?",
		t->table, st < 5 ? state_names[st] : "?",
		ddt_class_name(t->feat.cls), t->feat.size, t->feat.nblocks,
		t->feat.blk_mean, t->feat.npkts, t->feat.in_region, t->ready,
		t->obs.host_ns, t->obs.n_host, t->obs.nic_ns, t->obs.n_nic,
		t->obs.on_nic, t->obs.host_at, t->obs.nic_at,
		t->obs.explore_n, spin_type_strategy_name(t->obs.built),
		spin_type_strategy_name(t->choice.nic), t->choice.prepare,
		t->choice.t_host, t->choice.t_nic, t->prep_ns, t->queued,
		t->explored, t->fallback, spin_type_strategy_name(t->strat));
}

/* The trace file's first line from this process: ids restart with it. */
static void
trace_header(FILE *f)
{
	fprintf(f, "# spinnic-ddt-trace 3 pid %ld\n", (long)getpid());
}

/* Configuration from the environment (lc.lock held). */
static void
config_env(void)
{
	const char *v = getenv("SPINNIC_DDT_CHOOSER");
	int ch = shim_ddt_chooser_parse(v), forced = shim_type_strategy_env();
	int gate;

	memset(&lc.cfg, 0, sizeof(lc.cfg));
	lc.cfg_err = 0;
	if (ch < 0) {
		SHIM_ERR("SPINNIC_DDT_CHOOSER=%s: expected aware, static or "
			 "threshold", v);
		lc.cfg_err = ch;
	}
	if (forced < 0)
		lc.cfg_err = forced;
	lc.cfg.chooser = ch < 0 ? SHIM_CHOOSER_AWARE : ch;
	v = getenv("SPINNIC_DDT_GATE");
	gate = shim_ddt_gate_parse(v);
	if (gate < 0) {
		SHIM_ERR("SPINNIC_DDT_GATE=%s: expected second, eager or rent",
			 v);
		lc.cfg_err = gate;
	}
	lc.cfg.gate = gate < 0 ? SHIM_GATE_RENT : gate;
	lc.cfg.forced = forced < 0 ? SPIN_TYPE_AUTO : forced;
	lc.cfg.max_entries = LC_MAX_ENTRIES;
	lc.cfg.max_bytes = LC_MAX_BYTES;
	v = getenv("SPINNIC_DDT_TRACE");
	if (v != NULL && *v != '\0') {
		FILE *f = fopen(v, "ae");

		if (f == NULL) {
			SHIM_ERR("SPINNIC_DDT_TRACE=%s: %s", v,
				 strerror(errno));
		} else {
			setvbuf(f, NULL, _IOLBF, 0);
			trace_header(f);
			lc.cfg.trace = trace_file;
			lc.cfg.trace_arg = f;
		}
	}
	v = getenv("SPINNIC_DDT_NICTIME");
	if (v != NULL && strcmp(v, "off") == 0) {
		lc.cfg.no_nic_time = true;
	} else if (v != NULL && *v != '\0' && strcmp(v, "on") != 0) {
		SHIM_ERR("SPINNIC_DDT_NICTIME=%s: expected on or off", v);
		lc.cfg_err = -EINVAL;
	}
	v = getenv("SPINNIC_DDT_PREP_THREAD");
	lc.cfg.inline_prep = v != NULL && strcmp(v, "0") == 0;
	lc.ops = real_ops;
	lc.configured = true;
	v = getenv("SPINNIC_DDT_CALIB");
	if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0) {
		lc.calib_mode = CALIB_AUTO;
	} else if (strcmp(v, "off") == 0) {
		lc.calib_mode = CALIB_OFF;
	} else if (strcmp(v, "force") == 0) {
		lc.calib_mode = CALIB_FORCE;
	} else {
		SHIM_ERR("SPINNIC_DDT_CALIB=%s: expected auto, off or force", v);
		lc.cfg_err = -EINVAL;
		lc.calib_mode = CALIB_OFF;
	}
	/* only the aware chooser has a table to calibrate */
	lc.calib_state = lc.cfg.chooser == SHIM_CHOOSER_AWARE &&
		lc.cfg.forced == SPIN_TYPE_AUTO &&
		lc.calib_mode != CALIB_OFF ? CAL_NONE : CAL_DONE;
}

/* Make c the aware table (lc.lock held). */
static void
calib_publish(const struct shim_calib *c)
{
	lc.calib = *c;
	lc.cfg.costs = &lc.calib.costs;
	lc.cfg.prep_msg_ns = c->prep_msg_ns;
	lc.cfg.prep_block_ns = c->prep_block_ns;
}

/* The calibration job (lc.lock not held): measure through the NIC, save,
 * publish the table. On failure the aware chooser keeps the threshold
 * rule. */
static void
calib_job(ptl_handle_ni_t ni)
{
	struct shim_calib c;
	int rc;

	rc = shim_calib_measure_all(ni, shim_g.payload_size, shim_g.nhpu, &c);
	if (rc == 0) {
		c.key = shim_calib_key(shim_g.payload_size, shim_g.nhpu,
				       shim_g.nic_mem_total);
		if (lc.calib_path[0] != '\0')
			shim_calib_save(lc.calib_path, &c);
		SHIM_DBG("typed receives: calibrated in %.1f ms", c.calib_ms);
	} else {
		SHIM_ERR("typed receives: calibration through the NIC failed; "
			 "paper 001's rule decides");
	}
	pthread_mutex_lock(&lc.lock);
	if (rc == 0)
		calib_publish(&c);
	lc.calib_state = CAL_DONE;
	lc.preparing--;
	pthread_cond_broadcast(&lc.idle);
	pthread_mutex_unlock(&lc.lock);
}

/* Take the calibration job if it is wanted (lc.lock held). @return
 * whether it is the caller's to run */
static bool
calib_take(ptl_handle_ni_t *ni_p)
{
	if (lc.calib_state != CAL_WANTED)
		return false;
	lc.calib_state = CAL_RUNNING;
	lc.preparing++;
	*ni_p = lc.calib_ni;
	return true;
}

/* FNV-1a over 8-byte words, then the tail bytes */
static uint64_t
hash_bytes(const uint8_t *p, size_t n, uint64_t h)
{
	uint64_t w;

	for (; n >= sizeof(w); n -= sizeof(w), p += sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29; /* the word's high bytes reach the low ones */
	}
	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

/* Displacements of an indexed-block layout sampled into its key. */
#define LC_KEY_DISPLS 16

/* Cache key of count elements of t, O(1) in the type's size: the
 * length of its serialized form and what ddt_classify() reads from it
 * (class, size, extent, block length, stride, first offset, blocks and a
 * sample of an indexed block's displacements). Equal types (equal
 * serialized forms) have equal keys; different types sharing a key are
 * told apart by ddt_equal() in entry_find(). The fourth slice hashed the
 * whole serialized form: 0.2-0.6 ms for specfem3d_oc's 32 222
 * displacements on every first post. @return 0 or a negative errno */
static int
type_hash(const struct ddt_type *t, int64_t count, uint64_t *h_p)
{
	struct ddt_class_info ci;
	int64_t w[8 + LC_KEY_DISPLS];
	ssize_t n = ddt_serialize(t, NULL, 0);
	size_t k = 0;
	int64_t i;

	if (n <= 0 || ddt_classify(t, count, &ci) != 0)
		return -EINVAL;
	w[k++] = (int64_t)n;
	w[k++] = count;
	w[k++] = ddt_size(t);
	w[k++] = (int64_t)ci.cls;
	w[k++] = ci.extent;
	w[k++] = ci.blocklen;
	/* a negative first offset: shifted as the bits it is */
	w[k++] = (int64_t)((uint64_t)ci.stride ^
			   ((uint64_t)ci.first_off << 32));
	w[k++] = ci.nblocks;
	if (ci.cls == DDT_CLASS_INDEXED_BLOCK && ci.displs != NULL &&
	    ci.nblocks > 0)
		for (i = 0; i < LC_KEY_DISPLS; i++)
			w[k++] = ci.displs[i * (ci.nblocks - 1) /
					   (LC_KEY_DISPLS - 1)];
	*h_p = hash_bytes((const uint8_t *)w, k * sizeof(w[0]),
			  0xcbf29ce484222325ull);
	return 0;
}

static void
lru_unlink(struct shim_lc_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		lc.lru_head = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	else
		lc.lru_tail = e->prev;
	e->prev = e->next = NULL;
}

static void
lru_push(struct shim_lc_entry *e)
{
	e->prev = NULL;
	e->next = lc.lru_head;
	if (lc.lru_head != NULL)
		lc.lru_head->prev = e;
	else
		lc.lru_tail = e;
	lc.lru_head = e;
}

static void
hash_unlink(struct shim_lc_entry *e)
{
	struct shim_lc_entry **pp = &lc.bucket[e->hash % LC_BUCKETS];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
}

static bool
off_posted(const struct spin_type_offload *o)
{
	return o != NULL && __atomic_load_n(&o->posted, __ATOMIC_ACQUIRE) != 0;
}

/* Whether e may leave the cache: no posted receive (they are taken under
 * lc.lock only), no preparation queued or running. */
static bool
entry_idle(const struct shim_lc_entry *e)
{
	return e->state != LC_QUEUED && e->state != LC_PREPARING &&
		!off_posted(e->host) && !off_posted(e->off);
}

/* Unlink e onto the dead list (lc.lock held). */
static void
entry_drop(struct shim_lc_entry *e)
{
	hash_unlink(e);
	lru_unlink(e);
	lc.st.entries--;
	lc.st.bytes -= e->bytes;
	e->qnext = lc.dead;
	lc.dead = e;
	lc.ndead++;
}

/* Drop idle entries from the LRU tail while over the bounds (lc.lock
 * held). */
static void
entries_trim(void)
{
	struct shim_lc_entry *e = lc.lru_tail, *p;

	while (e != NULL && (lc.st.entries > lc.cfg.max_entries ||
			     lc.st.bytes > lc.cfg.max_bytes)) {
		p = e->prev;
		if (entry_idle(e)) {
			entry_drop(e);
			lc.st.evicted++;
		}
		e = p;
	}
}

static void
entry_free(struct shim_lc_entry *e)
{
	if (e->off != NULL)
		lc.ops.release(e->off);
	if (e->host != NULL)
		real_release(e->host);
	ddt_free(e->t);
	free(e);
}

/* Release the dead list (lc.lock not held). */
static void
dead_free(struct shim_lc_entry *d)
{
	struct shim_lc_entry *n;

	for (; d != NULL; d = n) {
		n = d->qnext;
		entry_free(d);
	}
}

/* Prepare one queued entry: build (if not built) and load its NIC
 * object, then publish it. Called without lc.lock, by the thread or
 * inline. */
static double
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* A measured preparation of e (lc.lock held): the entry's own figure and
 * its strategy's per-block cost beyond the table's fixed one. */
static void
prep_learn(struct shim_lc_entry *e, double ns)
{
	double blk;

	e->prep_ns = ns > 1.0 ? ns : 1.0;
	if ((unsigned)e->nic >= SPIN_TYPE_COUNT)
		return;
	blk = (ns - lc.cfg.prep_msg_ns) / (double)(e->feat.nblocks > 0 ?
						   e->feat.nblocks : 1);
	(void)shim_ddt_obs_add(&lc.prep_blk_ns[e->nic],
			       &lc.prep_blk_n[e->nic], blk > 0.0 ? blk : 0.0);
}

static void
entry_prepare(struct shim_lc_entry *e)
{
	struct spin_type_offload *off = e->off;
	bool built = off == NULL;
	double a = mono_ns();
	int rc = 0;

	/* e->off and e->nic change only under PREPARING, which is ours */
	if (off == NULL)
		rc = lc.ops.build(e->ni, e->t, e->count, e->nic, &off);
	if (rc == 0)
		rc = lc.ops.load(off);
	a = mono_ns() - a;
	pthread_mutex_lock(&lc.lock);
	/* a first preparation (build and load) measured: a load again
	 * after the NIC LRU took it back costs less */
	if (rc == 0 && built)
		prep_learn(e, a);
	if (off != NULL && e->off == NULL) {
		e->off = off;
		e->bytes = off->args_len + off->list_len;
		lc.st.bytes += e->bytes;
	}
	if (rc == 0) {
		e->state = LC_READY;
		lc.st.prep_done++;
	} else {
		SHIM_DBG("typed receive: preparing %s failed (%d): host path",
			 spin_type_strategy_name(e->nic), rc);
		e->state = LC_FAILED;
		e->retry_at = e->uses + LC_RETRY_USES;
		lc.st.prep_failed++;
	}
	lc.preparing--;
	entries_trim();
	pthread_cond_broadcast(&lc.idle);
	pthread_mutex_unlock(&lc.lock);
}

/* Take the next queued entry (lc.lock held). */
static struct shim_lc_entry *
queue_pop(void)
{
	struct shim_lc_entry *e = lc.q_head;

	if (e == NULL)
		return NULL;
	lc.q_head = e->qnext;
	if (lc.q_head == NULL)
		lc.q_tail = NULL;
	e->qnext = NULL;
	e->state = LC_PREPARING;
	lc.preparing++;
	return e;
}

/* Algorithm 2: wait for work, prepare FIFO, release dropped entries. */
static void *
prep_thread(void *arg)
{
	struct shim_lc_entry *e, *d;

	(void)arg;
	ptl_handle_ni_t ni;

	pthread_mutex_lock(&lc.lock);
	while (!lc.stop) {
		if (calib_take(&ni)) {
			/* first: preparations after it use its table */
			pthread_mutex_unlock(&lc.lock);
			calib_job(ni);
			pthread_mutex_lock(&lc.lock);
			continue;
		}
		d = lc.dead;
		lc.dead = NULL;
		lc.ndead = 0;
		e = queue_pop();
		if (d == NULL && e == NULL) {
			pthread_cond_wait(&lc.work, &lc.lock);
			continue;
		}
		pthread_mutex_unlock(&lc.lock);
		dead_free(d);
		if (e != NULL)
			entry_prepare(e);
		pthread_mutex_lock(&lc.lock);
		pthread_cond_broadcast(&lc.idle);
	}
	pthread_mutex_unlock(&lc.lock);
	return NULL;
}

/* Hand work to the thread, starting it at the first need (lc.lock
 * held). Inline mode: the next post or shim_lc_drain() does it. */
static void
work_signal(void)
{
	if (lc.cfg.inline_prep)
		return;
	if (!lc.thread_on) {
		if (pthread_create(&lc.thread, NULL, prep_thread, NULL) != 0) {
			/* no thread: prepare inline from now on */
			SHIM_ERR("typed receive: no preparation thread; "
				 "preparing inline");
			lc.cfg.inline_prep = true;
			return;
		}
		lc.thread_on = true;
		/* told apart in perf and top */
		pthread_setname_np(lc.thread, "spinnic-ddtprep");
	}
	pthread_cond_signal(&lc.work);
}

static void
queue_push(struct shim_lc_entry *e)
{
	e->state = LC_QUEUED;
	e->qnext = NULL;
	if (lc.q_tail != NULL)
		lc.q_tail->qnext = e;
	else
		lc.q_head = e;
	lc.q_tail = e;
	lc.st.prep_queued++;
	work_signal();
}

/* Inline mode: prepare what is queued and release what was dropped
 * (lc.lock not held). */
static void
inline_run(void)
{
	struct shim_lc_entry *e, *d;
	ptl_handle_ni_t ni;

	for (;;) {
		pthread_mutex_lock(&lc.lock);
		if (calib_take(&ni)) {
			pthread_mutex_unlock(&lc.lock);
			calib_job(ni);
			continue;
		}
		d = lc.dead;
		lc.dead = NULL;
		lc.ndead = 0;
		e = queue_pop();
		pthread_mutex_unlock(&lc.lock);
		if (d == NULL && e == NULL)
			return;
		dead_free(d);
		if (e != NULL)
			entry_prepare(e);
	}
}

/* The entry of (ni, hash, count) equal to t (lc.lock held). */
static struct shim_lc_entry *
entry_find(ptl_handle_ni_t ni, uint64_t h, const struct ddt_type *t,
	   int64_t count)
{
	struct shim_lc_entry *e;

	for (e = lc.bucket[h % LC_BUCKETS]; e != NULL; e = e->hnext)
		if (e->ni == ni && e->hash == h && e->count == count &&
		    (e->t == t || ddt_equal(e->t, t) == 1))
			return e;
	return NULL;
}

/* A new entry with its host object (and, static or forced, its NIC
 * object: built at the post as before). lc.lock not held.
 * @return 0 or a negative errno */
static int
entry_create(ptl_handle_ni_t ni, const struct ddt_type *t, int64_t count,
	     uint64_t h, bool in_region, const struct shim_lc_config *cfg,
	     struct shim_lc_entry **e_p)
{
	struct shim_lc_entry *e = calloc(1, sizeof(*e));
	struct shim_ddt_choice ch;
	int rc;

	if (e == NULL)
		return -ENOMEM;
	e->ni = ni;
	e->hash = h;
	e->count = count;
	rc = shim_ddt_feat_get(t, count, shim_g.payload_size, in_region,
			       &e->feat);
	if (rc == 0)
		rc = shim_type_prepare(ni, t, count,
				       e->feat.size == 0 ||
				       e->feat.cls == DDT_CLASS_CONTIG ?
				       SPIN_TYPE_CONTIG : SPIN_TYPE_HOST,
				       &e->host);
	e->sync = cfg->chooser == SHIM_CHOOSER_STATIC ||
		cfg->forced != SPIN_TYPE_AUTO;
	if (rc == 0 && e->sync) {
		/* today's rule: the strategy is fixed now (a forced one
		 * wins), the upload happens at the post */
		rc = lc.ops.build(ni, t, count,
				  (enum spin_type_strategy)cfg->forced,
				  &e->off);
		if (rc == 0) {
			e->nic = e->off->strat;
			e->bytes = e->off->args_len + e->off->list_len;
			e->state = LC_READY;
		}
	}
	if (rc != 0) {
		if (e->host != NULL)
			real_release(e->host);
		free(e);
		return rc;
	}
	shim_ddt_choose((enum shim_ddt_chooser)cfg->chooser, cfg->costs,
			&e->feat, false, &ch);
	if (!e->sync)
		e->nic = ch.nic;
	e->t = ddt_ref((struct ddt_type *)(uintptr_t)t);
	*e_p = e;
	return 0;
}

/* Predicted preparation of e's NIC candidate, ns (0: unknown): its own
 * measured one; else the table's fixed cost plus per block the cost its
 * strategy showed in the preparations that ran; before any, the table's
 * per-block figure (iovec's list) for every strategy but the specialized
 * handlers (arguments of a fixed size). */
static double
entry_prep_ns(const struct shim_lc_entry *e)
{
	double ns = lc.cfg.prep_msg_ns, blk = lc.cfg.prep_block_ns;

	if (e->prep_ns > 0.0)
		return e->prep_ns;
	if ((unsigned)e->nic < SPIN_TYPE_COUNT && lc.prep_blk_n[e->nic] > 0)
		blk = lc.prep_blk_ns[e->nic];
	else if (e->nic == SPIN_TYPE_SPECIALIZED)
		blk = 0.0;
	return ns + blk * (double)e->feat.nblocks;
}

/* Decide a post on entry e and take the posted reference (lc.lock
 * held). */
static void
entry_use(struct shim_lc_entry *e, bool in_region, struct shim_lc_use *u)
{
	struct shim_ddt_feat f = e->feat;
	struct shim_lc_trace tr;
	struct shim_ddt_choice ch;
	struct spin_type_offload *o;
	bool explored = false, queued = false;
	double prep_ns;

	e->uses++;
	u->e = e;
	u->need_load = false;
	u->ctx = SPIN_CTX_NONE;
	if (e->sync && e->off != NULL) {
		u->off = e->off;
		u->strat = e->off->strat;
		u->need_load = true;
		__atomic_fetch_add(&u->off->posted, 1, __ATOMIC_ACQ_REL);
		e->uses_nic++;
		return;
	}
	f.in_region = in_region;
	/* the candidate is chosen again only while nothing is built */
	e->obs.built = e->off == NULL &&
		(e->state == LC_NEW || e->state == LC_FAILED) ?
		SPIN_TYPE_AUTO : e->nic;
	shim_ddt_choose_obs((enum shim_ddt_chooser)lc.cfg.chooser,
			    lc.cfg.costs, &f, &e->obs, e->state == LC_READY,
			    &ch);
	if (lc.cfg.trace != NULL) {
		memset(&tr, 0, sizeof(tr));
		tr.id = e->id;
		tr.uses = e->uses;
		tr.feat = f;
		tr.obs = e->obs;
		tr.ready = e->state == LC_READY;
		tr.state = (int)e->state;
		tr.table = lc.cfg.costs != NULL;
		tr.choice = ch;
	}
	/* exploration by age (aware with a table, the candidate prepared):
	 * the path not taken, once its estimate is old (shim_ddt_explore());
	 * a flip of the side resets the period, a close call caps it */
	explored = shim_ddt_explore(&e->obs, ch.strat != SPIN_TYPE_HOST,
				    e->uses, lc.cfg.costs != NULL &&
				    lc.cfg.chooser == SHIM_CHOOSER_AWARE &&
				    e->state == LC_READY && e->off != NULL &&
				    e->off->strat == e->nic,
				    shim_ddt_close(&ch));
	/* the side chosen, before exploration or a fallback */
	e->obs.on_nic = ch.strat != SPIN_TYPE_HOST;
	/* a table that came after the entry (calibration) may name another
	 * candidate: taken while nothing is built */
	if (!e->sync && e->off == NULL && ch.nic != SPIN_TYPE_HOST &&
	    (e->state == LC_NEW || e->state == LC_FAILED))
		e->nic = ch.nic;
	/* of the candidate the gate would queue (the one just taken) */
	prep_ns = entry_prep_ns(e);
	tr.prep_ns = prep_ns;
	if (explored) {
		/* the other path, to measure its estimate again */
		ch.strat = ch.strat == SPIN_TYPE_HOST ? e->nic :
			SPIN_TYPE_HOST;
		lc.st.explores++;
	}
	u->strat = ch.strat;
	o = e->off;
	if (ch.strat != SPIN_TYPE_HOST && ch.strat != SPIN_TYPE_CONTIG &&
	    o != NULL && ch.strat == o->strat &&
	    pthread_mutex_trylock(&shim_type_lock) == 0) {
		/* a trylock: an upload in progress sends this post to the
		 * host rather than making it wait */
		if (o->loaded) {
			shim_type_lru_touch(o);
			__atomic_fetch_add(&o->posted, 1, __ATOMIC_ACQ_REL);
			u->ctx = o->ctx;
		}
		pthread_mutex_unlock(&shim_type_lock);
		if (u->ctx != SPIN_CTX_NONE) {
			u->off = o;
			e->uses_nic++;
			lc.st.nic_choices++;
			goto trace;
		}
		/* NIC memory taken back (LRU): load again in the
		 * background */
		if (e->state == LC_READY)
			queue_push(e);
	}
	tr.fallback = ch.strat != SPIN_TYPE_HOST &&
		ch.strat != SPIN_TYPE_CONTIG;
	/* a layout used once never pays: by default the preparation is
	 * queued from the second use (SPINNIC_DDT_GATE) */
	if ((e->state == LC_NEW ||
	     (e->state == LC_FAILED && e->uses >= e->retry_at)) &&
	    shim_ddt_gate_open((enum shim_ddt_chooser)lc.cfg.chooser,
			       (enum shim_ddt_gate)lc.cfg.gate, &ch, e->uses,
			       prep_ns)) {
		queue_push(e);
		queued = true;
	}
	if (e->state == LC_QUEUED || e->state == LC_PREPARING)
		lc.st.host_while_preparing++;
	u->off = e->host;
	u->strat = e->host->strat;
	__atomic_fetch_add(&e->host->posted, 1, __ATOMIC_ACQ_REL);
	e->uses_host++;
	lc.st.host_choices++;
trace:
	/* the path posted will give a sample: its age starts again */
	if (u->strat == SPIN_TYPE_HOST)
		e->obs.host_at = e->uses;
	else if (u->strat != SPIN_TYPE_CONTIG)
		e->obs.nic_at = e->uses;
	if (lc.cfg.trace != NULL) {
		tr.explored = explored;
		tr.queued = queued;
		tr.strat = u->strat;
		lc.cfg.trace(&tr, lc.cfg.trace_arg);
	}
}

/* The first aware post: the cache file if it is valid (a few µs),
 * else the calibration is handed to the thread (lc.lock not held;
 * calib_state RUNNING keeps other posts out). */
static void
calib_start(ptl_handle_ni_t ni)
{
	uint64_t key = shim_calib_key(shim_g.payload_size, shim_g.nhpu,
				      shim_g.nic_mem_total);
	struct shim_calib c;
	bool have = false;

	if (shim_calib_path(key, lc.calib_path, sizeof(lc.calib_path)) != 0)
		lc.calib_path[0] = '\0';
	if (lc.calib_mode != CALIB_FORCE && lc.calib_path[0] != '\0')
		have = shim_calib_load(lc.calib_path, key, &c) == 0;
	pthread_mutex_lock(&lc.lock);
	if (have) {
		calib_publish(&c);
		lc.calib_state = CAL_DONE;
	} else {
		lc.calib_ni = ni;
		lc.calib_state = CAL_WANTED;
		work_signal();
	}
	pthread_mutex_unlock(&lc.lock);
}

int
shim_lc_acquire(ptl_handle_ni_t ni, const struct ddt_type *t, int64_t count,
		const void *buf, struct shim_lc_use *u_p)
{
	const struct shim_region *rg = &shim_g.region;
	bool in_region = rg->base != NULL && (const uint8_t *)buf >= rg->base &&
		(const uint8_t *)buf < rg->base + rg->size;
	struct shim_lc_entry *e, *n = NULL, *d;
	struct lc_memo *m = &lc.memo[(((uintptr_t)t >> 4) ^
				      (uint64_t)count) % LC_MEMO];
	struct ddt_type *old = NULL;
	struct shim_lc_config cfg;
	bool memo_hit;
	uint64_t h = 0;
	int rc;

	pthread_mutex_lock(&lc.lock);
	memo_hit = m->t == t && m->count == count;
	if (memo_hit)
		h = m->h;
	if (!lc.configured)
		config_env();
	rc = lc.cfg_err;
	if (rc == 0 && lc.calib_state == CAL_NONE) {
		lc.calib_state = CAL_RUNNING; /* this thread looks for a file */
		pthread_mutex_unlock(&lc.lock);
		calib_start(ni);
		pthread_mutex_lock(&lc.lock);
	}
	cfg = lc.cfg;
	pthread_mutex_unlock(&lc.lock);
	if (rc != 0)
		return rc;
	if (!memo_hit) {
		rc = type_hash(t, count, &h);
		if (rc != 0)
			return rc;
	}
	if (cfg.inline_prep)
		inline_run();
	for (;;) {
		pthread_mutex_lock(&lc.lock);
		e = entry_find(ni, h, t, count);
		if (e != NULL || n != NULL)
			break;
		pthread_mutex_unlock(&lc.lock);
		/* a miss builds outside the lock: features, host object */
		rc = entry_create(ni, t, count, h, in_region, &cfg, &n);
		if (rc != 0)
			return rc;
	}
	if (e == NULL) {
		e = n;
		n = NULL;
		e->hnext = lc.bucket[h % LC_BUCKETS];
		lc.bucket[h % LC_BUCKETS] = e;
		lru_push(e);
		e->id = ++lc.next_id;
		lc.st.entries++;
		lc.st.bytes += e->bytes;
		lc.st.misses++;
	} else {
		lru_unlink(e);
		lru_push(e);
		lc.st.hits++;
	}
	entry_use(e, in_region, u_p);
	if (!memo_hit && m->t != t) {
		old = m->t;
		m->t = ddt_ref((struct ddt_type *)(uintptr_t)t);
		m->count = count;
		m->h = h;
	}
	if (n != NULL) {
		/* another thread created it meanwhile: released off the
		 * post path like a dropped entry */
		n->qnext = lc.dead;
		lc.dead = n;
		lc.ndead++;
	}
	entries_trim();
	d = NULL;
	if (lc.dead != NULL && lc.cfg.inline_prep) {
		d = lc.dead;
		lc.dead = NULL;
		lc.ndead = 0;
	} else if (lc.ndead >= LC_DEAD_BATCH) {
		work_signal();
	}
	pthread_mutex_unlock(&lc.lock);
	dead_free(d);
	ddt_free(old);
	return 0;
}

/* Drop the hash memo's references (lc.lock held); @return the types to
 * ddt_free() after it, into @p out (LC_MEMO slots) */
static void
memo_clear(struct ddt_type **out)
{
	for (unsigned i = 0; i < LC_MEMO; i++) {
		out[i] = lc.memo[i].t;
		lc.memo[i].t = NULL;
	}
}

static void
memo_free(struct ddt_type **v)
{
	for (unsigned i = 0; i < LC_MEMO; i++)
		ddt_free(v[i]);
}

void
shim_lc_drain(void)
{
	pthread_mutex_lock(&lc.lock);
	if (!lc.configured || lc.cfg.inline_prep || !lc.thread_on) {
		pthread_mutex_unlock(&lc.lock);
		inline_run();
		return;
	}
	while (lc.q_head != NULL || lc.preparing > 0 || lc.dead != NULL ||
	       lc.calib_state == CAL_WANTED) {
		pthread_cond_signal(&lc.work);
		pthread_cond_wait(&lc.idle, &lc.lock);
	}
	pthread_mutex_unlock(&lc.lock);
}

int
shim_lc_flush(ptl_handle_ni_t ni)
{
	struct ddt_type *mv[LC_MEMO];
	struct shim_lc_entry *e, *n;
	unsigned i;
	int rc = 0;

	shim_lc_drain();
	pthread_mutex_lock(&lc.lock);
	memo_clear(mv);
	for (i = 0; i < LC_BUCKETS; i++)
		for (e = lc.bucket[i]; e != NULL; e = n) {
			n = e->hnext;
			if (e->ni != ni)
				continue;
			if (entry_idle(e))
				entry_drop(e);
			else
				rc = -EBUSY;
		}
	e = lc.dead;
	lc.dead = NULL;
	lc.ndead = 0;
	pthread_mutex_unlock(&lc.lock);
	dead_free(e);
	memo_free(mv);
	return rc;
}

void
shim_lc_configure(const struct shim_lc_config *c)
{
	struct ddt_type *mv[LC_MEMO];
	struct shim_lc_entry *e, *n;
	unsigned i;

	shim_lc_drain();
	pthread_mutex_lock(&lc.lock);
	memo_clear(mv);
	/* a started thread stays for a configuration that uses one (it is
	 * idle after the drain): a benchmark switching choosers does not
	 * start it again on a timed post */
	if (lc.thread_on && (c == NULL || c->inline_prep)) {
		lc.stop = true;
		pthread_cond_broadcast(&lc.work);
		pthread_mutex_unlock(&lc.lock);
		pthread_join(lc.thread, NULL);
		pthread_mutex_lock(&lc.lock);
		lc.thread_on = false;
		lc.stop = false;
	}
	for (i = 0; i < LC_BUCKETS; i++)
		for (e = lc.bucket[i]; e != NULL; e = n) {
			n = e->hnext;
			entry_drop(e);
		}
	e = lc.dead;
	lc.dead = NULL;
	lc.ndead = 0;
	pthread_mutex_unlock(&lc.lock);
	dead_free(e);
	memo_free(mv);
	pthread_mutex_lock(&lc.lock);
	memset(&lc.st, 0, sizeof(lc.st));
	lc.lat_ns = -1;
	lc.next_id = 0;
	lc.configured = c != NULL;
	lc.cfg_err = 0;
	/* an injected configuration brings its table (or none) */
	lc.calib_state = CAL_DONE;
	/* what preparations cost is learned per table and real NIC: a new
	 * table or injected operations (tests) start again */
	if (c != NULL && (c->ops != NULL ||
			  (c->costs != NULL && c->costs != lc.prep_costs))) {
		memset(lc.prep_blk_ns, 0, sizeof(lc.prep_blk_ns));
		memset(lc.prep_blk_n, 0, sizeof(lc.prep_blk_n));
		if (c->costs != NULL)
			lc.prep_costs = c->costs;
	}
	if (c != NULL) {
		lc.cfg = *c;
		lc.ops = c->ops != NULL ? *c->ops : real_ops;
		/* ids start again: a trace file says so (found by
		 * ddt_trace_replay.py on a benchmark's trace) */
		if (lc.cfg.trace == trace_file && lc.cfg.trace_arg != NULL)
			trace_header(lc.cfg.trace_arg);
	}
	pthread_mutex_unlock(&lc.lock);
}

void
shim_lc_config_get(struct shim_lc_config *c_p)
{
	pthread_mutex_lock(&lc.lock);
	*c_p = lc.cfg;
	pthread_mutex_unlock(&lc.lock);
}

void
shim_lc_stats_get(struct shim_lc_stats *s_p)
{
	pthread_mutex_lock(&lc.lock);
	*s_p = lc.st;
	pthread_mutex_unlock(&lc.lock);
}

void
shim_lc_observe(struct shim_lc_entry *e, bool nic, double ns)
{
	bool ok;

	pthread_mutex_lock(&lc.lock);
	ok = shim_ddt_obs_sample(&e->obs, nic, ns, e->uses);
	if (ok)
		lc.st.observed++;
	pthread_mutex_unlock(&lc.lock);
}

void
shim_lc_observe_times(struct shim_lc_entry *e, bool nic, double ptc_ns,
		      double nic_ns, double unpack_ns)
{
	double ns;
	bool ok, used;

	pthread_mutex_lock(&lc.lock);
	if (lc.cfg.no_nic_time)
		nic_ns = 0;
	ns = shim_ddt_ctx_sample(ptc_ns, nic_ns, unpack_ns, &lc.lat_ns, &used);
	if (e == NULL) {
		/* a receive no estimate is about: the latency only */
		pthread_mutex_unlock(&lc.lock);
		return;
	}
	ok = shim_ddt_obs_sample(&e->obs, nic, ns, e->uses);
	if (ok) {
		lc.st.observed++;
		if (used)
			lc.st.nic_timed++;
	}
	pthread_mutex_unlock(&lc.lock);
}

double
shim_lc_latency(void)
{
	double v;

	pthread_mutex_lock(&lc.lock);
	v = lc.lat_ns;
	pthread_mutex_unlock(&lc.lock);
	return v;
}

bool
shim_lc_calibrated(struct shim_calib *c_p)
{
	bool ok;

	pthread_mutex_lock(&lc.lock);
	ok = lc.cfg.costs == &lc.calib.costs;
	if (ok && c_p != NULL)
		*c_p = lc.calib;
	pthread_mutex_unlock(&lc.lock);
	return ok;
}
