#!/usr/bin/env python3
"""Flash attention from kernels/flash_attention/*.tile on the GPU against PyTorch.

For each shape (MHA and GQA groups 4, causal and not, d 64 and 128, seq 1000 and
4096) this makes bf16 Q, K, V, dO with torch, runs tilec's forward, backward
preprocess and backward through `tilec run --target cuda` (.npy in and out, the
atomics strategy given), and compares O, dQ, dK and dV with autograd of
torch.nn.functional.scaled_dot_product_attention computed in float32 on the same
bf16 inputs: relative norm ||tilec - ref|| / ||ref|| must be <= 1e-2.

Layouts: tilec's tensors are [batch, seq, heads, dim]; SDPA's [batch, heads,
seq, dim] (transposed here). GQA: query head h reads key/value head h // groups
(SDPA's enable_gqa convention). Causal: query i sees keys j <= i.

Usage: python3 tools/attention-vs-sdpa/attention_vs_sdpa.py TILEC KERNELS_DIR
           [--atomics fp32|split|native] [--work DIR] [--quick]
Exit status 1 when any error is above the bound.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

BOUND = 1e-2


def shapes(quick):
    for seq in ((1000,) if quick else (1000, 4096)):
        batch = 2 if seq <= 1000 else 1
        for dim in (64, 128):
            for groups in (1, 4):
                for causal in (False, True):
                    yield batch, seq, 8, groups, dim, causal


def save(path, tensor):
    np.save(path, tensor.float().cpu().numpy())  # bf16 travels as float32 (tilec rounds it back exactly)


def load(path):
    return torch.from_numpy(np.load(path))


def tilec_run(tilec, tile_file, kernel, defines, inputs, zeros, out_dir, extra=()):
    cmd = [tilec, "run", tile_file, "--kernel", kernel, "--target", "cuda", "--output-dir", out_dir]
    for name, value in defines.items():
        cmd += ["-D", f"{name}={value}"]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    for name in zeros:
        cmd += ["--zero", name]
    cmd += list(extra)
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{result.stdout}{result.stderr}")
    return result.stdout


def rel(a, ref):
    a = a.double()
    ref = ref.double()
    if torch.isnan(a).any():
        return float("nan")
    return float(torch.linalg.vector_norm(a - ref) / torch.linalg.vector_norm(ref))


def check(tilec, kernels, atomics, work, batch, seq, heads, groups, dim, causal, seed):
    torch.manual_seed(seed)
    kv = heads // groups
    q = torch.randn(batch, seq, heads, dim, device="cuda").bfloat16()
    k = torch.randn(batch, seq, kv, dim, device="cuda").bfloat16()
    v = torch.randn(batch, seq, kv, dim, device="cuda").bfloat16()
    do = torch.randn(batch, seq, heads, dim, device="cuda").bfloat16()
    for name, t in (("Q", q), ("K", k), ("V", v), ("dO", do)):
        save(os.path.join(work, f"{name}.npy"), t)
    defines = {"dim": dim, "groups": groups, "causal": "true" if causal else "false"}
    path = lambda name: os.path.join(work, f"{name}.npy")
    fwd_dir, pre_dir, bwd_dir = (os.path.join(work, d) for d in ("fwd", "pre", "bwd"))
    tilec_run(tilec, f"{kernels}/flash_attention/fwd.tile", "attn_fwd", defines,
              {"Q": path("Q"), "K": path("K"), "V": path("V")}, ["O", "lse"], fwd_dir)
    tilec_run(tilec, f"{kernels}/flash_attention/bwd_preprocess.tile", "attn_bwd_preprocess", {"dim": dim},
              {"O": f"{fwd_dir}/O.npy", "dO": path("dO")}, ["delta"], pre_dir)
    tilec_run(tilec, f"{kernels}/flash_attention/bwd.tile", "attn_bwd", defines,
              {"Q": path("Q"), "K": path("K"), "V": path("V"), "dO": path("dO"), "lse": f"{fwd_dir}/lse.npy",
               "delta": f"{pre_dir}/delta.npy"}, ["dQ", "dK", "dV"], bwd_dir, ["--atomics", atomics])

    # Reference: float32 SDPA on the same bf16 values, [b, h, s, d].
    qf, kf, vf = (t.float().transpose(1, 2).requires_grad_() for t in (q, k, v))
    o_ref = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, enable_gqa=groups > 1)
    o_ref.backward(do.float().transpose(1, 2))
    ref = {"O": o_ref.detach(), "dQ": qf.grad, "dK": kf.grad, "dV": vf.grad}
    got = {"O": load(f"{fwd_dir}/O.npy"), "dQ": load(f"{bwd_dir}/dQ.npy"), "dK": load(f"{bwd_dir}/dK.npy"),
           "dV": load(f"{bwd_dir}/dV.npy")}
    return {name: rel(got[name].cuda().transpose(1, 2), ref[name]) for name in ref}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tilec")
    parser.add_argument("kernels")
    parser.add_argument("--atomics", default="fp32")
    parser.add_argument("--work", default=None)
    parser.add_argument("--quick", action="store_true", help="seq 1000 only")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tilec-vs-sdpa-")
    print(f"tilec flash attention vs SDPA float32 (atomics {args.atomics}); bound {BOUND}; "
          f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'batch':>5} {'seq':>5} {'heads':>5} {'groups':>6} {'dim':>4} {'causal':>6}  "
          f"{'O':>9} {'dQ':>9} {'dK':>9} {'dV':>9}  result")
    failures = 0
    for i, (batch, seq, heads, groups, dim, causal) in enumerate(shapes(args.quick)):
        try:
            errors = check(args.tilec, args.kernels, args.atomics, work, batch, seq, heads, groups, dim, causal, i)
        except RuntimeError as error:
            print(f"{batch:5d} {seq:5d} {heads:5d} {groups:6d} {dim:4d} {str(causal):>6}  run failed:\n{error}")
            failures += 1
            continue
        ok = all(e <= BOUND for e in errors.values())  # NaN fails
        failures += not ok
        print(f"{batch:5d} {seq:5d} {heads:5d} {groups:6d} {dim:4d} {str(causal):>6}  "
              + " ".join(f"{errors[n]:9.2e}" for n in ("O", "dQ", "dK", "dV")) + ("  ok" if ok else "  ABOVE BOUND"),
              flush=True)
    print(f"attention-vs-sdpa: {failures} failing shapes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
