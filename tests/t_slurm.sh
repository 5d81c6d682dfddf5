#!/bin/sh
# tfgb-alone: starts munged, slurmctld and slurmd, daemons of the whole machine
# Slurm for real: a one-node Slurm (munged, slurmctld and slurmd from
# Debian's munge and slurm-wlm, private configuration, key, state and spool
# in a temporary directory, on free ports; tests/slurm.sh) runs
# TF-gRPC-PS-Throughput with 2 PS and 3 workers as
#  a. the shipped examples/slurm/throughput-one-launch.sbatch: one step
#     whose ranks 0-1 serve and 2-4 work, from an sbatch batch script;
#  b. srun --multi-prog with the shipped examples/slurm/throughput.multi-prog.conf
#     (tfgb serve as ranks 0-1, tfgb throughput as 2-4);
#  c. the shipped examples/slurm/throughput-two-steps.sbatch (servers and
#     workers as two steps);
#  d. a bare `tfgb throughput` in a batch script: the one-machine launcher;
# each result's per-PS and per-worker counts add up, one report each, every
# step ends by itself, and no daemon or tfgb is left.  Skips, saying why,
# where Slurm cannot start (not root, packages missing, daemons failing).
# Parts (tests/lib.sh: in_part; a mutant runs only the part that catches
# it): launches (a-d), mpi (e).
. tests/lib.sh
[ -x "$TFGB" ] || fail "build ./tfgb first"
need_py json python3
. tests/slurm.sh
why=$(slurm_why)
[ -z "$why" ] || skip "$why"
case $TFGB in /*) ;; *) TFGB=$(pwd)/$TFGB ;; esac
export TFGB

out=$(mktemp -d)
cleanup() {
	trap - EXIT INT TERM
	# a job still queued (a failed part): cancelled, so that its steps end
	if [ -s "$out/slurm/slurmctld.pid" ] && [ -n "$(squeue -h 2>/dev/null)" ]; then
		scancel --quiet --user=root 2>/dev/null
		sleep 1
	fi
	slurm_down "$out/slurm"
	wait 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

slurm_up "$out/slurm" >"$out/up.err" 2>&1 || skip "Slurm cannot start here: $(tail -c 600 "$out/up.err")"

port=$(free_ports 3) || fail "no free ports"
job=$out/job.ini
cat >"$job" <<INI
[job]
warmup = $(slow 100)ms
duration = $(slow 500)ms
timeout = $(slow 10)s
[cluster]
ps = 127.0.0.1:$port
ps_count = 2
workers = 3
INI
sums='d["throughput"]["reported"] == 3 and d["throughput"]["workers"] == 3
and len(d["throughput"]["per_ps"]) == 2 and len(d["throughput"]["per_worker"]) == 3
and sum(d["throughput"]["per_ps"]) == d["calls"] == sum(d["throughput"]["per_worker"])
and d["calls"] > 0 and min(d["throughput"]["per_ps"]) > 0 and d["errors"] == 0
and d["status"] == "ok" and d["throughput"]["incomplete"] is False'
# check NAME FILE: one report in FILE, whose counts add up
check() {
	[ "$(grep -c '"benchmark"' "$2")" = 1 ] || fail "$1: not one report: $(cat "$2" "$2.err")"
	json_check "$sums" <"$2" || fail "$1: $(cat "$2" "$2.err")"
}
limit=$(slow 60)

if in_part launches; then
	# a. one launch from the shipped batch script (its servers at $port, $port+1)
	PS_PORT=$port slurm_batch "$limit" -N 1 -n 5 --ntasks-per-node=5 -o "$out/a.json" -e "$out/a.json.err" \
		examples/slurm/throughput-one-launch.sbatch -c "$job" -q -f json >"$out/a.sub" 2>&1 ||
		fail "one-launch sbatch: exit $?: $(cat "$out/a.sub" "$out/a.json" "$out/a.json.err" 2>&1)"
	check "one launch (sbatch)" "$out/a.json"

	# b. srun --multi-prog with the shipped configuration
	sed "s|tfgb |$TFGB |; s|job.ini|$job -q -f json|" examples/slurm/throughput.multi-prog.conf \
		>"$out/mp.conf"
	timeout "$limit" srun -N 1 -n 5 --multi-prog "$out/mp.conf" >"$out/b.json" 2>"$out/b.json.err" ||
		fail "srun --multi-prog: exit $?: $(cat "$out/b.json" "$out/b.json.err")"
	check "srun --multi-prog" "$out/b.json"

	# c. servers and workers as two steps
	PS_PORT=$port slurm_batch "$limit" -N 1 -n 5 --ntasks-per-node=5 -o "$out/c.json" -e "$out/c.json.err" \
		examples/slurm/throughput-two-steps.sbatch -c "$job" -q -f json >"$out/c.sub" 2>&1 ||
		fail "two-step sbatch: exit $?: $(cat "$out/c.sub" "$out/c.json" "$out/c.json.err" 2>&1)"
	check "two steps (sbatch)" "$out/c.json"

	# d. a bare tfgb throughput in a batch script is the one-machine launcher
	# shellcheck disable=SC2016 # $TFGB is expanded by the batch script
	printf '#!/bin/sh\nexec "$TFGB" throughput -c "%s" -q -f json\n' "$job" >"$out/d.sbatch"
	slurm_batch "$limit" -N 1 -n 1 -o "$out/d.json" -e "$out/d.json.err" "$out/d.sbatch" \
		>"$out/d.sub" 2>&1 || fail "launcher in a batch script: exit $?: $(cat "$out/d.sub" "$out/d.json" "$out/d.json.err" 2>&1)"
	check "launcher in a batch script" "$out/d.json"
fi

# e. transport mpi, every process a rank of srun's step through Slurm's
# PMIx plugin (tfgb-mpi(7)): latency as 2 ranks, throughput as 5 (ranks
# 0-1 the PSs); the result names the MPI library and its counts add up.
# Without an MPI plugin (srun's --mpi=none) each task would be a singleton
# rank: it exits 2 at once, naming the srun command to use.
if ! in_part mpi; then
	: # another part alone (tests/mutants.sh)
elif ! $TFGB version | grep -q '^mpi: compiled in'; then
	skip_part "srun --mpi=pmix not tried: tfgb built without the mpi transport (MPI=0)"
elif ! srun --mpi=list 2>&1 | grep -qw pmix; then
	skip_part "srun --mpi=pmix not tried: Slurm has no mpi_pmix plugin here ($(srun --mpi=list 2>&1 | tr '\n\t' '  '))"
else
	mpi_leaks_unchecked "under srun"
	M="-c $job -s job.transport=mpi -s job.warmup=$(slow 500)ms -q -f json"
	timeout "$limit" srun --mpi=pmix -N 1 -n 2 "$TFGB" latency $M -s job.duration=$(slow 300)ms \
		>"$out/e1.json" 2>"$out/e1.json.err" ||
		fail "srun --mpi=pmix latency: exit $?: $(cat "$out/e1.json" "$out/e1.json.err")"
	[ "$(grep -c '"benchmark"' "$out/e1.json")" = 1 ] || fail "srun mpi latency: not one report"
	json_check "d['transport'] == 'mpi' and 'Open MPI v' in d['tfgb']['transport_version']
and '2 of 2 ranks' in d['tfgb']['transport_version'] and d['status'] == 'ok'
and d['errors'] == 0 and d['calls'] > 0 and d['histogram']['count'] == d['calls']" \
		<"$out/e1.json" || fail "srun mpi latency: $(cat "$out/e1.json" "$out/e1.json.err")"
	timeout "$limit" srun --mpi=pmix -N 1 -n 5 "$TFGB" throughput $M >"$out/e2.json" 2>"$out/e2.json.err" ||
		fail "srun --mpi=pmix throughput: exit $?: $(cat "$out/e2.json" "$out/e2.json.err")"
	check "srun --mpi=pmix throughput" "$out/e2.json"
	json_check "d['transport'] == 'mpi' and 'Open MPI v' in d['tfgb']['transport_version']
and '5 of 5 ranks' in d['tfgb']['transport_version']" <"$out/e2.json" ||
		fail "srun mpi throughput: $(cat "$out/e2.json")"
	t0=$(date +%s)
	timeout "$limit" srun --mpi=none -N 1 -n 2 "$TFGB" latency $M >"$out/e3" 2>"$out/e3.err"
	rc=$?
	[ $rc = 2 ] || fail "srun --mpi=none: exit $rc, want 2: $(cat "$out/e3.err")"
	grep -qF "without an MPI plugin (--mpi=none): run 'srun --mpi=pmix -n 2 tfgb latency" \
		"$out/e3.err" || fail "srun --mpi=none: no srun command in: $(cat "$out/e3.err")"
	[ $(($(date +%s) - t0)) -le $(slow 10) ] || fail "srun --mpi=none: took more than $(slow 10)s"
fi

# every step ended by itself, and nothing of the runs is left: a job that
# ended may stay a moment in the queue while slurmctld hears of its end
# (state CG, completing; seen on a loaded machine), so the queue is given
# a few seconds to empty
q=$(squeue -h 2>&1)
for _ in $(seq "$(slow 10)"); do
	[ -z "$q" ] && break
	sleep 0.5
	q=$(squeue -h 2>&1)
done
[ -z "$q" ] || fail "jobs left in the queue: $(squeue -t all 2>&1)"
left=$(pgrep -f -- "$job") && fail "processes left: $(ps -o pid=,args= -p "$(echo "$left" | paste -sd,)")"
echo ok
