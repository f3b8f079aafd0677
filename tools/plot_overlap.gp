# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench overlap (paper 002 Fig. 9 and 10): left, overlap against P,
# one line per variant; right, the non-overlappable time t_nonov (µs)
# against P; for one size (bytes=N; default the smallest of 4096 and the
# largest in the CSV).
# gnuplot -e "csv='overlap.csv'; png='overlap.png'; term='pngcairo'" tools/plot_overlap.gp
if (!exists("csv")) csv = 'overlap.csv'
if (!exists("png")) png = 'overlap.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_coll = colidx("coll")
c_p = colidx("ranks")
c_b = colidx("bytes")
c_v = colidx("variant")
c_o = colidx("overlap")
c_n = colidx("t_nonov_us")
if (c_coll == 0 || c_p == 0 || c_b == 0 || c_v == 0 || c_o == 0 || c_n == 0) exit error csv.": not a spinnic-bench overlap CSV"
if (!exists("bytes")) bytes = system("awk -F, -v b=".c_b." 'NR > 1 { if ($b == 4096) f = 1; if ($b > m) m = $b } END { print (f ? 4096 : m + 0) }' '".csv."'") + 0
coll = system("awk -F, -v c=".c_coll." 'NR == 2 { print $c }' '".csv."'")
vars = system("awk -F, -v v=".c_v." 'NR > 1 && !seen[$v]++ { printf \"%s \", $v }' '".csv."'")
nvars = words(vars)
if (nvars == 0) exit error "no rows in ".csv

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
set xlabel "ranks (P)"
set grid
rows(v) = sprintf("< awk -F, -v b=%d -v bl=%d -v vc=%d -v v=%s 'NR > 1 && $b == bl && $vc == v' '%s'", c_b, bytes, c_v, v, csv)
set multiplot layout 1, 2 title sprintf("spinnic-bench overlap: %s, %d B (%s)", coll, bytes, csv)
set ylabel "overlap"
set yrange [0:1.05]
set key left top
plot for [i = 1:nvars] rows(word(vars, i)) using c_p:c_o with linespoints lw 2 pt (4 + i) title word(vars, i)
set ylabel "t_nonov (us)"
set autoscale y
set logscale y 10
plot for [i = 1:nvars] rows(word(vars, i)) using c_p:(column(c_n) > 0 ? column(c_n) : 1/0) with linespoints lw 2 pt (4 + i) title word(vars, i)
unset multiplot
