#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/openmpi-build.sh [BUILD_DIR]
# tools/openmpi-build.sh --prefix      print the install prefix, build nothing
#
# Builds Debian 12's Open MPI 4.1.4, unmodified, against this tree's
# libspinnic with all four Portals 4 components (mtl, btl, osc, coll
# portals4), into a prefix outside the tree, once per machine:
#
#   ${SPINNIC_CACHE:-$HOME/.cache/spinnic}/openmpi-4.1.4-apiH
#
# keyed by the Open MPI version and H, the first 8 hex digits of
# portals4.h's SHA-256: the Portals API the components are compiled
# against. Not by SPINNIC_ABI_VERSION: that is between libspinnic and
# spinnic, and the ranks load this tree's libspinnic (LD_LIBRARY_PATH
# before the prefix's RUNPATH); each run also refreshes the staged copy,
# so a rank without LD_LIBRARY_PATH gets the current one too. A second
# run finds the finished prefix and only prints the mpirun line. Steps,
# each skipped when already done:
#   1. enable Debian's deb-src entries (deb822 debian.sources; root)
#   2. apt-get install the few build dependencies missing (root)
#   3. apt-get source openmpi=4.1.4-* into PREFIX.work/
#   4. stage libspinnic (BUILD_DIR/lib/libspinnic.so + portals4.h, spin.h)
#      in PREFIX/portals4 as libportals.so, the name Open MPI links
#   5. configure (C only, no Fortran/OpenSHMEM/Java/CUDA/verbs/UCX/OFI...),
#      make -j2 under nice, make install, mark the prefix finished
#
# Environment: SPINNIC_CACHE (cache folder), OMPI_JOBS (2), OMPI_NICE (10).
# Logs: PREFIX.work/{configure,make,install}.log. Prints the seconds the
# build took (also in PREFIX/.spinnic-build).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
print_prefix=0
if [ "${1:-}" = --prefix ]; then
	print_prefix=1
	shift
fi
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
ver=4.1.4
api=$(sha256sum "$root/lib/shim/portals4.h" | cut -c1-8)
cache=${SPINNIC_CACHE:-$HOME/.cache/spinnic}
prefix=$cache/openmpi-$ver-api$api
work=$prefix.work
[ "$print_prefix" = 0 ] || { echo "$prefix"; exit 0; }
jobs=${OMPI_JOBS:-2}
niceness=${OMPI_NICE:-10}

say() { echo "openmpi-build: $*"; }

usage_line() {
	say "Open MPI $ver with Portals 4 over spinnic: $prefix"
	cat <<EOF
Run (with spinnic --virtual N --socket-dir DIR running; README "MPI over spinnic"):
  $prefix/bin/mpirun -np 4 --oversubscribe \\
    -x SPINNIC_SOCKET=DIR/node%n.sock -x LD_LIBRARY_PATH=$build/lib \\
    --mca pml cm --mca mtl portals4 --mca osc portals4 \\
    --mca coll portals4,basic,libnbc,self ./your_mpi_app
  (ob1 + btl instead of the mtl: --mca pml ob1 --mca btl portals4,self
   --mca btl_portals4_max_send_size 32768; as root add --allow-run-as-root)
EOF
}

so=$build/lib/libspinnic.so
if [ ! -e "$so" ]; then
	say "building libspinnic in $build"
	[ -f "$build/build.ninja" ] || meson setup "$build" "$root" >/dev/null
	ninja -C "$build" lib/libspinnic.so.0.1.0 >/dev/null
fi
so=$(readlink -f "$so")

# 4. stage libspinnic as Open MPI's "portals" library (also on a cached
# prefix: the copy the RUNPATH names stays this tree's)
stage_libspinnic() {
	stage=$prefix/portals4
	rm -rf "$stage"
	mkdir -p "$stage/include" "$stage/lib"
	cp "$so" "$stage/lib/"
	base=$(basename "$so")
	ln -s "$base" "$stage/lib/libspinnic.so.0"
	ln -s "$base" "$stage/lib/libspinnic.so"
	ln -s "$base" "$stage/lib/libportals.so"
	cp "$root/lib/shim/portals4.h" "$root/lib/shim/spin.h" \
		"$root/lib/shim/spin_aa.h" "$stage/include/"
}

if [ -f "$prefix/.spinnic-build" ] && [ -x "$prefix/bin/mpirun" ]; then
	stage_libspinnic
	say "cached ($(cat "$prefix/.spinnic-build"))"
	usage_line
	exit 0
fi

need_root() {
	[ "$(id -u)" = 0 ] || { echo "openmpi-build: $1 needs root" >&2; exit 1; }
}

# 1. deb-src
if ! apt-cache showsrc openmpi 2>/dev/null | grep -q "^Version: $ver"; then
	need_root "enabling deb-src"
	src=/etc/apt/sources.list.d/debian.sources
	if [ -f "$src" ] && ! grep -q '^Types:.*deb-src' "$src"; then
		say "adding deb-src to $src"
		sed -i 's/^Types: deb$/Types: deb deb-src/' "$src"
	elif [ ! -f "$src" ]; then
		echo "openmpi-build: no $src: add a deb-src line for bookworm by hand" >&2
		exit 1
	fi
	apt-get update -qq
	apt-cache showsrc openmpi | grep -q "^Version: $ver" || {
		echo "openmpi-build: apt has no openmpi $ver source" >&2; exit 1; }
fi

# 2. build dependencies: a C/C++ compiler, make, perl, flex (opal's
# lexers), dpkg-dev (dpkg-source), Debian's hwloc and libevent (as
# Debian's own build uses them; pmix is the embedded one), zlib.
pkgs="build-essential dpkg-dev perl flex libhwloc-dev libevent-dev zlib1g-dev"
missing=$(for p in $pkgs; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
	grep -q 'install ok installed' || echo "$p"; done)
if [ -n "$missing" ]; then
	need_root "installing $missing"
	say "installing:" $missing
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

# 3. source
mkdir -p "$work"
srcdir=$(ls -d "$work"/openmpi-$ver 2>/dev/null || true)
if [ -z "$srcdir" ] || [ ! -x "$srcdir/configure" ]; then
	say "apt-get source openmpi ($ver) into $work"
	rm -rf "$work"/openmpi-$ver
	dver=$(apt-cache showsrc openmpi | sed -n "s/^Version: \($ver-.*\)/\1/p" | head -1)
	# Upstream's 4.1.4 as released (the .orig tarball), without Debian's
	# patches: they edit configure.ac and Makefile.am (hppa/ia64 atomics,
	# Fortran, symbol versioning, mca-params defaults), which would need
	# autoreconf (autoconf, automake, libtool); none touches Portals 4.
	(cd "$work" && apt-get source -qq --download-only "openmpi=$dver" &&
		dpkg-source -x --skip-patches "openmpi_$dver.dsc") \
		>"$work/source.log" 2>&1 || { cat "$work/source.log" >&2; exit 1; }
	srcdir=$work/openmpi-$ver
fi

stage_libspinnic

# 5. configure, build, install. An interrupted build resumes: the same
# configure line in the same build folder is not run again (make is
# incremental); the time counts from the first configure.
cfg=(--prefix="$prefix"
	--with-portals4="$stage" --with-portals4-libdir="$stage/lib"
	LDFLAGS="-Wl,-rpath,$stage/lib"
	--disable-mpi-fortran --disable-oshmem --disable-mpi-java
	--disable-mpi-cxx --disable-io-romio --disable-man-pages
	--disable-static --enable-shared
	--with-hwloc=external --with-libevent=external --with-pmix=internal
	--without-ucx --without-ofi --without-verbs --without-psm
	--without-psm2 --without-cuda --without-slurm --without-tm
	--without-lsf --without-sge --without-alps --without-x
	--without-cma --without-knem --without-xpmem --without-hcoll
	--without-fca --without-mxm
	--enable-mca-no-build=btl-uct,btl-ofi,btl-usnic,btl-openib)
bld=$work/build
if [ -f "$bld/Makefile" ] && [ -f "$bld/.spinnic-configure" ] &&
   [ "$(cat "$bld/.spinnic-configure")" = "${cfg[*]}" ]; then
	say "resuming the build in $bld"
	t0=$(cat "$bld/.spinnic-t0" 2>/dev/null || date +%s)
else
	rm -rf "$bld"
	mkdir -p "$bld"
	t0=$(date +%s)
	echo "$t0" >"$bld/.spinnic-t0"
	say "configure (log: $work/configure.log)"
	(cd "$bld" && nice -n "$niceness" "$srcdir/configure" "${cfg[@]}") \
		>"$work/configure.log" 2>&1 || {
		tail -30 "$work/configure.log" >&2; exit 1; }
	echo "${cfg[*]}" >"$bld/.spinnic-configure"
fi
cd "$bld"
for c in mtl btl osc coll; do
	grep -q "checking if MCA component $c:portals4 can compile\.\.\. yes" \
		"$work/configure.log" || {
		echo "openmpi-build: configure did not enable $c/portals4" \
			"(see $work/configure.log)" >&2; exit 1; }
done
say "make -j$jobs (log: $work/make.log)"
nice -n "$niceness" make -j"$jobs" >"$work/make.log" 2>&1 || {
	tail -30 "$work/make.log" >&2; exit 1; }
nice -n "$niceness" make install >"$work/install.log" 2>&1 || {
	tail -30 "$work/install.log" >&2; exit 1; }
t1=$(date +%s)
for c in mca_mtl_portals4 mca_btl_portals4 mca_osc_portals4 mca_coll_portals4; do
	[ -f "$prefix/lib/openmpi/$c.so" ] || {
		echo "openmpi-build: $c.so not installed" >&2; exit 1; }
done
echo "built $(date -u +%FT%TZ) in $((t1 - t0)) s, -j$jobs, $(nproc) cores, portals4.h $api" \
	>"$prefix/.spinnic-build"
say "$(cat "$prefix/.spinnic-build")"
usage_line
