/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Type expressions (DESIGN §7): parser and printer.
 *
 *   type := base | ctor '(' args ')' '[' type { ',' type } ']'
 *
 * Whitespace is ignored between tokens. Error positions are byte offsets
 * from 0 into the expression.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddt_internal.h"

static __thread char parse_err[160];

struct parser {
	const char *s;
	size_t p;
	int err;     /* positive errno / DDT_E_* */
	int nest;
};

struct list {
	int64_t *v;
	int64_t n, cap;
};

static void perr(struct parser *ps, int err, size_t pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err)
		return;
	ps->err = err;
	n = snprintf(parse_err, sizeof(parse_err), "at position %zu: ", pos);
	va_start(ap, fmt);
	vsnprintf(parse_err + n, sizeof(parse_err) - (size_t)n, fmt, ap);
	va_end(ap);
}

static void ws(struct parser *ps)
{
	while (ps->s[ps->p] == ' ' || ps->s[ps->p] == '\t' ||
	       ps->s[ps->p] == '\n' || ps->s[ps->p] == '\r')
		ps->p++;
}

static bool accept(struct parser *ps, char c)
{
	ws(ps);
	if (ps->s[ps->p] != c)
		return false;
	ps->p++;
	return true;
}

static bool expect(struct parser *ps, char c)
{
	if (accept(ps, c))
		return true;
	perr(ps, DDT_E_SYNTAX, ps->p, "expected '%c'", c);
	return false;
}

static bool number(struct parser *ps, int64_t *v)
{
	size_t start;
	bool neg = false;
	int64_t r = 0;

	ws(ps);
	start = ps->p;
	if (ps->s[ps->p] == '-' || ps->s[ps->p] == '+')
		neg = ps->s[ps->p++] == '-';
	if (ps->s[ps->p] < '0' || ps->s[ps->p] > '9') {
		perr(ps, DDT_E_SYNTAX, start, "expected a number");
		return false;
	}
	while (ps->s[ps->p] >= '0' && ps->s[ps->p] <= '9') {
		int d = ps->s[ps->p++] - '0';

		if (__builtin_mul_overflow(r, 10, &r) ||
		    __builtin_add_overflow(r, neg ? -d : d, &r)) {
			perr(ps, DDT_E_OVERFLOW, start,
			     "number out of 64-bit range");
			return false;
		}
	}
	*v = r;
	return true;
}

static bool list_push(struct parser *ps, struct list *l, int64_t v)
{
	if (l->n == l->cap) {
		int64_t nc = l->cap ? l->cap * 2 : 8;
		int64_t *nv = realloc(l->v, (size_t)nc * sizeof(*nv));

		if (nv == NULL) {
			perr(ps, ENOMEM, ps->p, "out of memory");
			return false;
		}
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = v;
	return true;
}

/* a possibly empty comma-separated list of numbers, ended by `end` (not
 * consumed) */
static bool numlist(struct parser *ps, struct list *l, char end)
{
	int64_t v;

	ws(ps);
	if (ps->s[ps->p] == end)
		return true;
	do {
		if (!number(ps, &v) || !list_push(ps, l, v))
			return false;
	} while (accept(ps, ','));
	ws(ps);
	if (ps->s[ps->p] != end) {
		perr(ps, DDT_E_SYNTAX, ps->p, "expected ',' or '%c'", end);
		return false;
	}
	return true;
}

static const char *const ctor_names[] = {
	"contig", "vector", "hvector", "indexed", "hindexed",
	"indexed_block", "hindexed_block", "struct", "subarray", "resized",
};

static struct ddt_type *type(struct parser *ps);

static struct ddt_type *ctor_fail(struct parser *ps, size_t pos,
				  const char *name)
{
	int e = errno;

	perr(ps, e, pos, "%s: %s", name, ddt_strerror(e));
	return NULL;
}

static struct ddt_type *type(struct parser *ps)
{
	struct list a = { 0 }, b = { 0 }, c = { 0 };
	struct ddt_type **tv = NULL, *t = NULL;
	int64_t ntv = 0, x = 0, y = 0, z = 0;
	size_t start, namelen = 0;
	char order = 0;
	int ctor = -1;

	ws(ps);
	start = ps->p;
	while ((ps->s[ps->p] >= 'a' && ps->s[ps->p] <= 'z') ||
	       ps->s[ps->p] == '_' ||
	       (namelen > 0 && ps->s[ps->p] >= '0' && ps->s[ps->p] <= '9'))
		ps->p++, namelen++;
	for (int i = 0; i < DDT_BASE_COUNT; i++) {
		const char *n = ddt_base_name(i);

		if (strlen(n) == namelen && !strncmp(n, ps->s + start, namelen))
			return ddt_base(i);
	}
	for (int i = 0; i < (int)(sizeof(ctor_names) / sizeof(*ctor_names));
	     i++)
		if (strlen(ctor_names[i]) == namelen &&
		    !strncmp(ctor_names[i], ps->s + start, namelen))
			ctor = i;
	if (ctor < 0) {
		perr(ps, DDT_E_SYNTAX, start, "expected a type name");
		return NULL;
	}
	if (++ps->nest >= DDT_MAX_DEPTH) {
		perr(ps, DDT_E_DEPTH, start, "nesting deeper than %d",
		     DDT_MAX_DEPTH);
		return NULL;
	}
	if (!expect(ps, '('))
		goto out;
	switch (ctor) {
	case 0: /* contig(count) */
		if (!number(ps, &x))
			goto out;
		break;
	case 1: case 2: /* (h)vector(count, blocklen, stride) */
	case 9:         /* resized(lb, extent) */
		if (!number(ps, &x) || !expect(ps, ',') || !number(ps, &y))
			goto out;
		if (ctor != 9 && (!expect(ps, ',') || !number(ps, &z)))
			goto out;
		break;
	case 3: case 4: case 7: /* lists bl; displs */
		if (!numlist(ps, &a, ';') || !expect(ps, ';') ||
		    !numlist(ps, &b, ')'))
			goto out;
		if (a.n != b.n) {
			perr(ps, DDT_E_SYNTAX, ps->p,
			     "expected %ld displacements", (long)a.n);
			goto out;
		}
		break;
	case 5: case 6: /* blocklen; displs */
		if (!number(ps, &x) || !expect(ps, ';') ||
		    !numlist(ps, &b, ')'))
			goto out;
		break;
	case 8: /* sizes; subsizes; starts; C|F */
		if (!numlist(ps, &a, ';') || !expect(ps, ';') ||
		    !numlist(ps, &b, ';') || !expect(ps, ';') ||
		    !numlist(ps, &c, ';') || !expect(ps, ';'))
			goto out;
		ws(ps);
		order = ps->s[ps->p];
		if (order != 'C' && order != 'F') {
			perr(ps, DDT_E_SYNTAX, ps->p, "expected C or F");
			goto out;
		}
		ps->p++;
		if (a.n != b.n || a.n != c.n) {
			perr(ps, DDT_E_SYNTAX, ps->p,
			     "expected %ld subsizes and starts", (long)a.n);
			goto out;
		}
		break;
	}
	if (!expect(ps, ')') || !expect(ps, '['))
		goto out;
	do {
		struct ddt_type **nt;

		nt = realloc(tv, (size_t)(ntv + 1) * sizeof(*tv));
		if (nt == NULL) {
			perr(ps, ENOMEM, ps->p, "out of memory");
			goto out;
		}
		tv = nt;
		tv[ntv] = type(ps);
		if (tv[ntv] == NULL)
			goto out;
		ntv++;
	} while (ctor == 7 && accept(ps, ','));
	if (!expect(ps, ']'))
		goto out;
	if (ctor == 7 && ntv != a.n && !(a.n == 0 && ntv == 1)) {
		perr(ps, DDT_E_SYNTAX, ps->p, "expected %ld member types",
		     (long)a.n);
		goto out;
	}
	switch (ctor) {
	case 0: t = ddt_contiguous(x, tv[0]); break;
	case 1: t = ddt_vector(x, y, z, tv[0]); break;
	case 2: t = ddt_hvector(x, y, z, tv[0]); break;
	case 3: t = ddt_indexed(a.n, a.v, b.v, tv[0]); break;
	case 4: t = ddt_hindexed(a.n, a.v, b.v, tv[0]); break;
	case 5: t = ddt_indexed_block(b.n, x, b.v, tv[0]); break;
	case 6: t = ddt_hindexed_block(b.n, x, b.v, tv[0]); break;
	case 7: t = ddt_struct(a.n, a.v, b.v, tv); break;
	case 8:
		if (a.n > DDT_MAX_DEPTH) {
			errno = DDT_E_DEPTH;
			t = NULL;
			break;
		}
		t = ddt_subarray((int)a.n, a.v, b.v, c.v,
				 order == 'C' ? DDT_ORDER_C : DDT_ORDER_FORTRAN,
				 tv[0]);
		break;
	case 9: t = ddt_resized(x, y, tv[0]); break;
	}
	if (t == NULL)
		ctor_fail(ps, start, ctor_names[ctor]);
out:
	for (int64_t i = 0; i < ntv; i++)
		ddt_free(tv[i]);
	free(tv);
	free(a.v);
	free(b.v);
	free(c.v);
	ps->nest--;
	return t;
}

struct ddt_type *ddt_parse(const char *expr, const char **err_p)
{
	struct parser ps = { .s = expr };
	struct ddt_type *t;

	parse_err[0] = 0;
	if (err_p != NULL)
		*err_p = parse_err;
	if (expr == NULL) {
		perr(&ps, EINVAL, 0, "no expression");
		return ddt_err_null(EINVAL);
	}
	t = type(&ps);
	if (t != NULL) {
		ws(&ps);
		if (ps.s[ps.p] != 0) {
			perr(&ps, DDT_E_SYNTAX, ps.p, "expected end of input");
			ddt_free(t);
			t = NULL;
		}
	}
	if (t == NULL)
		errno = ps.err ? ps.err : EINVAL;
	return t;
}

/* ---- printer ------------------------------------------------------------- */

struct out {
	char *buf;
	size_t len;
	size_t n;
};

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(o->n < o->len ? o->buf + o->n : NULL,
		      o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (r > 0)
		o->n += (size_t)r;
}

static void put_list(struct out *o, const int64_t *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		put(o, i ? ",%ld" : "%ld", (long)v[i]);
}

static void print_type(struct out *o, const struct ddt_type *t)
{
	switch (t->comb) {
	case DDT_COMBINER_NAMED:
		put(o, "%s", ddt_base_name(t->base));
		return;
	case DDT_COMBINER_DUP:
		print_type(o, t->types[0]);
		return;
	case DDT_COMBINER_CONTIGUOUS:
		put(o, "contig(%ld)", (long)t->count);
		break;
	case DDT_COMBINER_VECTOR:
	case DDT_COMBINER_HVECTOR:
		put(o, "%s(%ld,%ld,%ld)",
		    t->comb == DDT_COMBINER_VECTOR ? "vector" : "hvector",
		    (long)t->count, (long)t->blocklen, (long)t->stride);
		break;
	case DDT_COMBINER_INDEXED:
	case DDT_COMBINER_HINDEXED:
	case DDT_COMBINER_STRUCT:
		put(o, "%s(", t->comb == DDT_COMBINER_INDEXED ? "indexed" :
			      t->comb == DDT_COMBINER_HINDEXED ? "hindexed"
							       : "struct");
		put_list(o, t->blocklens, t->count);
		put(o, ";");
		put_list(o, t->displs, t->count);
		put(o, ")");
		break;
	case DDT_COMBINER_INDEXED_BLOCK:
	case DDT_COMBINER_HINDEXED_BLOCK:
		put(o, "%s(%ld;", t->comb == DDT_COMBINER_INDEXED_BLOCK
					  ? "indexed_block" : "hindexed_block",
		    (long)t->blocklen);
		put_list(o, t->displs, t->count);
		put(o, ")");
		break;
	case DDT_COMBINER_SUBARRAY:
		put(o, "subarray(");
		put_list(o, t->sizes, t->count);
		put(o, ";");
		put_list(o, t->subsizes, t->count);
		put(o, ";");
		put_list(o, t->starts, t->count);
		put(o, ";%c)", t->order == DDT_ORDER_C ? 'C' : 'F');
		break;
	case DDT_COMBINER_RESIZED:
		put(o, "resized(%ld,%ld)", (long)t->rlb, (long)t->rextent);
		break;
	}
	put(o, "[");
	if (t->comb == DDT_COMBINER_STRUCT && t->count == 0)
		put(o, "byte");
	for (int64_t i = 0; i < t->ntypes; i++) {
		if (i)
			put(o, ",");
		print_type(o, t->types[i]);
	}
	put(o, "]");
}

int ddt_print(const struct ddt_type *t, char *buf, size_t len)
{
	struct out o = { buf, buf ? len : 0, 0 };

	if (t == NULL)
		return -EINVAL;
	if (buf != NULL && len > 0)
		buf[0] = 0;
	print_type(&o, t);
	if (o.n > INT32_MAX)
		return -EOVERFLOW;
	return (int)o.n;
}
