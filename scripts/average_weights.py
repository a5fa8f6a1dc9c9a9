"""WiSE-FT (Wortsman et al., 2022): a fine-tuned checkpoint's weights averaged with its base's.

Fine-tuning on a narrow set (mined code pairs) can cost what the base knew (paraphrases); the average of
the two weight sets often keeps both. Numpy and safetensors only; the folder written is the fine-tuned
one's with its weights replaced, ready for `noul models export`.

    python scripts/average_weights.py TUNED_MODEL_DIR OUT_DIR [--base BASE_DIR] [--alpha 0.5]

alpha is the fine-tuned model's share (1: it unchanged, 0: the base).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def average(tuned: Path, out: Path, base: Path, alpha: float) -> int:
    from safetensors.numpy import load_file, save_file

    shutil.copytree(tuned, out)
    base_weights = load_file(str(base / "model.safetensors"))
    tuned_weights = load_file(str(tuned / "model.safetensors"))
    averaged, count = {}, 0
    for name, tensor in tuned_weights.items():
        if tensor.dtype.kind == "f" and name in base_weights and base_weights[name].shape == tensor.shape:
            mixed = alpha * tensor.astype(np.float32) + (1 - alpha) * base_weights[name].astype(np.float32)
            averaged[name] = mixed.astype(tensor.dtype)
            count += 1
        else:
            averaged[name] = tensor
    save_file(averaged, str(out / "model.safetensors"))
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tuned")
    parser.add_argument("out")
    parser.add_argument("--base", default="", help="default: the all-MiniLM-L6-v2 weights of the train extra")
    parser.add_argument("--alpha", type=float, default=0.5)
    args = parser.parse_args()
    from noul_lsp.train.fit import base_model_directory

    count = average(Path(args.tuned), Path(args.out), base_model_directory(args.base), args.alpha)
    print(f"{count} tensors averaged into {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
