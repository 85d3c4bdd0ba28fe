"""The per-file cache of a module's imports (`transpiler.loading.module_imports_of`):
reused while the file is unchanged, read again after an edit."""
from __future__ import annotations

import os

from transpiler.loading import module_imports_of


def _bound(module) -> list[str]:
    return [alias.asname or alias.name for node in module.body for alias in node.names]


def _write(path, text: str, mtime_ns: int) -> None:
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_only_top_level_imports_are_kept(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import numpy as np\nfrom math import pi\n\n\ndef f(x):\n"
                    "    import os\n    return np.sin(x) * pi\n")
    assert _bound(module_imports_of(str(path))) == ["np", "pi"]


def test_an_unchanged_file_is_parsed_once(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import numpy as np\n")
    assert module_imports_of(str(path)) is module_imports_of(str(path))


def test_an_edit_is_seen_by_its_time_or_its_size(tmp_path):
    path = tmp_path / "mod.py"
    start = os.stat(tmp_path).st_mtime_ns
    _write(path, "import numpy as np\n", start)
    assert _bound(module_imports_of(str(path))) == ["np"]
    _write(path, "import numpy as xp\n", start + 10**9)          # same size, newer
    assert _bound(module_imports_of(str(path))) == ["xp"]
    _write(path, "import numpy as xp\nimport math\n", start + 10**9)   # same time, longer
    assert _bound(module_imports_of(str(path))) == ["xp", "math"]


def test_a_missing_or_broken_file_gives_none(tmp_path):
    assert module_imports_of(str(tmp_path / "missing.py")) is None
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    assert module_imports_of(str(broken)) is None
