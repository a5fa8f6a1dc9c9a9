"""Code-aware terms for BM25.

`getHTTPResponse2` yields `gethttpresponse2` (the whole identifier, so an exact name still ranks first)
and its parts `get`, `http`, `response`, `2`; `max_retry_count` yields itself and `max`, `retry`, `count`.
Everything is lower-cased. English stop words and one-letter parts are dropped: they match everything.
"""

from __future__ import annotations

import re
from collections import Counter

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

STOP_WORDS = frozenset("""
a an and are as at be but by for from has have if in into is it its of on or that the their then there these
this to was were will with we you your i me my our us what when where which who why how do does did done
not no can could should would may might must shall so than too very just also any all each some such only
own same other about above after again against before below between both during further here once out over
under until up off while more most few nor been being having am he she they them his her him it's don't
""".split())


def identifier_terms(identifier: str) -> list[str]:
    """The identifier lower-cased, then its snake/camel/digit parts when it has more than one."""
    whole = identifier.lower().strip("_")
    if not whole:
        return []
    parts = [p.lower() for piece in identifier.split("_") for p in _PARTS.findall(piece)]
    if len(parts) <= 1:
        return [whole]
    return [whole, *parts]


def terms(text: str) -> list[str]:
    """Every BM25 term of `text`, in order, repeats kept."""
    found: list[str] = []
    for identifier in _IDENTIFIER.findall(text):
        for term in identifier_terms(identifier):
            if len(term) > 1 and term not in STOP_WORDS:
                found.append(term)
    return found


def term_counts(text: str) -> dict[str, int]:
    return dict(Counter(terms(text)))


def query_terms(query: str) -> list[str]:
    """Unique terms of a query, first occurrence order. A multi-KB issue text keeps all of them."""
    return list(dict.fromkeys(terms(query)))
