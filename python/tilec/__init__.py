"""tilec from Python: compile .tile kernels and call their entries on NumPy arrays (CPU reference backend) or on
PyTorch CUDA tensors (GPU), plus a flash-attention function built from kernels/flash_attention/.

    import tilec
    mod = tilec.compile("kernels/examples/softmax.tile")
    mod.softmax(x, y)            # NumPy arrays: CPU backend; torch CUDA tensors: the GPU

Compiling runs the `tilec` executable ($TILEC_EXECUTABLE, else `tilec` on PATH); GPU launches go through the
MLIR-free runtime's C API (libtilec_c.so, loaded with ctypes). See docs/python.md.
"""
from ._errors import ArgumentError, CompileError, TilecError
from ._capi import release_cached_memory
from ._module import Entry, Module, compile, find_tilec

__all__ = ["compile", "Module", "Entry", "TilecError", "CompileError", "ArgumentError", "find_tilec",
           "flash_attention", "release_cached_memory"]
__version__ = "0.1.0"


def __getattr__(name):
    # flash_attention needs torch; importing it lazily keeps `import tilec` light for NumPy users.
    if name == "flash_attention":
        from .attention import flash_attention
        return flash_attention
    raise AttributeError(f"module 'tilec' has no attribute '{name}'")
