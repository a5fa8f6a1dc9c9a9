"""The names a workspace's project goes by: what people call it when they describe its code.

A description that names the project ("why does pytest rewrite asserts in conftest files") is strong
evidence that the answer is in that project's workspace, and a description that names another project is
evidence against; P(here) uses it (retrieval/calibrate.py). Names come from what the tree says about itself,
never from running anything: the folder name, the top-level Python packages (`src/` layouts included,
leading underscores dropped: `_pytest` -> `pytest`), and the name in pyproject.toml, setup.cfg,
package.json, Cargo.toml or go.mod.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib
from pathlib import Path

#: folder-name words that say nothing about the project
_GENERIC = frozenset({"main", "master", "trunk", "develop", "repo", "code", "work", "project", "source", "workspace",
                      "tests", "test", "docs", "examples", "scripts", "tools", "utils", "build", "dist", "vendor"})
_MIN_LENGTH = 4


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if len(w) >= _MIN_LENGTH and w not in _GENERIC
            and not w.isdigit()}


def _declared_name(root: Path) -> set[str]:
    names: set[str] = set()
    try:
        if (root / "pyproject.toml").is_file():
            data = tomllib.loads((root / "pyproject.toml").read_text("utf-8", errors="replace"))
            names.add(str(data.get("project", {}).get("name", "") or data.get("tool", {}).get("poetry", {}).get("name", "")))
        if (root / "setup.cfg").is_file():
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string((root / "setup.cfg").read_text("utf-8", errors="replace"))
            names.add(parser.get("metadata", "name", fallback=""))
        if (root / "package.json").is_file():
            data = json.loads((root / "package.json").read_text("utf-8", errors="replace"))
            names.add(str(data.get("name", "")) if isinstance(data, dict) else "")
        if (root / "Cargo.toml").is_file():
            names.add(str(tomllib.loads((root / "Cargo.toml").read_text("utf-8", errors="replace")).get("package", {})
                          .get("name", "")))
        if (root / "go.mod").is_file():
            first = (root / "go.mod").read_text("utf-8", errors="replace").split("\n", 1)[0]
            if first.startswith("module "):
                names.add(first.split()[-1].rsplit("/", 1)[-1])
    except (OSError, ValueError, configparser.Error, tomllib.TOMLDecodeError):
        pass  # a broken manifest only loses a name
    return {word for name in names for word in _words(name)}


def _packages(root: Path) -> set[str]:
    found: set[str] = set()
    for base in (root, root / "src", root / "lib"):
        try:
            children = list(base.iterdir()) if base.is_dir() else []
        except OSError:
            continue
        for child in children:
            if child.is_dir() and not child.is_symlink() and (child / "__init__.py").is_file():
                found |= _words(child.name.lstrip("_"))
    return found


def project_names(root: Path) -> frozenset[str]:
    """Lower-case words (4+ letters) that name the project at `root`."""
    root = Path(root)
    return frozenset(_words(root.name) | _declared_name(root) | _packages(root))
