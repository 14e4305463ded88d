// The CPU reference backend: runs tile kernels on the host through MLIR's
// ExecutionEngine. tile-to-loops turns each kernel into sequential loops; the
// result is lowered to LLVM (bf16 and f16 arithmetic emulated in f32) and
// JIT-compiled. Blocks are called one at a time, in grid order or shuffled.
#ifndef TILEC_TARGET_CPU_CPURUNNER_H
#define TILEC_TARGET_CPU_CPURUNNER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include "tilec/runtime/HostTensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
}

namespace tilec::tile {
class EntryOp;
}

namespace tilec::cpu {

// Tensors and dtypes are the runtime's (MLIR-free, shared with `tilec run --target cuda`); the CPU backend runs
// kernels over bf16, f16, f32, i32 and bool (dtypeOf).
using runtime::DType;
using runtime::dtypeName;
using runtime::dtypeSize;
using runtime::HostTensor;

struct RunOptions {
  /// Run the blocks of the grid in a random order (seeded): results that
  /// depend on the order of blocks show up as differences.
  bool shuffleBlocks = false;
  uint64_t seed = 0;
};

/// What the runner knows of a kernel's signature, for argument checks.
struct KernelInfo {
  std::string name;
  std::vector<std::string> argNames;
  std::vector<DType> argTypes;
  std::vector<std::vector<int64_t>> argStaticShapes; // -1 for dynamic dims
  mlir::AffineMap grid;                // symbols -> extents
  std::vector<std::pair<int64_t, int64_t>> gridSymbols;
  std::vector<mlir::AffineMap> argShapes; // symbols -> each argument's dims
  std::vector<std::string> dimNames;
};

/// An index value of an entry's launch plan, computed from argument dims
/// (tile.entry's memref.dim and index arith ops); operands come earlier.
struct PlanValue {
  enum class Op { Const, Dim, Add, Sub, Mul, DivS, FloorDiv, CeilDiv, RemS, Min, Max };
  Op op = Op::Const;
  int64_t value = 0;   // Const
  int arg = 0, axis = 0; // Dim
  int lhs = -1, rhs = -1; // binary ops: indices of earlier values
};

/// One step of an entry's launch plan (tile.workspace, tile.launch, tile.free).
struct PlanStep {
  enum class Kind { Alloc, Launch, Free };
  Kind kind = Kind::Launch;
  int workspace = -1;            // Alloc, Free: the workspace's id
  DType dtype = DType::F32;      // Alloc
  std::vector<int64_t> shape;    // Alloc: extents, -1 where dynamic
  std::vector<int> dynamicSizes; // Alloc: a PlanValue per dynamic extent
  bool zeroed = false;           // Alloc
  std::string kernel;            // Launch: the tile.kernel
  std::vector<int> args;         // Launch: entry argument i (>= 0) or workspace w as -(w + 1)
};

/// A tile.entry: what the host calls, with its launch plan.
struct EntryInfo {
  KernelInfo signature; // name and arguments (no grid)
  std::vector<PlanValue> values;
  std::vector<PlanStep> steps;
  int workspaces = 0;
};

/// Reads a tile.entry's signature and launch plan (CPUPlan.cpp).
llvm::Expected<EntryInfo> extractEntry(tile::EntryOp entry);

/// The runner's dtype of an element type; nullopt for unsupported types.
std::optional<DType> dtypeOf(mlir::Type type);

/// Evaluates a grid or shape expression over named-dimension values.
int64_t evaluateAffine(mlir::AffineExpr expr, llvm::ArrayRef<int64_t> symbols);

class CPUModule {
public:
  ~CPUModule();
  /// Lowers a (cloned) module of tile kernels and JIT-compiles it.
  static llvm::Expected<std::unique_ptr<CPUModule>> compile(mlir::ModuleOp module);

  /// Runs kernel `name` over its whole grid on `args` (in parameter order).
  /// Checks every argument's dtype, rank and dims first and runs nothing on a
  /// mismatch. If `name` is an entry (tile.entry, after atomic legalization),
  /// runs its launch plan: workspaces allocated on the host (zeroed ones
  /// zero, others filled with NaN bytes), launches in order (each with the
  /// options, the seed offset by the step), workspaces freed.
  llvm::Error run(llvm::StringRef name, std::vector<HostTensor *> args,
                  const RunOptions &options = {});

  const KernelInfo *kernel(llvm::StringRef name) const;
  const std::vector<KernelInfo> &kernels() const { return infos; }
  const EntryInfo *entry(llvm::StringRef name) const;
  const std::vector<EntryInfo> &entries() const { return entryInfos; }

private:
  CPUModule() = default;
  llvm::Error runEntry(const EntryInfo &entry, std::vector<HostTensor *> args,
                       const RunOptions &options);
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::vector<KernelInfo> infos;
  std::vector<EntryInfo> entryInfos;
};

} // namespace tilec::cpu

#endif
