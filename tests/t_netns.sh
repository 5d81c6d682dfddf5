#!/bin/sh
# tfgb-alone: makes network namespaces and a bridge, which the whole machine sees
# TF-gRPC-PS-Throughput across "hosts": two PS and a worker host, each its
# own network namespace, joined by a bridge, addresses in 198.18.0.0/24.
# Each PS is a hand-started `tfgb serve --task N` on its host (PS 0 also
# hosts the control service one port below); three workers run on the
# worker host, first by a plain shell loop with --task, then by Open MPI's
# mpirun (rank and count from OMPI_COMM_WORLD_*); worker 0 alone prints the
# aggregate, whose per-PS and per-worker counts add up, with the workers'
# own resource series per host and, in the --task run, the hand-started
# servers' own figures over its span (ps_resources: not shared).  mpirun with fewer
# ranks than cluster.workers is refused (exit 2, naming the variable).  Then
# servers and workers as one mpirun on the worker host, MPMD (tfgb serve :
# tfgb throughput) and SPMD, the servers ending with the run.  The
# namespaces and every process are gone afterwards, even on failure.
# Root only (skips otherwise); mpirun comes from Debian's openmpi-bin.
. tests/lib.sh
. tests/netns.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
$PY -c 'import json' 2>/dev/null || skip "no /usr/bin/python3"
why=$(netns_check)
[ -z "$why" ] || skip "$why"

lab=tfgb-$$
PS0=198.18.0.1 PS1=198.18.0.2 WK=198.18.0.10 PORT=50001
out=$(mktemp -d)
job=$out/job.ini
cleanup() {
	trap - EXIT INT TERM
	netns_teardown "$lab"
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

{ netns_switch "$lab" && netns_host "$lab" ps0 $PS0 && netns_host "$lab" ps1 $PS1 &&
	netns_host "$lab" wk $WK; } >"$out/ip.err" 2>&1 ||
	skip "cannot build the namespaces (veth, bridge): $(cat "$out/ip.err")"
in_wk="ip netns exec $lab-wk"

cat >"$job" <<INI
[job]
warmup = 200ms
duration = 1s
timeout = 10s
[cluster]
ps = $PS0:$PORT, $PS1:$PORT
ps_count = 2
workers = 3
[payload]
iovecs = 2
categories = small, medium
INI
sums='d["throughput"]["reported"] == 3 and d["throughput"]["workers"] == 3
and len(d["throughput"]["per_ps"]) == 2 and len(d["throughput"]["per_worker"]) == 3
and sum(d["throughput"]["per_ps"]) == d["calls"] == sum(d["throughput"]["per_worker"])
and d["calls"] > 0 and min(d["throughput"]["per_ps"]) > 0
and min(d["throughput"]["per_worker"]) > 0 and d["errors"] == 0
and d["status"] == "ok" and d["throughput"]["incomplete"] is False
and d["ps"] == ["'$PS0:$PORT'", "'$PS1:$PORT'"]
and sorted((p["role"], p["index"]) for p in d["throughput"]["processes"]) ==
    [("ps", 0), ("ps", 1), ("worker", 0), ("worker", 1), ("worker", 2)]
and all(p["cpus"] != "unknown" and p["mempolicy"] != "unknown" for p in d["throughput"]["processes"])
and all(p["user_s"] + p["sys_s"] > 0 and p["rss_peak_bytes"] > 0
        for p in d["throughput"]["processes"] if p["role"] == "worker")
and d["resources"]["scope"] == "hosts" and len(d["resources"]["hosts"]) >= 1
and sorted(p["index"] for h in d["resources"]["hosts"] for p in h["processes"]
           if p["role"] == "worker") == [0, 1, 2]
and all(h["samples"] >= 2 and h["net"]["scope"] == "host" and
        all(r["user_s"] + r["sys_s"] > 0 and r["rss_peak_bytes"] > 0
            for r in h["summary"]["roles"]) for h in d["resources"]["hosts"])'

# a. one PS per host, by hand; PS 0 also serves the control service
ip netns exec "$lab-ps0" $TFGB serve -c "$job" --task 0 2>"$out/s0" &
ip netns exec "$lab-ps1" $TFGB serve -c "$job" --task 1 2>"$out/s1" &
netns_wait_listening "$lab-wk" $PS0 $PORT && netns_wait_listening "$lab-wk" $PS1 $PORT &&
	netns_wait_listening "$lab-wk" $PS0 $((PORT - 1)) ||
	fail "the PS hosts are not reachable from the worker host: $(cat "$out/s0" "$out/s1")"
grep -q "control service on $PS0:$((PORT - 1))" "$out/s0" || fail "PS 0: $(cat "$out/s0")"
grep -q "control service" "$out/s1" && fail "PS 1 hosts a control service: $(cat "$out/s1")"
# the worker host reaches the PS hosts only through the bridge
netns_listening "$lab-wk" 127.0.0.1 $PORT && fail "something listens on the worker host's $PORT"

# b. workers by a shell loop, --task 2, 1, 0 on the worker host
for i in 2 1 0; do
	# shellcheck disable=SC2086 # $in_wk is a command prefix
	timeout "$(slow 30)" $in_wk $TFGB throughput -c "$job" -q --task $i -f json \
		>"$out/w$i.json" 2>"$out/w$i.err" &
	eval "w$i=\$!"
done
for i in 0 1 2; do
	eval "wait \$w$i" || fail "worker $i exited $?: $(cat "$out/w$i.err")"
done
json_check "$sums" <"$out/w0.json" || fail "--task run: $(cat "$out/w0.json" "$out/w0.err")"
[ ! -s "$out/w1.json" ] && [ ! -s "$out/w2.json" ] || fail "workers 1 and 2 printed a report"
# the hand-started servers measured themselves over worker 0's span of the
# run, each on its own host's clock, and served this run alone
json_check 'sorted((p["index"], p["samples_itself"], p["runs"], p["shared"]) for p in d["ps_resources"])
    == [(0, True, 1, False), (1, True, 1, False)]
and all(p["samples"] >= 2 and p["processes"][0]["role"] == "ps" and
        p["summary"]["roles"][0]["user_s"] + p["summary"]["roles"][0]["sys_s"] > 0
        for p in d["ps_resources"])' <"$out/w0.json" ||
	fail "--task run: the servers' own figures: $(cat "$out/w0.json")"

# c, d. workers by Open MPI; tfgb uses no MPI for data, and mpirun's own
# traffic (its out-of-band channel) stays on the worker host's loopback
if command -v mpirun >/dev/null 2>&1; then
	mpi="mpirun --allow-run-as-root --oversubscribe --bind-to none
		--mca oob_tcp_if_include lo --mca btl self"
	rc=0
	# shellcheck disable=SC2086 # $in_wk and $mpi are command prefixes
	timeout "$(slow 30)" $in_wk $mpi -np 3 $TFGB throughput -c "$job" -q -f json \
		>"$out/m.json" 2>"$out/m.err" || rc=$?
	[ "$rc" = 0 ] || fail "mpirun -np 3 exited $rc: $(cat "$out/m.err")"
	json_check "$sums" <"$out/m.json" || fail "mpirun run: $(cat "$out/m.json" "$out/m.err")"
	[ "$(grep -c '"benchmark"' "$out/m.json")" = 1 ] || fail "more than one report: $(cat "$out/m.json")"

	rc=0
	# shellcheck disable=SC2086 # $in_wk and $mpi are command prefixes
	timeout "$(slow 30)" $in_wk $mpi -np 2 $TFGB throughput -c "$job" -q -f json \
		>"$out/x.json" 2>"$out/x.err" || rc=$?
	[ "$rc" = 2 ] || fail "mpirun -np 2 with workers = 3: exit $rc, expected 2: $(cat "$out/x.err")"
	grep -q "OMPI_COMM_WORLD_SIZE" "$out/x.err" ||
		fail "the mismatch does not name OMPI_COMM_WORLD_SIZE: $(cat "$out/x.err")"
	[ ! -s "$out/x.json" ] || fail "a refused run printed a report: $(cat "$out/x.json")"

	# e. one mpirun for servers and workers on the worker host, MPMD (tfgb
	# serve as ranks 0-1, tfgb throughput as 2-4) and SPMD (5 x tfgb
	# throughput): the servers end with the run, so mpirun returns
	sed "s/^ps = .*/ps = $WK:$((PORT + 10))/" "$job" >"$out/one.ini"
	for form in mpmd spmd; do
		if [ $form = mpmd ]; then
			set -- -np 2 $TFGB serve -c "$out/one.ini" -q : -np 3 $TFGB throughput -c "$out/one.ini" -q -f json
		else
			set -- -np 5 $TFGB throughput -c "$out/one.ini" -q -f json
		fi
		rc=0
		# shellcheck disable=SC2086 # $in_wk and $mpi are command prefixes
		timeout "$(slow 60)" $in_wk $mpi "$@" >"$out/$form.json" 2>"$out/$form.err" || rc=$?
		[ "$rc" = 0 ] || fail "mpirun $form one launch exited $rc: $(cat "$out/$form.err")"
		json_check "$(echo "$sums" | sed "s/$PS0:$PORT/$WK:$((PORT + 10))/; s/$PS1:$PORT/$WK:$((PORT + 11))/")" \
			<"$out/$form.json" || fail "mpirun $form run: $(cat "$out/$form.json" "$out/$form.err")"
		[ "$(grep -c '"benchmark"' "$out/$form.json")" = 1 ] ||
			fail "mpirun $form: more than one report: $(cat "$out/$form.json")"
		# the servers of the launch sampled themselves too
		json_check 'sorted(p["index"] for h in d["resources"]["hosts"] for p in h["processes"]
			if p["role"] == "ps") == [0, 1]' <"$out/$form.json" ||
			fail "mpirun $form: the servers' resources are missing: $(cat "$out/$form.json")"
	done
	mpi_skipped=
else
	mpi_skipped=1
fi

# the PS survived all of it
for n in ps0 ps1; do
	[ -n "$(ip netns pids "$lab-$n")" ] || fail "the tfgb serve on $n died: $(cat "$out/s0" "$out/s1")"
done

# f. nothing is left once the lab is torn down
netns_teardown "$lab"
wait 2>/dev/null
left=$(netns_left "$lab")
[ -z "$left" ] || fail "namespaces left: $left"
no_leftovers "$job" "the lab's runs"
[ -z "$mpi_skipped" ] || skip_part "parts c, d and e (mpirun): needs mpirun (Debian package openmpi-bin)"
echo ok
