# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench ddt: throughput vs block size, lib/ddt vs the system MPI vs
# the streaming-copy limit measured in the same run; one panel per
# (operation, layout).
# gnuplot -e "csv='ddt.csv'; png='ddt.png'; term='pngcairo'" tools/plot_ddt.gp
if (!exists("csv")) csv = 'ddt.csv'
if (!exists("png")) png = 'ddt.png'
if (!exists("term")) term = 'pngcairo'

header = system("head -n 1 '".csv."'")
cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_block = colidx("block_bytes")
c_ddt = colidx("ddt_gbit_s")
c_mpi = colidx("mpi_gbit_s")
c_lim = colidx("limit_gbit_s")
has_mpi = c_mpi > 0
if (c_block == 0 || c_ddt == 0 || c_lim == 0) exit error csv.": not a spinnic-bench ddt CSV"
# layouts present, in the order they appear (column 2; no quoting in them)
types = system("awk -F, 'NR > 1 && !seen[$2]++ { printf \"%s \", $2 }' '".csv."'")
ntypes = words(types)
if (ntypes == 0) exit error "no rows in ".csv

if (term eq 'pngcairo') {
	set terminal pngcairo size 480 * ntypes, 760 font ",10" noenhanced
} else {
	set terminal png size 480 * ntypes, 760 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set logscale x 2
set format x "%.0s%cB"
set xrange [2:32768]
set yrange [0:*]
set offsets 0, 0, graph 0.2, 0
set grid
set key top left horizontal samplen 2 width -2
set xlabel "block size"
set ylabel "Gbit/s"

# the rows of one panel, header dropped, so lines join consecutive points
rows(op, ty) = "< awk -F, -v op=".op." -v ty=".ty." 'NR > 1 && $1 == op && $2 == ty' '".csv."'"

set multiplot layout 2, ntypes title "spinnic-bench ddt: host pack/unpack (".csv.")"
do for [op in "pack unpack"] {
	do for [i = 1:ntypes] {
		ty = word(types, i)
		set title op." ".ty
		if (has_mpi) {
			plot rows(op, ty) using c_block:c_ddt with linespoints lw 2 pt 7 title "lib/ddt", \
			     '' using c_block:c_mpi with linespoints lw 2 pt 5 title "MPI", \
			     '' using c_block:c_lim with lines dt 2 lw 2 title "copy limit"
		} else {
			plot rows(op, ty) using c_block:c_ddt with linespoints lw 2 pt 7 title "lib/ddt", \
			     '' using c_block:c_lim with lines dt 2 lw 2 title "copy limit"
		}
	}
}
unset multiplot
