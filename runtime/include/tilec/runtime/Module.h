// A loaded module: CUBINs plus named entries, each a signature and a launch plan.
//
// A Module is created without touching the driver; the CUBINs are loaded into the current CUDA context on the
// first launch there (one CUmodule per context). Argument checks (Entry::check) and plan evaluation
// (Entry::resolve) need no GPU at all.
#pragma once

#include "tilec/runtime/Compiler.h"
#include "tilec/runtime/Driver.h"
#include "tilec/runtime/LaunchPlan.h"
#include "tilec/runtime/Signature.h"
#include "tilec/runtime/TensorView.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>


namespace tilec::runtime {

struct EntrySpec {
  std::string name;
  Signature signature;
  LaunchPlan plan;
};

// A plan step with every expression evaluated for one set of arguments.
struct ResolvedStep {
  enum class Kind : std::uint8_t { Alloc, Launch, Free };
  Kind kind;
  int workspace = -1;            // Alloc / Free
  std::int64_t bytes = 0;        // Alloc
  bool zeroFill = false;         // Alloc
  const LaunchStep *launch = nullptr;
  std::array<std::int64_t, 3> grid{};
  std::int64_t dynamicSharedBytes = 0;
  std::vector<std::int64_t> scalars; // Launch: each i32 / i64 kernel argument's value, in argument order (i32 checked)
};

class Module;

// A kernel's resources as the driver reports them for the loaded CUBIN (cuFuncGetAttribute): unlike the ptxas log
// (Cubin::ptxasInfo), always there, also for CUBINs that NVRTC served from the CUDA compute cache or that came from
// a module file.
struct FunctionAttributes {
  int registers = 0;           // per thread
  int localBytesPerThread = 0; // local memory: spill slots and stack frame; non-zero usually means spills
  int staticSharedBytes = 0;
  int maxThreadsPerBlock = 0;  // what the register count allows
};

// What Entry::launch(stream, args...) accepts as an argument.
template <typename T>
constexpr bool isLaunchArgument = std::is_same_v<T, TensorView> || std::is_same_v<T, DLTensor> ||
                                  std::is_same_v<T, DLTensor *> || std::is_same_v<T, const DLTensor *>;

class Entry {
public:
  const std::string &name() const { return spec_.name; }
  const Signature &signature() const { return spec_.signature; }
  const LaunchPlan &plan() const { return spec_.plan; }

  // Throws ArgumentError when an argument does not fit the signature. Needs no GPU.
  void check(const TensorView *args, std::size_t count) const;
  void check(std::initializer_list<TensorView> args) const { check(args.begin(), args.size()); }
  // Checks the arguments and evaluates every step's sizes, grid and scalar kernel arguments. Throws ArgumentError /
  // PlanError (a grid extent that is not in 0..2^31-1 for x or 0..65535 for y and z, a negative workspace size, an
  // i32 argument out of range). Needs no GPU. launch() also checks, before enqueueing anything, each step's dynamic
  // shared memory against the device's limit.
  std::vector<ResolvedStep> resolve(const TensorView *args, std::size_t count) const;
  std::vector<ResolvedStep> resolve(std::initializer_list<TensorView> args) const {
    return resolve(args.begin(), args.size());
  }

  // Checks, then runs the plan on `stream` (asynchronously, stream-ordered workspace allocation). Nothing is
  // enqueued when the check fails. Throws NoDriverError when no CUDA driver can be loaded.
  void launch(cu::Stream stream, const TensorView *args, std::size_t count) const;
  void launch(cu::Stream stream, std::initializer_list<TensorView> args) const {
    launch(stream, args.begin(), args.size());
  }
  // launch(stream, a, b, c) with TensorView, DLTensor or DLTensor* arguments.
  template <typename... Args, typename = std::enable_if_t<(isLaunchArgument<Args> && ...)>>
  void launch(cu::Stream stream, const Args &...args) const {
    std::size_t index = 0;
    TensorView views[] = {viewOf(index++, args)...}; // braced lists evaluate left to right
    launch(stream, views, sizeof...(Args));
  }

private:
  friend class Module;
  Entry(const Module &module, EntrySpec spec);
  // Argument #index as a view; a DLTensor tilec cannot take is an ArgumentError naming the parameter.
  TensorView viewOf(std::size_t, const TensorView &view) const { return view; }
  TensorView viewOf(std::size_t index, const DLTensor &tensor) const;
  TensorView viewOf(std::size_t index, const DLTensor *tensor) const;

  const Module *module_;
  EntrySpec spec_;
};

class Module {
public:
  // Validates the plans against the signatures and CUBINs (kernel indices, workspace ids used before allocation or
  // after free, unknown dim names) and throws PlanError on the first problem. `driverLibrary` is what launches load.
  Module(std::vector<std::shared_ptr<const Cubin>> cubins, std::vector<EntrySpec> entries,
         std::string driverLibrary = Driver::defaultLibraryPath());
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  const Entry &entry(const std::string &name) const; // throws Error listing the entries when absent
  const std::vector<std::unique_ptr<Entry>> &entries() const { return entries_; }
  const std::vector<std::shared_ptr<const Cubin>> &cubins() const { return cubins_; }

  // The loaded driver (loading it on first use). Throws NoDriverError.
  Driver &driver() const;

  // The attributes of kernel `function` (its extern "C" name) in the current context, loading the CUBINs there if
  // needed. Throws NoDriverError without a driver, Error when no CUBIN of the module has that kernel.
  FunctionAttributes functionAttributes(const std::string &function) const;

private:
  friend class Entry;
  struct Loaded; // CUmodules and CUfunctions for one context
  Loaded &loadedForCurrentContext() const;

  std::vector<std::shared_ptr<const Cubin>> cubins_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::string driverLibrary_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<Driver> driver_;
  mutable std::map<cu::Context, std::unique_ptr<Loaded>> loaded_;
};

} // namespace tilec::runtime
