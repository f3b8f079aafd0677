/* SPDX-License-Identifier: BSD-3-Clause */
/* The ranks' bootstrap of lib/coll integration tests (coll_kid.h). */
#include <stdio.h>
#include <string.h>

#include "coll_kid.h"
#include "harness.h"

#define MAP_MAX 16

/* KCHECK that also says why on stderr, where the test log keeps it */
#define CHECK(self, cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s: fail ", (self)->name); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		kid_say(self, "fail " __VA_ARGS__); \
		return 1; \
	} \
} while (0)

int
coll_kid_comm(struct kid *self, unsigned P, unsigned pt, unsigned max_trig,
	      ptl_handle_ni_t *ni_p, spin_coll_comm_t **comm_p)
{
	ptl_process_t map[MAP_MAX], id;
	ptl_ni_limits_t want;
	char line[1024], *p;
	unsigned i;
	int rc;

	CHECK(self, P >= 1 && P <= MAP_MAX, "%u ranks", P);
	CHECK(self, PtlInit() == PTL_OK, "PtlInit");
	memset(&want, 0, sizeof(want));
	want.max_triggered_ops = (int)max_trig;
	CHECK(self, PtlNIInit(PTL_IFACE_DEFAULT,
			      PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY,
			      max_trig != 0 ? &want : NULL, NULL, ni_p) ==
		    PTL_OK, "PtlNIInit");
	CHECK(self, PtlGetPhysId(*ni_p, &id) == PTL_OK, "PtlGetPhysId");
	kid_say(self, "id %u %u", id.phys.nid, id.phys.pid);
	CHECK(self, kid_line(self, line, sizeof(line), 60000) == 0 &&
	      strncmp(line, "map", 3) == 0, "no map");
	p = line + 3;
	for (i = 0; i < P; i++) {
		unsigned nid, pid;
		int used;

		CHECK(self, sscanf(p, " %u:%u%n", &nid, &pid, &used) == 2,
		      "map");
		map[i].phys.nid = nid;
		map[i].phys.pid = pid;
		p += used;
	}
	CHECK(self, PtlSetMap(*ni_p, P, map) == PTL_OK, "PtlSetMap");
	rc = spin_coll_comm_create(*ni_p, pt, comm_p);
	CHECK(self, rc == 0, "comm_create: %s", strerror(-rc));
	return 0;
}

void
coll_kids_map(struct kid *kids, unsigned P)
{
	char line[256], map[1024];
	size_t off;
	unsigned i;

	off = (size_t)snprintf(map, sizeof(map), "map");
	for (i = 0; i < P; i++) {
		unsigned nid, pid;

		kid_expect(&kids[i], "id ", line, sizeof(line));
		ITEST_CHECK(sscanf(line, "id %u %u", &nid, &pid) == 2, "%s",
			    line);
		off += (size_t)snprintf(map + off, sizeof(map) - off,
					" %u:%u", nid, pid);
	}
	for (i = 0; i < P; i++)
		kid_tell(&kids[i], map);
}
