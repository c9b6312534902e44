"""Who "she", "its" and "the company" are, within one document (a text episode with no
speaker), before the offline rules read it.

A chat message's pronouns point into earlier messages the extractor does not read, so
the rules leave them alone; a document (a page of prose about a company and its people)
names its entities and then refers back to them within itself. ``resolved`` rewrites
such references with the name they stand for, so each statement names its subject:

- "she" / "he" / "him" / "her" / "his": the most recent person of that gender, once a
  pronoun has told it; else the most recent person whose gender is not known yet, one
  named as a subject first (who then takes it). "Lena married Tom. She left him" ->
  Lena; "Priya Nair founded it. She hired Tomas Weber. He ..." -> Tomas Weber; "She
  also ..." -> Priya Nair again;
- "the company" (firm, startup, business, school, bank, ...) and "its", and "it" as a
  subject: the organisation the document is about (the last one named as a subject, or
  read as "the company" before), else the most recent one; "the bank", "the school":
  the most recent organisation with that word in its name first;
- a one-word name that is the first or last name of a person named before ("Ingrid"
  after "Ingrid Solberg"): that person, whatever label NER gave the word;
- "the city" (town): the most recent place.

Only spaCy's named entities are antecedents (PERSON, ORG, GPE/LOC/FAC), so a pronoun
with nothing named before it is left as written, and the rules skip it as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ORG_NOUNS = frozenset(
    """company firm startup start-up business organisation organization employer
    corporation agency studio lab laboratory bank brand group school university college
    hospital restaurant bakery cafe store shop hotel museum charity club""".split()  # noqa: SIM905
)
PLACE_NOUNS = frozenset({"city", "town", "village", "country"})
FEMALE = frozenset({"she", "her", "hers", "herself"})
MALE = frozenset({"he", "him", "his", "himself"})
POSSESSIVE_DEPS = frozenset({"poss"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass"})


@dataclass
class _Antecedents:
    people: list[str] = field(default_factory=list)  # most recent last
    subjects: set[str] = field(default_factory=set)  # people named as a subject
    gender: dict[str, str] = field(default_factory=dict)  # name -> "f" / "m"
    orgs: list[str] = field(default_factory=list)  # most recent last
    # The organisation the document is about: the last one named as a subject, or the
    # one "the company" was read as. "Harbor was founded by Priya. Tomas worked at
    # Fjord. Its largest client ...": Harbor's, not Fjord's.
    topic: str | None = None
    place: str | None = None

    def company(self, noun: str | None = None) -> str | None:
        """What "the company" (or "the <noun>") stands for: the most recent organisation
        whose name has that noun ("the bank" -> Baltic Bank), else the topic, else the
        most recent organisation."""
        if noun is not None:
            for name in reversed(self.orgs):
                if noun in name.casefold().split():
                    return name
        return self.topic or (self.orgs[-1] if self.orgs else None)

    def full_name(self, name: str) -> str | None:
        """The person a one-word name stands for ("Ingrid" after "Ingrid Solberg")."""
        if " " in name:
            return None
        for full in reversed(self.people):
            words = full.split()
            if len(words) > 1 and name in (words[0], words[-1]):
                return full
        return None

    def saw(self, label: str, name: str, subject: bool = False) -> None:
        if label == "PERSON":
            if name in self.people:
                self.people.remove(name)
            self.people.append(name)
            if subject:
                self.subjects.add(name)
        elif label == "ORG":
            if name in self.orgs:
                self.orgs.remove(name)
            self.orgs.append(name)
            if subject:
                self.topic = name
        elif label in ("GPE", "LOC", "FAC"):
            self.place = name

    def person(self, sex: str) -> str | None:
        """The latest person of that gender; else the latest one named as a subject
        whose gender is not known yet ("Lena married Tom. She ..." is Lena), else the
        latest one whose gender is not known; who is chosen takes the gender."""
        for name in reversed(self.people):
            if self.gender.get(name) == sex:
                return name
        unknown = [n for n in reversed(self.people) if n not in self.gender]
        chosen = next((n for n in unknown if n in self.subjects), None) or next(iter(unknown), None)
        if chosen is not None:
            self.gender[chosen] = sex
        return chosen


def resolved(doc: Any, labels: dict[int, str] | None = None) -> str:
    """The text of ``doc`` with its references to named entities replaced by their names
    ("Its largest client" -> "Harbor Analytics's largest client"); the text itself when
    there is nothing to replace. ``labels``: each entity's label by its first token, where
    the caller corrected spaCy's."""
    labels = labels or {}
    seen = _Antecedents()
    ent_start = {ent.start: ent for ent in doc.ents}
    named = {t.i for ent in doc.ents for t in ent}
    out: list[str] = []
    changed = False
    skip_to = -1
    for token in doc:
        if token.i < skip_to:
            continue
        replacement: str | None = None
        ent = ent_start.get(token.i)
        if ent is not None:
            name = " ".join(ent.text.split())
            full = seen.full_name(name)
            if full is not None:  # "Ingrid" is Ingrid Solberg, whatever NER called it
                seen.saw("PERSON", full)
                out.append(full + ent[-1].whitespace_)
                changed = True
                skip_to = ent.end
                continue
            label = labels.get(ent.start, ent.label_)
            seen.saw(label, name, ent.root.dep_ in SUBJECT_DEPS)
        lower = token.lower_
        if token.i not in named and token.pos_ == "PRON":
            replacement = _pronoun(token, lower, seen)
        elif lower == "the" and token.dep_ == "det":
            noun = token.head
            meant = _definite(token, noun, seen)
            if meant is not None:
                out.append(meant + noun.whitespace_)
                changed = True
                skip_to = noun.i + 1
                continue
        if replacement is None:
            out.append(token.text_with_ws)
        else:
            out.append(replacement + token.whitespace_)
            changed = True
    return "".join(out) if changed else doc.text


def _definite(the: Any, noun: Any, seen: _Antecedents) -> str | None:
    """The name "the company" / "the city" stands for, or None."""
    if noun.i != the.i + 1 or noun.pos_ != "NOUN":
        return None
    word = noun.lower_
    if word in ORG_NOUNS:
        name = seen.company(word)
        if name is not None:
            seen.topic = name  # "the company" keeps meaning the same one
        return name
    return seen.place if word in PLACE_NOUNS else None


def _pronoun(token: Any, lower: str, seen: _Antecedents) -> str | None:
    possessive = token.dep_ in POSSESSIVE_DEPS or lower in ("his", "its")
    if lower in FEMALE or lower in MALE:
        if lower.endswith("self"):
            return None
        name = seen.person("f" if lower in FEMALE else "m")
        if name is None:
            return None
        return f"{name}'s" if possessive else name
    company = seen.company()
    if lower == "its" and company is not None:
        return f"{company}'s"
    if lower == "it" and token.dep_ in SUBJECT_DEPS and company is not None:
        return company
    return None
