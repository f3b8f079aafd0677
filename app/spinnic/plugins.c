/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handler plugins (--handlers): shared objects adding handler families to
 * the built-in table, checked and dlopen()ed before the EAL (main.c);
 * every problem is one line naming the file, and exit status 2. Why each
 * check, and why a file's descriptor stays open: doc/NOTES.md, "Handler
 * plugins: trust"; the API they get: spin_handler.h, "Plugins".
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spinnic.h"
#include "spin_rt.h"

struct spinnic_plugin {
	char *path;       /* as named: PATH, or FOLDER/NAME */
	int fd;
	void *dl;
	const struct spin_handler_plugin *p;
};

struct spinnic_plugins {
	unsigned n;
	struct spinnic_plugin v[SPINNIC_PLUGINS_MAX];
	/* built-ins, then each plugin's families; NULL-terminated */
	const struct spin_handler_family **families;
	/* per entry of families: the plugin that defined it, -1 built in */
	int *origin;
	unsigned nb_families;
};

static void __attribute__((format(printf, 2, 3)))
refuse(const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "spinnic: --handlers %s: ", path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Who may have put this file or folder there: like ssh with its keys,
 * only root or spinnic's own user, and nobody else may write it (a folder
 * others may write only when sticky: they cannot replace what they do
 * not own, and what they add is refused for its owner).
 */
static int
owner_check(const char *path, const char *what, const struct stat *st)
{
	uid_t me = geteuid();

	if (st->st_uid != 0 && st->st_uid != me) {
		refuse(path, "%s owned by uid %u, neither root nor spinnic's uid %u",
		       what, (unsigned)st->st_uid, (unsigned)me);
		return -EINVAL;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
		refuse(path, "%s writable by group or others (chmod go-w)",
		       what);
		return -EINVAL;
	}
	return 0;
}

/* The folder that holds the plugin file @p path. */
static int
parent_check(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st) != 0) {
		refuse(path, "its folder: %s", strerror(errno));
		return -EINVAL;
	}
	return owner_check(path, "its folder is", &st);
}

static bool
name_printable(const char *name)
{
	size_t i, len;

	if (name == NULL)
		return false;
	len = strnlen(name, SPIN_HANDLER_NAME_MAX);
	if (len == 0 || len == SPIN_HANDLER_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (name[i] <= ' ' || name[i] > '~')
			return false;
	return true;
}

/* dlerror() names the object by /proc/self/fd/N: drop that part. */
static const char *
dl_reason(const char *err, const char *fdpath)
{
	size_t n = strlen(fdpath);

	if (err == NULL)
		return "unknown error";
	if (strncmp(err, fdpath, n) == 0 && err[n] == ':' && err[n + 1] == ' ')
		return err + n + 2;
	return err;
}

/* Append the families of plugin @p idx to the table, checking each. */
static int
families_add(struct spinnic_plugins *ps, unsigned idx)
{
	const struct spinnic_plugin *pl = &ps->v[idx];
	const struct spin_handler_plugin *p = pl->p;
	const struct spin_handler_family **f;
	unsigned i, j;
	int *o;

	if (p->n_families == 0 ||
	    p->n_families > SPIN_HANDLER_PLUGIN_FAMILIES_MAX) {
		refuse(pl->path, "%u families (a plugin defines 1 to %u)",
		       p->n_families, SPIN_HANDLER_PLUGIN_FAMILIES_MAX);
		return -EINVAL;
	}
	if (p->families == NULL) {
		refuse(pl->path, "its family list is NULL");
		return -EINVAL;
	}
	f = realloc(ps->families, (ps->nb_families + p->n_families + 1) *
		    sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	ps->families = f;
	o = realloc(ps->origin, (ps->nb_families + p->n_families + 1) *
		    sizeof(*o));
	if (o == NULL)
		return -ENOMEM;
	ps->origin = o;
	for (i = 0; i < p->n_families; i++) {
		const struct spin_handler_family *fam = p->families[i];
		const char *why;

		if (fam == NULL) {
			refuse(pl->path, "family %u is NULL", i);
			return -EINVAL;
		}
		if (spin_family_check(fam, &why) != 0) {
			if (name_printable(fam->name))
				refuse(pl->path, "family %u '%s': %s", i,
				       fam->name, why);
			else
				refuse(pl->path, "family %u: %s", i, why);
			return -EINVAL;
		}
		for (j = 0; j < ps->nb_families; j++) {
			if (strcmp(f[j]->name, fam->name) != 0)
				continue;
			if (o[j] < 0)
				refuse(pl->path, "family '%s': name taken by a built-in family",
				       fam->name);
			else if ((unsigned)o[j] == idx)
				refuse(pl->path, "family '%s': defined twice in this plugin",
				       fam->name);
			else
				refuse(pl->path, "family '%s': name taken by plugin %s",
				       fam->name, ps->v[o[j]].path);
			return -EINVAL;
		}
		f[ps->nb_families] = fam;
		o[ps->nb_families++] = (int)idx;
		f[ps->nb_families] = NULL;
	}
	return 0;
}

/*
 * Load the plugin file open on @p fd (checked by the caller: a regular
 * file), named @p path in messages; takes @p fd.
 */
static int
plugin_load(struct spinnic_plugins *ps, const char *path, int fd)
{
	struct spinnic_plugin *pl;
	char fdpath[64];
	const char *err;
	void *sym;
	int rc;

	if (ps->n == SPINNIC_PLUGINS_MAX) {
		refuse(path, "more than %u plugins", SPINNIC_PLUGINS_MAX);
		close(fd);
		return -EINVAL;
	}
	pl = &ps->v[ps->n];
	pl->path = strdup(path);
	if (pl->path == NULL) {
		close(fd);
		return -ENOMEM;
	}
	pl->fd = fd;
	ps->n++;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (access(fdpath, F_OK) == 0) {
		pl->dl = dlopen(fdpath, RTLD_NOW | RTLD_LOCAL);
	} else {
		/* without /proc, by name (the checks then race a swap); with
		 * a slash, or dlopen() would search the library path */
		char byname[PATH_MAX + 2];

		snprintf(byname, sizeof(byname), "%s%s",
			 strchr(path, '/') == NULL ? "./" : "", path);
		pl->dl = dlopen(byname, RTLD_NOW | RTLD_LOCAL);
	}
	if (pl->dl == NULL) {
		refuse(path, "not a loadable shared object: %s",
		       dl_reason(dlerror(), fdpath));
		return -EINVAL;
	}
	(void)dlerror();
	sym = dlsym(pl->dl, SPIN_HANDLER_PLUGIN_SYMBOL);
	err = dlerror();
	if (sym == NULL || err != NULL) {
		refuse(path, "no symbol %s (define it with SPIN_HANDLER_PLUGIN())",
		       SPIN_HANDLER_PLUGIN_SYMBOL);
		return -EINVAL;
	}
	pl->p = sym;
	if (pl->p->abi_version != SPIN_HANDLER_ABI_VERSION) {
		refuse(path, "handler ABI version %u, this spinnic's is %u (rebuild the plugin against its spin_handler.h)",
		       pl->p->abi_version, SPIN_HANDLER_ABI_VERSION);
		return -EINVAL;
	}
	rc = families_add(ps, ps->n - 1);
	if (rc == -ENOMEM)
		fprintf(stderr, "spinnic: out of memory\n");
	return rc;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
is_so(const char *name)
{
	size_t n = strlen(name);

	/* as a shell's *.so: no hidden files */
	return name[0] != '.' && n > 3 && strcmp(name + n - 3, ".so") == 0;
}

/* Every *.so file of the folder open on @p dfd, in name order. */
static int
folder_load(struct spinnic_plugins *ps, const char *dir, int dfd)
{
	char **names = NULL, **nn, path[PATH_MAX];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;
	int rc = 0, fd, dup_fd;

	dup_fd = dup(dfd);
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (d == NULL) {
		refuse(dir, "%s", strerror(errno));
		if (dup_fd >= 0)
			close(dup_fd);
		return -EINVAL;
	}
	while ((de = readdir(d)) != NULL) {
		if (!is_so(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			nn = realloc(names, cap * sizeof(*names));
			if (nn == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (names[n] == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n == 0) {
		refuse(dir, "no *.so file in this folder");
		rc = -EINVAL;
		goto out;
	}
	qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n && rc == 0; i++) {
		struct stat st;
		size_t dlen = strlen(dir);

		snprintf(path, sizeof(path), "%s%s%s", dir,
			 dlen > 0 && dir[dlen - 1] == '/' ? "" : "/", names[i]);
		/* O_NONBLOCK: a FIFO named *.so must not hang us */
		fd = openat(dfd, names[i],
			    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			refuse(path, "cannot open: %s", strerror(errno));
			rc = -EINVAL;
		} else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			refuse(path, "not a regular file");
			close(fd);
			rc = -EINVAL;
		} else if (owner_check(path, "file", &st) != 0) {
			close(fd);
			rc = -EINVAL;
		} else {
			rc = plugin_load(ps, path, fd);
		}
	}
out:
	if (rc == -ENOMEM)
		fprintf(stderr, "spinnic: out of memory\n");
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

/* One --handlers PATH: a plugin file or a folder of them. */
static int
path_load(struct spinnic_plugins *ps, const char *path)
{
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		refuse(path, "cannot open: %s", strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, &st) != 0) {
		refuse(path, "fstat: %s", strerror(errno));
		close(fd);
		return -EINVAL;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = owner_check(path, "folder", &st);
		if (rc == 0)
			rc = folder_load(ps, path, fd);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		refuse(path, "neither a regular file nor a folder");
		close(fd);
		return -EINVAL;
	}
	if (owner_check(path, "file", &st) != 0 || parent_check(path) != 0) {
		close(fd);
		return -EINVAL;
	}
	return plugin_load(ps, path, fd);
}

int
spinnic_plugins_load(const struct spinnic_cfg *cfg,
		     struct spinnic_plugins **plugins_p)
{
	const struct spin_handler_family *const *b;
	struct spinnic_plugins *ps;
	unsigned i, nb = 0;
	int rc = 0;

	*plugins_p = NULL;
	if (cfg->nb_handler_paths == 0)
		return 0;
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		goto nomem;
	for (b = spin_handler_families; *b != NULL; b++)
		nb++;
	ps->families = calloc(nb + 1, sizeof(*ps->families));
	ps->origin = calloc(nb + 1, sizeof(*ps->origin));
	if (ps->families == NULL || ps->origin == NULL)
		goto nomem;
	for (i = 0; i < nb; i++) {
		ps->families[i] = spin_handler_families[i];
		ps->origin[i] = -1;
	}
	ps->nb_families = nb;
	for (i = 0; i < cfg->nb_handler_paths && rc == 0; i++)
		rc = path_load(ps, cfg->handler_paths[i]);
	if (rc != 0) {
		spinnic_plugins_unload(ps);
		return rc;
	}
	*plugins_p = ps;
	return 0;
nomem:
	fprintf(stderr, "spinnic: out of memory\n");
	spinnic_plugins_unload(ps);
	return -ENOMEM;
}

const struct spin_handler_family *const *
spinnic_plugins_families(const struct spinnic_plugins *p)
{
	if (p == NULL)
		return spin_handler_families;
	return (const struct spin_handler_family *const *)p->families;
}

void
spinnic_plugins_log(const struct spinnic_plugins *p)
{
	unsigned i, j;

	if (p == NULL)
		return;
	for (i = 0; i < p->n; i++) {
		const struct spin_handler_plugin *pl = p->v[i].p;
		char names[SPIN_HANDLER_PLUGIN_FAMILIES_MAX *
			   SPIN_HANDLER_NAME_MAX];
		size_t off = 0;

		names[0] = '\0';
		for (j = 0; j < pl->n_families && off < sizeof(names); j++)
			off += (size_t)snprintf(names + off,
						sizeof(names) - off, "%s%s",
						j ? " " : "",
						pl->families[j]->name);
		SPINNIC_LOG(INFO, "handler plugin %s: %u famil%s: %s",
			    p->v[i].path, pl->n_families,
			    pl->n_families == 1 ? "y" : "ies", names);
	}
}

void
spinnic_plugins_unload(struct spinnic_plugins *p)
{
	unsigned i;

	if (p == NULL)
		return;
	for (i = p->n; i-- > 0;) {
		if (p->v[i].dl != NULL)
			dlclose(p->v[i].dl);
		close(p->v[i].fd);
		free(p->v[i].path);
	}
	free(p->families);
	free(p->origin);
	free(p);
}
