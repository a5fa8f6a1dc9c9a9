"""Apple's property lists, Android's XML resources, TOML, git's config and Unity's assets: windows named by the
keys they set.

An app's settings live in these files, and a mobile developer asks for them by their keys: `aps-environment`
(push notifications' entitlement), `UIBackgroundModes`, `CFBundleURLSchemes` in an `Info.plist`; a string
resource's `feature_bookmarks_removed`; a permission the manifest asks for. As windows named nothing, a key
asked for by name was "probably not here" (P(here) 0.00 for `aps-environment`, its file second) while every
Swift or Kotlin symbol was 0.99. A Gradle version catalog (`gradle/libs.versions.toml`) is asked for by its
aliases and by the accessors the build scripts write (`androidxComposeBom`, `libs.plugins.nowinandroid.hilt`), a
TOML file elsewhere by its keys' paths (`tool.ruff.line-length`); git's config by its sections' keys
(`alias.fp`); a Unity scene, prefab or asset by the objects it serialises (`m_Name`). The windows stay (these
files are flat enough); each is named by the keys in it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from itertools import islice

from noul_lsp.chunking.blocks import row_finder
from noul_lsp.chunking.chunk import MAX_NAMES, Chunk
from noul_lsp.chunking.text import chunk_lines, text_language

PROPERTY_LIST_SUFFIXES = (".plist", ".entitlements")
TOML_SUFFIXES = (".toml",)
#: a property list's key: `<key>UIBackgroundModes</key>`
_PLIST_KEY = re.compile(r"<key>\s*([^<>\s][^<>]*?)\s*</key>")
#: an Android resource's name (`<string name="feature_bookmarks_removed">`, a colour, a dimension, a style) and a
#: permission a manifest declares or asks for (`<uses-permission android:name="android.permission.CAMERA"/>`;
#: not its activities and services: classes the code defines)
_ANDROID_NAME = re.compile(
    r"<(?:string|plurals|string-array|integer-array|array|color|dimen|bool|integer|style|attr|declare-styleable"
    r"|uses-permission|permission)\b[^>]*?\b(?:android:)?name"
    r"\s*=\s*\"([\w.$:-]+)\"", re.DOTALL)


#: a TOML table's header (`[tool.ruff]`, `[[bin]]`) and a key at the margin (`line-length = 120`, `"a.b" = 1`)
_TOML_TABLE = re.compile(r"\[\[?\s*([^\]\s][^\]]*?)\s*\]\]?\s*(?:#.*)?")
_TOML_KEY = re.compile(r"([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*|\"[^\"\n]+\")\s*=")
#: a version catalog's tables, by the accessor prefix Gradle gives their aliases (`libs.versions.room`)
_CATALOG_ACCESSORS = {"versions": "libs.versions.", "libraries": "libs.", "plugins": "libs.plugins.",
                      "bundles": "libs.bundles."}
#: a catalog's plugin id (`{ id = "nowinandroid.android.room" }`)
_PLUGIN_ID = re.compile(r"\bid\s*=\s*\"([\w.-]+)\"")


def chunk_toml(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A TOML file's windows, each named by its keys' paths; a Gradle version catalog's in windows of half the
    lines (an alias, its accessor and a plugin's id are names: a window of 40 would pass `MAX_NAMES`)."""
    catalog = path.endswith(".versions.toml")
    windows = chunk_lines(path, text, language="toml", window_lines=max(window_lines // 2, 1) if catalog
                          else window_lines, overlap=overlap, max_chars=max_chars)  # (at most a quarter overlaps)
    found: list[tuple[str, int]] = []
    table = ""
    for row, line in enumerate(text.split("\n"), start=1):
        if (header := _TOML_TABLE.fullmatch(line.strip())) is not None:
            table = header.group(1).replace(" ", "")
            continue
        key = _TOML_KEY.match(line)
        if key is None:
            continue
        name = key.group(1).strip('"')
        if catalog and table in _CATALOG_ACCESSORS:
            found.append((name, row))
            found.append((_CATALOG_ACCESSORS[table] + re.sub(r"[-_]", ".", name), row))
            if table == "plugins" and (plugin := _PLUGIN_ID.search(line)) is not None:
                found.append((plugin.group(1), row))
        else:
            found.append((f"{table}.{name}" if table else name, row))
    return _named_at(windows, found)


#: an INI file's section (`[alias]`, git's `[remote "origin"]`, EditorConfig's `[*.py]`) and key (`fp = ...`,
#: `indent_style = space`), read on a line's stripped text and from its indent
_INI_SECTION = re.compile(r"\[\s*([^\]\s\"]+)(?:\s+\"([^\"]*)\")?\s*\]\s*(?:[#;].*)?")
_INI_KEY = re.compile(r"\s*([A-Za-z0-9_][\w.-]*)\s*[=:]")
#: git's config (`.gitconfig`, a dotfiles repository's `gitconfig`) and submodules, EditorConfig's. Not the INI files
#: of Python's tools: named by their keys (`xfail_strict`, `addopts`), `setup.cfg` and `tox.ini` defined the options
#: an issue text names, and came above the code that reads them (pytest's 7490, 2nd to 3rd)
INI_SUFFIXES = ("gitconfig", ".gitmodules", ".editorconfig")


def chunk_ini(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """An INI file's windows, each named by its sections and their keys (`alias.fp`, `remote.origin.url`): a
    dotfiles repository's `gitconfig` was one window named nothing, previewed `[init]`, for its force-push
    alias."""
    windows = chunk_lines(path, text, language=text_language(path), window_lines=window_lines, overlap=overlap,
                          max_chars=max_chars)
    found: list[tuple[str, int]] = []
    section = ""
    for row, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if (header := _INI_SECTION.fullmatch(stripped)) is not None:
            section = ".".join(part for part in header.groups() if part)
            found.append((section, row))
        elif (key := _INI_KEY.match(line)) is not None:
            found.append((f"{section}.{key.group(1)}" if section else key.group(1), row))
    return _named_at(windows, found)


#: the files Unity serialises as YAML (scenes, prefabs, ScriptableObject and settings assets, materials,
#: animations, animator controllers, physics materials, presets)
UNITY_SUFFIXES = (".unity", ".prefab", ".asset", ".mat", ".anim", ".controller", ".overridecontroller",
                  ".physicmaterial", ".physicsmaterial2d", ".preset", ".mixer", ".lighting", ".playable", ".mask",
                  ".spriteatlas", ".guiskin", ".fontsettings", ".terrainlayer", ".brush", ".flare", ".rendertexture")
#: the name a Unity object is serialised with (a GameObject's, a material's, an asset's: `m_Name: Agent`)
_UNITY_NAME = re.compile(r"^\s*m_Name:[ \t]*(\S[^\n]*?)[ \t]*$", re.M)


def chunk_unity(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A Unity scene's, prefab's or asset's windows, each named by the objects it serialises (`m_Name`), the
    first its symbol: they were windows named nothing, previewed `%YAML 1.1` / `%TAG !u! ...`, and a question
    about the agent's prefab found `Agent.prefab`'s best chunk 110th in the dense leg."""
    windows = named_by(chunk_lines(path, text, language=text_language(path), window_lines=window_lines,
                                   overlap=overlap, max_chars=max_chars), text, _UNITY_NAME)
    return [replace(window, symbol=window.names[0]) if window.names and not window.symbol else window
            for window in windows]


def chunk_property_list(path: str, text: str, *, window_lines: int, overlap: int, max_chars: int) -> list[Chunk]:
    """A property list's windows, each named by the keys it holds."""
    windows = chunk_lines(path, text, language=text_language(path), window_lines=window_lines, overlap=overlap,
                          max_chars=max_chars)
    return named_by(windows, text, _PLIST_KEY)


def named_by_android_names(windows: list[Chunk], text: str) -> list[Chunk]:
    """An XML file's windows named by the Android resources and manifest entries they declare (none elsewhere)."""
    return named_by(windows, text, _ANDROID_NAME)


def named_by(windows: list[Chunk], text: str, pattern: re.Pattern[str]) -> list[Chunk]:
    """The windows, each with the names `pattern` finds on its lines (its first group), in their order."""
    row_at = row_finder(text)
    return _named_at(windows, [(match.group(1), row_at(match.start()) + 1) for match in pattern.finditer(text)])


def _named_at(windows: list[Chunk], found: list[tuple[str, int]]) -> list[Chunk]:
    """The windows, each with the names found on its rows ((name, 1-based row), in the rows' order)."""
    if not found:
        return windows
    rows = [row for _, row in found]
    return [replace(window, names=tuple(islice(dict.fromkeys(
        (*window.names, *(name for name, _ in found[bisect_left(rows, window.start_line):
                                                        bisect_right(rows, window.end_line)]))), MAX_NAMES)))
            for window in windows]
