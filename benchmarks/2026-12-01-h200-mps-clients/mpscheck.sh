#!/usr/bin/env bash
# MPS that really serves, on the GPU: one runner invocation of three MPS runs.
#   (a) WRONG_RUN: job 1 looks for the MPS daemon where none serves
#       (--fault-wrong-mps-pipe): the runner's check of the MPS clients, once every job
#       is ready and before the release, must fail the run, naming the job and its pid.
#   (b) KILL_RUN: this script kills job 1's own process (the pid of its `hello` event)
#       by SIGKILL a few seconds into the window: the run must fail cleanly (the other
#       job stopped, the daemon shut down), and NEXT_RUN, the next workload, must run
#       normally with a fresh daemon that serves each of its jobs.
# The three run ids are in the plan's order (the runner makes runs in that order).
#
# On the GPU host, in the repository root of the copied tree:
#   OUT=<results dir> bash .measure/mpscheck.sh [SOURCE_COMMIT]
# Here, without a GPU (the simulated backend, no --preload):
#   SIMULATE=1 RUNNER=<target>/debug/colloc-runner PLAN=<plan.json> OUT=<dir> bash .measure/mpscheck.sh
# Environment: RUNNER (.measure/colloc-runner), PLAN (.measure/plan.json), GPU (0), OUT
# (required), CAMP (campaign directory, default: a new one under /tmp), KILL_AFTER
# (seconds into the window, default 3), WRONG_RUN, KILL_RUN, NEXT_RUN, EXTRA_ARGS (more
# runner options, split at spaces).
# Output in $OUT: runner.log, kill.txt, the three runs' meta.json, verify.txt,
# validate.txt, campaign.tar.gz, summary.txt; the last line printed is
# "mpscheck: PASS" or "mpscheck: FAIL (...)"; the exit status is 0 only on PASS.
set -u

RUNNER=${RUNNER:-.measure/colloc-runner}
PLAN=${PLAN:-.measure/plan.json}
GPU=${GPU:-0}
COMMIT=${1:-${SOURCE_COMMIT:-unknown}}
WRONG_RUN=${WRONG_RUN:-e33-resnet26-cifar10-x2-mpslim3g@syn.r1}
KILL_RUN=${KILL_RUN:-e33-resnet26-cifar10-x2-mps@syn.r1}
NEXT_RUN=${NEXT_RUN:-e33-resnet26-cifar10-x3-mps@syn.r1}
: "${OUT:?set OUT to the directory for the results}"
mkdir -p "$OUT"
CAMP=${CAMP:-$(mktemp -d /tmp/mpscheck.XXXXXX)/c}
LOG=$OUT/runner.log

if [ "${SIMULATE:-0}" = 1 ]; then
  # 10 simulated seconds of window take 3 s.
  MODE_ARGS=(--simulate --time-scale "${TIME_SCALE:-0.3}")
  KILL_AFTER=${KILL_AFTER:-1}
else
  MODE_ARGS=(--preload)
  KILL_AFTER=${KILL_AFTER:-3}
  nvidia-smi --query-gpu=index,name,uuid,driver_version,mig.mode.current --format=csv > "$OUT/gpu.txt" 2>&1
fi

# The three runs must be in the plan, in this order.
python3 - "$PLAN" "$WRONG_RUN" "$KILL_RUN" "$NEXT_RUN" <<'PY' || exit 1
import json, sys
plan = json.load(open(sys.argv[1]))
ids = [w["id"] for w in plan["workloads"]]
runs = sys.argv[2:]
pos = []
for r in runs:
    w = r.rsplit(".r", 1)[0]
    if w not in ids:
        sys.exit(f"mpscheck: {w} is not a workload of {sys.argv[1]}")
    mode = plan["workloads"][ids.index(w)]["mode"]
    if mode not in ("mps", "mps-limited"):
        sys.exit(f"mpscheck: {w} runs in mode {mode}, not under MPS")
    pos.append(ids.index(w))
if pos != sorted(pos):
    sys.exit(f"mpscheck: {runs} are not in the plan's order")
PY

WRONG_WORKLOAD=${WRONG_RUN%.r*}
echo "campaign directory: $CAMP" | tee "$OUT/summary.txt"
start=$(date +%s)
timeout -s INT "${LIMIT:-300}" "$RUNNER" run --plan "$PLAN" --out "$CAMP" --gpu "$GPU" "${MODE_ARGS[@]}" --progress plain \
  --source-commit "$COMMIT" --source-dirty false --no-host-baselines \
  --fault-wrong-mps-pipe "$WRONG_WORKLOAD:1" \
  ${EXTRA_ARGS:-} --only "$WRONG_RUN" "$KILL_RUN" "$NEXT_RUN" 2> "$LOG" &
runner=$!

# (b) Once KILL_RUN is released, kill its job 1 by its own pid, KILL_AFTER s into the window.
killed=""
while kill -0 "$runner" 2>/dev/null; do
  if grep -qF "] $KILL_RUN: released" "$LOG" 2>/dev/null; then
    events="$CAMP/runs/.tmp-$KILL_RUN/job-1.events.jsonl"
    pid=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "hello":
        print(e["pid"]); break' "$events" 2>/dev/null)
    sleep "$KILL_AFTER"
    if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ]; then
      cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline")
      kill -KILL "$pid" && killed=$pid
      echo "killed job 1 of $KILL_RUN: pid $pid ($cmd) at $(( $(date +%s) - start )) s" | tee "$OUT/kill.txt"
    else
      echo "job 1 of $KILL_RUN: no live pid from $events (pid '$pid')" | tee "$OUT/kill.txt"
    fi
    break
  fi
  sleep 0.2
done
wait "$runner"
rc=$?
echo "runner exit status $rc after $(( $(date +%s) - start )) s" | tee -a "$OUT/summary.txt"
grep -v "img/s" "$LOG" | tail -60

"$RUNNER" verify --out "$CAMP" > "$OUT/verify.txt" 2>&1
verify_rc=$?
# Every log in full but the killed job's, which ends without `end`.
killed_log="$CAMP/runs/$KILL_RUN/job-1.events.jsonl"
full=()
for f in "$CAMP"/runs/*/job-*.events.jsonl; do [ "$f" = "$killed_log" ] || full+=("$f"); done
{ python3 workloads/validate_events.py "${full[@]}" && python3 workloads/validate_events.py --partial "$killed_log"; } \
  > "$OUT/validate.txt" 2>&1
validate_rc=$?
for r in "$WRONG_RUN" "$KILL_RUN" "$NEXT_RUN"; do
  cp "$CAMP/runs/$r/meta.json" "$OUT/$r.meta.json" 2>/dev/null
done
tar czf "$OUT/campaign.tar.gz" -C "$(dirname "$CAMP")" "$(basename "$CAMP")"

# The verdict, from the runs' meta.json and the runner's log.
python3 - "$CAMP" "$LOG" "$WRONG_RUN" "$KILL_RUN" "$NEXT_RUN" "$rc" "$verify_rc" "$validate_rc" "$killed" \
  <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
camp, log, wrong, kill, nxt = sys.argv[1:6]
rc, verify_rc, validate_rc, killed = sys.argv[6:10]
failures = []

def check(what, ok, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {what}" + (f": {detail}" if detail else ""))
    if not ok:
        failures.append(what)

def meta(run):
    try:
        return json.load(open(os.path.join(camp, "runs", run, "meta.json")))
    except OSError as e:
        return {"status": "missing", "reason": str(e)}

def listed(m):
    c = (m.get("mps") or {}).get("clients") or {}
    return c.get("checked"), [(j["pid"], j["listed_as"]) for j in c.get("jobs", [])]

def hello_pid(run, job):
    for l in open(os.path.join(camp, "runs", run, f"job-{job}.events.jsonl")):
        e = json.loads(l)
        if e.get("event") == "hello":
            return e["pid"]

check("the runner ended normally", rc == "0", f"exit status {rc}")
check("every file matches SHA256SUMS", verify_rc == "0")
check("every event log follows the protocol", validate_rc == "0")

m = meta(wrong)
checked, jobs = listed(m)
print(f"  {wrong}: {m['status']}: {m.get('reason')}; clients: {jobs}")
check("(a) the job with the wrong pipe directory fails its run", m["status"] == "failed"
      and "is not a client of the run's MPS daemon" in (m.get("reason") or ""))
check("(a) the driver lists it as a plain compute process, the other job as an MPS client",
      checked is True and [l for _, l in jobs] == ["mps_client", "compute_process"], str(jobs))
check("(a) it is named by its own pid", f"pid {hello_pid(wrong, 1)})" in (m.get("reason") or ""))
check("(a) nothing was measured", m.get("release_mono") is None)

m = meta(kill)
checked, jobs = listed(m)
print(f"  {kill}: {m['status']}: {m.get('reason')}; clients: {jobs}")
check("(b) before the kill the daemon served every job",
      checked is True and jobs and all(l == "mps_client" for _, l in jobs), str(jobs))
check("(b) the job was killed mid-window", bool(killed) and m.get("release_mono") is not None
      and m.get("window_end_mono") is None, f"killed pid {killed or 'none'}")
check("(b) the run fails with the reason", m["status"] == "failed"
      and "killed by signal 9, while the run's MPS daemon served it" in (m.get("reason") or ""))
j0, j1 = (m.get("jobs") or [{}, {}])[:2]
check("(b) the killed job died by SIGKILL", j1.get("signal") == 9, f"signal {j1.get('signal')}")
after = (j0.get("ended_wall") or 1e18) - (j1.get("ended_wall") or 0)
check("(b) the other job was stopped at once", bool(killed) and after < 11, f"{after:.1f} s after the kill: {j0.get('failure')}")

m = meta(nxt)
checked, jobs = listed(m)
print(f"  {nxt}: {m['status']}: {m.get('reason')}; clients: {jobs}")
check("(b) the next workload runs normally", m["status"] == "ok", str(m.get("reason")))
check("(b) its fresh daemon serves every job", checked is True and jobs and all(l == "mps_client" for _, l in jobs), str(jobs))

text = open(log).read()
started, serving = text.count("nvidia-cuda-mps-control -d"), text.count("mps: daemon serving GPU")
check("a daemon of its own for each run", (started, serving) in ((3, 3), (0, 0)), f"{started} started, {serving} serving")
check("nothing left set up", not os.path.exists(os.path.join(camp, ".runner-state.json")))
print("mpscheck: PASS" if not failures else f"mpscheck: FAIL ({'; '.join(failures)})")
sys.exit(1 if failures else 0)
PY
