# latency-iovecs.gp - point-to-point latency against the number of buffers
# in the payload, one line per series: the style of Figure 10 of
# TF-gRPC-Bench (2 to 10 Large buffers of 1 MiB).
#
# Input: the CSV of a sweep of payload.iovecs (tfgb latency --sweep ...
# -f csv), one file per series; any tfgb latency CSV with an "iovecs"
# column does (a sweep's CSV repeats the benchmark's columns):
#   for tr in grpc socket; do
#       tfgb latency -q -f csv -c examples/fig10-latency-iovecs.ini \
#           -s job.transport=$tr --sweep payload.iovecs=2:10:2 >$tr.csv
#   done
#   gnuplot -e "files='grpc.csv socket.csv'; titles='gRPC socket'; out='iov.png'" \
#           examples/plot/latency-iovecs.gp
# Optional: metric (avg_us, the default, p50_us, p99_us ...).
if (!exists("files") || !exists("out")) {
    print "latency-iovecs.gp: set files='A.csv B.csv ...' and out='FILE.png' with -e"
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
set title "Point-to-point latency against the buffers in the payload (" . metric . ")" noenhanced
set ylabel "latency (us)"
set xlabel "buffers (iovecs)"
set grid
set yrange [0:*]
set key top left
plot for [i=1:words(files)] word(files, i) using "iovecs":metric with linespoints \
    pointtype (i + 4) linewidth 2 title word(titles, i)
