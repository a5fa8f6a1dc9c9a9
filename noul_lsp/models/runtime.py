"""ONNX Runtime sessions: CUDA when onnxruntime-gpu and a GPU are there, else CPU, and always said which.

onnxruntime-gpu installs on machines without CUDA and then quietly runs on the CPU after logging
"Failed to create CUDAExecutionProvider"; `open_session` reads the providers the session really got, so
the device we report is the one that runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np


def model_key(model_id: str, token_budget: int) -> str:
    """Identifies a set of vectors: the same model with another token budget gives other vectors."""
    return f"{model_id}@{token_budget}"

T = TypeVar("T")


def gpu_present() -> bool:
    """Whether this machine shows an NVIDIA GPU (its driver's device nodes): the CPU fallback is worth a note
    only where there is a GPU the runtime could not use."""
    return Path("/dev/nvidiactl").exists() or Path("/proc/driver/nvidia").exists()


@dataclass(frozen=True)
class Session:
    session: object  # onnxruntime.InferenceSession
    device: str  # "cuda" or "cpu"
    #: why the GPU is not used although it was asked for, else ""
    fallback_reason: str
    input_names: tuple[str, ...]
    output_names: tuple[str, ...]

    def run(self, feeds: dict) -> list:
        return self.session.run(None, feeds)


def padded_batch(rows: Sequence[Sequence[int]], pad_id: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of a batch padded to its longest row, and the attention mask (1 on real tokens)."""
    width = max(len(row) for row in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for index, row in enumerate(rows):
        ids[index, : len(row)] = row
        mask[index, : len(row)] = 1
    return ids, mask


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Input positions grouped into batches of similar token length (short first), so padding stays small;
    callers write each batch's outputs back at these positions."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    return [order[start : start + size] for start in range(0, len(order), size)]


class SessionModel:
    """A model that runs in one ONNX session and says where: subclasses set `_session`."""

    _session: Session

    @property
    def device(self) -> str:
        return self._session.device

    @property
    def fallback_reason(self) -> str:
        return self._session.fallback_reason


class ModelUnreadable(RuntimeError):
    """A model file that is there but does not load: damaged, cut short, not ONNX, or an operator this
    onnxruntime lacks. The workspace then searches without that model and says why."""


def open_session(model_path: Path, *, use_gpu: bool = True, threads: int = 0) -> Session:
    try:
        import onnxruntime as ort
    except ImportError as error:  # a dependency, but say what to do if an environment lost it
        raise RuntimeError("onnxruntime is not installed: `pip install onnxruntime`") from error
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or max(1, os.cpu_count() or 1)
    options.log_severity_level = 3  # the provider fallback is reported by us, not as a log line
    available = ort.get_available_providers()
    wanted = ["CPUExecutionProvider"]
    fallback_reason = ""
    if use_gpu:
        if "CUDAExecutionProvider" in available:
            wanted.insert(0, "CUDAExecutionProvider")
        else:
            fallback_reason = "onnxruntime has no CUDA provider (install noul-lsp[gpu] on a machine with a GPU)"
    try:
        session = ort.InferenceSession(str(model_path), options, providers=wanted)
    except Exception as error:  # onnxruntime's own types: a damaged or cut-short file, an unknown operator
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelUnreadable(f"{model_path} does not load as an ONNX model ({reason})") from error
    got = session.get_providers()
    device = "cuda" if got and got[0] == "CUDAExecutionProvider" else "cpu"
    if use_gpu and device == "cpu" and not fallback_reason:
        fallback_reason = "CUDA provider failed to start (missing CUDA/cuDNN libraries or no GPU)"
    return Session(session, device, fallback_reason, tuple(i.name for i in session.get_inputs()),
                   tuple(o.name for o in session.get_outputs()))


_SHARED: dict[tuple, object] = {}
_SHARED_LOCK = threading.Lock()


def shared_model(key: tuple, build: Callable[[], T]) -> T:
    """One loaded model per `key` in the process, whatever number of workspace roots use it: every extra
    ONNX session holds another copy of the weights, its own memory arena and thread pool (six roots of the
    dev bench: peak RSS 1,143 MB with an embedder each, 637 MB shared; scripts/multiroot_probe.py)."""
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = build()
        return _SHARED[key]  # type: ignore[return-value]
