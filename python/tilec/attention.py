"""tilec.flash_attention: scaled dot-product attention whose forward and backward passes run the DSL kernels of
kernels/flash_attention/ (fwd.tile, bwd_preprocess.tile, bwd.tile) on the GPU, as a torch.autograd.Function.

Layout: as torch.nn.functional.scaled_dot_product_attention, q is (batch, heads, seq, dim) and k, v are
(batch, kv_heads, seq, dim) with heads a multiple of kv_heads (grouped-query attention; SDPA needs
enable_gqa=True for that). The kernels work in (batch, seq, heads, dim): inputs are transposed into that layout
(one copy each) and the outputs are views transposed back. bf16 only, self-attention only (one seq), dim 64 or 128,
the default scale 1/sqrt(dim), no dropout and no mask beyond `causal`.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch

from ._module import compile as _compile

_modules: dict = {}


def _kernels_dir() -> Path:
    """$TILEC_KERNELS_DIR, else the kernels installed with the package (pip), else the source tree's kernels/ (this
    file is python/tilec/attention.py)."""
    env = os.environ.get("TILEC_KERNELS_DIR")
    if env:
        return Path(env)
    installed = Path(__file__).resolve().parent / "share" / "tilec" / "kernels"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "kernels"


def _module(file: str, **options):
    key = (file, tuple(sorted(options.items())))
    if key not in _modules:
        _modules[key] = _compile(_kernels_dir() / "flash_attention" / file, **options)
    return _modules[key]


def _bshd(t: torch.Tensor) -> torch.Tensor:
    return t.transpose(1, 2).contiguous()


class _FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal: bool, atomics: str):
        batch, heads, seq, dim = q.shape
        kv_heads = k.shape[1]
        Q, K, V = _bshd(q), _bshd(k), _bshd(v)
        O = torch.empty_like(Q)
        lse = torch.empty(batch, heads, seq, device=q.device, dtype=torch.float32)
        _module("fwd.tile", dim=dim, groups=heads // kv_heads, causal=causal).attn_fwd(Q, K, V, O, lse)
        ctx.save_for_backward(Q, K, V, O, lse)
        ctx.causal, ctx.atomics = causal, atomics
        return O.transpose(1, 2)

    @staticmethod
    def backward(ctx, grad_out):
        Q, K, V, O, lse = ctx.saved_tensors
        batch, seq, heads, dim = Q.shape
        kv_heads = K.shape[2]
        dO = _bshd(grad_out.to(torch.bfloat16))
        delta = torch.empty(batch, heads, seq, device=Q.device, dtype=torch.float32)
        _module("bwd_preprocess.tile", dim=dim).attn_bwd_preprocess(O, dO, delta)
        # The kernels accumulate into dQ (and into dK/dV across query heads of a group): they start at zero.
        dQ, dK, dV = torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V)
        bwd = _module("bwd.tile", dim=dim, groups=heads // kv_heads, causal=ctx.causal, atomics=ctx.atomics)
        bwd.attn_bwd(Q, K, V, dO, lse, delta, dQ, dK, dV)
        return dQ.transpose(1, 2), dK.transpose(1, 2), dV.transpose(1, 2), None, None


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
                    atomics: str = "fp32") -> torch.Tensor:
    """Attention of q (batch, heads, seq, dim) over k, v (batch, kv_heads, seq, dim), bf16 CUDA tensors; returns
    (batch, heads, seq, dim). Differentiable in q, k and v. `atomics` picks how the backward accumulates dQ (and
    dK/dV under GQA): "fp32", "split" (deterministic where it applies) or "native"."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or not t.is_cuda or t.dtype != torch.bfloat16 or t.dim() != 4:
            raise ValueError(f"flash_attention: {name} must be a 4-d bf16 CUDA tensor")
    if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:]:
        raise ValueError(f"flash_attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}: expected "
                         "q (B, H, S, D) and k, v (B, Hkv, S, D)")
    if q.shape[1] % k.shape[1] != 0:
        raise ValueError(f"flash_attention: {q.shape[1]} query heads are not a multiple of {k.shape[1]} kv heads")
    return _FlashAttention.apply(q, k, v, causal, atomics)
