# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench staging (paper 003 Fig. 4): left, the two-way exchange's
# median time (µs) against message size, direct and staged; right,
# staged/direct against message size.
# gnuplot -e "csv='staging.csv'; png='staging.png'; term='pngcairo'" tools/plot_staging.gp
if (!exists("csv")) csv = 'staging.csv'
if (!exists("png")) png = 'staging.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_b = colidx("bytes")
c_v = colidx("variant")
c_t = colidx("exchange_us")
c_q = colidx("staged/direct")
if (c_b == 0 || c_v == 0 || c_t == 0 || c_q == 0) exit error csv.": not a spinnic-bench staging CSV"

if (term eq 'pngcairo') {
	set terminal pngcairo size 1200, 500 font ",10" noenhanced
} else {
	set terminal png size 1200, 500 noenhanced
}
set output png
set datafile separator ","
set logscale x 2
set format x "%g"
set xlabel "message bytes"
set grid
rows(v) = sprintf("< awk -F, -v vc=%d -v v=%s 'NR > 1 && $vc == v' '%s'", c_v, v, csv)
set multiplot layout 1, 2 title sprintf("spinnic-bench staging: two-way exchange (%s)", csv)
set ylabel "exchange (us)"
set logscale y 10
set key left top
plot rows("direct") using c_b:c_t with linespoints lw 2 pt 5 title "direct", \
     rows("staged") using c_b:c_t with linespoints lw 2 pt 7 title "staged"
unset logscale y
set ylabel "staged / direct"
set yrange [0.8:*]
plot rows("staged") using c_b:c_q with linespoints lw 2 pt 7 title "staged/direct", \
     1.2 with lines dt 2 title "T13 (1.2)"
unset multiplot
