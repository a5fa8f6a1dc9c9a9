"""The unit of retrieval: a contiguous line range of one file, with the context an embedder needs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

#: the kind of every chunk of a file a tool wrote (the role of such a file is `generated`: roles.py)
GENERATED_KIND = "generated"
#: the kind of every chunk of a configuration that builds objects (Hydra's `_target_:`, package directive and
#: defaults list, LightningCLI's `class_path:`: `yaml_keys._BUILDS_OBJECTS`): a program written as settings, whose
#: role is source (roles.py)
OBJECTS_KIND = "objects"
#: how many names nested in a chunk it lists (`Chunk.names`: a class of a few hundred one-line methods, a
#: values file's keys, a table's columns stop there)
MAX_NAMES = 64


@dataclass(frozen=True, slots=True)
class Chunk:
    """A line range of a file. Lines are 1-based and inclusive.

    `header` is the context the code alone lacks (enclosing class signature, "part 2 of f"); it is
    embedded together with the text. `content_hash` covers exactly what is embedded (header and text,
    not the path), so a vector is reused across edits elsewhere in the file, renames and commits.
    """

    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str
    language: str
    kind: str
    header: str = ""
    #: the definitions inside the chunk besides its own (a small class's methods, a Ruby module's classes),
    #: qualified as `symbol` is: the symbol table knows them as definitions of this chunk. Not embedded.
    names: tuple[str, ...] = ()
    content_hash: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "content_hash", hash_text(self.embed_text))

    @property
    def embed_text(self) -> str:
        return f"{self.header}\n{self.text}" if self.header else self.text

    @property
    def key(self) -> str:
        """Unique within a workspace: path, start line and content identify one chunk."""
        return f"{path_key(self.path)}\0{self.start_line:08d}\0{self.content_hash}"


def shifted(chunks: list[Chunk], rows: int) -> list[Chunk]:
    """Chunks cut from a part of a file that starts `rows` rows into it, on the file's rows (a notebook's cell,
    a component's script, a template's or a YAML section's lines)."""
    return [replace(chunk, start_line=chunk.start_line + rows, end_line=chunk.end_line + rows) for chunk in chunks]


def path_key(path: str) -> str:
    """The path itself, or a digest of it when it would not fit LMDB's 511-byte key limit."""
    if len(path.encode("utf-8", "surrogateescape")) <= 400:
        return path
    return "#" + hashlib.blake2b(path.encode("utf-8", "surrogateescape"), digest_size=20).hexdigest()


def hash_text(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
