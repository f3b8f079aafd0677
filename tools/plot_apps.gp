# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench apps (paper 000 Fig. 16): speedup of each strategy over the
# host receive (host-ddt) per application datatype, clustered bars, log
# scale; strategies with no measured row (n/a) are left out.
# gnuplot -e "csv='apps.csv'; png='apps.png'; term='pngcairo'" tools/plot_apps.gp
if (!exists("csv")) csv = 'apps.csv'
if (!exists("png")) png = 'apps.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_type = colidx("type")
c_strat = colidx("strategy")
c_speed = colidx("speedup")
if (c_type == 0 || c_strat == 0 || c_speed == 0) exit error csv.": not a spinnic-bench apps CSV"
strats = system("awk -F, -v s=".c_strat." -v g=".c_speed." 'NR > 1 && $g != \"\" && $s != \"host-ddt\" && !seen[$s]++ { printf \"%s \", $s }' '".csv."'")
nstrats = words(strats)
if (nstrats == 0) exit error "no measured rows besides host-ddt in ".csv

# one table: a row per type, a column per strategy (empty: n/a)
table = "< awk -F, -v t=".c_type." -v s=".c_strat." -v g=".c_speed." -v list='".strats."' 'BEGIN { n = split(list, st, \" \") } NR > 1 { if (!($t in seen)) { seen[$t] = 1; order[++nt] = $t } v[$t, $s] = $g } END { for (i = 1; i <= nt; i++) { printf \"%s\", order[i]; for (j = 1; j <= n; j++) printf \",%s\", v[order[i], st[j]]; printf \"\\n\" } }' '".csv."'"

if (term eq 'pngcairo') {
	set terminal pngcairo size 1100, 560 font ",10" noenhanced
} else {
	set terminal png size 1100, 560 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y 2
set xtics rotate by -45 scale 0
set ylabel "speedup over host-ddt (contiguous receive + ddt_unpack)"
set grid ytics
set key outside right top
set title "spinnic-bench apps: application datatypes, preloaded NIC (".csv.")"
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb "black"
plot for [j = 1:nstrats] table using (column(j + 1)):xtic(1) title word(strats, j)
