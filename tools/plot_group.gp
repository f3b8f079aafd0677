# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench group (paper 003 Fig. 13 and 14): left, the overall time
# t_total (µs, compute included) against bytes per pair, one line per
# variant; right, overlap against bytes per pair; for one P (ranks=N;
# default the largest in the CSV).
# gnuplot -e "csv='group.csv'; png='group.png'; term='pngcairo'" tools/plot_group.gp
if (!exists("csv")) csv = 'group.csv'
if (!exists("png")) png = 'group.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_p = colidx("ranks")
c_b = colidx("bytes")
c_v = colidx("variant")
c_t = colidx("t_total_us")
c_o = colidx("overlap")
if (c_p == 0 || c_b == 0 || c_v == 0 || c_t == 0 || c_o == 0) exit error csv.": not a spinnic-bench group CSV"
if (!exists("ranks")) ranks = system("awk -F, -v p=".c_p." 'NR > 1 && $p > m { m = $p } END { print m + 0 }' '".csv."'") + 0
vars = system("awk -F, -v v=".c_v." 'NR > 1 && !seen[$v]++ { printf \"%s \", $v }' '".csv."'")
nvars = words(vars)
if (nvars == 0 || ranks == 0) exit error "no rows in ".csv

if (term eq 'pngcairo') {
	set terminal pngcairo size 1200, 500 font ",10" noenhanced
} else {
	set terminal png size 1200, 500 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set logscale x 2
set format x "%g"
set xlabel "bytes per pair"
set grid
rows(v) = sprintf("< awk -F, -v p=%d -v pr=%d -v vc=%d -v v=%s 'NR > 1 && $p == pr && $vc == v' '%s'", c_p, ranks, c_v, v, csv)
set multiplot layout 1, 2 title sprintf("spinnic-bench group: alltoall, P = %d (%s)", ranks, csv)
set ylabel "t_total (us)"
set logscale y 10
set key left top
plot for [i = 1:nvars] rows(word(vars, i)) using c_b:c_t with linespoints lw 2 pt (4 + i) title word(vars, i)
unset logscale y
set ylabel "overlap"
set yrange [0:1.05]
plot for [i = 1:nvars] rows(word(vars, i)) using c_b:c_o with linespoints lw 2 pt (4 + i) title word(vars, i)
unset multiplot
