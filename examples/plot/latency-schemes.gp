# latency-schemes.gp - point-to-point latency per payload scheme, one bar per
# series (a network, a transport, a mode) in each scheme's group: the style
# of Figures 8 and 9 of TF-gRPC-Bench.
#
# Input: tfgb's CSV (tfgb latency -f csv), one file per series, each with
# the header line and one row per scheme in the same order.
#   gnuplot -e "files='grpc.csv socket.csv'; titles='gRPC socket'; out='lat.png'" \
#           examples/plot/latency-schemes.gp
# Optional: metric (a latency column: avg_us, the default, p50_us, p99_us ...).
if (!exists("files") || !exists("out")) {
    print "latency-schemes.gp: set files='A.csv B.csv ...' and out='FILE.png' with -e"
    exit status 2
}
if (!exists("titles")) titles = files
if (!exists("metric")) metric = "avg_us"

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 800,500 font ",10"
} else {
    set terminal png size 800,500
}
set output out
set datafile separator ","
set title "Point-to-point latency per payload scheme (" . metric . ")" noenhanced
set ylabel "latency (us)"
set xlabel "payload scheme"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set key top left
plot for [i=1:words(files)] word(files, i) using metric:xtic(stringcolumn("scheme")) \
    title word(titles, i)
