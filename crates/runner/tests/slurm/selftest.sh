#!/usr/bin/env bash
# Self-test of the harness: up.sh, checks with real sbatch/squeue/scancel, down.sh.
#
#   selftest.sh [--slow] [STATE_DIR]
#
# --slow adds the time-limit checks (--time=1 jobs; ~1.5-2 min).
# Prints "N passed, N failed" at the end; exit status 0 only if all passed.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SLOW=0
if [ "${1:-}" = "--slow" ]; then SLOW=1; shift; fi
S=${1:-$(mktemp -d /tmp/slurm-selftest.XXXXXX)}
W="$S/work"
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
now() { date +%s.%N; }
dt()  { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# wait until none of the jobs (squeue args) is pending/running/completing
wait_gone() { # timeout squeue-args...
  local t=$1; shift
  local end=$(( $(date +%s) + t ))
  while squeue -h "$@" -t PENDING,RUNNING,CONFIGURING,COMPLETING,SUSPENDED -o '%i' 2>/dev/null | grep -q .; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.1
  done
}
job_field() { scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
max_overlap() { # files with "start T" / "end T" lines
  cat "$@" | awk '$1=="start"{print $2, 1} $1=="end"{print $2, -1}' | sort -n \
    | awk '{c += $2; if (c > m) m = c} END {print m + 0}'
}

trap '"$HERE/down.sh" "$S" >/dev/null 2>&1' EXIT

t0=$(now)
if "$HERE/up.sh" "$S" >"$S.up.out" 2>&1; then
  ok "up.sh in $(dt "$t0" "$(now)") s"
else
  cat "$S.up.out"; bad "up.sh"; echo "0 passed, 1 failed"; exit 1
fi
# shellcheck disable=SC1091
. "$S/env.sh"
mkdir -p "$W"

# ---- sinfo / gres
g=$(sinfo -h -N -o '%G %T')
[ "$g" = "gpu:4 idle" ] && ok "sinfo: '$g'" || bad "sinfo: '$g'"

# ---- GPU env inside tasks
j=$(sbatch --parsable -J envt --gres=gpu:2 -o "$W/env_%j.out" --wrap \
  'echo "CVD=${CUDA_VISIBLE_DEVICES-unset} JOB_GPUS=${SLURM_JOB_GPUS-unset} STEP_GPUS=${SLURM_STEP_GPUS-unset}"; srun -n1 --gres=gpu:1 bash -c "echo step CVD=\$CUDA_VISIBLE_DEVICES STEP_GPUS=\$SLURM_STEP_GPUS"')
wait_gone 30 -j "$j"
out=$(tr '\n' ';' <"$W/env_$j.out")
case "$out" in
  "CVD=0,1 JOB_GPUS=0,1 STEP_GPUS=unset;step CVD=0 STEP_GPUS=0;") ok "gpu env: $out" ;;
  *) bad "gpu env: $out" ;;
esac

# ---- array --array=0-5%2 --gres=gpu:1 ; squeue --name
cat >"$W/arr.sh" <<'EOF'
#!/bin/bash
f="$1/t_$SLURM_ARRAY_TASK_ID"
echo "start $(date +%s.%N)" >"$f.tmp"
sleep 1
echo "end $(date +%s.%N)" >>"$f.tmp"
echo "cvd $CUDA_VISIBLE_DEVICES" >>"$f.tmp"
mv "$f.tmp" "$f"
EOF
mkdir -p "$W/arr"
t0=$(now)
j=$(sbatch --parsable --array=0-5%2 --gres=gpu:1 --job-name=harness_arr -o /dev/null "$W/arr.sh" "$W/arr")
sq=$(squeue --name harness_arr -h -o '%i %T' | head -n3 | tr '\n' ';')
echo "  squeue --name harness_arr -h -o '%i %T' right after submit: $sq"
[ -n "$sq" ] && ok "squeue --name works" || bad "squeue --name empty"
wait_gone 60 --name harness_arr
el=$(dt "$t0" "$(now)")
n=$(ls "$W/arr"/t_? 2>/dev/null | wc -l)
m=$(max_overlap "$W/arr"/t_?)
states=$(squeue -t all --name harness_arr -h -o '%T' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$n" = 6 ] && [ "$m" -le 2 ] && ok "array 0-5%2: $n files, max $m concurrent, $el s, states:$states" \
  || bad "array 0-5%2: $n files, max $m concurrent, states:$states"

# ---- at most 4 gpu:1 jobs at once (node has 16 CPUs, so GRES is the limit)
mkdir -p "$W/conc"
for i in $(seq 8); do
  sbatch -Q -J harness_conc --gres=gpu:1 -o /dev/null --wrap \
    "echo start \$(date +%s.%N) >$W/conc/\$SLURM_JOB_ID; sleep 2; echo end \$(date +%s.%N) >>$W/conc/\$SLURM_JOB_ID"
done
wait_gone 60 --name harness_conc
m=$(max_overlap "$W/conc"/*)
[ "$m" = 4 ] && ok "8 x gpu:1 jobs: max $m concurrent" || bad "8 x gpu:1 jobs: max $m concurrent (want 4)"

# ---- scancel of a running job: batch shell gets SIGCONT+SIGTERM (trappable)
cat >"$W/trap.sh" <<'EOF'
#!/bin/bash
log=$1
# no fork inside the handlers ($EPOCHREALTIME, not $(date)): Slurm signals every
# process of the job, a forked date would be killed and the line lost
for s in TERM INT USR1 USR2 CONT; do trap "echo got $s \$EPOCHREALTIME >>$log" $s; done
echo "ready $EPOCHREALTIME" >>"$log"
while true; do sleep 0.2 & wait $!; done
EOF
j=$(sbatch --parsable -J harness_trap -o /dev/null "$W/trap.sh" "$W/trap.log")
for _ in $(seq 100); do grep -qs ready "$W/trap.log" && break; sleep 0.1; done
t0=$(now); scancel "$j"
wait_gone 30 -j "$j"
el=$(dt "$t0" "$(now)")
st="$(job_field "$j" JobState) $(job_field "$j" ExitCode)"
sigs=$(awk '/^got/{printf "%s ", $2}' "$W/trap.log")
[[ "$sigs" == *TERM* ]] && [ "$st" = "CANCELLED 0:9" ] \
  && ok "scancel (script traps TERM): signals [$sigs], state '$st', gone after $el s" \
  || bad "scancel (trap): signals [$sigs], state '$st', $el s"

j=$(sbatch --parsable -J harness_plain -o /dev/null --wrap 'sleep 300')
for _ in $(seq 100); do [ "$(job_field "$j" JobState)" = RUNNING ] && break; sleep 0.1; done
sleep 0.3
t0=$(now); scancel "$j"
wait_gone 30 -j "$j"
el=$(dt "$t0" "$(now)")
st="$(job_field "$j" JobState) $(job_field "$j" ExitCode)"
[ "$st" = "CANCELLED 0:15" ] && ok "scancel (plain sleep): state '$st', gone after $el s" \
  || bad "scancel (plain): state '$st', $el s"

# ---- failing job
j=$(sbatch --parsable -J harness_fail -o /dev/null --wrap 'exit 3')
wait_gone 30 -j "$j"
st="$(job_field "$j" JobState) $(job_field "$j" ExitCode)"
[ "$st" = "FAILED 3:0" ] && ok "exit 3 -> '$st'" || bad "exit 3 -> '$st'"

# ---- sacct without accounting
out=$(sacct -j "$j" 2>&1); rc=$?
[ $rc -ne 0 ] && ok "sacct fails as expected: rc=$rc '$out'" || bad "sacct unexpectedly worked: $out"

# ---- per-task overhead
t0=$(now)
j=$(sbatch --parsable --array=0-19%4 -J harness_bench -o /dev/null --wrap 'sleep 0.1')
wait_gone 120 -j "$j"
el=$(dt "$t0" "$(now)")
ok "bench: array 0-19%4 of 'sleep 0.1': $el s"
t0=$(now)
for i in $(seq 20); do sbatch -Q -J harness_bench2 --gres=gpu:1 -o /dev/null --wrap 'sleep 0.1'; done
wait_gone 120 --name harness_bench2
el=$(dt "$t0" "$(now)")
ok "bench: 20 separate --gres=gpu:1 jobs of 'sleep 0.1' (4 at once by GRES): $el s"

# ---- time limit (slow)
if [ $SLOW = 1 ]; then
  ja=$(sbatch --parsable --time=0:01 -J harness_tl -o /dev/null "$W/trap.sh" "$W/tlA.log")
  jb=$(sbatch --parsable --time=1 --signal=B:USR2@30 -J harness_tl -o /dev/null "$W/trap.sh" "$W/tlB.log")
  wait_gone 150 --name harness_tl
  for j in $ja $jb; do
    log="$W/tlA.log"; [ "$j" = "$jb" ] && log="$W/tlB.log"
    r=$(awk '/^ready/{r=$2} /^got/{printf "%s@+%.1fs ", $2, $3 - r}' "$log")
    st="$(job_field "$j" JobState) $(job_field "$j" ExitCode) TimeLimit=$(job_field "$j" TimeLimit) RunTime=$(job_field "$j" RunTime)"
    want=TIMEOUT; [ "$j" = "$jb" ] && [[ "$r" != *USR2* ]] && want="USR2 missing"
    [[ "$st" == TIMEOUT* ]] && [ "$want" = TIMEOUT ] && ok "time limit job $j: $st; signals: $r" || bad "time limit job $j: $st; $r"
  done
fi

t0=$(now)
"$HERE/down.sh" "$S" >/dev/null 2>&1
left=$(for p in $(pgrep -x slurmctld; pgrep -x slurmd; pgrep -x munged; pgrep -x slurmstepd); do
  grep -qs "$S" /proc/"$p"/cmdline /proc/"$p"/environ && echo "$p"; done)
[ -z "$left" ] && ok "down.sh in $(dt "$t0" "$(now)") s, no process left" || bad "processes left: $left"
trap - EXIT
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
