# tests/slurm.sh - a one-node Slurm in a temporary directory (sourced after
# tests/lib.sh).  The node claims 16 CPUs whatever it has
# (config_overrides), so that a step of five tasks fits on a small machine.  slurm_up DIR starts munged, slurmctld and slurmd as root
# with a private slurm.conf, munge key, state and spool directories under
# DIR, on free unprivileged ports; it prints why and returns 1 when Slurm
# cannot start here.  slurm_down DIR stops every daemon slurm_up started
# (by the pids it recorded) and waits for them.  Commands then need
# SLURM_CONF=DIR/slurm.conf (slurm_up exports it).

# slurm_why: empty when Slurm can be tried here, else why not.
slurm_why() {
	[ "$(id -u)" = 0 ] || { echo "needs root (slurmd runs jobs as their user)"; return; }
	for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd; do
		[ -x "$p" ] || { echo "no $p (Debian packages slurm-wlm and munge)"; return; }
	done
	for c in sbatch srun squeue scontrol mungekey; do
		command -v $c >/dev/null 2>&1 || { echo "no $c (Debian packages slurm-wlm, munge)"; return; }
	done
}

# slurm_wait_file FILE SECONDS: 0 once FILE exists.
slurm_wait_file() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ "$i" -gt $(($2 * 10 * SLOW)) ] && return 1
		sleep 0.1
	done
}

slurm_up() {
	sd=$1
	mkdir -p "$sd/munge" "$sd/state" "$sd/spool" "$sd/log" || return 1
	chmod 700 "$sd/munge"
	mungekey -c -k "$sd/munge/key" >"$sd/log/mungekey" 2>&1 ||
		dd if=/dev/urandom of="$sd/munge/key" bs=1024 count=1 2>/dev/null
	chmod 400 "$sd/munge/key"
	/usr/sbin/munged -f --key-file="$sd/munge/key" --socket="$sd/munge/sock" \
		--pid-file="$sd/munge/pid" --log-file="$sd/log/munged" --seed-file="$sd/munge/seed" \
		>"$sd/log/munged.out" 2>&1 || { echo "munged: $(cat "$sd/log/munged.out" "$sd/log/munged" 2>/dev/null)"; return 1; }
	slurm_wait_file "$sd/munge/pid" 10 || { echo "munged did not start"; return 1; }
	cport=$(free_ports 2) || { echo "no free ports"; return 1; }
	dport=$((cport + 1))
	host=$(hostname -s)
	cat >"$sd/slurm.conf" <<CONF
ClusterName=tfgbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sd/munge/sock
StateSaveLocation=$sd/state
SlurmdSpoolDir=$sd/spool
SlurmctldPidFile=$sd/slurmctld.pid
SlurmdPidFile=$sd/slurmd.pid
SlurmctldLogFile=$sd/log/slurmctld
SlurmdLogFile=$sd/log/slurmd
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
PlugStackConfig=$sd/plugstack.conf
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 Sockets=1 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
	: >"$sd/plugstack.conf"
	SLURM_CONF=$sd/slurm.conf
	export SLURM_CONF
	/usr/sbin/slurmctld -i -f "$sd/slurm.conf" >"$sd/log/slurmctld.out" 2>&1 ||
		{ echo "slurmctld: $(tail -3 "$sd/log/slurmctld.out" "$sd/log/slurmctld" 2>/dev/null)"; return 1; }
	/usr/sbin/slurmd -f "$sd/slurm.conf" -N "$host" >"$sd/log/slurmd.out" 2>&1 ||
		{ echo "slurmd: $(tail -3 "$sd/log/slurmd.out" "$sd/log/slurmd" 2>/dev/null)"; return 1; }
	i=0
	until sinfo -h -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; do
		i=$((i + 1))
		[ "$i" -gt $((30 * 10 * SLOW)) ] && {
			echo "the node never became idle: $(sinfo -h 2>&1 | head -2); $(tail -3 "$sd/log/slurmd" "$sd/log/slurmctld" 2>/dev/null)"
			return 1
		}
		sleep 0.1
	done
}

# slurm_batch SECONDS SBATCH-ARGS...: submits a batch job and waits for its
# end (polling: sbatch -W looks every few seconds), scancel-ing it at the
# deadline; 0 when it ended with exit code 0, else 1 with its state said.
slurm_batch() {
	limit=$1
	shift
	id=$(sbatch --parsable "$@") || return 1
	i=0
	while squeue -h -j "$id" 2>/dev/null | grep -q .; do
		i=$((i + 1))
		if [ "$i" -gt $((limit * 10)) ]; then
			scancel "$id"
			echo "job $id did not end within ${limit}s"
			return 1
		fi
		sleep 0.1
	done
	st=$(scontrol -o show job "$id" 2>&1)
	case $st in
	*JobState=COMPLETED*ExitCode=0:0*) return 0 ;;
	*) echo "job $id: $(echo "$st" | grep -o 'JobState=[^ ]*\|ExitCode=[^ ]*\|Reason=[^ ]*' | tr '\n' ' ')"
		return 1 ;;
	esac
}

# slurm_down DIR: stops slurmd, slurmctld and munged started by slurm_up:
# SIGTERM to all three, SIGKILL to those still there 3 seconds later (their
# state is a temporary directory's: nothing to save).
slurm_down() {
	pids=
	for f in "$1/slurmd.pid" "$1/slurmctld.pid" "$1/munge/pid"; do
		p=$(cat "$f" 2>/dev/null) && [ -n "$p" ] && kill "$p" 2>/dev/null && pids="$pids $p"
	done
	i=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ "$i" -lt $((30 * SLOW)) ]; do
			i=$((i + 1))
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
	done
	return 0
}
