// Flash attention forward and backward on the CPU backend against a float64
// reference, on fresh random inputs. Tolerances (relative L2 norm):
//   O:   1e-2  (bf16 output; observed ~3e-3)
//   lse: 1e-4  (f32 output)
//   dQ, dK, dV: 2e-2 (bf16 outputs accumulated by bf16 atomics, which the
//   CPU backend realises as read-add-round-write: one rounding per block)
#include "AttentionOnCPU.h"

#include <catch2/catch.hpp>

using namespace tilec::reference;

namespace {

void check(const AttentionConfig &config) {
  INFO("shape: " << config.shape.str() << " blocks " << config.blockM << "x"
                 << config.blockN);
  auto run = runAttentionOnCPU(TILEC_KERNEL_DIR, config);
  if (!run) {
    FAIL(llvm::toString(run.takeError()));
    return;
  }
  double eO = relativeError(run->O, run->reference.O);
  double eL = relativeError(run->lse, run->reference.lse);
  double eQ = relativeError(run->dQ, run->reference.dQ);
  double eK = relativeError(run->dK, run->reference.dK);
  double eV = relativeError(run->dV, run->reference.dV);
  INFO("rel. errors O " << eO << " lse " << eL << " dQ " << eQ << " dK " << eK
                        << " dV " << eV);
  CHECK(eO < 1e-2);
  CHECK(eL < 1e-4);
  CHECK(eQ < 2e-2);
  CHECK(eK < 2e-2);
  CHECK(eV < 2e-2);
}

} // namespace

TEST_CASE("flash attention on the CPU: MHA, d=64, tail sequence",
          "[cpu][attention]") {
  AttentionConfig c;
  c.shape = {/*batch=*/1, /*seq=*/100, /*heads=*/2, /*groups=*/1, /*dim=*/64, false};
  check(c);
}

TEST_CASE("flash attention on the CPU: MHA causal, d=128, tail sequence",
          "[cpu][attention]") {
  AttentionConfig c;
  c.shape = {1, 100, 2, 1, 128, true};
  check(c);
}

TEST_CASE("flash attention on the CPU: GQA (4 heads, groups 2), d=64",
          "[cpu][attention]") {
  AttentionConfig c;
  c.shape = {2, 80, 4, 2, 64, false};
  check(c);
}

TEST_CASE("flash attention on the CPU: GQA causal, unequal blocks, d=128",
          "[cpu][attention]") {
  AttentionConfig c;
  c.shape = {1, 130, 4, 2, 128, true};
  c.blockM = 64;
  c.blockN = 32;
  check(c);
}

TEST_CASE("flash attention on the CPU: blocks in shuffled order",
          "[cpu][attention]") {
  AttentionConfig c;
  c.shape = {1, 96, 2, 1, 64, true};
  c.blockM = 32;
  c.blockN = 32;
  c.shuffleBlocks = true;
  c.seed = 7;
  check(c);
}
