#!/usr/bin/env python3
"""Three flash-attention forward + backward calls through tilec's Python package, for ncu to profile one of them
(scripts/gpu-steps.sh, steps `ncu`, `ncusrc` and `ncukernels`).

  python3 scripts/ncu-attention-once.py ATOMICS DIM SEQ HEADS KV_HEADS CAUSAL(0|1)

Batch is 16384 // SEQ (16k tokens, as in the benchmark); inputs random normal bf16."""
import sys, torch, tilec
atomics, dim, seq, heads, kv, causal = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1"
batch = 16384 // seq
q = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
k = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
v = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
do = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16)
for _ in range(3):
    out = tilec.flash_attention(q, k, v, causal=causal, atomics=atomics)
    torch.autograd.grad(out, (q, k, v), do)
torch.cuda.synchronize()
print("ok")
