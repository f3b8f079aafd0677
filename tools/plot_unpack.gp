# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench unpack (paper 000 Fig. 8): receive throughput vs block size,
# one line per strategy that ran (n/a rows have no gbit_s and are left
# out), and the streaming-copy limit measured in the same run.
# gnuplot -e "csv='unpack.csv'; png='unpack.png'; term='pngcairo'" tools/plot_unpack.gp
if (!exists("csv")) csv = 'unpack.csv'
if (!exists("png")) png = 'unpack.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_strat = colidx("strategy")
c_block = colidx("block_bytes")
c_g = colidx("gbit_s")
c_lim = colidx("limit_gbit_s")
if (c_strat == 0 || c_block == 0 || c_g == 0 || c_lim == 0) exit error csv.": not a spinnic-bench unpack CSV"
# strategies with at least one measured row, in the order they appear
strats = system("awk -F, -v s=".c_strat." -v g=".c_g." 'NR > 1 && $g != \"\" && !seen[$s]++ { printf \"%s \", $s }' '".csv."'")
nstrats = words(strats)
if (nstrats == 0) exit error "no measured rows in ".csv
hpus = system("awk -F, -v s=".c_strat." -v h=".colidx("hpus")." 'NR > 1 && $s == \"specialized\" { print $h; exit }' '".csv."'")

if (term eq 'pngcairo') {
	set terminal pngcairo size 900, 560 font ",10" noenhanced
} else {
	set terminal png size 900, 560 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set logscale x 2
set logscale y 10
set format x "%.0s%cB"
set xlabel "block size (vector, stride 2x block)"
set ylabel "Gbit/s"
set grid
set key outside right top
set title "spinnic-bench unpack: receive throughput, preloaded NIC".(hpus ne "" ? ", ".hpus." HPU(s)" : "")." (".csv.")"

# one strategy's measured rows, header dropped, so lines join its points
rows(st) = "< awk -F, -v s=".c_strat." -v g=".c_g." -v st=".st." 'NR > 1 && $s == st && $g != \"\"' '".csv."'"
# the limit: one point per block size
lim = "< awk -F, -v b=".c_block." 'NR > 1 && !seen[$b]++' '".csv."'"

plot for [i = 1:nstrats] rows(word(strats, i)) using c_block:c_g with linespoints lw 2 pt (4 + i) title word(strats, i), \
     lim using c_block:c_lim with lines dt 2 lw 2 lc rgb "black" title "copy limit"
