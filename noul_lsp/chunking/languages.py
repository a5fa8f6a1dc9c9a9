"""The grammars we chunk with, and which syntax nodes count as definitions in each.

Grammars come from the per-language wheels (tree-sitter-python, ...), which ship compiled grammars and
need no network; tree-sitter-language-pack 1.x would download them at first use. A grammar that fails to
load (missing wheel, ABI mismatch) only sends its files to the line-window fallback.

Most grammars mark a definition by its node type. Three do not, and get a `named_definition` function:
Elixir's definitions are calls (`def name(...) do`), Lua's are often assignments of a function
(`M.setup = function(opts)`), and Zig's types are constants bound to a container (`const Parser = struct {`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

from noul_lsp.chunking.rewrites import (
    bash_expansions_blanked,
    bats_rewritten,
    bats_title,
    c_macros_blanked,
    kotlin_joined_heads,
    one_branch_each,
)

#: (the definition node, its kind, its name) for a node that defines something its type does not say
NamedDefinition = Callable[[tree_sitter.Node], "tuple[tree_sitter.Node, str, str] | None"]


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
    #: definitions found by a function of the node rather than by its type (see the module's docstring)
    named_definition: NamedDefinition | None = None
    #: kinds (rather than node types) whose members are chunked on their own when the whole is too large
    container_kinds: frozenset[str] = frozenset()
    #: nodes that belong to the definition below them, as a doc comment does (Elixir's `@doc`, `@spec`)
    leading: frozenset[str] = frozenset()
    #: one name defined by consecutive clauses (Haskell's signature and equations, Elixir's function
    #: heads) is one definition
    clauses: bool = False
    #: C++'s templates: their arguments out of a definition's name (`SkipList<K, C>::Insert` is SkipList's Insert)
    template_names: bool = False
    #: a rewrite of the source before the parse, every row kept where it is, for a shape the grammar misreads
    #: everywhere (rewrites.py)
    before_parse: Callable[[str], str] | None = None
    #: a second reading of a source whose parse has errors (given the rows in error), every row kept where it
    #: is: its tree is kept when fewer rows err (rewrites.py: C's conditionals, bash's expansions)
    reread: Callable[[str, list[tuple[int, int]]], str] | None = None
    #: a definition's node runs on past its code, through the comments up to the next definition
    #: (tree-sitter-scala's indented bodies): it ends at its last code, the comments go to the next
    bodies_overrun: bool = False
    #: declarations of a type's members that are no chunk of their own (a property, a field, a constant, an
    #: enum case): their names are the definitions of the chunk whose lines hold them (`member_names`)
    members: frozenset[str] = frozenset()
    #: a function's or method's overload signatures (TypeScript's `function pick(a: string): string`, bodiless,
    #: above the implementation they type): they and their doc comment belong to the implementation below
    overloads: frozenset[str] = frozenset()
    #: the name a framework gives a top-level definition by its file (`named_by_file(path, symbol)`, None: no
    #: such name): a Django management command is `class Command` in `management/commands/sendalerts.py`,
    #: run and asked for as `sendalerts`
    named_by_file: Callable[[str, str], str | None] | None = None
    #: a second name a definition answers to, read from its own (`also_named(symbol)`, None: none): a Terraform
    #: resource `aws_iam_role.this` is one of its type's, asked for by the type's name (`aws_iam_role`)
    also_named: Callable[[str], str | None] | None = None
    #: a definition's body that the grammar puts beside its head, not in it (tree-sitter-dart's
    #: `method_signature` then `function_body`): it belongs to the definition before it
    detached_bodies: frozenset[str] = frozenset()
    #: the key paths of a file's nested tables as (first row, last row, `defaults.icons.kinds`): a window that
    #: starts inside one is headed by it (code.py), as a definition's windows are by its name
    table_paths: Callable[[tree_sitter.Node], list[tuple[int, int, str]]] | None = None


#: a Django management command's module (`hc/api/management/commands/sendalerts.py`; `_private.py` helpers
#: are no command)
_DJANGO_COMMAND = re.compile(r"(?:^|/)management/commands/([^/_][^/]*)\.py$")


def _django_command(path: str, symbol: str) -> str | None:
    """A Django management command's name: its module's, for its `Command` class (the 21 commands of
    healthchecks were 21 classes named `Command`, and `sendalerts` asked by name was "probably not here")."""
    found = _DJANGO_COMMAND.search(path) if symbol == "Command" else None
    return found.group(1) if found else None


#: Go's type specifications: one of `type X struct{...}`, or each of a `type ( ... )` group
_GO_TYPE_SPECS = frozenset({"type_spec", "type_alias"})


def _go_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """Go's definitions whose names the grammar's fields do not give whole:
    - a method is its receiver's (`func (s *Server[K]) Serve()` is `Server.Serve`): caddy's
      `selectionpolicies.go` held twelve chunks named `Select`, and `Handler.ServeHTTP` asked had no scope
      to match;
    - a `type ( ... )` group of several types is no definition of its own: each of its types is one (the
      group of `MatchHost` ... `MatchNot` was five chunks all named `MatchHost`, and `MatchPath` was defined
      nowhere); a group of one is that type, as `type X struct{...}` is."""
    if node.type == "method_declaration":
        name = node.child_by_field_name("name")
        receiver = _go_receiver(node)
        if name is not None and receiver:
            return node, "method", f"{receiver}.{node_text(name)}"
        return None
    if node.type in _GO_TYPE_SPECS and node.parent is not None and node.parent.type == "type_declaration" \
            and _go_type_specs(node.parent) > 1:
        name = node.child_by_field_name("name")
        return (node, "type", node_text(name)) if name is not None else None
    if node.type == "type_declaration" and _go_type_specs(node) == 1:
        spec = next(c for c in node.named_children if c.type in _GO_TYPE_SPECS)
        name = spec.child_by_field_name("name")
        return (node, "type", node_text(name)) if name is not None else None
    return None  # a group of several: `_collect` reads its types, each a definition of its own


def _go_type_specs(declaration: tree_sitter.Node) -> int:
    """How many types a Go `type` declaration declares (a group's, or one)."""
    return sum(1 for child in declaration.named_children if child.type in _GO_TYPE_SPECS)


#: the nodes of a Go type's declaration, whose head `go_type_body` ends
GO_TYPE_NODES = _GO_TYPE_SPECS | {"type_declaration"}


def go_type_body(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The braces of a Go struct's fields or an interface's methods (`type X struct {` ends its head); None
    for another type (`type B = int`)."""
    spec = node if node.type != "type_declaration" else next(
        (c for c in node.named_children if c.type in _GO_TYPE_SPECS), None)
    typed = spec.child_by_field_name("type") if spec is not None else None
    if typed is None or typed.type not in ("struct_type", "interface_type"):
        return None
    return next((c for c in typed.children if c.type in ("field_declaration_list", "{")), None)


def _go_receiver(method: tree_sitter.Node) -> str:
    """The type a Go method's receiver names, without its pointer or type arguments (`*Server[K, V]` is
    `Server`); "" when there is none to read."""
    receiver = method.child_by_field_name("receiver")
    declaration = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None) \
        if receiver is not None else None
    typed = declaration.child_by_field_name("type") if declaration is not None else None
    while typed is not None and typed.type in ("pointer_type", "generic_type", "parenthesized_type"):
        typed = typed.child_by_field_name("type") or (typed.named_children[0] if typed.named_children else None)
    return node_text(typed) if typed is not None and typed.type == "type_identifier" else ""


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
_TS_OVERLOADS = frozenset({"function_signature", "method_signature"})
#: a class body's decorators are siblings of the method they decorate (`@Input()`, `@Get(':id')`): they and the doc
#: comment above them belong to it (Angular's and NestJS's methods lost both to the class's leftover lines)
_JS_LEADING = frozenset({"decorator"})


def node_text(node: tree_sitter.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


#: the nodes whose member declarations are a type's or a file's (not a function's, a closure's, an `init`
#: block's); a Kotlin primary constructor's `val`s and PHP's promoted constructor parameters are members too,
#: and C's enumerators, its macros at a file's level (in or out of its conditionals), Python's assignments and
#: Go's, Rust's and JavaScript's constants, Go's package variables (`var errNoUpstream = errors.New(...)`) and
#: Rust's enum variants; Ruby's class bodies (a Rails model's associations and scopes) and Java's constants in
#: a class, an interface or an enum
MEMBER_HOLDERS = frozenset({"declaration_list", "enum_member_declaration_list", "class_body", "enum_class_body",
                            "protocol_body", "enum_declaration_list", "source_file", "program", "class_parameters",
                            "formal_parameters", "enumerator_list", "translation_unit", "preproc_ifdef", "preproc_if",
                            "preproc_else", "preproc_elif", "preproc_elifdef", "expression_statement",
                            "const_declaration", "export_statement", "var_declaration", "var_spec_list",
                            "enum_variant_list", "body", "declaration", "enum_body", "body_statement",
                            "interface_body", "enum_body_declarations",
                            "field_declaration_list",  # a C++ class's body (its fields)
                            "source",  # a GDScript file's (its script's members: `var`, `const`, `signal`)
                            "chunk"})  # a Lua file's (its globals)
#: a constant's name in Python and JavaScript (`DEFAULT_TIMEOUT`, `REDIRECT_STATI`), the one assignment that is a
#: member: with every assignment, requests' `help.py` defined `chardet` (`except ImportError: chardet = None`) and
#: came first for an issue naming it (docs/benchmarks.md, "Python's constants")
_CONSTANT_NAME = re.compile(r"_?[A-Z][A-Z0-9_]*[A-Z0-9]\Z")


def _declares_a_field(assignment: tree_sitter.Node) -> bool:
    """A Python class body's field declaration in any case: a value made by a call (Django's `grace =
    models.DurationField(...)`, SQLAlchemy's `Column(...)`, `attr.ib()`) or a typed attribute (a dataclass's
    `timeout: float = 1.0`); not a plain class attribute (`trust_env = True`). A model's fields asked by name
    were "probably not here" (`alert_after`, `ping_log_limit`)."""
    holder = assignment.parent
    body = holder.parent if holder is not None else None
    if body is None or body.type != "block" or body.parent is None or body.parent.type != "class_definition":
        return False
    right = assignment.child_by_field_name("right")
    return assignment.child_by_field_name("type") is not None or (right is not None and right.type == "call")


#: what a member declaration's names are written as, and the nodes that hold them
_NAME_NODES = frozenset({"identifier", "simple_identifier", "name", "variable_name", "type_identifier"})
_DECLARATORS = frozenset({"variable_declaration", "variable_declarator", "const_element", "property_element"})


#: Ruby's calls in a class body that define methods, named by their symbols: Rails' associations, scopes,
#: attachments and enums, the attribute macros, `delegate`, `define_method` (`has_many :stories` is `User.stories`)
_RUBY_DEFINING_CALLS = frozenset({
    "attr_accessor", "attr_reader", "attr_writer", "cattr_accessor", "cattr_reader", "cattr_writer",
    "mattr_accessor", "mattr_reader", "mattr_writer", "class_attribute", "attribute", "has_many", "has_one",
    "belongs_to", "has_and_belongs_to_many", "has_one_attached", "has_many_attached", "has_rich_text",
    "has_secure_token", "scope", "enum", "store_accessor", "delegate", "define_method", "alias_method"})
#: the options of `enum` and `delegate`, no names of theirs
_RUBY_CALL_OPTIONS = frozenset({
    "prefix", "suffix", "scopes", "default", "validate", "instance_methods", "_prefix", "_suffix", "_scopes",
    "_default", "_instance_methods", "to", "allow_nil", "private"})
#: the blocks of a class body that hold more of it: a Rails concern's `included do`, `class_methods do`, `with_options`
_RUBY_CLASS_BODY_BLOCKS = frozenset({"included", "class_methods", "concerning", "with_options", "class_eval"})


def _symbol_text(node: tree_sitter.Node) -> str:
    """`:name`, `name:` or `"name"` as `name`."""
    return node_text(node).strip(":\"'")


def _ruby_defined(call: tree_sitter.Node) -> list[str]:
    """The methods a Ruby class-body call defines (`_RUBY_DEFINING_CALLS`): its symbol arguments (`attr_reader
    :a, :b`), an `enum`'s values too (`enum status: { active: 0 }` defines `active?` and the scope `active`),
    `delegate`'s with their prefix (`prefix: true` on `to: :user` makes `user_name`), the first of
    `alias_method :new, :old`. Lobsters' `User` has 25 associations and scopes that were defined nowhere:
    asked for by name, `User.stories` had no scope."""
    method = call.child_by_field_name("method")
    arguments = call.child_by_field_name("arguments")
    if call.child_by_field_name("receiver") is not None or method is None or arguments is None:
        return []
    verb = node_text(method)
    if verb not in _RUBY_DEFINING_CALLS:
        return []
    held = arguments.named_children
    names = [_symbol_text(a) for a in held if a.type in ("simple_symbol", "string")]
    options = {_symbol_text(p.named_children[0]): p.named_children[-1] for p in held
               if p.type == "pair" and len(p.named_children) == 2}
    if verb == "enum":  # `enum status: { active: 0 }` (Rails < 7), `enum :status, { active: 0 }`, `enum :status,
        # active: 0`: the attribute and its values
        values = [v for v in held if v.type == "hash"] + [v for k, v in options.items() if v.type == "hash"]
        names += [key for key in options if key not in _RUBY_CALL_OPTIONS]
        names += [_symbol_text(p.named_children[0]) for h in values for p in h.named_children
                  if p.type == "pair" and p.named_children]
    if verb == "delegate" and "prefix" in options:
        prefix = options["prefix"]
        target = options.get("to")
        stem = _symbol_text(target) if node_text(prefix) == "true" and target is not None else _symbol_text(prefix)
        names = [f"{stem}_{name}" for name in names] if stem and node_text(prefix) != "false" else names
    return names[:1] if verb == "alias_method" else names


def holds_a_class_body(node: tree_sitter.Node) -> bool:
    """Whether a member's node holds more of its class's body, whose declarations are the class's
    (`_RUBY_CLASS_BODY_BLOCKS`): a Rails concern's associations and scopes are in its `included do`."""
    if node.type != "call" or node.child_by_field_name("receiver") is not None:
        return False
    method = node.child_by_field_name("method")
    return method is not None and node_text(method) in _RUBY_CLASS_BODY_BLOCKS


def member_names(node: tree_sitter.Node) -> list[str]:
    """The names a member declaration declares (`LanguageSpec.members`): C#'s `public int MaxRetryAttempts {
    get; set; }` and `int _count, _max;`, Swift's `case processor(ImageProcessor), cacheOriginalImage` and `var
    sizeLimit`, Kotlin's `val isNullable`, PHP's `public const OPTION_VISIBILITY` and `$location`. Without them
    Polly's 390 properties were defined nowhere, and a property asked by name was "probably not here"."""
    if node.type == "attribute":  # HCL: a `locals` block's `cluster_role = ...` (`local.cluster_role`), and a
        # `.tfvars` file's or a terragrunt.hcl's top-level settings; a resource's own arguments are no names
        block = node.parent.parent if node.parent is not None else None
        head = block.named_children[0] if block is not None and block.type == "block" and block.named_children else None
        named = block is not None and (block.type == "config_file" or (head is not None and node_text(head) == "locals"))
        key = node.named_children[0] if node.named_children else None
        return [node_text(key)] if named and key is not None and key.type == "identifier" else []
    if node.type == "assignment_statement":  # Lua's global at a file's top (its holder, `chunk`; a `local`'s
        # is a `variable_declaration`): a game's tuning (`jumpforce = 16`) and its classes (`lakito =
        # class:new()`) were defined nowhere; not a field (`M.x = 1`)
        held = next((c for c in node.named_children if c.type == "variable_list"), None)
        return [node_text(n) for n in held.children_by_field_name("name") if n.type == "identifier"] if held else []
    if node.type == "class_parameter" and not any(c.type in ("val", "var") for c in node.children):
        return []  # Kotlin's `class A(y: Int)`: a parameter; `class A(val x: Int)` declares a property
    if node.type == "call":  # Ruby's `has_many :stories`, `attr_reader :name`
        return _ruby_defined(node)
    if node.type in _C_DECLARATIONS and (declarators := _c_declarators(node)):
        return [name for name in map(_c_declared, declarators) if name]
    if node.type == "field_declaration" and node.child_by_field_name("declarator") is not None:
        # Java's: a constant (`static final String VIEWS_PETS_CREATE_OR_UPDATE_FORM = ...`, asked for by name, opened
        # at a method using it at P(here) 0.31), not an instance's field (`private final OwnerRepository owners`)
        # (C#'s field has no `declarator` field: its names are read below); a constant by its case too, not a
        # class's `serialVersionUID` or `log`
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        words = set(node_text(modifiers).split()) if modifiers is not None else set()
        names = [n for d in node.children_by_field_name("declarator") for n in member_names(d)]
        return [n for n in names if _CONSTANT_NAME.match(n)] if {"static", "final"} <= words else []
    if node.type == "assignment":  # Python's `TIMEOUT = 30`, `MAX_REDIRECTS: int = 30`, `A, B = 1, 2` (not `x.Y = z`)
        left = node.child_by_field_name("left")
        if left is not None and left.type == "constant":  # Ruby's `MAX_LENGTH = 100` (not `Foo::BAR = 1`)
            return [node_text(left)]
        if left is None or left.type not in ("identifier", "pattern_list", "tuple_pattern"):
            return []
        targets = [left] if left.type == "identifier" else [c for c in left.named_children if c.type == "identifier"]
        field = _declares_a_field(node)
        return [name for name in map(node_text, targets)
                if _CONSTANT_NAME.match(name) or (field and not name.startswith("__"))]
    if node.type in _JS_MEMBERS and node.parent is not None and node.parent.type in ("program", "export_statement"):
        exported = node.parent.type == "export_statement"  # a module's API, whatever its case: `QueryClientContext`
        return [name for declarator in node.named_children if declarator.type == "variable_declarator"
                for name in _bound_names(declarator) if exported or _CONSTANT_NAME.match(name)]
    if node.type in _DART_DECLARED:  # Dart's `final a = 1, b = 2;`, `static const maxRetries = 3;`, `abstract int n;`
        named = [held if held.type == "identifier" else held.named_children[0] for held in node.named_children
                 if held.type == "identifier" or held.named_children and held.named_children[0].type == "identifier"]
        return [text for text in map(node_text, named) if text]  # not a zero-width name the parser made up
    if node.type == "preproc_def" and node.child_by_field_name("value") is None:
        return []  # C's include guard (`#define JV_H`) or a flag: no constant to look up
    named = [n for n in node.children_by_field_name("name") if n.type in _NAME_NODES or n.type == "pattern"]
    if node.type == "typealias_declaration":
        named = named[:1]  # its second `name` is the type it stands for
    if not named:
        held = [c for c in node.named_children if c.type in _DECLARATORS]
        if held:
            return [name for declarator in held for name in member_names(declarator)]
        named = [c for c in node.named_children if c.type in _NAME_NODES][:1]
    names = []
    for name in named:
        if name.type == "pattern":  # Swift's `var sizeLimit` binds the identifier it holds
            name = name.child_by_field_name("bound_identifier") or next(
                (c for c in name.named_children if c.type == "simple_identifier"), name)
        text = node_text(name).lstrip("$").strip("`")  # PHP's `$location`, Swift's `` `default` ``
        if text.isidentifier() and text != "_":  # Go's `B, _ = 1, 2`
            names.append(text)
    return names


#: C's and C++'s declarations that name what they declare: a class's fields (C++'s `field_declaration`), a file's
#: or a namespace's constants and variables (`declaration`); without them leveldb's `kL0_SlowdownWritesTrigger`
#: was "probably not here" and `Options::write_buffer_size` opened at the C API's setter
_C_DECLARATIONS = frozenset({"field_declaration", "declaration"})
#: what a C declaration's declarators are written as (`*name`, `&name`, `name[4]`, `name(...)`, `name = 1`); a
#: qualified name (`int Foo::count = 0;`) defines what a class declared elsewhere
_C_DECLARATOR_NODES = frozenset({"identifier", "field_identifier", "init_declarator", "function_declarator",
                                 "pointer_declarator", "reference_declarator", "array_declarator",
                                 "parenthesized_declarator", "qualified_identifier", "destructor_name",
                                 "operator_name"})


def _c_declarators(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """A C or C++ declaration's declarators, or none where the node is another language's (Java's
    `field_declaration` holds a `variable_declarator`) or declares no name (`struct x;`)."""
    held = node.children_by_field_name("declarator")
    if node.child_by_field_name("type") is None or not held or any(d.type not in _C_DECLARATOR_NODES for d in held):
        return []
    return held


def declarator_chain(declarator: tree_sitter.Node | None) -> Iterator[tree_sitter.Node]:
    """A C declarator and the declarators it holds, outermost first, down to the name it declares: `*name`,
    `&name` (a reference holds its declarator in no field), `name[4]`, `(*name)(void *)`, `name = 1`."""
    while declarator is not None:
        yield declarator
        declarator = declarator.child_by_field_name("declarator") or next(
            (c for c in declarator.named_children if c.type.endswith(("declarator", "identifier"))
             or c.type in ("destructor_name", "operator_name")), None)


def _c_declared(declarator: tree_sitter.Node) -> str:
    """The name a C declarator declares (`static const int kNumLevels = 7` declares `kNumLevels`, `size_t
    write_buffer_size` a field); none for a function's prototype, whose body defines it (named in a class, a
    header's prototype came above the definition in CLI11's `impl/App_inl.hpp` for "the implementation of
    App::add_subcommand"), a qualified name (defined here, declared in its class), a destructor or an operator."""
    for held in declarator_chain(declarator):
        if held.type in ("identifier", "field_identifier"):
            return node_text(held)
        if held.type in ("qualified_identifier", "destructor_name", "operator_name", "function_declarator"):
            return ""
    return ""


#: the nodes of a destructuring pattern that bind a name (`{ a, b: c, ...rest }`, `[first, second]`)
_BINDING_PATTERNS = frozenset({"object_pattern", "array_pattern", "pair_pattern", "rest_pattern",
                               "object_assignment_pattern", "assignment_pattern"})


def _bound_names(declarator: tree_sitter.Node) -> list[str]:
    """The names a JavaScript declarator binds: its name, or each name its destructuring pattern binds
    (`export const { useQuery, useMutation: useMut } = createHooks()` exports `useQuery` and `useMut`, which
    were defined nowhere)."""
    pattern = declarator.child_by_field_name("name")
    if pattern is None or pattern.type not in _BINDING_PATTERNS:
        return member_names(declarator)
    names, pending = [], [pattern]
    while pending:
        node = pending.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            names.append(node_text(node))
        elif node.type == "pair_pattern":  # `key: bound`: the key is the object's, the value is bound
            pending.extend(c for c in [node.child_by_field_name("value")] if c is not None)
        elif node.type in ("object_assignment_pattern", "assignment_pattern"):  # `a = 1`: its left is bound
            pending.extend(c for c in [node.child_by_field_name("left")] if c is not None)
        elif node.type in _BINDING_PATTERNS:
            pending.extend(reversed(node.named_children))
    return names


_ELIXIR_DEFINITIONS = {
    "defmodule": "module", "defprotocol": "protocol", "defimpl": "impl", "def": "function", "defp": "function",
    "defmacro": "macro", "defmacrop": "macro", "defguard": "function", "defguardp": "function",
    "defdelegate": "function", "test": "test", "describe": "describe",
}


#: a Phoenix router's blocks (`scope "/api", HexpmWeb.API do`, `pipeline :api do`, `live_session :default do`):
#: as the router module's windows, hexpm's `post "/publish"` route was in no find's sixty chunks for "which API
#: route handles publishing a package tarball", and `pipeline :api` named nowhere
_PHOENIX_BLOCKS = {"scope": "scope", "pipeline": "pipeline", "live_session": "scope"}


def _elixir_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`defmodule Name do`, `def name(args) when guard do`, `test "name" do`: a call whose target is one
    of Elixir's defining macros; the name is the first argument's head. And a Phoenix router's `scope`,
    `pipeline` or `live_session` with its `do` block, titled by its first argument as a test is (`scope "/api"`,
    `pipeline ":api"`: a title, no name the symbol table defines)."""
    if node.type != "call":
        return None
    target = node.child_by_field_name("target")
    verb = node_text(target) if target is not None and target.type == "identifier" else ""
    kind = _ELIXIR_DEFINITIONS.get(verb)
    block = _PHOENIX_BLOCKS.get(verb) if any(c.type == "do_block" for c in node.named_children) else None
    if kind is None and block is None:
        return None
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    head = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if kind is None:
        return (node, block, _test_title(verb, head)) if head is not None and head.type in ("string", "atom") else None
    if head is not None and head.type == "binary_operator":  # def name(x) when is_atom(x)
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":  # def name(x): the call's target is the name
        head = head.child_by_field_name("target") or head
    if kind in ("test", "describe"):  # a title, quoted: `test "atom"` tests Jason.Encode.atom, it defines nothing
        return node, kind, _test_title(kind, head)
    name = node_text(head) if head is not None else ""
    if kind == "impl" and arguments is not None:  # `defimpl Encoder, for: Map`: named like Rust's `Encoder for Map`
        for keywords in (c for c in arguments.named_children if c.type == "keywords"):
            for pair in keywords.named_children:
                key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
                if key is not None and value is not None and node_text(key).strip() == "for:":
                    name = f"{name} for {node_text(value)}"
    return node, kind, name.split("\n")[0][:80]


def _lua_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`M.setup = function(opts) ... end`, `local f = function() ... end`, a function held in a table's
    field (`coc = function() ... end` in lualine's `M.sources = { ... }`: 26 such were in no chunk), and
    busted's `describe("x", function() ... end)` and `it("y", function() ... end)`. A table of options
    assigned to a name is no definition: as one (kind `table`), lualine's colour themes came before its
    config in its commit labels."""
    if node.type == "function_call":
        return _test_call(node, node.child_by_field_name("name")) or _lua_setup_call(node)
    if node.type == "field":
        value = node.child_by_field_name("value")
        if node.child_by_field_name("name") is None and (plugin := _lua_plugin(value)) is not None:
            return node, "plugin", _quoted_title("plugin", plugin)
        name = _lua_field_path(node) if value is not None and value.type == "function_definition" else None
        return (node, "function", name) if name else None
    if node.type == "return_statement":  # a file that returns one plugin's spec
        values = next((c for c in node.named_children if c.type == "expression_list"), None)
        plugin = _lua_plugin(values.named_children[0]) if values is not None and len(values.named_children) == 1 \
            else None
        return (node, "plugin", _quoted_title("plugin", plugin)) if plugin else None
    assignment = node
    if node.type == "variable_declaration":
        assignment = next((c for c in node.named_children if c.type == "assignment_statement"), None)
    elif node.parent is not None and node.parent.type == "variable_declaration":
        return None  # the `local` around it is the definition (as its own, `local f = function` listed `f.f`)
    if assignment is None or assignment.type != "assignment_statement":
        return None
    names = next((c for c in assignment.named_children if c.type == "variable_list"), None)
    values = next((c for c in assignment.named_children if c.type == "expression_list"), None)
    if names is None or values is None or len(values.named_children) != 1:
        return None
    if values.named_children[0].type != "function_definition":
        return None
    return node, "function", node_text(names)


#: a plugin spec's first element: the plugin's repository (lazy.nvim's and packer's `"folke/which-key.nvim"`), or
#: the short name lazy.nvim takes for a plugin specified elsewhere (`"gitsigns.nvim"`)
_PLUGIN_REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+|[\w-]+(?:\.[\w-]+)*\.(?:nvim|vim|lua)")
#: the fewest lines of a top-level call that is a chunk of its own
_SETUP_CALL_LINES = 3


def _lua_plugin(table: tree_sitter.Node | None) -> str | None:
    """The repository a plugin spec names first (`{ "folke/which-key.nvim", opts = ..., keys = ... }`), or None:
    a Neovim configuration's specs were windows named nothing, cut across two plugins (LazyVim's `editor.lua`
    held trouble.nvim and the head of todo-comments in one)."""
    if table is None or table.type != "table_constructor":
        return None
    first = next((c for c in table.named_children if c.type == "field"), None)
    if first is None or first.child_by_field_name("name") is not None:
        return None
    text = _lua_string(first.child_by_field_name("value"))
    return text if text is not None and _PLUGIN_REPOSITORY.fullmatch(text) else None


def _lua_table_paths(root: tree_sitter.Node) -> list[tuple[int, int, str]]:
    """Every table of more than a line assigned to a name or held under a key, with its key path: from the name
    the outermost table is assigned to (`defaults.icons.kinds` in `local defaults = { icons = { kinds = {` ),
    from the plugin a spec names (`"folke/snacks.nvim".opts.dashboard`), or from the keys alone in a table a
    file returns. LazyVim's `defaults` was cut at line 80 inside `icons.kinds`, and the window of every
    completion kind's icon said "icons" nowhere. A key that is no name (`["<leader>"]` is) ends the path
    there. A function's body is not read: its windows are the function's, headed by its name."""
    found: list[tuple[int, int, str]] = []
    stack = [(root, "")]
    while stack:
        node, path = stack.pop()
        for child in node.named_children:
            inner = path
            if child.type == "table_constructor":
                holder = child.parent.parent if child.parent is not None and child.parent.type == "expression_list" \
                    else child.parent
                if holder is not None and holder.type == "assignment_statement":
                    names = next((c for c in holder.named_children if c.type == "variable_list"), None)
                    inner = node_text(names) if names is not None and len(names.named_children) == 1 else ""
                    if inner and child.end_point.row > holder.start_point.row:
                        found.append((holder.start_point.row, child.end_point.row, inner))
            elif child.type == "field":
                key, value = child.child_by_field_name("name"), child.child_by_field_name("value")
                if key is None:
                    plugin = _lua_plugin(value)
                    inner = f'"{plugin}"' if plugin else ""
                else:
                    text = _lua_key(key)
                    inner = (f"{path}.{text}" if path else text) if text.isidentifier() else ""
                    if inner and value is not None and value.type == "table_constructor" \
                            and child.end_point.row > child.start_point.row:
                        found.append((child.start_point.row, child.end_point.row, inner))
            elif child.type in ("function_definition", "function_declaration"):
                continue
            stack.append((child, inner))
    return found


def _lua_key(key: tree_sitter.Node | None) -> str:
    """A table field's key as written (`icons`, `["coc"]`'s `coc`, `["<leader>"]`'s `<leader>`), "" for an
    expression or none: the caller keeps it in a path only where it is a name."""
    return _lua_string(key) or (node_text(key) if key is not None and key.type == "identifier" else "")


def _lua_string(node: tree_sitter.Node | None) -> str | None:
    """A Lua string's content (quotes or long brackets off), None for anything else."""
    if node is None or node.type != "string":
        return None
    content = node.child_by_field_name("content")
    return node_text(content) if content is not None else node_text(node).strip("\"'[]")


def _lua_setup_call(call: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """A call of a few lines at a file's top level (`vim.api.nvim_create_autocmd(...)` with its callback,
    `require("x").setup({...})`) as a chunk of its own, titled by its callee and the group or description it
    gives (`augroup("last_loc")`, `desc = "..."`), as a test is: a title defines nothing (the callee is
    another's). A Neovim configuration's four autocommands were one window of 70 lines, and the embedder reads a
    window's first 128 tokens."""
    if call.parent is None or call.parent.type != "chunk" or \
            call.end_point.row - call.start_point.row + 1 < _SETUP_CALL_LINES:
        return None
    callee = call.child_by_field_name("name")
    if callee is None:
        return None
    return call, "call", _quoted_title(node_text(callee), next(_lua_labels(call.child_by_field_name("arguments")), ""))


def _lua_labels(arguments: tree_sitter.Node | None):
    """The strings that name what a call sets up, in its argument tables: a `group = augroup("x")`'s and a
    `desc = "x"`'s (not inside the callback's body)."""
    for table in (arguments.named_children if arguments is not None else ()):
        if table.type != "table_constructor":
            continue
        for field in table.named_children:
            key, value = field.child_by_field_name("name"), field.child_by_field_name("value")
            if key is None or value is None or node_text(key) not in ("group", "desc"):
                continue
            if value.type == "function_call":
                held = value.child_by_field_name("arguments")
                value = held.named_children[0] if held is not None and held.named_children else value
            if (label := _lua_string(value)) is not None:
                yield label


def _lua_field_path(field: tree_sitter.Node) -> str | None:
    """The name of a function in a table's field, qualified by the tables around it up to the name they are
    assigned to (`M.sources.coc`), or bare in a table a file returns; None in a table passed to a call
    (telescope's pickers' option tables: 60 of its 82 such functions) or under a key that is no name."""
    parts: list[str] = []
    node: tree_sitter.Node | None = field
    while node is not None and node.type == "field":
        text = _lua_key(node.child_by_field_name("name"))
        if not text.isidentifier():
            return None
        parts.append(text)
        table = node.parent
        holder = table.parent if table is not None and table.type == "table_constructor" else None
        if holder is not None and holder.type == "expression_list":
            holder = holder.parent
        if holder is not None and holder.type == "assignment_statement":
            names = next((c for c in holder.named_children if c.type == "variable_list"), None)
            return ".".join([node_text(names), *reversed(parts)]) if names is not None else None
        if holder is not None and holder.type == "return_statement":
            return ".".join(reversed(parts))
        node = holder  # a table in another table's field, or nothing a name holds
    return None


def _java_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """An enum constant with a body of its own (`Data { void read(...) {...} }`) is a definition: jsoup's
    tokenizer states were 70 chunks all named `TokeniserState.read`, the states' names in two-line leftovers.
    A plain constant (`RED,`) stays part of its enum."""
    if node.type == "enum_constant" and node.child_by_field_name("body") is not None:
        name = node.child_by_field_name("name")
        return node, "constant", node_text(name) if name is not None else ""
    return None


#: the calls of a test framework that name a test or a group of tests by a title and hold it in a block
#: (jest, mocha, ava, vitest, RSpec, minitest's spec DSL, busted): verb -> kind, "describe" a container
_TEST_VERBS = {"describe": "describe", "context": "describe", "suite": "describe", "feature": "describe",
               "shared_examples": "describe", "shared_examples_for": "describe", "shared_context": "describe",
               "it": "test", "test": "test", "specify": "test", "example": "test", "scenario": "test"}
#: what a test verb may be followed by (`it.only`, `test.each(...)`, `describe.skip`, `test.describe.serial`)
_TEST_MODIFIERS = frozenset({"only", "skip", "each", "serial", "todo", "concurrent", "failing", "fixme", "parallel",
                             "sequential", "skipIf", "runIf", "fails", "step"})
_CALLBACKS = frozenset({"arrow_function", "function_expression", "function", "function_definition"})
_TITLE_SPACE = re.compile(r"\s+")
_TITLES = frozenset({"string", "template_string", "constant", "scope_resolution", "simple_symbol", "identifier",
                     "member_expression"})


def _test_title(verb: str, title: tree_sitter.Node | None) -> str:
    """`it "returns 404 when missing"`: the verb and the title in double quotes (`it ""` untitled). The quotes keep a title
    out of the symbol table (symbols.py): `describe('parseJson')` describes parseJson, it does not define
    it, and a title's words are not a definition's."""
    text = node_text(title) if title is not None else ""
    if title is not None and title.type in ("string", "template_string"):
        text = text[1:-1] if len(text) >= 2 else text
    return _quoted_title(verb, text)


def _quoted_title(verb: str, text: str) -> str:
    text = _TITLE_SPACE.sub(" ", text.replace('"', "'")).strip()[:80]
    return f'{verb} "{text}"'


def _test_call(node: tree_sitter.Node, callee: tree_sitter.Node | None,
               has_block: bool = False) -> tuple[tree_sitter.Node, str, str] | None:
    """A test framework's titled block: the callee is a test verb, bare or with the framework's modifiers
    (`test.serial`, `it.each(rows)`, Playwright's `test.describe.parallel`: a group, as its last verb
    says), a title comes first and a block or a function holds the test. `context.on('close', fn)` or
    `suite.add('x', fn)` is a call."""
    held = node.child_by_field_name("arguments")
    arguments = list(held.named_children) if held is not None else []
    words: list[str] = []
    while callee is not None and callee.type in ("member_expression", "call_expression"):
        if callee.type == "member_expression":
            words.append(node_text(callee.child_by_field_name("property")))
            callee = callee.child_by_field_name("object")
        else:
            callee = callee.child_by_field_name("function")
    if callee is None or callee.type != "identifier" or any(w not in _TEST_MODIFIERS and w not in _TEST_VERBS for w in words):
        return None
    verb = next((w for w in words if w in _TEST_VERBS), node_text(callee))  # the verb nearest the call
    kind = _TEST_VERBS.get(verb) if node_text(callee) in _TEST_VERBS else None
    if kind is None or not (has_block or any(a.type in _CALLBACKS for a in arguments)):
        return None
    title = arguments[0] if arguments and arguments[0].type in _TITLES else None
    if title is None and not has_block:  # `test(fn)` in a library: a call, not a test
        return None
    return node, kind, _test_title(verb, title)


#: what a test's call may stand under in its statement: node:test's `void describe(...)` (a floating promise
#: marked as meant, for a linter) and `await test.step(...)`
_TEST_CALL_WRAPPERS = frozenset({"unary_expression", "await_expression"})


def _js_test_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`test('hooks can be async', async t => {...})`, `describe.only('x', () => {...})`, `it.each(rows)('y', fn)`,
    `void it('x', () => {...})` (juice-shop's node:test files were chunks of a `module`, their titles nowhere)."""
    if node.type != "expression_statement" or not node.named_children:
        return None
    call = node.named_children[0]
    if call.type in _TEST_CALL_WRAPPERS and call.named_children:
        call = call.named_children[-1]
    if call.type != "call_expression":
        return None
    return _test_call(call, call.child_by_field_name("function"))


#: Ruby's calls with a block that define a named thing: a rake task and its namespace (`task privacy_wipe:
#: :environment do`, asked for by name, was `other` and defined nowhere), a table of Rails' schema or of a
#: migration (`create_table "votes" do |t|`: lobsters' `db/schema.rb` was windows that named no table)
_RUBY_BLOCK_DEFINITIONS = {"task": "task", "namespace": "namespace", "create_table": "table"}


def _ruby_block_name(arguments: tree_sitter.Node | None) -> str:
    """The name a block definition's first argument gives: `"votes"`, `:privacy_wipe`, `privacy_wipe: :env`."""
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    if first is not None and first.type == "pair" and first.named_children:  # `task name: [:deps]`
        first = first.named_children[0]
    if first is None:
        return ""
    if first.type == "string":
        content = [c for c in first.named_children if c.type == "string_content"]
        return node_text(content[0]) if len(content) == 1 else ""
    return node_text(first).strip(":") if first.type in ("simple_symbol", "hash_key_symbol") else ""


def _ruby_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`describe Grape::Endpoint do`, `RSpec.describe '...' do`, `it 'works' do`, `context 'x' { }`; and the
    block definitions of `_RUBY_BLOCK_DEFINITIONS` (`task :wipe do`, `create_table "votes" do |t|`)."""
    if node.type != "call" or node.child_by_field_name("block") is None:
        return None
    receiver = node.child_by_field_name("receiver")
    method = node.child_by_field_name("method")
    kind = _RUBY_BLOCK_DEFINITIONS.get(node_text(method)) if receiver is None and method is not None else None
    if kind is not None:
        name = _ruby_block_name(node.child_by_field_name("arguments"))
        return (node, kind, name) if name else None
    if receiver is not None and node_text(receiver) != "RSpec":
        return None
    return _test_call(node, node.child_by_field_name("method"), has_block=True)


#: a Kotlin function or type behind its annotations, as tree-sitter-kotlin 1.1 sometimes reads it in a long file: an
#: `annotated_expression` (`@Composable` / `@OptIn(X::class)` / `private fun Name(` an infix expression)
_ANNOTATED_KOTLIN_DEFINITION = re.compile(
    r"(?:@[\w.:]+(?:\((?:[^()]|\([^()]*\))*\))?\s+)+"
    r"(?:(?:private|public|internal|protected|inline|suspend|override|operator|infix|tailrec|external|actual|expect"
    r"|open|abstract|final|data|sealed|enum|value|annotation|fun)\s+)*"
    r"(?:(fun)\s+(?:<[^<>]*>\s*)?(?:[\w.]+\.)?(\w+)\s*\(|(class|interface|object)\s+(\w+))")


def _declared_kind(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """Swift's and Kotlin's one `class_declaration` for every kind of type: the keyword says which (Kingfisher's
    130 structs, 44 enums and 209 extensions, kotlinpoet's interfaces and enum classes were all `class`). And a
    Kotlin definition its grammar read as an annotated expression (`_ANNOTATED_KOTLIN_DEFINITION`: nowinandroid's
    `NotificationPermissionEffect`, a Composable with two annotations, was named nowhere)."""
    if node.type == "annotated_expression" and (node.parent is None or node.parent.type != "annotated_expression"):
        found = _ANNOTATED_KOTLIN_DEFINITION.match(node_text(node))
        if found is None:
            return None
        return (node, "function", found.group(2)) if found.group(1) else (node, found.group(3), found.group(4))
    if node.type != "class_declaration":
        return None
    name = node.child_by_field_name("name")
    declared = node.child_by_field_name("declaration_kind")  # Swift: class, struct, enum, extension, actor
    if declared is not None:
        kind = node_text(declared)
    else:  # Kotlin: `interface X`, `enum class X` (the modifier), `class X`
        keywords = {node_text(c) for c in node.children if not c.is_named} | {
            node_text(m) for c in node.children if c.type == "modifiers" for m in c.children}
        kind = "interface" if "interface" in keywords else "enum" if "enum" in keywords else "class"
    return node, kind, node_text(name) if name is not None else ""


_GOOGLE_TEST_MACROS = frozenset({"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P", "BOOST_AUTO_TEST_CASE"})
#: Catch2's and doctest's tests, titled by their first string (`TEST_CASE("dequeue-empty-nowait", "[mpmc]")`,
#: `TEST_CASE_METHOD(Fixture, "reads", "[io]")`)
_TITLED_TEST_MACROS = frozenset({"TEST_CASE", "SCENARIO", "TEST_CASE_METHOD", "TEMPLATE_TEST_CASE",
                                 "TEMPLATE_TEST_CASE_SIG", "TEMPLATE_PRODUCT_TEST_CASE", "TEMPLATE_LIST_TEST_CASE",
                                 "TEMPLATE_TEST_CASE_METHOD", "TEST_CASE_FIXTURE", "TEST_CASE_TEMPLATE"})


def _titled_test(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`TEST_CASE("title", "[tag]") { ... }` at a file's or a namespace's level, which tree-sitter-cpp reads as
    a call without its semicolon beside a block (its body, `LanguageSpec.detached_bodies`): a test titled
    `TEST_CASE "title"`. Read as code, spdlog's 166 tests were 40-line windows named nothing, and a helper of
    another test file came first for "the rotating file logger's tests"."""
    if node.parent is None or node.parent.type not in ("translation_unit", "declaration_list"):
        return None
    call = node.named_children[0] if node.named_children else None
    if call is None or call.type != "call_expression":
        return None
    macro = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if macro is None or arguments is None or node_text(macro) not in _TITLED_TEST_MACROS:
        return None
    title = next((a for a in arguments.named_children if a.type in ("string_literal", "raw_string_literal")), None)
    if title is None:
        return None
    return node, "test", _quoted_title(node_text(macro), node_text(title).strip('"'))


def _google_test_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`TEST(SkipTest, InsertAndLookup) { ... }`: a test named `SkipTest.InsertAndLookup`. As a function its
    name was the macro's: leveldb's 219 tests were all `leveldb.TEST` or `leveldb.TEST_F`. Catch2's and doctest's
    (`_titled_test`) by their titles."""
    if node.type == "expression_statement":
        return _titled_test(node)
    if node.type != "function_definition":
        return None
    declarator = node.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return None
    macro = declarator.child_by_field_name("declarator")
    if macro is None or node_text(macro) not in _GOOGLE_TEST_MACROS:
        return None
    parameters = declarator.child_by_field_name("parameters")
    names = [node_text(p) for p in parameters.named_children] if parameters is not None else []
    return node, "test", ".".join(names[:2])


#: the kind of a test group, whose tests are chunked on their own when the group is too large
_TEST_GROUPS = frozenset({"describe"})

_ZIG_CONTAINERS = {"struct_declaration": "struct", "enum_declaration": "enum", "union_declaration": "union",
                   "opaque_declaration": "opaque"}


def _zig_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`const Parser = struct { ... }` (a type is a constant bound to a container) and `test "name" { }`.

    A test's title stays unquoted, a definition: a Zig test lives in the file it tests, so its words are that
    file's (JavaScript's and Ruby's titles are quoted: their tests are files of their own). A generic type
    (`fn Server(comptime H: type) type { return struct { ... }; }`) stays a function cut into windows: cut
    by its methods, http.zig's commit labels lost 3 first places of 20 (docs/benchmarks.md, "Chunks of eight
    more repositories")."""
    if node.type == "test_declaration":
        title = next((c for c in node.named_children if c.type in ("string", "identifier")), None)
        return node, "test", node_text(title).strip('"') if title is not None else "test"
    if node.type != "variable_declaration":
        return None
    name = next((c for c in node.named_children if c.type == "identifier"), None)
    value = next((c for c in node.named_children if c.type in _ZIG_CONTAINERS), None)
    if name is None or value is None:
        return None
    return node, _ZIG_CONTAINERS[value.type], node_text(name)


#: ScalaTest's and munit's test calls (`test("parses") { ... }`, `property("roundtrip") { ... }`) and the
#: words of its spec styles (`"A Stack" should "pop values" in { ... }`)
_SCALA_TESTS = frozenset({"test", "property", "ignore"})
_SCALA_SPEC_WORDS = frozenset({"in", "should", "must", "can", "when", "which", "that", "it", "they"})
#: a test's body: braces, or Scala 3's colon and indentation (`test("draws"):`: 893 of scalachess' 929 tests)
_SCALA_TEST_BODIES = frozenset({"block", "colon_argument"})
#: a type as written, without its arguments (`Either[A, A]` is `Either`, `zio.Chunk[A]` `zio.Chunk`)
_SCALA_TYPE_NAME = re.compile(r"[A-Za-z_][\w.]*")


def _scala_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """A Scala test: `test("parse nothing") { ... }` is the test `test "parse nothing"`, `"A Stack" should "pop
    values" in { ... }` the test `test "A Stack should pop values"`. scopt's 99 tests were no definitions, and
    the `override def terminate` of a parser made inside one was a member of the test class. Scala 3's colon
    syntax (`test("parse nothing"):` and an indented body) is read as the braces are.

    A Scala 3 extension (`extension [A](e: Either[A, A]) { inline def mergeOpt ... }`) is named by the type it
    extends: its methods are that type's (`Either.mergeOpt`), headed by its signature, as Swift's extensions
    and Rust's impls are. They were top-level functions of no header, and the line that says what they extend
    was the imports' chunk: "extension method that merges an Either" found none of them."""
    if node.type == "extension_definition":
        parameters = node.child_by_field_name("parameters")
        receiver = next((p.child_by_field_name("type") for p in parameters.named_children if p.type == "parameter"),
                        None) if parameters is not None else None
        named = _SCALA_TYPE_NAME.match(node_text(receiver)) if receiver is not None else None
        return node, "extension", named.group(0).rsplit(".", 1)[-1] if named else ""
    if node.type == "call_expression":
        head, body = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if head is None or body is None or body.type not in _SCALA_TEST_BODIES:
            return None
        if head.type == "postfix_expression":  # Scala 3's `"A Stack" should "pop values" in:` and its block
            spec, verb = head.named_children[0], head.named_children[-1]
            return _scala_spec_test(node, spec) if node_text(verb) == "in" and spec.type == "infix_expression" else None
        if head.type != "call_expression":
            return None
        verb, arguments = head.child_by_field_name("function"), head.child_by_field_name("arguments")
        title = arguments.named_children[0] if arguments is not None and arguments.named_children else None
        if verb is None or node_text(verb) not in _SCALA_TESTS or title is None or title.type != "string":
            return None
        return node, "test", _test_title(node_text(verb), title)
    if node.type == "infix_expression":
        operator, body = node.child_by_field_name("operator"), node.child_by_field_name("right")
        if operator is None or node_text(operator) != "in" or body is None or body.type != "block":
            return None
        return _scala_spec_test(node, node.child_by_field_name("left"))
    return None


def _scala_spec_test(node: tree_sitter.Node, spec: tree_sitter.Node | None) -> tuple[tree_sitter.Node, str, str] | None:
    """The test `node` whose spec (`"A Stack" should "pop values"`) is `spec`: its strings and the spec's words."""
    words, pending = [], [spec]
    while pending:
        part = pending.pop()
        if part is None:
            continue
        if part.type == "infix_expression":
            pending.extend((part.child_by_field_name("right"), part.child_by_field_name("operator"),
                            part.child_by_field_name("left")))
        elif part.type == "string" or (part.type == "identifier" and node_text(part) in _SCALA_SPEC_WORDS):
            words.append(node_text(part).strip('"'))
        else:
            return None
    return (node, "test", _quoted_title("test", " ".join(words))) if any(w not in _SCALA_SPEC_WORDS
                                                                        for w in words) else None


def _bash_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """A bats test (read as a function by `rewrites.bats_rewritten`): the test `test "can exec"`."""
    named = node.child_by_field_name("name") if node.type == "function_definition" else None
    title = bats_title(node_text(named)) if named is not None else None
    return (node, "test", _quoted_title("test", title)) if title is not None else None


#: Terraform's top-level blocks: block type -> (kind, the prefix of its address). A resource is addressed
#: `aws_iam_role.this`, a data source `data.aws_iam_policy_document.assume`, a variable `var.cluster_name`, as
#: Terraform's own expressions and plan output name them
_TERRAFORM_BLOCKS = {"resource": ("resource", ""), "data": ("data", "data."), "variable": ("variable", "var."),
                     "output": ("output", "output."), "module": ("module_call", "module."),
                     "provider": ("provider", "provider."), "ephemeral": ("resource", "ephemeral."),
                     "run": ("test", "run."), "check": ("check", "check.")}
#: blocks with no label that are a definition of their own (`locals`' attributes are its names, `local.x`)
_TERRAFORM_PREFIXES = frozenset(prefix for _, prefix in _TERRAFORM_BLOCKS.values() if prefix)
_TERRAFORM_UNLABELLED = {"locals": ("locals", "local"), "terraform": ("settings", "terraform"),
                         "moved": ("moved", "moved"), "import": ("import", "import"), "removed": ("removed", "removed")}


def _terraform_type(symbol: str) -> str | None:
    """The type of a Terraform resource (`aws_iam_role.this`) or data source (`data.aws_iam_policy_document.x`):
    the provider defines it, and a block of it is where a workspace makes one (`aws_eks_node_group` asked by
    name was "probably not here", its `aws_eks_node_group.this` second)."""
    parts = symbol.split(".")
    if len(parts) == 3 and parts[0] == "data":
        return parts[1]
    return parts[0] if len(parts) == 2 and "_" in parts[0] and f"{parts[0]}." not in _TERRAFORM_PREFIXES else None


def _hcl_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """A top-level HCL block, named by its address as Terraform writes it: `resource "aws_iam_role" "this"`
    is `aws_iam_role.this`, `variable "cluster_name"` is `var.cluster_name`, `module "kms"` is `module.kms`,
    a `.tftest.hcl` file's `run "setup"` is the test `run.setup`; a block of another HCL tool (Packer's `source
    "amazon-ebs" "ubuntu"`, Nomad's `job "web"`) is its type and labels joined (`source.amazon-ebs.ubuntu`).
    A nested block (`lifecycle`, `dynamic "ingress"`) is part of its resource. Without this a Terraform module
    was cut in line windows named nowhere, and `var.cluster_name` asked by name was in no definition."""
    if node.type != "block" or node.parent is None or node.parent.parent is None \
            or node.parent.parent.type != "config_file":
        return None
    head = node.named_children[0] if node.named_children else None
    if head is None or head.type != "identifier":
        return None
    block = node_text(head)
    labels = [node_text(c).strip('"') for c in node.named_children if c.type in ("string_lit", "identifier")][1:]
    if not labels:
        kind, name = _TERRAFORM_UNLABELLED.get(block, ("block", block))
        return node, kind, name
    kind, prefix = _TERRAFORM_BLOCKS.get(block, ("block", f"{block}."))
    return node, kind, prefix + ".".join(labels)


#: hspec's and tasty's titled tests and groups (`describe "x" $ do`, `it "y" $ ...`, `testGroup "z" [...]`,
#: `testCase "w" $ ...`, `testProperty "v" f`): verb -> kind, "describe" a group
_HASKELL_TEST_VERBS = {"describe": "describe", "context": "describe", "xdescribe": "describe", "fdescribe": "describe",
                       "xcontext": "describe", "fcontext": "describe", "testGroup": "describe",
                       "it": "test", "specify": "test", "prop": "test", "xit": "test", "fit": "test",
                       "xspecify": "test", "xprop": "test", "fprop": "test", "testCase": "test",
                       "testCaseSteps": "test", "testCaseInfo": "test", "testProperty": "test"}


def _haskell_test(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`it "reruns failed examples" $ do ...` (an `infix` on `$` whose left is a test verb applied to a title)
    or `testProperty "roundtrip" prop_rt` (the verb applied to a title, then to the test): the test `it
    "reruns failed examples"`. A statement of a do block (`exp`) that is one is its test. hspec's 1,027-line
    `spec` of RunnerSpec.hs was 20 windows headed `spec (part N of 20)`, no test named."""
    if node.type == "exp" and len(node.named_children) == 1:
        node = node.named_children[0]
    if node.type == "infix":
        operator = node.child_by_field_name("operator")
        head = node.child_by_field_name("left_operand") if operator is not None and node_text(operator) == "$" else None
    elif node.type == "apply":
        head = node.child_by_field_name("function")
    else:
        return None
    if head is None or head.type != "apply":
        return None
    verb, title = head.child_by_field_name("function"), head.child_by_field_name("argument")
    if title is not None and title.type == "literal" and title.named_children:
        title = title.named_children[0]
    if verb is None or verb.type not in ("variable", "qualified") or title is None or title.type != "string":
        return None
    word = node_text(verb).rsplit(".", 1)[-1]  # `QC.testProperty`
    kind = _HASKELL_TEST_VERBS.get(word)
    return (node, kind, _test_title(word, title)) if kind is not None else None


def _haskell_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """An equation is a `function` node with a name, or an infix one (``a `shouldYield` b = ...``); a
    function *type* (`Int -> IO a`) is a `function` node too, and 1,318 of hspec's 1,367 nested names were
    `X.function`. An instance is named like Rust's impl (`Example for (a -> Result)`): named by its class
    alone, seven of hspec's instances were definitions of `Example`, as its class is. hspec's and tasty's
    tests are tests (`_haskell_test`)."""
    if node.type in ("exp", "infix", "apply"):
        return _haskell_test(node)
    if node.type in ("function", "bind", "signature"):  # nameless: a do block's `x <- e`, an expression's `1 :: Int`
        name = node.child_by_field_name("name")
        if name is not None:
            return node, "function", node_text(name)
        if node.type != "function":
            return None
        infix = next((c for c in node.named_children if c.type == "infix"), None)
        operator = infix.child_by_field_name("operator") if infix is not None else None
        return (node, "function", node_text(operator).strip("`")) if operator is not None else None
    if node.type == "instance":
        name, patterns = node.child_by_field_name("name"), node.child_by_field_name("patterns")
        if name is not None and patterns is not None:
            return node, "instance", f"{node_text(name)} for {_TITLE_SPACE.sub(' ', node_text(patterns))[:80]}"
    return None


#: Dart's types; a named extension is a scope of its own (`StringX.shout`), as a class is, where an unnamed one
#: (`extension on String`) is named by the type it extends, as Swift's extensions are
_DART_TYPES = {"class_definition": "class", "mixin_declaration": "mixin", "extension_type_declaration": "class",
               "enum_declaration": "enum", "type_alias": "type", "extension_declaration": "extension"}
#: Dart's heads of functions, methods and constructors; tree-sitter-dart puts the body beside them
#: (`LanguageSpec.detached_bodies`)
_DART_HEADS = {"function_signature": "function", "getter_signature": "function", "setter_signature": "function",
               "operator_signature": "operator", "constructor_signature": "constructor",
               "constant_constructor_signature": "constructor", "factory_constructor_signature": "constructor",
               "redirecting_factory_constructor_signature": "constructor"}
#: Dart's declarations of variables and fields, one or several names each (`abstract final int count;` is an
#: `identifier_list`)
_DART_DECLARED = frozenset({"initialized_identifier_list", "static_final_declaration_list", "identifier_list"})
#: package:test's, flutter_test's and bloc_test's titled blocks
_DART_TEST_VERBS = {"group": "describe", "test": "test", "testWidgets": "test", "blocTest": "test"}
#: the quotes around a Dart string (raw, triple or single), and between the adjacent strings of a title cut to
#: fit the line (`'closes while events are pending '\n 'and finishes them'`)
_DART_QUOTES = re.compile(r"^r?('\'\'|\"\"\"|'|\")|('\'\'|\"\"\"|'|\")$")
_DART_ADJACENT = re.compile(r"(?:'\'\'|\"\"\"|'|\")\s+r?(?:'\'\'|\"\"\"|'|\")")


def _dart_definition(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """Dart's definitions, whose names the grammar's fields do not give whole:
    - a method's, a getter's or a constructor's head is a `method_signature` (or, without a body, a
      `declaration`) holding the head proper; a named constructor is its class's (`Foo.fromJson`: the
      grammar's `name` field is `Foo` alone), an unnamed one its class's `constructor`;
    - a type's name is an `identifier` child (a mixin's and a type alias's have no `name` field; a mixin
      application's, `class A = B with C;`, is its `mixin_application_class`'s);
    - a test is a call of a test verb with a title (`blocTest<CounterBloc, int>('emits [1]', ...)`)."""
    kind = _DART_TYPES.get(node.type)
    if kind is not None:
        held = next((c for c in node.named_children if c.type == "mixin_application_class"), node)
        # an extension's `type_identifier`s are the type it extends, no name of its own
        names = ("identifier",) if node.type == "extension_declaration" else ("identifier", "type_identifier")
        named = next((c for c in held.named_children if c.type in names), None) if held is not node \
            else node.child_by_field_name("name") or next((c for c in node.named_children if c.type in names), None)
        if node.type == "extension_declaration" and named is not None:
            return node, "class", node_text(named)
        if named is None:  # `extension on String`, `extension on rust.DeviceType`: named by the type it extends
            extended = [c for c in node.named_children if c.type == "type_identifier"]
            if extended:
                return node, kind, node_text(extended[-1])
            # a record's or a function's type (`extension on (int, String)`): its text, no name of a member's scope
            shown = " ".join(node_text(c) for c in node.named_children
                             if c.type not in ("extension_body", "type_parameters"))
            return node, kind, _TITLE_SPACE.sub(" ", shown)[:80] or "extension"
        return node, kind, node_text(named)
    if node.type == "local_function_declaration":  # its head is in a `lambda_expression`
        held = node.named_children[0] if node.named_children else node
        head = next((c for c in held.named_children if c.type in _DART_HEADS), None)
        named = head.child_by_field_name("name") if head is not None else None
        return (node, "function", node_text(named)) if named is not None else None
    if node.type in ("method_signature", "declaration"):
        head = next((c for c in node.named_children if c.type in _DART_HEADS), None)
        return (node, *_dart_head(head)) if head is not None else None
    if node.type in _DART_HEADS and node.parent is not None and node.parent.type == "program":
        return (node, *_dart_head(node))
    if node.type == "expression_statement":
        return _dart_test(node)
    return None


def _dart_head(head: tree_sitter.Node) -> tuple[str, str]:
    """(kind, name) of a Dart head: a constructor by the name after its class's (`Foo.named`, `_`), or by
    its class's; an operator by its symbol."""
    kind = _DART_HEADS[head.type]
    if kind == "constructor":  # the identifiers before its parameters: `Foo`, or `Foo` and `named`
        parameters = next((c for c in head.named_children if c.type == "formal_parameter_list"), None)
        names = [c for c in head.named_children if c.type == "identifier"
                 and (parameters is None or c.start_byte < parameters.start_byte)]
        return kind, node_text(names[-1]) if names else ""
    if kind == "operator":
        symbol = next((c for c in head.children if c.type in ("binary_operator", "tilde_operator") or not c.is_named
                       and node_text(c) not in ("operator", "(", ")")), None)
        return kind, f"operator {node_text(symbol)}".strip() if symbol is not None else "operator"
    named = head.child_by_field_name("name")
    return kind, node_text(named) if named is not None else ""


def _dart_test_arguments(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The arguments of a call statement (`verb(a, b)`, `verb<T>(a, b)`), each unwrapped from its `argument`."""
    selector = node.named_children[1] if len(node.named_children) > 1 else None
    part = selector.named_children[0] if selector is not None and selector.type == "selector" \
        and selector.named_children else None
    held = next((c for c in part.named_children if c.type == "arguments"), None) if part is not None else None
    return [c.named_children[0] if c.type == "argument" and c.named_children else c
            for c in held.named_children] if held is not None else []


def _dart_test(node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
    """`group('Counter', () {...})`, `testWidgets('shows', (tester) async {...})`, `blocTest<B, S>('emits', ...)`;
    a group titled by the type it tests (`group(AnalysisOptionsYaml, () {...})`, Very Good Ventures' style)."""
    verb = node.named_children[0] if node.named_children else None
    kind = _DART_TEST_VERBS.get(node_text(verb)) if verb is not None and verb.type == "identifier" else None
    arguments = _dart_test_arguments(node) if kind is not None else []
    title = arguments[0] if arguments else None
    if title is not None and title.type == "string_literal":
        text = _DART_ADJACENT.sub("", _DART_QUOTES.sub("", node_text(title)))
    elif title is not None and title.type == "identifier" and kind == "describe":
        text = node_text(title)
    else:
        return None
    return node, kind, _quoted_title(node_text(verb), text)


def dart_test_body(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The body of a Dart test's callback (`() { ... }`), where its head ends: without it, a test's header was
    the first three lines of its group, the first test's title and code."""
    if node.type != "expression_statement" or _dart_test(node) is None:
        return None
    callback = next((a for a in reversed(_dart_test_arguments(node)) if a.type == "function_expression"), None)
    return next((c for c in callback.named_children if c.type == "function_expression_body"), None) \
        if callback is not None else None


#: JavaScript's and TypeScript's constants at a module's level (`const MAX_RETRIES = 2`), in capitals as Python's
#: (`member_names`): a `const app = express()` names no constant; and what a module exports, in any case (`export
#: const QueryClientContext = React.createContext(...)`, `export const focusManager = new FocusManager()`): a
#: singleton, a context, a lookup table asked by name were "probably not here"
_JS_MEMBERS = frozenset({"lexical_declaration", "variable_declaration"})

#: C's and C++'s enumerators: names of the file's scope in C (`JV_PARSE_SEQ` of an anonymous `enum { ... }`,
#: curl's `CURLE_OK`), of the enum's in C++'s `enum class`; without them such a name was defined nowhere.
#: And a macro with a value (`#define JV_PRINT_PRETTY 1`, not an include guard's bare `#define JV_H`) at the
#: file's level, in or out of its conditionals (`member_names`)
#: And the names a declaration declares in a file's, a namespace's or a class's scope (`_C_DECLARATIONS`)
_C_MEMBERS = frozenset({"enumerator", "preproc_def"}) | _C_DECLARATIONS

LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        # Bazel's Starlark (`.bzl` macros and rules, `.star`) is Python's syntax
        LanguageSpec("python", "tree_sitter_python", "language", (".py", ".pyi", ".bzl", ".star"),
                     {"function_definition": "function", "class_definition": "class"},
                     frozenset({"class_definition"}), {"decorated_definition": "definition"},
                     members=frozenset({"assignment"}), named_by_file=_django_command),
        LanguageSpec("javascript", "tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx"),
                     _JS_DEFINITIONS, frozenset({"class_declaration"}), {"export_statement": "declaration"},
                     variable_functions=True, named_definition=_js_test_definition, container_kinds=_TEST_GROUPS,
                     members=_JS_MEMBERS, leading=_JS_LEADING),
        LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts"),
                     _TS_DEFINITIONS, _TS_CONTAINERS, {"export_statement": "declaration"}, variable_functions=True,
                     named_definition=_js_test_definition, container_kinds=_TEST_GROUPS,
                     members=_JS_MEMBERS, overloads=_TS_OVERLOADS, leading=_JS_LEADING),
        LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx", (".tsx",),
                     _TS_DEFINITIONS, _TS_CONTAINERS, {"export_statement": "declaration"}, variable_functions=True,
                     named_definition=_js_test_definition, container_kinds=_TEST_GROUPS,
                     members=_JS_MEMBERS, overloads=_TS_OVERLOADS, leading=_JS_LEADING),
        LanguageSpec("go", "tree_sitter_go", "language", (".go",),
                     {"function_declaration": "function", "method_declaration": "method"},
                     named_definition=_go_definition, members=frozenset({"const_spec", "var_spec"})),
        LanguageSpec("rust", "tree_sitter_rust", "language", (".rs",),
                     {"function_item": "function", "impl_item": "impl", "struct_item": "struct", "enum_item": "enum",
                      "trait_item": "trait", "mod_item": "module", "macro_definition": "macro", "union_item": "union"},
                     frozenset({"impl_item", "trait_item", "mod_item"}),
                     # `#[derive(...)]`, `#[cfg(...)]` belong to the item below, as its doc comment does: apart,
                     # an item's best range was its attribute line alone (docs/benchmarks.md, "noul mcp")
                     leading=frozenset({"attribute_item"}),
                     # an enum's variants are names (`CompileErrorKind.CircularRecipeDependency` was "not here")
                     members=frozenset({"const_item", "static_item", "enum_variant"})),
        LanguageSpec("java", "tree_sitter_java", "language", (".java",),
                     {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
                      "record_declaration": "record", "annotation_type_declaration": "annotation",
                      "method_declaration": "method", "constructor_declaration": "constructor"},
                     frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
                                "enum_constant"}),
                     named_definition=_java_definition,
                     members=frozenset({"field_declaration", "constant_declaration"})),
        LanguageSpec("c", "tree_sitter_c", "language", (".c", ".h"),
                     {"function_definition": "function", "struct_specifier": "struct", "enum_specifier": "enum",
                      "type_definition": "type", "union_specifier": "union", "preproc_function_def": "macro"},
                     template_names=True, before_parse=c_macros_blanked, reread=one_branch_each,
                     members=_C_MEMBERS),
        # and a template's or a module's files (`.tpp`, `.tcc`, `.inl`; C++20's `.cppm`, `.ixx`, `.mpp`)
        LanguageSpec("cpp", "tree_sitter_cpp", "language",
                     (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp", ".tcc", ".inl",
                      ".cppm", ".ixx", ".mpp"),
                     {"function_definition": "function", "class_specifier": "class", "struct_specifier": "struct",
                      "namespace_definition": "namespace", "enum_specifier": "enum", "union_specifier": "union",
                      "type_definition": "type", "preproc_function_def": "macro"},
                     frozenset({"class_specifier", "struct_specifier", "namespace_definition"}),
                     {"template_declaration": None}, named_definition=_google_test_definition, template_names=True,
                     before_parse=c_macros_blanked, reread=one_branch_each, members=_C_MEMBERS,
                     detached_bodies=frozenset({"compound_statement"})),  # a Catch2 test's (`_titled_test`)
        LanguageSpec("ruby", "tree_sitter_ruby", "language", (".rb", ".rake", ".ru", ".builder", ".jbuilder"),
                     {"method": "method", "singleton_method": "method", "class": "class", "module": "module"},
                     frozenset({"class", "module"}), named_definition=_ruby_definition,
                     container_kinds=_TEST_GROUPS | {"namespace"}, members=frozenset({"call", "assignment"})),
        LanguageSpec("kotlin", "tree_sitter_kotlin", "language", (".kt", ".kts"),
                     {"class_declaration": "class", "object_declaration": "object", "companion_object": "companion",
                      "function_declaration": "function", "secondary_constructor": "constructor"},
                     frozenset({"class_declaration", "object_declaration", "companion_object"}),
                     named_definition=_declared_kind, before_parse=kotlin_joined_heads,
                     members=frozenset({"property_declaration", "enum_entry", "type_alias", "class_parameter"})),
        LanguageSpec("csharp", "tree_sitter_c_sharp", "language", (".cs",),
                     {"class_declaration": "class", "struct_declaration": "struct", "interface_declaration": "interface",
                      "record_declaration": "record", "enum_declaration": "enum", "method_declaration": "method",
                      "constructor_declaration": "constructor", "local_function_statement": "function",
                      "delegate_declaration": "delegate", "operator_declaration": "operator"},
                     frozenset({"class_declaration", "struct_declaration", "interface_declaration", "record_declaration"}),
                     members=frozenset({"property_declaration", "field_declaration", "event_field_declaration",
                                        "enum_member_declaration"})),
        LanguageSpec("swift", "tree_sitter_swift", "language", (".swift",),
                     {"class_declaration": "class", "protocol_declaration": "protocol", "function_declaration": "function",
                      "init_declaration": "init", "deinit_declaration": "deinit", "subscript_declaration": "subscript"},
                     frozenset({"class_declaration", "protocol_declaration"}), named_definition=_declared_kind,
                     members=frozenset({"property_declaration", "enum_entry", "protocol_property_declaration",
                                        "typealias_declaration"})),
        LanguageSpec("php", "tree_sitter_php", "language_php", (".php",),
                     {"class_declaration": "class", "interface_declaration": "interface", "trait_declaration": "trait",
                      "enum_declaration": "enum", "function_definition": "function", "method_declaration": "method"},
                     frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}),
                     members=frozenset({"property_declaration", "const_declaration", "enum_case",
                                        "property_promotion_parameter"})),
        LanguageSpec("scala", "tree_sitter_scala", "language", (".scala", ".sc"),
                     {"class_definition": "class", "object_definition": "object", "trait_definition": "trait",
                      "enum_definition": "enum", "function_definition": "function", "function_declaration": "function"},
                     frozenset({"class_definition", "object_definition", "trait_definition", "enum_definition",
                                "extension_definition"}),
                     named_definition=_scala_definition, bodies_overrun=True),
        LanguageSpec("lua", "tree_sitter_lua", "language", (".lua",),
                     {"function_declaration": "function"}, named_definition=_lua_definition,
                     container_kinds=_TEST_GROUPS | {"plugin"}, members=frozenset({"assignment_statement"}),
                     table_paths=_lua_table_paths),
        LanguageSpec("elixir", "tree_sitter_elixir", "language", (".ex", ".exs"), {},
                     named_definition=_elixir_definition,
                     container_kinds=frozenset({"module", "protocol", "impl", "describe"}),
                     leading=frozenset({"unary_operator"}), clauses=True),
        LanguageSpec("haskell", "tree_sitter_haskell", "language", (".hs",),
                     {"data_type": "data",
                      "newtype": "newtype", "class": "class", "instance": "instance", "type_synonym": "type",
                      "type_family": "type"},
                     frozenset({"class", "instance"}), named_definition=_haskell_definition, clauses=True,
                     container_kinds=_TEST_GROUPS),
        LanguageSpec("zig", "tree_sitter_zig", "language", (".zig",),
                     {"function_declaration": "function"}, named_definition=_zig_definition,
                     container_kinds=frozenset({"struct", "enum", "union", "opaque"})),
        LanguageSpec("bash", "tree_sitter_bash", "language", (".sh", ".bash", ".bats", ".zsh"),
                     {"function_definition": "function"}, named_definition=_bash_definition,
                     before_parse=bats_rewritten, reread=bash_expansions_blanked),
        LanguageSpec("dart", "tree_sitter_dart", "language", (".dart",), {}, frozenset(_DART_TYPES),
                     named_definition=_dart_definition, container_kinds=_TEST_GROUPS,
                     leading=frozenset({"annotation", "documentation_comment"}), detached_bodies=frozenset({"function_body"}),
                     members=frozenset({*_DART_DECLARED, "enum_constant"})),
        # Godot's GDScript: a script's functions and inner classes are its definitions; its `class_name`, signals,
        # constants, enums and exported variables are named where they are declared (a game's tuning lives in
        # them). Without it a script was 40-line windows: `try_jump` asked for by name was "probably not here"
        LanguageSpec("gdscript", "tree_sitter_gdscript", "language", (".gd",),
                     {"function_definition": "function", "constructor_definition": "function",
                      "class_definition": "class"}, frozenset({"class_definition"}),
                     members=frozenset({"class_name_statement", "signal_statement", "const_statement",
                                        "variable_statement", "enum_definition"})),
        LanguageSpec("hcl", "tree_sitter_hcl", "language", (".tf", ".tofu", ".hcl", ".tfvars"), {},
                     named_definition=_hcl_definition, members=frozenset({"attribute"}), also_named=_terraform_type),
    )
}

_BY_EXTENSION = {ext: spec for spec in LANGUAGES.values() for ext in spec.extensions}
_COMMENTED = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)  # an unclosed `/*` ends the text (linear)
_CPP_MARK = re.compile(r"^[ \t]*(namespace\b[\w \t:]*\{|template[ \t]*<|class[ \t]+\w+|(public|private|protected)[ \t]*:)|"
                       r"\bstd::", re.MULTILINE)


def holds_cpp(text: str) -> bool:
    """Whether a header (`.h`, read as C by its extension) is C++: a namespace, a template, a class, an
    access label or `std::` outside comments. Parsed as C, leveldb's headers were runs of errors: `namespace leveldb {`
    read as a function named `leveldb`, one of their 74 classes found (docs/benchmarks.md)."""
    return _CPP_MARK.search(_COMMENTED.sub("", text[:200_000])) is not None


def language_for_path(path: str) -> LanguageSpec | None:
    """The grammar for a path by its extension, or None for plain text."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _BY_EXTENSION.get(path[dot:].lower())


_SHEBANG = re.compile(r"#!\s*\S*/(?:env\s+(?:-\S+\s+)*)?([A-Za-z]+)")
_INTERPRETERS = {"bash": "bash", "bats": "bash", "sh": "bash", "zsh": "bash", "dash": "bash", "ksh": "bash", "python": "python",
                 "node": "javascript", "ruby": "ruby", "lua": "lua", "elixir": "elixir", "php": "php"}


#: a shell's startup files and a dotfiles repository's shell code, with or without their dot (`zshrc`,
#: `.bash_profile`, `aliases.local`): shell with no `#!` line and no extension, whose functions and aliases were
#: windows named nothing (thoughtbot/dotfiles' `zshrc`, `aliases`)
_SHELL_STARTUP = re.compile(r"\.?(?:zshrc|zshenv|zprofile|zlogin|zlogout|bashrc|bash_profile|bash_login|bash_logout"
                            r"|bash_aliases|aliases|functions|exports)(?:\.local)?")


def shell_startup_file(path: str) -> bool:
    """Whether a path is a shell's startup file or a zsh function of a dotfiles repository (`zsh/functions/mcd`:
    a file with no extension in a `functions` folder below one named for zsh)."""
    folders = path.lower().split("/")
    name = folders.pop()
    return bool(_SHELL_STARTUP.fullmatch(name)) or (
        "." not in name and folders[-1:] == ["functions"] and any("zsh" in folder for folder in folders[:-1]))


def language_for_script(path: str, text: str) -> LanguageSpec | None:
    """The grammar of a file with no extension by its `#!` line (`bin/bats`, `libexec/rbenv-init`):
    command-line tools are often scripts named like commands; a shell's startup file by its name."""
    if shell_startup_file(path):
        return LANGUAGES["bash"]
    name = path.rsplit("/", 1)[-1]
    if "." in name or not text.startswith("#!"):
        return None
    match = _SHEBANG.match(text[:200])
    language = _INTERPRETERS.get(match.group(1).rstrip("0123456789.")) if match else None
    return LANGUAGES.get(language) if language else None


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
