"""Integer kernels for the bundled embedder, prepared on first load.

The shipped MiniLM file stores int8 weights but computes in fp32: each weight matrix is
cast back to float and scaled when the session starts. Re-quantising it with onnxruntime's
own tools (``quant_pre_process`` folds the weights back to fp32, then ``quantize_dynamic``
makes every weight MatMul a ``MatMulInteger``: int8 weights per output channel, uint8
activations quantised per batch) lets onnxruntime run integer matrix kernels (VNNI on CPUs
that have it).

Measured on the 2-core machine (docs/models.md): 10.3 -> 5.9 ms per LoCoMo message of ~70
tokens; cosine to the shipped model's vectors 0.993 mean, 0.986 worst over 300 messages;
LoCoMo episode recall unchanged with hybrid search (66.7 / 76.2 at @5 / @10 vs 66.9 /
75.9), vector-only 0.7 points lower.

The result depends only on the source file, this recipe and the onnxruntime version, so it
is cached on disk (``GRAPHRECALL_MODEL_CACHE``, default the user cache directory); where
the cache cannot be written it is rebuilt in memory on each start (several seconds).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

RECIPE = "quantize_dynamic-int8-per-channel-v1"


def cache_dir(configured: Path | None = None) -> Path:
    """``configured`` (the ``GRAPHRECALL_MODEL_CACHE`` setting) or the user cache directory."""
    if configured is not None:
        return Path(configured)
    import platformdirs

    return Path(platformdirs.user_cache_dir("graphrecall")) / "models"


def cache_path(source_sha256: str, directory: Path | None = None) -> Path:
    import onnxruntime

    key = hashlib.sha256(f"{source_sha256}:{RECIPE}:{onnxruntime.__version__}".encode())
    return cache_dir(directory) / f"minilm-{key.hexdigest()[:20]}.onnx"


def quantized_model(
    source: Path, source_sha256: str, *, use_cache: bool = True, directory: Path | None = None
) -> bytes:
    """The integer-kernel version of ``source`` as ONNX bytes (from the cache when there)."""
    target = cache_path(source_sha256, directory)
    if use_cache and target.is_file():
        return target.read_bytes()
    data = _build(source)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Written next to the target and renamed: a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".part")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        log.info(
            "model cache %s not writable (%s); the quantised model stays in memory", target, exc
        )
    return data


def _build(source: Path) -> bytes:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory(prefix="graphrecall-quantize-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        out = Path(tmp) / "quantized.onnx"
        # Symbolic shape inference needs sympy and adds nothing for these MatMuls.
        quant_pre_process(str(source), str(folded), skip_symbolic_shape=True)
        quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True)
        data = out.read_bytes()
    log.info("quantised %s for integer kernels (%d bytes)", source.name, len(data))
    return data
