#!/usr/bin/env bash
# Stop the cluster that up.sh started in STATE_DIR: slurmd, slurmctld, munged
# (by their pid files), then any job processes (slurmstepd and children) that
# were started by that slurmd. Leaves STATE_DIR (logs, config) in place.
#
#   down.sh STATE_DIR
set -uo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 STATE_DIR" >&2
  exit 2
fi
[ -d "$1" ] || { echo "down.sh: $1: no such directory" >&2; exit 0; }
S=$(cd "$1" && pwd)
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"

# pid of a daemon, only if it is still the process we expect (guards pid reuse)
daemon_pid() { # pidfile comm
  local pf=$1 comm=$2 pid
  [ -f "$pf" ] || return 1
  pid=$(cat "$pf" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$comm" ] || return 1
  echo "$pid"
}

stop() { # pidfile comm
  local pid i
  pid=$(daemon_pid "$1" "$2") || { rm -f "$1"; return 0; }
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "down.sh: $2 ($pid) ignored SIGTERM for 10 s, killing" >&2
    kill -KILL "$pid" 2>/dev/null
    sleep 0.2
  fi
  rm -f "$1"
}

# slurmstepd processes of this cluster: their cmdline/environ mention our
# SLURM_CONF, or they are children of our slurmd. Collect before stopping slurmd.
our_stepds() {
  local p
  for p in $(pgrep -x slurmstepd 2>/dev/null); do
    if tr "\0" "\n" 2>/dev/null </proc/"$p"/environ | grep -qx "SLURM_CONF=$S/slurm.conf" \
       || grep -qs "$S/spool" /proc/"$p"/cmdline; then
      echo "$p"
      continue
    fi
    # fall back: open files under our spool dir
    if ls -l /proc/"$p"/fd 2>/dev/null | grep -q "$S/"; then echo "$p"; fi
  done
}

descendants() { # pid -> all descendant pids
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do
    echo "$c"
    descendants "$c"
  done
}

# job processes that escaped the stepd's process tree (double fork/daemonize):
# they carry SLURM_JOB_ID plus our SLURM_CONF in their environment
# (sbatch propagates the submitter's environment by default).
escaped_jobs() {
  local p self=$$ anc
  anc=" $self $PPID "
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    case "$anc" in *" $p "*) continue ;; esac
    env=$(tr "\0" "\n" 2>/dev/null </proc/"$p"/environ) || continue
    grep -qx "SLURM_CONF=$S/slurm.conf" <<<"$env" || continue
    grep -q '^SLURM_JOB_ID=' <<<"$env" || continue
    echo "$p"
  done
}

stepds=$(our_stepds)
victims=""
for p in $stepds; do victims="$victims $p $(descendants "$p")"; done

# slurmd and slurmctld in parallel (each takes 1-2 s to exit), then munged
stop "$S/run/slurmd.pid" slurmd &
stop "$S/run/slurmctld.pid" slurmctld &
wait

# jobs left running (slurmstepd survives slurmd on purpose)
if [ -n "${victims// /}" ]; then
  # shellcheck disable=SC2086
  kill -TERM $victims 2>/dev/null
  sleep 0.5
  # shellcheck disable=SC2086
  kill -KILL $victims 2>/dev/null
fi

# shellcheck disable=SC2046
esc=$(escaped_jobs)
if [ -n "$esc" ]; then
  # shellcheck disable=SC2086
  kill -KILL $esc 2>/dev/null
fi

stop "$S/run/munged.pid" munged
rm -f "$S/munge/munge.socket" "$S/munge/munge.socket.lock"
echo "down.sh: stopped slurm in $S" >&2
exit 0
