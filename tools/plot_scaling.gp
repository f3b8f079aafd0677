# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench scaling (paper 000 Fig. 13a): receive throughput vs number
# of HPUs, one line per strategy (the floor's: the same pieces copied by as
# many threads), for one block size (block=N; default the largest in the
# CSV), and the copy limit of the same bytes.
# gnuplot -e "csv='scaling.csv'; png='scaling.png'; term='pngcairo'" tools/plot_scaling.gp
if (!exists("csv")) csv = 'scaling.csv'
if (!exists("png")) png = 'scaling.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_strat = colidx("strategy")
c_block = colidx("block_bytes")
c_h = colidx("hpus")
c_g = colidx("gbit_s")
c_lim = colidx("limit_gbit_s")
if (c_strat == 0 || c_block == 0 || c_h == 0 || c_g == 0 || c_lim == 0) exit error csv.": not a spinnic-bench scaling CSV"
if (!exists("block")) block = system("awk -F, -v b=".c_block." 'NR > 1 && $b > m { m = $b } END { print m + 0 }' '".csv."'") + 0
strats = system("awk -F, -v s=".c_strat." -v g=".c_g." -v h=".c_h." 'NR > 1 && $g != \"\" && $h > 0 && !seen[$s]++ { printf \"%s \", $s }' '".csv."'")
nstrats = words(strats)
if (nstrats == 0) exit error "no measured NIC rows in ".csv

if (term eq 'pngcairo') {
	set terminal pngcairo size 900, 560 font ",10" noenhanced
} else {
	set terminal png size 900, 560 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set xlabel "HPUs"
set logscale x 2
set format x "%g"
set ylabel "Gbit/s"
set logscale y 10
set grid
set key outside right top
set title sprintf("spinnic-bench scaling: %d B blocks, preloaded NIC (%s)", block, csv)

rows(st) = sprintf("< awk -F, -v s=%d -v g=%d -v b=%d -v h=%d -v st=%s -v bl=%d 'NR > 1 && $s == st && $g != \"\" && $b == bl && $h > 0' '%s'", c_strat, c_g, c_block, c_h, st, block, csv)
lim = sprintf("< awk -F, -v b=%d -v h=%d -v bl=%d 'NR > 1 && $b == bl && $h > 0 && !seen[$h]++' '%s'", c_block, c_h, block, csv)
plot for [i = 1:nstrats] rows(word(strats, i)) using c_h:c_g with linespoints lw 2 pt (4 + i) title word(strats, i), \
     lim using c_h:c_lim with lines dt 2 lw 2 lc rgb "black" title "copy limit"
