# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench ckpt (paper 000 Fig. 18, 13b): at the model's checkpoint
# interval (factor 1), per application datatype, the host time to create
# the checkpoints in host unpacks of the same message (bars, left axis) and
# the NIC memory they take (points, right axis).
# gnuplot -e "csv='ckpt.csv'; png='ckpt.png'; term='pngcairo'" tools/plot_ckpt.gp
if (!exists("csv")) csv = 'ckpt.csv'
if (!exists("png")) png = 'ckpt.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_type = colidx("type")
c_strat = colidx("strategy")
c_f = colidx("factor")
c_cpu = colidx("create_per_unpack")
c_nb = colidx("nic_bytes")
if (c_type == 0 || c_f == 0 || c_cpu == 0 || c_nb == 0) exit error csv.": not a spinnic-bench ckpt CSV"
# the first strategy's rows at factor 1
st = system("awk -F, -v s=".c_strat." 'NR == 2 { print $s }' '".csv."'")
rows = sprintf("< awk -F, -v s=%d -v f=%d -v c=%d -v st=%s '$s == st && $f == \"1.00\" && $c != \"\"' '%s'", c_strat, c_f, c_cpu, st, csv)

if (term eq 'pngcairo') {
	set terminal pngcairo size 1000, 560 font ",10" noenhanced
} else {
	set terminal png size 1000, 560 noenhanced
}
set output png
set datafile separator ","
set style fill solid 0.7 border -1
set boxwidth 0.7
set logscale y 10
set logscale y2 2
set ytics nomirror
set y2tics
set format y2 "%.0s%cB"
set xtics rotate by -45 scale 0
set ylabel "checkpoint creation / host unpack"
set y2label "NIC memory (bytes)"
set grid ytics
set key outside right top
set title "spinnic-bench ckpt: ".st." at the model's interval (".csv.")"
plot rows using 0:c_cpu:xtic(c_type) with boxes title "creation / unpack", \
     rows using 0:c_nb axes x1y2 with points pt 7 ps 1.5 title "NIC memory"
