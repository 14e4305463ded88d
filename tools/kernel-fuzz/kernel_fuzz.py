#!/usr/bin/env python3
"""Random well-formed .tile kernels through every stage of tilec, the CPU backend and (on a GPU machine) the GPU: a
structured fuzzer for what the byte fuzzer (scripts/fuzz-parser.sh) rarely reaches, since almost every mutated byte
string ends in the parser.

The generator (tilegen.py) draws kernels from the whole of docs/language.md: tensors and tiles of rank 1-4 in every
dtype (f32 bf16 f16 i32 bool), shared / fragment / local tiles, copies (conversions, pad, tails, unit dims, slices of
tiles, index subscripts, dynamic starts), fills of tiles, slices and global regions, gemm (transposes, clear, policy,
register A, pipelined K loops, attention), reductions along every dim (negative dims, clear=false, rank-0 targets,
slices), atomic_add / atomic_max / atomic_min in element and region form with every `order=`, in scalar code and in
parallel loops (region ops on a slice per iteration: `atomic_add(B[b * bm + i, j * 4 :+ 4], a[i, j * 4 :+ 4])`,
conditional element writes `if j == 5: r[i] = x[i, j]`), parallel / pipelined / range loops nested in each other and
in if / elif / else, scalar expressions (signed `/` and `%` with negative operands, comparisons, bool logic, `?:`,
the math builtins), multi-line headers and continuations; and every atomics strategy (`--atomics=fp32|split|native`,
`--deterministic`). Each kernel is tagged with the constructs it contains (tilegen.CONSTRUCTS); the run ends with a
coverage table: per construct, how many kernels had it, reached CUDA, ran on the CPU backend, were checked against
the model, and were refused (with the first refusal's message). `--coverage-md FILE` writes it as Markdown.

For each kernel:

  1. `tilec K.tile --emit=cuda --atomics=S` (with --stages: every stage, --emit=ast, mlir, legalized, plan, lowered
     and cuda) must either succeed or end in an `error:` diagnostic at file:line:col. A signal, an assertion, a stack
     dump, an error without a location, a later stage that accepts what an earlier one refused, and an op that fails
     the dialect's verifier after the front end accepted the kernel (a pass made invalid IR) are findings;
  2. with --nvcc, what it emits must compile: `nvcc -cubin -arch=sm_90a` (and sm_80 for the mma.sync branch);
  3. with --cpu, `tilec run --target cpu` (the reference backend; random inputs of seed 11, rows = 37: a tail) must
     run it or refuse it with an error message, and numbers are compared without a GPU:
     - a second run with the blocks in a shuffled order (`--shuffle-blocks`) and, for exact kernels, another atomics
       strategy must give the same outputs: bit for bit for integer kernels and kernels without float atomic_add,
       within tilec's tolerance by dtype otherwise (0.25 where float adds accumulate in bf16/f16: native adds into a
       16-bit tensor or shared tile, whose sums depend on the order by whole percents). This is a check of the CPU
       backend and the atomics legalization against themselves, not an independent one;
     - integer kernels (i32 / bool only, about 30 % of them) also run on NumPy inputs with signed values, and their
       outputs must equal, bit for bit, those of tilemodel.py, an independent interpreter of the language written
       from docs/language.md (--no-model skips it). The model also rejects kernels that are not well defined (a read
       of an unwritten element, an index out of its tile, a parallel loop whose result depends on the order of its
       iterations): such a finding is a generator bug;
  4. with --check, on a GPU machine, `tilec run --check` must find the GPU's results equal to the CPU backend's on
     the same inputs (tilec's tolerance by dtype). Random arithmetic can overflow to inf or NaN on both sides:
     look at each such finding before calling it a bug.

  tools/kernel-fuzz/kernel_fuzz.py --tilec build/bin/tilec --count 200 --seed 5 --cpu --nvcc [--stages] [--jobs 2]
      [--regressions tools/kernel-fuzz/regressions] [--keep DIR] [--coverage-md FILE]

The GPU machine's tilec has no CPU backend. `--cpu --refs DIR` keeps every kernel the CPU backend ran, with its
outputs (inputs of seed 11), in DIR (DIR/manifest.txt); `--against DIR` then runs each on the GPU with
`tilec run --reference` (scripts/gpu-bundle.sh and scripts/gpu-run.sh). A manifest entry without its kernel or
outputs, a run that does not say it ran on the GPU, and a machine without a GPU are failures (exit 1, or 2 when
nothing could run), never a pass. Kernels with an inf or NaN output are run but not kept (tilec's relative norm is
NaN for them, even against themselves); those with 16-bit atomic sums are kept with `--tolerance 0.25`.
1000 kernels take about 6 minutes on 2 cores with --jobs 2 (69 MB of outputs, 7 MB packed with xz).

`--regressions DIR` adds every DIR/*.tile (tools/kernel-fuzz/regressions: kernels that once failed) to the run, under
each atomics strategy, with the arguments of its `# kernel-fuzz: --dim m=37 ...` comment line
(`# kernel-fuzz[KERNEL]: ...` for one kernel of the file); the refs and --against flows carry them too
(regressions/README.md). A construct that hits a compiler bug still open is held back from generation
(tilegen.KNOWN_BUGS, listed in every summary; --known-bugs generates it) and its regression kernel carries
`# kernel-fuzz-xfail: REASON`.

Exit status 1 when any finding; each is kept under --keep (default /tmp/kernel-fuzz) as KERNEL.tile plus the log.
Same seed, same kernels (whatever --jobs). Inputs that the compiler refuses with a proper diagnostic are counted,
not findings: the summary line says how many kernels reached CUDA, so a generator that only produces refusals shows
up there, and so does the coverage table.
"""
import argparse
import concurrent.futures
import glob
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tilegen  # noqa: E402

try:
    import numpy as np
    import tilemodel
except ImportError:  # the GPU machine may lack NumPy: --against needs neither
    np = tilemodel = None

CRASH = re.compile(r"PLEASE submit a bug report|Assertion .* failed|Stack dump|LLVM ERROR|internal compiler error|"
                   r"UNREACHABLE|Segmentation fault|Aborted")
LOCATED = re.compile(r"\.tile:\d+:\d+: error: ")
# An op's own verifier message ("'tile.region' op result memory space ..."): after the front end accepted the kernel
# (its IR verified), a pass produced invalid IR. tile-to-loops' refusals have that form too but are deliberate.
VERIFIER = re.compile(r": error: '[a-z_]+\.[a-z_.]+' op (?!tile-to-loops:)")
STAGES = ("ast", "mlir", "legalized", "plan", "lowered", "cuda")
# The inputs' seed of --refs runs, given again on the GPU so that both runs see the same inputs.
REF_SEED = 11
TOLERANCE = {"bf16": 2e-2, "f16": 5e-3, "f32": 1e-3}


def run(cmd, timeout=300, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", (e.stderr or "") + f"\ntimed out after {timeout} s")


def first_error(log):
    for line in log.splitlines():
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
    return log.strip().splitlines()[-1] if log.strip() else "(no message)"


class Case:
    """One kernel under one atomics strategy: generated (tags from the generator) or from --regressions."""

    def __init__(self, entry, path, kernel, run_args, atomics, tags, int_only, strategy2):
        self.entry = entry            # the name in --keep and in the refs (file stem)
        self.path = path
        self.kernel = kernel
        self.run_args = run_args      # --dim ... (and anything else a regression file asks for)
        self.atomics = atomics        # --atomics=S [--deterministic]
        self.tags = tags
        self.int_only = int_only
        self.strategy2 = strategy2    # the second CPU run's strategy
        # results
        self.status = None            # refused | emitted
        self.refusal = None
        self.stage_refused = None
        self.cpu_ran = False
        self.model = None             # None (not tried) | "checked" | "unsupported: ..."
        self.rerun = None
        self.problems = []
        self.xfail = None             # regression files: the reason a local check is expected to fail
        self.nonfinite = False        # a float output holds inf or NaN: `tilec run --reference` cannot compare it
        self.order_sensitive = False  # float atomic adds in 16 bits: compared with ORDER_TOLERANCE
        self.log = ""
        self.seconds = 0.0


def regression_cases(directory, keep):
    """Each kernel of each DIR/*.tile, under every atomics strategy unless its comment line names one."""
    cases = []
    for path in sorted(glob.glob(os.path.join(directory, "*.tile"))):
        src = open(path).read()
        kernels = re.findall(r"^kernel\s+(\w+)", src, re.M)
        common, per = [], {}
        for m in re.finditer(r"^#\s*kernel-fuzz(?:\[(\w+)\])?:(.*)$", src, re.M):
            (per.setdefault(m.group(1), []) if m.group(1) else common).extend(m.group(2).split())
        xfail = re.search(r"^#\s*kernel-fuzz-xfail:(.*)$", src, re.M)
        stem = os.path.splitext(os.path.basename(path))[0]
        for kname in kernels:
            args = per.get(kname, common)
            strategies = [a.split("=", 1)[1] for a in args if a.startswith("--atomics=")] or list(tilegen.STRATEGIES)
            rest = [a for a in args if not a.startswith("--atomics=") and a != "--deterministic"]
            det = ["--deterministic"] if "--deterministic" in args else []
            if not any(a == "--dim" for a in rest):
                rest = ["--dim", "rows=37"] + rest
            int_only = _int_only_source(src)
            for s in strategies:
                entry = f"reg-{stem}-{kname}-{s}" if len(kernels) > 1 else f"reg-{stem}-{s}"
                kept = os.path.join(keep, entry + ".tile")
                shutil.copy(path, kept)
                case = Case(entry, kept, kname, rest, [f"--atomics={s}"] + det, set(), int_only,
                            "fp32" if s != "fp32" else "native")
                case.xfail = xfail.group(1).strip() if xfail else None
                cases.append(case)
    return cases


def _int_only_source(src):
    dtypes = re.findall(r":\s*(f32|bf16|f16|i32|bool)\s*\[", src) + re.findall(r"<(f32|bf16|f16|i32|bool)>", src)
    return bool(dtypes) and all(d in ("i32", "bool") for d in dtypes) and "gemm(" not in src


def classify(p, what):
    """None if fine or a located refusal; else the problem. Returns (problem, refused_message)."""
    log = p.stdout + p.stderr
    if p.returncode == 124:
        return f"{what} timed out", None
    if p.returncode < 0 or p.returncode > 1 or CRASH.search(log):
        return f"{what} crashed (exit {p.returncode})", None
    if p.returncode == 1:
        if not LOCATED.search(log):
            return f"{what} failed without an error diagnostic at file:line:col", None
        return None, first_error(log)
    return None, None


def compile_stages(args, case, tmp):
    """Every --emit stage asked for; sets case.status / refusal; returns the path of the CUDA output or None."""
    stages = STAGES if args.stages else ("cuda",)
    accepted_front = False
    refused_at = None
    cu = os.path.join(tmp, case.entry + ".cu")
    for stage in stages:
        out = cu if stage == "cuda" else os.path.join(tmp, f"{case.entry}.{stage}")
        extra = [] if stage == "ast" else case.atomics
        p = run([args.tilec, case.path, f"--emit={stage}", *extra, "-o", out])
        problem, refused = classify(p, f"tilec --emit={stage}")
        log = p.stdout + p.stderr
        if problem:
            case.problems.append(problem)
            case.log += log
            return None
        if refused is not None:
            if refused_at is None:
                refused_at = stage
                case.refusal = refused
                case.stage_refused = stage
            if accepted_front and stage != "mlir" and VERIFIER.search(log):
                case.problems.append(f"tilec --emit={stage}: an op fails the verifier after the front end accepted "
                                     f"the kernel (a pass made invalid IR)")
                case.log += log
                return None
            if stage == "ast" and args.stages:
                case.problems.append("tilec --emit=ast refused a generated kernel (generator bug or parser bug)")
                case.log += log
                return None
            continue
        if refused_at is not None:
            case.problems.append(f"tilec --emit={stage} accepted what --emit={refused_at} refused")
            case.log += log
            return None
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            case.problems.append(f"tilec --emit={stage} succeeded but wrote nothing")
            return None
        if stage == "mlir":
            accepted_front = True
    if refused_at is not None:
        if not args.stages:
            # Which part refused: the front end, or a later pass? A verifier message from a later pass means the
            # pass broke the IR.
            p = run([args.tilec, case.path, "--emit=mlir", "-o", os.devnull])
            if p.returncode == 0:
                if VERIFIER.search(f": error: {case.refusal}"):
                    case.problems.append("tilec --emit=cuda: an op fails the verifier after the front end accepted "
                                         "the kernel (a pass made invalid IR)")
                    case.log += f"error: {case.refusal}\n"
            elif p.returncode == 1:
                case.stage_refused = "mlir"
        case.status = "refused"
        return None
    case.status = "emitted"
    return cu


def load_outputs(d):
    return {os.path.splitext(f)[0]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".npy")}


def compare(a, b, exact, dtypes, tolerance=None):
    """Names of the tensors that differ (bitwise, or by tilec's relative norm by dtype, or by `tolerance`)."""
    bad = []
    for name in sorted(a):
        x, y = a[name], b.get(name)
        if y is None or x.shape != y.shape:
            bad.append(name)
            continue
        if exact or x.dtype.kind in "biu":
            if not np.array_equal(x, y) and not (x.dtype.kind == "f" and np.array_equal(x, y, equal_nan=True)):
                bad.append(name)
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            err = _relative_error(x.astype(np.float64), y.astype(np.float64))
        if not err <= (tolerance or TOLERANCE.get(dtypes.get(name, "f32"), 1e-3)):
            bad.append(name)
    return bad


def _relative_error(x64, y64):
    """tilec's ||x - y|| / ||y||, over the elements that are not the same infinity; NaN where only one is NaN."""
    if (np.isnan(x64) != np.isnan(y64)).any():
        return float("nan")
    same = (np.isnan(x64) & np.isnan(y64)) | (np.isinf(x64) & (x64 == y64))
    if (np.isinf(x64) != np.isinf(y64))[~same].any():
        return float("nan")
    num = np.linalg.norm((x64 - y64)[~same])
    den = np.linalg.norm(y64[~same])
    return num / den if den else num


# The tolerance of kernels whose float results depend on the order of atomic adds in 16 bits: a bf16 or f16 element
# that takes hundreds of native adds keeps 8 or 11 bits of their running sum, so another order moves it by whole
# percents (7712 against 6688 for one of 192 bf16 adds of values near 40). Such a comparison still catches lost,
# doubled or misplaced adds, not rounding.
ORDER_TOLERANCE = 0.25


def order_sensitive(src, atomics):
    """Whether an atomic_add accumulates in 16 bits: into a bf16/f16 shared tile (always native) or, under
    --atomics=native, into a bf16/f16 tensor."""
    dtypes = dict(re.findall(r"(\w+)\s*:\s*(f32|bf16|f16|i32|bool)\s*\[", src))
    dtypes.update(re.findall(r"(\w+)\s*=\s*(?:shared|fragment|local)<(f32|bf16|f16|i32|bool)>", src))
    shared = set(re.findall(r"(\w+)\s*=\s*shared<", src))
    for dest in re.findall(r"atomic_add\(\s*(\w+)", src):
        if dtypes.get(dest) in ("bf16", "f16") and (dest in shared or "--atomics=native" in atomics):
            return True
    return False


def param_dtypes(src, kernel):
    m = re.search(r"^kernel\s+" + re.escape(kernel) + r"\b.*?\((.*?)\)\s*(?:\n\s*)?grid", src, re.S | re.M)
    if not m:
        return {}
    return dict(re.findall(r"(\w+)\s*:\s*(f32|bf16|f16|i32|bool)\s*\[", m.group(1)))


def cpu_runs(args, case, tmp, seed_rng):
    """The CPU backend: the main run (kept as references with --refs), a shuffled re-run, and the model check."""
    out_a = os.path.join(args.refs, case.entry) if args.refs else os.path.join(tmp, case.entry + ".a")
    base = [args.tilec, "run", case.path, "--kernel", case.kernel, "--target", "cpu", *case.run_args]
    c = run(base + ["--seed", str(REF_SEED), *case.atomics, "--output-dir", out_a])
    problem, refused = classify_cpu(c)
    if problem:
        case.problems.append(problem)
        case.log += c.stdout + c.stderr
        return
    if refused:
        return
    case.cpu_ran = True
    if np is None:
        return
    src = open(case.path).read()
    dtypes = param_dtypes(src, case.kernel)
    case.order_sensitive = order_sensitive(src, case.atomics)
    if args.refs:
        # tilec's relative norm is NaN for a tensor that holds a NaN or an infinity, even against itself, so such a
        # kernel cannot be a reference: it is run and checked here, but not kept.
        case.nonfinite = any(a.dtype.kind == "f" and not np.isfinite(a).all() for a in load_outputs(out_a).values())
    float_add = bool(re.search(r"atomic_add\(", src)) and not case.int_only
    if args.rerun:
        # Another block order (and, for exact kernels, another atomics strategy): the same outputs.
        exact = case.int_only or not float_add
        atomics2 = case.atomics if not exact or "--deterministic" in case.atomics else [f"--atomics={case.strategy2}"]
        out_b = os.path.join(tmp, case.entry + ".b")
        c2 = run(base + ["--seed", str(REF_SEED), *atomics2, "--shuffle-blocks", "--output-dir", out_b])
        problem, refused = classify_cpu(c2)
        if problem or refused:
            case.problems.append(problem or f"the shuffled re-run ({' '.join(atomics2)}) refused what the first run "
                                            f"ran: {refused}")
            case.log += c2.stdout + c2.stderr
            return
        bad = compare(load_outputs(out_b), load_outputs(out_a), exact, dtypes,
                      ORDER_TOLERANCE if case.order_sensitive else None)
        case.rerun = "bitwise" if exact else "tolerance"
        if bad:
            case.problems.append(f"the CPU backend's outputs change with the block order "
                                 f"({' '.join(atomics2)}, --shuffle-blocks): {', '.join(bad)} "
                                 f"({'bitwise' if exact else 'beyond the tolerance'})")
    if args.model and case.int_only:
        model_check(args, case, tmp, base, src, seed_rng)


def classify_cpu(c):
    log = c.stdout + c.stderr
    if c.returncode == 124:
        return "tilec run --target cpu timed out", None
    if c.returncode < 0 or c.returncode > 1 or CRASH.search(log):
        return f"tilec run --target cpu crashed (exit {c.returncode})", None
    if c.returncode == 1:
        if not re.search(r"error: ", log):
            return "tilec run --target cpu failed without an error message", None
        return None, first_error(log)
    return None, None


def model_check(args, case, tmp, base, src, seed_rng):
    """Integer kernels: the CPU backend on NumPy inputs with negative values against tilemodel.py, bit for bit."""
    dims = {}
    for i, a in enumerate(case.run_args):
        if a == "--dim":
            k, v = case.run_args[i + 1].split("=")
            dims[k] = int(v)
    try:
        kernel = tilemodel.parse(src)[case.kernel]
        shapes = tilemodel.param_shapes(kernel, dims)
    except (tilemodel.ModelError, tilemodel.Unsupported, KeyError) as e:
        case.model = f"unsupported: {e}"
        return
    if any(dt not in ("i32", "bool") for _, dt, _ in shapes):
        case.model = "unsupported: float tensors"
        return
    rng = np.random.default_rng(seed_rng)
    inputs, in_args = {}, []
    in_dir = os.path.join(tmp, case.entry + ".in")
    os.makedirs(in_dir, exist_ok=True)
    for name, dt, shape in shapes:
        a = rng.integers(-20, 21, size=shape).astype(np.int32) if dt == "i32" else rng.random(size=shape) < 0.5
        inputs[name] = a
        np.save(os.path.join(in_dir, name + ".npy"), a)
        in_args += ["--input", f"{name}={os.path.join(in_dir, name + '.npy')}"]
    try:
        expected = tilemodel.run_kernel(src, case.kernel, inputs, dims, check_order=True)
    except tilemodel.Unsupported as e:
        case.model = f"unsupported: {e}"
        return
    except (tilemodel.ModelError, RecursionError, OverflowError) as e:
        case.problems.append(f"the model rejects the kernel (a generator bug if the kernel came from it): {e}")
        return
    out_m = os.path.join(tmp, case.entry + ".m")
    c = run(base + [*case.atomics, *in_args, "--output-dir", out_m])
    problem, refused = classify_cpu(c)
    if problem or refused:
        case.problems.append(problem or f"the CPU backend refused the model run's inputs: {refused}")
        case.log += c.stdout + c.stderr
        return
    got = load_outputs(out_m)
    bad = [n for n in expected if n not in got or not np.array_equal(got[n], expected[n])]
    case.model = "checked"
    if bad:
        detail = []
        for n in bad[:3]:
            if n in got and got[n].shape == expected[n].shape:
                diff = np.argwhere(got[n] != expected[n])
                at = tuple(int(x) for x in diff[0])
                detail.append(f"{n}{list(at)}: CPU {got[n][at]!r}, model {expected[n][at]!r} "
                              f"({len(diff)} elements differ)")
            else:
                detail.append(f"{n}: missing or of another shape")
        case.problems.append("the CPU backend's outputs differ from the model's (tilemodel.py): " + "; ".join(detail))
        kept = case.path + ".inputs"
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(in_dir, kept)
        case.log += f"inputs (--input NAME={kept}/NAME.npy): {' '.join(in_args).replace(in_dir, kept)}\n"


def nvcc_check(args, case, cu):
    for arch in ("sm_90a", "sm_80"):
        c = run(["nvcc", "-std=c++17", "-cubin", f"-arch={arch}", "-I", args.runtime_include, cu, "-o", os.devnull])
        if c.returncode != 0:
            case.problems.append(f"nvcc -arch={arch} rejected the emitted CUDA")
            case.log += c.stdout + c.stderr
            return False
    return True


def gpu_check(args, case):
    tol = ["--tolerance", str(ORDER_TOLERANCE)] if order_sensitive(open(case.path).read(), case.atomics) else []
    c = run([args.tilec, "run", case.path, "--kernel", case.kernel, "--check", *case.run_args, *case.atomics, *tol])
    clog = c.stdout + c.stderr
    if "needs the CPU backend" in clog:
        return "setup"
    if c.returncode != 0 and not re.search(r"error: ", clog):
        case.problems.append(f"tilec run --check crashed (exit {c.returncode})")
    elif c.returncode != 0:
        case.problems.append("the GPU and the CPU backend disagree, or the GPU run failed")
    if case.problems:
        case.log += clog
    return None


def process(args, case, seed_rng):
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="kf-") as tmp:
        cu = compile_stages(args, case, tmp)
        if case.status == "refused" and case.stage_refused in ("ast", "mlir") and case.tags:
            # The generator makes only kernels that docs/language.md accepts.
            case.problems.append(f"the front end refused a generated kernel (a generator bug, or a front-end bug): "
                                 f"{case.refusal}")
        if cu and args.nvcc and not case.problems:
            nvcc_check(args, case, cu)
        if args.cpu and not case.problems:
            cpu_runs(args, case, tmp, seed_rng)
        if args.check and not case.problems and gpu_check(args, case) == "setup":
            case.seconds = time.time() - start
            return "setup"
        if case.problems and args.refs:
            shutil.rmtree(os.path.join(args.refs, case.entry), ignore_errors=True)
    case.seconds = time.time() - start
    return None


# --- the GPU half of --refs --------------------------------------------------------------------------------------------
def read_manifest(refs):
    """Entries (entry, kernel, strategy args, run args). Older manifests: NAME|STRATEGY|ARGS... (kernel = NAME)."""
    with open(os.path.join(refs, "manifest.txt")) as f:
        lines = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    entries = []
    for line in lines:
        fields = line.split("|")
        if len(fields) >= 2 and fields[1] in tilegen.STRATEGIES:
            entries.append((fields[0], fields[0], [f"--atomics={fields[1]}"], fields[2:]))
        else:
            atomics = [a for a in fields[2].split()] if len(fields) > 2 else []
            entries.append((fields[0], fields[1], atomics, fields[3:]))
    return entries


def check_against(args):
    """Each kept kernel on the GPU (or the CPU backend), compared with the CPU backend's kept outputs. Nothing is
    skipped: a missing kernel or reference, a run that does not say where it ran, and a missing GPU all fail."""
    refs, target = args.against, args.against_target
    manifest = os.path.join(refs, "manifest.txt")
    if not os.path.exists(manifest):
        print(f"kernel-fuzz: {manifest} not found: make the references with --cpu --refs {refs} on a machine whose "
              f"tilec has the CPU backend (scripts/gpu-bundle.sh does)", file=sys.stderr)
        return 2
    entries = read_manifest(refs)
    if not entries:
        print(f"kernel-fuzz: {refs}/manifest.txt lists no kernels", file=sys.stderr)
        return 2
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {e[0] for e in entries}
        if unknown:
            print(f"kernel-fuzz: --only names kernels {refs}/manifest.txt does not list: {', '.join(sorted(unknown))}",
                  file=sys.stderr)
            return 2
        entries = [e for e in entries if e[0] in wanted]
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        entries = entries[i * len(entries) // n:(i + 1) * len(entries) // n]
    where = "on the GPU" if target == "cuda" else "on the CPU"
    wrapper = []
    if args.sanitize:
        if target != "cuda":
            print("kernel-fuzz: --sanitize needs --against-target cuda", file=sys.stderr)
            return 2
        # An even sample of the kernels, each run under compute-sanitizer (which exits 3 on any error it reports).
        if args.sample and args.sample < len(entries):
            entries = [entries[i * len(entries) // args.sample] for i in range(args.sample)]
        wrapper = ["compute-sanitizer", "--tool", args.sanitize, "--error-exitcode", "3"]
        where += f" under compute-sanitizer --tool {args.sanitize}"

    def one(entry):
        name, kernel, atomics, run_args = entry
        tile, ref_dir = os.path.join(refs, name + ".tile"), os.path.join(refs, name)
        if not os.path.exists(tile):
            return "missing", f"{tile} is missing"
        if not os.path.isdir(ref_dir) or not any(f.endswith(".npy") for f in os.listdir(ref_dir)):
            return "missing", f"no reference outputs in {ref_dir}"
        c = run([*wrapper, args.tilec, "run", tile, "--kernel", kernel, "--target", target, "--seed", str(REF_SEED),
                 *run_args, *atomics, "--reference", ref_dir])
        log = (c.stdout + c.stderr).strip()
        if "no CUDA driver" in log:
            return "nogpu", log.splitlines()[-1]
        if c.returncode != 0:
            # Every tensor that differs (a kernel may have more outputs than a tail of the log shows), then the tail.
            # Under compute-sanitizer, its report too (the first hazards or errors it describes).
            lines = log.splitlines()
            report = [l for l in lines[:-4] if l.startswith("=========")][:40] if wrapper else []
            shown = [l for l in lines[:-4] if "MISMATCH" in l] + report + lines[-4:]
            return "differ", f"exit {c.returncode}\n  " + "\n  ".join(shown)
        ran = "on the GPU" if target == "cuda" else "on the CPU"
        if f"ran {kernel} {ran}" not in c.stdout or "vs reference" not in c.stdout:
            return "differ", f"exit 0 but the output does not show a run {where} compared with the reference:\n  " + \
                "\n  ".join(log.splitlines()[-8:])
        return "pass", ""

    counts = {"pass": 0, "differ": 0, "missing": 0}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(one, e): e for e in entries}
        for fut in concurrent.futures.as_completed(futures):
            entry = futures[fut]
            status, text = fut.result()
            if status == "nogpu":
                print(f"kernel-fuzz: --against needs a GPU: {text}", file=sys.stderr)
                for f in futures:
                    f.cancel()
                return 2
            counts[status] += 1
            # Each result as it comes (flushed), so that a run cut short by a time limit still says what it checked.
            if status != "pass":
                print(f"FINDING {entry[0]} ({' '.join(entry[2])}): {'MISSING ' if status == 'missing' else ''}{text}",
                      flush=True)
            elif args.verbose:
                print(f"match {entry[0]} ({' '.join(entry[2])})", flush=True)
    failed = counts["differ"] + counts["missing"]
    print(f"kernel-fuzz: {len(entries)} kernels run {where} against the CPU backend's outputs ({refs}): "
          f"{counts['pass']} match, {counts['differ']} differ or fail, {counts['missing']} missing a kernel or "
          f"reference")
    return 1 if failed or counts["pass"] != len(entries) else 0


# --- coverage ------------------------------------------------------------------------------------------------------
def coverage_rows(cases, held):
    rows = []
    for name in tilegen.CONSTRUCTS:
        with_it = [c for c in cases if name in c.tags]
        refused = [c for c in with_it if c.status == "refused"]
        note = refused[0].refusal if refused else ""
        if name in held and not with_it:
            note = "(held back: known compiler bug; --known-bugs generates it)"
        rows.append((name, len(with_it), sum(c.status == "emitted" and not c.problems for c in with_it),
                     sum(c.cpu_ran for c in with_it), sum(c.model == "checked" for c in with_it), len(refused),
                     note))
    return rows


def print_coverage(rows, out):
    width = max(len(r[0]) for r in rows)
    out.write(f"{'construct':<{width}}  generated  cuda  cpu  model  refused  first refusal\n")
    for name, gen, cuda, cpu, model, ref, msg in rows:
        out.write(f"{name:<{width}}  {gen:9d}  {cuda:4d}  {cpu:3d}  {model:5d}  {ref:7d}  {msg[:90]}\n")


def write_coverage_md(rows, path, header):
    with open(path, "w") as f:
        f.write(f"{header}\n\n")
        f.write("| construct | generated | reached CUDA | ran on CPU | checked against the model | refused | "
                "refused (first message) |\n|---|---:|---:|---:|---:|---:|---|\n")
        for name, gen, cuda, cpu, model, ref, msg in rows:
            msg = msg.replace("|", "\\|")
            f.write(f"| `{name}` | {gen} | {cuda} | {cpu} | {model} | {ref} | {msg} |\n")


def runtime_include_of(tilec):
    """runtime/include of the sources `tilec` was built from: the emitted CUDA includes the device headers of its
    own version (NVRTC gets them embedded; nvcc needs the files)."""
    d = os.path.dirname(os.path.abspath(tilec))
    for _ in range(3):
        cache = os.path.join(d, "CMakeCache.txt")
        if os.path.exists(cache):
            m = re.search(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.*)$", open(cache).read(), re.M)
            if m and os.path.isdir(os.path.join(m.group(1), "runtime", "include")):
                return os.path.join(m.group(1), "runtime", "include")
        d = os.path.dirname(d)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "runtime", "include")


def keep_ref(case):
    # A kernel the GPU lowering refuses (with a diagnostic) has nothing to compare on the GPU.
    return (case.cpu_ran and not case.problems and case.xfail is None and not case.nonfinite
            and case.status != "refused")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tilec", required=True)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="kernels processed at once (subprocesses in parallel)")
    ap.add_argument("--stages", action="store_true",
                    help="run every --emit stage (ast, mlir, legalized, plan, lowered, cuda), not just cuda")
    ap.add_argument("--nvcc", action="store_true", help="compile what tilec emits with nvcc (sm_90a and sm_80)")
    ap.add_argument("--cpu", action="store_true",
                    help="also run each kernel on the CPU backend, re-run it in a shuffled block order and check "
                         "integer kernels against the model")
    ap.add_argument("--no-rerun", dest="rerun", action="store_false", help="with --cpu: no shuffled re-run")
    ap.add_argument("--no-model", dest="model", action="store_false", help="with --cpu: no check against the model")
    ap.add_argument("--check", action="store_true",
                    help="on a GPU machine: `tilec run --check` (the GPU against the CPU backend, same inputs)")
    ap.add_argument("--runtime-include",
                    help="the device headers for --nvcc (default: those of the source tree tilec was built from, "
                         "found through its build directory's CMakeCache.txt, else this checkout's)")
    ap.add_argument("--keep", default="/tmp/kernel-fuzz")
    ap.add_argument("--gemm-loops", action="store_true",
                    help="start every kernel with a pipelined tiled gemm (multi-buffering, prefetch, tensor cores)")
    ap.add_argument("--regressions", metavar="DIR", action="append", default=[],
                    help="also run every DIR/*.tile (kernels that once failed), under every atomics strategy")
    ap.add_argument("--known-bugs", action="store_true",
                    help="also generate the constructs of tilegen.KNOWN_BUGS (held back: they hit open compiler bugs)")
    ap.add_argument("--show-refused", action="store_true", help="print each refusal's first error")
    ap.add_argument("--coverage-md", metavar="FILE", help="write the coverage table as Markdown")
    ap.add_argument("--no-coverage", dest="coverage", action="store_false", help="do not print the coverage table")
    ap.add_argument("--require-coverage", action="store_true",
                    help="fail if any construct of the generator's list was never generated")
    ap.add_argument("--refs", metavar="DIR",
                    help="with --cpu: keep each kernel the CPU backend runs, its inputs' seed and its outputs in DIR "
                         "(DIR/manifest.txt), for --against on a GPU machine whose tilec has no CPU backend")
    ap.add_argument("--against", metavar="DIR",
                    help="on a GPU machine: run every kernel of a --refs DIR on the GPU (`tilec run --target cuda "
                         "--reference`) and compare with the CPU backend's outputs; generates nothing")
    ap.add_argument("--sanitize", choices=("memcheck", "racecheck", "synccheck", "initcheck"),
                    help="with --against: run each kernel under compute-sanitizer with this tool; any error it "
                         "reports fails the kernel")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="with --sanitize: only N kernels, spread evenly over the manifest (default: all)")
    ap.add_argument("--only", metavar="K",
                    help="with --against: only the manifest's kernels whose entry names are listed (comma-separated)")
    ap.add_argument("--shard", metavar="I/N",
                    help="with --against: only the I-th of N even shares of the manifest (0 <= I < N), so that one "
                         "check can be split over several short runs")
    ap.add_argument("--verbose", action="store_true", help="with --against: a line for each kernel that matches too")
    ap.add_argument("--against-target", default="cuda", choices=("cuda", "cpu"),
                    help="where --against runs the kernels (cpu: the references against the CPU backend itself, "
                         "which tests the two halves without a GPU)")
    args = ap.parse_args()
    if (args.only or args.shard or args.verbose or args.sanitize or args.sample) and not args.against:
        ap.error("--only, --shard, --verbose, --sanitize and --sample need --against")
    if args.shard:
        m = re.fullmatch(r"(\d+)/(\d+)", args.shard)
        if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
            ap.error(f"--shard takes I/N with 0 <= I < N, not '{args.shard}'")
    if args.against:
        return check_against(args)
    if args.refs and not args.cpu:
        ap.error("--refs needs --cpu (the references are the CPU backend's outputs)")
    if args.cpu and np is None:
        print("kernel-fuzz: NumPy is missing: --cpu runs no numeric checks (pip install numpy)", file=sys.stderr)
    if args.refs:
        os.makedirs(args.refs, exist_ok=True)
    os.makedirs(args.keep, exist_ok=True)
    tilegen.ALLOW_KNOWN_BUGS = args.known_bugs
    if args.nvcc and not args.runtime_include:
        args.runtime_include = runtime_include_of(args.tilec)
    started = time.time()

    rng = random.Random(args.seed)
    cases = []
    for i in range(args.count):
        g = tilegen.generate(rng, i, args.gemm_loops)
        entry = f"k{i}"
        path = os.path.join(args.keep, f"seed{args.seed}-k{i}.tile")
        with open(path, "w") as f:
            f.write(g.source)
        second = rng.choice([s for s in tilegen.STRATEGIES if s != g.strategy])
        cases.append(Case(entry, path, g.name, g.run_args(), g.atomics_args(), g.tags, g.int_only, second))
    n_generated = len(cases)
    for d in args.regressions:
        cases += regression_cases(d, args.keep)

    findings = xfails = 0
    setup_error = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(process, args, c, args.seed * 1000003 + i): c for i, c in enumerate(cases)}
        for fut in concurrent.futures.as_completed(futures):
            case = futures[fut]
            if fut.result() == "setup":
                setup_error = True
            if args.show_refused and case.status == "refused":
                print(f"refused {os.path.basename(case.path)} ({case.stage_refused}): {case.refusal}")
            if args.refs and keep_ref(case):
                shutil.copy(case.path, os.path.join(args.refs, case.entry + ".tile"))
            elif args.refs:
                shutil.rmtree(os.path.join(args.refs, case.entry), ignore_errors=True)
            if case.xfail is not None:
                if case.problems:
                    xfails += 1
                    print(f"XFAIL {case.entry}: {'; '.join(case.problems)} (known: {case.xfail})")
                    os.remove(case.path)
                    continue
                case.problems.append(f"XPASS: no check failed, but the file says `kernel-fuzz-xfail: {case.xfail}`; "
                                     f"if the bug is fixed, remove that line (and the construct from "
                                     f"tilegen.KNOWN_BUGS)")
            if case.problems:
                findings += 1
                with open(case.path + ".log", "w") as f:
                    f.write("\n".join(case.problems) + f"\n{' '.join(case.atomics)} {' '.join(case.run_args)}\n"
                            f"{case.log}")
                print(f"FINDING {case.path} ({' '.join(case.atomics)}): {'; '.join(case.problems)}\n  " +
                      "\n  ".join(case.log.strip().splitlines()[:6]))
            else:
                os.remove(case.path)
    if setup_error:
        print(f"kernel-fuzz: {args.tilec} cannot run --check: it has no CPU backend", file=sys.stderr)
        return 2
    if args.refs:
        with open(os.path.join(args.refs, "manifest.txt"), "w") as manifest:
            for c in cases:
                if keep_ref(c):
                    tol = ["--tolerance", str(ORDER_TOLERANCE)] if c.order_sensitive else []
                    manifest.write("|".join([c.entry, c.kernel, " ".join(c.atomics), *c.run_args, *tol]) + "\n")

    gen = cases[:n_generated]
    regs = cases[n_generated:]
    emitted = sum(c.status == "emitted" for c in cases)
    refused = sum(c.status == "refused" for c in cases)
    by_part = {"the front end": ("ast", "mlir"), "atomics legalization": ("legalized",),
               "the GPU lowering": ("plan", "lowered", "cuda")}
    parts = ", ".join(f"{sum(c.status == 'refused' and c.stage_refused in st for c in cases)} by {part}"
                      for part, st in by_part.items())
    cpu = sum(c.cpu_ran for c in cases)
    model = sum(c.model == "checked" for c in cases)
    reruns = sum(c.rerun is not None for c in cases)
    elapsed = time.time() - started
    per = sum(c.seconds for c in cases) / max(1, len(cases))
    held = [] if args.known_bugs else sorted(tilegen.KNOWN_BUGS)
    rows = coverage_rows(gen, held)
    if args.coverage and gen:
        print_coverage(rows, sys.stdout)
    if args.coverage_md:
        write_coverage_md(rows, args.coverage_md,
                          f"Constructs of {len(gen)} kernels of `kernel_fuzz.py --seed {args.seed}"
                          f"{' --gemm-loops' if args.gemm_loops else ''}` (tilegen.CONSTRUCTS); a kernel counts once "
                          f"per construct it contains.")
    missing = [r[0] for r in rows if r[1] == 0 and r[0] not in held]
    if missing and gen and (args.coverage or args.require_coverage):
        print(f"kernel-fuzz: constructs never generated in this run: {', '.join(missing)}")
    for name in held:
        print(f"kernel-fuzz: held back (known compiler bug, --known-bugs generates it): {name}: "
              f"{tilegen.KNOWN_BUGS[name]}")
    if xfails:
        print(f"kernel-fuzz: {xfails} regression cases failed as their files expect (kernel-fuzz-xfail)")
    if args.refs:
        kept = sum(keep_ref(c) for c in cases)
        print(f"kernel-fuzz: {kept} kernels kept as references in {args.refs}; not kept: "
              f"{sum(c.nonfinite and c.cpu_ran and not c.problems for c in cases)} with an inf or NaN output "
              f"(tilec run --reference cannot compare them), {sum(not c.cpu_ran for c in cases)} not run on the "
              f"CPU backend, {sum(c.status == 'refused' and c.cpu_ran and not c.problems for c in cases)} refused by "
              f"the GPU lowering, {sum(bool(c.problems) for c in cases)} with findings or expected failures; "
              f"{sum(keep_ref(c) and c.order_sensitive for c in cases)} of the kept ones add atomically in 16 bits "
              f"(compared with --tolerance {ORDER_TOLERANCE})")
    print(f"kernel-fuzz: {len(gen)} kernels (seed {args.seed}){f' + {len(regs)} regression cases' if regs else ''}: "
          f"{emitted} reached CUDA{' and compiled' if args.nvcc else ''}"
          f"{' through every stage' if args.stages else ''}, {refused} refused with a diagnostic ({parts})"
          f"{f', {cpu} ran on the CPU backend ({reruns} re-run shuffled and compared, {model} checked against the model)' if args.cpu else ''}"
          f", {findings} findings; {elapsed:.0f} s ({per:.2f} s a kernel, {args.jobs} jobs)")
    if args.require_coverage and missing:
        return 1
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
