# SPDX-License-Identifier: BSD-3-Clause
# spinnic-bench layout --figure 3 (paper 001 Fig. 3): heat maps over block
# size x uses of a fresh layout, each cell a time per receive over the host
# path's of the same run (< 1: faster than the host, blue; > 1: slower,
# red). Left: the NIC by the class rule prepared at the layout's first use
# and kept for its uses (`static`, the preparation amortized: the paper's
# map); middle: the NIC prepared on every receive (`nic_uncached`); right:
# the layout-aware chooser (`aware`). A cell without a figure stays white.
# gnuplot -e "csv='layout-fig3.csv'; png='layout-fig3.png'; term='pngcairo'" tools/plot_layout_fig3.gp
if (!exists("csv")) csv = 'layout-fig3.csv'
if (!exists("png")) png = 'layout-fig3.png'
if (!exists("term")) term = 'pngcairo'

cols = system("head -n 1 '".csv."' | tr ',' ' '")
colidx(name) = sum [i = 1:words(cols)] (word(cols, i) eq name ? i : 0)
c_axis = colidx("axis")
c_block = colidx("block_b")
c_uses = colidx("uses")
if (c_axis == 0 || c_block == 0 || c_uses == 0) exit error csv.": not a spinnic-bench layout CSV"
if (colidx("static_vs_host") == 0 || colidx("aware_vs_host") == 0) exit error csv.": no static_vs_host or aware_vs_host column (run --figure 3)"
# the grid's block sizes and uses, ascending, from the grid rows
blocks = system("awk -F, -v a=".c_axis." -v b=".c_block." 'NR > 1 && $a == \"grid\" && !s[$b]++ { print $b }' '".csv."' | sort -n | tr '\\n' ' '")
uses = system("awk -F, -v a=".c_axis." -v u=".c_uses." 'NR > 1 && $a == \"grid\" && !s[$u]++ { print $u }' '".csv."' | sort -n | tr '\\n' ' '")
nb = words(blocks)
nu = words(uses)
if (nb == 0 || nu == 0) exit error "no grid rows in ".csv." (spinnic-bench layout --figure 3)"
bidx(v) = sum [i = 1:nb] (word(blocks, i) + 0 == v ? i - 1 : 0)
uidx(v) = sum [i = 1:nu] (word(uses, i) + 0 == v ? i - 1 : 0)

if (term eq 'pngcairo') {
	set terminal pngcairo size 1350, 480 font ",10" noenhanced
} else {
	set terminal png size 1350, 480 noenhanced
}
set output png
set datafile separator ","
set datafile missing ""
set xrange [-0.5 : nb - 0.5]
set yrange [-0.5 : nu - 0.5]
set xtics () 
do for [i = 1:nb] { set xtics add (word(blocks, i) i - 1) }
set ytics ()
do for [i = 1:nu] { set ytics add (word(uses, i) i - 1) }
set xlabel "block size, bytes (64 KiB vector messages)"
set ylabel "uses of a fresh layout"
# log2 of the ratio, symmetric around 1 (0): blue faster, red slower
set cbrange [-1 : 1]
set cbtics ("0.5" -1, "0.71" -0.5, "1" 0, "1.41" 0.5, "2" 1)
set palette defined (-1 "#2166ac", 0 "#f7f7f7", 1 "#b2182b")
set cblabel "time / host time"
set style fill solid 1.0 noborder
unset key
lg(x) = log(x) / log(2)
clip(x) = x < -1 ? -1 : (x > 1 ? 1 : x)

# one variant's grid cells: x, y, ratio
cells(v) = "< awk -F, -v a=".c_axis." -v b=".c_block." -v u=".c_uses." -v r=".colidx(v)." 'NR > 1 && $a == \"grid\" && $r != \"\" && $r != \"-\" { print $b \",\" $u \",\" $r }' '".csv."'"

set multiplot layout 1, 3 title "spinnic-bench layout --figure 3 (paper 001 Fig. 3): time per receive / host, one run (".csv.")"
do for [v in "static_vs_host nic_uncached_vs_host aware_vs_host"] {
	if (colidx(v) > 0) {
		set title (v eq "static_vs_host" ? "NIC, prepared once per layout (static)" : \
			   v eq "aware_vs_host" ? "layout-aware chooser (aware)" : \
			   "NIC, prepared per receive (nic_uncached)")
		plot cells(v) using (bidx($1)):(uidx($2)):(0.5):(0.5):(clip(lg($3))) \
			with boxxyerror fc palette, \
		     cells(v) using (bidx($1)):(uidx($2)):(sprintf("%.2f", $3)) \
			with labels font ",9"
	}
}
unset multiplot
