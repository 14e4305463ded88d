// The layout algebra behind the GPU lowering, checked against the PTX ISA's fragment tables and by enumeration.
#include "tilec/Lowering/Layout.h"

#include <catch2/catch.hpp>

#include <set>

using namespace tilec::layout;

namespace {

// Every element of the tile is held by exactly one primary thread, at exactly one slot.
void checkCoversOnce(const FragmentLayout &l) {
  std::set<std::vector<int64_t>> seen;
  int64_t elements = 1;
  for (int64_t e : l.shape())
    elements *= e;
  for (int64_t t = 0; t < l.threads(); ++t) {
    if (!l.isPrimary(t))
      continue;
    for (int64_t s = 0; s < l.numSlots(); ++s) {
      auto c = l.coords(t, s);
      if (!l.inBounds(c))
        continue;
      INFO(l.name() << " thread " << t << " slot " << s);
      CHECK(seen.insert(c).second);
    }
  }
  CHECK(int64_t(seen.size()) == elements);
}

} // namespace

TEST_CASE("mma accumulator layout matches the PTX m16n8k16 C fragment", "[layout]") {
  FragmentLayout l = FragmentLayout::mmaAccumulator(64, 64, 2, 2);
  CHECK(l.threads() == 128);
  CHECK(l.numSlots() == 32); // 32x32 per warp / 32 lanes
  checkCoversOnce(l);
  // PTX: c0,c1 at (groupID, 2*threadID_in_group + {0,1}); c2,c3 eight rows down.
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t e = 0; e < 4; ++e) {
      auto c = l.coords(lane, e);
      CHECK(c[0] == lane / 4 + (e / 2) * 8);
      CHECK(c[1] == (lane % 4) * 2 + e % 2);
    }
  // Warp 1 is the second warp along M (warps are numbered M first), warp 2 the second along N.
  CHECK(l.coords(32, 0) == std::vector<int64_t>{32, 0});
  CHECK(l.coords(64, 0) == std::vector<int64_t>{0, 32});
  // Slot 4 is the next n8 atom, slot 16 the next m16 atom.
  CHECK(l.coords(0, 4) == std::vector<int64_t>{0, 8});
  CHECK(l.coords(0, 16) == std::vector<int64_t>{16, 0});
  CHECK(!l.hasPadding());
}

TEST_CASE("mma A-operand layout matches the PTX m16n8k16 A fragment", "[layout]") {
  FragmentLayout a = FragmentLayout::mmaOperandA(64, 32, 4, 1);
  checkCoversOnce(a);
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t e = 0; e < 8; ++e) {
      auto c = a.coords(lane, e);
      int64_t g = lane / 4, t = lane % 4;
      CHECK(c[0] == g + ((e >> 1) & 1) * 8);
      CHECK(c[1] == t * 2 + (e & 1) + (e >> 2) * 8);
    }
  // Replicated over the N warps.
  FragmentLayout a2 = FragmentLayout::mmaOperandA(64, 32, 2, 2);
  CHECK(a2.coords(5, 3) == a2.coords(64 + 5, 3));
  CHECK(a2.isPrimary(5));
  CHECK(!a2.isPrimary(64 + 5));
}

TEST_CASE("an accumulator feeds a register A operand only when each warp holds whole rows", "[layout]") {
  FragmentLayout p = FragmentLayout::mmaAccumulator(64, 64, 4, 1);
  auto map = registerAccessMap(FragmentLayout::mmaOperandA(64, 64, 4, 1), p, {0, 1});
  REQUIRE(map);
  // Spot-check: A slot (atom_k 1, register 2, half 1) is column 16 + 8 + 1 of the accumulator.
  FragmentLayout a = FragmentLayout::mmaOperandA(64, 64, 4, 1);
  for (int64_t t : {0, 37, 127})
    for (int64_t s = 0; s < a.numSlots(); ++s)
      CHECK(p.coords(t, map->apply(s)) == a.coords(t, s));
  // 2x2 warps: a warp holds half the columns of its rows, so the A operand is not in its registers.
  CHECK(!registerAccessMap(FragmentLayout::mmaOperandA(64, 64, 2, 2), FragmentLayout::mmaAccumulator(64, 64, 2, 2),
                           {0, 1}));
}

TEST_CASE("a row reduction of an accumulator is a slice whose rows are where the accumulator's are", "[layout]") {
  FragmentLayout s = FragmentLayout::mmaAccumulator(64, 64, 4, 1);
  FragmentLayout rows = s.slice(1);
  CHECK(rows.shape() == std::vector<int64_t>{64});
  CHECK(rows.numSlots() == 2);
  checkCoversOnce(rows);
  // The four lanes of a quad hold the same rows; lane 0 of the quad is the primary.
  CHECK(rows.coords(0, 1) == rows.coords(3, 1));
  CHECK(rows.isPrimary(4));
  CHECK(!rows.isPrimary(5));
  // o[i, j] *= rescale[i] over a 64x128 accumulator with the same warp rows reads rescale in registers.
  auto map = registerAccessMap(FragmentLayout::mmaAccumulator(64, 128, 4, 1), rows, {0});
  REQUIRE(map);
  CHECK(map->apply(0) == 0);
  CHECK(map->apply(2) == 1); // slot 2 is row + 8
  // Lanes only: no scratch. Warps along N: scratch.
  CHECK(crossWarpReduceScratchBytes(s, 1) == 0);
  CHECK(crossWarpReduceScratchBytes(FragmentLayout::mmaAccumulator(64, 64, 2, 2), 1) == 2 * 64 * 4);
}

TEST_CASE("blocked layouts cover any shape, with padding and replicas where threads do not divide it", "[layout]") {
  for (auto shape : std::vector<std::vector<int64_t>>{{64, 128}, {77}, {3, 5, 7}, {16}, {1000}, {2, 64}}) {
    for (int64_t threads : {32, 96, 128, 256}) {
      FragmentLayout l = FragmentLayout::blocked(shape, threads, 4);
      INFO(l.name() << " threads " << threads);
      checkCoversOnce(l);
      auto rebuilt = FragmentLayout::build(l.spec(), threads);
      REQUIRE(rebuilt);
      CHECK(*rebuilt == l);
    }
  }
  FragmentLayout l = FragmentLayout::blocked({64, 128}, 128, 4);
  CHECK(l.numSlots() == 64);
  CHECK(l.coords(1, 0) == std::vector<int64_t>{0, 4}); // 4 consecutive elements per thread
  CHECK(l.coords(0, 3) == std::vector<int64_t>{0, 3});
  CHECK(FragmentLayout::blocked({16}, 32, 1).replicaTerms().size() == 1);
  CHECK(FragmentLayout::blocked({77}, 32, 1).hasPadding());
}

TEST_CASE("replicated layouts give every thread every element", "[layout]") {
  FragmentLayout r = FragmentLayout::replicated({4, 3}, 64);
  CHECK(r.numSlots() == 12);
  CHECK(r.coords(17, 5) == std::vector<int64_t>{1, 2});
  CHECK(r.isPrimary(0));
  CHECK(!r.isPrimary(1));
  // A distributed loop reads a replicated tile at a slot that depends on the thread too: not a SlotMap (the emitter
  // indexes replicated tiles by their row-major position instead).
  CHECK(!registerAccessMap(FragmentLayout::blocked({4, 3}, 64, 1), r, {0, 1}));
  CHECK(registerAccessMap(FragmentLayout::replicated({4, 3}, 64), r, {0, 1}));
}

TEST_CASE("layouts are made again from their specs, and bad specs are refused", "[layout]") {
  using Kind = LayoutSpec::Kind;
  for (const FragmentLayout &l :
       {FragmentLayout::mmaAccumulator(64, 64, 4, 1), FragmentLayout::mmaOperandA(64, 32, 2, 2),
        FragmentLayout::mmaAccumulator(64, 128, 2, 2).slice(1), FragmentLayout::replicated({16}, 128),
        FragmentLayout::blocked({4, 8, 16}, 128, 4).slice(2).slice(0)}) {
    INFO(l.name());
    auto rebuilt = FragmentLayout::build(l.spec(), 128);
    REQUIRE(rebuilt);
    CHECK(*rebuilt == l);
    CHECK(rebuilt->name() == l.name());
  }
  CHECK(FragmentLayout::mmaAccumulator(64, 128, 2, 2).slice(1).name() == "slice(mma_c 64x128 warps 2x2, dim 1)");
  std::string error;
  CHECK(!FragmentLayout::build({Kind::MmaAccumulator, {64, 64}, 0, 3, 1}, 128, &error));
  CHECK(error == "warps 3x1 do not make 128 threads");
  CHECK(!FragmentLayout::build({Kind::MmaAccumulator, {24, 64}, 0, 4, 1}, 128, &error));
  CHECK(error == "tile 24x64 does not split into mma atoms over the warps");
  CHECK(!FragmentLayout::build({Kind::Blocked, {64}, 0}, 128, &error));
  CHECK(error == "a blocked layout's vector must be positive");
  CHECK(!FragmentLayout::build({Kind::Replicated, {4, 0}}, 128, &error));
  CHECK(error == "the extents of a layout's shape must be positive");
  auto four = std::make_shared<const LayoutSpec>(LayoutSpec{Kind::Replicated, {4}});
  CHECK(!FragmentLayout::build({Kind::Slice, {}, 0, 0, 0, 3, four}, 128, &error));
  CHECK(error == "slice dim 3 is out of range for a layout of rank 1");
  CHECK(!FragmentLayout::build({Kind::Slice, {}, 0, 0, 0, 0, nullptr}, 128, &error));
  CHECK(error == "a slice needs the layout it slices");
}

TEST_CASE("swizzles keep a row's chunks in the row and spread eight rows over distinct banks", "[layout]") {
  Swizzle s = Swizzle::forRow(256); // 128 bf16
  CHECK(s.name() == "xor8");
  for (int64_t chunk = 0; chunk < 16; ++chunk) {
    std::set<int64_t> banks;
    for (int64_t row = 0; row < 8; ++row) {
      int64_t offset = s.apply(row, chunk * 8, 128, 2) * 2; // bytes
      CHECK(offset / 256 == row);
      banks.insert((offset % 128) / 16);
    }
    CHECK(banks.size() == 8);
  }
  Swizzle narrow = Swizzle::forRow(64); // 32 bf16
  CHECK(narrow.name() == "xor4/2");
  std::set<int64_t> banks;
  for (int64_t row = 0; row < 8; ++row)
    banks.insert((narrow.apply(row, 8, 32, 2) * 2 % 128) / 16);
  CHECK(banks.size() == 8);
  CHECK(Swizzle::forRow(40).none());
}

TEST_CASE("panelled tiles are wgmma's 128-byte swizzle: address bits 4-6 XOR bits 7-9 of 128-byte panels", "[layout]") {
  // The hardware's canonical layout, on byte offsets from a 1024-byte aligned base: element (r, c) of panel
  // p = c / 64 (bf16) sits unswizzled at u = p * rows * 128 + r * 128 + (c % 64) * 2, and the 16-byte chunk bits are
  // XORed with the row-within-atom bits: u ^ (((u >> 7) & 7) << 4).
  for (int64_t rows : {8, 64, 128, 136}) {
    for (int64_t elementBytes : {2, 4}) {
      for (int64_t rowBytes : {256, 512}) {
        int64_t cols = rowBytes / elementBytes, panelCols = 128 / elementBytes;
        Swizzle s = Swizzle::panelled(rows, rowBytes, elementBytes);
        CHECK(s.name() == "xor8 panels");
        CHECK(!s.rowStepIsAdd());
        CHECK(!s.columnStepIsXor(cols, elementBytes, 16));
        std::set<int64_t> offsets;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c) {
            int64_t u = (c / panelCols) * rows * 128 + r * 128 + (c % panelCols) * elementBytes;
            int64_t hardware = u ^ (((u >> 7) & 7) << 4);
            REQUIRE(s.apply(r, c, cols, elementBytes) * elementBytes == hardware);
            offsets.insert(hardware);
          }
        CHECK(int64_t(offsets.size()) == rows * cols);
        CHECK(*offsets.rbegin() < rows * rowBytes);
      }
    }
  }
  // Rows of 128 bytes are one panel already: the plain xor8 swizzle is the same layout.
  CHECK(Swizzle::panelled(64, 128, 2).name() == "xor8");
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < 64; ++c) {
      int64_t u = r * 128 + c * 2;
      CHECK(Swizzle::panelled(64, 128, 2).apply(r, c, 64, 2) * 2 == (u ^ (((u >> 7) & 7) << 4)));
    }
}

TEST_CASE("a gemm's k-step is one XOR along columns and one add along rows where the swizzle allows", "[layout]") {
  // EmitGemm writes the ldmatrix index at k-step kk as index(0) ^ 16 kk (K along columns) or index(0) + 16 kk cols
  // (K along rows) when these predicates hold; check the identities on every swizzle forRow makes.
  for (int64_t cols : {16, 32, 48, 64, 96, 128, 256}) {
    for (int64_t elementBytes : {2, 4}) {
      Swizzle s = Swizzle::forRow(cols * elementBytes);
      for (int64_t k : {16, 32, 64, 128, 256}) {
        if (s.columnStepIsXor(cols, elementBytes, k)) {
          for (int64_t row = 0; row < 32; ++row)
            for (int64_t base : {0, 8})
              for (int64_t kk = 0; kk < k / 16; ++kk)
                REQUIRE(s.apply(row, 16 * kk + base, cols, elementBytes) ==
                        (s.apply(row, base, cols, elementBytes) ^ (16 * kk)));
        }
      }
      if (s.rowStepIsAdd()) {
        for (int64_t row = 0; row < 16; ++row)
          for (int64_t col = 0; col < cols; col += 8)
            for (int64_t kk = 0; kk < 8; ++kk)
              REQUIRE(s.apply(row + 16 * kk, col, cols, elementBytes) ==
                      s.apply(row, col, cols, elementBytes) + 16 * kk * cols);
      }
    }
  }
  // A warp's tile steps (tc_i / tc_j in the gemm lowering): base = w * span + c, c < 16, stepped by 16 j < span.
  for (int64_t cols : {16, 32, 48, 64, 96, 128, 256}) {
    for (int64_t elementBytes : {2, 4}) {
      Swizzle s = Swizzle::forRow(cols * elementBytes);
      for (int64_t span : {16, 32, 48, 64, 128, 256}) {
        if (!s.columnTileStepIsXor(cols, elementBytes, span))
          continue;
        for (int64_t row = 0; row < 32; ++row)
          for (int64_t w = 0; w * span < cols; ++w)
            for (int64_t c : {0, 8})
              for (int64_t j = 0; j < span / 16; ++j)
                REQUIRE(s.apply(row, w * span + c + 16 * j, cols, elementBytes) ==
                        (s.apply(row, w * span + c, cols, elementBytes) ^ (16 * j)));
      }
    }
  }
  CHECK_FALSE(Swizzle::forRow(256).columnTileStepIsXor(128, 2, 48)); // a 48-wide warp tile: bits overlap
  CHECK(Swizzle::forRow(256).columnTileStepIsXor(128, 2, 64));
  // Where it does not hold, the emitter keeps the plain index: 48 columns is not a power of two.
  CHECK_FALSE(Swizzle::forRow(96).columnStepIsXor(48, 2, 48));
  CHECK(Swizzle::forRow(256).columnStepIsXor(128, 2, 128));
  CHECK(Swizzle::forRow(256).rowStepIsAdd());
  CHECK(Swizzle::forRow(64).rowStepIsAdd());
}

TEST_CASE("a write reaches every replica only when the threads running it are the threads holding it", "[layout]") {
  // A loop over (16, 32) spread as blocked 16x32 vec 4 over 128 threads: j's thread digits (8 threads per row) are
  // replicas of r[i] in the slice. Each (i, j) is run by one thread, and r[i] is held by 8.
  FragmentLayout loop = FragmentLayout::blocked({16, 32}, 128, 4);
  FragmentLayout rows = loop.slice(1);
  REQUIRE(registerAccessMap(loop, rows, {0}).has_value());
  CHECK(!writesReachEveryReplica(loop, rows, {0}));
  // Written in place at every loop index: one thread runs and holds each element.
  CHECK(writesReachEveryReplica(loop, loop, {0, 1}));
  // 16 x 4 over 64 threads, 4 elements per thread: j lives in the slots, so the one thread holding r[i] runs every
  // (i, j); the 48 threads past the 16 rows are replicas of the loop and of r alike.
  FragmentLayout narrow = FragmentLayout::blocked({16, 4}, 64, 4);
  FragmentLayout narrowRows = narrow.slice(1);
  REQUIRE(registerAccessMap(narrow, narrowRows, {0}).has_value());
  CHECK(writesReachEveryReplica(narrow, narrowRows, {0}));
}
