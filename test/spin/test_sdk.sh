#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The handler SDK as an out-of-tree plugin author meets it:
#  - spin_handler.h is self-contained: plugin_ok.c compiles against a copy
#    of it alone (C11, -Wall -Wextra -pedantic -Werror), and as C++;
#  - the uninstalled pkg-config file (meson-uninstalled) gives an include
#    path that works;
#  - everything the plugin leaves undefined, beyond libc, is exported by
#    the spinnic executable (nm -D), and spinnic exports nothing but the
#    bounds-checked handler API.
# Arguments: CC SPINNIC HEADER PLUGIN_SOURCE BUILD_DIR
set -eu
cc=$1 spinnic=$2 header=$3 src=$4 build=$5
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
if [ ! -s "$tmp/needed" ]; then
	echo "FAIL: the plugin calls no spin_* function (test broken?)"
	exit 1
fi
others=$(grep -v '^spin_' "$tmp/exported" || true)
if [ -n "$others" ]; then
	echo "FAIL: spinnic exports functions beyond the handler API: $others"
	exit 1
fi
for f in spin_dma_window spin_dma_account spin_rt_create; do
	if grep -qx "$f" "$tmp/exported"; then
		echo "FAIL: spinnic exports $f"
		exit 1
	fi
done
echo "ok: $(wc -l < "$tmp/exported") functions exported, the plugin needs $(tr '\n' ' ' < "$tmp/needed")"
