#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the slurm test lane and for
# trying the sharded-run scripts (docs/shards.md) without a real cluster.
#
#   scripts/slurm_local.sh start   munged, slurmctld and slurmd, loopback only,
#                                  every file of theirs (config, key, sockets,
#                                  state, logs, pid files) in a new temporary
#                                  folder; waits (bounded) until the node is idle
#   scripts/slurm_local.sh stop    cancels the cluster's jobs, stops exactly the
#                                  processes it started (by their pid files) and
#                                  removes the folder
#
# `start` writes SLURM_CONF=<folder>/slurm.conf to $EVALRUN_SLURM_ENV
# (default /tmp/evalrun-slurm.env); the slurm test lane reads it, and a shell
# can use the cluster after `export $(cat /tmp/evalrun-slurm.env)`.
# Ports: $EVALRUN_SLURM_PORT (slurmctld, default 16817) and the next one
# (slurmd). Needs root (the jobs run as root) and Debian's slurm-wlm and munge.
set -euo pipefail

ENV_FILE=${EVALRUN_SLURM_ENV:-/tmp/evalrun-slurm.env}
CTLD_PORT=${EVALRUN_SLURM_PORT:-16817}
SLURMD_PORT=$((CTLD_PORT + 1))
NODE=evalrun-node
CPUS=8  # job-array tasks that run at once on this one node, whatever its cores

die() { echo "slurm_local.sh: $*" >&2; exit 1; }

# The state folder of the running cluster, from the env file.
state_dir() {
  [[ -f $ENV_FILE ]] || return 1
  local conf
  conf=$(sed -n 's/^SLURM_CONF=//p' "$ENV_FILE")
  [[ -n $conf && -f $conf ]] || return 1
  dirname "$conf"
}

# Nothing listens on 127.0.0.1:$1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The pid in a pid file, when that process is still the named program.
live_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
  echo "$pid"
}

write_conf() {
  local d=$1 host
  host=$(hostname -s)
  cat >"$d/slurm.conf" <<EOF
ClusterName=evalrun
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.socket
StateSaveLocation=$d/ctld
SlurmdSpoolDir=$d/slurmd
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=$NODE NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  local d=$1
  dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$d/munge.key"
  munged --force --socket="$d/munge.socket" --key-file="$d/munge.key" --pid-file="$d/munged.pid" \
    --log-file="$d/munged.log" --seed-file="$d/munged.seed" || die "munged did not start (see $d/munged.log)"
}

wait_idle() {
  local d=$1 state=""
  for _ in $(seq 1 60); do
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
    [[ $state == idle ]] && return 0
    sleep 0.5
  done
  die "the node is not idle after 30 s (state '$state'); logs in $d"
}

start() {
  local d
  if d=$(state_dir); then
    live_pid "$d/slurmctld.pid" slurmctld >/dev/null && die "a cluster is already started ($d); stop it first"
    stop  # what is left of one whose slurmctld died
  fi
  for cmd in munged slurmctld slurmd sinfo; do command -v $cmd >/dev/null || die "$cmd not found (apt-get install slurm-wlm munge)"; done
  for p in $CTLD_PORT $SLURMD_PORT; do port_free "$p" || die "port $p is in use (set EVALRUN_SLURM_PORT)"; done
  d=$(mktemp -d /tmp/evalrun-slurm.XXXXXX)
  chmod 0700 "$d"
  mkdir -p "$d/ctld" "$d/slurmd"
  echo "SLURM_CONF=$d/slurm.conf" >"$ENV_FILE"
  write_conf "$d"
  export SLURM_CONF=$d/slurm.conf
  start_munge "$d"
  slurmctld -f "$SLURM_CONF" -i || die "slurmctld did not start (see $d/slurmctld.log)"
  slurmd -f "$SLURM_CONF" -N "$NODE" || die "slurmd did not start (see $d/slurmd.log)"
  wait_idle "$d"
  echo "slurm_local.sh: cluster up in $d (SLURM_CONF in $ENV_FILE)"
}

# Stops the process of one pid file, if it is still the one we started.
stop_pid() {
  local pid
  pid=$(live_pid "$1" "$2") || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  local d
  d=$(state_dir) || { echo "slurm_local.sh: no cluster started"; return 0; }
  export SLURM_CONF=$d/slurm.conf
  # Jobs first, so that no job step outlives its slurmd.
  scancel --full --quiet --partition=debug 2>/dev/null || true
  for _ in $(seq 1 100); do
    [[ -z $(squeue -h -t running,completing -o %i 2>/dev/null) ]] && break
    sleep 0.1
  done
  stop_pid "$d/slurmd.pid" slurmd
  stop_pid "$d/slurmctld.pid" slurmctld
  stop_pid "$d/munged.pid" munged
  rm -rf "$d" "$ENV_FILE"
  echo "slurm_local.sh: cluster stopped"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  *) die "usage: $0 start|stop" ;;
esac
