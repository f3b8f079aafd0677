#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tools/bench.sh BUILD OUTDIR: run every spinnic-bench subcommand the build
# has, writing OUTDIR/<cmd>.csv (header row), OUTDIR/<cmd>.txt (the table) and
# OUTDIR/<cmd>.png when tools/plot_<cmd>.gp exists and gnuplot is installed.
# Short settings by default (a few repetitions, every byte verified where
# the subcommand can); BENCH_ARGS_<cmd>="..." in the environment replaces
# them for one subcommand (e.g. BENCH_ARGS_ddt="--reps 20 --verify",
# BENCH_ARGS_scaling="--hpus 1,2,4,8,16" on a 16-core machine; a '-' of
# the name is spelled '_': BENCH_ARGS_aa_count).
# Subcommands so far: ddt (plot_ddt.gp), unpack (paper 000 Fig. 8, preloaded
# NIC; plot_unpack.gp: throughput per strategy vs block size with the copy
# limit), latency (Fig. 2: starts its own spinnic --virtual 2 beside the
# bench binary; table and CSV only), apps (Fig. 16; plot_apps.gp: speedup
# over host-ddt per application datatype and strategy), scaling (Fig. 13a;
# plot_scaling.gp: throughput vs HPUs), ckpt (Fig. 18, 13b/c;
# plot_ckpt.gp: checkpoint creation in host unpacks and NIC memory per
# application datatype; the "amortized" summary line is in ckpt.txt), and
# apps once more with --mode wire (apps-wire.*; BENCH_ARGS_apps_wire); auth,
# rate and trig start their own spinnic too (tables and CSV only); overlap
# (paper 002 Fig. 9/10; plot_overlap.gp: overlap and t_nonov vs P per
# variant) and setup start one spinnic --virtual P per P, as group
# (paper 003 Fig. 13-16; plot_group.gp: t_total and overlap vs bytes per
# pair per variant at the largest P), stencil and ring (Fig. 11/12, 17;
# tables and CSV only) do; staging (Fig. 4; plot_staging.gp: exchange
# time and staged/direct vs size) starts a spinnic --virtual 2; layout
# (paper 001, its default Fig. 10: table and CSV) and layout --figure 3
# once more (layout-fig3.*; plot_layout_fig3.gp: heat maps of time / host
# over block size x uses; BENCH_ARGS_layout_fig3); halo (paper 001 Fig.
# 14b; plot_halo.gp: time per iteration, aware/host and each face's NIC
# share against the iteration).
set -eu

usage() {
	echo "usage: $0 BUILD OUTDIR" >&2
	exit 2
}
[ $# -eq 2 ] || usage
build=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)

bench=
for b in "$build/app/spinnic-bench/spinnic-bench" "$build/app/spinnic-bench"; do
	if [ -f "$b" ] && [ -x "$b" ]; then
		bench=$b
		break
	fi
done
if [ -z "$bench" ]; then
	echo "$0: spinnic-bench not found in $build (build it first)" >&2
	exit 1
fi
mkdir -p "$out"

# The subcommands this build has, from its --help.
cmds=$("$bench" --help | awk '/^subcommands:/ { on = 1; next }
	on && /^  [a-z]/ { print $1; next } on { exit }')
if [ -z "$cmds" ]; then
	echo "$0: $bench lists no subcommands" >&2
	exit 1
fi

# PNG terminal: cairo when gnuplot has it, libgd otherwise.
term=
if command -v gnuplot >/dev/null 2>&1; then
	if gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1; then
		term=pngcairo
	elif gnuplot -e 'set terminal png' >/dev/null 2>&1; then
		term=png
	fi
fi
[ -n "$term" ] || echo "$0: no gnuplot PNG terminal: tables and CSV only" >&2

# The short settings, per subcommand.
short_args() {
	case $1 in
	ddt) echo "--reps 5 --verify" ;;
	unpack) echo "--reps 5 --verify" ;;
	apps) echo "--reps 5 --verify" ;;
	scaling) echo "--reps 5 --bytes 1048576 --verify" ;;
	ckpt) echo "--reps 5 --hpus 4 --verify" ;;
	overlap) echo "--reps 10" ;;
	setup) echo "--reps 10" ;;
	group) echo "--ranks 4,8 --sizes 1024,65536 --reps 7" ;;
	stencil) echo "--reps 11" ;;
	ring) echo "--reps 11" ;;
	staging) echo "--iters 100" ;;
	*) echo "" ;;
	esac
}

status=0
for cmd in $cmds; do
	# BENCH_ARGS_<cmd>, '-' spelled '_' (aa-overhead: BENCH_ARGS_aa_overhead)
	var=$(printf '%s' "$cmd" | tr -c 'A-Za-z0-9_' '_')
	eval "extra=\${BENCH_ARGS_$var-\$(short_args $cmd)}"
	echo "== spinnic-bench $cmd $extra"
	# shellcheck disable=SC2086 # extra is a word list on purpose
	{
		rc=0
		"$bench" "$cmd" --csv "$out/$cmd.csv" $extra || rc=$?
		echo $rc >"$out/.rc"
	} | tee "$out/$cmd.txt"
	rc=$(cat "$out/.rc")
	rm -f "$out/.rc"
	if [ "$rc" -ne 0 ]; then
		echo "$0: spinnic-bench $cmd failed" >&2
		status=1
		continue
	fi
	plot="$here/plot_$cmd.gp"
	if [ -n "$term" ] && [ -f "$plot" ]; then
		if gnuplot -e "csv='$out/$cmd.csv'; png='$out/$cmd.png'; term='$term'" \
			"$plot"; then
			echo "   plot: $out/$cmd.png"
		else
			echo "$0: plotting $cmd failed" >&2
			status=1
		fi
	fi
done

# apps again in wire mode (DESIGN §10), when the build has apps
if printf '%s\n' $cmds | grep -qx apps; then
	extra=${BENCH_ARGS_apps_wire-"--reps 5 --verify"}
	echo "== spinnic-bench apps --mode wire $extra"
	# shellcheck disable=SC2086
	if "$bench" apps --mode wire --csv "$out/apps-wire.csv" $extra \
		>"$out/apps-wire.txt"; then
		cat "$out/apps-wire.txt"
		if [ -n "$term" ] && gnuplot -e "csv='$out/apps-wire.csv'; png='$out/apps-wire.png'; term='$term'" \
			"$here/plot_apps.gp"; then
			echo "   plot: $out/apps-wire.png"
		elif [ -n "$term" ]; then
			echo "$0: plotting apps-wire failed" >&2
			status=1
		fi
	else
		echo "$0: spinnic-bench apps --mode wire failed" >&2
		status=1
	fi
fi
# layout once more for paper 001's Fig. 3 (block size x uses grid), as a
# heat map (plot_layout_fig3.gp; BENCH_ARGS_layout_fig3)
if printf '%s\n' $cmds | grep -qx layout; then
	extra=${BENCH_ARGS_layout_fig3-""}
	echo "== spinnic-bench layout --figure 3 $extra"
	# shellcheck disable=SC2086
	if "$bench" layout --figure 3 --csv "$out/layout-fig3.csv" $extra \
		>"$out/layout-fig3.txt"; then
		cat "$out/layout-fig3.txt"
		if [ -n "$term" ] && gnuplot -e "csv='$out/layout-fig3.csv'; png='$out/layout-fig3.png'; term='$term'" \
			"$here/plot_layout_fig3.gp"; then
			echo "   plot: $out/layout-fig3.png"
		elif [ -n "$term" ]; then
			echo "$0: plotting layout-fig3 failed" >&2
			status=1
		fi
	else
		echo "$0: spinnic-bench layout --figure 3 failed" >&2
		status=1
	fi
fi
exit $status
