"""Translations of one file, shown once: files whose paths differ only by a locale (`i18n/en.json`,
`i18n/de.json`, `i18n/zh-TW.json`; `docs/ko/tutorials/x.mdx` beside `docs/tutorials/x.mdx`; `app_en.arb`,
`app_fr.arb`) are one file in the answer, at the rank and score of the best of them and shown as that one,
unless the query names the language of another.

Why: localsend keeps 60 locales' strings and bloc its docs in 16 languages; "debounce the search text input
for GitHub repository search" put the same tutorial in five languages first and the example it asks for
eighth, and "English translation strings for the receive tab" filled the twenty with other locales' copies.
A family is three translations at least among the ranked files, two of them in a common language (so that
`src/io/`, `src/os/`, `src/gl/` are no family of Ido, Ossetian and Galician). Besides a folder or a file named
by its locale, the platforms' own places count: Android's `res/values-de/` (`values-pt-rBR`, `values-b+sr+Latn`),
Apple's `de.lproj/` (`Base.lproj` the copy without one), gettext's `sr@latin`, and a page whose folder and name
both say it (`docs/fr/README-fr.md`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from noul_lsp.retrieval.aggregate import Scored
from noul_lsp.retrieval.retrieve import Candidates

#: ISO 639-1 codes, the languages a locale is written in
_CODES = frozenset(
    "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el "
    "en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu "
    "ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na "
    "nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so "
    "sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
    .split())
#: ISO 639-2/3 codes that locale lists use where no two-letter code exists (Filipino, Asturian, Sorani, ...)
_CODES3 = frozenset("fil ast ckb yue haw kab sat szl ceb chr gsw hsb dsb fur nds sco vec mai mni bgc tzm".split())
#: the languages most translated into, by name (a query naming one wants that locale's copy); the family test
#: asks two of them among its members
LANGUAGE_CODES = {"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it",
                  "portuguese": "pt", "russian": "ru", "chinese": "zh", "japanese": "ja", "korean": "ko",
                  "arabic": "ar", "hindi": "hi", "dutch": "nl", "polish": "pl", "turkish": "tr", "swedish": "sv",
                  "ukrainian": "uk", "czech": "cs", "persian": "fa", "hebrew": "he", "vietnamese": "vi", "thai": "th",
                  "greek": "el", "danish": "da", "finnish": "fi", "norwegian": "nb", "hungarian": "hu",
                  "romanian": "ro", "bengali": "bn", "indonesian": "id"}
_COMMON = frozenset(LANGUAGE_CODES.values()) - {"it", "id"}  # `src/it/` holds integration tests, `id/` ids
#: a locale: its language, then a region (`en-US`, `pt_BR`, `es-419`) or a script (`zh-Hant`), then gettext's
#: modifier (`sr@latin`)
_LOCALE = r"[a-z]{2,3}(?:[-_](?:[A-Z]{2}|[a-z]{2}|[A-Z][a-z]{3}|[0-9]{3}))?(?:@[a-z]+)?"
#: a folder that is a locale: `de/`, `pt_BR/`, Apple's `de.lproj/`, Android's `values-de/`, `values-pt-rBR/`,
#: `values-b+sr+Latn/` (the locale is group 1; the folder without it is the default copy's)
_ANDROID_LOCALE = r"[a-z]{2,3}-r[A-Z]{2}|b\+[a-z]{2,3}(?:\+[A-Z][a-z]{3})?(?:\+(?:[A-Z]{2}|[0-9]{3}))?"
_FOLDER = re.compile(rf"(?:values-)?({_LOCALE}|{_ANDROID_LOCALE})(?:\.lproj)?\Z")
#: the folders of a platform's copy without a locale
_DEFAULT_FOLDERS = frozenset(("Base.lproj",))
#: a locale in a file's name, alone or after a separator, before its extension (`en.json`, `app_en.arb`,
#: `strings_pt_PT.g.dart`, `README.zh-CN.md`)
_IN_NAME = re.compile(rf"(?:^|(?<=[._-]))({_LOCALE})(?=\.[^/]*$)")
_MIN_MEMBERS = 3


def language(locale: str) -> str:
    """A locale's language (`pt_BR` -> `pt`, `sr@latin` -> `sr`, `zh-rTW` -> `zh`, `b+sr+Latn` -> `sr`, `fil`
    -> `fil`); "" for none."""
    return re.split(r"[-_@+]", locale.removeprefix("b+"), maxsplit=1)[0]


def _is_language(code: str) -> bool:
    return code in _CODES or code in _CODES3


def locale_of(path: str) -> tuple[str, str, str] | None:
    """(the path's family key, its locale, the path of its default-locale copy or "") where a folder or the
    file's name is a locale; None where neither is. The file's name counts first, then the innermost folder; a
    folder of the same locale as the name is part of the key too (`docs/fr/README-fr.md`)."""
    folders = path.split("/")
    name = folders.pop()
    found = None
    for found in _IN_NAME.finditer(name):
        pass
    if found is not None and _is_language(language(found.group(1))):
        locale = found.group(1)
        start, end = found.span(1)
        key_folders = ["{}" if folder == locale else folder for folder in folders]
        # `README.zh-CN.md`'s default copy is `README.md` (`docs/fr/README-fr.md`'s `docs/README.md`); `en.json`
        # has none
        default = "/".join([*(f for f in folders if f != locale), name[:start - 1] + name[end:]]) if start else ""
        return "/".join([*key_folders, name[:start] + "{}" + name[end:]]), locale, default
    for index in range(len(folders) - 1, -1, -1):
        folder = folders[index]
        if folder in _DEFAULT_FOLDERS:  # `Base.lproj`: the copy without a locale, keyed as its family
            return "/".join([*folders[:index], "{}.lproj", *folders[index + 1:], name]), "", ""
        match = _FOLDER.match(folder)
        if match and _is_language(language(match.group(1))):
            start, end = match.span(1)
            if folder.endswith(".lproj"):
                default_folders = [*folders[:index], "Base.lproj"]
            else:  # `values-de` -> `values`; `de` -> none
                default_folders = [*folders[:index], *([folder[:start - 1]] if start else [])]
            key = "/".join([*folders[:index], folder[:start] + "{}" + folder[end:], *folders[index + 1:], name])
            return key, match.group(1), "/".join([*default_folders, *folders[index + 1:], name])
    return None


def is_family(languages: set[str]) -> bool:
    """Whether files of these languages (one each; "" the copy without a locale) are translations of one file:
    three at least, two of them common (`src/io/`, `src/os/`, `src/gl/` are no Ido, Ossetian and Galician)."""
    return len(languages) >= _MIN_MEMBERS and len(languages & _COMMON) >= 2


def asked_locales(terms: Iterable[str]) -> frozenset[str]:
    """The languages a query names (`english` -> `en`)."""
    return frozenset(LANGUAGE_CODES[term] for term in terms if term in LANGUAGE_CODES)


#: how near the best member's score the default copy's (or the English one's) is shown instead: translations that
#: share their markup score alike, and IceCubesApp's extension was shown by its Korean `InfoPlist.strings` for an
#: English question; a query that matched one copy's own words (a quoted German sentence) keeps that one
_DEFAULT_COPY_WITHIN = 0.05


def _default_copy(family: list[int], languages: list[str], scored: Scored, first: int) -> int:
    """The family's member shown where the query names no language: the copy without a locale, else the English
    one, when its score is within `_DEFAULT_COPY_WITHIN` of the best's; else the best."""
    best = scored[first][0]
    for wanted in ("", "en"):
        member = next((p for p in family if languages[p] == wanted), None)
        if member is not None and scored[member][0] >= best - _DEFAULT_COPY_WITHIN * abs(best):
            return member
    return first


def fold_translations(scored: Scored, candidates: list[Candidates], asked: frozenset[str] = frozenset()) -> Scored:
    """The ranked files with each family of translations once, at its best member's rank and score, as that
    member (the copy the query matched: a file named by its path, a quoted German sentence, sphinx's `ja.py` for
    TinySegmenter), or as its member in a language the query names ("German strings of ..."), or as its copy
    without a locale (or its English one) when that scores about as well (`_default_copy`)."""
    paths = []
    for _, keys in scored:
        index, row = keys[0]
        arrays = candidates[index].arrays
        paths.append((index, arrays.files[int(arrays.row_file[row])]))
    located = [locale_of(path) for _, path in paths]
    languages = [language(found[1]) if found is not None else "" for found in located]  # "" for no locale
    members: dict[tuple[int, str], list[int]] = {}
    for position, ((index, _), found) in enumerate(zip(paths, located, strict=True)):
        if found is not None:
            members.setdefault((index, found[0]), []).append(position)
    by_path = {(index, path): position for position, (index, path) in enumerate(paths)}
    shown_at: dict[int, int] = {}  # a family's best position -> the position of the member shown there
    dropped: set[int] = set()
    for (index, _), positions in members.items():
        default = by_path.get((index, located[positions[0]][2]))  # the copy without a locale, where ranked
        family = sorted([*positions, *([default] if default is not None else [])])
        if not is_family({languages[p] for p in family}):
            continue
        first = family[0]
        asked_member = next((p for p in family if languages[p] in asked), None)
        shown_at[first] = asked_member if asked_member is not None else _default_copy(family, languages, scored, first)
        dropped.update(family[1:])
    if not shown_at:
        return scored
    return [(score, scored[shown_at.get(position, position)][1]) for position, (score, _) in enumerate(scored)
            if position not in dropped or position in shown_at]
