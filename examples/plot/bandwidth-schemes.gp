# bandwidth-schemes.gp - point-to-point bandwidth per payload scheme, one bar
# per series in each scheme's group: the style of Figures 11 and 12 of
# TF-gRPC-Bench.
#
# Input: tfgb's CSV (tfgb bandwidth -f csv), one file per series, each with
# the header line and one row per scheme in the same order.
#   gnuplot -e "files='grpc.csv socket.csv'; titles='gRPC socket'; out='bw.png'" \
#           examples/plot/bandwidth-schemes.gp
# Optional: metric (MBps, the default, or MiBps).
if (!exists("files") || !exists("out")) {
    print "bandwidth-schemes.gp: set files='A.csv B.csv ...' and out='FILE.png' with -e"
    exit status 2
}
if (!exists("titles")) titles = files
if (!exists("metric")) metric = "MBps"

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 800,500 font ",10"
} else {
    set terminal png size 800,500
}
set output out
set datafile separator ","
set title "Point-to-point bandwidth per payload scheme" noenhanced
set ylabel metric eq "MiBps" ? "bandwidth (MiB/s)" : "bandwidth (MB/s)"
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
