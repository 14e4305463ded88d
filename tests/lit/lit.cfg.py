# lit configuration for tilec's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tilec"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tile"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tilec_obj_root, "tests", "lit")

config.substitutions.append(("%tilec_src", config.tilec_src_root))

llvm_config.use_default_substitutions()
# FileCheck, not and count come from LLVM 22's tool dir; PATH has older ones.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tilec_tools_dir, append_path=True)
tools = ["tile-opt", "tilec"]
llvm_config.add_tool_substitutions(
    [t for t in tools if os.path.exists(os.path.join(config.tilec_tools_dir, t))],
    [config.tilec_tools_dir])
llvm_config.add_tool_substitutions(["not", "count", "split-file"],
                                   [config.llvm_tools_dir])
