"""Typed, defaulted settings for the engine, the CLI and the language server.

Settings arrive as loose mappings (editor JSON, CLI flags). `parse_settings` turns one into a `Settings`
tree and never fails: a value of the wrong type or out of range is reported in the returned problems and
the default is kept, so a typo in an editor's settings cannot stop the server from starting.
Keys may be camelCase (VS Code) or snake_case (Neovim, Python).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, get_args, get_origin, get_type_hints

#: Folders that hold vendored, generated or environment code nobody searches for by description.
DEFAULT_EXCLUDES: tuple[str, ...] = (
    "node_modules/", ".git/", ".hg/", ".svn/", ".venv/", "venv/", "__pycache__/", ".mypy_cache/",
    ".pytest_cache/", ".tox/", ".nox/", "site-packages/", "dist/", "build/", "target/", ".next/",
    "*.min.js", "*.min.css", "*.map", "*.lock", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml",
    "go.sum", "Package.resolved", "packages.lock.json", ".terraform.lock.hcl", ".terraform/", "*.tfstate",
    "*.tfstate.backup", "*.pyc",
    "*.svg", "*.csv", "*.tsv", "*.jsonl", "*.parquet", "*.pb", "*.onnx", "*.safetensors",
    # translation catalogs: thousands of msgid/msgstr pairs that repeat the code's strings
    "*.po", "*.pot", "*.mo",
    # well-known third-party libraries copied into a tree (as GitHub linguist's vendor list)
    "jquery*.js", "underscore*.js", "bootstrap*.js", "bootstrap*.css", "d3*.js", "modernizr*.js", "*-bundle.js",
    # what a game engine writes beside the assets (Godot's import settings and `.uid` files, its cache folder) and
    # 3D models exported as text: a quarter of godot-demo-projects' chunks, numbers and paths, every one embedded
    ".godot/", "*.import", "*.uid", "*.obj", "*.mtl", "*.dae", "*.gltf", "*.fbx", "*.ply", "*.stl",
    # and Unity's importer settings, a `.meta` beside every asset (a GUID and numbers: a quarter of two Unity projects'
    # chunks, and a texture's `.meta` first for the material that uses the texture)
    "*.meta",
    # IDE project files: Visual Studio's and Xcode's generated lists of sources and build settings (a fifth of
    # raylib's chunks)
    "*.vcxproj", "*.vcxproj.filters", "*.vcxproj.user", "*.sln", "*.pbxproj", "*.xcworkspacedata",
)


@dataclass(frozen=True)
class IndexSettings:
    """What gets indexed and how it is cut into chunks."""

    max_file_bytes: int = 1_000_000
    exclude: tuple[str, ...] = ()
    use_default_excludes: bool = True
    #: A definition longer than this (characters) is split; ~2x the embedder's token budget for code.
    chunk_max_chars: int = 1800
    #: Line windows for files with no grammar (and for splitting long definitions).
    window_lines: int = 40
    window_overlap: int = 8
    #: Tokens of each chunk the embedder sees (header first, then code). Longer text is truncated.
    #: 128 embeds ~1.6x faster than 256 with no loss on the dev bench once the ranking stage runs
    #: (docs/benchmarks.md), and a workspace is searchable by its dense leg that much sooner.
    token_budget: int = 128
    embed_batch: int = 32
    #: Glob patterns embedded last (their BM25 entries are searchable at once regardless).
    embed_last: tuple[str, ...] = ("tests/", "test/", "testing/", "docs/", "doc/", "examples/", "example/", "*.md",
                                   "*.mdx", "*.rst", "*.txt")


@dataclass(frozen=True)
class SearchSettings:
    """How a query is answered."""

    limit: int = 10
    mode: str = "files"
    #: k of reciprocal rank fusion: larger flattens the head of each ranking.
    rrf_k: int = 60
    #: How many chunks each retriever contributes to fusion.
    candidates: int = 200
    #: A long query (an issue text) is embedded as at most this many windows of the token budget. Two
    #: windows ranked issue texts as well as four on the dev bench (SWE-bench Lite Acc@5 0.827 vs 0.808,
    #: Verified 0.726 vs 0.750, Acc@1 level) and embed the query in 40 ms instead of 73 (p50, 2 cores)
    query_windows: int = 2
    #: Weights of a file's best, second and third chunk in its file score.
    file_chunk_weights: tuple[float, ...] = (1.0, 0.05, 0.02)
    #: Fused chunks the cross-encoder re-scores (when a reranker is configured).
    rerank_shortlist: int = 20
    #: At most this many chunks of one file in the short list; 0 = no cap (the plain top of the fusion).
    #: One per file brings the most gold files to the reranker on every dev label file (docs/benchmarks.md).
    rerank_per_file: int = 1
    #: Tokens of query + chunk the cross-encoder reads (clipped to the model's limit). noul's reranker was
    #: trained at 160; 20 pairs of 160 tokens took 595 ms p50 on 2 AMD EPYC cores (docs/benchmarks.md).
    rerank_max_length: int = 160
    rerank_batch: int = 16


@dataclass(frozen=True)
class ModelSettings:
    """Which models run, and where. Empty names fall back to the workspace's `noul models use` choice,
    then to the defaults: the bundled embedder and no reranker ("none" turns a chosen reranker off)."""

    embedder: str = ""
    reranker: str = ""
    #: the static model that gives every chunk a dense vector at once, while the transformer (`embedder`)
    #: fills in behind it: "" = the bundled one, "none" = no static leg
    static: str = ""
    use_gpu: bool = True


@dataclass(frozen=True)
class TeamSettings:
    """A team's shared store (PostgreSQL + pgvector); off unless a connection is given."""

    #: a libpq URL or keyword string; "" = $NOUL_SHARED_STORE, and without it no shared store
    shared_store: str = ""
    #: search the organisation index of the shared store as one more root (the repositories one is granted)
    org: bool = False


@dataclass(frozen=True)
class Settings:
    index: IndexSettings = field(default_factory=IndexSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    team: TeamSettings = field(default_factory=TeamSettings)
    #: Where indexes live; empty means the user's cache dir ($XDG_CACHE_HOME/noul).
    cache_dir: str = ""


_CHOICES = {("SearchSettings", "mode"): ("files", "chunks")}
#: the smallest value that works, per setting (0 tokens or a 0-byte cap would silently index nothing)
_MINIMUMS = {("IndexSettings", "max_file_bytes"): 1, ("IndexSettings", "chunk_max_chars"): 100,
             ("IndexSettings", "window_lines"): 1, ("IndexSettings", "token_budget"): 8,
             ("IndexSettings", "embed_batch"): 1, ("SearchSettings", "limit"): 1, ("SearchSettings", "rrf_k"): 1,
             ("SearchSettings", "candidates"): 1, ("SearchSettings", "query_windows"): 1,
             ("SearchSettings", "rerank_max_length"): 8, ("SearchSettings", "rerank_batch"): 1}
#: the most results one find returns, as a setting or a request's `limit` (lsp/protocol.py checks requests)
MAX_FIND_LIMIT = 1000
_MAXIMUMS = {("SearchSettings", "limit"): MAX_FIND_LIMIT}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = get_origin(hint)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"{where} must be true or false, got {value!r}")
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where} must be an integer, got {value!r}")
        if value < 0:
            raise ValueError(f"{where} must not be negative, got {value}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where} must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{where} must be a string, got {value!r}")
        return value
    if origin is tuple:
        (item_hint, *_rest) = get_args(hint)
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ValueError(f"{where} must be a list, got {value!r}")
        return tuple(_coerce(v, item_hint, f"{where}[{i}]") for i, v in enumerate(value))
    raise TypeError(f"unsupported setting type {hint!r}")


def _parse_section(cls: type, raw: Any, path: str, problems: list[str]) -> Any:
    if raw is None:
        return cls()
    if not isinstance(raw, Mapping):
        problems.append(f"{path or 'settings'} must be an object, got {raw!r}; using defaults")
        return cls()
    hints = get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = _snake(str(key))
        where = f"{path}.{key}" if path else str(key)
        if name not in known:
            problems.append(f"unknown setting {where!r} ignored")
            continue
        hint = hints[name]
        if dataclasses.is_dataclass(hint):
            values[name] = _parse_section(hint, value, where, problems)
            continue
        try:
            coerced = _coerce(value, hint, where)
        except ValueError as error:
            problems.append(f"{error}; using the default")
            continue
        minimum = _MINIMUMS.get((cls.__name__, name))
        if minimum is not None and coerced < minimum:
            problems.append(f"{where} must be at least {minimum}, got {coerced}; using the default")
            continue
        maximum = _MAXIMUMS.get((cls.__name__, name))
        if maximum is not None and coerced > maximum:
            problems.append(f"{where} must be at most {maximum}, got {coerced}; using the default")
            continue
        choices = _CHOICES.get((cls.__name__, name))
        if choices and coerced not in choices:
            problems.append(f"{where} must be one of {', '.join(choices)}, got {coerced!r}; using the default")
            continue
        values[name] = coerced
    return cls(**values)


def parse_settings(raw: Mapping[str, Any] | None) -> tuple[Settings, list[str]]:
    """Build `Settings` from a loose mapping; returns the settings and human-readable problems."""
    problems: list[str] = []
    settings = _parse_section(Settings, raw or {}, "", problems)
    return settings, problems


def with_overrides(settings: Settings, **sections: Mapping[str, Any]) -> Settings:
    """A copy of `settings` with some fields of its sections replaced (CLI flags use this)."""
    replaced = {name: dataclasses.replace(getattr(settings, name), **values) for name, values in sections.items() if values}
    return dataclasses.replace(settings, **replaced)
