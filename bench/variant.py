"""A copy of a kernel directory with module-level constants of kernel.py overridden (an @tune parameter,
say), for A/B measurements in one GPU run. Prints the copy's path.

    python bench/variant.py KERNEL_DIR NAME=VALUE [NAME=VALUE ...]

The constants are kernel.py's, or those of the file VARIANT_FILE names.
"""

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path


def variant(kernel_dir: Path, overrides: list[str]) -> Path:
    copy = Path(tempfile.mkdtemp()) / "kernel"
    shutil.copytree(kernel_dir, copy)
    source = copy / os.environ.get("VARIANT_FILE", "kernel.py")
    text = source.read_text()
    for override in overrides:
        name, value = override.split("=", 1)
        # the constant's own line: a value, then a comment or nothing (not prose that starts with the name)
        text, count = re.subn(rf"^{name} = [^\s#]+(?=\s*(#.*)?$)", f"{name} = {value}", text, flags=re.M)
        if count != 1:
            raise SystemExit(f"no constant {name} in {kernel_dir}/{source.name}")
    source.write_text(text)
    return copy


if __name__ == "__main__":
    print(variant(Path(sys.argv[1]), sys.argv[2:]))
