set -u
B=/tmp/mpsprobe; rm -rf $B; mkdir -p $B/pipe $B/log
U=$(nvidia-smi --query-gpu=uuid --format=csv,noheader)
CUDA_VISIBLE_DEVICES=$U CUDA_MPS_PIPE_DIRECTORY=$B/pipe CUDA_MPS_LOG_DIRECTORY=$B/log nvidia-cuda-mps-control -d
cat > $B/p.py <<'PY'
import os, sys, time
import ctypes
try:
    import pynvml
except ImportError:
    pynvml = None
import torch
x = torch.ones(1, device="cuda"); torch.cuda.synchronize()
print("me", os.getpid(), "pid ns", os.readlink("/proc/self/ns/pid"), flush=True)
if pynvml:
    pynvml.nvmlInit(); h = pynvml.nvmlDeviceGetHandleByIndex(0)
    for name in ["nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetMPSComputeRunningProcesses"]:
        try:
            ps = getattr(pynvml, name)(h); print(name, [(p.pid, p.usedGpuMemory) for p in ps], flush=True)
        except Exception as e:
            print(name, "error", e, flush=True)
time.sleep(2)
PY
echo "--- under MPS"
CUDA_VISIBLE_DEVICES=$U CUDA_MPS_PIPE_DIRECTORY=$B/pipe timeout 60 python3 $B/p.py &
sleep 14; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; wait
echo "--- wrong pipe dir (no daemon there)"
mkdir -p $B/wrong
CUDA_VISIBLE_DEVICES=$U CUDA_MPS_PIPE_DIRECTORY=$B/wrong timeout 60 python3 $B/p.py
echo quit | CUDA_MPS_PIPE_DIRECTORY=$B/pipe nvidia-cuda-mps-control
