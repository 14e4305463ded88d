#!/usr/bin/env python3
"""Tensor cores in the SASS of the shipped kernels, checked without a GPU.

tilec builds each kernel's CUBIN through NVRTC (no driver needed) and cuobjdump disassembles it. On sm_90a every
kernel function that multiplies tiles must use wgmma (HGMMA) and no mma.sync (HMMA); on sm_90, where wgmma does not
exist, the same kernels take the mma.sync path (HMMA) and must hold no HGMMA: tensor-core instructions in the SASS
of the gemm and the flash-attention kernels are a requirement; the GPU script's `sass` step checks the same on the
GPU machine, this runs in CI.

cuobjdump is looked for on PATH, in $CUDA_HOME/bin and /usr/local/cuda/bin, then in the NVIDIA PyPI wheels
(nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm: scripts/setup.sh installs them). Without it the check exits with 77,
which ctest reports as skipped.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77

# (kernel file under kernels/, extra tilec options, label). The kernels as written (`<name>_main` once the atomic
# legalization has added its helpers) all multiply tiles and must hold tensor-core instructions; the helpers (f32
# conversions) hold none.
CONFIGS = [
    ("flash_attention/fwd.tile", ["-D", "dim=64"], "attn_fwd d64"),
    ("flash_attention/fwd.tile", ["-D", "dim=128", "-D", "groups=4", "-D", "causal=true"], "attn_fwd d128 GQA4 causal"),
    ("flash_attention/bwd.tile", ["-D", "dim=64", "-D", "groups=4"], "attn_bwd d64 GQA4 fp32"),
    ("flash_attention/bwd.tile", ["-D", "dim=128", "-D", "groups=4", "-D", "causal=true", "--atomics=split"],
     "attn_bwd d128 GQA4 causal split"),
    ("examples/gemm.tile", [], "gemm"),
]
GEMM_FUNCTION = re.compile(r"_main$")


def find_cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    for root in filter(None, [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]):
        candidate = Path(root) / "bin" / "cuobjdump"
        if candidate.is_file():
            return str(candidate)
    try:
        import nvidia  # namespace package of NVIDIA's PyPI wheels
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for candidate in sorted(Path(base).glob("cu*/bin/cuobjdump")):
            return str(candidate)
    return None


def sass_by_function(cuobjdump, cubin):
    """Maps each kernel function of the CUBIN to its SASS text."""
    env = dict(os.environ)
    # cuobjdump runs nvdisasm, which the wheels install beside it.
    env["PATH"] = str(Path(cuobjdump).parent) + os.pathsep + env.get("PATH", "")
    text = subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True, text=True,
                          env=env).stdout
    functions, name = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1)
            functions[name] = []
        elif name:
            functions[name].append(line)
    return {k: "\n".join(v) for k, v in functions.items()}


def count(sass, opcode):
    # Opcodes stand after the address comment: `/*0120*/  HGMMA.64x64x16.F32.BF16 ...`; HMMA never matches HGMMA.
    return len(re.findall(r"\*/\s+(?:@!?U?P\w+\s+)?" + opcode + r"\b", sass))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilec", required=True, help="the tilec executable")
    parser.add_argument("--kernels", required=True, help="the kernels/ directory")
    args = parser.parse_args()

    cuobjdump = find_cuobjdump()
    if not cuobjdump:
        print("sass-check: skipped: no cuobjdump (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, nvidia-cuda-cuobjdump)")
        return SKIP

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for file, options, label in CONFIGS:
            # On sm_90a every gemm of these kernels is a wgmma at their defaults (the d64 backward's dQ gemm too),
            # so an HMMA there is a gemm that fell back to mma.sync: a performance regression.
            for arch, wanted, unwanted in (("sm_90a", "HGMMA", "HMMA"), ("sm_90", "HMMA", "HGMMA")):
                cubin = Path(tmp) / f"{label.replace(' ', '-')}-{arch}.cubin"
                build = subprocess.run([args.tilec, str(Path(args.kernels) / file), "--emit=cubin", f"--arch={arch}",
                                        *options, "-o", str(cubin)], capture_output=True, text=True)
                if build.returncode != 0:
                    if "NVRTC could not be loaded" in build.stderr:  # runtime/lib/Compiler.cpp's message
                        print(f"sass-check: skipped: {build.stderr.strip()}")
                        return SKIP
                    failures.append(f"{label} {arch}: tilec failed: {build.stderr.strip()}")
                    continue
                functions = sass_by_function(cuobjdump, cubin)
                gemms = [f for f in functions if GEMM_FUNCTION.search(f)]
                if not gemms:
                    failures.append(f"{label} {arch}: no gemm kernel among {sorted(functions)}")
                for function in sorted(functions):
                    sass = functions[function]
                    n = {op: count(sass, op) for op in ("HGMMA", "HMMA", "LDSM")}
                    print(f"{label:34} {arch:7} {function:28} {n['HGMMA']:4} HGMMA {n['HMMA']:4} HMMA {n['LDSM']:4} LDSM")
                    if function in gemms and n[wanted] == 0:
                        failures.append(f"{label} {arch} {function}: no {wanted}")
                    if unwanted and n[unwanted]:
                        failures.append(f"{label} {arch} {function}: {n[unwanted]} {unwanted} (wanted {wanted} only)")
    for failure in failures:
        print(f"sass-check: FAIL {failure}")
    print(f"sass-check: {len(failures)} failures ({cuobjdump})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
