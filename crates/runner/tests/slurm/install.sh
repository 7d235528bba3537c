#!/usr/bin/env bash
# Idempotently install a single-node Slurm (Debian 12: slurm 22.05) + munge.
# Exits 0 immediately when everything is already installed.
# Daemons are NOT started by the packages (policy-rc.d blocks it); use up.sh.
set -euo pipefail

PKGS=(slurmctld slurmd slurm-client munge)
# binaries we need afterwards
BINS=(slurmctld slurmd sbatch squeue sinfo scancel scontrol munged munge unmunge)

have_all() {
  local b
  for b in "${BINS[@]}"; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || return 1
  done
  return 0
}

if have_all; then
  echo "install.sh: slurm + munge already installed ($(dpkg-query -W -f='${Version}' slurmctld 2>/dev/null || echo '?'))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: must run as root (apt-get)" >&2
  exit 1
fi

start=$(date +%s)
export DEBIAN_FRONTEND=noninteractive

# Keep package maintainer scripts from trying to start the daemons
# (no systemd here; invoke-rc.d would start munge/slurm with system config).
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  created_policy=1
fi
cleanup() { [ "$created_policy" = 1 ] && rm -f "$policy"; true; }
trap cleanup EXIT

apt_get() {
  apt-get -q -y -o Dpkg::Use-Pty=0 \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}

# apt lists may be missing/stale on a fresh machine
if ! apt-get -qq -y install --no-install-recommends --dry-run "${PKGS[@]}" >/dev/null 2>&1; then
  apt_get update -qq >/dev/null
fi
apt_get install --no-install-recommends "${PKGS[@]}" >/tmp/slurm-harness-apt.log 2>&1 || {
  echo "install.sh: apt-get install failed; last lines:" >&2
  tail -n 30 /tmp/slurm-harness-apt.log >&2
  exit 1
}

if ! have_all; then
  echo "install.sh: packages installed but binaries missing" >&2
  exit 1
fi
end=$(date +%s)
echo "install.sh: installed slurm $(dpkg-query -W -f='${Version}' slurmctld) munge $(dpkg-query -W -f='${Version}' munge) in $((end - start)) s"
