#!/bin/sh
# t_cli.sh - exit codes and messages of tfgb's command line.
#
# Every failure exits 2 (usage or job error) or 1 (run-time failure) with
# exactly one line on stderr starting with "tfgb: ".  Run from the top of
# the source tree; exits 0 (pass), 77 (skip, reason on the last line) or 1.
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
tfgb="$top/tfgb"
if [ ! -x "$tfgb" ]; then
	echo "tfgb is not built; run 'make tfgb'"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/t_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
# No job file from the environment: run where there is no ./tfgb.ini, with
# an empty config home.  Jobs come from -c files below.
mkdir "$tmp/home" "$tmp/run"
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" MANPAGER=cat PAGER=cat MANWIDTH=80
export HOME XDG_CONFIG_HOME MANPAGER PAGER MANWIDTH
cd "$tmp/run" || exit 1
: >"$tmp/empty.ini"

failed=0
ran=0
fail() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}

# t WANT_RC ARGS...: runs tfgb; stdout in $tmp/out, stderr in $tmp/err.
# A failure must say so in one line on stderr, starting with "tfgb: ".
t() {
	want=$1
	shift
	ran=$((ran + 1))
	"$tfgb" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "tfgb $*: exit $rc, want $want; stderr: $(head -n 3 "$tmp/err")"
		return
	fi
	if [ "$want" != 0 ]; then
		n=$(wc -l <"$tmp/err")
		[ "$n" -eq 1 ] || fail "tfgb $*: $n lines on stderr, want 1: $(head -n 3 "$tmp/err")"
		head -n 1 "$tmp/err" | grep -q '^tfgb: ' ||
			fail "tfgb $*: stderr does not start with 'tfgb: ': $(head -n 1 "$tmp/err")"
	fi
}

# err TEXT / out TEXT: the last run's stderr / stdout contains TEXT.
err() {
	grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1': $(head -n 3 "$tmp/err")"
}
out() {
	grep -qF -- "$1" "$tmp/out" || fail "stdout lacks '$1': $(head -n 3 "$tmp/out")"
}
quiet_err() {
	[ ! -s "$tmp/err" ] || fail "unexpected stderr: $(head -n 3 "$tmp/err")"
}

# --- commands ---------------------------------------------------------
t 2
err "missing command"
err "genpayload"
t 2 genpayloda
err "unknown command 'genpayloda'; did you mean 'genpayload'?"
t 2 frobnicate
err "unknown command 'frobnicate'"

t 0 version
out "tfgb "
out " (core "
out "tls: "
out "features: grpc socket"
out " tls"
# gRPC's release as users know it (1.51.x), not only its core's 29.0.0
if dpkg-query -W libgrpc-dev >/dev/null 2>&1; then out "gRPC 1."; fi
quiet_err
t 0 --version
out " (core "
t 2 version extra
err "unexpected argument 'extra'"
t 2 version --ini
err "option '--ini' is not used by 'version'"
t 2 version -c "$tmp/empty.ini"
err "option '-c' is not used by 'version'"

# -o - is standard output, not a file named "-" (in the run directory)
t 0 genpayload -o -
out "iovec"
[ -e ./- ] && fail "-o - wrote a file named '-'"
t 0 genpayload -s output.file=- -f json
out '"buffers"'
[ -e ./- ] && fail "output.file = - wrote a file named '-'"
rm -f ./-

t 0 help
for c in serve latency bandwidth throughput genpayload plot help version; do
	grep -q "^  $c " "$tmp/out" || fail "'tfgb help' does not list '$c'"
done
quiet_err
t 0 -h
out "genpayload"
t 0 help genpayload
out "genpayload"
t 0 help tfgb.ini
out "tfgb.ini - job file of the tfgb benchmark suite"
out "[payload]"
t 2 help genpayloda
err "did you mean 'genpayload'?"
t 0 genpayload -h
out "usage: tfgb genpayload"
out "--ini"
t 0 plot -h
out "usage: tfgb plot -o FIGURE.png|FIGURE.svg"
t 0 help plot
out "gnuplot"

# --- options ----------------------------------------------------------
t 2 genpayload --print-confg
err "unknown option '--print-confg'; did you mean '--print-config'?"
t 2 genpayload --formt csv
err "did you mean '--format'?"
t 2 genpayload -x
err "unknown option '-x'"
t 2 genpayload -c
err "option '-c' needs a value"
t 2 genpayload -c "$tmp/empty.ini" --task 1
err "option '--task' is not used by 'genpayload'"
t 2 genpayload -c "$tmp/empty.ini" extra
err "unexpected argument 'extra'"
t 2 genpayload -c "$tmp/empty.ini" -f xml
err "tfgb: -f xml: must be one of text | csv | json"

# --- job files and -s -------------------------------------------------
t 2 genpayload -c missing.ini
err "cannot open job file 'missing.ini'"
printf '[payload]\nscheme = skew\nsmall = 0B\n' >"$tmp/bad.ini"
t 2 genpayload -c "$tmp/bad.ini"
err "tfgb: $tmp/bad.ini:3: payload.small = 0B: must be in [1B, 1KiB)"
printf '[payload]\nscheme = random\ncategories = large\n' >"$tmp/bad2.ini"
t 2 genpayload -c "$tmp/bad2.ini"
err "$tmp/bad2.ini:3: payload.categories = large: scheme random needs at least two categories"
printf '[paylaod]\n' >"$tmp/bad3.ini"
t 2 genpayload -c "$tmp/bad3.ini"
err "$tmp/bad3.ini:1: unknown section '[paylaod]'; did you mean '[payload]'?"
printf '[payload]\niovecs = 1\0\n' >"$tmp/nul.ini"
t 2 genpayload -c "$tmp/nul.ini"
err "contains a NUL byte"
t 2 genpayload -c "$tmp/empty.ini" -s payload
err "-s #1: 'payload' is not SECTION.KEY=VALUE"
t 2 genpayload -c "$tmp/empty.ini" -s paylod.iovecs=3
err "-s #1: unknown section 'paylod'; did you mean 'payload'?"
t 2 genpayload -c "$tmp/empty.ini" -s payload.iovecs=2 -s payload.iovecs=0
err "-s #2: payload.iovecs = 0: must be in [1, 65536]"
t 2 genpayload -c "$tmp/empty.ini" -s payload.scheme=skew -s payload.categories=small,medium
err "default: payload.bias = large: must be one of the chosen categories"

# --- output -----------------------------------------------------------
t 0 genpayload -c "$tmp/empty.ini" -f csv
quiet_err
[ "$(head -n 1 "$tmp/out")" = "index,category,size_bytes,offset_bytes" ] ||
	fail "-f csv: first line is '$(head -n 1 "$tmp/out")'"
[ "$(wc -l <"$tmp/out")" -eq 11 ] || fail "-f csv: $(wc -l <"$tmp/out") lines, want 11"
t 0 genpayload -c "$tmp/empty.ini" -s output.format=csv -o "$tmp/report.csv"
quiet_err
[ ! -s "$tmp/out" ] || fail "-o: the report also went to stdout"
[ "$(head -n 1 "$tmp/report.csv" 2>/dev/null)" = "index,category,size_bytes,offset_bytes" ] ||
	fail "-o: $tmp/report.csv does not hold the CSV report"
t 2 genpayload -c "$tmp/empty.ini" -o "$tmp/no/such/dir/report"
err "-o: output.file = $tmp/no/such/dir/report: cannot write the report there: folder '$tmp/no/such/dir': No such file or directory"

# --print-config re-read as a job prints the same job
t 0 genpayload --print-config -c "$tmp/empty.ini" -s payload.scheme=random -s job.seed=7 \
	-s payload.categories=large,small
cp "$tmp/out" "$tmp/printed.ini"
t 0 genpayload --print-config -c "$tmp/printed.ini"
cmp -s "$tmp/out" "$tmp/printed.ini" || fail "--print-config does not re-read to the same job"
t 0 genpayload --print-config -c "$tmp/empty.ini"
cp "$tmp/out" "$tmp/defaults.ini"
t 0 genpayload --print-config -c "$tmp/defaults.ini"
cmp -s "$tmp/out" "$tmp/defaults.ini" || fail "--print-config of the defaults does not re-read"

# --- what cannot run here, or has no meaning: a clear error ---------------
t 2 throughput -c "$tmp/empty.ini" -s job.mode=serialized -s job.rpc=pull
err "job.rpc = pull: has no serialized form"
t 1 throughput -c "$tmp/empty.ini" -s job.transport=verbs -s verbs.device=no_such_device
if "$tfgb" version | grep -q "verbs: compiled in"; then
	err "no RDMA device"
else
	err "VERBS=0"
fi

# --- limits (tfgb.ini(5), LIMITS): exit 2 with the figure, before anything starts
big="-c $tmp/empty.ini -s payload.categories=large -s payload.iovecs=100"
t 2 latency $big
err "server.max_message = 64MiB: a non-serialized payload is 100.0MiB (104857600 bytes) on the wire"
t 2 throughput $big
err "server.max_message = 64MiB: a non-serialized payload is 100.0MiB"
t 0 genpayload $big -o "$tmp/gp.out"
t 0 genpayload --print-config -c "$tmp/empty.ini" -s cluster.workers=1024 -s job.inflight=1024
t 2 genpayload --print-config -c "$tmp/empty.ini" -s cluster.workers=1025 -s job.inflight=1024
err "job.inflight = 1024: a PS would keep workers x inflight = 1049600 calls in flight;"
err "; the most is 1048576"
# 64 x 1024 pushes of 64 MiB at a PS: 4 TiB, more than any host here
mem="-c $tmp/empty.ini -s cluster.workers=64 -s job.inflight=1024 -s payload.categories=large"
mem="$mem -s payload.iovecs=64 -s server.max_message=1GiB -s cluster.ps=127.0.0.1:1025"
t 2 serve $mem
err "job.inflight = 1024: PS memory for workers x inflight calls in flight (64 x 1024 calls"
err "of 64.0MiB, plus 0B) would need 4.0TiB (4398046511104 bytes); this host's MemTotal is"
t 2 throughput $mem
err "PS memory for workers x inflight calls in flight"
t 2 throughput -c "$tmp/empty.ini" -s cluster.workers=1000 -s cluster.ps_count=25
err "monitor.interval = 1s: samples at most 1024 processes; this run starts 1025"

echo "t_cli: $ran runs, $failed failures"
[ "$failed" = 0 ]
