// What one entry does when launched: a sequence of workspace allocations, kernel launches and frees, with every
// size and grid extent an Expr over the entry's arguments.
//
// A typical plan for a kernel that accumulates bf16 output in fp32:
//   ws = plan.alloc("M * N * 4")                     workspace of M*N floats
//   plan.launch("to_f32",  grid {ceildiv(M*N, 256)}, block {256}, args {tensor(dst), workspace(ws), i64(M*N)})
//   plan.launch("gemm",    grid {...},               block {32},  args {tensor(a), tensor(b), workspace(ws), ...})
//   plan.launch("to_bf16", ...)
//   plan.free(ws)
#pragma once

#include "tilec/runtime/Expr.h"

#include <array>
#include <string>
#include <variant>
#include <vector>

namespace tilec::runtime {

// One kernel parameter: what is passed, in the kernel's parameter order.
struct KernelArg {
  enum class Kind : std::uint8_t { TensorData, Workspace, I32, I64 };
  Kind kind;
  int index = 0; // TensorData: argument index; Workspace: workspace id
  Expr value;    // I32 / I64: the scalar

  static KernelArg tensor(int argIndex) { return {Kind::TensorData, argIndex, {}}; }
  static KernelArg workspace(int workspaceId) { return {Kind::Workspace, workspaceId, {}}; }
  static KernelArg i32(Expr value) { return {Kind::I32, 0, std::move(value)}; }
  static KernelArg i64(Expr value) { return {Kind::I64, 0, std::move(value)}; }
};

struct AllocStep {
  int workspace = 0;
  Expr bytes;
  // Zero the workspace before the next step (cuMemsetD8Async), for accumulators that start at zero.
  bool zeroFill = false;
};

struct LaunchStep {
  int cubin = 0;         // which of the module's CUBINs holds the kernel
  std::string function;  // its (extern "C") name
  std::array<Expr, 3> grid = {Expr(1), Expr(1), Expr(1)};
  std::array<unsigned, 3> block = {1, 1, 1};
  // Above 48 KB the runtime opts the function in (cuFuncSetAttribute) up to the device's limit.
  Expr dynamicSharedBytes = Expr(0);
  std::vector<KernelArg> args;
};

struct FreeStep {
  int workspace = 0;
};

using PlanStep = std::variant<AllocStep, LaunchStep, FreeStep>;

class LaunchPlan {
public:
  // Adds an allocation step and returns the new workspace's id.
  int alloc(Expr bytes, bool zeroFill = false);
  int alloc(const std::string &bytes, bool zeroFill = false) { return alloc(Expr::parse(bytes), zeroFill); }
  LaunchPlan &launch(LaunchStep step);
  LaunchPlan &free(int workspace);

  const std::vector<PlanStep> &steps() const { return steps_; }
  std::vector<PlanStep> &steps() { return steps_; }
  int workspaceCount() const { return workspaceCount_; }

private:
  std::vector<PlanStep> steps_;
  int workspaceCount_ = 0;
};

} // namespace tilec::runtime
