"""Compiling .tile sources with the `tilec` executable and calling their entries."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ._errors import ArgumentError, CompileError, TilecError


def find_tilec() -> str:
    """The tilec executable: $TILEC_EXECUTABLE, else `tilec` on PATH."""
    path = os.environ.get("TILEC_EXECUTABLE") or shutil.which("tilec")
    if not path or not os.access(path, os.X_OK):
        raise TilecError("the tilec executable was not found: set TILEC_EXECUTABLE or put tilec on PATH "
                         "(scripts/build.sh builds it into build/bin/tilec)")
    return path


def _define_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"compile-time constants are int, float or bool, got {type(value).__name__}")


@dataclass
class Param:
    name: str
    dtype: str        # "bf16", "f32", ...
    dims: list[str]   # as the plan prints them: "64", "seq", "{(kv_heads * 4)}"


@dataclass
class Entry:
    """One entry of a compiled module: its name and parameters (in call order)."""
    module: "Module"
    name: str
    params: list[Param] = field(default_factory=list)

    def __call__(self, *args):
        return self.module._call(self, args)

    def signature(self) -> str:
        return f"{self.name}(" + ", ".join(f"{p.name}: {p.dtype}[{', '.join(p.dims)}]" for p in self.params) + ")"

    def __repr__(self):
        return f"<tilec entry {self.signature()}>"


class Module:
    """The entries of one .tile source compiled with one set of constants and options. Call an entry as an attribute
    (`mod.softmax(x, y)`): NumPy arrays run on the CPU backend, torch CUDA tensors on the GPU. Kernels write their
    outputs into the arguments, in place."""

    def __init__(self, path: str, args: list[str], only: list[str], entries: dict[str, list[Param]], workdir):
        self._path = path
        self._args = args          # -D ..., --atomics=... as given to tilec
        self._only = only          # --kernel=... (compile only that kernel), for `tilec compile`
        self._workdir = workdir    # TemporaryDirectory kept alive with the module (module files, .npy staging)
        self.entries = {name: Entry(self, name, params) for name, params in entries.items()}
        self._gpu = None           # the loaded .tcm (tilec._capi.LoadedModule), on first GPU call

    def __getattr__(self, name):
        entries = self.__dict__.get("entries", {})
        if name in entries:
            return entries[name]
        raise AttributeError(f"no entry named '{name}' (entries: {', '.join(entries) or 'none'})")

    def __dir__(self):
        return list(super().__dir__()) + list(self.entries)

    def __repr__(self):
        return f"<tilec module {self._path}: {', '.join(self.entries)}>"

    # -- calls ---------------------------------------------------------------------------------------------------
    def _call(self, entry: Entry, args):
        if len(args) != len(entry.params):
            raise ArgumentError(f"entry '{entry.name}' takes {len(entry.params)} arguments "
                                f"({', '.join(p.name for p in entry.params)}), got {len(args)}")
        kinds = {_kind_of(a) for a in args}
        if kinds == {"numpy"}:
            return self._call_cpu(entry, args)
        if kinds == {"torch-cuda"}:
            return self._call_gpu(entry, args)
        for p, a in zip(entry.params, args):
            if _kind_of(a) not in ("numpy", "torch-cuda"):
                raise ArgumentError(f"entry '{entry.name}', argument '{p.name}': expected a NumPy array or a torch "
                                    f"CUDA tensor, got {type(a).__name__}"
                                    + (" on the CPU" if _kind_of(a) == "torch-cpu" else ""))
        raise ArgumentError(f"entry '{entry.name}': mixes NumPy arrays (CPU backend) and CUDA tensors (GPU); "
                            "pass all of one kind")

    def _call_cpu(self, entry: Entry, args):
        import numpy as np
        stage = Path(tempfile.mkdtemp(dir=self._workdir.name))
        inputs = []
        for p, a in zip(entry.params, args):
            if p.dtype == "bf16" and a.dtype != np.float32:
                raise ArgumentError(f"entry '{entry.name}', argument '{p.name}': bf16 parameters take float32 arrays "
                                    f"on the CPU backend (NumPy has no bfloat16), got {a.dtype}")
            path = stage / f"{p.name}.npy"
            np.save(path, np.ascontiguousarray(a))
            inputs += ["--input", f"{p.name}={path}"]
        out = stage / "out"
        result = subprocess.run([find_tilec(), "run", self._path, "--kernel", entry.name, "--target", "cpu",
                                 *self._args, *inputs, "--output-dir", str(out)],
                                capture_output=True, text=True)
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip()
            # A run that fails on its arguments names them; anything else is a tilec failure.
            raise (ArgumentError if "argument" in message or "parameter" in message or "dim '" in message
                   else TilecError)(message)
        for p, a in zip(entry.params, args):
            a[...] = np.load(out / f"{p.name}.npy").astype(a.dtype, copy=False)
        shutil.rmtree(stage, ignore_errors=True)

    def _call_gpu(self, entry: Entry, args):
        from . import _capi
        if self._gpu is None:
            tcm = Path(self._workdir.name) / "module.tcm"
            result = subprocess.run([find_tilec(), "compile", self._path, *self._args, *self._only, "-o", str(tcm)],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise CompileError(result.stderr or result.stdout)
            self._gpu = _capi.LoadedModule(str(tcm))
        self._gpu.launch(entry.name, args)


def _kind_of(a) -> str:
    mod = type(a).__module__
    if mod.startswith("torch"):
        return "torch-cuda" if getattr(a, "is_cuda", False) else "torch-cpu"
    if mod == "numpy":
        return "numpy"
    return "other"


_PARAM = re.compile(r"^param (\S+) (\S+) \[(.*)\]")


def compile(source, *, kernel: str | None = None, atomics: str = "fp32", deterministic: bool = False,
            max_split: int | None = None, arch: str | None = None, **constants) -> Module:
    """Compiles `source` (a path to a .tile file, or .tile source text) with compile-time `constants`
    (`groups=4, causal=True`) and the atomics strategy. `arch` ("sm_90a", "sm_80") is the GPU it is compiled for,
    which the source reads as `SM` and `WGMMA` (default: TILEC_CUDA_ARCH, else the current GPU's, else sm_90a); the
    CPU backend runs the same kernel. Raises CompileError with the compiler's file:line:col diagnostics."""
    workdir = tempfile.TemporaryDirectory(prefix="tilec-")
    text_source = isinstance(source, str) and "\n" in source
    if text_source:
        path = os.path.join(workdir.name, "source.tile")
        Path(path).write_text(source)
    else:
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such .tile file: '{path}' (pass source text with at least one newline)")
    args = []
    for name, value in constants.items():
        args += ["-D", f"{name}={_define_text(value)}"]
    if deterministic:
        args.append("--deterministic")
    else:
        args.append(f"--atomics={atomics}")
    if max_split is not None:
        args.append(f"--max-split={max_split}")
    if arch is not None:
        args.append(f"--arch={arch}")
    only = [f"--kernel={kernel}"] if kernel else []
    result = subprocess.run([find_tilec(), path, *args, *only, "--emit=plan"], capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(result.stderr or result.stdout)
    entries: dict[str, list[Param]] = {}
    current = None
    for line in result.stdout.splitlines():
        if line.startswith("entry "):
            current = line.split()[1]
            entries[current] = []
        elif line.startswith("param ") and current:
            m = _PARAM.match(line)
            if m:
                dims = [d.strip() for d in re.split(r",\s*(?![^{]*\})", m.group(3))] if m.group(3) else []
                entries[current].append(Param(m.group(1), m.group(2), dims))
    return Module(path, args, only, entries, workdir)
