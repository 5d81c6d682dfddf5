# throughput-shapes.gp - parameter-server throughput per cluster shape (P
# parameter servers x W workers), one bar per series in each shape's group:
# the style of Figures 13 and 14 of TF-gRPC-Bench.
#
# Input: tfgb's CSV (tfgb throughput -f csv) with one more column first,
# "shape", naming the cluster ("2x4"); one file per series, each with the
# header line and one row per shape in the same order.  make-plots.sh
# writes such files:
#   printf 'shape,%s\n' "$(tfgb throughput -f csv ... | head -n 1)"
#   printf '2x4,%s\n' "$(tfgb throughput -f csv ... | tail -n 1)"
#   gnuplot -e "files='grpc.csv'; titles='gRPC'; out='tput.png'" \
#           examples/plot/throughput-shapes.gp
# Optional: metric (rpc_per_s, the default, or MBps).
if (!exists("files") || !exists("out")) {
    print "throughput-shapes.gp: set files='A.csv B.csv ...' and out='FILE.png' with -e"
    exit status 2
}
if (!exists("titles")) titles = files
if (!exists("metric")) metric = "rpc_per_s"

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 800,500 font ",10"
} else {
    set terminal png size 800,500
}
set output out
set datafile separator ","
set title "Parameter-server throughput per cluster shape" noenhanced
set ylabel metric eq "MBps" ? "throughput (MB/s)" : "throughput (calls/s)"
set xlabel "parameter servers x workers"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set key top left
plot for [i=1:words(files)] word(files, i) using metric:xtic(stringcolumn("shape")) \
    title word(titles, i)
