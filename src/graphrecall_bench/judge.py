"""``graphrecall bench judge``: the quality rule as a command. A ranking change ships only if
it loses on neither LoCoMo nor LongMemEval, overall or on either half (issue 29).

``bench locomo --workdir DIR`` and ``bench longmemeval --workdir DIR`` leave their database
and a question file (``questions.json``: each question's graph, text, evidence and half)
in DIR. This command asks every question of each given directory twice, in-process as the
episode search service asks it (``engine.search``, the service's options, the period a
time phrase names), once with the shipped settings and once with the change
(``--try "vector=1.0,rrf_k=6"``). It reports evidence recall@5/@10/@25 overall and on
each half, the paired difference per question with its standard error, and a verdict: the
change **holds** only if no set and no half is lower at @5 or @10.

What a change can be: leg weights (``bm25``, ``vector``, ``facts``, ``time``, ``role``,
``exchange``, ``answer``),
``rrf_k`` and the episode BM25 constants (``k1``, ``b``). Column weights change what is
indexed, so they need a new database, not this command.

Halves: LoCoMo's first and second half of its samples; LongMemEval's even and odd
questions. Recall is the share of a question's evidence units among the top k, a unit
being an episode (LoCoMo) or a turn (LongMemEval: a long turn is several messages).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphrecall.domain import scopes
from graphrecall.domain.scopes import Bm25, SearchScope
from graphrecall_bench.build import is_postgres
from graphrecall_bench.retrieval_metrics import recall_at, units
from graphrecall_bench.tables import pct, text_table, write_json

if TYPE_CHECKING:
    from graphrecall.ml.cross_encoder import CrossEncoder
    from graphrecall.ml.embedder import Embedder
    from graphrecall.retrieval.engine import SearchOptions
    from graphrecall.store.base import Store

QUESTIONS_FILE = "questions.json"
KS = (5, 10, 25)
JUDGED_KS = (5, 10)  # the rule's cut-offs; @25 is reported
LEGS = ("bm25", "vector", "facts", "time", "role", "exchange", "answer")
EPSILON = 1e-9  # a difference this small is a tie (float sums of the same recalls)


@dataclass(frozen=True)
class JudgedQuestion:
    """One question as a bench left it: ``relevant`` are units (episode uuids, or turn ids
    when ``unit_of`` maps each episode to its turn)."""

    id: str
    graph: str
    query: str
    relevant: tuple[str, ...]
    half: int
    unit_of: Mapping[str, str] | None = None


def write_questions(
    work: Path, benchmark: str, db_file: str, questions: Sequence[JudgedQuestion]
) -> Path:
    """The question file next to a bench's database (``db_file``: a SQLite file relative to
    ``work``, or a PostgreSQL URL)."""
    path = work / QUESTIONS_FILE
    write_json(
        path,
        {
            "benchmark": benchmark,
            "db": db_file,
            "questions": [dataclasses.asdict(q) for q in questions],
        },
    )
    return path


def read_questions(work: Path) -> tuple[str, Path | str, list[JudgedQuestion]]:
    """(benchmark, database: a SQLite path or a PostgreSQL URL, questions) of a bench work
    directory."""
    path = work / QUESTIONS_FILE
    if not path.is_file():
        raise ValueError(
            f"{path} not found: run bench locomo / longmemeval with --workdir {work} first"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    questions = [
        JudgedQuestion(
            id=q["id"],
            graph=q["graph"],
            query=q["query"],
            relevant=tuple(q["relevant"]),
            half=int(q["half"]),
            unit_of=q.get("unit_of"),
        )
        for q in data["questions"]
    ]
    db = str(data["db"])
    return str(data["benchmark"]), db if is_postgres(db) else work / db, questions


# -- the change ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """Settings that differ from the shipped episode search; empty = shipped."""

    weights: Mapping[str, float] = field(default_factory=dict)
    rrf_k: int | None = None
    k1: float | None = None
    b: float | None = None
    reranker: str | None = None  # a registered reranker's name (retrieval/rerank)

    @classmethod
    def parse(cls, text: str) -> Change:
        """``"vector=1.0,rrf_k=6,b=0.75"`` or ``"reranker=cross_encoder"``; a bad key or
        value raises ValueError naming it."""
        from graphrecall.retrieval.rerank import NAMES

        weights: dict[str, float] = {}
        values: dict[str, Any] = {}
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            key, sep, raw = part.partition("=")
            key = key.strip()
            if not sep:
                raise ValueError(f"--try: {part!r} is not key=value")
            if key == "reranker":
                if raw.strip() not in NAMES:
                    known = ", ".join(NAMES)
                    raise ValueError(f"--try: unknown reranker {raw.strip()!r} (known: {known})")
                values["reranker"] = raw.strip()
                continue
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"--try: {key} must be a number, not {raw.strip()!r}") from None
            if not math.isfinite(value):
                raise ValueError(f"--try: {key} must be finite")
            if key in LEGS:
                if value < 0:
                    raise ValueError(f"--try: leg weight {key} must be >= 0")
                weights[key] = value
            elif key == "rrf_k":
                if value < 1 or value != int(value):
                    raise ValueError("--try: rrf_k must be a whole number >= 1")
                values["rrf_k"] = int(value)
            elif key == "k1":
                if value <= 0:
                    raise ValueError("--try: k1 must be > 0")
                values["k1"] = value
            elif key == "b":
                if not 0 <= value <= 1:
                    raise ValueError("--try: b must be within [0, 1]")
                values["b"] = value
            else:
                known = ", ".join((*LEGS, "rrf_k", "k1", "b", "reranker"))
                raise ValueError(f"--try: unknown setting {key!r} (known: {known})")
        return cls(weights=weights, **values)

    def apply(self, spec: SearchScope, opts: SearchOptions) -> tuple[SearchScope, SearchOptions]:
        from graphrecall.retrieval.engine import DEFAULT_LEG_WEIGHTS

        if self.rrf_k is not None:
            spec = dataclasses.replace(spec, rrf_k=self.rrf_k)
        if self.k1 is not None or self.b is not None:
            old = spec.bm25
            spec = dataclasses.replace(
                spec,
                bm25=Bm25(
                    self.k1 if self.k1 is not None else old.k1,
                    self.b if self.b is not None else old.b,
                ),
            )
        if self.weights:
            base = opts.weights or spec.leg_weights or DEFAULT_LEG_WEIGHTS
            opts = dataclasses.replace(opts, weights={**base, **self.weights})
        if self.reranker is not None:
            opts = dataclasses.replace(opts, reranker=self.reranker)
        return spec, opts

    def describe(self) -> str:
        parts = [f"{k}={v:g}" for k, v in self.weights.items()]
        for name in ("rrf_k", "k1", "b"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value:g}")
        if self.reranker is not None:
            parts.append(f"reranker={self.reranker}")
        return ",".join(parts) or "shipped"


# -- ranking ---------------------------------------------------------------------------------


def rank(
    store: Store,
    embedder: Embedder | None,
    question: JudgedQuestion,
    changes: Sequence[Change],
    depth: int = max(KS),
    cross_encoder: CrossEncoder | None = None,
) -> list[list[str]]:
    """The question's top ``depth`` units under each change (as the episode search service
    ranks: its options and the period a time phrase names, in UTC as a bench user's)."""
    from graphrecall.retrieval import engine
    from graphrecall.services.graph.search import SearchParams, options, period

    base = options(SearchParams(query=question.query), "episodes")
    base = dataclasses.replace(base, time_window=period(question.query, lambda: "UTC"))
    shared = engine.Shared()  # the query vector and vector leg do not depend on the change
    out = []
    for change in changes:
        spec, opts = change.apply(scopes.SCOPES["episodes"], base)
        found = engine.search(store, embedder, cross_encoder, spec, question.graph, opts, shared)
        out.append(units([h.uuid for h in found.hits], question.unit_of)[:depth])
    return out


# -- the report ------------------------------------------------------------------------------


def paired(diffs: Sequence[float]) -> dict[str, float | None]:
    """Mean of per-question differences and its standard error (None below 2 questions)."""
    values = np.asarray(diffs, dtype=np.float64)
    if not len(values):
        return {"mean": None, "se": None}
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else None
    return {"mean": round(float(values.mean()), 6), "se": None if se is None else round(se, 6)}


def summarise(
    questions: Sequence[JudgedQuestion],
    shipped: Sequence[Sequence[str]],
    changed: Sequence[Sequence[str]],
) -> dict[str, Any]:
    """Recalls of both rankings overall and per half, paired differences, and what loses."""
    groups: dict[str, list[int]] = {"all": list(range(len(questions)))}
    for half in sorted({q.half for q in questions}):
        groups[f"half {half + 1}"] = [i for i, q in enumerate(questions) if q.half == half]
    out: dict[str, Any] = {}
    losses: list[str] = []
    for name, members in groups.items():
        entry: dict[str, Any] = {"questions": len(members)}
        for k in KS:
            a = [recall_at(shipped[i], questions[i].relevant, k) for i in members]
            b = [recall_at(changed[i], questions[i].relevant, k) for i in members]
            diff = paired([y - x for x, y in zip(a, b, strict=True)])
            entry[f"@{k}"] = {
                "shipped": round(float(np.mean(a)), 6) if a else None,
                "changed": round(float(np.mean(b)), 6) if b else None,
                "difference": diff,
            }
            if k in JUDGED_KS and diff["mean"] is not None and diff["mean"] < -EPSILON:
                losses.append(f"{name} @{k}")
        out[name] = entry
    out["losses"] = losses
    return out


def verdict(sets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    losses = [f"{name}: {loss}" for name, s in sets.items() for loss in s["losses"]]
    return {"holds": not losses, "losses": losses, "sets": list(sets)}


def report(sets: Mapping[str, Mapping[str, Any]], change: Change) -> str:
    rows = []
    for name, s in sets.items():
        for group in (g for g in s if g != "losses"):
            entry = s[group]
            cells = [f"{name} {group} ({entry['questions']} q)"]
            for k in KS:
                e = entry[f"@{k}"]
                d = e["difference"]
                delta = (
                    "-"
                    if d["mean"] is None
                    else f"{100 * d['mean']:+.2f}"
                    + ("" if d["se"] is None else f" ± {100 * d['se']:.2f}")
                )
                cells += [pct(e["shipped"]), pct(e["changed"]), delta]
            rows.append(cells)
    header = ["set"]
    for k in KS:
        header += [f"shipped @{k}", f"changed @{k}", f"Δ @{k}"]
    v = verdict(sets)
    head = f"change: {change.describe()}"
    tail = (
        "verdict: holds (loses nowhere)"
        if v["holds"]
        else "verdict: loses on " + "; ".join(v["losses"])
    )
    return "\n".join([head, text_table(header, rows), tail])


# -- the command -----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workdir",
        action="append",
        required=True,
        help="a work directory bench locomo / longmemeval left (--workdir); give it once per"
        " data set",
    )
    parser.add_argument(
        "--try",
        dest="change",
        required=True,
        help="the change: comma-separated key=value of leg weights (bm25, vector, facts, time,"
        " role, exchange), rrf_k, k1, b, reranker; e.g. 'vector=1.0,rrf_k=6' or"
        " 'reranker=cross_encoder'",
    )
    parser.add_argument("--json", help="where to write the results (default bench-out/judge.json)")


def run(args: argparse.Namespace) -> int:
    from graphrecall import runtime
    from graphrecall.config import load_settings
    from graphrecall.store import open_store
    from graphrecall.store.schema import shown

    change = Change.parse(args.change)
    json_path = Path(args.json) if args.json else Path("bench-out") / "judge.json"
    loaded = [read_questions(Path(w)) for w in args.workdir]
    names = [b for b, _, _ in loaded]
    if len(set(names)) != len(names):
        raise ValueError(f"--workdir: one directory per data set, got {', '.join(names)}")
    sets: dict[str, dict[str, Any]] = {}
    per_question: dict[str, list[dict[str, Any]]] = {}
    for benchmark, db, questions in loaded:
        if isinstance(db, Path) and not db.is_file():
            raise ValueError(f"--workdir: the database {db} is missing")
        print(f"{benchmark}: {len(questions)} questions on {shown(db)}", flush=True)
        store = open_store(db)
        try:
            # the model the database's vectors were made by
            settings = load_settings()
            embedder = runtime.store_embedder(store, runtime.minilm(), settings)
            # the reranker a server would give ``reranker=cross_encoder`` (our bundled one
            # unless GRAPHRECALL_CROSS_ENCODER names another)
            reranker = runtime.make_cross_encoder(settings)
            ranked = [
                rank(store, embedder, q, (Change(), change), cross_encoder=reranker)
                for q in questions
            ]
        finally:
            store.close()
        shipped, changed = [r[0] for r in ranked], [r[1] for r in ranked]
        sets[benchmark] = summarise(questions, shipped, changed)
        per_question[benchmark] = [
            {
                "id": q.id,
                "half": q.half,
                **{f"shipped@{k}": recall_at(a, q.relevant, k) for k in KS},
                **{f"changed@{k}": recall_at(b, q.relevant, k) for k in KS},
            }
            for q, a, b in zip(questions, shipped, changed, strict=True)
        ]
    result = {
        "benchmark": "judge",
        "version": 1,
        "change": change.describe(),
        "sets": sets,
        "verdict": verdict(sets),
        "per_question": per_question,
    }
    print(report(sets, change), flush=True)
    write_json(json_path, result)
    print(f"wrote {json_path}", flush=True)
    return 0
