"""The kernel generator of tools/kernel-fuzz: random .tile kernels that docs/language.md accepts.

`generate(rng, index, gemm_loops=False)` returns a `Generated` (the source, the kernel's name, the named dims to run
it with, the atomics strategy and the set of constructs it contains). Every construct the generator can emit has a
name in CONSTRUCTS, and the generator tags each kernel with the names of the constructs it emitted, so that the
driver (kernel_fuzz.py) can count, per construct, how many kernels were generated, compiled and run.

Rules the generator keeps, so that every kernel is well defined (same results on the GPU and the CPU backend, up to
float rounding):

- every tile is fully written (copy, fill, reduce with clear, gemm with clear) right after its allocation;
- element reads stay inside the tile (indices are loop variables, constants or `% extent` / `min(.., extent - 1)`);
- in a `parallel` loop, a tile that the loop writes is read only at the element the iteration writes; slices that
  region ops write in a loop are owned by one iteration each (`t[i, j * 4 :+ 4]`); conditional element writes pin the
  loop variables that the target lacks (`if j == 5: r[i] = x[i, j]`);
- every global write of one block is to rows `b * S0 :+ S0` of a tensor written by that statement alone, with one more
  leading index per sequential loop around it and per further grid axis, so blocks and iterations never write the
  same element except through atomics;
- integer `/` and `%` divide by a non-zero constant or by `abs(x) + 1` (either sign).

Kernels are "int-only" (i32 and bool tensors and tiles, no float arithmetic) with some probability: their results
are exact, so kernel_fuzz.py can compare them bitwise with an independent model (tilemodel.py).
"""
import random

FLOATS = ("f32", "bf16", "f16")
SIZES = (1, 2, 3, 4, 5, 8, 16, 24, 32, 48, 64)
GEMM_SIZES = (16, 32, 48, 64, 128, 16, 32, 64, 1, 8, 24, 40)  # mostly tensor-core shapes, some not
ORDERS = ("relaxed", "release", "acq_rel", "seq_cst")
STRATEGIES = ("fp32", "split", "native")
FLOAT_FUNCS = ("exp2", "log2", "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos", "floor", "ceil", "log1p",
               "expm1", "sigmoid", "pow", "abs", "min", "max")
NAMED_DIMS = {"rows": 37, "cols": 29, "depth": 100, "keys": 75}
MAX_TILE = 4096          # elements of a tile (GPU: 65536 per register tile; the CPU references stay small)
MAX_TILE_INT = 1024      # int-only kernels are also run by the Python model

# Constructs that hit a compiler bug still open: generated only with ALLOW_KNOWN_BUGS (kernel_fuzz.py --known-bugs),
# so that a fixed-seed CI run stays green and the bug stays tracked by its regression case (regressions/, marked
# `# kernel-fuzz-xfail:`). Remove an entry once its bug is fixed.
KNOWN_BUGS = {}
ALLOW_KNOWN_BUGS = False

# Every construct the generator emits, in the order of the coverage table. The names say what the kernel contains;
# "in-parallel" means inside the body of a `for ... in parallel(...)` loop.
CONSTRUCTS = (
    # tensors, tiles, dtypes
    "tile.rank1", "tile.rank2", "tile.rank3", "tile.rank4",
    "tensor.rank1", "tensor.rank2", "tensor.rank3", "tensor.rank4",
    "dtype.f32", "dtype.bf16", "dtype.f16", "dtype.i32", "dtype.bool",
    "space.shared", "space.fragment", "space.local",
    "tensor.named-dim2", "tensor.derived-dim", "grid.2d", "grid.3d",
    "const.int", "const.float", "const.bool",
    # copy
    "copy.load", "copy.store", "copy.tile-to-tile", "copy.convert", "copy.i32-float", "copy.bool-to-i32",
    "copy.unit-dims", "copy.pad",
    "copy.slice-of-tile", "copy.into-slice", "copy.index-subscript", "slice.dynamic-start", "slice.tail",
    "copy.region.in-parallel", "copy.load.in-parallel", "copy.element.in-parallel",
    # fill
    "fill.tile", "fill.slice", "fill.global", "fill.dynamic-value", "fill.slice.in-parallel",
    # gemm
    "gemm.f32", "gemm.bf16", "gemm.f16", "gemm.transpose_a", "gemm.transpose_b", "gemm.clear", "gemm.register-a",
    "gemm.policy", "gemm.pipelined", "gemm.attention",
    # reductions
    "reduce_sum", "reduce_max", "reduce_min", "reduce.dim0", "reduce.dim1", "reduce.dim2", "reduce.dim3",
    "reduce.negative-dim", "reduce.clear=false", "reduce.to-rank0", "reduce.slice-source", "reduce.i32",
    "reduce.in-parallel",
    # atomics
    "atomic_add.element", "atomic_max.element", "atomic_min.element",
    "atomic_add.region", "atomic_max.region", "atomic_min.region",
    "atomic_add.element.in-parallel", "atomic_max.element.in-parallel", "atomic_min.element.in-parallel",
    "atomic_add.region.in-parallel", "atomic_max.region.in-parallel", "atomic_min.region.in-parallel",
    "atomic.whole-tensor", "atomic.into-shared", "atomic.i32", "atomic.bf16", "atomic.f16",
    "atomic.colliding-elements",
    "order=relaxed", "order=release", "order=acq_rel", "order=seq_cst",
    "atomics=fp32", "atomics=split", "atomics=native", "deterministic",
    # loops
    "parallel", "parallel.5+extents", "pipelined", "pipelined.stages>1", "pipelined.dynamic-lower",
    "range-loop", "range.lower-upper", "range.step", "range.dynamic-bound", "range.nested",
    "parallel.in-range", "parallel.in-pipelined", "parallel.in-if", "range.in-parallel", "pipelined.in-parallel",
    "global-write.in-loop",
    # element statements
    "store.=", "store.+=", "store.-=", "store.*=", "store.conditional-in-parallel", "store.broadcast-read",
    "store.scalar-code", "store.int-to-float", "store.bool",
    # scalar expressions
    "int.div", "int.mod", "int.div-negative", "int.mod-negative", "int.unary-minus",
    "cmp.<", "cmp.<=", "cmp.>", "cmp.>=", "cmp.==", "cmp.!=", "bool.and", "bool.or", "bool.not", "bool.eq",
    "select", "select.bool", "scalar.assign", "scalar.compile-time", "scalar.in-parallel",
    "if", "if-else", "if-elif-else", "if.compile-time", "if.in-parallel", "pass",
    "builtin.min", "builtin.max", "builtin.abs", "builtin.cdiv", "builtin.int", "builtin.float",
    *[f"math.{f}" for f in FLOAT_FUNCS if f not in ("abs", "min", "max")],
    "const.LOG2E", "const.LN2", "const.PI", "const.inf",
    # syntax
    "syntax.multiline-header", "syntax.one-line-header", "syntax.line-continuation", "syntax.comment",
    # kernel kinds
    "kernel.int-only",
)
_CONSTRUCT_SET = set(CONSTRUCTS)


class Generated:
    def __init__(self, name, source, dims, strategy, deterministic, tags, int_only):
        self.name = name
        self.source = source
        self.dims = dims                  # {"rows": 37, ...}: the named dims the kernel uses
        self.strategy = strategy
        self.deterministic = deterministic
        self.tags = tags
        self.int_only = int_only

    def run_args(self):
        args = []
        for d, v in self.dims.items():
            args += ["--dim", f"{d}={v}"]
        return args

    def atomics_args(self):
        return [f"--atomics={self.strategy}"] + (["--deterministic"] if self.deterministic else [])


class Tile:
    __slots__ = ("name", "space", "dtype", "shape")

    def __init__(self, name, space, dtype, shape):
        self.name, self.space, self.dtype, self.shape = name, space, dtype, tuple(shape)


class Frame:
    """A loop or branch around the current statement."""

    def __init__(self, kind, vars_=(), extents=(), ordinal=None, count=None):
        self.kind = kind            # parallel | range | pipelined | if
        self.vars = list(vars_)
        self.extents = list(extents)
        self.ordinal = ordinal      # sequential loops: an int expression in [0, count) that names the iteration
        self.count = count          # its extent as a tensor dimension (text), None when unknown
        self.written = set()        # parallel: tiles written in the loop (read only where written)


def prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


class Kernel:
    def __init__(self, rng, name, int_only):
        self.rng = rng
        self.name = name
        self.int_only = int_only
        self.lines = []
        self.params = []            # (name, dtype, dims as texts)
        self.tiles = {}             # visible tiles: name -> Tile
        self.scalars = {}           # visible scalar names: name -> kind (int | float | bool)
        self.scopes = [[]]
        self.frames = []
        self.counter = 0
        self.indent = 2
        self.tags = set()
        self.dims_used = {"rows"}
        self.block_vars = [("b", "cdiv(rows, 16)")]
        self.grid_extra = []        # further grid axes: (var, extent)
        self.consts = {"flag": "bool", "cn": "int", "sc": "float", "on": "bool"}
        # Once -inf is written somewhere, no float -> i32 conversion follows: an infinity converted to i32 is an
        # unspecified value (language.md §9.1), which the GPU and the CPU backend need not agree on.
        self.may_inf = False

    # --- bookkeeping ---------------------------------------------------------------------------------------------
    def tag(self, *names):
        for n in names:
            assert n in _CONSTRUCT_SET, n
            self.tags.add(n)

    def allow(self, construct):
        return ALLOW_KNOWN_BUGS or construct not in KNOWN_BUGS

    def fresh(self, hint):
        self.counter += 1
        return f"{hint}{self.counter}"

    def emit(self, text):
        self.lines.append("  " * self.indent + text)

    def bind(self, name, kind=None, tile=None):
        if tile is not None:
            self.tiles[name] = tile
        else:
            self.scalars[name] = kind
        self.scopes[-1].append(name)

    def push(self, frame):
        self.frames.append(frame)
        self.scopes.append([])
        self.indent += 1
        return len(self.lines)

    def pop(self, start):
        if len(self.lines) == start:
            self.emit("pass")
            self.tag("pass")
        for n in self.scopes.pop():
            self.tiles.pop(n, None)
            self.scalars.pop(n, None)
        self.frames.pop()
        self.indent -= 1

    def in_parallel(self):
        return any(f.kind == "parallel" for f in self.frames)

    def parallel_frame(self):
        for f in reversed(self.frames):
            if f.kind == "parallel":
                return f
        return None

    def loop_vars(self):
        out = []
        for f in self.frames:
            out += list(zip(f.vars, f.extents))
        return out

    def uniform_int_atoms(self):
        """Int names that are the same for every thread of the block (conditions of top-level ifs, loop bounds)."""
        atoms = [v for v, _ in self.block_vars + self.grid_extra] + ["cn", "rows"]
        atoms += [v for f in self.frames if f.kind in ("range", "pipelined") for v in f.vars]
        atoms += [n for n, kd in self.scalars.items() if kd == "int" and not n.startswith("p")]
        return atoms

    def readable_tiles(self, dtype_ok):
        pf = self.parallel_frame()
        return [t for t in self.tiles.values() if dtype_ok(t.dtype) and (pf is None or t.name not in pf.written)]

    # --- tiles and tensors ---------------------------------------------------------------------------------------
    def alloc(self, space, dtype, shape):
        name = self.fresh({"shared": "s", "fragment": "f", "local": "l"}[space])
        t = Tile(name, space, dtype, shape)
        self.bind(name, tile=t)
        self.emit(f"{name} = {space}<{dtype}>[{', '.join(map(str, shape))}]")
        self.tag(f"space.{space}", f"dtype.{dtype}", f"tile.rank{len(shape)}")
        return t

    def param(self, dtype, dims):
        name = f"T{len(self.params)}"
        self.params.append((name, dtype, list(dims)))
        self.tag(f"dtype.{dtype}", f"tensor.rank{len(dims)}")
        for d in dims:
            for n in NAMED_DIMS:
                if n in d:
                    self.dims_used.add(n)
            if d not in NAMED_DIMS and not d.isdigit():
                self.tag("tensor.derived-dim")
        return name

    def owner_prefix(self):
        """Leading (dim, subscript) pairs that make a global write of this statement unique per further grid axis and
        per iteration of the sequential loops around it; None when a loop's trip count is unknown."""
        prefix = [(ext, v) for v, ext in self.grid_extra]
        for f in self.frames:
            if f.kind in ("range", "pipelined"):
                if f.count is None:
                    return None
                prefix.append((f.count, f.ordinal))
                self.tag("global-write.in-loop")
        return prefix

    def input_region(self, dtype, shape, dynamic_ok=True):
        """A new input tensor and a region of it with the extents `shape` (unit dims dropped as the tile has them)
        for block b: rows b * S0 :+ S0 (sometimes from a dynamic start), other dims whole, with a tail, or from an
        offset; sometimes an extra dim picked by an index."""
        rng = self.rng
        dims, subs = [], []
        first = rng.random()
        if first < 0.12 and any(p[2][:1] == ["rows"] for p in self.params):
            dims.append(rng.choice(("2 * rows + 1", "rows / 2", "cdiv(rows, 4)", "rows + 3")))
        else:
            dims.append("rows")
        start = f"b * {shape[0]}"
        if dynamic_ok and rng.random() < 0.15:
            start += f" + {self.nonneg_uniform()}"
            self.tag("slice.dynamic-start")
        subs.append(f"{start} :+ {shape[0]}")
        for d in shape[1:]:
            r = rng.random()
            if r < 0.12 and d > 1:
                dims.append(str(d - rng.randint(1, d - 1)))
                subs.append(f"0 :+ {d}")
                self.tag("slice.tail")
            elif r < 0.2:
                off = rng.randint(1, 5)
                dims.append(str(d + off))
                subs.append(f"{rng.randint(0, off)} :+ {d}")
            elif r < 0.26 and d > 1:
                dims.append("cols")
                subs.append(f"0 :+ {d}")
                self.tag("tensor.named-dim2")
            else:
                dims.append(str(d))
                subs.append(":")
        if len(dims) < 4 and rng.random() < 0.15:
            pos = rng.randint(1, len(dims))
            e = rng.choice((2, 3, 4))
            idx = rng.choice((str(rng.randrange(e)), f"b % {e}"))
            dims.insert(pos, str(e))
            subs.insert(pos, idx)
            self.tag("copy.index-subscript")
        name = self.param(dtype, dims)
        return f"{name}[{', '.join(subs)}]"

    def nonneg_uniform(self):
        return self.rng.choice(("b % 2", "cn - 3", "(b + 1) % 3", "abs(b - 1)"))

    def output_region(self, dtype, shape):
        """A new output tensor and the region of it that block b (and the loops around) owns for a tile of `shape`;
        None if that would need more than 4 dims."""
        prefix = self.owner_prefix()
        if prefix is None or len(prefix) + len(shape) > 4:
            return None
        rng = self.rng
        dims = [p[0] for p in prefix] + ["rows"]
        subs = [p[1] for p in prefix] + [f"b * {shape[0]} :+ {shape[0]}"]
        for d in shape[1:]:
            if rng.random() < 0.15 and d > 1:
                dims.append(str(d - rng.randint(1, d - 1)))
                subs.append(f"0 :+ {d}")
                self.tag("slice.tail")
            else:
                dims.append(str(d))
                subs.append(":")
        name = self.param(dtype, dims)
        return f"{name}[{', '.join(subs)}]"

    # --- expressions ---------------------------------------------------------------------------------------------
    def element_reads(self, kind):
        """Element reads of tiles whose elements are of `kind` (int: i32, float: floats, bool), in range: at the
        iteration's own element in a parallel loop, broadcast along missing dims, else at safe indices."""
        ok = {"int": lambda d: d == "i32", "float": lambda d: d in FLOATS, "bool": lambda d: d == "bool"}[kind]
        pf = self.parallel_frame()
        lv = self.loop_vars()
        out = []
        cands = [t for t in self.tiles.values() if ok(t.dtype)]
        self.rng.shuffle(cands)
        for t in cands[:4]:
            if pf is not None and t.name in pf.written:
                if tuple(pf.extents) == t.shape and getattr(pf, "identity", True):
                    out.append(f"{t.name}[{', '.join(pf.vars)}]")
                continue
            if pf is not None and tuple(pf.extents) == t.shape:
                out.append(f"{t.name}[{', '.join(pf.vars)}]")
                continue
            if pf is not None:
                # Broadcast: the tile's dims are a subsequence of the loop's.
                idx, j = [], 0
                for v, e in zip(pf.vars, pf.extents):
                    if j < len(t.shape) and t.shape[j] == e:
                        idx.append(v)
                        j += 1
                if j == len(t.shape) and len(idx) < len(pf.vars):
                    out.append(f"{t.name}[{', '.join(idx)}]")
                    self.tag("store.broadcast-read")
                    continue
            subs = []
            for s in t.shape:
                big = [v for v, e in lv if e and e >= 1]
                r = self.rng.random()
                if big and r < 0.5:
                    v = self.rng.choice(big)
                    subs.append(f"({v} + {self.rng.randrange(s)}) % {s}" if self.rng.random() < 0.5
                                else f"min({v}, {s - 1})")
                else:
                    subs.append(str(self.rng.randrange(s)))
            out.append(f"{t.name}[{', '.join(subs)}]")
        return out

    def int_atoms(self, uniform=False):
        rng = self.rng
        atoms = [str(rng.randint(0, 9)), f"-{rng.randint(1, 9)}", "cn"]
        atoms += self.uniform_int_atoms()
        if not uniform:
            atoms += [v for v, _ in self.loop_vars()]
            atoms += [n for n, kd in self.scalars.items() if kd == "int"]
            atoms += self.element_reads("int")
        return atoms

    def int_expr(self, depth=2, uniform=False):
        rng = self.rng
        atoms = self.int_atoms(uniform)
        if depth <= 0 or rng.random() < 0.3:
            a = rng.choice(atoms)
            if a.startswith("-"):
                self.tag("int.unary-minus")
            return a
        r = rng.random()
        a = self.int_expr(depth - 1, uniform)
        if r < 0.35:
            op = rng.choice(("+", "-", "*"))
            return f"({a} {op} {self.int_expr(depth - 1, uniform)})"
        if r < 0.6:
            op = rng.choice(("/", "%"))
            self.tag("int.div" if op == "/" else "int.mod")
            neg = rng.random() < 0.5
            if neg:
                a = f"({a} - {rng.randint(4, 20)})"
            if rng.random() < 0.6:
                d = rng.randint(1, 7) * rng.choice((1, -1))
                if d < 0:
                    neg = True
                div = str(d) if d > 0 else f"-{-d}"
            else:
                sign = rng.choice(("", "-"))
                neg = neg or sign == "-"
                div = f"{sign}(abs({self.int_expr(depth - 1, uniform)}) + 1)"
                self.tag("builtin.abs")
            if neg:
                self.tag("int.div-negative" if op == "/" else "int.mod-negative")
            return f"({a} {op} {div})"
        if r < 0.7:
            fn = rng.choice(("min", "max", "abs"))
            self.tag(f"builtin.{fn}")
            if fn == "abs":
                return f"abs({a})"
            return f"{fn}({a}, {self.int_expr(depth - 1, uniform)})"
        if r < 0.75:
            self.tag("builtin.cdiv")
            return f"cdiv({a}, {rng.randint(1, 5)})"
        if r < 0.82:
            self.tag("int.unary-minus")
            return f"-{a}" if not a.startswith("-") else f"-({a})"
        if r < 0.92:
            self.tag("select")
            return f"({self.bool_expr(depth - 1, uniform)} ? {a} : {self.int_expr(depth - 1, uniform)})"
        if not self.int_only and not self.may_inf:
            self.tag("builtin.int")
            return f"int({self.float_expr(depth - 1, uniform)})"
        return a

    def cmp(self, a, b):
        op = self.rng.choice(("<", "<=", ">", ">=", "==", "!="))
        self.tag(f"cmp.{op}")
        return f"{a} {op} {b}"

    def bool_expr(self, depth=2, uniform=False):
        rng = self.rng
        r = rng.random()
        reads = [] if uniform else self.element_reads("bool")
        if depth <= 0 or r < 0.4:
            if reads and rng.random() < 0.4:
                return rng.choice(reads)
            if rng.random() < 0.15:
                self.tag("const.bool")
                return rng.choice(("flag", "on", "true", "false"))
            if self.int_only or rng.random() < 0.7:
                return self.cmp(self.int_expr(1, uniform), self.int_expr(1, uniform))
            return self.cmp(self.float_expr(1, uniform), self.float_expr(1, uniform))
        if r < 0.6:
            op = rng.choice(("and", "or"))
            self.tag(f"bool.{op}")
            return f"({self.bool_expr(depth - 1, uniform)} {op} {self.bool_expr(depth - 1, uniform)})"
        if r < 0.72:
            self.tag("bool.not")
            return f"not ({self.bool_expr(depth - 1, uniform)})"
        if r < 0.85:
            self.tag("bool.eq")
            op = rng.choice(("==", "!="))
            return f"({self.bool_expr(depth - 1, uniform)}) {op} ({self.bool_expr(depth - 1, uniform)})"
        self.tag("select.bool")
        return (f"({self.bool_expr(depth - 1, uniform)} ? {self.bool_expr(depth - 1, uniform)} : "
                f"{self.bool_expr(depth - 1, uniform)})")

    def float_expr(self, depth=2, uniform=False):
        """A float expression; math builtins get bounded arguments (no inf or NaN from finite inputs), so the GPU and
        the CPU backend compare numbers."""
        rng = self.rng
        atoms = ["0.5", "2.0", "-1.25", "sc"]
        if not uniform:
            atoms += self.element_reads("float") * 2
            atoms += [n for n, kd in self.scalars.items() if kd == "float"]
        if depth <= 0 or rng.random() < 0.25:
            r = rng.random()
            if r < 0.1:
                self.tag("builtin.float")
                return f"float({rng.choice(self.int_atoms(uniform))})"
            if r < 0.15:
                c = rng.choice(("LOG2E", "LN2", "PI"))
                self.tag(f"const.{c}")
                return c
            return rng.choice(atoms)
        a = self.float_expr(depth - 1, uniform)
        r = rng.random()
        if r < 0.35:
            op = rng.choice(("+", "-", "*"))
            return f"({a} {op} {self.float_expr(depth - 1, uniform)})"
        if r < 0.45:
            b = self.float_expr(depth - 1, uniform)
            return f"({a} / ({b} * {b} + 1.0))"
        if r < 0.8:
            fn = rng.choice(FLOAT_FUNCS)
            self.tag(f"builtin.{fn}" if fn in ("abs", "min", "max") else f"math.{fn}")
            if fn in ("min", "max"):
                return f"{fn}({a}, {self.float_expr(depth - 1, uniform)})"
            if fn == "pow":
                return f"pow(abs({a}) + 1.0, {rng.choice(('0.5', '2', '-1.5'))})"
            bounded = {"exp2": f"exp2(tanh({a}))", "exp": f"exp(tanh({a}))", "sqrt": f"sqrt(abs({a}))",
                       "log2": f"log2(abs({a}) + 1.0)", "log": f"log(abs({a}) + 0.5)",
                       "rsqrt": f"rsqrt(abs({a}) + 1.0)", "log1p": f"log1p(abs({a}))",
                       "expm1": f"expm1(tanh({a}))"}
            return bounded.get(fn, f"{fn}({a})")
        if r < 0.9:
            self.tag("select")
            return f"({self.bool_expr(1, uniform)} ? {a} : {self.float_expr(depth - 1, uniform)})"
        if r < 0.95:
            self.tag("store.int-to-float")
            return f"({a} + {self.int_expr(1, uniform)})"
        return f"-{a}"

    def expr_of(self, dtype, depth=2, uniform=False):
        if dtype == "i32":
            return self.int_expr(depth, uniform)
        if dtype == "bool":
            return self.bool_expr(depth, uniform)
        return self.float_expr(depth, uniform)

    def literal(self, dtype):
        rng = self.rng
        if dtype == "i32":
            return str(rng.randint(-5, 9)) if rng.random() < 0.8 else "cn"
        if dtype == "bool":
            return rng.choice(("true", "false", "flag"))
        r = rng.random()
        if r < 0.08:
            self.tag("const.inf")
            self.may_inf = True
            return "-inf"
        if r < 0.14:
            self.tag("const.float")
            return "sc"
        return rng.choice(("0.0", "1.0", "-2.5", "0.125", "3", "0.5"))

    def order(self):
        if self.rng.random() < 0.45:
            o = self.rng.choice(ORDERS)
            self.tag(f"order={o}")
            return f", order={o}"
        return ""


# --- shapes ------------------------------------------------------------------------------------------------------
def shape_of(rng, k, rank=None, cap=None):
    rank = rank or rng.choice((1, 2, 2, 2, 3, 3, 4))
    cap = cap or (MAX_TILE_INT if k.int_only else MAX_TILE)
    while True:
        shape = [rng.choice(SIZES) for _ in range(rank)]
        if rank >= 3:
            shape = [min(s, 16) if i else s for i, s in enumerate(shape)]
        if prod(shape) <= cap:
            return shape


def tile_dtype(rng, k):
    if k.int_only:
        return rng.choice(("i32", "i32", "i32", "bool"))
    return rng.choice(("f32", "bf16", "f16", "f32", "i32", "bool") if rng.random() < 0.3 else FLOATS)


def space_of(rng, allow_local=True):
    return rng.choice(("fragment", "fragment", "shared", "local") if allow_local else ("fragment", "shared"))


# --- statements --------------------------------------------------------------------------------------------------
def gen_load(rng, k, shape=None, dtype=None, space=None):
    """A new tile, loaded from a new input tensor (conversions, pad, tails, index subscripts)."""
    shape = shape or shape_of(rng, k)
    dtype = dtype or tile_dtype(rng, k)
    if dtype == "i32":
        src_dt = "i32" if (k.int_only or rng.random() < 0.7) else rng.choice(FLOATS)
    elif dtype == "bool":
        src_dt = "bool"
    else:
        src_dt = rng.choice(FLOATS + ("i32",)) if rng.random() < 0.4 else dtype
    t = k.alloc(space or space_of(rng), dtype, shape)
    region = k.input_region(src_dt, shape)
    pad = ""
    if rng.random() < 0.15 and dtype != "bool":
        pad = f", pad={k.literal('f32') if dtype in FLOATS and src_dt in FLOATS else rng.randint(-3, 5)}"
        k.tag("copy.pad")
    if src_dt != dtype:
        k.tag("copy.convert")
        if "i32" in (src_dt, dtype):
            k.tag("copy.i32-float")
    k.emit(f"copy({region}, {t.name}{pad})")
    k.tag("copy.load")
    return t


def gen_store(rng, k, t):
    """Copy a tile to a new output tensor (the region block b owns)."""
    if t.dtype == "bool":
        dt = rng.choice(("bool", "i32")) if k.allow("copy.bool-to-i32") else "bool"
        if dt == "i32":
            k.tag("copy.bool-to-i32")
    elif t.dtype == "i32":
        dt = "i32" if (k.int_only or rng.random() < 0.7) else rng.choice(FLOATS)
    else:
        dt = rng.choice(FLOATS) if rng.random() < 0.8 or k.may_inf else "i32"
    if dt != t.dtype and t.dtype != "bool":
        k.tag("copy.convert")
        if "i32" in (dt, t.dtype):
            k.tag("copy.i32-float")
    region = k.output_region(dt, list(t.shape))
    if region is None:
        return False
    k.emit(f"copy({t.name}, {region})")
    k.tag("copy.store")
    return True


def gen_elementwise(rng, k, t):
    """A parallel loop over the whole tile t, writing t element-wise (and sometimes one lower-rank tile under a
    condition that pins the missing loop variables)."""
    vars_ = [k.fresh("i") for _ in t.shape]
    frame = Frame("parallel", vars_, t.shape)
    frame.written.add(t.name)
    # A conditional write target: a tile with a prefix of t's dims, written only where the other vars are pinned.
    cond_target = None
    if len(t.shape) >= 2 and rng.random() < 0.3:
        keep = rng.randint(1, len(t.shape) - 1)
        cond_target = k.alloc(rng.choice(("shared", "fragment", "local")), t.dtype, t.shape[:keep])
        k.emit(f"fill({cond_target.name}, {k.literal(t.dtype)})")
        k.tag("fill.tile")
    k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, t.shape))}):")
    k.tag("parallel")
    tag_context(k, "parallel")
    start = k.push(frame)
    if cond_target is not None:
        frame.written.add(cond_target.name)
    idx = ", ".join(vars_)
    n_stmts = rng.randint(1, 3)
    for n in range(n_stmts):
        r = rng.random() if n < n_stmts - 1 else 1.0   # the last one stores
        if r < 0.2:
            name = k.fresh("p")
            kind = {"i32": "int", "bool": "bool"}.get(t.dtype, "float")
            k.emit(f"{name} = {k.expr_of(t.dtype, 2)}")
            k.bind(name, kind)
            k.tag("scalar.in-parallel")
        elif r < 0.45:
            gen_if_chain(rng, k, lambda: elem_store(rng, k, t, idx), uniform=False)
            k.tag("if.in-parallel")
        else:
            elem_store(rng, k, t, idx)
    if cond_target is not None:
        n = len(cond_target.shape)
        pins = [f"{v} == {rng.randrange(e)}" for v, e in zip(vars_[n:], t.shape[n:])]
        k.emit(f"if {' and '.join(pins)}:")
        if len(pins) > 1:
            k.tag("bool.and")
        k.tag("cmp.==", "store.conditional-in-parallel", "if.in-parallel", "if")
        s2 = k.push(Frame("if"))
        k.emit(f"{cond_target.name}[{', '.join(vars_[:n])}] = {t.name}[{idx}]")
        k.pop(s2)
    k.pop(start)
    return cond_target


def elem_store(rng, k, t, idx):
    if t.dtype == "bool":
        op = "="
        k.tag("store.bool")
    elif t.dtype == "i32":
        op = rng.choice(("=", "=", "+=", "-=", "*="))
    else:
        op = rng.choice(("=", "=", "+=", "-=", "*="))
    k.tag(f"store.{op}")
    value = k.expr_of(t.dtype, 2)
    if t.dtype in FLOATS and rng.random() < 0.1:
        value = k.int_expr(1)
        k.tag("store.int-to-float")
    k.emit(f"{t.name}[{idx}] {op} {value}")


def tag_context(k, what):
    for f in k.frames:
        if f.kind in ("range", "pipelined") and what == "parallel":
            k.tag(f"parallel.in-{f.kind}")
        if f.kind == "if" and what == "parallel":
            k.tag("parallel.in-if")
        if f.kind in ("range", "pipelined") and what in ("range", "pipelined"):
            k.tag("range.nested")


def gen_if_chain(rng, k, body, uniform=True):
    """if / elif / else around calls of body(); uniform conditions at the top level (the whole block takes one
    branch), data-dependent ones in a parallel loop."""
    compile_time = uniform and rng.random() < 0.25
    if compile_time:
        cond = rng.choice(("flag", "on", "cn > 2", "not flag", "cn % 2 == 1", "sc < 1.0"))
        k.tag("if.compile-time", "const.bool" if "flag" in cond or "on" in cond else "const.int")
    else:
        cond = k.bool_expr(2, uniform=uniform)
    k.tag("if")
    k.emit(f"if {cond}:")
    s = k.push(Frame("if"))
    body()
    k.pop(s)
    r = rng.random()
    if r < 0.3:
        k.tag("if-elif-else")
        k.emit(f"elif {k.bool_expr(1, uniform=uniform)}:")
        s = k.push(Frame("if"))
        body()
        k.pop(s)
        k.emit("else:")
        s = k.push(Frame("if"))
        if rng.random() < 0.7:
            body()
        k.pop(s)
    elif r < 0.65:
        k.tag("if-else")
        k.emit("else:")
        s = k.push(Frame("if"))
        body()
        k.pop(s)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def gen_slices_in_parallel(rng, k):
    """The slice-per-iteration pattern: a parallel loop over chunks of a tile whose every iteration copies, fills or
    adds its own slice (kernel `slice_in_parallel` of the issue): copy(a[i, j * 4 :+ 4], C[b * bm + i, j * 4 :+ 4])."""
    cands = [t for t in k.readable_tiles(lambda d: True) if t.space in ("shared", "fragment")]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    chunks = [rng.choice(divisors(s)[-3:]) if rng.random() < 0.6 else 1 for s in t.shape]
    if all(c == 1 for c in chunks) and rng.random() < 0.6:
        d = rng.randrange(len(t.shape))
        chunks[d] = rng.choice(divisors(t.shape[d]))
    extents = [s // c for s, c in zip(t.shape, chunks)]
    vars_ = [k.fresh("i") for _ in t.shape]

    def sub(v, c, base=""):
        if c == 1:
            return f"{base}{v}"
        return f"{base}{v} * {c} :+ {c}"

    tile_subs = [sub(v, c) for v, c in zip(vars_, chunks)]
    own = f"{t.name}[{', '.join(tile_subs)}]"
    slice_shape = [c for c in chunks if c != 1] or [1]
    prefix = k.owner_prefix()
    g_ok = prefix is not None and len(prefix) + len(t.shape) <= 4

    def global_slice(dtype):
        dims = [p[0] for p in prefix] + ["rows"] + [str(s) for s in t.shape[1:]]
        if rng.random() < 0.2 and len(t.shape) > 1 and t.shape[-1] > 1:
            dims[-1] = str(t.shape[-1] - rng.randint(1, t.shape[-1] - 1))
            k.tag("slice.tail")
        subs = [p[1] for p in prefix] + [sub(vars_[0], chunks[0], f"b * {t.shape[0]} + ")] + \
            [sub(v, c) for v, c in zip(vars_[1:], chunks[1:])]
        if all(c == 1 for c in chunks):
            # One element per iteration, still a region (`:+ 1`): an atomic with indices only would be the element
            # form, which is not masked past the end of the tensor.
            subs[len(prefix)] += " :+ 1"
        return f"{k.param(dtype, dims)}[{', '.join(subs)}]"

    ops = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.35 and g_ok:
            dt = t.dtype if t.dtype in ("i32", "bool") else rng.choice(FLOATS)
            ops.append(("copy-out", f"copy({own}, {global_slice(dt)})"))
        elif r < 0.55 and g_ok and t.dtype != "bool":
            fn = rng.choice(("atomic_add", "atomic_max", "atomic_min"))
            dt = "i32" if t.dtype == "i32" else rng.choice(FLOATS)
            ops.append((fn, f"{fn}({global_slice(dt)}, {own}{k.order()})"))
            tag_atomic_dtype(k, dt)
        elif r < 0.7 and g_ok:
            dt = t.dtype if t.dtype in ("i32", "bool") else rng.choice(FLOATS)
            ops.append(("fill-out", f"fill({global_slice(dt)}, {k.literal(dt)})"))
        elif r < 0.85:
            # Into a second tile of the same shape, slice by slice (it was filled before the loop).
            ops.append(("copy-tile", None))
        else:
            ops.append(("fill-own", f"fill({own}, {k.literal(t.dtype)})"))
    second = None
    if any(o[0] == "copy-tile" for o in ops):
        second = k.alloc(rng.choice(("shared", "fragment")), t.dtype, t.shape)
        k.emit(f"fill({second.name}, {k.literal(t.dtype)})")
        k.tag("fill.tile")
    load = None
    if rng.random() < 0.25:
        # Each iteration loads its own slice of a tile from global memory first.
        load = k.alloc(rng.choice(("shared", "fragment")), t.dtype, t.shape)
        k.emit(f"fill({load.name}, {k.literal(t.dtype)})")
        k.tag("fill.tile")
    k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, extents))}):")
    k.tag("parallel")
    if len(extents) >= 5:
        k.tag("parallel.5+extents")
    tag_context(k, "parallel")
    start = k.push(Frame("parallel", vars_, extents))
    if load is not None:
        lsubs = [sub(vars_[0], chunks[0], f"b * {t.shape[0]} + ")] + [sub(v, c) for v, c in zip(vars_[1:], chunks[1:])]
        dims = ["rows"] + [str(s) for s in t.shape[1:]]
        src_dt = t.dtype if t.dtype in ("i32", "bool") else rng.choice(FLOATS)
        k.emit(f"copy({k.param(src_dt, dims)}[{', '.join(lsubs)}], {load.name}[{', '.join(tile_subs)}])")
        k.tag("copy.load.in-parallel", "copy.region.in-parallel")
    for kind, text in ops:
        if kind == "copy-tile":
            k.emit(f"copy({own}, {second.name}[{', '.join(tile_subs)}])")
            k.tag("copy.region.in-parallel")
        elif kind == "fill-own":
            k.emit(text)
            k.tag("fill.slice.in-parallel", "fill.slice")
        else:
            k.emit(text)
            if kind == "copy-out":
                k.tag("copy.region.in-parallel", "copy.store")
            elif kind == "fill-out":
                k.tag("fill.slice.in-parallel", "fill.global")
            else:
                k.tag(f"{kind}.region.in-parallel", f"{kind}.region")
    if slice_shape == [1]:
        k.tag("copy.element.in-parallel")
    k.pop(start)
    for extra in (second, load):
        if extra is not None and rng.random() < 0.7:
            gen_store(rng, k, extra)


def tag_atomic_dtype(k, dt):
    if dt == "i32":
        k.tag("atomic.i32")
    elif dt in ("bf16", "f16"):
        k.tag(f"atomic.{dt}")


def gen_element_atomics(rng, k):
    """Element-form atomics in a parallel loop over a tile: into a global tensor (injective in the loop variables, or
    colliding), or into a shared accumulator that is then stored."""
    cands = k.readable_tiles(lambda d: d != "bool")
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    fn = rng.choice(("atomic_add", "atomic_max", "atomic_min"))
    vars_ = [k.fresh("i") for _ in t.shape]
    is_int = t.dtype == "i32"
    value = f"{t.name}[{', '.join(vars_)}]"
    r = rng.random()
    acc = None
    guard_rows = False
    prefix = k.owner_prefix()
    if r < 0.35:
        n = rng.choice((1, 4, 8, t.shape[-1]))
        acc = k.alloc("shared", "i32" if is_int else rng.choice(FLOATS), [n])
        k.emit(f"fill({acc.name}, {k.literal(acc.dtype)})")
        k.tag("fill.tile", "atomic.into-shared")
        dest = f"{acc.name}[{vars_[-1]} % {n}]"
        k.tag("int.mod")
        tag_atomic_dtype(k, acc.dtype)
    elif prefix is not None and len(prefix) + len(t.shape) <= 4 and r < 0.7:
        dt = "i32" if is_int else rng.choice(FLOATS)
        dims = [p[0] for p in prefix] + ["rows"] + [str(s) for s in t.shape[1:]]
        subs = [p[1] for p in prefix] + [f"b * {t.shape[0]} + {vars_[0]}"] + vars_[1:]
        dest = f"{k.param(dt, dims)}[{', '.join(subs)}]"
        tag_atomic_dtype(k, dt)
        guard_rows = True
    else:
        # Colliding: many iterations and every block into a few elements.
        dt = "i32" if is_int else rng.choice(FLOATS)
        n = rng.choice((1, 3, 8))
        if is_int and rng.random() < 0.5:
            idx = f"abs({value}) % {n}"
            k.tag("builtin.abs", "int.mod")
        else:
            idx = f"({' + '.join(vars_)}) % {n}"
            k.tag("int.mod")
        dest = f"{k.param(dt, [str(n)])}[{idx}]"
        k.tag("atomic.colliding-elements")
        tag_atomic_dtype(k, dt)
    k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, t.shape))}):")
    k.tag("parallel", f"{fn}.element.in-parallel", f"{fn}.element")
    tag_context(k, "parallel")
    frame = Frame("parallel", vars_, t.shape)
    if acc is not None:
        frame.written.add(acc.name)   # updated by other iterations: not read in this loop
    start = k.push(frame)
    if rng.random() < 0.3 and not dest.split("[")[1].startswith("abs("):
        value = k.expr_of("i32" if is_int else "f32", 1)
    if guard_rows:
        # Element-form atomics are not masked (only regions are): stay inside the tensor's rows.
        k.emit(f"if b * {t.shape[0]} + {vars_[0]} < rows:")
        k.tag("if", "if.in-parallel", "cmp.<")
        s = k.push(Frame("if"))
        k.emit(f"{fn}({dest}, {value}{k.order()})")
        k.pop(s)
    elif rng.random() < 0.25:
        cond = k.bool_expr(1)
        k.emit(f"if {cond}:")
        k.tag("if", "if.in-parallel")
        s = k.push(Frame("if"))
        k.emit(f"{fn}({dest}, {value}{k.order()})")
        k.pop(s)
    else:
        k.emit(f"{fn}({dest}, {value}{k.order()})")
    k.pop(start)
    if acc is not None:
        gen_store(rng, k, acc)


def gen_scalar_atomic(rng, k):
    """Element-form atomics in scalar code (once per block)."""
    fn = rng.choice(("atomic_add", "atomic_max", "atomic_min"))
    dt = "i32" if (k.int_only or rng.random() < 0.4) else rng.choice(FLOATS)
    n = rng.choice((1, 4, 8))
    idx = rng.choice((f"b % {n}", "0", f"cn % {n}"))
    value = k.int_expr(1, uniform=True) if dt == "i32" else k.float_expr(1, uniform=True)
    k.emit(f"{fn}({k.param(dt, [str(n)])}[{idx}], {value}{k.order()})")
    k.tag(f"{fn}.element", "atomic.colliding-elements")
    tag_atomic_dtype(k, dt)


def gen_region_atomic(rng, k):
    cands = k.readable_tiles(lambda d: d != "bool")
    if not cands:
        return
    t = rng.choice(cands)
    fn = rng.choice(("atomic_add", "atomic_max", "atomic_min"))
    dt = "i32" if t.dtype == "i32" else rng.choice(FLOATS)
    if rng.random() < 0.3 and len(t.shape) <= 2:
        # The whole tensor: every block adds into it.
        dest = k.param(dt, [str(s) for s in t.shape])
        k.tag("atomic.whole-tensor")
    elif rng.random() < 0.2:
        # Into a shared tile of the block, then stored.
        acc = k.alloc("shared", dt, t.shape)
        k.emit(f"fill({acc.name}, {k.literal(dt)})")
        k.tag("fill.tile", "atomic.into-shared")
        k.emit(f"{fn}({acc.name}, {t.name}{k.order()})")
        k.tag(f"{fn}.region")
        tag_atomic_dtype(k, dt)
        gen_store(rng, k, acc)
        return
    else:
        dest = k.output_region(dt, list(t.shape))
        if dest is None:
            return
    k.emit(f"{fn}({dest}, {t.name}{k.order()})")
    k.tag(f"{fn}.region")
    tag_atomic_dtype(k, dt)


def gen_copy_tile(rng, k):
    cands = k.readable_tiles(lambda d: True)
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    if t.dtype == "bool":
        ndt = "bool"
    elif t.dtype == "i32":
        ndt = "i32" if (k.int_only or rng.random() < 0.7) else rng.choice(FLOATS)
    else:
        ndt = rng.choice(FLOATS) if rng.random() < 0.85 or k.may_inf else "i32"
    nsh = list(t.shape)
    if rng.random() < 0.3 and len(nsh) < 4:
        nsh.insert(rng.randrange(len(nsh) + 1), 1)
        k.tag("copy.unit-dims")
    elif rng.random() < 0.3 and 1 in nsh and len(nsh) > 1:
        nsh.remove(1)
        k.tag("copy.unit-dims")
    nt = k.alloc(space_of(rng), ndt, nsh)
    if ndt != t.dtype:
        k.tag("copy.convert")
        if "i32" in (ndt, t.dtype):
            k.tag("copy.i32-float")
    k.emit(f"copy({t.name}, {nt.name})")
    k.tag("copy.tile-to-tile")


def sub_block(rng, shape):
    """A sub-block of a tile of `shape`: per dim an index (dim dropped) or a slice from a constant offset."""
    subs, sub_shape = [], []
    for d in shape:
        if rng.random() < 0.25 or d == 1:
            subs.append(str(rng.randrange(d)))
        else:
            n = rng.randint(1, d)
            subs.append(f"{rng.randrange(d - n + 1)} :+ {n}")
            sub_shape.append(n)
    if not sub_shape:
        subs[-1] = f"{subs[-1]} :+ 1"
        sub_shape = [1]
    return subs, sub_shape


def gen_tile_slices(rng, k):
    """Copies of a sub-block of a tile into a new tile, or of a tile into a sub-block of a bigger one; fills of a
    slice."""
    cands = [t for t in k.readable_tiles(lambda d: True) if t.space != "local"]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    r = rng.random()
    if r < 0.4:
        subs, sub_shape = sub_block(rng, t.shape)
        if rng.random() < 0.25 and ":+" in subs[0] and t.shape[0] > 1:
            # A dynamic start that keeps the slice inside the tile.
            n = int(subs[0].split(":+")[1])
            subs[0] = f"b % {t.shape[0] - n + 1} :+ {n}"
            k.tag("slice.dynamic-start")
        nt = k.alloc(space_of(rng), t.dtype, sub_shape)
        k.emit(f"copy({t.name}[{', '.join(subs)}], {nt.name})")
        k.tag("copy.slice-of-tile")
    elif r < 0.7:
        big = [s + rng.choice((0, 1, 3)) for s in t.shape]
        if prod(big) > MAX_TILE:
            return
        nt = k.alloc(rng.choice(("shared", "fragment")), t.dtype, big)
        k.emit(f"fill({nt.name}, {k.literal(t.dtype)})")
        k.tag("fill.tile")
        subs = [f"{b - s} :+ {s}" if b > s else ":" for b, s in zip(big, t.shape)]
        k.emit(f"copy({t.name}, {nt.name}[{', '.join(subs)}])")
        k.tag("copy.into-slice")
    else:
        subs, _ = sub_block(rng, t.shape)
        value = k.literal(t.dtype) if rng.random() < 0.6 else k.expr_of(t.dtype, 1, uniform=True)
        if not value.lstrip("-").replace(".", "").isdigit():
            k.tag("fill.dynamic-value")
        k.emit(f"fill({t.name}[{', '.join(subs)}], {value})")
        k.tag("fill.slice")


def gen_fill(rng, k):
    cands = k.readable_tiles(lambda d: True)
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    if rng.random() < 0.4:
        value = k.expr_of(t.dtype, 1, uniform=True)
        k.tag("fill.dynamic-value")
    else:
        value = k.literal(t.dtype)
    k.emit(f"fill({t.name}, {value})")
    k.tag("fill.tile")


def gen_fill_global(rng, k):
    shape = shape_of(rng, k, rank=rng.choice((1, 2, 3)))
    dt = rng.choice(("i32", "bool")) if k.int_only else rng.choice(FLOATS + ("i32",))
    region = k.output_region(dt, shape)
    if region is None:
        return
    k.emit(f"fill({region}, {k.literal(dt)})")
    k.tag("fill.global")


def gen_reduce(rng, k):
    cands = [t for t in k.readable_tiles(lambda d: d != "bool")]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    kind = rng.choice(("reduce_sum", "reduce_max", "reduce_min"))
    k.tag(kind)
    if t.dtype == "i32":
        k.tag("reduce.i32")
    src, shape = t.name, list(t.shape)
    if t.space == "shared" and rng.random() < 0.3:
        subs, sub_shape = sub_block(rng, t.shape)
        shape = [d for d in sub_shape if d != 1]   # a region's type drops its extents of 1
        if not shape:
            return
        src = f"{t.name}[{', '.join(subs)}]"
        k.tag("reduce.slice-source")
    dim = rng.randrange(len(shape))
    k.tag(f"reduce.dim{dim}")
    tshape = [d for i, d in enumerate(shape) if i != dim]
    dim_text = str(dim)
    if rng.random() < 0.3:
        dim_text = str(dim - len(shape))
        k.tag("reduce.negative-dim")
    clear = ""
    if not tshape:
        n = rng.choice((1, 1, 4))
        tgt = k.alloc(rng.choice(("fragment", "shared")), t.dtype, [n])
        k.emit(f"fill({tgt.name}, {k.literal(t.dtype)})")
        k.tag("fill.tile", "reduce.to-rank0")
        target = f"{tgt.name}[{rng.randrange(n)}]"
    else:
        tgt = k.alloc(space_of(rng), t.dtype, tshape)
        target = tgt.name
        if rng.random() < 0.35:
            k.emit(f"fill({tgt.name}, {k.literal(t.dtype)})")
            k.tag("fill.tile", "reduce.clear=false")
            clear = ", clear=false"
    if rng.random() < 0.5 and dim == len(shape) - 1 and not dim_text.startswith("-"):
        k.emit(f"{kind}({src}, {target}{clear})")
    else:
        k.emit(f"{kind}({src}, {target}, dim={dim_text}{clear})")


def gen_reduce_in_parallel(rng, k):
    """A reduction per iteration of a parallel loop (the GPU lowering refuses it; the language accepts it)."""
    cands = [t for t in k.readable_tiles(lambda d: d != "bool") if t.space != "local" and len(t.shape) == 2
             and t.shape[1] > 1]   # t[i, :] of a [n, 1] tile is a 0-d region: nothing to reduce
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    r = k.alloc("shared", t.dtype, [t.shape[0]])
    v = k.fresh("i")
    k.emit(f"for {v} in parallel({t.shape[0]}):")
    s = k.push(Frame("parallel", [v], [t.shape[0]]))
    k.emit(f"reduce_sum({t.name}[{v}, :], {r.name}[{v}])")
    k.pop(s)
    k.tag("reduce.in-parallel", "reduce_sum", "parallel")


def gen_gemm(rng, k):
    m, n, kk = (rng.choice(GEMM_SIZES) for _ in range(3))
    if m * n > MAX_TILE * 4:
        return
    dt = rng.choice(("bf16", "bf16", "f16", "f32"))
    k.tag(f"gemm.{dt}")
    ta, tb = rng.random() < 0.3, rng.random() < 0.5
    a_shape = [kk, m] if ta else [m, kk]
    b_shape = [n, kk] if tb else [kk, n]
    a = k.alloc("shared", dt, a_shape)
    k.emit(f"copy({k.input_region(dt, a_shape, dynamic_ok=False)}, {a.name})")
    b = k.alloc("shared", dt, b_shape)
    gb = k.param(dt, [str(b_shape[0])] + [str(s) for s in b_shape[1:]])
    k.emit(f"copy({gb}, {b.name})")
    c = k.alloc("fragment", "f32", [m, n])
    k.tag("copy.load")
    an = a.name
    if not ta and rng.random() < 0.3:
        ra = k.alloc("fragment", dt, a_shape)
        k.emit(f"copy({a.name}, {ra.name})")
        k.tag("gemm.register-a", "copy.tile-to-tile")
        an = ra.name
    args = [an, b.name, c.name]
    if ta:
        args.append("transpose_a=true")
        k.tag("gemm.transpose_a")
    if tb:
        args.append("transpose_b=true")
        k.tag("gemm.transpose_b")
    if rng.random() < 0.5:
        args.append("clear=true")
        k.tag("gemm.clear")
    else:
        k.emit(f"fill({c.name}, 0.0)")
        k.tag("fill.tile")
    if rng.random() < 0.3:
        args.append(f"policy={rng.choice(('square', 'full_row', 'full_col'))}")
        k.tag("gemm.policy")
    k.emit(f"gemm({', '.join(args)})")


def gen_pipelined_gemm(rng, k):
    """The tiled-gemm pattern: a pipelined loop over K streaming both operands through shared memory into a
    register accumulator (multi-buffering, prefetch, wgmma or mma.sync), sometimes with the A tile rescaled through
    a fragment first (register A) and a dynamic lower bound."""
    m, n, kk = rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64))
    dt = rng.choice(("bf16", "f16"))
    tb = rng.random() < 0.5
    k.tag(f"gemm.{dt}", "gemm.pipelined", "pipelined")
    ga = k.param(dt, ["rows", "depth"])
    gb = k.param(dt, [str(n), "depth"] if tb else ["depth", str(n)])
    a = k.alloc("shared", dt, [m, kk])
    b = k.alloc("shared", dt, [n, kk] if tb else [kk, n])
    c = k.alloc("fragment", "f32", [m, n])
    k.emit(f"fill({c.name}, 0.0)")
    var = k.fresh("kt")
    lower = rng.choice(("0", "0", "b % 2"))
    if lower != "0":
        k.tag("pipelined.dynamic-lower")
    stages = rng.choice((1, 2, 3, 4))
    if stages > 1:
        k.tag("pipelined.stages>1")
    k.emit(f"for {var} in pipelined({lower}, cdiv(depth, {kk}), stages={stages}):")
    s = k.push(Frame("pipelined", [var], [None], ordinal=var, count=None))
    k.emit(f"copy({ga}[b * {m} :+ {m}, {var} * {kk} :+ {kk}], {a.name})")
    if tb:
        k.emit(f"copy({gb}[0 :+ {n}, {var} * {kk} :+ {kk}], {b.name})")
        k.tag("gemm.transpose_b")
    else:
        k.emit(f"copy({gb}[{var} * {kk} :+ {kk}, 0 :+ {n}], {b.name})")
    operand = a.name
    if rng.random() < 0.3:
        op_t = k.alloc("fragment", dt, [m, kk])
        k.emit(f"copy({a.name}, {op_t.name})")
        k.emit(f"for i, j in parallel({m}, {kk}):")
        k.emit(f"    {op_t.name}[i, j] = {op_t.name}[i, j] * 0.5")
        k.tag("gemm.register-a", "parallel", "parallel.in-pipelined")
        operand = op_t.name
    args = [operand, b.name, c.name] + (["transpose_b=true"] if tb else [])
    if rng.random() < 0.3:
        args.append(f"policy={rng.choice(('square', 'full_row', 'full_col'))}")
        k.tag("gemm.policy")
    k.emit(f"gemm({', '.join(args)})")
    k.pop(s)
    out = k.output_region("f32", [m, n])
    if out:
        k.emit(f"copy({c.name}, {out})")


def gen_attention_like(rng, k):
    """The flash-attention forward pattern at random sizes: S = Q·Kᵀ per key block in a pipelined loop, a running
    row maximum (reduce_max, clear=false) over the gemm's accumulator layout, exp2 in a parallel loop, row sums,
    P converted to 16 bits and O += P·V with P in registers."""
    m, n, d = rng.choice((16, 32, 64, 128)), rng.choice((16, 32, 64)), rng.choice((16, 32, 64))
    dt = rng.choice(("bf16", "f16"))
    k.tag("gemm.attention", f"gemm.{dt}", "pipelined", "reduce_max", "reduce_sum", "reduce.clear=false",
          "math.exp2", "gemm.register-a", "gemm.transpose_b", "gemm.clear")
    q = k.param(dt, ["rows", str(d)])
    kk, v = k.param(dt, ["keys", str(d)]), k.param(dt, ["keys", str(d)])
    q_s, k_s, v_s = k.alloc("shared", dt, [m, d]), k.alloc("shared", dt, [n, d]), k.alloc("shared", dt, [n, d])
    s_f, p_f = k.alloc("fragment", "f32", [m, n]), k.alloc("fragment", dt, [m, n])
    mx, sm = k.alloc("fragment", "f32", [m]), k.alloc("fragment", "f32", [m])
    acc = k.alloc("fragment", "f32", [m, d])
    k.emit(f"copy({q}[b * {m} :+ {m}, :], {q_s.name})")
    k.emit(f"fill({mx.name}, -inf)")
    k.may_inf = True
    k.tag("const.inf")
    k.emit(f"fill({sm.name}, 0.0)")
    k.emit(f"fill({acc.name}, 0.0)")
    var = k.fresh("j")
    k.emit(f"for {var} in pipelined(0, cdiv(keys, {n}), stages={rng.choice((1, 2, 3))}):")
    s = k.push(Frame("pipelined", [var], [None]))
    k.emit(f"copy({kk}[{var} * {n} :+ {n}, :], {k_s.name})")
    k.emit(f"copy({v}[{var} * {n} :+ {n}, :], {v_s.name})")
    k.emit(f"gemm({q_s.name}, {k_s.name}, {s_f.name}, transpose_b=true, clear=true)")
    k.emit(f"for i, c in parallel({m}, {n}):")
    k.emit(f"    {s_f.name}[i, c] = {var} * {n} + c < keys ? {s_f.name}[i, c] * 0.125 : -inf")
    k.emit(f"reduce_max({s_f.name}, {mx.name}, dim=1, clear=false)")
    k.emit(f"for i, c in parallel({m}, {n}):")
    k.emit(f"    {s_f.name}[i, c] = exp2({s_f.name}[i, c] - {mx.name}[i])")
    k.emit(f"reduce_sum({s_f.name}, {sm.name}, dim=1, clear=false)")
    k.emit(f"copy({s_f.name}, {p_f.name})")
    k.emit(f"gemm({p_f.name}, {v_s.name}, {acc.name}{rng.choice(('', ', policy=full_row'))})")
    k.pop(s)
    k.emit(f"for i, c in parallel({m}, {d}):")
    k.emit(f"    {acc.name}[i, c] = {acc.name}[i, c] / ({sm.name}[i] + 1.0)")
    out = k.output_region("f32", [m, d])
    if out:
        k.emit(f"copy({acc.name}, {out})")


def gen_seq_loop(rng, k, depth):
    """A range or pipelined loop: streams a tile per iteration into an accumulator, and runs further statements
    (global writes get the iteration's own leading index)."""
    kind = rng.choice(("range", "range", "pipelined"))
    var = k.fresh("n")
    ordinal, count = var, None
    if kind == "pipelined":
        lo, hi = rng.choice((("0", 3), ("b % 2", 3), ("1", 4), ("0", "cdiv(rows, 16)")))
        stages = rng.choice((1, 2, 3))
        if lo == "b % 2":
            k.tag("pipelined.dynamic-lower")
        if stages > 1:
            k.tag("pipelined.stages>1")
        header = f"pipelined({lo}, {hi}, stages={stages})"
        count = str(hi)
        if lo == "1":
            ordinal = f"{var} - 1"
            count = str(hi - 1)
        k.tag("pipelined")
    else:
        r = rng.random()
        k.tag("range-loop")
        if r < 0.3:
            e = rng.randint(1, 4)
            header, count = f"range({e})", str(e)
        elif r < 0.5:
            lo = rng.randint(-2, 2)
            hi = lo + rng.randint(1, 3)
            header, count = f"range({lo}, {hi})", str(hi - lo)
            ordinal = f"{var} - {lo}" if lo > 0 else (f"{var} + {-lo}" if lo < 0 else var)
            k.tag("range.lower-upper")
        elif r < 0.7:
            lo, step = rng.randint(0, 2), rng.randint(2, 3)
            hi = lo + rng.randint(1, 7)
            header = f"range({lo}, {hi}, {step})"
            count = str(-(-(hi - lo) // step))
            ordinal = f"({var} - {lo}) / {step}"
            k.tag("range.lower-upper", "range.step", "int.div")
        elif r < 0.85:
            header, count = f"range(b % 2, 3)", "3"
            k.tag("range.dynamic-bound", "range.lower-upper")
        elif r < 0.93:
            header, count = f"range(0, 5, 1 + b % 2)", "5"
            k.tag("range.dynamic-bound", "range.step", "range.lower-upper")
        else:
            header, count = "range(cdiv(rows, 16))", "cdiv(rows, 16)"
            k.tag("range.dynamic-bound")
    tag_context(k, kind)
    # An accumulator streamed through the loop.
    acc = None
    if rng.random() < 0.6:
        shape = shape_of(rng, k, rank=rng.choice((1, 2, 2, 3)))
        dt = "i32" if k.int_only else rng.choice(("f32", "f32", "i32"))
        acc = k.alloc(space_of(rng), dt, shape)
        k.emit(f"fill({acc.name}, {k.literal(dt)})")
        k.tag("fill.tile")
    k.emit(f"for {var} in {header}:")
    s = k.push(Frame(kind, [var], [None], ordinal=ordinal, count=count))
    if acc is not None:
        buf = k.alloc(rng.choice(("shared", "fragment")), acc.dtype, acc.shape)
        if rng.random() < 0.5 and count and count.isdigit():
            # X[n, rows, ...]: the iteration picks its slab.
            dims = [count] + ["rows"] + [str(d) for d in acc.shape[1:]]
            if len(dims) <= 4:
                subs = [ordinal, f"b * {acc.shape[0]} :+ {acc.shape[0]}"] + [":"] * (len(acc.shape) - 1)
                k.emit(f"copy({k.param(acc.dtype, dims)}[{', '.join(subs)}], {buf.name})")
            else:
                k.emit(f"copy({k.input_region(acc.dtype, acc.shape)}, {buf.name})")
        else:
            # Rows n * S0 :+ S0 (reads past the end of `rows` are zeros).
            dims = ["rows"] + [str(d) for d in acc.shape[1:]]
            subs = [f"{var} * {acc.shape[0]} :+ {acc.shape[0]}"] + [":"] * (len(acc.shape) - 1)
            k.emit(f"copy({k.param(acc.dtype, dims)}[{', '.join(subs)}], {buf.name})")
            k.tag("slice.dynamic-start")
        k.tag("copy.load")
        vars_ = [k.fresh("i") for _ in acc.shape]
        k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, acc.shape))}):")
        k.tag("parallel", "store.+=")
        tag_context(k, "parallel")
        k.emit(f"    {acc.name}[{', '.join(vars_)}] += {buf.name}[{', '.join(vars_)}]")
    if depth == 0 and rng.random() < 0.25:
        gen_seq_loop(rng, k, depth + 1)   # a loop nest
    gen_statements(rng, k, depth + 1, rng.randint(0, 2))
    k.pop(s)
    if acc is not None:
        gen_store(rng, k, acc)


def gen_range_in_parallel(rng, k):
    """A sequential loop in each iteration of a parallel loop: r[i] += t[i, n] over n."""
    cands = [t for t in k.readable_tiles(lambda d: d != "bool") if len(t.shape) == 2 and t.shape[1] <= 16]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    r = k.alloc(space_of(rng), t.dtype, [t.shape[0]])
    k.emit(f"fill({r.name}, {k.literal(t.dtype)})")
    i, n = k.fresh("i"), k.fresh("n")
    k.emit(f"for {i} in parallel({t.shape[0]}):")
    if rng.random() < 0.7:
        k.emit(f"    for {n} in range({t.shape[1]}):")
        k.tag("range-loop", "range.in-parallel")
    else:
        k.emit(f"    for {n} in pipelined(0, {t.shape[1]}, stages={rng.choice((1, 2))}):")
        k.tag("pipelined", "pipelined.in-parallel")
    op = "+=" if rng.random() < 0.7 else "="
    k.emit(f"        {r.name}[{i}] {op} {t.name}[{i}, {n}]")
    k.tag("parallel", "fill.tile", f"store.{op}")
    gen_store(rng, k, r)


def split_extent(rng, n, parts):
    """n as a product of `parts` factors (some may be 1), largest first."""
    fs = []
    for _ in range(parts - 1):
        d = rng.choice([d for d in divisors(n) if d < n] or [1])
        fs.append(d)
        n //= d
    return fs + [n]


def gen_parallel_many(rng, k):
    """A parallel loop of 5 to 8 extents over a shared or local tile of rank 1-2, each tile index a mixed-radix
    combination of loop variables: t[a * 8 + b * 4 + c, d * 2 + e]."""
    cands = [t for t in k.readable_tiles(lambda d: d != "bool") if t.space in ("shared", "local")
             and len(t.shape) <= 2 and prod(t.shape) >= 4]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    total = rng.randint(5, 8)
    per_dim = [total - total // 2, total // 2] if len(t.shape) == 2 else [total]
    vars_, extents, idx = [], [], []
    for s, parts in zip(t.shape, per_dim):
        fs = split_extent(rng, s, parts)
        vs = [k.fresh("i") for _ in fs]
        terms, stride = [], s
        for v, f in zip(vs, fs):
            stride //= f
            terms.append(f"{v} * {stride}" if stride != 1 else v)
        vars_ += vs
        extents += fs
        idx.append(" + ".join(terms))
    frame = Frame("parallel", vars_, extents)
    frame.written.add(t.name)
    k.emit(f"for {', '.join(vars_)} in parallel({', '.join(map(str, extents))}):")
    k.tag("parallel", "parallel.5+extents")
    tag_context(k, "parallel")
    s = k.push(frame)
    at = f"{t.name}[{', '.join(idx)}]"
    if t.dtype == "i32":
        k.emit(f"{at} = {at} * 3 - ({' + '.join(vars_[:3])})")
    else:
        k.emit(f"{at} = {at} * 0.5 + float({vars_[0]})")
        k.tag("builtin.float")
    k.tag("store.=")
    k.pop(s)
    if rng.random() < 0.6:
        gen_store(rng, k, t)


def gen_scalar(rng, k):
    """A scalar binding: compile-time (folded) or dynamic, used by later statements."""
    name = k.fresh("v")
    r = rng.random()
    if r < 0.3:
        k.emit(f"{name} = {rng.choice(('cn * 2 - 7', '(cn - 10) / 4', '-(cn % 2)', 'max(cn, 5) - 9'))}")
        k.tag("scalar.compile-time")
        k.bind(name, "int")
    elif r < 0.75 or k.int_only:
        k.emit(f"{name} = {k.int_expr(2, uniform=True)}")
        k.tag("scalar.assign")
        k.bind(name, "int")
    else:
        k.emit(f"{name} = {k.float_expr(2, uniform=True)}")
        k.tag("scalar.assign")
        k.bind(name, "float")


def gen_scalar_store(rng, k):
    """Element stores from scalar code (outside loops) into a local tile."""
    cands = [t for t in k.readable_tiles(lambda d: True) if t.space == "local"]
    if not cands or k.in_parallel():
        return
    t = rng.choice(cands)
    idx = ", ".join(str(rng.randrange(s)) for s in t.shape)
    op = "=" if t.dtype == "bool" else rng.choice(("=", "+=", "-=", "*="))
    k.emit(f"{t.name}[{idx}] {op} {k.expr_of(t.dtype, 2, uniform=True)}")
    k.tag("store.scalar-code", f"store.{op}")


def gen_if(rng, k, depth):
    gen_if_chain(rng, k, lambda: gen_statements(rng, k, depth + 1, rng.randint(1, 2)), uniform=True)


STATEMENTS = (
    # (weight, generator, needs depth argument)
    (10, lambda rng, k, d: gen_elementwise_any(rng, k), False),
    (4, lambda rng, k, d: gen_fill(rng, k), False),
    (6, lambda rng, k, d: gen_copy_tile(rng, k), False),
    (7, lambda rng, k, d: gen_tile_slices(rng, k), False),
    (8, lambda rng, k, d: gen_reduce(rng, k), False),
    (5, lambda rng, k, d: gen_gemm(rng, k) if not k.int_only else None, False),
    (6, lambda rng, k, d: gen_store_any(rng, k), False),
    (8, lambda rng, k, d: gen_slices_in_parallel(rng, k), False),
    (6, lambda rng, k, d: gen_element_atomics(rng, k), False),
    (3, lambda rng, k, d: gen_scalar_atomic(rng, k), False),
    (5, lambda rng, k, d: gen_region_atomic(rng, k), False),
    (3, lambda rng, k, d: gen_fill_global(rng, k), False),
    (4, lambda rng, k, d: gen_load(rng, k), False),
    (6, lambda rng, k, d: gen_seq_loop(rng, k, d) if d < 2 else None, True),
    (5, lambda rng, k, d: gen_if(rng, k, d) if d < 2 else None, True),
    (3, lambda rng, k, d: gen_scalar(rng, k), False),
    (3, lambda rng, k, d: gen_scalar_store(rng, k), False),
    (2, lambda rng, k, d: gen_range_in_parallel(rng, k), False),
    (2, lambda rng, k, d: gen_pipelined_gemm(rng, k) if not k.int_only and d == 0 else None, False),
    (0.5, lambda rng, k, d: gen_reduce_in_parallel(rng, k), False),
    (1.5, lambda rng, k, d: gen_parallel_many(rng, k), False),
    (0.7, lambda rng, k, d: gen_attention_like(rng, k) if not k.int_only and d == 0 else None, False),
)


def gen_elementwise_any(rng, k):
    cands = k.readable_tiles(lambda d: True)
    if cands and not k.in_parallel():
        t = gen_elementwise(rng, k, rng.choice(cands))
        if t is not None and rng.random() < 0.6:
            gen_store(rng, k, t)


def gen_store_any(rng, k):
    cands = k.readable_tiles(lambda d: True)
    if cands:
        gen_store(rng, k, rng.choice(cands))


def gen_statements(rng, k, depth, count):
    total = sum(w for w, _, _ in STATEMENTS)
    for _ in range(count):
        x = rng.random() * total
        for w, fn, _ in STATEMENTS:
            x -= w
            if x <= 0:
                fn(rng, k, depth)
                break


def header(rng, k, threads):
    consts = [f"flag: bool = {rng.choice(('true', 'false'))}", f"cn: int = {rng.randint(3, 5)}",
              f"sc: float = {rng.choice(('0.5', '1.5', '-0.25'))}", "on: bool = (cn > 3)"]
    params = [f"{n}: {d}[{', '.join(dims)}]" for n, d, dims in k.params]
    grid = ["cdiv(rows, 16)"] + [ext for _, ext in k.grid_extra]
    as_ = ["b"] + [v for v, _ in k.grid_extra]
    launch = f"grid({', '.join(grid)}) threads({threads}) as ({', '.join(as_)}):"
    r = rng.random()
    if r < 0.15:
        k.tag("syntax.multiline-header")
        head = f"kernel {k.name}<\n    " + ",\n    ".join(consts) + ">(\n    " + ",\n    ".join(params) + ")"
        return [head, "  " + launch]
    if r < 0.3:
        k.tag("syntax.one-line-header")
        return [f"kernel {k.name}<{', '.join(consts)}>({', '.join(params)}) {launch}"]
    return [f"kernel {k.name}<{', '.join(consts)}>({', '.join(params)})", "  " + launch]


def continuation(rng, k, lines):
    """Some long statements split over lines: a backslash, or a break inside parentheses; and a comment."""
    out = []
    for line in lines:
        if rng.random() < 0.03 and line.rstrip().endswith(")") and ", " in line and not line.lstrip().startswith(
                ("for ", "if ", "elif ", "kernel")):
            i = line.index(", ")
            out.append(line[:i + 1])
            out.append(" " * 12 + line[i + 2:])
            k.tag("syntax.line-continuation")
        elif rng.random() < 0.02 and " = " in line and not line.lstrip().startswith(("for ", "if ", "kernel")):
            lhs, rhs = line.split(" = ", 1)
            out.append(f"{lhs} = \\")
            out.append(" " * 8 + rhs)
            k.tag("syntax.line-continuation")
        else:
            out.append(line)
        if rng.random() < 0.02:
            out.append(" " * rng.randint(0, 9) + "# a comment line: any indentation")
            k.tag("syntax.comment")
    return out


def generate(rng, index, gemm_loops=False):
    """One random kernel named k{index}."""
    int_only = not gemm_loops and rng.random() < 0.3
    k = Kernel(rng, f"k{index}", int_only)
    if int_only:
        k.tag("kernel.int-only")
    threads = rng.choice((32, 64, 128, 128, 256))
    r = rng.random()
    if r < 0.1:
        k.grid_extra = [("g1", "2")]
        k.tag("grid.2d")
    elif r < 0.14:
        k.grid_extra = [("g1", "2"), ("g2", "3")]
        k.tag("grid.3d")
    k.tag("const.int", "const.float", "const.bool")
    if gemm_loops:
        (gen_attention_like if rng.random() < 0.5 else gen_pipelined_gemm)(rng, k)
    for _ in range(rng.randint(1, 2)):
        gen_load(rng, k)
    gen_statements(rng, k, 0, rng.randint(2, 6))
    # Something must reach global memory, or the kernel is trivially dead.
    for t in reversed(list(k.tiles.values())):
        if gen_store(rng, k, t):
            break
    else:
        # Every tile has too many dims for the grid's extra axes: store a small one.
        t = k.alloc("fragment", "i32", [4])
        k.emit(f"fill({t.name}, {k.int_expr(1, uniform=True)})")
        k.tag("fill.tile", "fill.dynamic-value")
        assert gen_store(rng, k, t)
    strategy = rng.choice(STRATEGIES)
    deterministic = strategy == "split" and rng.random() < 0.15
    k.tag(f"atomics={strategy}")
    if deterministic:
        k.tag("deterministic")
    body = continuation(rng, k, k.lines)
    src = "\n".join(header(rng, k, threads) + body) + "\n"
    dims = {d: NAMED_DIMS[d] for d in NAMED_DIMS if d in k.dims_used or any(
        d in dim for _, _, dims in k.params for dim in dims)}
    return Generated(k.name, src, dims, strategy, deterministic, k.tags, int_only)


if __name__ == "__main__":
    import sys
    g = generate(random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1), 0)
    print(g.source)
    print(sorted(g.tags))
