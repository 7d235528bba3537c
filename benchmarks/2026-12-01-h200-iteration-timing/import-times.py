#!/usr/bin/env python3
"""Where a job's set-up time before its `versions` event goes: in this fresh process, the
seconds to import PyTorch, then timm (with timm.data and timm.optim, as train.py does), the
CUDA queries train.py makes before `versions` (is_available, the device name, the cuDNN
version), and the first allocation on the device (the CUDA context). One JSON line.

    python3 benchmarks/2026-12-01-h200-iteration-timing/import-times.py
"""

import json
import time

t0 = time.monotonic()
import torch  # noqa: E402
t1 = time.monotonic()
import timm  # noqa: E402,F401
import timm.data  # noqa: E402,F401
import timm.optim  # noqa: E402,F401
t2 = time.monotonic()
cuda = torch.cuda.is_available()
name = torch.cuda.get_device_name(0) if cuda else None
cudnn = torch.backends.cudnn.version() if cuda else None
t3 = time.monotonic()
if cuda:
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
t4 = time.monotonic()
print(json.dumps({"import_torch": round(t1 - t0, 3), "import_timm": round(t2 - t1, 3),
                  "cuda_queries": round(t3 - t2, 3), "first_allocation": round(t4 - t3, 3),
                  "device": name, "cudnn": cudnn}))
