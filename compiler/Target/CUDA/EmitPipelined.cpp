// tile.pipelined loops: plain sequential loops, or - with copies tile-multi-buffer marked `tile.prefetch` - a
// software pipeline over cp.async groups:
//
//   prefetch iterations lo .. lo+S-2 (one commit group each, empty past the end)
//   for n in lo .. hi-1:
//     wait until at most S-2 groups are pending (iteration n's copies landed for this thread)
//     __syncthreads()        every thread's copies for n landed; every thread is done with iteration n-1
//     point each multi-buffered tile at buffer (n - lo) % S
//     prefetch iteration n+S-1 into buffer (n+S-1 - lo) % S, the one iteration n-1 read; commit
//     the body (the prefetched copies emit nothing)
//   wait for all groups
//
// A prefetch recomputes the copies' source offsets for its iteration from the index arithmetic in the body that
// they depend on (tile-multi-buffer checked that there is nothing else), with the induction variable rebound.
#include "EmitterImpl.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace tilec;
using namespace tilec::tile;

namespace tilec::cuda {

/// The ops of the loop body that `v` is computed by (in `slice`, in no particular order).
static void collectSlice(Value v, PipelinedOp loop, llvm::SetVector<Operation *> &slice) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &loop.getBodyBlock() || slice.contains(def))
    return;
  for (Value operand : def->getOperands())
    collectSlice(operand, loop, slice);
  slice.insert(def);
}

LogicalResult KernelEmitter::emitPrefetch(PipelinedOp loop, ArrayRef<CopyOp> copies, ArrayRef<Operation *> slice,
                                          const std::string &iteration, const std::string &stage,
                                          const std::string &upper) {
  open("{ // prefetch iteration " + iteration);
  std::string pf = fresh("pf");
  line() << "const long long " << pf << " = " << iteration << ";\n";
  open("if (" + pf + " < " + upper + ")");
  // Rebind the induction variable; the slice's values get names of this scope.
  llvm::DenseMap<Value, std::string> saved;
  auto save = [&](Value v) {
    auto it = names.find(v);
    saved[v] = it == names.end() ? std::string() : it->second;
  };
  save(loop.getInductionVar());
  for (Operation *op : slice)
    for (Value r : op->getResults())
      save(r);
  names[loop.getInductionVar()] = pf;
  LogicalResult result = success();
  for (Operation *op : slice)
    if (!isa<RegionOp>(op) && failed(emitOp(op)))
      result = failure();
  asyncCopies = true;
  for (CopyOp copy : copies) {
    Buffer &target = buffers.find(copy.getTarget())->second;
    std::string current = target.var, currentAddr = target.addrVar;
    target.var = "(" + target.stagesVar + " + (" + stage + ") * " + std::to_string(target.stageElements) + ")";
    target.addrVar = "(" + target.stagesAddrVar + " + (unsigned)(" + stage + ") * " +
                     std::to_string(target.stageElements * gpu::elementBytes(target.element)) + "u)";
    if (failed(emitCopy(copy)))
      result = failure();
    target.var = current;
    target.addrVar = currentAddr;
  }
  asyncCopies = false;
  for (auto &[v, name] : saved) {
    if (name.empty())
      names.erase(v);
    else
      names[v] = name;
  }
  close();
  line() << "tilec::device::cp_async_commit();\n";
  close();
  return result;
}

/// tile.reread_thread_index (tile-multi-buffer): `tid`, shadowed by a value NVVM cannot prove equal to the kernel's,
/// so the index arithmetic built on it is recomputed in each iteration rather than hoisted into registers.
static void rereadThreadIndex(KernelEmitter &e, PipelinedOp loop) {
  if (!loop->hasAttr(gpu::kRereadThreadIndexAttr))
    return;
  e.shadowThreadIndex("register pressure: recompute indices here");
}

LogicalResult KernelEmitter::emitPipelined(PipelinedOp loop) {
  std::string iv = fresh("n");
  SmallVector<CopyOp> copies = gpu::prefetchedCopies(loop.getBodyBlock());
  if (copies.empty()) {
    names[loop.getInductionVar()] = iv;
    open("for (long long " + iv + " = " + value(loop.getLower()) + "; " + iv + " < " + value(loop.getUpper()) +
         "; ++" + iv + ")");
    rereadThreadIndex(*this, loop);
    LogicalResult r = emitBlock(loop.getBodyBlock());
    close();
    return r;
  }
  int64_t stages = loop.getStages();
  llvm::SetVector<Operation *> sliceSet;
  for (CopyOp copy : copies)
    collectSlice(copy.getSource(), loop, sliceSet);
  SmallVector<Operation *> slice(sliceSet.begin(), sliceSet.end());
  llvm::sort(slice, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  std::string lo = fresh("lo"), hi = fresh("hi");
  std::string targets;
  for (CopyOp copy : copies)
    targets += (targets.empty() ? "" : ", ") + buffer(copy.getTarget()).var;
  line() << "// pipelined loop, " << stages << " stages: the copies into " << targets << " run " << stages - 1
         << (stages == 2 ? " iteration" : " iterations") << " ahead (cp.async)\n";
  line() << "const long long " << lo << " = " << value(loop.getLower()) << ";\n";
  line() << "const long long " << hi << " = " << value(loop.getUpper()) << ";\n";
  for (int64_t s = 0; s + 1 < stages; ++s)
    if (failed(emitPrefetch(loop, copies, slice, "(" + lo + " + " + std::to_string(s) + ")", std::to_string(s), hi)))
      return failure();
  names[loop.getInductionVar()] = iv;
  open("for (long long " + iv + " = " + lo + "; " + iv + " < " + hi + "; ++" + iv + ")");
  line() << "tilec::device::cp_async_wait<" << stages - 2 << ">();\n";
  emitBarrier();
  rereadThreadIndex(*this, loop);
  llvm::SetVector<Value> tiles;
  for (CopyOp copy : copies)
    tiles.insert(copy.getTarget());
  for (Value tile : tiles) {
    Buffer &b = buffers.find(tile)->second;
    std::string stage = "((" + iv + " - " + lo + ") % " + std::to_string(stages) + ")";
    line() << cType(b.element) << " *const " << b.var << " = " << b.stagesVar << " + " << stage << " * "
           << b.stageElements << ";\n";
    b.addrVar = b.var + "_addr";
    line() << "const unsigned " << b.addrVar << " = " << b.stagesAddrVar << " + (unsigned)" << stage << " * "
           << b.stageElements * gpu::elementBytes(b.element) << "u;\n";
  }
  std::string next = "(" + iv + " + " + std::to_string(stages - 1) + ")";
  if (failed(emitPrefetch(loop, copies, slice, next, "((" + next + " - " + lo + ") % " + std::to_string(stages) + ")",
                          hi)))
    return failure();
  // wgmmas still in flight at the end of an iteration are waited for there, not at the next iteration's barrier:
  // left in flight across the back edge, ptxas serialises every wgmma of the kernel (C7515: it sees the
  // loop-carried accumulators defined between the wgmma and its wait), measured on gemm.tile and attn_fwd.
  // Fencing the accumulator's zeroing avoids C7515, but the wgmmas can then stay in flight only if the copies go
  // one iteration less ahead (they would overwrite the stage being read): on the H100 gemm.tile took 3-10 % more
  // time at 3 stages, and 4 stages (one block per SM) more still (branch gemm-wgmma-in-flight;
  // docs/performance-history.md).
  LogicalResult r = emitBlock(loop.getBodyBlock());
  close();
  line() << "tilec::device::cp_async_wait_all();\n";
  return r;
}

} // namespace tilec::cuda
