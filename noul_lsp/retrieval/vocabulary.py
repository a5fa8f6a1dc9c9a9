"""Term ids and other string-keyed lookups without one Python string per key.

A corpus of a million chunks has over a million distinct BM25 terms; as a dict that is a few hundred MB
and seconds to rebuild on every open. Here the keys of a frozen table are 64-bit codes (blake2b), sorted,
looked up with `searchsorted`; keys added since live in a small dict until the next freeze. Two distinct
keys sharing a code among a million has a chance of about 1 in 10^7; a query word that is no term could
then score as one, which is harmless.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np


def key_code(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def key_codes(keys: Iterable[str]) -> np.ndarray:
    return np.fromiter((key_code(k) for k in keys), dtype=np.uint64)


#: how many found terms a vocabulary remembers before it starts again (`Vocabulary.get`)
FOUND_TERMS_KEPT = 100_000


class Vocabulary:
    """Term -> id, ids 0..n-1 in the order terms were first seen; only ever extended."""

    def __init__(self, codes: np.ndarray | None = None, ids: np.ndarray | None = None) -> None:
        self._codes = np.zeros(0, np.uint64) if codes is None else codes  # sorted
        self._ids = np.zeros(0, np.int64) if ids is None else ids  # id of each code
        self._added: dict[str, int] = {}
        #: terms found among the sorted codes, by term: a find looks each of its query's terms up several
        #: times (the lexical leg, the ranking stage, P(here)), and a hash and a search cost ~5 µs each,
        #: ~700 of them for an issue text. An id never changes once given, so what is found stays true.
        self._found: dict[str, int] = {}
        #: (vocabulary size it was built at, code per term id): see `codes_of`
        self._inverse: tuple[int, np.ndarray] = (0, np.zeros(0, np.uint64))

    def __len__(self) -> int:
        return len(self._codes) + len(self._added)

    def get(self, term: str, default: int | None = None) -> int | None:
        found = self._added.get(term)
        if found is None:
            found = self._found.get(term)
        if found is not None:
            return found
        if len(self._codes):
            code = np.uint64(key_code(term))
            position = int(np.searchsorted(self._codes, code))
            if position < len(self._codes) and self._codes[position] == code:
                if len(self._found) >= FOUND_TERMS_KEPT:
                    self._found = {}
                found = self._found[term] = int(self._ids[position])
                return found
        return default

    def __contains__(self, term: str) -> bool:
        return self.get(term) is not None

    def __getitem__(self, term: str) -> int:
        found = self.get(term)
        if found is None:
            raise KeyError(term)
        return found

    def codes_of(self, ids: np.ndarray) -> np.ndarray:
        """The key code of each term id (0 for an id it does not know): what a term id is compared with where
        strings are kept as codes (the symbol table's definition names). The inverse is built once per
        vocabulary size, not per query."""
        size, inverse = self._inverse
        if size != len(self):
            added = list(self._added.items())  # a copy: the indexer may extend the vocabulary meanwhile
            top = max(int(self._ids.max()) + 1 if len(self._ids) else 0, max((i for _, i in added), default=-1) + 1)
            inverse = np.zeros(top, dtype=np.uint64)
            inverse[self._ids] = self._codes
            if added:
                inverse[np.fromiter((i for _, i in added), dtype=np.int64)] = key_codes(t for t, _ in added)
            self._inverse = (len(self._codes) + len(added), inverse)
        ids = np.asarray(ids, dtype=np.int64)
        known = (ids >= 0) & (ids < len(inverse))
        return np.where(known, inverse[np.where(known, ids, 0)] if len(inverse) else 0, 0).astype(np.uint64)

    def assign(self, terms: Iterable[str]) -> dict[str, int]:
        """The id of each term, new ids for terms not seen yet."""
        terms = list(dict.fromkeys(terms))
        found: dict[str, int] = {}
        unknown: list[str] = []
        for term in terms:
            if term in self._added:
                found[term] = self._added[term]
            else:
                unknown.append(term)
        if unknown and len(self._codes):
            codes = key_codes(unknown)
            position = np.minimum(np.searchsorted(self._codes, codes), len(self._codes) - 1)
            hit = self._codes[position] == codes
            ids = self._ids[position]
            for term, is_known, term_id in zip(unknown, hit.tolist(), ids.tolist(), strict=True):
                if is_known:
                    found[term] = term_id
            unknown = [t for t in unknown if t not in found]
        for term in unknown:
            found[term] = self._added[term] = len(self)
        return found

    def freeze(self) -> Vocabulary:
        """Move the added terms into the sorted codes (after a full read; before a snapshot)."""
        if self._added:
            codes = np.concatenate([self._codes, key_codes(self._added)])
            ids = np.concatenate([self._ids, np.fromiter(self._added.values(), dtype=np.int64)])
            order = np.argsort(codes, kind="stable")
            self._codes, self._ids, self._added = codes[order], ids[order], {}
        return self

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        self.freeze()
        return self._codes, self._ids


class PackedMap(Mapping):
    """Key -> int32 array, packed: sorted key codes, offsets, one values array (what a snapshot stores of
    the symbol table's maps). Read-only; iteration is not offered (nothing needs it)."""

    def __init__(self, codes: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
        self.codes, self.offsets, self.values = codes, offsets, values

    @classmethod
    def of(cls, mapping: Mapping[str, np.ndarray]) -> PackedMap:
        keys = list(mapping)
        codes = key_codes(keys)
        order = np.argsort(codes, kind="stable")
        arrays = [np.asarray(mapping[keys[i]], dtype=np.int32) for i in order.tolist()]
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        if arrays:
            np.cumsum([len(a) for a in arrays], out=offsets[1:])
        values = np.concatenate(arrays).astype(np.int32) if arrays else np.zeros(0, np.int32)
        return cls(codes[order], offsets, values)

    def _position(self, key: str) -> int:
        if not len(self.codes):
            return -1
        code = np.uint64(key_code(key))
        position = int(np.searchsorted(self.codes, code))
        return position if position < len(self.codes) and self.codes[position] == code else -1

    def __getitem__(self, key: str) -> np.ndarray:
        position = self._position(key)
        if position < 0:
            raise KeyError(key)
        return self.values[self.offsets[position]:self.offsets[position + 1]]

    def __contains__(self, key) -> bool:
        return isinstance(key, str) and self._position(key) >= 0

    def get_many(self, keys: Sequence[str], codes: np.ndarray | None = None) -> list[np.ndarray | None]:
        """`[self.get(k) for k in keys]` with one binary search for all of them (`codes`: their key codes,
        when the caller has them already)."""
        if not len(self.codes) or not len(keys):
            return [None] * len(keys)
        codes = key_codes(keys) if codes is None else codes
        position = np.minimum(np.searchsorted(self.codes, codes), len(self.codes) - 1)
        found = (self.codes[position] == codes).tolist()
        starts, ends = self.offsets[position].tolist(), self.offsets[position + 1].tolist()
        return [self.values[s:e] if hit else None for s, e, hit in zip(starts, ends, found, strict=True)]

    def __iter__(self):
        raise TypeError("a PackedMap holds key codes, not keys: it cannot be iterated")

    def __len__(self) -> int:
        return len(self.codes)


def get_many(mapping: Mapping[str, np.ndarray], keys: Sequence[str],
             codes: np.ndarray | None = None) -> list[np.ndarray | None]:
    """`[mapping.get(k) for k in keys]`. The symbol table's maps read from a snapshot are packed, and an
    issue text asks two of them for its hundred terms a find: one hash and one search per term, where a
    packed map can search for all of them at once (with the vocabulary's remembered terms, 2 ms off an
    issue text's ranking stage at 127k chunks: docs/benchmarks.md, "Scale")."""
    many = getattr(mapping, "get_many", None)
    return many(keys, codes) if many is not None else [mapping.get(k) for k in keys]
