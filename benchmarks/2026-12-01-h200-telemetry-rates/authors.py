# CPU time of the authors' telemetry for 7 jobs: per job one `nvidia-smi --query-gpu ... -l 1`
# and (when installed) one `dcgmi dmon ... -d 1000`, plus one `top -b -d 1`, for SECONDS seconds.
import resource, shutil, subprocess, sys, time
secs = float(sys.argv[1]); jobs = 7
q = "--query-gpu=timestamp,power.draw,utilization.gpu,utilization.memory,memory.used,pstate"
cmds = [["nvidia-smi", q, "--format=csv", "-l", "1"] for _ in range(jobs)]
dcgm = shutil.which("dcgmi") is not None
if dcgm:
    f = "155,156,200,201,203,204," + ",".join(str(x) for x in range(1001, 1013))
    cmds += [["dcgmi", "dmon", "-e", f, "-d", "1000"] for _ in range(jobs)]
cmds.append(["top", "-b", "-d", "1"])
t0 = time.monotonic()
ps = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in cmds]
time.sleep(secs)
for p in ps: p.terminate()
for p in ps: p.wait()
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
print(f"authors' telemetry for {jobs} jobs ({len(cmds)} processes: {jobs} nvidia-smi -l 1"
      f"{', %d dcgmi dmon' % jobs if dcgm else ', dcgmi not installed'}, 1 top): "
      f"{cpu:.2f} s CPU in {wall:.1f} s = {100 * cpu / wall:.1f}% of one core")
