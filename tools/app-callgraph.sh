#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The file-level call graph of app/spinnic, from the objects' symbols: an
# edge "a b" when a.c uses a global symbol (function or variable) that
# b.c defines. Static functions are invisible, as they should be: only
# calls between files count. Fails (status 1) when the graph has a loop,
# naming the files on it (tsort's words).
#   tools/app-callgraph.sh [BUILD_DIR]     (default: build)
set -eu
objs=${1:-build}/app/spinnic/spinnic.p
[ -d "$objs" ] || { echo "app-callgraph: no $objs (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$objs"/*.o; do
	f=$(basename "$o" .c.o)
	nm --defined-only -g "$o" | awk -v f="$f" '$2 ~ /[TDBRC]/ { print $3, f }'
done | sort > "$tmp/defs"
for o in "$objs"/*.o; do
	f=$(basename "$o" .c.o)
	nm -u "$o" | awk '{ print $2 }' | sort -u | join - "$tmp/defs" |
		awk -v f="$f" '$2 != f { print f, $2 }'
done | sort -u > "$tmp/edges"
cat "$tmp/edges"
if ! tsort "$tmp/edges" > /dev/null 2> "$tmp/loop"; then
	echo "app-callgraph: the file graph has a loop:" >&2
	cat "$tmp/loop" >&2
	exit 1
fi
echo "app-callgraph: $(wc -l < "$tmp/edges") edges, no loop" >&2
