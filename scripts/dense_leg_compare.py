"""Acc@1/Acc@5 of the dense pipeline from bench records, raw and with the hits of embed_last files (tests, docs)
removed: the same chunk set as a run whose tests and docs have no vectors. Paths of the records are below."""
import json
from collections import defaultdict

from noul_lsp.bench import metrics as m
from noul_lsp.config import IndexSettings
from noul_lsp.workspace.discovery import gitignore_spec

spec = gitignore_spec(IndexSettings().embed_last)
def table(path, pipeline, filtered):
    rows = defaultdict(list)
    for l in open(path):
        r = json.loads(l)
        if r['pipeline'] != pipeline or r['kind'] != 'answerable' or r.get('searched') != 'own': continue
        ranked = [p for p, _ in r['ranked']]
        if filtered: ranked = [p for p in ranked if not spec.match_file(p)]
        for k in (r['label_file'], 'all'):
            rows[k].append((m.accuracy_at(ranked, r['gold_files'], 1), m.accuracy_at(ranked, r['gold_files'], 5)))
    return {k: (round(sum(a for a, _ in v)/len(v), 3), round(sum(b for _, b in v)/len(v), 3), len(v)) for k, v in rows.items()}
print('old dense raw     ', table('/tmp/c0/per_query.jsonl', 'dense', False))
print('old dense filtered', table('/tmp/c0/per_query.jsonl', 'dense', True))
print('new dense         ', table('/tmp/c1/per_query.jsonl', 'dense', False))
print('new dense filtered', table('/tmp/c1/per_query.jsonl', 'dense', True))
