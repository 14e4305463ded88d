// The CPU reference backend: runs tile kernels on the host through MLIR's
// ExecutionEngine. tile-to-loops turns each kernel into sequential loops; the
// result is lowered to LLVM (bf16 and f16 arithmetic emulated in f32) and
// JIT-compiled. Blocks are called one at a time, in grid order or shuffled.
#ifndef TILEC_TARGET_CPU_CPURUNNER_H
#define TILEC_TARGET_CPU_CPURUNNER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
}

namespace tilec::cpu {

enum class DType { BF16, F16, F32, I32, Bool };
const char *dtypeName(DType dtype);
size_t dtypeSize(DType dtype);

/// A dense, row-major tensor in host memory.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);
  int64_t numel() const;
  /// Element access through double (rounding to nearest even on stores).
  double get(int64_t i) const;
  void set(int64_t i, double v);
};

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

/// Evaluates a grid or shape expression over named-dimension values.
int64_t evaluateAffine(mlir::AffineExpr expr, llvm::ArrayRef<int64_t> symbols);

class CPUModule {
public:
  ~CPUModule();
  /// Lowers a (cloned) module of tile kernels and JIT-compiles it.
  static llvm::Expected<std::unique_ptr<CPUModule>> compile(mlir::ModuleOp module);

  /// Runs kernel `name` over its whole grid on `args` (in parameter order).
  /// Checks every argument's dtype, rank and dims first and runs nothing on a
  /// mismatch.
  llvm::Error run(llvm::StringRef name, std::vector<HostTensor *> args,
                  const RunOptions &options = {});

  const KernelInfo *kernel(llvm::StringRef name) const;
  const std::vector<KernelInfo> &kernels() const { return infos; }

private:
  CPUModule() = default;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  std::vector<KernelInfo> infos;
};

} // namespace tilec::cpu

#endif
