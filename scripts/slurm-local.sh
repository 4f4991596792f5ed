#!/usr/bin/env bash
# slurm-local.sh — a real one-node Slurm on this machine, for trying and testing
# `nntrain sweep --launcher slurm` (tests/slurm_sweep_test.sh).
#
#   scripts/slurm-local.sh [start]   install what is missing (Debian's slurm-wlm and munge),
#                                    write a one-node config, start munged, slurmctld, slurmd
#   scripts/slurm-local.sh stop      stop the daemons this script started
#   scripts/slurm-local.sh status    say whether they run (exit 0) or not (exit 1)
#   scripts/slurm-local.sh env       print the export line clients need (SLURM_CONF)
#
# Everything lives under $NNTRAIN_SLURM_HOME (default /var/lib/nntrain-slurm): the config, the
# state, spool, logs and pid files. /etc/slurm is never touched, so a machine that already is
# part of a cluster keeps its own config; clients find ours through SLURM_CONF. A munged that
# already runs (a cluster's) is used as it is and never stopped. Safe to run twice: a start
# with the daemons up (and the same config) does nothing; a changed config restarts them.
#
# Exit codes: 0 running; 77 cannot run here (not root, no apt-get, packages not installable),
# with the reason on stderr; 1 installed but the daemons did not come up (log tails printed).
set -uo pipefail

HOME_DIR="${NNTRAIN_SLURM_HOME:-/var/lib/nntrain-slurm}"
CONF="$HOME_DIR/etc/slurm.conf"
START_TIMEOUT="${SLURM_START_TIMEOUT:-60}"
say() { echo "slurm-local: $*" >&2; }
skip() { say "SKIPPED: $*"; exit 77; }
fail() { say "error: $*"; exit 1; }

# A process that exists and is not a zombie (in a container whose init does not reap, a
# stopped daemon may linger as one: kill -0 would still succeed).
pid_alive() {
  local state
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [[ -n $state && $state != Z ]]
}
alive() { [[ -f "$1" ]] && pid_alive "$(cat "$1" 2>/dev/null)"; }
munge_ok() { command -v munge >/dev/null && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

install_packages() {
  local missing=()
  command -v slurmctld >/dev/null || missing+=(slurmctld)
  command -v slurmd >/dev/null || missing+=(slurmd)
  command -v sbatch >/dev/null || missing+=(slurm-client)
  command -v munged >/dev/null || missing+=(munge)
  ((${#missing[@]} == 0)) && return 0
  [[ $(id -u) == 0 ]] || skip "needs root to install ${missing[*]} (or install slurm-wlm and munge first)"
  command -v apt-get >/dev/null || skip "no apt-get to install ${missing[*]} (not Debian?)"
  say "installing ${missing[*]} (Debian packages; once)"
  local t0=$SECONDS log="/tmp/slurm-local-apt.$$.log"
  # Another process may hold the dpkg lock: wait for it rather than fail.
  if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
      "${missing[@]}" >"$log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q >>"$log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
      "${missing[@]}" >>"$log" 2>&1 || { tail -5 "$log" >&2; skip "could not install ${missing[*]} (log: $log)"; }
  fi
  rm -f "$log"
  say "installed in $((SECONDS - t0)) s"
}

start_munge() {
  munge_ok && return 0
  mkdir -p /etc/munge
  chown munge:munge /etc/munge 2>/dev/null; chmod 700 /etc/munge
  [[ -f /etc/munge/munge.key ]] || {
    if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1
    else dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none; fi
  }
  chown munge:munge /etc/munge/munge.key 2>/dev/null; chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
  chmod 755 /run/munge
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --force >/dev/null 2>&1 || /usr/sbin/munged --force
  for _ in $(seq 50); do munge_ok && { touch "$HOME_DIR/started-munged"; return 0; }; sleep 0.1; done
  fail "munged did not start (see /var/log/munge/munged.log)"
}

write_config() {
  local host node_line
  host=$(hostname -s)
  # slurmd -C prints this machine's NodeName line (CPUs, sockets, cores, threads, memory).
  node_line=$(slurmd -C 2>/dev/null | head -1)
  [[ $node_line == NodeName=* ]] || node_line="NodeName=$host CPUs=$(nproc)"
  mkdir -p "$HOME_DIR"/{etc,state,spool,log,run}
  cat >"$CONF.new" <<EOF
# One-node Slurm for nntrain sweeps, written by scripts/slurm-local.sh.
ClusterName=nntrainlocal
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
StateSaveLocation=$HOME_DIR/state
SlurmdSpoolDir=$HOME_DIR/spool
SlurmctldPidFile=$HOME_DIR/run/slurmctld.pid
SlurmdPidFile=$HOME_DIR/run/slurmd.pid
SlurmctldLogFile=$HOME_DIR/log/slurmctld.log
SlurmdLogFile=$HOME_DIR/log/slurmd.log
${node_line%% UpTime=*} State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  if cmp -s "$CONF.new" "$CONF"; then rm -f "$CONF.new"; return 1; fi
  mv "$CONF.new" "$CONF"
  return 0
}

stop_daemons() {
  local name pid
  for name in slurmd slurmctld; do
    pid=$(cat "$HOME_DIR/run/$name.pid" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do pid_alive "$pid" || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    rm -f "$HOME_DIR/run/$name.pid"
  done
  if [[ -f "$HOME_DIR/started-munged" ]]; then
    pid=$(cat /run/munge/munged.pid 2>/dev/null)
    [[ -n $pid ]] && kill "$pid" 2>/dev/null
    rm -f "$HOME_DIR/started-munged"
  fi
}

node_ready() {
  local state
  state=$(SLURM_CONF="$CONF" sinfo -h -N -o '%T' 2>/dev/null | head -1)
  [[ $state == idle* || $state == mixed* || $state == allocated* ]]
}

start() {
  [[ $(id -u) == 0 ]] || { alive "$HOME_DIR/run/slurmctld.pid" 2>/dev/null && node_ready && exit 0; skip "not root: cannot start slurmctld/slurmd (run as root, or start them once as root)"; }
  install_packages
  mkdir -p "$HOME_DIR"
  local changed=0
  write_config && changed=1
  start_munge
  if ((changed == 0)) && alive "$HOME_DIR/run/slurmctld.pid" && alive "$HOME_DIR/run/slurmd.pid" && node_ready; then
    say "already running ($CONF)"; return 0
  fi
  stop_daemons_slurm_only
  local t0=$SECONDS
  # -c: clear saved state (jobs of an earlier session would otherwise come back).
  slurmctld -c -f "$CONF" || fail "slurmctld did not start: $(tail -3 "$HOME_DIR/log/slurmctld.log" 2>/dev/null)"
  slurmd -f "$CONF" || fail "slurmd did not start: $(tail -3 "$HOME_DIR/log/slurmd.log" 2>/dev/null)"
  while ! node_ready; do
    if ((SECONDS - t0 > START_TIMEOUT)); then
      say "node not ready after ${START_TIMEOUT} s; sinfo: $(SLURM_CONF="$CONF" sinfo -h -N 2>&1 | head -2)"
      tail -5 "$HOME_DIR/log/slurmctld.log" "$HOME_DIR/log/slurmd.log" >&2
      fail "the local Slurm did not come up"
    fi
    # A node left down/drained by an earlier session: bring it back.
    SLURM_CONF="$CONF" scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1
    sleep 0.5
  done
  say "running: one node $(hostname -s), partition local (daemons up in $((SECONDS - t0)) s); clients: export SLURM_CONF=$CONF"
}

stop_daemons_slurm_only() {
  local keep=""
  [[ -f "$HOME_DIR/started-munged" ]] && keep=1
  mv -f "$HOME_DIR/started-munged" "$HOME_DIR/started-munged.keep" 2>/dev/null
  stop_daemons
  [[ -n $keep ]] && mv -f "$HOME_DIR/started-munged.keep" "$HOME_DIR/started-munged"
  return 0
}

case "${1:-start}" in
  start) start ;;
  stop) stop_daemons; say "stopped" ;;
  status) alive "$HOME_DIR/run/slurmctld.pid" && alive "$HOME_DIR/run/slurmd.pid" && node_ready ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 [start|stop|status|env]" >&2; exit 2 ;;
esac
