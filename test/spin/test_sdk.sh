#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The handler SDK as an out-of-tree plugin author meets it:
#  - spin_handler.h is self-contained: plugin_ok.c compiles against a copy
#    of it alone (C11, -Wall -Wextra -pedantic -Werror), and as C++;
#  - the uninstalled pkg-config file (meson-uninstalled) gives an include
#    path that works;
#  - everything the plugin leaves undefined, beyond libc, is exported by
#    the spinnic executable (nm -D), and spinnic exports nothing but the
#    bounds-checked handler API (app/spinnic/handler_api.dynlist);
#  - the same for the shipped plugins given after DYNLIST (the Active
#    Access families, examples/handlers/active_access/active_access.c).
# Arguments: CC SPINNIC HEADER PLUGIN_SOURCE BUILD_DIR DYNLIST [PLUGIN...]
set -eu
cc=$1 spinnic=$2 header=$3 src=$4 build=$5 dynlist=$6
shift 6
for t in nm pkg-config; do
	command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/inc"
cp "$header" "$tmp/inc/"

$cc -std=c11 -Wall -Wextra -pedantic -Werror -shared -fPIC \
	-I"$tmp/inc" "$src" -o "$tmp/alone.so"
if command -v c++ >/dev/null 2>&1; then
	printf '#include <spin_handler.h>\nint main() { return SPIN_SUCCESS; }\n' |
		c++ -x c++ -Wall -Wextra -Werror -fsyntax-only -I"$tmp/inc" -
fi

cflags=$(PKG_CONFIG_PATH="$build/meson-uninstalled" \
	pkg-config --cflags spinnic-handler)
case "$cflags" in
*-I*) ;;
*) echo "FAIL: spinnic-handler-uninstalled.pc gives no include path: '$cflags'"
   exit 1 ;;
esac
# shellcheck disable=SC2086
$cc -std=c11 -shared -fPIC $cflags "$src" -o "$tmp/pc.so"

nm -D --defined-only "$spinnic" | awk '$2 == "T" { print $3 }' |
	sort > "$tmp/exported"
nm -D --undefined-only "$tmp/alone.so" | awk '{ print $NF }' |
	grep '^spin_' | sort > "$tmp/needed" || true
missing=$(comm -23 "$tmp/needed" "$tmp/exported")
if [ -n "$missing" ]; then
	echo "FAIL: the plugin needs what spinnic does not export: $missing"
	exit 1
fi
for p in "$@"; do
	$cc -std=c11 -Wall -Wextra -pedantic -Werror -shared -fPIC \
		-fvisibility=hidden -I"$tmp/inc" "$p" -o "$tmp/shipped.so"
	nm -D --undefined-only "$tmp/shipped.so" | awk '{ print $NF }' |
		grep '^spin_' | sort > "$tmp/needed_p" || true
	missing=$(comm -23 "$tmp/needed_p" "$tmp/exported")
	if [ -n "$missing" ]; then
		echo "FAIL: $p needs what spinnic does not export: $missing"
		exit 1
	fi
	echo "ok: $(basename "$p") needs $(tr '\n' ' ' < "$tmp/needed_p")"
done
if [ ! -s "$tmp/needed" ]; then
	echo "FAIL: the plugin calls no spin_* function (test broken?)"
	exit 1
fi
# exactly the list, and nothing else of spinnic's (a sanitizer runtime may
# export its own interceptors: only spinnic's prefixes are looked at)
sed -n 's/^[[:space:]]*\(spin_[a-z0-9_]*\);.*/\1/p' "$dynlist" | sort > "$tmp/listed"
grep '^spin_' "$tmp/exported" > "$tmp/exported_spin" || true
if ! cmp -s "$tmp/listed" "$tmp/exported_spin"; then
	echo "FAIL: spinnic's exported spin_* functions differ from $dynlist:"
	diff "$tmp/listed" "$tmp/exported_spin" || true
	exit 1
fi
others=$(grep -E '^(spinnic_|ptl_|ddt_|eng_|rel_|wire_)' "$tmp/exported" || true)
if [ -n "$others" ]; then
	echo "FAIL: spinnic exports functions beyond the handler API: $others"
	exit 1
fi
for f in spin_dma_window spin_dma_account; do
	if grep -qx "$f" "$tmp/exported"; then
		echo "FAIL: spinnic exports $f (built-in families only)"
		exit 1
	fi
done
echo "ok: $(wc -l < "$tmp/exported") functions exported, the plugin needs $(tr '\n' ' ' < "$tmp/needed")"
