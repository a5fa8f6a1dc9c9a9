"""The grammars we chunk with, and which syntax nodes count as definitions in each.

Grammars come from the per-language wheels (tree-sitter-python, ...), which ship compiled grammars and
need no network; tree-sitter-language-pack 1.x would download them at first use. A grammar that fails to
load (missing wheel, ABI mismatch) only sends its files to the line-window fallback.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter


@dataclass(frozen=True)
class LanguageSpec:
    name: str
    module: str
    entry: str
    extensions: tuple[str, ...]
    #: node type -> kind reported for the chunk
    definitions: dict[str, str]
    #: definitions whose members are chunked on their own when the whole is too large
    containers: frozenset[str] = frozenset()
    #: wrapper node type -> field holding the real definition (None: first named child that is one)
    wrappers: dict[str, str | None] = field(default_factory=dict)
    #: `const f = () => {}` style declarations count as functions
    variable_functions: bool = False


_JS_DEFINITIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
}
_TS_DEFINITIONS = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
}
_TS_CONTAINERS = frozenset({"class_declaration", "abstract_class_declaration", "interface_declaration", "internal_module"})

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        LanguageSpec("python", "tree_sitter_python", "language", (".py", ".pyi"),
                     {"function_definition": "function", "class_definition": "class"},
                     frozenset({"class_definition"}), {"decorated_definition": "definition"}),
        LanguageSpec("javascript", "tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx"),
                     _JS_DEFINITIONS, frozenset({"class_declaration"}), {"export_statement": "declaration"},
                     variable_functions=True),
        LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts"),
                     _TS_DEFINITIONS, _TS_CONTAINERS, {"export_statement": "declaration"}, variable_functions=True),
        LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx", (".tsx",),
                     _TS_DEFINITIONS, _TS_CONTAINERS, {"export_statement": "declaration"}, variable_functions=True),
        LanguageSpec("go", "tree_sitter_go", "language", (".go",),
                     {"function_declaration": "function", "method_declaration": "method", "type_declaration": "type"}),
        LanguageSpec("rust", "tree_sitter_rust", "language", (".rs",),
                     {"function_item": "function", "impl_item": "impl", "struct_item": "struct", "enum_item": "enum",
                      "trait_item": "trait", "mod_item": "module", "macro_definition": "macro", "union_item": "union"},
                     frozenset({"impl_item", "trait_item", "mod_item"})),
        LanguageSpec("java", "tree_sitter_java", "language", (".java",),
                     {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
                      "record_declaration": "record", "annotation_type_declaration": "annotation",
                      "method_declaration": "method", "constructor_declaration": "constructor"},
                     frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"})),
        LanguageSpec("c", "tree_sitter_c", "language", (".c", ".h"),
                     {"function_definition": "function", "struct_specifier": "struct", "enum_specifier": "enum",
                      "type_definition": "type"}),
        LanguageSpec("cpp", "tree_sitter_cpp", "language", (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
                     {"function_definition": "function", "class_specifier": "class", "struct_specifier": "struct",
                      "namespace_definition": "namespace", "enum_specifier": "enum"},
                     frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
                     {"template_declaration": None}),
        LanguageSpec("ruby", "tree_sitter_ruby", "language", (".rb", ".rake"),
                     {"method": "method", "singleton_method": "method", "class": "class", "module": "module"},
                     frozenset({"class", "module"})),
    )
}

_BY_EXTENSION = {ext: spec for spec in LANGUAGES.values() for ext in spec.extensions}


def language_for_path(path: str) -> LanguageSpec | None:
    """The grammar for a path by its extension, or None for plain text."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _BY_EXTENSION.get(path[dot:].lower())


class GrammarUnavailable(RuntimeError):
    pass


@lru_cache(maxsize=None)
def parser_for(name: str) -> tree_sitter.Parser:
    """A parser for the named language; raises GrammarUnavailable with an install hint."""
    spec = LANGUAGES[name]
    try:
        module = importlib.import_module(spec.module)
        language = tree_sitter.Language(getattr(module, spec.entry)())
    except Exception as error:  # ImportError, ABI mismatch (ValueError), missing symbol
        package = spec.module.replace("_", "-")
        raise GrammarUnavailable(f"{name} grammar unavailable ({error}); `pip install {package}`") from error
    return tree_sitter.Parser(language)
