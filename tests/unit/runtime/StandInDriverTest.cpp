// Launches against the stand-in driver (StandInDriver.cpp): no GPU needed. Kernel attributes from the driver, and
// concurrent launches of one kernel that need different amounts of dynamic shared memory (a race on the opt-in).
//
// Before the fix, Entry::launch did, without a lock:
//   if (bytes > function.sharedOptedIn) { cuFuncSetAttribute(function, MAX_DYNAMIC_SHARED, bytes);
//                                          function.sharedOptedIn = bytes; }
// Two threads needing 100 KB and 200 KB both pass the check; if the driver applies 200 KB then 100 KB while the
// stores land as 100 KB then 200 KB, the runtime believes 200 KB is opted in while the driver's attribute is 100 KB.
// From then on every 200 KB launch skips cuFuncSetAttribute and fails in cuLaunchKernel until the Module is rebuilt.
// The stand-in driver sleeps a random few microseconds inside cuFuncSetAttribute after applying the value, so over
// many rounds the sets and the stores interleave in every order: with the unlocked sequence this test fails within
// a few rounds (the driver sees the attribute lowered and rejects launches, and in a few percent of the rounds the
// final large launch fails too: checked by reverting the lock locally, 95-141 rejected launches in 60 rounds); with
// the check, set and store under one lock and only upwards, it never does.
#include "TestArtifacts.h"
#include "tilec/runtime/DeviceBuffer.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/Module.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

using namespace tilec::runtime;

namespace {

alignas(256) char gDeviceMemory[256];

// The stand-in library: $TILEC_STAND_IN_DRIVER, else the build tree's, else the one beside this test binary. A GPU
// bundle that does not carry it skips these tests.
std::string standInDriverPath() {
  return tilec::testing::testArtifactPath("TILEC_STAND_IN_DRIVER", TILEC_STAND_IN_DRIVER, "libtilec_stand_in_driver.so");
}

bool haveStandInDriver() {
  if (std::filesystem::exists(standInDriverPath()))
    return true;
  WARN("skipped: no stand-in driver at " << standInDriverPath());
  return false;
}

template <typename Function> Function standInSymbol(const char *name) {
  // The runtime has loaded the library already (Driver::load); dlopen of the same path returns that handle.
  void *handle = dlopen(standInDriverPath().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  void *symbol = dlsym(handle, name);
  REQUIRE(symbol);
  return reinterpret_cast<Function>(symbol);
}

// One kernel whose dynamic shared memory is N KB, N the length of its one argument.
std::unique_ptr<Module> sharedMemoryModule(const std::string &arch = "sm_90a") {
  EntrySpec spec;
  spec.name = "uses_shared";
  spec.signature = Signature({{"x", DType::F32, {"N"}, 4}});
  LaunchStep launch{0, "k", {1, 1, 1}, {32, 1, 1}, Expr::symbol("N") * 1024, {KernelArg::tensor(0)}};
  spec.plan.launch(std::move(launch));
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(spec));
  return std::make_unique<Module>(std::vector<std::shared_ptr<const Cubin>>{std::make_shared<const Cubin>(
                                      Cubin{{'x'}, arch, "", {}})},
                                  std::move(entries), standInDriverPath());
}

void launchWithSharedKb(const Entry &entry, std::int64_t kilobytes) {
  TensorView x(gDeviceMemory, DType::F32, {kilobytes});
  entry.launch(nullptr, {x});
}

} // namespace

TEST_CASE("the stand-in driver enforces the dynamic shared memory attribute", "[driver][race]") {
  if (!haveStandInDriver())
    return;
  auto module = sharedMemoryModule();
  const Entry &entry = module->entry("uses_shared");
  auto rejected = standInSymbol<long (*)()>("tilecStandInRejectedLaunches");
  long before = rejected();
  launchWithSharedKb(entry, 40);  // under 48 KB: no opt-in needed
  launchWithSharedKb(entry, 200); // opted in by the runtime
  CHECK(rejected() == before);
  // Beyond the device's opt-in limit: refused by the runtime before anything reaches the driver.
  CHECK_THROWS_WITH(launchWithSharedKb(entry, 228), Catch::Contains("the device allows at most 232448"));
}

TEST_CASE("a CUBIN the GPU cannot run is refused by name before anything is loaded or launched", "[driver]") {
  if (!haveStandInDriver())
    return;
  auto launches = standInSymbol<long (*)()>("tilecStandInLaunches");
  // The stand-in is a compute capability 9.0 GPU: sm_90 and sm_90a run there; the driver would refuse the others
  // with NO_BINARY_FOR_GPU, which names neither the GPU nor what to do.
  for (const char *arch : {"sm_90a", "sm_90"}) {
    auto module = sharedMemoryModule(arch);
    long before = launches();
    CHECK_NOTHROW(launchWithSharedKb(module->entry("uses_shared"), 1));
    CHECK(launches() == before + 1);
  }
  for (const char *arch : {"sm_100a", "sm_80", "sm_89", "sm_91", "sm_100f", "sm_120"}) {
    INFO(arch);
    auto module = sharedMemoryModule(arch);
    long before = launches();
    CHECK_THROWS_WITH(launchWithSharedKb(module->entry("uses_shared"), 1),
                      Catch::Contains(std::string("the module's CUBIN for ") + arch +
                                      " cannot run on this GPU (compute capability 9.0, sm_90a)") &&
                          Catch::Contains("TILEC_CUDA_ARCH"));
    CHECK(launches() == before);
  }
}

TEST_CASE("concurrent launches opt a kernel in to dynamic shared memory atomically and monotonically",
          "[driver][race]") {
  if (!haveStandInDriver())
    return;
  auto rejected = standInSymbol<long (*)()>("tilecStandInRejectedLaunches");
  auto lowered = standInSymbol<long (*)()>("tilecStandInLoweredAttributes");
  auto setAttributeDelay = standInSymbol<void (*)(int)>("tilecStandInSetAttributeDelay");
  const long rejectedBefore = rejected();
  const long loweredBefore = lowered();
  setAttributeDelay(200);

  const std::int64_t sizesKb[] = {64, 100, 150, 200, 227, 120};
  constexpr int kRounds = 200;
  int failedLaunches = 0;
  int failedFinalLaunches = 0;
  for (int round = 0; round < kRounds; ++round) {
    auto module = sharedMemoryModule(); // a fresh function: opted in to 48 KB only
    const Entry &entry = module->entry("uses_shared");
    launchWithSharedKb(entry, 1);       // loads the module outside the race
    std::atomic<int> ready{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (std::int64_t kb : sizesKb)
      threads.emplace_back([&, kb] {
        ready.fetch_add(1);
        while (ready.load() < static_cast<int>(std::size(sizesKb)))
          std::this_thread::yield();
        try {
          launchWithSharedKb(entry, kb);
        } catch (const DriverError &) {
          failures.fetch_add(1);
        }
      });
    for (std::thread &thread : threads)
      thread.join();
    failedLaunches += failures.load();
    // After the race every size up to the largest must still launch: the recorded opt-in never exceeds the
    // driver's attribute.
    try {
      launchWithSharedKb(entry, 227);
      launchWithSharedKb(entry, 200);
    } catch (const DriverError &) {
      ++failedFinalLaunches;
    }
  }
  setAttributeDelay(0);
  CHECK(failedLaunches == 0);
  CHECK(failedFinalLaunches == 0);
  CHECK(rejected() == rejectedBefore);
  CHECK(lowered() == loweredBefore); // the attribute only ever goes up
}

TEST_CASE("kernel registers and local memory come from the driver, not the ptxas log", "[driver]") {
  if (!haveStandInDriver())
    return;
  auto module = sharedMemoryModule(); // its Cubin has an empty log: ptxasInfo knows nothing
  REQUIRE_FALSE(module->cubins()[0]->ptxasInfo("k"));
  FunctionAttributes attributes = module->functionAttributes("k");
  CHECK(attributes.registers == 80); // the stand-in driver's figures
  CHECK(attributes.localBytesPerThread == 24);
  CHECK(attributes.staticSharedBytes == 4096);
  CHECK(attributes.maxThreadsPerBlock == 768);
  CHECK_THROWS_WITH(module->functionAttributes("missing_kernel"),
                    Catch::Contains("no CUBIN of the module has a kernel named 'missing_kernel'"));
}

TEST_CASE("DeviceBuffer allocates, copies both ways, moves and frees", "[driver][buffer]") {
  if (!haveStandInDriver())
    return;
  std::shared_ptr<Driver> driver = Driver::load(standInDriverPath());
  auto live = standInSymbol<long (*)()>("tilecStandInLiveAllocations");
  const long before = live();
  {
    DeviceBuffer buffer(*driver, 4 * sizeof(float));
    CHECK(live() == before + 1);
    CHECK(buffer.bytes() == 16);
    buffer.upload(std::vector<float>{1, 2, 3, 4});
    CHECK(buffer.download<float>() == std::vector<float>{1, 2, 3, 4});
    float three = 0;
    buffer.download(&three, sizeof three, 2 * sizeof(float));
    CHECK(three == 3);
    CHECK_THROWS_WITH(buffer.upload(std::vector<float>{1, 2}), Catch::Contains("8 bytes given for a 16-byte buffer"));
    CHECK_THROWS_WITH(buffer.download(&three, 8, 12), Catch::Contains("leave the 16-byte buffer"));
    CHECK_THROWS_WITH(buffer.upload(&three, 1, SIZE_MAX), Catch::Contains("leave the 16-byte buffer"));

    TensorView view = buffer.view(DType::F32, {2, 2});
    CHECK(view.data() == buffer.data());
    CHECK_THROWS_AS(buffer.view(DType::F32, {5}), ArgumentError);

    DeviceBuffer moved = std::move(buffer);
    CHECK(buffer.data() == nullptr);
    CHECK(moved.download<float>() == std::vector<float>{1, 2, 3, 4});
    moved = DeviceBuffer(*driver, 0); // the old memory is freed; an empty buffer still has a pointer
    CHECK(moved.data() != nullptr);
    CHECK(live() == before + 1);
  }
  CHECK(live() == before); // nothing leaks
}

TEST_CASE("workspaces come from tilec's own pool, which keeps freed memory until asked to release it",
          "[driver][pool]") {
  if (!haveStandInDriver())
    return;
  EntrySpec spec;
  spec.name = "with_workspace";
  spec.signature = Signature({{"x", DType::F32, {"N"}, 4}});
  int workspace = spec.plan.alloc(Expr::symbol("N") * 4, /*zeroFill=*/true);
  spec.plan.launch(LaunchStep{0, "k", {1, 1, 1}, {32, 1, 1}, Expr(0), {KernelArg::workspace(workspace)}});
  spec.plan.free(workspace);
  std::vector<EntrySpec> entries;
  entries.push_back(std::move(spec));
  Module module(std::vector<std::shared_ptr<const Cubin>>{std::make_shared<const Cubin>(Cubin{{'x'}, "sm_90a", "", {}})},
                std::move(entries), standInDriverPath());
  const Entry &entry = module.entry("with_workspace");
  auto poolsCreated = standInSymbol<long (*)()>("tilecStandInPoolsCreated");
  auto poolAllocations = standInSymbol<long (*)()>("tilecStandInPoolAllocations");
  auto poolTrims = standInSymbol<long (*)()>("tilecStandInPoolTrims");
  auto threshold = standInSymbol<unsigned long long (*)()>("tilecStandInPoolReleaseThreshold");

  const long allocationsBefore = poolAllocations();
  TensorView x(gDeviceMemory, DType::F32, {16});
  entry.launch(nullptr, {x});
  entry.launch(nullptr, {x});
  CHECK(poolAllocations() == allocationsBefore + 2);
  CHECK(poolsCreated() == 1); // one pool per device for the process, whatever the number of launches or modules
  if (!std::getenv("TILEC_WORKSPACE_CACHE_BYTES"))
    CHECK(threshold() == UINT64_MAX); // freed workspaces stay reserved across synchronizations

  const long trimsBefore = poolTrims();
  Driver::load(standInDriverPath())->releaseCachedWorkspaces();
  CHECK(poolTrims() == trimsBefore + 1);
}

TEST_CASE("TILEC_WORKSPACE_CACHE_BYTES sets the workspace pool's release threshold", "[driver][pool]") {
  const char *saved = std::getenv("TILEC_WORKSPACE_CACHE_BYTES");
  std::string savedValue = saved ? saved : "";
  unsetenv("TILEC_WORKSPACE_CACHE_BYTES");
  CHECK(Driver::workspaceCacheBytes() == UINT64_MAX);
  setenv("TILEC_WORKSPACE_CACHE_BYTES", "0", 1);
  CHECK(Driver::workspaceCacheBytes() == 0);
  setenv("TILEC_WORKSPACE_CACHE_BYTES", "1073741824", 1);
  CHECK(Driver::workspaceCacheBytes() == 1073741824ull);
  for (const char *bad : {"-1", "1GB", "abc", "99999999999999999999999"}) {
    setenv("TILEC_WORKSPACE_CACHE_BYTES", bad, 1);
    CHECK_THROWS_WITH(Driver::workspaceCacheBytes(), Catch::Contains("is not a byte count"));
  }
  if (saved)
    setenv("TILEC_WORKSPACE_CACHE_BYTES", savedValue.c_str(), 1);
  else
    unsetenv("TILEC_WORKSPACE_CACHE_BYTES");
}
