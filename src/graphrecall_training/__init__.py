"""Training graphrecall's own retrieval models (issue 46): outside the product package.

The product runs its models with onnxruntime alone; this package fine-tunes them on the
openly licensed dialogue QA in ``../shared/training`` and exports int8 ONNX files
(``python -m graphrecall_training``: one command per step; the ``training`` extra).
Rooms:

- ``data.py``: the training packs (one schema) and the held-out split, by conversation;
- ``passages.py``: a turn as the text the product embeds (``graph_model.indexed_text``);
- ``mine.py``: positives and hard negatives from the same conversation (BM25, the stock
  model's own mistakes, random turns);
- ``loop.py``: the training loop both models share (schedule, stops, early stopping);
- ``bi_encoder.py``: the embedder's loss and held-out measure (the shipped
  ``graphrecall-chat-minilm-l6-v1``, docs/models.md);
- ``cross_encoder.py``: the cross-encoder's (built and smoke-run, not trained or shipped
  yet);
- ``export.py``: ONNX export, int8 with the product's recipe, and the parity check;
- ``evaluate.py``: evidence recall of an embedding function on the held-out split and,
  for evaluation only, on the dev sets (LoCoMo, LongMemEval dev).

The benchmarks' files are never training data; the dev sets are read only by ``evaluate``.
"""
