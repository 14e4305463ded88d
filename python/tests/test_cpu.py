"""tilec from Python on the CPU backend (NumPy arrays), against NumPy references in float64 on fresh random inputs."""
import re
from pathlib import Path

import numpy as np
import pytest

import tilec

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


def rel_err(out, ref):
    out = np.asarray(out, dtype=np.float64)
    assert np.all(np.isfinite(out)), "NaN or inf in the result"
    return np.linalg.norm(out - ref) / np.linalg.norm(ref)


def test_compile_error_is_an_exception_with_file_line_col():
    source = "kernel k(X: f32[n])\n  grid(1) threads(32) as (b):\n    copy(Y, X)\n"
    with pytest.raises(tilec.CompileError) as info:
        tilec.compile(source)
    assert re.search(r"source\.tile:3:10: error: .*'Y'", str(info.value)), str(info.value)


def test_compile_error_from_a_file_names_the_file(tmp_path):
    bad = tmp_path / "bad.tile"
    bad.write_text("kernel k(X: f32[n])\n  grid(1) threads(32) as (b):\n    x = fragment<f32>[8\n")
    with pytest.raises(tilec.CompileError, match=r"bad\.tile:4:1: error: expected '\]' to close"):
        tilec.compile(bad)


def test_unknown_constant_is_a_compile_error():
    with pytest.raises(tilec.CompileError, match="does not name a compile-time constant"):
        tilec.compile(KERNELS / "examples" / "softmax.tile", no_such_constant=3)


@pytest.mark.parametrize("rows, cols", [(77, 100), (16, 128), (5, 1)])
@pytest.mark.parametrize("kernel", ["softmax", "softmax_pad"])  # a masking loop, or copy(..., pad=-inf)
def test_softmax_matches_numpy(rows, cols, kernel):
    rng = np.random.default_rng()
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = np.full_like(x, np.nan)
    mod = tilec.compile(KERNELS / "examples" / "softmax.tile")
    assert list(mod.entries) == ["softmax", "softmax_pad"]
    getattr(mod, kernel)(x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert rel_err(y, e / e.sum(axis=1, keepdims=True)) < 1e-5


def test_constants_as_keywords():
    # block_c=256 lets one block take rows of 200 columns (the default block_c=128 would drop columns).
    rng = np.random.default_rng()
    x = rng.standard_normal((40, 200)).astype(np.float32)
    y = np.zeros_like(x)
    tilec.compile(KERNELS / "examples" / "softmax.tile", block_c=256, threads=256).softmax(x, y)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    assert rel_err(y, e / e.sum(axis=1, keepdims=True)) < 1e-5


def test_bf16_kernel_takes_float32_arrays():
    rng = np.random.default_rng()
    x = rng.standard_normal((77, 130)).astype(np.float32)
    b = rng.standard_normal(130).astype(np.float32)
    y = np.zeros_like(x)
    tilec.compile(KERNELS / "examples" / "elementwise.tile").bias_gelu(x, b, y)
    # X is rounded to bf16 on the way in and Y on the way out: bf16 tolerance.
    v = x.astype(np.float64) + b
    ref = 0.5 * v * (1 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))
    assert rel_err(y, ref) < 2e-2


def test_atomics_strategies_give_the_same_sums():
    rng = np.random.default_rng()
    x = rng.standard_normal((1000, 256)).astype(np.float32)
    ref = x.astype(np.float64).sum(axis=1)
    for options in ({"atomics": "fp32"}, {"atomics": "split"}, {"deterministic": True}):
        y32, yb = np.zeros(1000, np.float32), np.zeros(1000, np.float32)
        tilec.compile(KERNELS / "examples" / "atomics.tile", kernel="band_row_sums", **options).band_row_sums(x, y32, yb)
        assert rel_err(y32, ref) < 1e-5, options
        assert rel_err(yb, ref) < 1e-2, options


def test_scatter_add_in_parallel_under_every_strategy():
    """Element atomics inside `parallel`, injective in the loop indices: deterministic applies."""
    rng = np.random.default_rng()
    quarter, cols = 40, 70  # tails in both dims
    x = rng.standard_normal((4 * quarter, cols)).astype(np.float32)
    ref = x.astype(np.float64).reshape(4, quarter, cols).sum(axis=0)
    for options in ({"atomics": "fp32"}, {"atomics": "split"}, {"deterministic": True}, {"atomics": "native"}):
        y32, yb = np.zeros((quarter, cols), np.float32), np.zeros((quarter, cols), np.float32)
        mod = tilec.compile(KERNELS / "examples" / "atomics.tile", kernel="scatter_quarters", **options)
        mod.scatter_quarters(x, y32, yb)
        assert rel_err(y32, ref) < 1e-5, options
        assert rel_err(yb, ref) < (1e-2 if options.get("atomics") == "native" else 4e-3), options


def round_to_bf16(a):
    """float32 -> nearest bfloat16 (ties to even), as float32; finite inputs."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("options", [{}, {"deterministic": True}, {"atomics": "native"}])
def test_atomic_max_and_min_are_exact(options):
    """atomic_max / atomic_min: region form into f32, bf16 and f16, element form into f32 and i32, with a
    tail block; exact, so compared for equality with NumPy (the 16-bit outputs once rounded)."""
    rng = np.random.default_rng()
    rows = 1000
    x = rng.standard_normal((rows, 64)).astype(np.float32) * 10
    labels = rng.integers(0, 1 << 20, rows).astype(np.int32)
    m32 = rng.standard_normal(64).astype(np.float32)  # initial values take part
    mb, n16 = m32.copy(), m32.astype(np.float16)
    l32 = rng.standard_normal(8).astype(np.float32)
    last = rng.integers(-5, 5, 8).astype(np.int32)
    want_m = np.maximum(m32, x.max(axis=0))
    want_n = np.minimum(n16, x.min(axis=0).astype(np.float16))
    want_mb = np.maximum(round_to_bf16(mb), round_to_bf16(x.max(axis=0)))
    want_l, want_last = l32.copy(), last.copy()
    for row, lab in enumerate(labels):
        want_l[lab % 8] = min(want_l[lab % 8], x[row, 0])
        want_last[lab % 8] = max(want_last[lab % 8], row)
    mod = tilec.compile(KERNELS / "examples" / "atomics.tile", kernel="column_extrema", **options)
    mod.column_extrema(x, labels, m32, mb, n16, l32, last)
    np.testing.assert_array_equal(m32, want_m)
    np.testing.assert_array_equal(mb, want_mb)
    np.testing.assert_array_equal(n16, want_n)
    np.testing.assert_array_equal(l32, want_l)
    np.testing.assert_array_equal(last, want_last)


def test_atomic_max_propagates_nan():
    rng = np.random.default_rng()
    x = rng.standard_normal((40, 64)).astype(np.float32)
    x[33, 5] = np.nan
    m32, mb = np.full(64, -1e30, np.float32), np.full(64, -1e30, np.float32)
    n16 = np.full(64, 1e4, np.float16)
    l32, last = np.zeros(8, np.float32), np.zeros(8, np.int32)
    mod = tilec.compile(KERNELS / "examples" / "atomics.tile", kernel="column_extrema")
    mod.column_extrema(x, np.arange(40, dtype=np.int32), m32, mb, n16, l32, last)
    nan_columns = np.flatnonzero(np.isnan(m32))
    assert list(nan_columns) == [5] and np.isnan(mb[5]) and np.isnan(n16[5])
    assert not np.isnan(np.delete(m32, 5)).any()


def test_argument_errors_name_the_problem():
    mod = tilec.compile(KERNELS / "examples" / "softmax.tile")
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(tilec.ArgumentError, match=r"takes 2 arguments \(X, Y\), got 1"):
        mod.softmax(x)
    with pytest.raises(tilec.ArgumentError, match="'Y'"):
        mod.softmax(x, np.zeros((4, 9), np.float32))
    with pytest.raises(tilec.ArgumentError, match="NumPy array or a torch CUDA tensor"):
        mod.softmax(x, [[0.0] * 8] * 4)
    with pytest.raises(AttributeError, match="no entry named 'softmx'"):
        mod.softmx


def test_missing_tilec_executable(monkeypatch):
    monkeypatch.setenv("TILEC_EXECUTABLE", "/nonexistent/tilec")
    with pytest.raises(tilec.TilecError, match="TILEC_EXECUTABLE"):
        tilec.compile(KERNELS / "examples" / "softmax.tile")


def test_math_builtins_match_numpy():
    # kernels/examples/math.tile: column k of Y is the k-th builtin of X (77 rows: a tail block).
    import math
    rng = np.random.default_rng()
    x = rng.standard_normal(77).astype(np.float32)
    y = np.full((77, 16), np.nan, np.float32)
    tilec.compile(KERNELS / "examples" / "math.tile").math_builtins(x, y)
    v = x.astype(np.float64)
    a = np.abs(v) + 0.5
    columns = [np.exp2(v), np.log2(a), np.exp(v), np.log(a), np.sqrt(a), 1 / np.sqrt(a), np.tanh(v),
               np.vectorize(math.erf)(v), np.sin(v), np.cos(v), np.floor(v * 3), np.ceil(v * 3), np.log1p(a),
               np.expm1(v), 1 / (1 + np.exp(-4 * v)), a ** v]
    for k, ref in enumerate(columns):
        if k in (10, 11):  # floor/ceil: exact, except where v * 3 rounds across an integer in f32
            assert np.mean(y[:, k] == ref) > 0.97, k
        else:
            assert rel_err(y[:, k], ref) < 1e-5, k


def test_copies_convert_element_types():
    """Conversions by copy (kernels/examples/conversions.tile): bf16 -> f16 -> bf16 exact for these values, float ->
    i32 truncated toward zero like int(), i32 -> f32; rows = 37 leaves a tail block."""
    rng = np.random.default_rng()
    x = round_to_bf16(rng.standard_normal((37, 8)).astype(np.float32) * 2)
    h = np.full((37, 8), np.nan, np.float16)
    b = np.full((37, 8), np.nan, np.float32)
    i = np.full((37, 8), -99, np.int32)
    f = np.full((37, 8), np.nan, np.float32)
    tilec.compile(KERNELS / "examples" / "conversions.tile", kernel="convert_dtypes").convert_dtypes(x, h, b, i, f)
    assert np.array_equal(h, x.astype(np.float16))
    assert np.array_equal(b, x)
    expected = np.trunc(h.astype(np.float32) * np.float32(3.7)).astype(np.int32)
    assert np.array_equal(i, expected) and np.any(expected < 0) and np.any(expected > 0)
    assert np.array_equal(f, expected.astype(np.float32))


def test_reductions_over_unit_dims():
    rng = np.random.default_rng()
    rows = 37
    x = rng.standard_normal((rows, 96)).astype(np.float32)
    s = np.full(rows, np.nan, np.float32)
    m = np.full((rows, 24), np.nan, np.float32)
    c = np.full((10, 24), np.nan, np.float32)
    mod = tilec.compile(KERNELS / "examples" / "conversions.tile", kernel="unit_dim_reductions")
    mod.unit_dim_reductions(x, s, m, c)
    assert rel_err(s, x.astype(np.float64).sum(axis=1)) < 1e-6
    assert np.array_equal(m, x[:, :24])
    padded = np.zeros((40, 24), np.float32)  # rows past the end read as 0
    padded[:rows] = x[:, :24]
    assert np.array_equal(c, padded.reshape(10, 4, 24).max(axis=1))


def test_arithmetic_operators_match_numpy():
    # kernels/examples/math.tile, arithmetic_operators: float %, /, min, max; int /, %, min, max; negative operands.
    rng = np.random.default_rng()
    x = rng.standard_normal(77).astype(np.float32)
    n = rng.integers(-100, 100, 77).astype(np.int32)
    y = np.full((77, 4), np.nan, np.float32)
    j = np.full((77, 4), -999, np.int32)
    tilec.compile(KERNELS / "examples" / "math.tile", kernel="arithmetic_operators").arithmetic_operators(x, n, y, j)
    v = x.astype(np.float64) * 4
    for k, ref in enumerate([np.fmod(v, 1.5), v / 0.75, np.minimum(v, -v * 0.5), np.maximum(v, 0.25)]):
        assert rel_err(y[:, k], ref) < 1e-5, k
    q = np.trunc(n / 7).astype(np.int32)
    for k, ref in enumerate([q, n - 7 * q, np.minimum(n, 3), np.maximum(n * 3, -5)]):
        assert np.array_equal(j[:, k], ref), k
    assert np.any(n < 0) and np.any(j[:, 1] < 0)


def test_tiles_allocated_inside_loops_and_branches():
    # kernels/examples/scopes.tile: a tile allocated in a range loop, a pipelined loop and a dynamic if (37 rows:
    # blocks 0 and 2 even, block 2 a tail).
    rng = np.random.default_rng()
    x = rng.standard_normal((37, 32)).astype(np.float32)
    y = np.full_like(x, np.nan)
    tilec.compile(KERNELS / "examples" / "scopes.tile").scoped_tiles(x, y)
    even = ((np.arange(37) // 16) % 2 == 0)[:, None]
    assert rel_err(y, 2 * x.astype(np.float64) + even * x) < 1e-6


def test_running_row_sums():
    # kernels/examples/reductions.tile, running_row_sums: reduce_sum(..., clear=false) into a tile laid out for a
    # gemm's accumulator; 77 rows (a tail block: padded rows read as 0 and are not written).
    rng = np.random.default_rng()
    x = rng.standard_normal((77, 16)).astype(np.float32)
    w = round_to_bf16(rng.standard_normal((16, 32)).astype(np.float32))
    y = np.full((77, 32), np.nan, np.float32)
    tilec.compile(KERNELS / "examples" / "reductions.tile", kernel="running_row_sums").running_row_sums(x, w, y)
    xb = round_to_bf16(x).astype(np.float64)
    ref = 2 * (xb @ w) / (np.abs(2 * x.astype(np.float64).sum(axis=1, keepdims=True)) + 1)
    assert rel_err(y, ref) < 1e-4


def test_normalized_product():
    # kernels/examples/reductions.tile, normalized_product: row sums read in a loop over a gemm's accumulator.
    rng = np.random.default_rng()
    x = rng.standard_normal((77, 32)).astype(np.float32)
    w = round_to_bf16(rng.standard_normal((32, 16)).astype(np.float32))
    y = np.full((77, 16), np.nan, np.float32)
    tilec.compile(KERNELS / "examples" / "reductions.tile", kernel="normalized_product").normalized_product(x, w, y)
    ref = (round_to_bf16(x).astype(np.float64) @ w) / (np.abs(x.astype(np.float64).sum(axis=1, keepdims=True)) + 1)
    assert rel_err(y, ref) < 1e-4


@pytest.mark.parametrize("arch, sm, wgmma", [("sm_90a", 90, 1), ("sm_90", 90, 0), ("sm_80", 80, 0)])
def test_arch_sets_the_target_constants(arch, sm, wgmma):
    # SM and WGMMA pick target-dependent defaults (language.md 6.6); the CPU backend runs the kernel of that target.
    source = ("kernel target<n: int = SM, w: bool = WGMMA, block: int = (WGMMA ? 64 : 32)>(X: f32[rows])\n"
              "  grid(cdiv(rows, block)) threads(32) as (b):\n"
              "    t = fragment<f32>[block]\n"
              "    fill(t, float(n * 10 + (w ? 1 : 0)) + float(block) / 1000.0)\n"
              "    copy(t, X[b * block :+ block])\n")
    x = np.random.default_rng(7).standard_normal(100).astype(np.float32)
    tilec.compile(source, arch=arch).target(x)
    block = 64 if wgmma else 32
    assert np.all(x == np.float32(sm * 10 + wgmma + block / 1000.0)), x[:4]


def test_a_malformed_arch_is_a_compile_error():
    with pytest.raises(tilec.CompileError, match="--arch expects a real GPU architecture such as sm_90a, got 'sm_9'"):
        tilec.compile(KERNELS / "examples" / "softmax.tile", arch="sm_9")
