#include "tilec/runtime/Module.h"
#include "tilec/runtime/Arch.h"

#include "tilec/runtime/Error.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <limits>

namespace tilec::runtime {

namespace {

constexpr std::size_t kMaxKernelArgs = 64;
constexpr std::int64_t kDefaultSharedLimit = 48 * 1024;
constexpr std::int64_t kMaxGridX = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxGridYZ = 65535;

} // namespace

// Per-context state: the CUmodules of every CUBIN and, per launch step, its CUfunction and how much dynamic shared
// memory it has been opted in to.
struct Module::Loaded {
  cu::Device device = 0;
  int sharedOptinLimit = 0;
  std::vector<cu::ModuleHandle> modules;
  struct Function {
    cu::Function handle = nullptr;
    // Raised only under optInMutex (monotonic); read without it on the fast path.
    std::atomic<std::int64_t> sharedOptedIn{kDefaultSharedLimit};
    std::mutex optInMutex;
  };
  std::map<const LaunchStep *, Function> functions;
};

Entry::Entry(const Module &module, EntrySpec spec) : module_(&module), spec_(std::move(spec)) {
  const Signature &signature = spec_.signature;
  auto lookup = [&](const std::string &name) { return signature.findDim(name); };
  auto where = [&](std::size_t step) { return fmt::format("entry '{}', plan step {}", spec_.name, step); };
  std::vector<int> state(spec_.plan.workspaceCount(), 0); // 0: not yet allocated, 1: live, 2: freed
  std::vector<PlanStep> &steps = spec_.plan.steps();
  for (std::size_t s = 0; s < steps.size(); ++s) {
    auto workspace = [&](int id, const char *use) -> int & {
      if (id < 0 || id >= static_cast<int>(state.size()))
        throw PlanError(fmt::format("{}: {} of unknown workspace {}", where(s), use, id));
      return state[id];
    };
    if (auto *alloc = std::get_if<AllocStep>(&steps[s])) {
      alloc->bytes.bindSymbols(lookup);
      int &st = workspace(alloc->workspace, "allocation");
      if (st != 0)
        throw PlanError(fmt::format("{}: workspace {} allocated twice", where(s), alloc->workspace));
      st = 1;
    } else if (auto *free = std::get_if<FreeStep>(&steps[s])) {
      int &st = workspace(free->workspace, "free");
      if (st != 1)
        throw PlanError(fmt::format("{}: free of workspace {} which is not live", where(s), free->workspace));
      st = 2;
    } else {
      auto &launch = std::get<LaunchStep>(steps[s]);
      if (launch.cubin < 0 || launch.cubin >= static_cast<int>(module.cubins().size()))
        throw PlanError(fmt::format("{}: kernel '{}' refers to CUBIN {}, but the module has {}", where(s),
                                    launch.function, launch.cubin, module.cubins().size()));
      for (Expr &extent : launch.grid)
        extent.bindSymbols(lookup);
      launch.dynamicSharedBytes.bindSymbols(lookup);
      unsigned threads = launch.block[0] * launch.block[1] * launch.block[2];
      if (threads == 0 || threads > 1024)
        throw PlanError(fmt::format("{}: kernel '{}' has a block of {} threads (must be 1..1024)", where(s),
                                    launch.function, threads));
      if (launch.args.size() > kMaxKernelArgs)
        throw PlanError(fmt::format("{}: kernel '{}' takes {} arguments, more than {}", where(s), launch.function,
                                    launch.args.size(), kMaxKernelArgs));
      for (KernelArg &arg : launch.args) {
        if (arg.kind == KernelArg::Kind::TensorData &&
            (arg.index < 0 || arg.index >= static_cast<int>(signature.params().size())))
          throw PlanError(fmt::format("{}: kernel '{}' passes argument #{}, but the signature has {}", where(s),
                                      launch.function, arg.index, signature.params().size()));
        if (arg.kind == KernelArg::Kind::Workspace && workspace(arg.index, "use") != 1)
          throw PlanError(fmt::format("{}: kernel '{}' uses workspace {}, which is not live there", where(s),
                                      launch.function, arg.index));
        arg.value.bindSymbols(lookup);
      }
    }
  }
  for (std::size_t id = 0; id < state.size(); ++id)
    if (state[id] == 1)
      throw PlanError(fmt::format("entry '{}': workspace {} is never freed", spec_.name, id));
}

TensorView Entry::viewOf(std::size_t index, const DLTensor &tensor) const {
  const std::vector<ParamSpec> &params = spec_.signature.params();
  std::string name = index < params.size() ? params[index].name : "";
  try {
    return TensorView::fromDLPack(tensor);
  } catch (const ArgumentError &) {
    throw;
  } catch (const Error &error) {
    throw ArgumentError(name, fmt::format("entry '{}', argument #{}{}: {}", spec_.name, index,
                                          name.empty() ? "" : " '" + name + "'", error.what()));
  }
}

TensorView Entry::viewOf(std::size_t index, const DLTensor *tensor) const {
  if (!tensor) {
    const std::vector<ParamSpec> &params = spec_.signature.params();
    std::string name = index < params.size() ? params[index].name : "";
    throw ArgumentError(name, fmt::format("entry '{}', argument #{}{}: null DLTensor pointer", spec_.name, index,
                                          name.empty() ? "" : " '" + name + "'"));
  }
  return viewOf(index, *tensor);
}

void Entry::check(const TensorView *args, std::size_t count) const { spec_.signature.check(spec_.name, args, count); }

std::vector<ResolvedStep> Entry::resolve(const TensorView *args, std::size_t count) const {
  check(args, count);
  std::vector<ResolvedStep> resolved;
  resolved.reserve(spec_.plan.steps().size());
  for (const PlanStep &step : spec_.plan.steps()) {
    if (const auto *alloc = std::get_if<AllocStep>(&step)) {
      std::int64_t bytes = alloc->bytes.evaluate(args, count);
      if (bytes < 0)
        throw PlanError(fmt::format("entry '{}': workspace {} size '{}' evaluates to {} bytes", spec_.name,
                                    alloc->workspace, alloc->bytes.toString(), bytes));
      ResolvedStep out{};
      out.kind = ResolvedStep::Kind::Alloc;
      out.workspace = alloc->workspace;
      out.bytes = bytes;
      out.zeroFill = alloc->zeroFill;
      resolved.push_back(std::move(out));
    } else if (const auto *free = std::get_if<FreeStep>(&step)) {
      ResolvedStep out{};
      out.kind = ResolvedStep::Kind::Free;
      out.workspace = free->workspace;
      resolved.push_back(std::move(out));
    } else {
      const auto &launch = std::get<LaunchStep>(step);
      ResolvedStep out{};
      out.kind = ResolvedStep::Kind::Launch;
      out.launch = &launch;
      for (int axis = 0; axis < 3; ++axis) {
        std::int64_t extent = launch.grid[axis].evaluate(args, count);
        std::int64_t limit = axis == 0 ? kMaxGridX : kMaxGridYZ;
        if (extent < 0 || extent > limit)
          throw PlanError(fmt::format("entry '{}', kernel '{}': grid.{} = '{}' evaluates to {}, outside 0..{}",
                                      spec_.name, launch.function, "xyz"[axis], launch.grid[axis].toString(),
                                      extent, limit));
        out.grid[axis] = extent;
      }
      out.dynamicSharedBytes = launch.dynamicSharedBytes.evaluate(args, count);
      if (out.dynamicSharedBytes < 0)
        throw PlanError(fmt::format("entry '{}', kernel '{}': dynamic shared memory evaluates to {} bytes",
                                    spec_.name, launch.function, out.dynamicSharedBytes));
      // Scalar arguments here, not while launching: a value out of range must fail before the first enqueue.
      for (std::size_t i = 0; i < launch.args.size(); ++i) {
        const KernelArg &arg = launch.args[i];
        if (arg.kind != KernelArg::Kind::I32 && arg.kind != KernelArg::Kind::I64)
          continue;
        std::int64_t value = arg.value.evaluate(args, count);
        if (arg.kind == KernelArg::Kind::I32 &&
            (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max()))
          throw PlanError(fmt::format("entry '{}', kernel '{}': i32 argument {} = '{}' is {}, out of range",
                                      spec_.name, launch.function, i, arg.value.toString(), value));
        out.scalars.push_back(value);
      }
      resolved.push_back(out);
    }
  }
  return resolved;
}

void Entry::launch(cu::Stream stream, const TensorView *args, std::size_t count) const {
  std::vector<ResolvedStep> steps = resolve(args, count);
  Driver &driver = module_->driver();
  const DriverApi &api = driver.api();
  Module::Loaded &loaded = module_->loadedForCurrentContext();
  if (count > 0 && args[0].device().ordinal != loaded.device)
    throw ArgumentError(spec_.signature.params()[0].name,
                        fmt::format("entry '{}': arguments are on cuda:{}, but the current CUDA context is on "
                                    "device {}",
                                    spec_.name, args[0].device().ordinal, loaded.device));

  // Everything that can fail does so before the first enqueue: the shared-memory limit is the device's, known now.
  for (const ResolvedStep &step : steps)
    if (step.kind == ResolvedStep::Kind::Launch && step.dynamicSharedBytes > loaded.sharedOptinLimit)
      throw PlanError(fmt::format("entry '{}', kernel '{}': needs {} bytes of dynamic shared memory, the device "
                                  "allows at most {}",
                                  spec_.name, step.launch->function, step.dynamicSharedBytes,
                                  loaded.sharedOptinLimit));

  // The workspace pool too (created on first use, where a bad $TILEC_WORKSPACE_CACHE_BYTES is reported).
  cu::MemoryPool pool = spec_.plan.workspaceCount() > 0 ? driver.workspacePool(loaded.device) : nullptr;

  // Workspaces still live when a step fails are released on the stream, so a failed launch leaks nothing.
  struct Workspaces {
    const DriverApi &api;
    cu::Stream stream;
    std::vector<cu::DevicePtr> pointers;
    ~Workspaces() {
      for (cu::DevicePtr pointer : pointers)
        if (pointer)
          api.cuMemFreeAsync(pointer, stream);
    }
  } workspaces{api, stream, std::vector<cu::DevicePtr>(spec_.plan.workspaceCount(), 0)};

  for (const ResolvedStep &step : steps) {
    switch (step.kind) {
    case ResolvedStep::Kind::Alloc: {
      cu::DevicePtr &pointer = workspaces.pointers[step.workspace];
      // cuMemAllocFromPoolAsync rejects 0 bytes; an empty workspace still gets a valid (1-byte) pointer.
      std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(step.bytes, 1));
      driver.check(api.cuMemAllocFromPoolAsync(&pointer, bytes, pool, stream),
                   "cuMemAllocFromPoolAsync");
      if (step.zeroFill)
        driver.check(api.cuMemsetD8Async(pointer, 0, bytes, stream), "cuMemsetD8Async");
      break;
    }
    case ResolvedStep::Kind::Free: {
      cu::DevicePtr &pointer = workspaces.pointers[step.workspace];
      driver.check(api.cuMemFreeAsync(pointer, stream), "cuMemFreeAsync");
      pointer = 0;
      break;
    }
    case ResolvedStep::Kind::Launch: {
      const LaunchStep &launch = *step.launch;
      if (step.grid[0] == 0 || step.grid[1] == 0 || step.grid[2] == 0)
        break; // empty problem (a zero dim): nothing to do
      Module::Loaded::Function &function = loaded.functions.at(&launch);
      if (step.dynamicSharedBytes > function.sharedOptedIn.load()) {
        // Check, set and record under one lock, and only ever upwards: two launches needing different sizes used to
        // race, and the recorded size could end above the driver's attribute (every later large launch failing).
        std::lock_guard<std::mutex> lock(function.optInMutex);
        if (step.dynamicSharedBytes > function.sharedOptedIn.load()) {
          driver.check(api.cuFuncSetAttribute(function.handle, cu::kFuncAttributeMaxDynamicSharedSizeBytes,
                                              static_cast<int>(step.dynamicSharedBytes)),
                       "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
          function.sharedOptedIn.store(step.dynamicSharedBytes);
        }
      }
      std::uint64_t storage[kMaxKernelArgs];
      void *params[kMaxKernelArgs];
      std::size_t scalar = 0;
      for (std::size_t i = 0; i < launch.args.size(); ++i) {
        const KernelArg &arg = launch.args[i];
        params[i] = &storage[i];
        switch (arg.kind) {
        case KernelArg::Kind::TensorData:
          storage[i] = reinterpret_cast<std::uintptr_t>(args[arg.index].data());
          break;
        case KernelArg::Kind::Workspace:
          storage[i] = workspaces.pointers[arg.index];
          break;
        case KernelArg::Kind::I32: { // evaluated and range-checked by resolve()
          std::int32_t narrow = static_cast<std::int32_t>(step.scalars[scalar++]);
          std::memcpy(&storage[i], &narrow, sizeof narrow);
          break;
        }
        case KernelArg::Kind::I64: {
          std::int64_t value = step.scalars[scalar++];
          std::memcpy(&storage[i], &value, sizeof value);
          break;
        }
        }
      }
      driver.check(api.cuLaunchKernel(function.handle, static_cast<unsigned>(step.grid[0]),
                                      static_cast<unsigned>(step.grid[1]), static_cast<unsigned>(step.grid[2]),
                                      launch.block[0], launch.block[1], launch.block[2],
                                      static_cast<unsigned>(step.dynamicSharedBytes), stream, params, nullptr),
                   launch.function.c_str());
      break;
    }
    }
  }
}

Module::Module(std::vector<std::shared_ptr<const Cubin>> cubins, std::vector<EntrySpec> entries,
               std::string driverLibrary)
    : cubins_(std::move(cubins)), driverLibrary_(std::move(driverLibrary)) {
  for (std::size_t i = 0; i < cubins_.size(); ++i)
    if (!cubins_[i] || cubins_[i]->image.empty())
      throw PlanError(fmt::format("module CUBIN {} is empty", i));
  for (EntrySpec &spec : entries) {
    for (const auto &existing : entries_)
      if (existing->name() == spec.name)
        throw PlanError(fmt::format("module has two entries named '{}'", spec.name));
    entries_.emplace_back(new Entry(*this, std::move(spec)));
  }
}

Module::~Module() {
  if (!driver_)
    return;
  for (auto &[context, loaded] : loaded_)
    for (cu::ModuleHandle handle : loaded->modules)
      driver_->api().cuModuleUnload(handle); // best effort: the context may already be gone at exit
}

const Entry &Module::entry(const std::string &name) const {
  std::string names;
  for (const auto &entry : entries_) {
    if (entry->name() == name)
      return *entry;
    names += (names.empty() ? "" : ", ") + entry->name();
  }
  throw Error(fmt::format("module has no entry '{}' (entries: {})", name, names));
}

Driver &Module::driver() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!driver_)
    driver_ = Driver::load(driverLibrary_);
  return *driver_;
}

FunctionAttributes Module::functionAttributes(const std::string &function) const {
  Loaded &loaded = loadedForCurrentContext();
  Driver &driver = this->driver();
  const DriverApi &api = driver.api();
  for (cu::ModuleHandle handle : loaded.modules) {
    cu::Function found = nullptr;
    if (api.cuModuleGetFunction(&found, handle, function.c_str()) != 0 || !found)
      continue; // not in this CUBIN
    FunctionAttributes attributes;
    auto get = [&](int &value, int attribute, const char *call) {
      driver.check(api.cuFuncGetAttribute(&value, attribute, found), call);
    };
    get(attributes.registers, cu::kFuncAttributeNumRegs, "cuFuncGetAttribute(NUM_REGS)");
    get(attributes.localBytesPerThread, cu::kFuncAttributeLocalSizeBytes, "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
    get(attributes.staticSharedBytes, cu::kFuncAttributeSharedSizeBytes, "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    get(attributes.maxThreadsPerBlock, cu::kFuncAttributeMaxThreadsPerBlock,
        "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
    return attributes;
  }
  throw Error(fmt::format("no CUBIN of the module has a kernel named '{}'", function));
}

Module::Loaded &Module::loadedForCurrentContext() const {
  Driver &driver = this->driver();
  cu::Context context = driver.currentContext();
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto found = loaded_.find(context); found != loaded_.end())
    return *found->second;
  const DriverApi &api = driver.api();
  auto loaded = std::make_unique<Loaded>();
  driver.check(api.cuCtxGetDevice(&loaded->device), "cuCtxGetDevice");
  driver.check(api.cuDeviceGetAttribute(&loaded->sharedOptinLimit, cu::kDeviceAttributeMaxSharedMemoryPerBlockOptin,
                                        loaded->device),
               "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
  // A CUBIN the device cannot run would fail in cuModuleLoadData with NO_BINARY_FOR_GPU, which names neither the
  // device nor what to do: refuse it here, before anything is loaded or launched.
  auto [major, minor] = driver.computeCapability(loaded->device);
  for (const auto &cubin : cubins_)
    if (std::optional<ArchName> arch = parseArch(cubin->arch, "sm_"); arch && !cubinRunsOn(*arch, major, minor))
      throw Error(fmt::format("the module's CUBIN for {} cannot run on this GPU (compute capability {}.{}, {}); build "
                              "it for the GPU (CompileOptions::arch, tilec --arch, or TILEC_CUDA_ARCH)",
                              cubin->arch, major, minor, driver.deviceArch(loaded->device)));
  try {
    for (const auto &cubin : cubins_) {
      cu::ModuleHandle handle = nullptr;
      driver.check(api.cuModuleLoadData(&handle, cubin->image.data()),
                   fmt::format("cuModuleLoadData (CUBIN for {})", cubin->arch).c_str());
      loaded->modules.push_back(handle);
    }
    for (const auto &entry : entries_)
      for (const PlanStep &step : entry->plan().steps())
        if (const auto *launch = std::get_if<LaunchStep>(&step)) {
          cu::Function function = nullptr;
          driver.check(api.cuModuleGetFunction(&function, loaded->modules[launch->cubin], launch->function.c_str()),
                       fmt::format("cuModuleGetFunction('{}')", launch->function).c_str());
          loaded->functions[launch].handle = function;
        }
  } catch (...) {
    for (cu::ModuleHandle handle : loaded->modules)
      api.cuModuleUnload(handle);
    throw;
  }
  return *loaded_.emplace(context, std::move(loaded)).first->second;
}

} // namespace tilec::runtime
