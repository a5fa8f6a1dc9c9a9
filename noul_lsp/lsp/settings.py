"""Settings as editors send them, turned into the engine's `Settings`.

VS Code sends its contributed settings as a `noul` section, flat (`{"noul": {"limit": 20, "model": ...,
"useGpu": false}}`); Neovim users usually pass the tree directly (`{index = {...}, search = {...}}`).
Both shapes, and a mix, are accepted. Problems come back as messages, never as a failed request.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

from noul_lsp.config import Settings, parse_settings

#: flat editor keys -> (section, field) of the settings tree
FLAT_KEYS = {
    "limit": ("search", "limit"), "mode": ("search", "mode"),
    "model": ("models", "embedder"), "embedder": ("models", "embedder"), "reranker": ("models", "reranker"),
    "staticModel": ("models", "static"), "static": ("models", "static"),
    "useGpu": ("models", "use_gpu"), "use_gpu": ("models", "use_gpu"),
    "exclude": ("index", "exclude"), "excludes": ("index", "exclude"),
    "maxFileBytes": ("index", "max_file_bytes"), "tokenBudget": ("index", "token_budget"),
    "sharedStore": ("team", "shared_store"), "org": ("team", "org"),
}
#: keys that belong to the editor client, not to the server (VS Code sends its whole `noul` section on a
#: change: `searchDelay` is the live picker's debounce)
CLIENT_KEYS = frozenset({"serverPath", "server_path", "serverCommand", "cmd", "python", "pythonPath", "trace",
                         "searchDelay"})


def settings_from_client(raw: Any, base: Any = None) -> tuple[Settings, list[str]]:
    """The engine's settings from what a client sent. `base` is what it sent at start (the
    initialization options): a configuration change is laid over it, so a key the change leaves out keeps
    its start value. A Neovim user gives `cacheDir` in `init_options` and the rest in `settings`; without
    the base, the first change of `limit` moved the index to the default cache folder and rebuilt it."""
    tree, problems = _tree(raw)
    start, _ = _tree(base)
    settings, parse_problems = parse_settings(_merged(start, tree))
    if settings.cache_dir:
        # the server's working folder is the editor's choice: a relative folder put indexes wherever that was
        expanded = os.path.expanduser(settings.cache_dir)
        if os.path.isabs(expanded):
            settings = dataclasses.replace(settings, cache_dir=expanded)
        else:
            parse_problems.append(f"cacheDir must be an absolute folder (or start with ~), got {settings.cache_dir!r}; "
                                  "using the default")
            settings = dataclasses.replace(settings, cache_dir="")
    return settings, problems + parse_problems


def _tree(raw: Any) -> tuple[dict[str, Any], list[str]]:
    """The settings tree of a client's message (both shapes, or a mix), and what was wrong with its shape."""
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [f"settings must be an object, got {raw!r}; using defaults"]
    section = raw.get("noul", raw)
    if not isinstance(section, Mapping):
        return {}, [f"settings.noul must be an object, got {section!r}; using defaults"]
    tree: dict[str, Any] = {}
    for key, value in section.items():
        if key in CLIENT_KEYS:
            continue
        if key in FLAT_KEYS:
            group, name = FLAT_KEYS[key]
            tree.setdefault(group, {})
            if isinstance(tree[group], dict):
                tree[group][name] = value
        elif isinstance(value, Mapping) and isinstance(tree.get(key), dict):
            tree[key] = {**value, **tree[key]}
        else:
            tree[key] = value
    return tree, []


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` laid on `base`, section by section."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged
