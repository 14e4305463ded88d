#!/usr/bin/env python3
"""Random well-formed .tile kernels through the whole GPU lowering: a structured fuzzer for the passes the byte
fuzzer (scripts/fuzz-parser.sh) rarely reaches, since almost every mutated byte string ends in the parser.

Each kernel is built from the constructs of docs/language.md (tensors of rank 1-3 and every dtype, shared / fragment
/ local tiles of odd and even shapes, copies with conversions and tails, fill, parallel loops over element-wise
arithmetic, reductions along any dim, gemm with and without transposes, region and element atomics, pipelined and
range loops, dynamic and compile-time ifs). For each one:

  1. `tilec K.tile --emit=cuda --atomics=S` must either succeed or end in an `error:` diagnostic with
     file:line:col; a signal, an assertion, a stack dump or an error without a location is a finding;
  2. what it emits must compile: `nvcc -cubin -arch=sm_90a` (and sm_80 for the mma.sync branch), with no error;
  3. with --cpu, `tilec run --target cpu` (the reference backend, random inputs, rows = 37: a tail) must run it or
     refuse it with an error message (crashes and silent failures count);
  4. with --check, on a GPU machine, `tilec run --check` must find the GPU's results equal to the CPU backend's on
     the same inputs (tilec's tolerance by dtype). Random arithmetic can overflow to inf or NaN on both sides:
     look at each such finding before calling it a bug.

  tools/kernel-fuzz/kernel_fuzz.py --tilec build/bin/tilec --count 200 --seed 1 [--nvcc] [--keep DIR]

Exit status 1 when any finding; each is kept under --keep (default /tmp/kernel-fuzz) as KERNEL.tile plus the log.
Same seed, same kernels. Inputs that the compiler refuses with a proper diagnostic are counted, not findings: the
summary line says how many kernels reached CUDA, so a generator that only produces refusals shows up there.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys

FLOATS = ("f32", "bf16", "f16")
DTYPES = FLOATS + ("i32",)
SIZES = (1, 2, 3, 4, 5, 8, 16, 24, 32, 48, 64, 96, 128)
GEMM_SIZES = (16, 32, 48, 64, 128, 16, 32, 64, 1, 8, 24, 40)  # mostly tensor-core shapes, some not
CRASH = re.compile(r"PLEASE submit a bug report|Assertion .* failed|Stack dump|LLVM ERROR|internal compiler error|"
                   r"UNREACHABLE|Segmentation fault|Aborted")


class Kernel:
    def __init__(self, rng, name):
        self.rng = rng
        self.name = name
        self.lines = []
        self.params = []      # (name, dtype, dims as text)
        self.tiles = {}       # name -> (space, dtype, shape)
        self.counter = 0
        self.indent = 2
        self.block_var = "b"

    def fresh(self, hint):
        self.counter += 1
        return f"{hint}{self.counter}"

    def emit(self, text):
        self.lines.append("  " * self.indent + text)

    # Tensors: the first dimension is a named extent `rows` (tails), the others constants.
    def tensor(self, dtype, shape):
        name = f"T{len(self.params)}"
        dims = ["rows"] + [str(d) for d in shape[1:]]
        self.params.append((name, dtype, dims))
        return name

    def tile(self, space, dtype, shape):
        name = self.fresh({"shared": "s", "fragment": "f", "local": "l"}[space])
        self.tiles[name] = (space, dtype, tuple(shape))
        self.emit(f"{name} = {space}<{dtype}>[{', '.join(map(str, shape))}]")
        return name

    def region(self, tensor, shape):
        # rows: a block of len shape[0] at b * shape[0]; other dims whole.
        subs = [f"{self.block_var} * {shape[0]} :+ {shape[0]}"] + [":"] * (len(shape) - 1)
        return f"{tensor}[{', '.join(subs)}]"


def shape_of(rng, rank=None):
    rank = rank or rng.choice((1, 2, 2, 2, 3))
    return [rng.choice(SIZES) for _ in range(rank)]


def literal(rng, dtype):
    if dtype == "i32":
        return str(rng.randint(-3, 7))
    return rng.choice(("0.0", "1.0", "-2.5", "0.125", "3", "-inf" if rng.random() < 0.1 else "0.5"))


def expr_for(rng, k, dtype, reads, loop_vars):
    """A scalar expression of `dtype`'s kind over the element reads `reads` (texts) and loop variables."""
    if dtype == "i32":
        atoms = [f"int({r})" if k_dtype != "i32" else r for r, k_dtype in reads] + list(loop_vars) + ["3", "b"]
        ops = ("+", "-", "*")
        e = rng.choice(atoms)
        for _ in range(rng.randint(0, 3)):
            e = f"({e} {rng.choice(ops)} {rng.choice(atoms)})"
        if rng.random() < 0.3:
            e = f"({e}) % 5" if rng.random() < 0.5 else f"max({e}, 0)"
        return e
    atoms = [r for r, _ in reads] + [f"float({v})" for v in loop_vars] + ["0.5", "2.0"]
    e = rng.choice(atoms)
    for _ in range(rng.randint(0, 3)):
        op = rng.choice(("+", "-", "*", "/", "fn", "cmp"))
        other = rng.choice(atoms)
        if op == "fn":
            # Bounded arguments: no inf or NaN from finite inputs, so --check compares numbers.
            fn = rng.choice(('exp2', 'exp', 'abs', 'sqrt', 'tanh', 'sigmoid', 'floor', 'sin'))
            e = {"exp2": f"exp2(tanh({e}))", "exp": f"exp(tanh({e}))", "sqrt": f"sqrt(abs({e}))"}.get(fn, f"{fn}({e})")
        elif op == "cmp":
            e = f"({e} < {other} ? {e} : {other})"
        elif op == "/":
            e = f"({e} / ({other} * {other} + 1.0))"
        else:
            e = f"({e} {op} {other})"
    return e


def gen_parallel(rng, k, target):
    space, dtype, shape = k.tiles[target]
    vars_ = [f"i{d}" for d in range(len(shape))]
    # Operands of the same shape: readable in place in the loop that writes `target`.
    same = [t for t, (sp, dt, sh) in k.tiles.items() if sh == shape and t != target]
    reads = [(f"{target}[{', '.join(vars_)}]", dtype)]
    for t in rng.sample(same, min(len(same), rng.randint(0, 2))):
        reads.append((f"{t}[{', '.join(vars_)}]", k.tiles[t][1]))
    k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, shape))}):")
    k.indent += 1
    value = expr_for(rng, k, dtype, reads, vars_)
    if rng.random() < 0.3:
        cond = f"{vars_[-1]} <= {vars_[0]}" if len(vars_) > 1 else f"{k.block_var} * {shape[0]} + i0 < rows"
        other = literal(rng, dtype) if dtype != "i32" else "0"
        value = f"{cond} ? {value} : {other}"
    op = rng.choice(("=", "=", "+=", "*=")) if dtype != "i32" else rng.choice(("=", "+="))
    k.emit(f"{target}[{', '.join(vars_)}] {op} {value}")
    k.indent -= 1


def gen_body(rng, k, depth=0):
    """A random sequence of tile statements over fresh tiles; returns nothing."""
    rank = rng.choice((1, 2, 2, 2, 3))
    shape = shape_of(rng, rank)
    dtype = rng.choice(DTYPES)
    src = k.tensor(dtype, shape)
    space = rng.choice(("fragment", "fragment", "shared", "local"))
    t = k.tile(space, rng.choice(DTYPES) if dtype != "i32" else "i32", shape)
    pad = f", pad={literal(rng, 'f32')}" if rng.random() < 0.15 and k.tiles[t][1] != "i32" else ""
    k.emit(f"copy({k.region(src, shape)}, {t}{pad})")
    for _ in range(rng.randint(1, 5)):
        choice = rng.random()
        tiles = list(k.tiles)
        cur = rng.choice(tiles)
        sp, dt, sh = k.tiles[cur]
        if choice < 0.25:
            gen_parallel(rng, k, cur)
        elif choice < 0.35:
            k.emit(f"fill({cur}, {literal(rng, dt)})")
        elif choice < 0.5 and dt != "bool":
            # Copy into a new tile of another space and maybe dtype, sometimes with unit dims added or dropped
            # (the shapes agree once extents of 1 are dropped).
            ndt = dt if dt == "i32" else rng.choice(FLOATS)
            nsh = list(sh)
            if rng.random() < 0.3:
                nsh.insert(rng.randrange(len(nsh) + 1), 1)
            elif rng.random() < 0.3 and 1 in nsh and len(nsh) > 1:
                nsh.remove(1)
            nt = k.tile(rng.choice(("fragment", "shared", "local")), ndt, nsh)
            k.emit(f"copy({cur}, {nt})")
        elif choice < 0.65 and len(sh) >= 1:
            dim = rng.randrange(len(sh))
            tshape = [d for i, d in enumerate(sh) if i != dim]
            kind = rng.choice(("reduce_sum", "reduce_max", "reduce_min"))
            if not tshape:
                tgt = k.tile("fragment", dt, [1])
                k.emit(f"{kind}({cur}, {tgt}[0], dim={dim})")
            else:
                tgt = k.tile(rng.choice(("fragment", "shared", "local")), dt, tshape)
                clear = rng.choice(("", ", clear=false"))
                if clear:
                    k.emit(f"fill({tgt}, {literal(rng, dt)})")
                k.emit(f"{kind}({cur}, {tgt}, dim={dim if rng.random() < 0.7 else dim - len(sh)}{clear})")
        elif choice < 0.78:
            gen_gemm(rng, k)
        elif choice < 0.88:
            # Results to global: a plain copy or an atomic add (region form).
            out = k.tensor(rng.choice(FLOATS) if dt != "i32" else "i32", list(sh))
            if rng.random() < 0.5:
                k.emit(f"copy({cur}, {k.region(out, list(sh))})")
            else:
                k.emit(f"atomic_add({k.region(out, list(sh))}, {cur})")
        elif choice < 0.88 and depth == 0:
            gen_loop(rng, k)
        elif choice < 0.91 and depth == 0:
            gen_pipelined_gemm(rng, k)
        elif choice < 0.95:
            gen_region_ops(rng, k, cur)
        else:
            cond = rng.choice((f"{k.block_var} % 2 == 0", "rows > 100", "flag"))
            k.emit(f"if {cond}:")
            k.indent += 1
            k.emit(f"fill({cur}, {literal(rng, dt)})")
            k.indent -= 1
    # Something must reach global memory, or the kernel is trivially dead.
    last = rng.choice(list(k.tiles))
    sp, dt, sh = k.tiles[last]
    out = k.tensor(dt if dt != "bool" else "i32", list(sh))
    k.emit(f"copy({last}, {k.region(out, list(sh))})")


def gen_region_ops(rng, k, cur):
    """Regions of shared and fragment tiles as operands: copies of a sub-block, reductions of a slice, element and
    region atomics (add, max, min) into global memory from inside a parallel loop."""
    sp, dt, sh = k.tiles[cur]
    if sp == "local":
        return
    # A sub-block: half (rounded up) of each dim from a constant offset, or one index (dim dropped).
    subs, sub_shape = [], []
    for d in sh:
        r = k.rng.random()
        if r < 0.25 or d == 1:
            subs.append(str(k.rng.randrange(d)))
        else:
            n = max(1, (d + 1) // 2)
            subs.append(f"{k.rng.randrange(d - n + 1)} :+ {n}")
            sub_shape.append(n)
    if not sub_shape:
        sub_shape = [1]
        subs[-1] = f"0 :+ 1"
    region = f"{cur}[{', '.join(subs)}]"
    r = k.rng.random()
    if r < 0.4:
        nt = k.tile(k.rng.choice(("fragment", "shared", "local")), dt, sub_shape)
        k.emit(f"copy({region}, {nt})")
    elif r < 0.6 and len(sub_shape) >= 2:
        nt = k.tile(k.rng.choice(("fragment", "shared")), dt, sub_shape[1:])
        k.emit(f"{k.rng.choice(('reduce_sum', 'reduce_max', 'reduce_min'))}({region}, {nt}, dim=0)")
    elif r < 0.8:
        out = k.tensor(dt if dt == "i32" else k.rng.choice(FLOATS), list(sh))
        fn = k.rng.choice(("atomic_add", "atomic_max", "atomic_min"))
        vars_ = [f"i{d}" for d in range(len(sh))]
        idx = [f"{k.block_var} * {sh[0]} + i0"] + vars_[1:]
        k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, sh))}):")
        val = f"{cur}[{', '.join(vars_)}]"
        k.emit(f"    {fn}({out}[{', '.join(idx)}], {val})")
    else:
        out = k.tensor(dt if dt == "i32" else k.rng.choice(FLOATS), list(sh))
        k.emit(f"{k.rng.choice(('atomic_add', 'atomic_max', 'atomic_min'))}({k.region(out, list(sh))}, {cur})")


def gen_gemm(rng, k):
    m, n, kk = (rng.choice(GEMM_SIZES) for _ in range(3))
    dt = rng.choice(("bf16", "bf16", "f16", "f32"))
    ta, tb = rng.random() < 0.3, rng.random() < 0.5
    a_shape = [kk, m] if ta else [m, kk]
    b_shape = [n, kk] if tb else [kk, n]
    ga, gb = k.tensor(dt, a_shape), k.tensor(dt, [max(b_shape[0], 1)] + b_shape[1:])
    a = k.tile("shared", dt, a_shape)
    b = k.tile("shared", dt, b_shape)
    c = k.tile("fragment", "f32", [m, n])
    k.emit(f"copy({k.region(ga, a_shape)}, {a})")
    k.emit(f"copy({gb}[0 :+ {b_shape[0]}, :], {b})")
    if not ta and rng.random() < 0.3:
        # Register A: the operand comes from a fragment (P·V in attention).
        ra = k.tile("fragment", dt, a_shape)
        k.emit(f"copy({a}, {ra})")
        a = ra
    args = [a, b, c]
    if ta:
        args.append("transpose_a=true")
    if tb:
        args.append("transpose_b=true")
    if rng.random() < 0.5:
        args.append("clear=true")
    else:
        k.emit(f"fill({c}, 0.0)")
    if rng.random() < 0.3:
        args.append(f"policy={rng.choice(('square', 'full_row', 'full_col'))}")
    k.emit(f"gemm({', '.join(args)})")


def gen_pipelined_gemm(rng, k):
    """The tiled-gemm pattern: a pipelined loop over K streaming both operands through shared memory into a
    register accumulator (multi-buffering, prefetch, wgmma or mma.sync), sometimes with the A tile rescaled through
    a fragment first (register A) and a dynamic lower bound."""
    m, n, kk = rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64))
    dt = rng.choice(("bf16", "f16"))
    tb = rng.random() < 0.5
    ga = k.tensor(dt, [m, 64])  # [rows, 64]: K runs over a fixed 64 columns ...
    ga_name = ga
    k.params[-1] = (ga, dt, ["rows", "depth"])  # ... of a dynamic extent `depth`
    gb = k.tensor(dt, [1, n] if tb else [1, n])
    k.params[-1] = (gb, dt, ["depth", str(n)] if not tb else [str(n), "depth"])
    a = k.tile("shared", dt, [m, kk])
    b = k.tile("shared", dt, [n, kk] if tb else [kk, n])
    c = k.tile("fragment", "f32", [m, n])
    k.emit(f"fill({c}, 0.0)")
    var = k.fresh("kt")
    lower = rng.choice(("0", "0", f"{k.block_var} % 2"))
    k.emit(f"for {var} in pipelined({lower}, cdiv(depth, {kk}), stages={rng.choice((1, 2, 3, 4))}):")
    k.indent += 1
    k.emit(f"copy({ga_name}[{k.block_var} * {m} :+ {m}, {var} * {kk} :+ {kk}], {a})")
    if tb:
        k.emit(f"copy({gb}[0 :+ {n}, {var} * {kk} :+ {kk}], {b})")
    else:
        k.emit(f"copy({gb}[{var} * {kk} :+ {kk}, 0 :+ {n}], {b})")
    operand = a
    if rng.random() < 0.3:
        operand = k.tile("fragment", dt, [m, kk])
        k.emit(f"copy({a}, {operand})")
        k.emit(f"for i, j in parallel({m}, {kk}):")
        k.emit(f"    {operand}[i, j] = {operand}[i, j] * 0.5")
    args = [operand, b, c] + (["transpose_b=true"] if tb else [])
    if rng.random() < 0.3:
        args.append(f"policy={rng.choice(('square', 'full_row', 'full_col'))}")
    k.emit(f"gemm({', '.join(args)})")
    k.indent -= 1
    if operand != a:
        del k.tiles[operand]  # its name is scoped to the loop body
    out = k.tensor("f32", [m, n])
    k.emit(f"copy({c}, {k.region(out, [m, n])})")


def gen_attention_like(rng, k):
    """The flash-attention forward pattern at random sizes: S = Q·Kᵀ per key block in a pipelined loop, a running
    row maximum (reduce_max, clear=false) over the gemm's accumulator layout, exp2 in a parallel loop, row sums,
    P converted to 16 bits and O += P·V with P in registers."""
    m, n, d = rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64)), rng.choice((16, 32, 64))
    dt = rng.choice(("bf16", "f16"))
    q, kk, v, o = (k.tensor(dt, [m, d]), k.tensor(dt, [n, d]), k.tensor(dt, [n, d]), k.tensor("f32", [m, d]))
    for t in (kk, v):
        name, ty, dims = next(p for p in k.params if p[0] == t)
        k.params[[p[0] for p in k.params].index(t)] = (name, ty, ["keys", str(d)])
    q_s, k_s, v_s = k.tile("shared", dt, [m, d]), k.tile("shared", dt, [n, d]), k.tile("shared", dt, [n, d])
    s_f, p_f = k.tile("fragment", "f32", [m, n]), k.tile("fragment", dt, [m, n])
    mx, sm, acc = k.tile("fragment", "f32", [m]), k.tile("fragment", "f32", [m]), k.tile("fragment", "f32", [m, d])
    k.emit(f"copy({k.region(q, [m, d])}, {q_s})")
    k.emit(f"fill({mx}, -inf)")
    k.emit(f"fill({sm}, 0.0)")
    k.emit(f"fill({acc}, 0.0)")
    var = k.fresh("j")
    k.emit(f"for {var} in pipelined(0, cdiv(keys, {n}), stages={rng.choice((1, 2, 3))}):")
    k.indent += 1
    k.emit(f"copy({kk}[{var} * {n} :+ {n}, :], {k_s})")
    k.emit(f"copy({v}[{var} * {n} :+ {n}, :], {v_s})")
    k.emit(f"gemm({q_s}, {k_s}, {s_f}, transpose_b=true, clear=true)")
    k.emit(f"for i, c in parallel({m}, {n}):")
    k.emit(f"    {s_f}[i, c] = {var} * {n} + c < keys ? {s_f}[i, c] * 0.125 : -inf")
    k.emit(f"reduce_max({s_f}, {mx}, dim=1, clear=false)")
    k.emit(f"for i, c in parallel({m}, {n}):")
    k.emit(f"    {s_f}[i, c] = exp2({s_f}[i, c] - {mx}[i])")
    k.emit(f"reduce_sum({s_f}, {sm}, dim=1, clear=false)")
    k.emit(f"copy({s_f}, {p_f})")
    k.emit(f"gemm({p_f}, {v_s}, {acc}{rng.choice(('', ', policy=full_row'))})")
    k.indent -= 1
    k.emit(f"for i, c in parallel({m}, {d}):")
    k.emit(f"    {acc}[i, c] = {acc}[i, c] / ({sm}[i] + 1.0)")
    k.emit(f"copy({acc}, {k.region(o, [m, d])})")


def gen_loop(rng, k):
    shape = [rng.choice((16, 32, 64)), rng.choice((8, 32, 64))]
    dt = rng.choice(FLOATS)
    src = k.tensor(dt, shape)
    buf = k.tile("shared", dt, shape)
    acc = k.tile("fragment", "f32", shape)
    k.emit(f"fill({acc}, 0.0)")
    kind = rng.choice(("pipelined", "range"))
    var = k.fresh("n")
    if kind == "pipelined":
        k.emit(f"for {var} in pipelined(0, cdiv(rows, {shape[0]}), stages={rng.choice((1, 2, 3))}):")
    else:
        k.emit(f"for {var} in range(cdiv(rows, {shape[0]})):")
    k.indent += 1
    k.emit(f"copy({src}[{var} * {shape[0]} :+ {shape[0]}, :], {buf})")
    k.emit("for i, j in parallel(%d, %d):" % tuple(shape))
    k.emit(f"    {acc}[i, j] += {buf}[i, j]")
    k.indent -= 1


def generate(rng, index, gemm_loops=False):
    k = Kernel(rng, f"k{index}")
    threads = rng.choice((32, 64, 128, 128, 256))
    if gemm_loops:
        (gen_attention_like if rng.random() < 0.5 else gen_pipelined_gemm)(rng, k)
    gen_body(rng, k)
    params = ", ".join(f"{n}: {d}[{', '.join(dims)}]" for n, d, dims in k.params)
    head = [f"kernel {k.name}<flag: bool = {rng.choice(('true', 'false'))}>({params})",
            f"  grid(cdiv(rows, 16)) threads({threads}) as (b):"]
    return "\n".join(head + k.lines) + "\n"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


# The inputs' seed of --refs runs, given again on the GPU so that both runs see the same inputs.
REF_SEED = 11


def check_against(tilec, refs, target):
    """The GPU half of --refs: each kept kernel on the GPU, compared with the CPU backend's outputs."""
    manifest = os.path.join(refs, "manifest.txt")
    if not os.path.exists(manifest):
        print(f"kernel-fuzz: {manifest} not found: make the references with --cpu --refs {refs} on a machine whose "
              f"tilec has the CPU backend (scripts/gpu-bundle.sh does)", file=sys.stderr)
        return 2
    with open(manifest) as f:
        entries = [line.rstrip("\n").split("|") for line in f if line.strip()]
    if not entries:
        print(f"kernel-fuzz: {refs}/manifest.txt lists no kernels", file=sys.stderr)
        return 2
    differ = 0
    for name, strategy, *dims in entries:
        c = run([tilec, "run", os.path.join(refs, name + ".tile"), "--kernel", name, "--target", target,
                 "--seed", str(REF_SEED), *dims, f"--atomics={strategy}", "--reference", os.path.join(refs, name)])
        if "no CUDA driver" in c.stdout + c.stderr:
            print(f"kernel-fuzz: --against needs a GPU: {(c.stdout + c.stderr).strip().splitlines()[-1]}",
                  file=sys.stderr)
            return 2
        if c.returncode != 0:
            differ += 1
            out = (c.stdout + c.stderr).strip().splitlines()
            print(f"FINDING {name} ({strategy}): exit {c.returncode}\n  " + "\n  ".join(out[-8:]))
    print(f"kernel-fuzz: {len(entries)} kernels run on {'the GPU' if target == 'cuda' else 'the CPU backend'} "
          f"against the CPU backend's outputs ({refs}): "
          f"{differ} differ or fail")
    return 1 if differ else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nvcc", action="store_true", help="compile what tilec emits with nvcc (sm_90a and sm_80)")
    ap.add_argument("--cpu", action="store_true", help="also run each kernel on the CPU backend")
    ap.add_argument("--check", action="store_true",
                    help="on a GPU machine: `tilec run --check` (the GPU against the CPU backend, same inputs)")
    ap.add_argument("--runtime-include", default=os.path.join(os.path.dirname(__file__), "..", "..", "runtime",
                                                               "include"))
    ap.add_argument("--keep", default="/tmp/kernel-fuzz")
    ap.add_argument("--gemm-loops", action="store_true",
                    help="start every kernel with a pipelined tiled gemm (multi-buffering, prefetch, tensor cores)")
    ap.add_argument("--show-refused", action="store_true", help="print each refusal's first error")
    ap.add_argument("--refs", metavar="DIR",
                    help="with --cpu: keep each kernel the CPU backend runs, its inputs' seed and its outputs in DIR "
                         "(DIR/manifest.txt), for --against on a GPU machine whose tilec has no CPU backend")
    ap.add_argument("--against", metavar="DIR",
                    help="on a GPU machine: run every kernel of a --refs DIR on the GPU (`tilec run --target cuda "
                         "--reference`) and compare with the CPU backend's outputs; generates nothing")
    ap.add_argument("--against-target", default="cuda", choices=("cuda", "cpu"),
                    help="where --against runs the kernels (cpu: the references against the CPU backend itself, "
                         "which tests the two halves without a GPU)")
    args = ap.parse_args()
    if args.against:
        return check_against(args.tilec, args.against, args.against_target)
    if args.refs and not args.cpu:
        ap.error("--refs needs --cpu (the references are the CPU backend's outputs)")
    if args.refs:
        os.makedirs(args.refs, exist_ok=True)
        manifest = open(os.path.join(args.refs, "manifest.txt"), "w")
    os.makedirs(args.keep, exist_ok=True)
    rng = random.Random(args.seed)
    findings = refused = emitted = 0
    for i in range(args.count):
        src = generate(rng, i, args.gemm_loops)
        dims = ["--dim", "rows=37"] + (["--dim", "depth=100"] if "depth" in src else []) + \
            (["--dim", "keys=75"] if "keys" in src else [])
        path = os.path.join(args.keep, f"seed{args.seed}-k{i}.tile")
        with open(path, "w") as f:
            f.write(src)
        strategy = rng.choice(("fp32", "split", "native"))
        p = run([args.tilec, path, "--emit=cuda", f"--atomics={strategy}", "-o", path + ".cu"])
        log = p.stdout + p.stderr
        problem = None
        if p.returncode < 0 or p.returncode > 1 or CRASH.search(log):
            problem = f"tilec crashed (exit {p.returncode})"
        elif p.returncode == 1:
            if not re.search(r"\.tile:\d+:\d+: error: ", log):
                problem = "tilec failed without an error diagnostic at file:line:col"
            else:
                refused += 1
                if args.show_refused:
                    first = next(line for line in log.splitlines() if ": error: " in line)
                    print(f"refused {os.path.basename(path)}: {first.split(': error: ', 1)[1]}")
        else:
            emitted += 1
            if args.nvcc:
                for arch in ("sm_90a", "sm_80"):
                    c = run(["nvcc", "-std=c++17", "-cubin", f"-arch={arch}", "-I", args.runtime_include,
                             path + ".cu", "-o", os.devnull])
                    if c.returncode != 0:
                        problem = f"nvcc -arch={arch} rejected the emitted CUDA"
                        log += c.stdout + c.stderr
                        break
        if not problem and args.cpu:
            ref_args = []
            if args.refs and p.returncode == 0:
                ref_args = ["--seed", str(REF_SEED), "--output-dir", os.path.join(args.refs, f"k{i}")]
            c = run([args.tilec, "run", path, "--kernel", f"k{i}", "--target", "cpu", *dims, f"--atomics={strategy}",
                     *ref_args])
            clog = c.stdout + c.stderr
            if c.returncode < 0 or c.returncode > 1 or CRASH.search(clog):
                problem = f"tilec run --target cpu crashed (exit {c.returncode})"
                log += clog
            elif c.returncode == 1 and not re.search(r"error: ", clog):
                problem = "tilec run --target cpu failed without an error message"
                log += clog
            elif c.returncode == 0 and ref_args:
                shutil.copy(path, os.path.join(args.refs, f"k{i}.tile"))
                manifest.write("|".join([f"k{i}", strategy, *dims]) + "\n")
        if not problem and args.check:
            c = run([args.tilec, "run", path, "--kernel", f"k{i}", "--check", *dims, f"--atomics={strategy}"])
            clog = c.stdout + c.stderr
            if "needs the CPU backend" in clog:
                # A setup error, not a finding about this kernel: the GPU machine's bundle tilec is built without
                # the CPU backend (TILEC_CLI_WITH_CPU_RUN=OFF), so every --check would fail the same way.
                print(f"kernel-fuzz: {args.tilec} cannot run --check: {clog.strip().splitlines()[-1]}",
                      file=sys.stderr)
                return 2
            if c.returncode != 0 and not re.search(r"error: ", clog):
                problem = f"tilec run --check crashed (exit {c.returncode})"
            elif c.returncode != 0:
                problem = "the GPU and the CPU backend disagree, or the GPU run failed"
            log += clog if problem else ""
        if problem:
            findings += 1
            with open(path + ".log", "w") as f:
                f.write(f"{problem}\natomics={strategy}\n{log}")
            print(f"FINDING {path} ({strategy}): {problem}\n  " + "\n  ".join(log.strip().splitlines()[:6]))
        else:
            for ext in (".cu",):
                if os.path.exists(path + ext):
                    os.remove(path + ext)
            os.remove(path)
    print(f"kernel-fuzz: {args.count} kernels (seed {args.seed}): {emitted} reached CUDA"
          f"{' and compiled' if args.nvcc else ''}, {refused} refused with a diagnostic, {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
