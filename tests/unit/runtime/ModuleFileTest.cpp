// .tcm module files: round trip, and every kind of damage is an error naming it (no GPU needed).
#include "TempDir.h"
#include "tilec/runtime/Error.h"
#include "tilec/runtime/ModuleFile.h"
#include "tilec/runtime/PlanText.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace tilec::runtime;

namespace {

ModuleFileContents sample() {
  ModuleFileContents c;
  auto cubin = std::make_shared<Cubin>();
  cubin->image = {'\x7f', 'E', 'L', 'F', '\n', '\0', 'x'}; // bytes of any value, newlines included
  cubin->arch = "sm_90a";
  c.cubins.push_back(cubin);
  EntrySpec e;
  e.name = "scale";
  e.signature = Signature({ParamSpec{"X", DType::F32, {"N", 64}}});
  LaunchStep step;
  step.function = "scale_main";
  step.grid = {Expr::parse("ceildiv(dim(0, 0), 64)"), Expr(1), Expr(1)};
  step.block = {128, 1, 1};
  step.args = {KernelArg::tensor(0), KernelArg::i64(Expr::dim(0, 0))};
  e.plan.launch(step);
  c.entries.push_back(e);
  return c;
}

std::string errorOf(const std::string &bytes) {
  try {
    readModuleFile(bytes, "m.tcm");
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("a module file round-trips CUBINs and entries", "[modulefile]") {
  std::string bytes = writeModuleFile(sample());
  CHECK(bytes.rfind("tilec-module 1\ncubin sm_90a 7 ", 0) == 0);
  ModuleFileContents back = readModuleFile(bytes);
  REQUIRE(back.cubins.size() == 1);
  CHECK(back.cubins[0]->image == sample().cubins[0]->image);
  CHECK(back.cubins[0]->arch == "sm_90a");
  CHECK(printPlan(back.entries) == printPlan(sample().entries));
  // Loading builds a Module without touching a driver.
  tilec::testing::TempDir dir;
  std::string path = dir.path() + "/m.tcm";
  std::ofstream(path, std::ios::binary) << bytes;
  auto module = loadModuleFile(path);
  CHECK(module->entry("scale").plan().steps().size() == 1);
}

TEST_CASE("damaged module files are refused with the reason", "[modulefile]") {
  std::string good = writeModuleFile(sample());
  CHECK(errorOf("").find("not a tilec module file") != std::string::npos);
  CHECK(errorOf("tilec-plan 1\n").find("no 'tilec-module' header") != std::string::npos);
  CHECK(errorOf("tilec-module 2\n").find("version 2 is not supported") != std::string::npos);
  std::string flipped = good;
  flipped[good.find("ELF")] = 'X';
  CHECK(errorOf(flipped).find("CUBIN #0 section is damaged") != std::string::npos);
  std::string planFlipped = good;
  planFlipped[good.find("scale_main")] = 'S';
  CHECK(errorOf(planFlipped).find("plan section is damaged") != std::string::npos);
  CHECK(errorOf(good.substr(0, good.size() / 2)).find("truncated") != std::string::npos);
  CHECK(errorOf(good + "junk").find("unexpected data after the plan section") != std::string::npos);
  std::string badSize = good;
  badSize.replace(badSize.find("cubin sm_90a 7"), 14, "cubin sm_90a x");
  CHECK(errorOf(badSize).find("bad section size 'x'") != std::string::npos);
  CHECK_THROWS_WITH(loadModuleFile("/nonexistent/m.tcm"), Catch::Contains("cannot open module file"));
}
