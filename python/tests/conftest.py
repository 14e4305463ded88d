import os
import sys
from pathlib import Path

# The package from the source tree (python/), and the build tree's tilec unless the caller chose one.
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
if "TILEC_EXECUTABLE" not in os.environ and (ROOT / "build" / "bin" / "tilec").exists():
    os.environ["TILEC_EXECUTABLE"] = str(ROOT / "build" / "bin" / "tilec")
