# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench halo (paper 001 Fig. 14b): time per halo-exchange iteration
# against the iteration (one point per group of iterations), the host path
# and the layout-aware chooser, with aware/host and the share of aware's
# receives of each face (x, y, z) by the NIC on the right axis: the switch
# from host to NIC, iteration by iteration.
# gnuplot -e "csv='halo.csv'; png='halo.png'; term='pngcairo'" tools/plot_halo.gp
if (!exists("csv")) csv = 'halo.csv'
if (!exists("png")) png = 'halo.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_f = colidx("iter_first")
c_l = colidx("iter_last")
c_h = colidx("host_us")
c_a = colidx("aware_us")
c_r = colidx("aware_vs_host")
c_x = colidx("aware_nic_x")
c_y = colidx("aware_nic_y")
c_z = colidx("aware_nic_z")
if (c_f * c_l * c_h * c_a * c_r * c_x * c_y * c_z == 0) exit error csv.": not a spinnic-bench halo CSV"
rows = system("awk 'NR > 1' '".csv."' | wc -l") + 0
if (rows == 0) exit error "no rows in ".csv

if (term eq 'pngcairo') {
	set terminal pngcairo size 900, 760 font ",10" noenhanced
} else {
	set terminal png size 900, 760 noenhanced
}
set output png
set datafile separator ","
set grid
set key outside right top
mid(a, b) = (a + b) / 2.0
set multiplot layout 2, 1 title "spinnic-bench halo (paper 001 Fig. 14b): two ranks, faces as typed receives (".csv.")"
set ylabel "µs per iteration (median)"
set xlabel ""
set format x ""
set y2label "aware / host"
set ytics nomirror
set y2tics
plot csv every ::1 using (mid(column(c_f), column(c_l))):c_h with linespoints lw 2 pt 5 title "host", \
     csv every ::1 using (mid(column(c_f), column(c_l))):c_a with linespoints lw 2 pt 7 title "aware", \
     csv every ::1 using (mid(column(c_f), column(c_l))):c_r axes x1y2 with lines dt 2 lw 2 lc rgb "black" title "aware/host"
unset y2label
unset y2tics
set ytics mirror
set format x "%g"
set xlabel "iteration"
set ylabel "share of aware's receives by the NIC"
set yrange [0 : 1.05]
plot csv every ::1 using (mid(column(c_f), column(c_l))):c_x with linespoints lw 2 pt 4 title "x face (8 B blocks)", \
     csv every ::1 using (mid(column(c_f), column(c_l))):c_y with linespoints lw 2 pt 6 title "y face (rows)", \
     csv every ::1 using (mid(column(c_f), column(c_l))):c_z with linespoints lw 2 pt 8 title "z face (rows)"
unset multiplot
