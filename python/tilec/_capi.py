"""The runtime's C API (runtime/capi/tilec_c.h) through ctypes: load a .tcm module, launch entries on torch CUDA
tensors described as DLTensors, on torch's current stream. ctypes rather than a compiled extension: one library
serves every Python version (the GPU machine has 3.12, the CPU machines 3.11)."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ._errors import ArgumentError, TilecError


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_KDL_CUDA = 2
_OK, _ERROR, _ARGUMENT_ERROR, _PLAN_ERROR = 0, 1, 2, 3


def _library_path() -> str:
    """libtilec_c.so: $TILEC_C_LIBRARY, else inside the installed package, else beside the tilec executable (the
    build tree's runtime/ or the GPU bundle's bin/)."""
    candidates = []
    if os.environ.get("TILEC_C_LIBRARY"):
        candidates.append(Path(os.environ["TILEC_C_LIBRARY"]))
    candidates.append(Path(__file__).parent / "lib" / "libtilec_c.so")
    try:
        from ._module import find_tilec
        exe = Path(find_tilec()).resolve()
        candidates += [exe.parent / "libtilec_c.so", exe.parent.parent / "runtime" / "libtilec_c.so"]
    except TilecError:
        pass
    for c in candidates:
        if c.is_file():
            return str(c)
    raise TilecError("libtilec_c.so was not found (set TILEC_C_LIBRARY); looked at: " +
                     ", ".join(str(c) for c in candidates))


_lib = None


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_library_path())
        lib.tilec_module_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p,
                                          ctypes.c_size_t]
        lib.tilec_module_free.argtypes = [ctypes.c_void_p]
        lib.tilec_module_launch.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(_DLTensor),
                                            ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.tilec_release_cached_memory.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        _lib = lib
    return _lib


def _dtype_of(tensor) -> _DLDataType:
    import torch
    table = {torch.bfloat16: (4, 16), torch.float16: (2, 16), torch.float32: (2, 32), torch.float64: (2, 64),
             torch.int8: (0, 8), torch.int32: (0, 32), torch.int64: (0, 64), torch.uint8: (1, 8),
             torch.bool: (6, 8)}
    if tensor.dtype not in table:
        raise ArgumentError(f"tilec does not take {tensor.dtype} tensors")
    code, bits = table[tensor.dtype]
    return _DLDataType(code, bits, 1)


def release_cached_memory() -> None:
    """Hands the device memory cached for launch workspaces (dQ's f32 accumulator, split partials) back to the
    driver, like torch.cuda.empty_cache() for PyTorch's allocator. Launches keep it by default (docs/runtime.md)."""
    error = ctypes.create_string_buffer(4096)
    if _load().tilec_release_cached_memory(error, len(error)) != _OK:
        raise TilecError(error.value.decode(errors="replace"))


class LoadedModule:
    def __init__(self, path: str):
        lib = _load()
        handle = ctypes.c_void_p()
        error = ctypes.create_string_buffer(4096)
        if lib.tilec_module_load(path.encode(), ctypes.byref(handle), error, len(error)) != _OK:
            raise TilecError(error.value.decode(errors="replace"))
        self._lib, self._handle = lib, handle

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.tilec_module_free(self._handle)
            self._handle = None

    def launch(self, entry: str, tensors) -> None:
        import torch
        count = len(tensors)
        views = (_DLTensor * count)()
        keep = []  # shape and stride arrays must outlive the call
        for i, t in enumerate(tensors):
            shape = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
            strides = (ctypes.c_int64 * max(t.dim(), 1))(*t.stride())
            keep += [shape, strides]
            views[i] = _DLTensor(ctypes.c_void_p(t.data_ptr()), _DLDevice(_KDL_CUDA, t.device.index or 0), t.dim(),
                                 _dtype_of(t), shape, strides, 0)
        devices = {t.device for t in tensors}
        device = next(iter(devices))
        stream = torch.cuda.current_stream(device).cuda_stream
        error = ctypes.create_string_buffer(4096)
        with torch.cuda.device(device):
            status = self._lib.tilec_module_launch(self._handle, entry.encode(), views, count,
                                                   ctypes.c_void_p(stream), error, len(error))
        if status == _ARGUMENT_ERROR:
            raise ArgumentError(error.value.decode(errors="replace"))
        if status != _OK:
            raise TilecError(error.value.decode(errors="replace"))
