"""Training graphrecall's own retrieval models (issue 46): outside the product package.

The product runs its models with onnxruntime alone; this package is to fine-tune them on
the openly licensed dialogue QA in ``../shared/training`` and export int8 ONNX files.
Rooms so far:

- ``data.py``: the training packs (one schema) and the held-out split, by conversation;
- ``passages.py``: a turn as the text the product embeds (``ingest.indexed_text``);
- ``mine.py``: positives and hard negatives from the same conversation (BM25, and the
  stock model's own mistakes);
- ``evaluate.py``: evidence recall of an embedding function on the held-out split and,
  for evaluation only, on the dev sets (LoCoMo, LongMemEval dev).

Not built yet (issue 46): the fine-tuning loop (torch, in-batch and hard negatives), the
cross-encoder, ONNX export with int8 quantisation and the parity check, and the command
that runs each step; the parts above need no torch and are tested.

The benchmarks' files are never training data; the dev sets are read only by ``evaluate``.
"""
