"""The words a person reads for a find: P(here), one labelled score per hit, the file's role.

The CLI and the language server's hover use these; the editors mirror them (editors/vscode/src/format.ts,
editors/nvim/lua/noul/init.lua), so a number means the same thing everywhere.
"""

from __future__ import annotations

from noul_lsp.retrieval.result import FindResult, Hit

#: below this P(here) a find warns that the code is probably not in the workspace (the editors use the same)
LOW_HERE = 0.3


def here_text(probability: float | None, why: str = "") -> str:
    """P(here) in words; `why` is the find's reason when it gave none (`signals["here"]`: a narrowed search
    is not measured, which "not calibrated" would misname)."""
    if probability is None:
        return f"P(here) {why}" if why else "P(here) not calibrated"
    text = f"P(here) {probability:.2f}"
    return f"{text} — probably not in this workspace" if probability < LOW_HERE else text


def score_is_share(result: FindResult) -> bool:
    """Whether each hit's score is its probability among the candidates (the fitted ranker ran)."""
    return result.signals.get("ranking", "").startswith("fitted") and all(0 < h.score <= 1 for h in result.hits)


def percent(value: float) -> str:
    return "100%" if value >= 0.995 else "<1%" if value < 0.01 else f"{round(100 * value)}%"


def score_text(hit: Hit, *, share: bool, top: float) -> str:
    """The one number a person reads for a hit: the calibrated chance that it is the answer when the model
    pair is calibrated, else its share of the candidates' probability, else its score relative to the top."""
    if hit.probability is not None:
        return f"P(answer) {hit.probability:.2f}"
    if share:
        return f"{percent(hit.score)} of candidates"
    return f"{percent(hit.score / top)} of top" if top > 0 else ""


def score_texts(result: FindResult) -> dict[int, str]:
    """score_text of every hit of a result, by rank."""
    share = score_is_share(result)
    top = max((h.score for h in result.hits), default=0.0)
    return {h.rank: score_text(h, share=share, top=top) for h in result.hits}


def legend(result: FindResult) -> str:
    """What the numbers of a result list mean, in words (after P(here) in the CLI)."""
    parts = []
    if result.here_probability is not None:
        parts.append("P(here): is it in this workspace")
    texts = score_texts(result).values()
    if any(t.startswith("P(answer)") for t in texts):
        parts.append("P(answer): is this hit it")
    if any(t.endswith("of candidates") for t in texts):
        parts.append("%: the hit's share of the candidates' probability")
    if any(t.endswith("of top") for t in texts):
        parts.append("%: the hit's score relative to the first")
    return f"  ({'; '.join(parts)})" if parts else ""


def hover_markdown(hit: Hit, here_probability: float | None, query: str, *, share: bool = False,
                   top: float = 0.0, here_why: str = "") -> str:
    """What hovering a returned range shows: rank, symbol, role, the labelled scores and the signals."""
    signals = []
    if hit.bm25_rank is not None:
        signals.append(f"BM25 rank {hit.bm25_rank}")
    if hit.dense_rank is not None:
        signals.append(f"embedding rank {hit.dense_rank}")
    if hit.rerank_score is not None:
        signals.append(f"rerank score {hit.rerank_score:.3f}")
    symbol = f" `{hit.symbol}`" if hit.symbol else ""
    role = f" · {hit.role} file" if hit.role else ""
    scores = [score_text(hit, share=share, top=top or hit.score)]
    if hit.probability is not None and share:
        scores.append(f"{percent(hit.score)} of candidates")
    scores.append(here_text(here_probability, here_why))
    return "\n".join([
        f"**noul** — rank {hit.rank}{symbol}{role} for *{query}*",
        "",
        f"- {' · '.join(s for s in scores if s)}",
        f"- score {hit.score:.4f}; signals: {', '.join(signals) if signals else 'none'}",
    ])
