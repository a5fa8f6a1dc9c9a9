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


def _pyproject_name(text: str) -> str:
    data = tomllib.loads(text)
    return data.get("project", {}).get("name", "") or data.get("tool", {}).get("poetry", {}).get("name", "")


def _setup_cfg_name(text: str) -> str:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser.get("metadata", "name", fallback="")


def _go_module_name(text: str) -> str:
    first = text.split("\n", 1)[0]
    return first.split()[-1].rsplit("/", 1)[-1] if first.startswith("module ") else ""


#: manifest file -> how to read the project's name from its text
_MANIFESTS = {
    "pyproject.toml": _pyproject_name,
    "setup.cfg": _setup_cfg_name,
    "package.json": lambda text: (json.loads(text) if text.strip().startswith("{") else {}).get("name", ""),
    "Cargo.toml": lambda text: tomllib.loads(text).get("package", {}).get("name", ""),
    "go.mod": _go_module_name,
}


def _declared_name(root: Path) -> set[str]:
    names: set[str] = set()
    for manifest, read_name in _MANIFESTS.items():
        path = root / manifest
        try:
            if path.is_file():
                names |= _words(str(read_name(path.read_text("utf-8", errors="replace")) or ""))
        except (OSError, ValueError, AttributeError, configparser.Error):
            continue  # a broken manifest only loses its own name (TOMLDecodeError is a ValueError)
    return names


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
