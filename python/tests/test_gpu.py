"""tilec from Python on the GPU: tilec.flash_attention against PyTorch's scaled_dot_product_attention (autograd in
float32 on the same bf16 inputs), argument errors before launch, and a toy attention layer trained with each.
Skips without torch or a CUDA device. Runs under pytest, or as a script where pytest is not installed."""
import math
import os
import sys

try:
    import torch
    HAVE_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    torch = None
    HAVE_CUDA = False

try:
    import pytest
    gpu = pytest.mark.skipif(not HAVE_CUDA, reason="no torch with a CUDA device")
except ImportError:  # the script runner below
    pytest = None
    gpu = lambda f: f  # noqa: E731

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tilec  # noqa: E402


def rel(a, b):
    a, b = a.double(), b.double()
    assert torch.isfinite(a).all(), "NaN or inf"
    return ((a - b).norm() / b.norm()).item()


CONFIGS = [(heads, kv, causal, dim) for heads, kv in ((8, 8), (8, 2)) for causal in (False, True)
           for dim in (64, 128)]


@gpu
def test_flash_attention_matches_sdpa():
    torch.manual_seed(0)
    worst = 0.0
    for heads, kv, causal, dim in CONFIGS:
        batch, seq = 2, 1000
        q = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        do = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16)
        out = tilec.flash_attention(q, k, v, causal=causal)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), do)
        q32, k32, v32 = (t.detach().float().requires_grad_() for t in (q, k, v))
        ref = torch.nn.functional.scaled_dot_product_attention(q32, k32, v32, is_causal=causal,
                                                               enable_gqa=heads != kv)
        rq, rk, rv = torch.autograd.grad(ref, (q32, k32, v32), do.float())
        errors = {"O": rel(out, ref), "dQ": rel(dq, rq), "dK": rel(dk, rk), "dV": rel(dv, rv)}
        print(f"flash_attention heads {heads} kv {kv} causal {causal} dim {dim} seq {seq}: " +
              ", ".join(f"{n} {e:.2e}" for n, e in errors.items()))
        worst = max(worst, *errors.values())
        assert all(e <= 1e-2 for e in errors.values()), errors
    print(f"flash_attention vs SDPA (float32): largest relative error {worst:.2e} over {len(CONFIGS)} shapes")


@gpu
def test_argument_errors_before_launch():
    from tilec.attention import _kernels_dir
    mod = tilec.compile(os.path.join(_kernels_dir(), "flash_attention", "bwd_preprocess.tile"),
                        dim=64)
    O = torch.randn(1, 77, 2, 64, device="cuda", dtype=torch.bfloat16)
    delta = torch.full((1, 2, 77), 7.0, device="cuda")
    bad_dO = torch.randn(1, 77, 3, 64, device="cuda", dtype=torch.bfloat16)
    try:
        mod.attn_bwd_preprocess(O, bad_dO, delta)
    except tilec.ArgumentError as error:
        assert "dO" in str(error), str(error)
    else:
        raise AssertionError("a mismatched dO was accepted")
    torch.cuda.synchronize()
    assert (delta == 7.0).all(), "something was launched"
    mod.attn_bwd_preprocess(O, O.clone(), delta)  # the good call runs
    ref = (O.float() * O.float()).sum(-1).transpose(1, 2)
    assert rel(delta, ref) < 1e-2


class _Layer(torch.nn.Module if torch else object):
    def __init__(self, width, heads, kv_heads, attention):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, width // heads
        self.q = torch.nn.Linear(width, width)
        self.kv = torch.nn.Linear(width, 2 * kv_heads * self.dim)
        self.out = torch.nn.Linear(width, width)
        self.attention = attention

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.dim).transpose(1, 2)
        k, v = self.kv(x).view(b, s, 2, self.kv_heads, self.dim).permute(2, 0, 3, 1, 4)
        o = self.attention(q.bfloat16(), k.bfloat16(), v.bfloat16())
        return self.out(o.float().transpose(1, 2).reshape(b, s, -1))


@gpu
def test_training_with_tilec_matches_sdpa():
    def sdpa(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    losses = {}
    for name, attention in (("tilec", lambda q, k, v: tilec.flash_attention(q, k, v, causal=True)), ("sdpa", sdpa)):
        torch.manual_seed(1)
        layer = _Layer(width=512, heads=8, kv_heads=2, attention=attention).cuda()
        optimizer = torch.optim.Adam(layer.parameters(), lr=1e-3)
        data = torch.Generator(device="cuda").manual_seed(2)
        x = torch.randn(4, 1000, 512, device="cuda", generator=data)
        target = torch.randn(4, 1000, 512, device="cuda", generator=data)
        for step in range(20):
            loss = torch.nn.functional.mse_loss(layer(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses[name] = loss.item()
    gap = abs(losses["tilec"] - losses["sdpa"]) / losses["sdpa"]
    print(f"toy layer, 20 Adam steps: loss with tilec {losses['tilec']:.6f}, with SDPA {losses['sdpa']:.6f}, "
          f"relative gap {gap:.2e}")
    assert gap < 0.01, losses


@gpu
def test_workspace_memory_is_cached_and_released():
    # Launch workspaces (dQ's f32 accumulator, dK/dV split partials: ~100 MB here) stay in tilec's pool after the
    # call, so the next backward does not map them again; release_cached_memory() hands them back to the driver.
    if os.environ.get("TILEC_WORKSPACE_CACHE_BYTES"):
        return  # the user bounded the cache
    torch.manual_seed(3)
    batch, heads, kv, seq, dim = 4, 8, 2, 2048, 128
    q = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(batch, kv, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    do = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.bfloat16)
    grads = []
    for _ in range(2):
        out = tilec.flash_attention(q, k, v, atomics="split")
        grads.append(torch.autograd.grad(out, (q, k, v), do)[1:])  # dK, dV: split, so bitwise reproducible
        torch.cuda.synchronize()
        cached_free, _ = torch.cuda.mem_get_info()
        tilec.release_cached_memory()
        released_free, _ = torch.cuda.mem_get_info()
        gained = (released_free - cached_free) / 2**20
        print(f"workspace memory handed back by release_cached_memory: {gained:.0f} MiB")
        assert gained >= 64, gained  # dQ's 32 MiB f32 accumulator and 64 MiB of split partials were kept
    assert all(torch.equal(a, b) for a, b in zip(grads[0], grads[1]))


if __name__ == "__main__":
    if not HAVE_CUDA:
        print("SKIPPED: no torch with a CUDA device")
        sys.exit(0)
    failed = 0
    for test in (test_flash_attention_matches_sdpa, test_argument_errors_before_launch,
                 test_training_with_tilec_matches_sdpa, test_workspace_memory_is_cached_and_released):
        try:
            test()
            print(f"PASSED {test.__name__}")
        except Exception as error:  # report every test, then fail
            failed += 1
            print(f"FAILED {test.__name__}: {type(error).__name__}: {error}")
    sys.exit(1 if failed else 0)
