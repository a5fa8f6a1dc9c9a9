"""A workspace's own level of P(here)'s evidence, measured with generic descriptions.

The short shape's P(here) reads the fitted ranker's lead and the cosine of its first file. The lead's level
moves from one workspace to the next: a repository of many small look-alike files gives every
description a long lead, whether it describes its code or not (a repository of English prose gives a high
cosine, but read against its level the cosine lost: SHORT_FEATURES_WITH_LEVEL). Fitted on the dev
repositories, P(here) scored AUROC 0.705 and ECE 0.203 on four others (docs/benchmarks.md).

A workspace measures its own level without any label: it is asked REFERENCE_QUERIES (generic descriptions
of code, of no repository in particular, written once) and keeps the median and the spread of each
LEVELLED feature over their answers. A find's feature is then read as its distance from that level, in
spreads (`<name>_z`). Most of these descriptions are not about the workspace, some are; the median is
what an arbitrary description scores here, and that is the level the query has to rise above.

The level is a property of the corpus at large, not of a file: it is measured again only when the number
of chunks has moved by more than STALE_SHARE since, so a save does not pay for it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

#: what is read against the level: the ranker's lead (the cosines, levelled, ordered the dev descriptions no
#: better or worse than as they are: SHORT_FEATURES_WITH_LEVEL, docs/benchmarks.md)
LEVELLED = ("rank_lead",)
#: the measured level is kept until the corpus has grown or shrunk by this share of its chunks
STALE_SHARE = 0.05
#: a smaller workspace is read without its level: the smallest one the levelled model was fitted on has 512
#: chunks (koa), and in a few dozen chunks every generic description's lead is short, so that any match
#: would stand far above the level (a 39-chunk fixture put a near miss at P(here) 0.66, unlevelled 0.07)
MIN_CHUNKS = 500
#: written once, before any figure was computed with them, to cover what code does in general (none is
#: taken from a label; several are answered by some workspaces, which the median absorbs)
REFERENCE_QUERIES = (
    "parse the configuration file and merge it with default values",
    "retry a failed network call with exponential backoff",
    "hash a password with a salt before storing it",
    "render an HTML page from a template with variables",
    "resize an image and save a thumbnail",
    "read rows from a CSV file into records",
    "validate that an email address is well formed",
    "cache the result of an expensive function call",
    "log a warning when a deprecated option is used",
    "convert a timestamp into a human readable date",
    "split a long text into lines that fit a given width",
    "compare two version strings",
    "send an email with an attachment",
    "open a database connection from a pool",
    "escape special characters before inserting text into HTML",
    "watch a directory and react when a file changes",
    "compress a folder into a zip archive",
    "generate a random identifier for a new object",
    "check whether the user is allowed to perform an action",
    "serialize an object to JSON and back",
    "read environment variables with a fallback value",
    "schedule a job to run every night",
    "measure how long a function takes to run",
    "paginate a list of results for an API response",
    "upload a file to cloud storage",
    "decode a base64 string",
    "sort items by several keys",
    "download a file and show a progress bar",
    "parse command line arguments and print help",
    "handle a signal to shut down cleanly",
    "encrypt data with a symmetric key",
    "find the shortest path between two nodes in a graph",
    "normalize a file path across operating systems",
    "throttle how often a function can be called",
    "store user preferences between sessions",
    "translate interface strings into the user's language",
    "compute a checksum of a file",
    "merge two sorted lists",
    "format a number as currency",
    "detect the encoding of a text file",
)


def levelled_name(feature: str) -> str:
    return f"{feature}_z"


#: every column a level adds to a find (`<name>_z`): a one-line find of a single root of MIN_CHUNKS or more
#: carries each whose feature it has
LEVELLED_COLUMNS = frozenset(levelled_name(f) for f in LEVELLED)
#: the columns the short shape's model reads where the workspace's level is known: the lead against the
#: level, and the cosine of the ranker's first file as it is (levelled, it ordered the dev descriptions worse
#: held out, AUROC 0.842 -> 0.820, as levelling the top cosine alone did nothing before: docs/benchmarks.md)
SHORT_FEATURES_WITH_LEVEL = (levelled_name("rank_lead"), "rank_top_cosine")


@dataclass(frozen=True)
class WorkspaceLevel:
    """The median and spread of each LEVELLED feature over the reference queries, at `chunks` chunks."""

    medians: dict[str, float]
    spreads: dict[str, float]
    chunks: int

    @classmethod
    def measure(cls, answers: list[dict[str, float]], chunks: int) -> WorkspaceLevel:
        """From the reference queries' P(here) features (`FindResult.features`)."""
        values = {name: np.array([a.get(name, 0.0) for a in answers], dtype=np.float64) for name in LEVELLED}
        return cls({name: float(np.median(v)) for name, v in values.items()},
                   {name: float(v.std()) for name, v in values.items()}, chunks)

    def fresh(self, chunks: int) -> bool:
        """Whether it still holds for a corpus of `chunks`."""
        return abs(chunks - self.chunks) <= STALE_SHARE * max(self.chunks, 1)

    def levelled(self, features: dict[str, float]) -> dict[str, float]:
        """Each LEVELLED feature the find has, as its distance from this workspace's level in spreads."""
        return {levelled_name(name): (features[name] - self.medians[name]) / max(self.spreads[name], 1e-6)
                for name in LEVELLED if name in features}

    def to_json(self) -> str:
        return json.dumps({"medians": self.medians, "spreads": self.spreads, "chunks": self.chunks,
                           "queries": len(REFERENCE_QUERIES)})

    @classmethod
    def from_json(cls, text: str) -> WorkspaceLevel | None:
        """None for anything but a level measured with today's reference queries (a damaged or older
        file is measured again, never read half)."""
        try:
            data = json.loads(text)
            if data.get("queries") != len(REFERENCE_QUERIES):
                return None
            medians = {name: float(data["medians"][name]) for name in LEVELLED}
            spreads = {name: float(data["spreads"][name]) for name in LEVELLED}
            chunks = int(data["chunks"])
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError):
            return None
        numbers = [*medians.values(), *spreads.values()]
        if not all(math.isfinite(n) for n in numbers) or min(spreads.values()) < 0 or chunks < 0:
            return None  # a NaN read back would make every probability NaN
        return cls(medians, spreads, chunks)
