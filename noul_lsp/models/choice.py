"""Which models a workspace uses, as chosen with `noul models use` (kept in the cache, never in the tree).

Settings given by an editor or a flag win; the choice fills in what they leave empty; the defaults fill
in the rest. A change of embedder never mixes vectors: vectors are keyed by model and token budget, so
the new model's vectors are computed lazily beside the old ones, which stay for a switch back.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the value that turns the reranker off even when a choice names one
NO_RERANKER = "none"


@dataclass(frozen=True)
class ModelChoice:
    embedder: str = ""
    reranker: str = ""


def _choices_file(cache: Path) -> Path:
    return cache / "workspace-models.json"


def _read(cache: Path) -> dict[str, dict[str, str]]:
    path = _choices_file(cache)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ValueError(f"{path} is unreadable ({error}); delete it to forget every `noul models use`") from error
    return data if isinstance(data, dict) else {}


def workspace_choice(root: Path, cache: Path) -> ModelChoice:
    entry = _read(cache).get(str(Path(root).resolve()), {})
    return ModelChoice(str(entry.get("embedder", "")), str(entry.get("reranker", "")))


def set_workspace_choice(root: Path, cache: Path, *, embedder: str | None = None,
                         reranker: str | None = None) -> ModelChoice:
    """Record the models of `root`; None leaves a field as it was, "" forgets it. Written atomically."""
    choices = _read(cache)
    key = str(Path(root).resolve())
    entry = dict(choices.get(key, {}))
    for name, value in (("embedder", embedder), ("reranker", reranker)):
        if value is None:
            continue
        if value:
            entry[name] = value
        else:
            entry.pop(name, None)
    if entry:
        choices[key] = entry
    else:
        choices.pop(key, None)
    cache.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=cache, prefix=".workspace-models.")
    with os.fdopen(handle, "w") as out:
        json.dump(choices, out, indent=2, sort_keys=True)
    os.replace(temporary, _choices_file(cache))
    return ModelChoice(entry.get("embedder", ""), entry.get("reranker", ""))
