#!/usr/bin/env python3
"""kernels/examples/gemm.tile's gemm_nn, M = N = K = argv[1], run 3 times through tilec's Python package
(scripts/gpu-steps.sh's `ncukernels` step profiles the third launch with ncu), and torch.matmul at the same shape once
after it.

  python3 scripts/ncu-gemm-once.py 4096"""
import os
import sys

import torch
import tilec

size = int(sys.argv[1])
mod = tilec.compile(os.environ.get("TILEC_KERNELS_DIR", "kernels") + "/examples/gemm.tile", kernel="gemm_nn")
gen = torch.Generator(device="cuda").manual_seed(size)
a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16, generator=gen)
c = torch.empty(size, size, device="cuda", dtype=torch.float32)
for _ in range(3):
    mod.gemm_nn(a, b, c)
torch.matmul(a, b)
torch.cuda.synchronize()
print("ok")
