#include "AttentionOnCPU.h"

#include "tilec/Driver/Driver.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace tilec;
using namespace tilec::cpu;

namespace tilec::reference {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::make_error<llvm::StringError>(message,
                                             llvm::inconvertibleErrorCode());
}

llvm::Expected<std::unique_ptr<CPUModule>>
compileKernel(mlir::MLIRContext &context, const std::string &path,
              const std::map<std::string, std::string> &defines,
              const std::string &atomics) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return error("cannot read " + path + ": " + buffer.getError().message());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  CompileOptions options;
  options.gen.defines = defines;
  options.atomics = parseAtomicsStrategy(atomics);
  if (!atomics.empty() && !options.atomics)
    return error("unknown atomics strategy '" + atomics + "': expected fp32, split or native");
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  auto module = compileToTileIR(context, sourceMgr, options, os);
  if (!module)
    return error("compiling " + path + " failed:\n" + diagnostics);
  return CPUModule::compile(*module);
}

HostTensor bf16Tensor(std::vector<int64_t> shape, const std::vector<double> &values,
                      std::vector<double> &rounded) {
  HostTensor t(DType::BF16, std::move(shape));
  rounded.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    t.set(i, values[i]);
    rounded[i] = t.get(i);
  }
  return t;
}

std::vector<double> toDoubles(const HostTensor &t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] = t.get(i);
  return v;
}

} // namespace

llvm::Expected<AttentionRun> runAttentionOnCPU(const std::string &kernelDir,
                                               const AttentionConfig &config) {
  using Clock = std::chrono::steady_clock;
  const AttentionShape &sh = config.shape;
  std::map<std::string, std::string> common = {
      {"dim", std::to_string(sh.dim)},
      {"block_m", std::to_string(config.blockM)}};
  std::map<std::string, std::string> full = common;
  full["groups"] = std::to_string(sh.groups);
  full["causal"] = sh.causal ? "true" : "false";
  full["block_n"] = std::to_string(config.blockN);

  AttentionRun run;
  mlir::MLIRContext context;
  auto start = Clock::now();
  auto fwd = compileKernel(context, kernelDir + "/fwd.tile", full, config.atomics);
  if (!fwd)
    return fwd.takeError();
  auto pre = compileKernel(context, kernelDir + "/bwd_preprocess.tile", common, config.atomics);
  if (!pre)
    return pre.takeError();
  auto bwd = compileKernel(context, kernelDir + "/bwd.tile", full, config.atomics);
  if (!bwd)
    return bwd.takeError();
  run.compileSeconds = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<int64_t> qShape = {sh.batch, sh.seq, sh.heads, sh.dim};
  std::vector<int64_t> kShape = {sh.batch, sh.seq, sh.kvHeads(), sh.dim};
  std::vector<int64_t> rowShape = {sh.batch, sh.heads, sh.seq};
  int64_t nq = sh.batch * sh.seq * sh.heads * sh.dim;
  int64_t nk = sh.batch * sh.seq * sh.kvHeads() * sh.dim;
  std::vector<double> q, k, v, dout;
  HostTensor Q = bf16Tensor(qShape, randomNormal(nq, config.seed * 4 + 0), q);
  HostTensor K = bf16Tensor(kShape, randomNormal(nk, config.seed * 4 + 1), k);
  HostTensor V = bf16Tensor(kShape, randomNormal(nk, config.seed * 4 + 2), v);
  HostTensor dO = bf16Tensor(qShape, randomNormal(nq, config.seed * 4 + 3), dout);
  HostTensor O(DType::BF16, qShape), lse(DType::F32, rowShape),
      delta(DType::F32, rowShape), dQ(DType::BF16, qShape),
      dK(DType::BF16, kShape), dV(DType::BF16, kShape);

  RunOptions options;
  options.shuffleBlocks = config.shuffleBlocks;
  options.seed = config.blockOrderSeed.value_or(config.seed);
  start = Clock::now();
  if (auto err = (*fwd)->run("attn_fwd", {&Q, &K, &V, &O, &lse}, options))
    return std::move(err);
  if (auto err = (*pre)->run("attn_bwd_preprocess", {&O, &dO, &delta}, options))
    return std::move(err);
  if (auto err = (*bwd)->run("attn_bwd",
                             {&Q, &K, &V, &dO, &lse, &delta, &dQ, &dK, &dV},
                             options))
    return std::move(err);
  run.runSeconds = std::chrono::duration<double>(Clock::now() - start).count();

  run.O = toDoubles(O);
  run.lse = toDoubles(lse);
  run.dQ = toDoubles(dQ);
  run.dK = toDoubles(dK);
  run.dV = toDoubles(dV);
  run.reference = attention(sh, q, k, v, dout);
  return run;
}

} // namespace tilec::reference
