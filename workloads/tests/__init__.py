"""Tests of the training workload that need neither PyTorch nor a GPU (a few more run
when PyTorch and timm are importable). Run from the repository root:

    python3 -m unittest discover -s workloads/tests -t .
"""

import os
import sys

WORKLOADS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(WORKLOADS)
if WORKLOADS not in sys.path:
    sys.path.insert(0, WORKLOADS)
