#!/bin/sh
# t_true_input.sh - hostile input, each case judged by exit status, message
# and leftovers (issue "Every line true", its input part):
#   1. numbers out of range: every numeric kind of key (durations, sizes,
#      whole numbers, rates, percentiles, lists, CPU lists, NUMA nodes,
#      ports), negative, past 2^64 - 1 or malformed, in the job file (the
#      error names file:line and key), in -s and in --sweep: exit 2 and the
#      key's range in the message;
#   2. two processes of the job on one address (the same PS twice under one
#      name or two, a PS on the control service's port): exit 2 at once,
#      naming the key, no server started;
#   3. outputs: -o a directory, the job file (by another name, a link,
#      standard input), the result being rerun or plotted, a model file, a
#      TLS key, an output twice, a missing or unwritable folder, a FIFO
#      without a reader: exit 2 before any work, the input untouched;
#      /dev/full: exit 1; a FIFO with a reader gets the report;
#   4. more: malformed -s and --sweep, job files with NUL bytes, long lines,
#      random bytes, unterminated sections.
# A case also fails when it leaves a file in its folder, a server on its
# port, or a lease of its port in /tmp/tfgb-$(id -u).  Prints "cases: N".
# TFGB_TEST_PART=numbers, addresses, outputs or more runs that part's
# cases only (tests/lib.sh: in_part).
# Exit 0 pass, 77 skip (reason on the last line), anything else fail.
. tests/lib.sh
[ -x "$TFGB" ] || skip "build ./tfgb first"
tfgb=$(pwd)/${TFGB#./}
case $TFGB in /*) tfgb=$TFGB ;; esac

w=$(mktemp -d "${TMPDIR:-/tmp}/t_true_input.XXXXXX") || exit 1
reader=''
cleanup_on_exit "$w"
mkdir "$w/home" "$w/run"
HOME="$w/home" XDG_CONFIG_HOME="$w/home/.config"
export HOME XDG_CONFIG_HOME
cd "$w/run" || exit 1
: >empty.ini

FAST_S=$((3 * SLOW)) # "at once": no run, no wait for a timeout
P=$(free_ports 4) || fail "no free ports"
Q=$((P + 2))
now_ms() { echo $(($(date +%s%N) / 1000000)); }
leases() { ls "/tmp/tfgb-$(id -u)" 2>/dev/null | grep -E -- "-($P|$((P + 1))|$Q)\." ; }
# the test's ports something listens on (one ss for the three)
servers() {
	ss -Hltn 2>/dev/null | awk -v p="$P" -v q="$Q" '{ n = split($4, a, ":"); x = a[n] }
		x == p || x == p + 1 || x == q { print x }'
}

cases=0
# c WANT_RC TEXT ARGS...: tfgb ARGS in $w/run exits WANT_RC within FAST_S
# seconds; on failure one line on stderr, "tfgb: " and TEXT in it; the
# folder holds afterwards what it held before, plus the files named in
# $NEW; nothing listens on the test's ports, no lease of them is left.
c() {
	want=$1 text=$2
	shift 2
	in_part "$part" || return 0
	cases=$((cases + 1))
	ls -A | grep -v '^\.out$\|^\.err$' >"$w/before"
	t0=$(now_ms)
	# a case that runs on (an error that came too late) is stopped at
	# 3 x FAST_S: it has failed by then (its 60 s jobs would only wait)
	timeout $((3 * FAST_S)) "$tfgb" "$@" >.out 2>.err
	rc=$?
	took=$(($(now_ms) - t0))
	ls -A | grep -v '^\.out$\|^\.err$' >"$w/after"
	for f in $NEW; do grep -qx -- "$f" "$w/before" || echo "$f" >>"$w/before"; done
	what=$(printf 'case %s: tfgb %.300s' "$cases" "$*")
	if [ "$rc" = 124 ]; then
		bad "$what: still running after $((3 * FAST_S)) s, want exit $want at once"
	elif [ "$rc" != "$want" ]; then
		bad "$what: exit $rc, want $want: $(head -n 2 .err)"
	elif [ "$want" != 0 ] && [ "$(wc -l <.err)" != 1 ]; then
		bad "$what: $(wc -l <.err) lines on stderr, want 1: $(head -n 3 .err)"
	elif [ "$want" != 0 ] && ! grep -q '^tfgb: ' .err; then
		bad "$what: stderr does not start with 'tfgb: ': $(cat .err)"
	elif [ -n "$text" ] && ! grep -qF -- "$text" .err; then
		bad "$what: no '$text' in: $(cat .err)"
	elif [ "$took" -gt $((FAST_S * 1000)) ]; then
		bad "$what: took ${took} ms, more than ${FAST_S} s"
	elif ! sort "$w/before" | cmp -s - "$w/after"; then
		bad "$what: the folder changed: $(sort "$w/before" | diff - "$w/after" | grep '^[<>]' | tr '\n' ' ')"
	elif [ -n "$(servers)" ]; then
		bad "$what: left a server on port $(servers)"
	elif [ -n "$(leases)" ]; then
		bad "$what: left $(leases) in /tmp/tfgb-$(id -u)"
	fi
	NEW=''
}
NEW=''

# --- 1. numbers: every numeric kind, in the job file -------------------
part=numbers
# "section key value|the reason": t.ini line 2 sets the key
while IFS='|' read -r kv why; do
	set -- $kv
	sec=$1 key=$2
	shift 2
	printf '[%s]\n%s = %s\n' "$sec" "$key" "$*" >t.ini
	c 2 "t.ini:2: $sec.$key = $*: $why" genpayload -c t.ini
done <<'EOF'
job warmup -5s|must be in [0s, 1h]
job duration 99999999999999999999s|must be in [10ms, 24h]
job duration 2 weeks|not a duration (a number with ns, us, ms, s, m or h; bare numbers are seconds); must be in [10ms, 24h]
job timeout -1ms|must be in [1ms, 1h]
job timeout 18446744074s|must be in [1ms, 1h]
job iterations 99999999999999999999|must be in [0, 1000000000000]
job seed 18446744073709551616|must be in [0, 9223372036854775807]
job seed -9223372036854775809|must be in [0, 9223372036854775807]
job seed 2^64|not a whole number; must be in [0, 9223372036854775807]
job rate -1|must be in [0, 10000000]
job rate 1e6|not a whole number; must be in [0, 10000000]
job inflight 99999999999999999999|must be in [1, 1024]
job repeat -5|must be in [1, 1000]
cluster ps_count -1|must be in [1, 4096]
cluster workers 0x10|not a whole number; must be in [1, 4096]
payload iovecs 99999999999999999999|must be in [1, 65536]
payload small -1B|must be in [1B, 1KiB)
payload medium 99999999999999999999KiB|must be in [1KiB, 1MiB)
payload large 17179869184G|must be in [1MiB, 10MiB]
payload large 1.5B|not a size (a whole number of bytes with B, K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [1MiB, 10MiB]
monitor interval -1s|must be in [0s, 1h]
server max_message 99999999999999999999|must be in [1KiB, 2GiB)
server threads -1|must be in [0, 256]
affinity ps_numa_node 99999999999999999999|must be none or in [0, 1023]
affinity worker_numa_node 0/-1|must be none or in [0, 1023] (item 2 of the /-separated list, local rank 1's)
affinity ps_cpus 0-99999999999999999999|CPU numbers must be in [0, 1024)
affinity worker_cpus -1|not a CPU list like 0-3,8 (item 1); CPU numbers are in [0, 1024)
output percentiles 50, 1e3|not a list of percentiles like 50, 99, 99.99 (item 2); each must be in (0, 100]
output percentiles 50, 99999999999999999999|item 2: each percentile must be in (0, 100] and above the one before
cluster ps localhost:99999999999999999999|item 1 'localhost:99999999999999999999' is not host:port (port in [1, 65535], IPv6 as [addr]:port)
cluster ps localhost:-1|item 1 'localhost:-1' is not host:port (port in [1, 65535], IPv6 as [addr]:port)
cluster control localhost:0|item 1 'localhost:0' is not host:port (port in [1, 65535], IPv6 as [addr]:port)
socket sndbuf -1B|must be in [0B, 1GiB]
socket busy_poll 99999999999999999999s|must be in [0s, 1s]
socket zerocopy 2^64|not a size (a whole number of bytes with B, K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [0B, 1GiB]
verbs port -1|must be in [1, 255]
verbs gid_index 99999999999999999999|must be none or in [0, 255]
verbs inline -1B|must be in [0B, 1KiB]
verbs send_depth 99999999999999999999|must be in [16, 32768]
train steps -1|must be in [1, 1000000]
train warmup_steps 99999999999999999999|must be in [0, 1000000]
train inflight 2^64|not a whole number; must be in [1, 65536]
EOF
# a list item, on a continuation line: its own line
printf '[payload]\nscheme = custom\niovec = 1B, 2B,\n    3B, -5B\n' >t.ini
c 2 "t.ini:4: payload.iovec = 3B, -5B: item 2 '-5B': must be in [1B, 1GiB]" genpayload -c t.ini

# --- the same in -s and --sweep ----------------------------------------
c 2 "-s #1: job.warmup = -5s: must be in [0s, 1h]" latency -s job.warmup=-5s
c 2 "-s #2: payload.iovecs = 99999999999999999999: must be in [1, 65536]" \
	genpayload -c empty.ini -s job.seed=1 -s payload.iovecs=99999999999999999999
c 2 "-s #1: job.seed = 18446744073709551616: must be in [0, 9223372036854775807]" \
	genpayload -c empty.ini -s job.seed=18446744073709551616
c 2 "-s #2: payload.iovec = 1B,99999999999999999999G: item 2 '99999999999999999999G': must be in [1B, 1GiB]" \
	genpayload -c empty.ini -s payload.scheme=custom -s payload.iovec=1B,99999999999999999999G
c 2 "--sweep job.warmup: value '-5s': must be in [0s, 1h]" latency -c empty.ini --sweep job.warmup=-5s,1s
c 2 "--sweep payload.iovecs: end '99999999999999999999': must be in [1, 65536]" \
	latency -c empty.ini --sweep payload.iovecs=1:99999999999999999999:1
c 2 "--sweep job.rate: start '-1': must be in [0, 10000000]" throughput -c empty.ini --sweep job.rate=-1:10:1
c 2 "--sweep socket.sndbuf: value '2^64': not a size (a whole number of bytes with B, K/KiB, M/MiB, G/GiB, KB, MB or GB); must be in [0B, 1GiB]" \
	latency -c empty.ini --sweep socket.sndbuf=1KiB,2^64
c 2 "--sweep job.seed: 1:9223372036854775807:1 is 9223372036854775807 values, more than 1000" \
	latency -c empty.ini --sweep job.seed=1:9223372036854775807:1
c 2 "--interval 99999999999999999999h: must be a duration in [100ms, 24h]" \
	latency -c empty.ini --interval 99999999999999999999h
c 2 "--task 99999999999999999999: must be a whole number in [0, 65535]" \
	serve -c empty.ini --task 99999999999999999999
c 2 "--task -1: must be a whole number in [0, 65535]" serve -c empty.ini --task -1

# --- 2. two processes of the job on one address ------------------------
part=addresses
c 2 "-s #2: cluster.ps = localhost:$P, localhost:$P: PS 0 (localhost:$P) and PS 1 (localhost:$P) are one address; each PS needs a port of its own" \
	throughput -c empty.ini -s cluster.ps_count=2 -s cluster.ps=localhost:$P,localhost:$P \
	-s job.timeout=30s
c 2 "PS 0 (localhost:$P) and PS 1 (127.0.0.1:$P) are one address" \
	throughput -c empty.ini -s cluster.ps_count=2 -s cluster.ps=localhost:$P,127.0.0.1:$P
c 2 "PS 1 ([::1]:$P) and PS 2 (LocalHost.:$P) are one address" \
	serve -c empty.ini -s cluster.ps_count=3 -s "cluster.ps=localhost:$Q,[::1]:$P,LocalHost.:$P"
printf '[cluster]\nps_count = 2\nps = localhost:%s\ncontrol = 127.0.0.1:%s\n' $P $((P + 1)) >t.ini
c 2 "t.ini:4: cluster.control = 127.0.0.1:$((P + 1)): is the address of PS 1 (localhost:$((P + 1)))" \
	throughput -c t.ini
printf '[cluster]\nps_count = 2\nps = localhost:%s, 127.0.0.1:%s\n' $((P + 1)) $P >t.ini
c 2 "t.ini:3: cluster.ps = localhost:$((P + 1)), 127.0.0.1:$P: PS 1 (127.0.0.1:$P) is on the control service's port, PS 0's port - 1 (cluster.control is empty)" \
	train -c t.ini
# the two loopback families are two addresses; this job is valid
c 0 "" genpayload -c empty.ini -s cluster.ps_count=2 -s "cluster.ps=127.0.0.1:$P,[::1]:$P"

# --- 3. outputs, checked before any work -------------------------------
part=outputs
long="-s job.transport=socket -s cluster.ps=localhost:$P -s job.warmup=0 -s job.duration=60s"
mkdir dir
c 2 "-o: output.file = dir: cannot write the report there: it is a directory" latency $long -o dir
c 2 "-o: output.file = dir/: cannot write the report there: it is a directory" latency $long -o dir/
c 2 "-o: output.file = new/: cannot write the report there: the name ends in '/', a folder's" \
	latency $long -o new/
c 2 "-o: output.file = no/such/r: cannot write the report there: folder 'no/such': No such file or directory" \
	latency $long -o no/such/r
c 2 "-o: output.file = empty.ini/r: cannot write the report there: 'empty.ini' is not a folder" \
	genpayload -o empty.ini/r
printf '[job]\nseed = 7\n' >job.ini
cp job.ini job.orig
ln -s job.ini link.ini
ln job.ini hard.ini
for o in job.ini link.ini hard.ini ../run/job.ini "$w/run/./job.ini"; do
	c 2 "-o: output.file = $o: cannot write the report there: it is the job file ('job.ini'), which this command reads" \
		latency $long -c job.ini -o "$o"
done
c 2 "cannot write the report there: it is the job file (standard input), which this command reads" \
	genpayload -c - -o job.ini <job.ini
printf '[job]\nseed = 7\n[output]\nfile = job2.ini\n' >job2.ini
c 2 "job2.ini:4: output.file = job2.ini: cannot write the report there: it is the job file ('job2.ini')" \
	genpayload -c job2.ini
c 2 "--series: output.series = job.ini: cannot write the resource series there: it is the job file" \
	latency $long -c job.ini --series job.ini
c 2 "-s #5: output.hgrm = link.ini: cannot write the latency distribution there: it is the job file" \
	latency $long -c job.ini -s output.hgrm=link.ini
c 2 "--series: output.series = r.txt: is also output.file; the report and the resource series need a file each" \
	latency $long -o r.txt --series r.txt
c 2 "-s #5: output.hgrm = ../run/r.txt: is also output.file; the report and the latency distribution need a file each" \
	latency $long -s output.hgrm=../run/r.txt -o ./r.txt
c 2 "-s #6: output.hgrm = dir: cannot write the latency distribution there: it is a directory" \
	latency $long -s output.file=r.txt -s output.hgrm=dir
cmp -s job.ini job.orig || bad "the job file was written over"
printf 'not a key\n' >model.model
c 2 "-o: output.file = ./model.model: cannot write the report there: it is the model file (train.model)" \
	train -c empty.ini -s train.model=./model.model -o ./model.model
if ! command -v openssl >/dev/null; then
	skip_part "-o a TLS key: no openssl (Debian package openssl)"
elif openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem \
	-out cert.pem -days 2 -subj /CN=localhost >/dev/null 2>&1; then
	cp key.pem key.orig
	c 2 "-o: output.file = key.pem: cannot write the report there: it is server.tls_key ('key.pem')" \
		genpayload -c empty.ini -s server.tls_cert=cert.pem -s server.tls_key=key.pem \
		-s server.tls_ca=cert.pem -o key.pem
	cmp -s key.pem key.orig || bad "the TLS key was written over"
else
	bad "openssl could not make a key pair"
fi
mkfifo fifo
c 2 "-o: output.file = fifo: cannot write the report there: it is a FIFO and nothing reads it" \
	latency $long -o fifo
c 1 "cannot write report to '/dev/full': No space left on device" genpayload -c empty.ini -o /dev/full
c 2 "-o: output.file = $tfgb: cannot write the report there: it is this tfgb program" \
	genpayload -c empty.ini -o "$tfgb"
$PY -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")' || fail "no socket file"
c 2 "-o: output.file = sock: cannot write the report there: it is a socket" genpayload -c empty.ini -o sock
rm -f sock
c 0 "" genpayload -c empty.ini -o /dev/null
# a FIFO with a reader gets the report; a new file is made, nothing more
cat fifo >fifo.got &
reader=$!
NEW=fifo.got c 0 "" genpayload -c empty.ini -f csv -o fifo
wait "$reader"
reader=''
[ "$(head -n 1 fifo.got)" = "index,category,size_bytes,offset_bytes" ] ||
	bad "the FIFO's reader got '$(head -n 1 fifo.got)'"
NEW=ok.csv c 0 "" genpayload -c empty.ini -f csv -o ok.csv
rm -f ok.csv fifo.got

# a result: rerun and plot do not write over what they read
"$tfgb" latency -c empty.ini -s job.transport=socket -s cluster.ps=localhost:$Q -s job.warmup=0 \
	-s job.duration=$(slow 500)ms -f json -o r.json 2>.err || fail "no result to rerun: $(cat .err)"
wait_closed "$Q" || fail "the result's server still listens on $Q"
cp r.json r.orig
cp r.json r.svg
c 2 "-o: output.file = r.json: cannot write the report there: it is the result it reruns ('r.json')" \
	rerun r.json -o r.json
c 2 "-o r.svg: cannot write the figure there: it is a result to draw ('r.svg'), which this command reads" \
	plot -o r.svg r.json r.svg
mkdir fig.png
c 2 "-o fig.png: cannot write the figure there: it is a directory" plot -o fig.png r.json
c 2 "-o no/fig.png: cannot write the figure there: folder 'no': No such file or directory" \
	plot -o no/fig.png r.json
rmdir fig.png
cmp -s r.json r.orig || bad "the result was written over"

# an unwritable folder and file, as an unprivileged user
if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip_part "unwritable outputs: no setpriv (util-linux) or no user nobody"
elif ! setpriv --reuid=nobody --regid=nogroup --clear-groups "$tfgb" version >/dev/null 2>&1; then
	skip_part "unwritable outputs: user nobody cannot run $tfgb"
else
	mkdir ro
	: >ro.txt
	chmod 755 "$w" "$w/run" ro
	chmod 644 empty.ini ro.txt
	asnobody="setpriv --reuid=nobody --regid=nogroup --clear-groups $tfgb"
	tfgb_was=$tfgb
	tfgb=$(command -v setpriv)
	c 2 "-o: output.file = ro/r: cannot write the report there: cannot create a file in folder 'ro': Permission denied" \
		--reuid=nobody --regid=nogroup --clear-groups "$tfgb_was" latency $long -c empty.ini -o ro/r
	c 2 "-o: output.file = ro.txt: cannot write the report there: Permission denied" \
		--reuid=nobody --regid=nogroup --clear-groups "$tfgb_was" latency $long -c empty.ini -o ro.txt
	tfgb=$tfgb_was
	chmod 700 "$w"
	rmdir ro
	rm -f ro.txt
fi

# --- 4. more hostile input ---------------------------------------------
part=more
for s in job.warmup =5 .= job.=1 '' = ===; do
	c 2 "-s #1: '$s' is not SECTION.KEY=VALUE" genpayload -c empty.ini -s "$s"
done
c 2 "-s #1: job.warmup = : not a duration (a number with ns, us, ms, s, m or h; bare numbers are seconds); must be in [0s, 1h]" \
	genpayload -c empty.ini -s job.warmup=
c 2 "-s #1: output.file = a?b: must be one line, without control characters" \
	genpayload -c empty.ini -s "output.file=a
b"
c 2 "-o: output.file = a?b: must be one line, without control characters" \
	genpayload -c empty.ini -s job.seed=1 -o "a
b"
c 2 "--series: output.series = xxxxxxxxxx" genpayload -c empty.ini \
	--series "$(head -c 300 /dev/zero | tr '\0' x)"
big=$(head -c 100000 /dev/zero | tr '\0' 7)
c 2 "7...: must be in [0, 9223372036854775807]" \
	genpayload -c empty.ini -s "job.seed=$big"
c 2 "--sweep '=:::' is not SECTION.KEY=VALUES" latency -c empty.ini --sweep =:::
c 2 "--sweep job.warmup=:::: a range is start:end:step" latency -c empty.ini --sweep job.warmup=:::
c 2 "--sweep job.warmup: step '0s' must be a duration other than 0" latency -c empty.ini --sweep job.warmup=1s:2s:0s
c 2 "--sweep job.seed: step '99999999999999999999' must be a whole number other than 0, or *N (N in [2, 1000])" \
	latency -c empty.ini --sweep job.seed=1:3:99999999999999999999
c 2 "-s #2: cluster.ps_count = 4096: consecutive ports from 65535 would pass 65535" \
	genpayload -c empty.ini -s cluster.ps=localhost:65535 -s cluster.ps_count=4096
for p in nan inf -50 0x10; do
	c 2 "-s #1: output.percentiles = $p: not a list of percentiles like 50, 99, 99.99 (item 1); each must be in (0, 100]" \
		genpayload -c empty.ini -s "output.percentiles=$p"
done
c 2 "-s #1: affinity.ps_cpus = 3-1: bad CPU range in item 1: 3-1 runs downwards" \
	genpayload -c empty.ini -s affinity.ps_cpus=3-1
c 2 "cannot open job file 'no.ini': No such file or directory" genpayload -c no.ini
c 2 "--sweep job.seed is given twice" latency -c empty.ini --sweep job.seed=1,2 --sweep job.seed=3
c 2 "--sweep payload.iovecs: 1:65536:1 is 65536 values, more than 1000" \
	latency -c empty.ini --sweep payload.iovecs=1:65536:1
printf '[job]\nwarmup = 1s\0junk\n' >nul.ini
c 2 "job file 'nul.ini' contains a NUL byte" genpayload -c nul.ini
{ printf '[job]\n'; head -c 300000 /dev/urandom | tr -d '\0'; } >rnd.ini
c 2 "rnd.ini:" genpayload -c rnd.ini
printf '[job]\nwarmup = %0100000d\n' 1 >longline.ini
c 2 "longline.ini:2: line is 100009 characters long, more than inih's limit of 198" genpayload -c longline.ini
printf '[job\nwarmup = 1s\n' >open.ini
c 2 "open.ini:1: cannot parse this line" genpayload -c open.ini
c 2 "job file '/dev/zero' is too large (over 16 MiB)" genpayload -c /dev/zero
c 2 "cannot read job file '$w/run/dir': Is a directory" genpayload -c "$w/run/dir"
printf '[job]\nwarmup = 1s\n[job]\nwarmup = 2s\n' >twice.ini
c 2 "twice.ini:4: job.warmup is set twice (first on line 2)" genpayload -c twice.ini

[ "$problems" = 0 ] || fail "$problems of $cases cases failed"
echo "cases: $cases"
