"""Print pip constraints pinning every direct dependency to its declared lower bound.

`.ci/test` installs the package with these constraints into a throwaway venv and runs a core
subset of the tests, so a lower bound in pyproject.toml that does not work fails CI.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


def constraints(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    # The runtime dependencies and every extra a user installs (dev is the test tooling).
    deps = [*project["dependencies"], *(d for k, v in extras.items() if k != "dev" for d in v)]
    out = []
    for dep in deps:
        match = re.match(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$", dep)
        assert match, dep
        name, spec = match.group(1), match.group(3)
        bound = re.search(r"(>=|==)\s*([0-9][^,;\s]*)", spec)
        if bound is None:
            sys.exit(f"{dep}: no lower bound")
        out.append(f"{name}=={bound.group(2)}")
    return out


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    print("\n".join(constraints(root / "pyproject.toml")))
