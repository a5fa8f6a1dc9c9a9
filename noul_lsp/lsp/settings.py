"""Settings as editors send them, turned into the engine's `Settings`.

VS Code sends its contributed settings as a `noul` section, flat (`{"noul": {"limit": 20, "model": ...,
"useGpu": false}}`); Neovim users usually pass the tree directly (`{index = {...}, search = {...}}`).
Both shapes, and a mix, are accepted. Problems come back as messages, never as a failed request.
"""

from __future__ import annotations

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
#: keys that belong to the editor client, not to the server
CLIENT_KEYS = frozenset({"serverPath", "server_path", "serverCommand", "cmd", "python", "pythonPath", "trace"})


def settings_from_client(raw: Any) -> tuple[Settings, list[str]]:
    if raw is None:
        return parse_settings({})
    if not isinstance(raw, Mapping):
        settings, problems = parse_settings({})
        return settings, [f"settings must be an object, got {raw!r}; using defaults"]
    section = raw.get("noul", raw)
    if not isinstance(section, Mapping):
        settings, problems = parse_settings({})
        return settings, [f"settings.noul must be an object, got {section!r}; using defaults"]
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
    return parse_settings(tree)
