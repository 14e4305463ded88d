"""An independent model of the .tile language (docs/language.md) for tools/kernel-fuzz: a small lexer, parser and
interpreter in Python that runs a kernel on NumPy arrays, block after block, following the language reference and
none of tilec's code.

kernel_fuzz.py uses it on the integer kernels the generator makes (i32 and bool tensors and tiles): their results
are exact, so the CPU backend's outputs must equal the model's bit for bit. That is a check of the front end and
the CPU backend (and of the atomics legalization the CPU backend runs) against the language's written semantics:
signed `/` and `%` truncating toward zero, `cdiv`, comparisons, `?:`, if/elif/else, 32-bit wrap of i32 stores,
masked tails of regions (reads give 0 or `pad`, writes dropped), unit dims dropped between operands, reductions
along any dim with and without `clear`, and element and region atomics. Floats are modelled only as far as
compile-time constants need them: `run` raises Unsupported for float tensors, float tiles and gemm.

The model is also a validity check of the generator: it raises ModelError for a read of an element no statement
wrote, an element index outside its tile, an integer division by zero, or a parallel loop whose result depends on
the order of its iterations (each parallel loop runs forward and is compared with a run in reverse order when
`check_order` is set).

  python3 tilemodel.py K.tile KERNEL --dim rows=37 ...      prints the kernel's parse tree and runs it on zeros
"""
import math
import re

import numpy as np


class Unsupported(Exception):
    """The kernel uses something the model does not model (floats, gemm)."""


class ModelError(Exception):
    """The kernel is not well defined (or the model is wrong): an undefined read, an index out of range, ..."""


# --- lexer -----------------------------------------------------------------------------------------------------------
TOKEN = re.compile(r"""
    (?P<ws>[ \t]+) |
    (?P<comment>\#[^\n]*) |
    (?P<float>(\d+\.\d*|\.\d+)([eE][+-]?\d+)?|\d+[eE][+-]?\d+) |
    (?P<int>\d+) |
    (?P<name>[A-Za-z_][A-Za-z_0-9]*) |
    (?P<op>:\+|\+=|-=|\*=|<=|>=|==|!=|[-+*/%<>=()\[\],:?])
""", re.VERBOSE)


def lex(src):
    """Tokens (kind, value, line) with NEWLINE / INDENT / DEDENT as in §2.3."""
    toks = []
    indents = [0]
    depth = 0          # ( and [
    angle = 0          # the constant list of a kernel header
    lines = src.replace("\r", "").split("\n")
    i = 0
    pending_join = False
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        i += 1
        if not pending_join and depth == 0 and angle == 0:
            stripped = line.lstrip(" ")
            if stripped == "" or stripped.startswith("#"):
                continue
            width = len(line) - len(stripped)
            if width > indents[-1]:
                indents.append(width)
                toks.append(("INDENT", None, lineno))
            else:
                while width < indents[-1]:
                    indents.pop()
                    toks.append(("DEDENT", None, lineno))
                if width != indents[-1]:
                    raise ModelError(f"line {lineno}: unindent does not match")
        pending_join = False
        pos = 0
        text = line
        if text.endswith("\\"):
            text = text[:-1]
            pending_join = True
        while pos < len(text):
            m = TOKEN.match(text, pos)
            if not m:
                raise ModelError(f"line {lineno}: unexpected {text[pos]!r}")
            pos = m.end()
            kind = m.lastgroup
            v = m.group(kind)
            if kind in ("ws", "comment"):
                continue
            if kind == "op":
                if v in "([":
                    depth += 1
                elif v in ")]":
                    depth -= 1
                elif v == "<" and depth == 0 and len(toks) >= 2 and toks[-2][:2] == ("name", "kernel"):
                    angle = 1
                elif v == ">" and angle and depth == 0:
                    angle = 0
            toks.append((kind, v, lineno))
        if not pending_join and depth == 0 and angle == 0 and toks and toks[-1][0] not in ("NEWLINE", "INDENT",
                                                                                           "DEDENT"):
            toks.append(("NEWLINE", None, lineno))
    while len(indents) > 1:
        indents.pop()
        toks.append(("DEDENT", None, len(lines)))
    toks.append(("EOF", None, len(lines)))
    return toks


# --- parser ----------------------------------------------------------------------------------------------------------
class Parser:
    def __init__(self, src):
        self.toks = lex(src)
        self.i = 0

    def peek(self, k=0):
        return self.toks[self.i + k]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def at(self, kind, value=None):
        t = self.peek()
        return t[0] == kind and (value is None or t[1] == value)

    def accept(self, kind, value=None):
        if self.at(kind, value):
            return self.next()
        return None

    def expect(self, kind, value=None):
        t = self.next()
        if t[0] != kind or (value is not None and t[1] != value):
            raise ModelError(f"line {t[2]}: expected {value or kind}, got {t[1] or t[0]}")
        return t

    def op(self, v):
        return self.accept("op", v)

    def file(self):
        kernels = {}
        while not self.at("EOF"):
            if self.accept("NEWLINE"):
                continue
            k = self.kernel()
            kernels[k["name"]] = k
        return kernels

    def kernel(self):
        self.expect("name", "kernel")
        name = self.expect("name")[1]
        consts = []
        if self.op("<"):
            while not self.op(">"):
                cname = self.expect("name")[1]
                self.expect("op", ":")
                ctype = self.expect("name")[1]
                default = None
                if self.op("="):
                    default = self.additive()
                consts.append((cname, ctype, default))
                self.op(",")
        self.expect("op", "(")
        params = []
        while not self.op(")"):
            pname = self.expect("name")[1]
            self.expect("op", ":")
            dtype = self.expect("name")[1]
            self.expect("op", "[")
            dims = [self.expr()]
            while self.op(","):
                dims.append(self.expr())
            self.expect("op", "]")
            params.append((pname, dtype, dims))
            self.op(",")
        nested = False
        if self.accept("NEWLINE"):
            self.expect("INDENT")
            nested = True
        self.expect("name", "grid")
        grid = self.call_args()[0]
        self.expect("name", "threads")
        threads = self.call_args()[0]
        self.expect("name", "as")
        self.expect("op", "(")
        block_vars = [self.expect("name")[1]]
        while self.op(","):
            block_vars.append(self.expect("name")[1])
        self.expect("op", ")")
        body = self.block()
        if nested:
            self.expect("DEDENT")
        return {"name": name, "consts": consts, "params": params, "grid": grid, "threads": threads,
                "block_vars": block_vars, "body": body}

    def block(self):
        self.expect("op", ":")
        self.expect("NEWLINE")
        self.expect("INDENT")
        stmts = []
        while not self.accept("DEDENT"):
            if self.accept("NEWLINE"):
                continue
            stmts.append(self.statement())
        return stmts

    def statement(self):
        t = self.peek()
        if t[:2] == ("name", "for"):
            self.next()
            vars_ = [self.expect("name")[1]]
            while self.op(","):
                vars_.append(self.expect("name")[1])
            self.expect("name", "in")
            it = self.expect("name")[1]
            args, kwargs = self.call_args()
            return ("for", vars_, it, args, kwargs, self.block())
        if t[:2] == ("name", "if"):
            self.next()
            arms = [(self.expr(), self.block())]
            other = None
            while True:
                if self.accept("name", "elif"):
                    arms.append((self.expr(), self.block()))
                elif self.accept("name", "else"):
                    other = self.block()
                    break
                else:
                    break
            return ("if", arms, other)
        if t[:2] == ("name", "pass"):
            self.next()
            self.accept("NEWLINE")
            return ("pass",)
        lhs = self.expr()
        for op in ("=", "+=", "-=", "*="):
            if self.op(op):
                rhs = self.expr()
                self.accept("NEWLINE")
                if op == "=" and lhs[0] == "name":
                    return ("assign", lhs[1], rhs)
                return ("store", lhs, op, rhs)
        self.accept("NEWLINE")
        return ("callstmt", lhs)

    def call_args(self):
        self.expect("op", "(")
        args, kwargs = [], {}
        while not self.op(")"):
            if self.at("name") and self.peek(1)[:2] == ("op", "="):
                k = self.next()[1]
                self.next()
                kwargs[k] = self.expr()
            else:
                args.append(self.expr())
            self.op(",")
        return args, kwargs

    def expr(self):
        c = self.or_expr()
        if self.op("?"):
            a = self.expr()
            self.expect("op", ":")
            b = self.expr()
            return ("sel", c, a, b)
        return c

    def or_expr(self):
        e = self.and_expr()
        while self.accept("name", "or"):
            e = ("or", e, self.and_expr())
        return e

    def and_expr(self):
        e = self.not_expr()
        while self.accept("name", "and"):
            e = ("and", e, self.not_expr())
        return e

    def not_expr(self):
        if self.accept("name", "not"):
            return ("not", self.not_expr())
        return self.comparison()

    def comparison(self):
        a = self.additive()
        t = self.peek()
        if t[0] == "op" and t[1] in ("<", "<=", ">", ">=", "==", "!="):
            self.next()
            return ("cmp", t[1], a, self.additive())
        return a

    def additive(self):
        e = self.term()
        while self.peek()[0] == "op" and self.peek()[1] in ("+", "-"):
            e = ("bin", self.next()[1], e, self.term())
        return e

    def term(self):
        e = self.unary()
        while self.peek()[0] == "op" and self.peek()[1] in ("*", "/", "%"):
            e = ("bin", self.next()[1], e, self.unary())
        return e

    def unary(self):
        if self.op("-"):
            return ("neg", self.unary())
        if self.op("+"):
            return self.unary()
        return self.primary()

    def primary(self):
        t = self.next()
        if t[0] == "int":
            return ("lit", int(t[1]))
        if t[0] == "float":
            return ("lit", float(t[1]))
        if t[0] == "op" and t[1] == "(":
            e = self.expr()
            self.expect("op", ")")
            return e
        if t[0] == "name":
            if t[1] in ("true", "false"):
                return ("lit", t[1] == "true")
            if t[1] in ("shared", "fragment", "local") and self.at("op", "<"):
                self.next()
                dtype = self.expect("name")[1]
                self.expect("op", ">")
                self.expect("op", "[")
                dims = [self.expr()]
                while self.op(","):
                    dims.append(self.expr())
                self.expect("op", "]")
                return ("alloc", t[1], dtype, dims)
            if self.at("op", "("):
                args, kwargs = self.call_args()
                return ("call", t[1], args, kwargs)
            if self.at("op", "["):
                self.next()
                subs = [self.subscript()]
                while self.op(","):
                    subs.append(self.subscript())
                self.expect("op", "]")
                return ("index", t[1], subs)
            return ("name", t[1])
        raise ModelError(f"line {t[2]}: unexpected {t[1] or t[0]}")

    def subscript(self):
        if self.at("op", ":") and self.peek(1)[0] == "op" and self.peek(1)[1] in (",", "]"):
            self.next()
            return ("colon",)
        e = self.expr()
        if self.op(":+"):
            return ("slice", e, self.expr())
        return ("idx", e)


def parse(src):
    return Parser(src).file()


# --- values ----------------------------------------------------------------------------------------------------------
I64 = 1 << 64


def wrap64(v):
    v &= I64 - 1
    return v - I64 if v >= 1 << 63 else v


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def is_bool(v):
    return isinstance(v, (bool, np.bool_))


def is_int(v):
    return isinstance(v, (int, np.integer)) and not is_bool(v)


def tdiv(a, b):
    if b == 0:
        raise ModelError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def trem(a, b):
    return a - b * tdiv(a, b)


NP_DTYPE = {"i32": np.int32, "bool": np.bool_, "f32": np.float32, "bf16": np.float32, "f16": np.float32}
BUILTIN_CONSTS = {"LOG2E": 1.4426950408889634, "LN2": 0.6931471805599453, "PI": math.pi, "inf": math.inf,
                  "SM": 90, "WGMMA": True}


class Buffer:
    """A tensor or a tile: an array, its dtype and (tiles) which elements were ever written."""

    def __init__(self, name, dtype, array, space, defined=None):
        self.name, self.dtype, self.a, self.space = name, dtype, array, space
        self.defined = defined

    @property
    def shape(self):
        return self.a.shape


def convert(v, dtype):
    """A scalar (Python int, bool or float) as an element of dtype, as §7.3 and §9.1 convert it."""
    if dtype == "i32":
        if is_bool(v):
            return int(bool(v))
        if is_int(v):
            return wrap32(int(v))
        if math.isnan(v) or math.isinf(v):
            raise ModelError("float to i32 of inf or NaN")
        return wrap32(int(v))
    if dtype == "bool":
        if not is_bool(v):
            raise ModelError(f"bool store of {v!r}")
        return bool(v)
    raise Unsupported(f"float elements ({dtype})")


class Region:
    """A window of a buffer: per dim an offset and a length (or an index, dim dropped), with pad for reads."""

    def __init__(self, buf, offsets, lens, dropped, pad=0):
        self.buf, self.offsets, self.lens, self.dropped, self.pad = buf, offsets, lens, dropped, pad

    def type_shape(self):
        """The region's type: the window with every extent of 1 removed (§8); a whole buffer keeps its shape."""
        if self.dropped is None:
            return list(self.lens)
        return [n for n in self.lens if n != 1]

    def coords(self):
        return np.indices(self.lens).reshape(len(self.lens), -1) + np.array(self.offsets).reshape(-1, 1)

    def inside(self, coords):
        ok = np.ones(coords.shape[1], dtype=bool)
        for d, n in enumerate(self.buf.shape):
            ok &= (coords[d] >= 0) & (coords[d] < n)
        return ok

    def read(self):
        """The window's elements in row-major order (pad outside the buffer)."""
        c = self.coords()
        ok = self.inside(c)
        out = np.full(c.shape[1], self.pad, dtype=self.buf.a.dtype)
        idx = tuple(c[:, ok])
        if self.buf.defined is not None and not self.buf.defined[idx].all():
            raise ModelError(f"read of an element of '{self.buf.name}' that nothing wrote")
        out[ok] = self.buf.a[idx]
        return out

    def write(self, flat):
        c = self.coords()
        ok = self.inside(c)
        idx = tuple(c[:, ok])
        self.buf.a[idx] = flat[ok]
        if self.buf.defined is not None:
            self.buf.defined[idx] = True

    def size(self):
        return int(np.prod(self.lens)) if self.lens else 1


class Interp:
    def __init__(self, kernel, tensors, dims, check_order=False):
        self.k = kernel
        self.tensors = tensors          # name -> Buffer
        self.dims = dims                # named dims
        self.check_order = check_order
        self.consts = {}
        self.steps = 0

    # -- expressions --
    def ev(self, e, env):
        kind = e[0]
        if kind == "lit":
            return e[1]
        if kind == "name":
            n = e[1]
            if n in env:
                return env[n]
            if n in self.consts:
                return self.consts[n]
            if n in self.dims:
                return self.dims[n]
            if n in BUILTIN_CONSTS:
                return BUILTIN_CONSTS[n]
            raise ModelError(f"unknown name {n}")
        if kind == "bin":
            a, b = self.ev(e[2], env), self.ev(e[3], env)
            op = e[1]
            if is_int(a) and is_int(b):
                if op == "+":
                    return wrap64(a + b)
                if op == "-":
                    return wrap64(a - b)
                if op == "*":
                    return wrap64(a * b)
                if op == "/":
                    return wrap64(tdiv(a, b))
                return wrap64(trem(a, b))
            if is_bool(a) or is_bool(b):
                raise ModelError("arithmetic on a bool")
            a, b = float(a), float(b)
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            if op == "/":
                return a / b if b else (math.copysign(math.inf, a) * math.copysign(1, b) if a else math.nan)
            return math.fmod(a, b) if b else math.nan
        if kind == "neg":
            a = self.ev(e[1], env)
            return wrap64(-a) if is_int(a) else -a
        if kind == "cmp":
            a, b = self.ev(e[2], env), self.ev(e[3], env)
            if is_bool(a) != is_bool(b):
                raise ModelError("comparison of a bool and a number")
            op = e[1]
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
        if kind == "and":
            a, b = self.ev(e[1], env), self.ev(e[2], env)   # no short circuit (§6.4); both must be bools
            return bool(a) and bool(b)
        if kind == "or":
            a, b = self.ev(e[1], env), self.ev(e[2], env)
            return bool(a) or bool(b)
        if kind == "not":
            return not self.ev(e[1], env)
        if kind == "sel":
            c = self.ev(e[1], env)
            a, b = self.ev(e[2], env), self.ev(e[3], env)
            if not is_bool(a) and not is_bool(b) and (isinstance(a, float) or isinstance(b, float)):
                a, b = float(a), float(b)
            return a if c else b
        if kind == "index":
            buf = self.buffer(e[1], env)
            if buf.space == "global":
                raise ModelError("tensors are not read element by element")
            idx = []
            for s, n in zip(e[2], buf.shape):
                if s[0] != "idx":
                    raise ModelError("an element read takes indices only")
                v = self.ev(s[1], env)
                if not 0 <= v < n:
                    raise ModelError(f"index {v} out of range [0, {n}) in a read of '{buf.name}'")
                idx.append(v)
            idx = tuple(idx)
            if buf.defined is not None and not buf.defined[idx]:
                raise ModelError(f"read of element {idx} of '{buf.name}' that nothing wrote")
            v = buf.a[idx]
            if buf.dtype == "i32":
                return int(v)
            if buf.dtype == "bool":
                return bool(v)
            raise Unsupported("float element read")
        if kind == "call":
            return self.builtin(e[1], [self.ev(a, env) for a in e[2]])
        raise ModelError(f"cannot evaluate {kind}")

    def builtin(self, fn, args):
        if fn == "min":
            return min(args) if all(is_int(a) for a in args) else float(min(args))
        if fn == "max":
            return max(args) if all(is_int(a) for a in args) else float(max(args))
        if fn == "abs":
            return wrap64(abs(args[0])) if is_int(args[0]) else abs(args[0])
        if fn == "cdiv":
            a, b = args
            if b == 0:
                raise ModelError("cdiv by zero")
            return wrap64(-((-a) // b))
        if fn == "int":
            return int(args[0]) if not is_int(args[0]) else args[0]
        if fn == "float":
            return float(args[0])
        f = {"exp2": lambda x: 2.0 ** x, "log2": math.log2, "exp": math.exp, "log": math.log, "sqrt": math.sqrt,
             "rsqrt": lambda x: 1 / math.sqrt(x), "tanh": math.tanh, "erf": math.erf, "sin": math.sin,
             "cos": math.cos, "floor": math.floor, "ceil": math.ceil, "log1p": math.log1p, "expm1": math.expm1,
             "sigmoid": lambda x: 1 / (1 + math.exp(-x)), "pow": lambda a, b: float(a) ** b}.get(fn)
        if f is None:
            raise ModelError(f"unknown function {fn}")
        return float(f(*[float(a) for a in args]))

    def buffer(self, name, env):
        b = env.get(name)
        if isinstance(b, Buffer):
            return b
        if name in self.tensors:
            return self.tensors[name]
        raise ModelError(f"'{name}' is not a tensor or a tile")

    def operand(self, e, env, pad=0):
        """A tile operand (§8) as a Region."""
        if e[0] == "name":
            buf = self.buffer(e[1], env)
            return Region(buf, [0] * len(buf.shape), list(buf.shape), None, pad)
        if e[0] != "index":
            raise ModelError("a tile operand is a name or a subscripted name")
        buf = self.buffer(e[1], env)
        if len(e[2]) != len(buf.shape):
            raise ModelError(f"'{buf.name}' has {len(buf.shape)} dimensions but {len(e[2])} subscripts")
        offsets, lens, dropped = [], [], []
        for d, (s, n) in enumerate(zip(e[2], buf.shape)):
            if s[0] == "colon":
                offsets.append(0)
                lens.append(n)
            elif s[0] == "idx":
                offsets.append(self.ev(s[1], env))
                lens.append(1)
                dropped.append(d)
            else:
                offsets.append(self.ev(s[1], env))
                ln = self.ev(s[2], env)
                if not is_int(ln) or ln <= 0:
                    raise ModelError("slice length must be a positive int")
                lens.append(ln)
        return Region(buf, offsets, lens, dropped, pad)

    # -- statements --
    def run_block(self, stmts, env):
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s, env):
        self.steps += 1
        kind = s[0]
        if kind == "pass":
            return
        if kind == "assign":
            name, rhs = s[1], s[2]
            if rhs[0] == "alloc":
                _, space, dtype, dims = rhs
                shape = [self.ev(d, env) for d in dims]
                if dtype not in ("i32", "bool"):
                    raise Unsupported(f"{dtype} tiles")
                a = np.zeros(shape, dtype=NP_DTYPE[dtype])
                env[name] = Buffer(name, dtype, a, space, np.zeros(shape, dtype=bool))
            else:
                env[name] = self.ev(rhs, env)
            return
        if kind == "store":
            target, op, rhs = s[1], s[2], s[3]
            buf = self.buffer(target[1], env)
            idx = []
            for sub, n in zip(target[2], buf.shape):
                v = self.ev(sub[1], env)
                if not 0 <= v < n:
                    raise ModelError(f"index {v} out of range [0, {n}) in a store to '{buf.name}'")
                idx.append(v)
            idx = tuple(idx)
            v = self.ev(rhs, env)
            if op != "=":
                if buf.defined is not None and not buf.defined[idx]:
                    raise ModelError(f"'{op}' on element {idx} of '{buf.name}' that nothing wrote")
                old = int(buf.a[idx]) if buf.dtype == "i32" else buf.a[idx]
                v = {"+=": lambda a, b: a + b, "-=": lambda a, b: a - b, "*=": lambda a, b: a * b}[op](old, v)
            buf.a[idx] = convert(v, buf.dtype)
            if buf.defined is not None:
                buf.defined[idx] = True
            return
        if kind == "callstmt":
            self.call(s[1], env)
            return
        if kind == "for":
            self.loop(s, env)
            return
        if kind == "if":
            for cond, body in s[1]:
                c = self.ev(cond, env)
                if not is_bool(c):
                    raise ModelError("condition must be a bool")
                if c:
                    self.run_block(body, dict(env))
                    return
            if s[2] is not None:
                self.run_block(s[2], dict(env))
            return
        raise ModelError(f"unknown statement {kind}")

    def loop(self, s, env):
        _, vars_, it, args, kwargs, body = s
        vals = [self.ev(a, env) for a in args]
        if it == "parallel":
            iters = list(np.ndindex(*vals))
            if self.check_order and len(iters) > 1:
                self.parallel_both_ways(vars_, iters, body, env)
                return
            for ix in iters:
                inner = dict(env)
                inner.update(zip(vars_, (int(v) for v in ix)))
                self.run_block(body, inner)
            return
        if it == "pipelined":
            lo, hi = vals
            rng = range(lo, hi)
        elif it == "range":
            if len(vals) == 1:
                rng = range(vals[0])
            elif len(vals) == 2:
                rng = range(vals[0], vals[1])
            else:
                if vals[2] <= 0:
                    raise ModelError("range step must be positive")
                rng = range(vals[0], vals[1], vals[2])
        else:
            raise ModelError(f"unknown iterator {it}")
        for n in rng:
            inner = dict(env)
            inner[vars_[0]] = n
            self.run_block(body, inner)

    def parallel_both_ways(self, vars_, iters, body, env):
        """Run the iterations forward and in reverse from the same state: a loop whose iterations are independent
        ends in the same state both ways."""
        bufs = {id(b): b for b in list(self.tensors.values()) + [v for v in env.values() if isinstance(v, Buffer)]}
        saved = {k: (b.a.copy(), None if b.defined is None else b.defined.copy()) for k, b in bufs.items()}
        for ix in reversed(iters):
            inner = dict(env)
            inner.update(zip(vars_, (int(v) for v in ix)))
            self.run_block(body, inner)
        reverse = {k: b.a.copy() for k, b in bufs.items()}
        for k, b in bufs.items():
            b.a[...] = saved[k][0]
            if b.defined is not None:
                b.defined[...] = saved[k][1]
        for ix in iters:
            inner = dict(env)
            inner.update(zip(vars_, (int(v) for v in ix)))
            self.run_block(body, inner)
        for k, b in bufs.items():
            if not np.array_equal(b.a, reverse[k]):
                raise ModelError(f"a parallel loop over {vars_} gives other values in '{b.name}' when its iterations "
                                 f"run in reverse order")

    def call(self, e, env):
        if e[0] != "call":
            raise ModelError("a statement is an assignment, a call or a loop")
        fn, args, kw = e[1], e[2], e[3]
        if fn == "copy":
            pad = self.ev(kw["pad"], env) if "pad" in kw else 0
            src = self.operand(args[0], env, pad)
            dst = self.operand(args[1], env)
            self.same_shape(src, dst)
            vals = src.read()
            if src.buf.dtype != dst.buf.dtype:
                if dst.buf.dtype in ("i32", "bool") and src.buf.dtype in ("i32", "bool"):
                    if dst.buf.dtype == "bool":
                        raise ModelError("copy of i32 into bool")
                    vals = vals.astype(np.int32)
                else:
                    raise Unsupported("float conversions")
            dst.write(vals.astype(dst.buf.a.dtype))
            return
        if fn == "fill":
            dst = self.operand(args[0], env)
            v = convert(self.ev(args[1], env), dst.buf.dtype)
            dst.write(np.full(dst.size(), v, dtype=dst.buf.a.dtype))
            return
        if fn in ("reduce_sum", "reduce_max", "reduce_min"):
            src = self.operand(args[0], env)
            dst = self.operand(args[1], env)
            dim = self.ev(kw["dim"], env) if "dim" in kw else -1
            clear = self.ev(kw["clear"], env) if "clear" in kw else True
            shape = src.type_shape()
            if dim < 0:
                dim += len(shape)
            if not 0 <= dim < len(shape):
                raise ModelError("reduction dim out of range")
            if src.buf.dtype != "i32" or dst.buf.dtype != "i32":
                raise Unsupported("reductions of non-i32 tiles")
            vals = src.read().astype(np.int64).reshape(shape)
            if fn == "reduce_sum":
                r = vals.sum(axis=dim)
            elif fn == "reduce_max":
                r = vals.max(axis=dim)
            else:
                r = vals.min(axis=dim)
            r = r.reshape(-1)
            if dst.size() != r.size:
                raise ModelError("reduction target has the wrong number of elements")
            if not clear:
                old = dst.read().astype(np.int64)
                r = {"reduce_sum": old + r, "reduce_max": np.maximum(old, r), "reduce_min": np.minimum(old, r)}[fn]
            dst.write(np.array([wrap32(int(x)) for x in r], dtype=np.int32))
            return
        if fn in ("atomic_add", "atomic_max", "atomic_min"):
            dest_e, val_e = args[0], args[1]
            element = dest_e[0] == "index" and all(sub[0] == "idx" for sub in dest_e[2])
            dst = self.operand(dest_e, env)
            if dst.buf.dtype != "i32":
                raise Unsupported("float atomics")
            if element:
                for off, n in zip(dst.offsets, dst.buf.shape):
                    if not 0 <= off < n:
                        raise ModelError(f"element-form atomic at index {off} outside [0, {n}) of '{dst.buf.name}'")
            # Element form: the destination has indices only and the value is a scalar (an element read is one);
            # otherwise both are tile operands (§9.5).
            names_buffer = val_e[0] in ("name", "index") and (isinstance(env.get(val_e[1]), Buffer)
                                                              or val_e[1] in self.tensors)
            val_is_tile = names_buffer and (not element or val_e[0] == "name" or any(
                sub[0] != "idx" for sub in val_e[2]))
            if val_is_tile:
                val = self.operand(val_e, env)
                self.same_shape(val, dst)
                if val.buf.dtype != "i32":
                    raise ModelError("atomic of a non-integer tile into i32")
                vals = val.read()
            else:
                if not element:
                    raise ModelError("region-form atomic with a scalar value")
                v = self.ev(val_e, env)
                if not is_int(v):
                    raise ModelError("an i32 atomic takes an int")
                vals = np.array([v], dtype=np.int64)
            vals = vals.astype(np.int64)
            old = dst.read().astype(np.int64)
            if fn == "atomic_add":
                new = old + vals
            elif fn == "atomic_max":
                new = np.maximum(old, vals)
            else:
                new = np.minimum(old, vals)
            dst.write(np.array([wrap32(int(x)) for x in new], dtype=np.int32))
            return
        if fn == "gemm":
            raise Unsupported("gemm")
        raise ModelError(f"unknown statement call {fn}")

    @staticmethod
    def same_shape(a, b):
        sa = [n for n in a.type_shape() if n != 1]
        sb = [n for n in b.type_shape() if n != 1]
        if sa != sb:
            raise ModelError(f"operand shapes differ: {a.type_shape()} vs {b.type_shape()}")

    # -- kernel --
    def run(self):
        k = self.k
        for name, ctype, default in k["consts"]:
            if default is None:
                raise ModelError(f"constant {name} has no default")
            v = self.ev(default, {})
            if ctype == "float":
                v = float(v)
            self.consts[name] = v
        grid = [self.ev(g, {}) for g in k["grid"]]
        for bix in np.ndindex(*grid):
            env = dict(zip(k["block_vars"], (int(v) for v in bix)))
            self.run_block(k["body"], env)


def affine_dim(e, dims, consts):
    """A tensor dimension's extent (§4.2): `/` and `%` round toward negative infinity."""
    kind = e[0]
    if kind == "lit":
        return e[1]
    if kind == "name":
        return dims[e[1]] if e[1] in dims else consts[e[1]]
    if kind == "neg":
        return -affine_dim(e[1], dims, consts)
    if kind == "bin":
        a, b = affine_dim(e[2], dims, consts), affine_dim(e[3], dims, consts)
        return {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0, "%": a % b if b else 0}[e[1]]
    if kind == "call" and e[1] == "cdiv":
        a, b = (affine_dim(x, dims, consts) for x in e[2])
        return -((-a) // b)
    raise ModelError(f"unsupported dimension expression {kind}")


def param_shapes(kernel, dims):
    """Each tensor parameter's (name, dtype, shape) for the named dims `dims`."""
    it = Interp(kernel, {}, dims)
    consts = {}
    for name, ctype, default in kernel["consts"]:
        it.consts = consts
        consts[name] = it.ev(default, {})
    return [(n, dt, [affine_dim(d, dims, consts) for d in ds]) for n, dt, ds in kernel["params"]]


def run_kernel(src, name, inputs, dims, check_order=False):
    """Runs kernel `name` of `src` on copies of `inputs` (name -> array); returns name -> array after the run."""
    kernels = parse(src)
    if name not in kernels:
        raise ModelError(f"no kernel {name}")
    k = kernels[name]
    tensors = {}
    for pname, dtype, shape in param_shapes(k, dims):
        if dtype not in ("i32", "bool"):
            raise Unsupported(f"{dtype} tensors")
        a = np.array(inputs[pname], dtype=NP_DTYPE[dtype]).copy()
        if list(a.shape) != list(shape):
            raise ModelError(f"input {pname} has shape {a.shape}, the kernel wants {shape}")
        tensors[pname] = Buffer(pname, dtype, a, "global")
    Interp(k, tensors, dims, check_order).run()
    return {n: b.a for n, b in tensors.items()}


if __name__ == "__main__":
    import pprint
    import sys
    src = open(sys.argv[1]).read()
    kernels = parse(src)
    dims = dict(a.split("=") for a in sys.argv[3:] if "=" in a)
    dims = {k: int(v) for k, v in dims.items()}
    pprint.pprint(kernels[sys.argv[2]], width=120)
    shapes = param_shapes(kernels[sys.argv[2]], dims)
    ins = {n: np.zeros(s, dtype=NP_DTYPE.get(dt, np.float32)) for n, dt, s in shapes}
    out = run_kernel(src, sys.argv[2], ins, dims, check_order=True)
    for n, a in out.items():
        print(n, a.dtype, a.shape, a.reshape(-1)[:16])
