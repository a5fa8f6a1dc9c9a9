"""Definition-level chunks from a tree-sitter parse.

A definition (function, class, method, impl, ...) that fits the size budget is one chunk. A container
that does not fit (a large class) gives one chunk per member plus chunks for its own remaining lines (the
signature, docstring, fields), each member carrying the container's signature as its header. A function
that does not fit is cut into line windows that all carry its signature. Lines outside any definition
(imports, constants, top-level statements) become windows of their own, so every line is findable.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import islice

import tree_sitter

from noul_lsp.chunking.boilerplate import carries_nothing, leading_licence
from noul_lsp.chunking.chunk import MAX_NAMES, Chunk
from noul_lsp.chunking.languages import (GO_TYPE_NODES, MEMBER_HOLDERS, LanguageSpec, dart_test_body,
                                         declarator_chain, go_type_body, holds_a_class_body, member_names,
                                         node_text, parser_for)
from noul_lsp.chunking.rewrites import error_rows, shown_head
from noul_lsp.chunking.sections import with_sections
from noul_lsp.chunking.text import is_long, line_pieces

_IDENTIFIER_TYPES = frozenset({
    "identifier", "field_identifier", "type_identifier", "qualified_identifier", "destructor_name",
    "operator_name", "property_identifier", "constant", "scoped_identifier", "namespace_identifier",
})
_COMMENTS = frozenset({"comment", "line_comment", "block_comment", "haddock"})
#: a definition's body where its grammar names no `body` field (Kotlin, Elixir's `do` block, Zig's and Scala's
#: test blocks)
_UNNAMED_BODIES = frozenset({"class_body", "enum_class_body", "function_body", "do_block", "block"})
#: C and C++ type specifiers, definitions only with a body
_TYPE_SPECIFIERS = frozenset({"struct_specifier", "class_specifier", "union_specifier", "enum_specifier"})
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_NO_BODY_CLAUSES = frozenset({"delete_method_clause", "default_method_clause"})
_SKIP_RECURSION = frozenset({"string", "string_literal", "template_string", "raw_string_literal"})
#: JavaScript's declarations of a `variable_declarator` (`const`, `let`, `var`)
_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})
#: what an anonymous `export default` may be that defines code (not an object or a call's result)
_ANONYMOUS_DEFAULTS = frozenset({"arrow_function", "function_expression", "function", "class"})
_WHITESPACE = re.compile(r"\s+")
#: a preprocessor line between a definition's name and its body (C#'s `#pragma warning restore`, C's `#if`);
#: read in every language, where a comment that opens so (`# if ...`) is no signature either
_DIRECTIVE_LINE = re.compile(r"\s*#\s*(pragma|if|ifdef|ifndef|elif|else|endif|region|endregion|nullable)\b")
#: kinds that may only wrap another definition (a Ruby namespace module, a C++ namespace), and the kinds
#: such a wrapper is named by when it holds exactly one (`CodeChunker._through_namespaces`)
_NAMESPACE_KINDS = frozenset({"module", "namespace"})
_WRAPPED_KINDS = frozenset({"module", "namespace", "class", "struct", "interface", "trait", "enum", "record"})
#: the kinds of definition whose declarations are locals, not members
_FUNCTION_KINDS = frozenset({"function", "method", "constructor", "init", "deinit", "subscript", "test", "operator",
                             "macro", "delegate"})


@dataclass(slots=True)
class _Segment:
    start: int  # 0-based row, inclusive
    end: int  # 0-based row, inclusive
    symbol: str
    kind: str
    header: str
    #: lines left between definitions (imports, a class's closing brace): dropped when nearly empty
    filler: bool = False
    #: the definitions nested in a definition kept whole (`Chunk.names`), each with the row it starts on
    names: tuple[tuple[str, int], ...] = ()


def _name(node: tree_sitter.Node) -> str:
    """The declared name of a definition node, across grammars."""
    named = node.child_by_field_name("name")
    if named is not None:
        return node_text(named)
    if node.type == "impl_item":  # rust: impl [Trait for] Type, without type arguments and lifetimes
        target = node.child_by_field_name("type")  # (`Recipe<'src, D>` and `Recipe<'src>` are one `Recipe`,
        trait = node.child_by_field_name("trait")  # the scope `Recipe::confirm` asks for)
        if target is not None:
            typed = _without_type_arguments(node_text(target))
            return f"{_without_type_arguments(node_text(trait))} for {typed}" if trait is not None else typed
    if node.type == "type_declaration":  # go: type ( Name struct{...} )
        for child in node.named_children:
            inner = child.child_by_field_name("name")
            if inner is not None:
                return node_text(inner)
    if node.type == "type_definition":  # c: typedef ... Name;
        declarator = node.child_by_field_name("declarator")
        # `typedef void (*jv_nomem_handler_f)(void *)`: the name is inside the function, parentheses and pointer
        # (the whole declarator was the name: `(*jv_nomem_handler_f)(void *)` defined nothing findable)
        named = next((held for held in declarator_chain(declarator) if held.type in _IDENTIFIER_TYPES), None)
        if declarator is not None:
            return node_text(named if named is not None else declarator)
    declarator = node.child_by_field_name("declarator")
    for _ in range(8):  # c/cpp: function_definition -> declarator -> declarator -> identifier
        if declarator is None:
            break
        if declarator.type in _IDENTIFIER_TYPES:
            return node_text(declarator)
        if declarator.type == "reference_declarator":  # `const Slice& Key(...)`: no field names what it holds
            declarator = declarator.named_children[-1] if declarator.named_children else None
        else:
            declarator = declarator.child_by_field_name("declarator")
    return ""


def _without_type_arguments(name: str) -> str:
    """A Rust type's name without its `<...>` (nested ones too): `Parser<'run, 'src>` is `Parser`."""
    while (shorter := _TYPE_ARGUMENTS.sub("", name)) != name:
        name = shorter
    return name


_TYPE_ARGUMENTS = re.compile(r"<[^<>]*>")


def _member_name(kind: str, name: str, scope: str) -> str:
    """A constructor named like its class (C#'s and Java's `Policy(...)`) is its class's `constructor`: as
    `Policy.Policy` it defined the class's name, and a bare class name was found on its constructors."""
    return "constructor" if kind == "constructor" and scope and name == scope.rsplit(".", 1)[-1] else name


def _without_template_arguments(name: str) -> str:
    while (shorter := _TEMPLATE_ARGUMENTS.sub("", name)) != name:
        name = shorter
    return name


def _last_row(node: tree_sitter.Node) -> int:
    """The node's last row: a preprocessor line (`#define MIN(a, b) ...`) ends at the start of the next,
    which is not its own."""
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


#: how deep `_code_end` follows a definition's last child
_LAST_CHILD_DEPTH = 64


def _code_end(node: tree_sitter.Node) -> tuple[int, tuple[int, int] | None]:
    """The last row of a definition, and (first, last) rows of the comment run after its code that belongs
    to the next definition: tree-sitter-scala's `def f =` body runs on through the blank lines and the next
    member's `/** doc */` to that member's indentation (scopt's builder API: 38 docs in the method above the
    one they describe). A comment on the code's own last row, or one a blank line above the next doc, stays."""
    current, after = node, []
    for _ in range(_LAST_CHILD_DEPTH):
        code = [k for k in current.children if k.type not in _COMMENTS and k.end_byte > k.start_byte]
        if not code:
            break
        after = [k for k in current.children if k.type in _COMMENTS and k.start_byte >= code[-1].end_byte] or after
        current = code[-1]
    end = _last_row(current)
    later = [k for k in after if k.start_point.row > end]
    if not later:
        return max([end, *(_last_row(k) for k in after)]), None
    run = [later[-1]]  # the comments right above the next definition, with no blank line between them
    for comment in reversed(later[:-1]):
        if comment.end_point.row + 1 < run[0].start_point.row:
            break
        run.insert(0, comment)
    kept = [k for k in after if k.start_byte < run[0].start_byte]
    return max([end, *(_last_row(k) for k in kept)]), (run[0].start_point.row, _last_row(run[-1]))


def module_name(path: str) -> str:
    """The name importers give a JavaScript module, its anonymous default export or a component file: its
    file's stem, or its folder's for an `index` (`components/Button/index.tsx` is `Button`; a package's
    `src/index.ts` the package's)."""
    parts = path.split("/")
    stem = parts[-1].split(".")[0]
    if stem != "index":
        return stem or "default"
    folders = [folder for folder in parts[:-1] if folder not in ("src", "lib")]
    return folders[-1] if folders else "index"


def _callback_body(call: tree_sitter.Node) -> tree_sitter.Node | None:
    """The body of a call's last argument that has one (`test('x', async t => {...})`)."""
    arguments = call.child_by_field_name("arguments")
    bodies = (a.child_by_field_name("body") for a in reversed(arguments.named_children)) if arguments is not None else ()
    return next((body for body in bodies if body is not None), None)


def _signature(node: tree_sitter.Node) -> str:
    """The definition's head (from the line of its name up to its body), whitespace-collapsed, at most 200
    characters."""
    body = node.child_by_field_name("body")
    outer = node  # the node whose text holds the head
    if node.type in ("variable_declarator", "export_statement"):  # `const ContentView = (props) => {`,
        value = node.child_by_field_name("value")  # `export default () => {`: the body is the value's
        body = value.child_by_field_name("body") if value is not None else None
        holder = node.parent  # and the head opens with its `const` (the body's first lines took its place)
        if node.type == "variable_declarator" and holder is not None and holder.type in _DECLARATIONS \
                and holder.start_point.row == node.start_point.row:
            outer = holder
    if body is None and node.type in GO_TYPE_NODES:  # Go: a struct's or an interface's braces are its type's
        body = go_type_body(node)  # (its head was its first three lines, its fields' comments joined in)
    if body is None:
        body = next((child for child in node.named_children if child.type in _UNNAMED_BODIES), None)
    if body is None and node.type in ("infix", "apply"):  # hspec's `it "x" $ do ...`, tasty's `testGroup "x" [...]`
        body = node.child_by_field_name("right_operand" if node.type == "infix" else "argument")
    if body is None:  # a test call's block (Ruby's `it 'x' { }`) or its callback's (`test('x', async t => {`)
        body = node.child_by_field_name("block")
        body = body if body is not None else _callback_body(node) or dart_test_body(node)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    # from the line that names it: attributes, annotations and `#if` lines above (`[Serializable]`, `@MainActor`,
    # `@SuppressWarnings(...)`) took the three lines, and 43 of Polly's headers lacked the class's name
    name = node.child_by_field_name("name")
    start = outer.start_byte
    if name is not None and name.start_point.row > node.start_point.row and name.start_byte < end:
        start = name.start_byte - name.start_point.column
    head = outer.text[start - outer.start_byte: end - outer.start_byte] if outer.text is not None else b""
    # preprocessor lines between the name and the body are no part of it (Polly's `#pragma warning restore`)
    head_text = [line for line in head.decode("utf-8", "replace").split("\n") if not _DIRECTIVE_LINE.match(line)] or [""]
    signature = _WHITESPACE.sub(" ", " ".join(head_text[:3])).strip()
    return shown_head(signature)[:200]


class CodeChunker:
    """Chunks one language; reusable across files (not thread-safe: one parser per instance)."""

    def __init__(self, spec: LanguageSpec, *, max_chars: int, window_lines: int) -> None:
        self.spec = spec
        self.max_chars = max_chars
        self.window_lines = window_lines
        self.parser = parser_for(spec.name)
        #: the name of the module being chunked's anonymous default export (`module_name`)
        self._default_export = "default"
        #: the file being chunked's tables under a name (LanguageSpec.table_paths), for its windows' headers
        self._table_paths: list[tuple[int, int, str]] = []

    def _definition(self, node: tree_sitter.Node) -> tuple[tree_sitter.Node, str, str] | None:
        """(the inner definition node, its kind, its name) when `node` is or wraps a definition."""
        spec = self.spec
        if spec.named_definition is not None:
            named = spec.named_definition(node)
            if named is not None:
                return named
        if node.type in spec.definitions:
            if node.type in _TYPE_SPECIFIERS and node.child_by_field_name("body") is None:
                return None  # `struct jv_parser *p`, `struct inst;`: a use or a forward declaration
            if node.type == "function_definition" and any(c.type in _NO_BODY_CLAUSES for c in node.children):
                return None  # `SkipList(const SkipList&) = delete;`: found for `SkipList` before the class
            if node.type == "mod_item" and node.child_by_field_name("body") is None:
                return None  # Rust's `mod token;` names a file: 14 of 20 of just's types opened at lib.rs's line
            return node, spec.definitions[node.type], _name(node)
        if node.type in spec.wrappers:
            field_name = spec.wrappers[node.type]
            if field_name is not None:
                inner = node.child_by_field_name(field_name)
                candidates = [inner] if inner is not None else []
            else:
                candidates = list(node.named_children)
            for inner in candidates:
                found = self._definition(inner)
                if found is not None:
                    return found
        if spec.variable_functions and node.type == "export_statement":
            # `export default () => {...}`, `export default function () {}`: a Next.js page or route handler,
            # named by its module as importers name it (`pages/about.tsx` is `about`); it had no name at all
            value = node.child_by_field_name("value")
            if value is not None and value.type in _ANONYMOUS_DEFAULTS:
                return node, "class" if value.type == "class" else "function", self._default_export
        if spec.variable_functions and node.type in ("lexical_declaration", "variable_declaration"):
            for declarator in node.named_children:
                value = declarator.child_by_field_name("value")
                if value is not None and value.type in ("arrow_function", "function_expression", "function", "class"):
                    return declarator, "function" if value.type != "class" else "class", _name(declarator)
        return None

    def _collect(self, node: tree_sitter.Node, scope: str, scope_header: str, out: list[_Segment],
                 scope_is_type: bool = True, comment_above: int | None = None) -> None:
        """`comment_above`: the first row of a comment run that ends on the row above `node` (it is its first
        child's: HCL's grammar holds a file's first comment outside the `body` its first block is in)."""
        comment_start: int | None = comment_above  # first row of the comment run just above the current child
        previous_end = node.start_point.row - 1 if comment_above is not None else -2
        children = node.named_children
        overloads = self._overloads_above_their_implementation(children) if self.spec.overloads else set()
        overloaded = False  # the run above holds overload signatures: blank lines do not part it from them
        claimed = -1  # the index of a body the definition before it took (`LanguageSpec.detached_bodies`)
        for index, child in enumerate(children):
            if index <= claimed:  # the body, and a comment between it and its head
                continue
            if child.type in _COMMENTS or child.type in self.spec.leading or index in overloads:
                if comment_start is None or (child.start_point.row > previous_end + 1 and not overloaded):
                    comment_start = child.start_point.row
                overloaded = overloaded or index in overloads
                previous_end = child.end_point.row
                continue
            attached = comment_start if comment_start is not None and (
                child.start_point.row <= previous_end + 1 or overloaded) else None
            comment_start, previous_end, overloaded = None, _last_row(child), False
            if child.type in _SKIP_RECURSION:
                continue
            found = self._definition(child)
            if found is None:
                if child.end_point.row > child.start_point.row:
                    self._collect(child, scope, scope_header, out, scope_is_type, attached)
                continue
            inner, kind, name = found
            claimed = max(claimed, self._detached_body(children, index))
            body = children[claimed] if claimed > index else None
            if body is not None:
                previous_end = _last_row(body)
            last = body if body is not None else child  # the definition's last node
            holder = body if body is not None else inner  # the node that holds what it defines
            if inner.type == "namespace_definition":  # C++: a scope for what it holds, never a chunk of its own
                if name:
                    self._collect(inner, f"{scope}.{name}" if scope else name, _signature(inner), out, False)
                else:  # `namespace {`: file-local definitions, named as if it were not there
                    self._collect(inner, scope, scope_header, out, scope_is_type)
                continue
            if kind == "function" and scope and scope_is_type:
                kind = "method"
            name = _member_name(kind, name, scope)
            if "<" in name and self.spec.template_names and "operator" not in name:  # `SkipList<K, C>::Insert`
                name = _without_template_arguments(name)  # is SkipList's Insert
            name = name or kind
            symbol = f"{scope}.{name}" if scope else name
            # A doc comment directly above belongs to the definition (Go, C, Rust, JS, Java style).
            start, end = (attached if attached is not None else child.start_point.row), _last_row(last)
            if self.spec.bodies_overrun:  # its doc comment is the next definition's, not this one's last lines
                end, trailing = _code_end(last)
                if trailing is not None:
                    comment_start, previous_end = trailing
            # an extension's own lines define nothing: `extension ImageDownloader {` in another file was found
            # for `ImageDownloader` before its declaration (Swift); its members are the type's (`X.member`). So
            # with Rust's `impl Keyword` (and `impl From<Signal> for nix::...::Signal`): they came before the enum
            own = f"{symbol} ({kind})" if kind in ("extension", "impl") else symbol
            if last.end_byte - child.start_byte <= self.max_chars:
                names = tuple(self._nested(holder, symbol, kind))
                own, kind = self._through_namespaces(inner, own, kind)
                out.append(_Segment(start, end, own, kind, scope_header, names=names))
            elif inner.type in self.spec.containers or kind in self.spec.container_kinds or self._holds_tests(holder):
                members: list[_Segment] = []
                signature = _signature(inner)
                self._collect(holder, symbol, signature, members, kind not in _FUNCTION_KINDS)
                if self.spec.clauses:
                    members = _join_clauses(members)
                out.extend(members)
                covered = {row for m in members for row in range(m.start, m.end + 1)}
                rest = [row for row in range(start, end + 1) if row not in covered]
                declared = _by_row((name, row) for name, row in self._nested(holder, symbol, kind, members_only=True)
                                   if row not in covered)
                for run_start, run_end in _runs(rest):
                    header = scope_header if run_start == start else signature
                    out.append(_Segment(run_start, run_end, own, kind, header, filler=True,
                                        names=_starting_in(declared, run_start, run_end)))
            else:
                # Too large and not a container: `_emit` cuts it into windows that all carry its signature,
                # each listing the helpers defined inside it that start in it (got's `asPromise` defines
                # `makeRequest`: a name no chunk held before), at most MAX_NAMES a window, not a definition: a
                # Zig generic type (`fn ReplicaType(...) type { return struct { ... } }`, 12k lines) named its
                # first 64 functions, and `post_or_void_pending_transfer` asked for by name was "not here"
                header = f"{scope_header}\n{_signature(inner)}" if scope_header else _signature(inner)
                out.append(_Segment(start, end, symbol, kind, header,
                                    names=tuple(self._nested(holder, symbol, kind, every=True))))

    def _detached_sibling(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The body the grammar put beside the definition `node` (`LanguageSpec.detached_bodies`): its next
        sibling but comments (`void top() // why` then `{`)."""
        if not self.spec.detached_bodies:
            return None
        after = node.next_named_sibling
        while after is not None and after.type in _COMMENTS:
            after = after.next_named_sibling
        return after if after is not None and after.type in self.spec.detached_bodies else None

    def _detached_body(self, children: list[tree_sitter.Node], index: int) -> int:
        """The index among `children` of the body beside the definition at `index` (`_detached_sibling`), -1
        where there is none."""
        if self._detached_sibling(children[index]) is None:
            return -1
        return next(i for i in range(index + 1, len(children)) if children[i].type not in _COMMENTS)

    def _overloads_above_their_implementation(self, children: list[tree_sitter.Node]) -> set[int]:
        """The indexes of the overload signatures that run (through comments) into the implementation of the
        same name: they and their doc comments are its first lines, as a doc comment is. Apart, TypeScript's
        typed overloads and their docs were a chunk of no name (`replaceEqualDeep`'s doc) or a class's
        leftover lines (twenty chunks of vue-query's `QueryClient`), and the implementation lacked its types.
        A signature with no implementation (a `.d.ts` file's) is left where it is."""
        joined: set[int] = set()
        next_name: str | None = None  # the name of the implementation (or joined signature) below
        below: tree_sitter.Node | None = None  # the child below, read as a definition only under a signature
        for index in range(len(children) - 1, -1, -1):
            child = children[index]
            if child.type in _COMMENTS or child.type in self.spec.leading:  # a decorator of the implementation
                continue
            inner = child.child_by_field_name("declaration") if child.type == "export_statement" else child
            if inner is None or inner.type not in self.spec.overloads:
                below, next_name = child, None
                continue
            if below is not None:
                found = self._definition(below)
                below, next_name = None, _name(found[0]) if found is not None else None
            if next_name is not None and _name(inner) == next_name:
                joined.add(index)
            else:
                next_name = None
        return joined

    def _holds_tests(self, node: tree_sitter.Node) -> bool:
        """Whether a definition too large for one chunk holds titled tests (hspec's `spec = do describe ...`):
        then it is cut by them, as a test group is, not into windows that name no test. Only where a
        language has test groups (`container_kinds`)."""
        return "describe" in self.spec.container_kinds and any(  # the walk stops at the first test
            kind in ("test", "describe") for _, (_, kind, _) in self._outermost_definitions(node))

    def _through_namespaces(self, node: tree_sitter.Node, symbol: str, kind: str) -> tuple[str, str]:
        """(symbol, kind) of a definition kept whole, named through the namespaces that only wrap another:
        grape's files are `module Grape; module Validations; class SameAsValidator`, and each was one chunk
        named `Grape` (a name 127 chunks shared, and the hit said `module Grape`)."""
        while kind in _NAMESPACE_KINDS:
            inside = list(islice(self._outermost_definitions(node), 2))  # one, or more than one
            if len(inside) != 1:
                break
            child, (inner, inner_kind, name) = inside[0]
            rows = node.end_point.row - node.start_point.row
            if inner_kind not in _WRAPPED_KINDS or child.end_point.row - child.start_point.row < rows - 4:
                break  # another kind of definition, or more in the namespace than a wrapper's lines
            node, kind, symbol = inner, inner_kind, f"{symbol}.{name or inner_kind}"
        return symbol, kind

    def _outermost_definitions(self, node: tree_sitter.Node) -> Iterator[tuple[tree_sitter.Node, tuple]]:
        """The definitions under `node` not inside another one (through non-definition nodes), in order, each
        as (its node, `_definition`'s answer); lazily, so that a question about the first ones walks no further."""
        pending = list(reversed(node.named_children))
        while pending:
            child = pending.pop()
            if child.type in _SKIP_RECURSION or child.type in _COMMENTS:
                continue
            definition = self._definition(child)
            if definition is not None:
                yield child, definition
            else:
                pending.extend(reversed(child.named_children))

    def _nested(self, node: tree_sitter.Node, scope: str, kind: str = "", *,
                members_only: bool = False, every: bool = False) -> list[tuple[str, int]]:
        """Qualified names of the definitions inside `node` (kept whole in one chunk), each with its first
        row, at most MAX_NAMES; with the members a type declares in a line (`languages.member_names`: a C#
        property, a Swift enum case), not the locals of its functions. `members_only`: those members alone
        (the lines of a split type that no member chunk holds). `every`: all of them (a definition cut into
        windows: each window lists those that start in it, at most MAX_NAMES)."""
        found: list[tuple[str, int]] = []
        # (node, the scope it is in, whether a function's, whether its definition's walk: a detached body that
        # its definition walks with it, in its scope, `LanguageSpec.detached_bodies`)
        pending = [(child, scope, kind in _FUNCTION_KINDS, False) for child in reversed(node.named_children)]
        #: the detached bodies walked with their definition, skipped where their parent's walk meets them again:
        #: a Dart method's local function is the method's (`Service.run.helper`), not its class's
        claimed: set[tuple[int, int]] = set()
        uncapped = members_only or every  # a type's members, a window's names: capped per chunk
        while pending and (uncapped or len(found) < MAX_NAMES):
            child, owner, in_function, with_definition = pending.pop()
            if child.type in _SKIP_RECURSION or child.type in _COMMENTS:
                continue
            if child.type in self.spec.detached_bodies:
                if not with_definition and (child.start_byte, child.end_byte) in claimed:
                    continue
                in_function = True
            definition = self._definition(child)  # first: JavaScript's `const f = () => ...` is a member's node too
            if definition is None and child.type in self.spec.members:
                holder = child.parent.type if child.parent is not None else ""
                if holder in MEMBER_HOLDERS and (not in_function or holder == "formal_parameters"):
                    # a promoted constructor parameter is its class's (`Config.root`, not `Config.__construct.root`)
                    type_name = owner.rsplit(".", 1)[0] if holder == "formal_parameters" else owner
                    found.extend((f"{type_name}.{name}" if type_name else name, child.start_point.row)
                                 for name in member_names(child))
                # what its value defines (`val task = object : Runnable { fun run() }`) is named, its locals are not;
                # a block that is the class's body again (a Rails concern's `included do`) names its members
                body = holds_a_class_body(child)
                pending.extend((grandchild, owner, not body, False) for grandchild in reversed(child.named_children))
                continue
            if definition is not None:
                if members_only and definition[0].type == "namespace_definition":  # C++'s namespace is a scope,
                    # never a chunk: its left-over lines are the file's, and name what it declares
                    # (`leveldb.config.kNumLevels` was "probably not here")
                    scoped = f"{owner}.{definition[2]}" if owner and definition[2] else owner or definition[2]
                    pending.extend((grandchild, scoped, in_function, False)
                                   for grandchild in reversed(definition[0].named_children))
                    continue
                if members_only:  # another chunk's lines, or its own left-over lines list them
                    continue
                name = _member_name(definition[1], definition[2], owner) or definition[1]
                owner = f"{owner}.{name}" if owner else name
                found.append((owner, child.start_point.row))
                body = self._detached_sibling(child)
                if body is not None:
                    claimed.add((body.start_byte, body.end_byte))
                    pending.append((body, owner, True, True))
                child, in_function = definition[0], definition[1] in _FUNCTION_KINDS
            pending.extend((grandchild, owner, in_function, False) for grandchild in reversed(child.named_children))
        return found if uncapped else found[:MAX_NAMES]  # the caller's chunks cap their own

    def _segments(self, path: str, text: str) -> tuple[tree_sitter.Node, list[_Segment]]:
        """The parse's root and the definitions' segments, in the order `_collect` finds them."""
        self._default_export = module_name(path)
        root = self._parse(text).root_node
        segments: list[_Segment] = []
        self._collect(root, "", "", segments)
        return root, segments

    def chunk(self, path: str, text: str) -> list[Chunk]:
        root, segments = self._segments(path, text)
        self._table_paths = self.spec.table_paths(root) if self.spec.table_paths is not None else []
        lines = text.split("\n")
        segments.sort(key=lambda s: (s.start, s.end))
        if self.spec.clauses:
            segments = _join_clauses(segments)
        segments = self._join_on_long_lines(segments, lines)
        chunks: list[Chunk] = []
        covered_rows: set[int] = set()
        for segment in segments:
            covered_rows.update(range(segment.start, segment.end + 1))
            chunks.extend(self._emit(path, lines, segment))
        rest = [row for row in range(len(lines)) if row not in covered_rows]
        # what the file declares at its top in a line (Kotlin's `val ANY = ClassName(...)`, Swift's `typealias`)
        declared = _by_row((name, row) for name, row in self._nested(root, "", members_only=True)
                           if row not in covered_rows) if self.spec.members else ([], [])
        for run_start, run_end in _runs(rest):
            names = _starting_in(declared, run_start, run_end)
            chunks.extend(self._emit(path, lines, _Segment(run_start, run_end, "", "module", "", filler=True, names=names)))
        chunks.sort(key=lambda c: (c.start_line, c.end_line))
        if self.spec.named_by_file is not None or self.spec.also_named is not None:
            chunks = [self._also_named(path, chunk) for chunk in chunks]
        return chunks

    def named_rows(self, path: str, text: str) -> list[tuple[str, int]]:
        """Every name `chunk` would give the file's chunks, each with the row it starts on (1-based), without
        cutting: a generated file's windows list them (`FileChunker`)."""
        root, segments = self._segments(path, text)
        named = [(segment.symbol, segment.start + 1) for segment in segments if segment.symbol and not segment.filler]
        named.extend((name, row + 1) for segment in segments for name, row in segment.names)
        if self.spec.members:
            named.extend((name, row + 1) for name, row in self._nested(root, "", members_only=True))
        return named

    def _also_named(self, path: str, chunk: Chunk) -> Chunk:
        """The chunk with the name its file gives its definition (`LanguageSpec.named_by_file`) and the other
        name the definition answers to (`LanguageSpec.also_named`) among its names."""
        spec = self.spec
        if not chunk.symbol:
            return chunk
        found = (spec.named_by_file(path, chunk.symbol) if spec.named_by_file is not None else None,
                 spec.also_named(chunk.symbol) if spec.also_named is not None else None)
        names = tuple(name for name in found if name and name not in chunk.names)
        return replace(chunk, names=(*chunk.names, *names)) if names else chunk

    def _parse(self, text: str) -> tree_sitter.Tree:
        """The file's tree, read through the language's rewrites (rewrites.py): `before_parse` always; where
        the parse has errors, `reread` on the rows in error, that tree kept when fewer rows err (C whose
        conditional compilation breaks the parse: jq's `jv_dtoa.c` was one error node, leveldb's `class
        Limiter` ran to the end of `env_posix.cc`; bash's expansions)."""
        spec = self.spec
        if spec.before_parse is not None:
            text = spec.before_parse(text)
        tree = self.parser.parse(text.encode("utf-8", "surrogatepass"))
        if spec.reread is None or not tree.root_node.has_error:
            return tree
        errors = error_rows(tree)
        again = spec.reread(text, errors)
        if again == text:
            return tree
        second = self.parser.parse(again.encode("utf-8", "surrogatepass"))
        return second if sum(b - a + 1 for a, b in error_rows(second)) < sum(b - a + 1 for a, b in errors) else tree

    def _join_on_long_lines(self, segments: list[_Segment], lines: list[str]) -> list[_Segment]:
        """Definitions that share a long line (`text.is_long`: a minified bundle's thousands on one line) as
        one segment, the others its nested names: a chunk is lines, so each of them held the whole line."""
        joined: list[_Segment] = []
        for segment in segments:
            last = joined[-1] if joined else None
            if last is not None and segment.start <= last.end and any(
                    is_long(lines[row], self.max_chars) for row in range(segment.start, min(segment.end, last.end) + 1)):
                last.end = max(last.end, segment.end)
                if segment.symbol and len(last.names) < MAX_NAMES:
                    last.names = (*last.names, (segment.symbol, segment.start))
            else:
                joined.append(segment)
        return joined

    def _emit(self, path: str, lines: list[str], segment: _Segment) -> list[Chunk]:
        """One chunk for the segment, or windows when it is over the budget; blank edges trimmed."""
        start, end = segment.start, min(segment.end, len(lines) - 1)
        while start <= end and not lines[start].strip():
            start += 1
        while end >= start and not lines[end].strip():
            end -= 1
        if start > end:
            return []
        if segment.filler and segment.start == 0:  # the file's licence is nothing to find
            start += leading_licence(lines[start : end + 1], self.spec.name)
            if start > end:
                return []
        body = "\n".join(lines[start : end + 1])
        if segment.filler and not segment.names and (len(body.strip()) < 16
                                                      or carries_nothing(lines[start : end + 1], self.spec.name)):
            return []  # a lone brace, a magic comment, `namespace X;` between definitions: nothing to find
        if len(body) <= self.max_chars and end - start < self.window_lines * 3:
            header = segment.header or self._inside_table(segment, start)
            return [Chunk(path, start + 1, end + 1, body, segment.symbol, self.spec.name, segment.kind, header,
                          _listed(name for name, _ in segment.names))]
        parts = []  # (first row, last row, text): a long line is a window of its own, cut into pieces
        for part_start, part_end in _windows_by_size(lines, start, end, self.max_chars, self.window_lines * 3):
            if part_start == part_end and is_long(lines[part_start], self.max_chars):
                parts.extend((part_start, part_end, piece) for piece in line_pieces(lines[part_start], self.max_chars))
            else:
                parts.append((part_start, part_end, "\n".join(lines[part_start : part_end + 1])))
        chunks = []
        # a window of a definition is headed by its name too when the header is only its scope's: the
        # windows of leveldb's `struct Options` said "namespace leveldb (part 2 of 3)"
        own = segment.symbol.rsplit(".", 1)[-1]
        title = segment.symbol if not segment.header else segment.header if own in segment.header \
            else f"{segment.header} {own}"
        for index, (part_start, part_end, part_text) in enumerate(parts, 1):
            header = segment.header or self._inside_table(segment, part_start)
            if len(parts) > 1 and segment.kind != "module":
                header = with_sections(f"{title} (part {index} of {len(parts)})", lines[part_start : part_end + 1],
                                       self.spec.name)
            # a definition kept whole but cut here all the same (its doc comment above made it too long):
            # each window lists the nested definitions that start in it
            names = _listed(name for name, row in segment.names if part_start <= row <= part_end)
            chunks.append(Chunk(path, part_start + 1, part_end + 1, part_text, segment.symbol, self.spec.name,
                                segment.kind, header, names))
        return chunks

    def _inside_table(self, segment: _Segment, row: int) -> str:
        """The key path of the innermost table a module window starts inside of (begun above its first row),
        or "" (LanguageSpec.table_paths)."""
        if segment.kind != "module":
            return ""
        inside = [(first, name) for first, last, name in self._table_paths if first < row <= last]
        return max(inside)[1] if inside else ""


def _listed(names) -> tuple[str, ...]:
    """A chunk's nested names: each once (a PHP property and its getter share a name), at most MAX_NAMES."""
    return tuple(dict.fromkeys(names))[:MAX_NAMES]


def _join_clauses(segments: list[_Segment]) -> list[_Segment]:
    """Consecutive definitions of one name (a signature and its equations, or function heads one after
    another) as one segment: apart, each clause is a fragment that names the function but does not
    show it."""
    joined: list[_Segment] = []
    for segment in segments:
        last = joined[-1] if joined else None
        if (last is not None and not last.filler and not segment.filler and last.symbol == segment.symbol
                and last.kind == segment.kind and segment.start <= last.end + 2):
            last.end = max(last.end, segment.end)
            # the equations' `where` helpers with the signature's names (374 of hspec's 378 were defined nowhere)
            last.names = tuple({name: (name, row) for name, row in reversed((*last.names, *segment.names))}
                               .values())[::-1][:MAX_NAMES]
        else:
            joined.append(segment)
    return joined


def _by_row(named) -> tuple[list[tuple[str, int]], list[int]]:
    """(name, row) pairs in the order of their rows, with the rows apart (for `_starting_in`)."""
    ordered = sorted(named, key=lambda pair: pair[1])
    return ordered, [row for _, row in ordered]


def _starting_in(declared: tuple[list[tuple[str, int]], list[int]], first: int,
                 last: int) -> tuple[tuple[str, int], ...]:
    """The declared names whose rows are in [first, last]: by bisection, as a large type's left-over runs are many
    (a Dart class of fields between its methods: each run read every name again)."""
    ordered, rows = declared
    return tuple(ordered[bisect_left(rows, first):bisect_right(rows, last)])


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted row numbers as (first, last) pairs."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs


def _windows_by_size(lines: list[str], start: int, end: int, max_chars: int, max_lines: int):
    """Cut rows start..end into consecutive windows of at most max_chars characters and max_lines lines;
    a last window under a quarter of the budget is folded into the one before it."""
    windows: list[tuple[int, int]] = []
    window_start, size = start, 0
    for row in range(start, end + 1):
        length = len(lines[row]) + 1
        if row > window_start and (size + length > max_chars or row - window_start >= max_lines):
            windows.append((window_start, row - 1))
            window_start, size = row, 0
        size += length
    if windows and size < max_chars // 4:
        windows[-1] = (windows[-1][0], end)
    else:
        windows.append((window_start, end))
    return windows
