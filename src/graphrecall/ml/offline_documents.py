"""Documents: prose with no speaker (a text episode that is not a chat), read offline.

The chat rules (``ml/offline_rules.py``) read a message as its speaker's, and leave "she",
"its" and "the company" alone: in a chat they point into messages the extractor does not
read. A document names its entities and refers back to them itself, so it is read in
four steps, and a chat message never takes this path:

1. **Labels from the parse.** spaCy's small model calls some places and companies people
   ("founded in Eindhoven" as a PERSON). A name after "in" / "near" is a place; a name
   ending in a company word ("Labs", "Robotics", "Ltd", "Shipping") is an organisation
   (``corrected``). These labels are the ones the document's entities keep.
2. **Coreference** within the document (``ml/offline_coreference.py``): "she", "his",
   "its", "it", "the company", "the city" are replaced by the name they stand for, and
   the text is parsed again, so each statement names its subject.
3. **The clause rules** on the resolved text: a fact per statement, dated by the dates
   the statement names ("in March 2021").
4. **Statements the rules read poorly**: "Harbor's largest client is Delmar" is Harbor
   HAS_LARGEST_CLIENT Delmar (not a node called "Harbor's largest client"); "Marisol is
   the chief executive of Quillon" is Marisol IS_CHIEF_EXECUTIVE_OF Quillon; a statement
   that still gives no fact but names two entities gives one between them, its relation
   the sentence's verb (``rule="document_statement"``).

Finally the labels: what the parse corrected, then what a fact's relation says of its
target (a place one lives in or a company is headquartered in is a Location; an employer
an Organization), and never a Person label on a name the parse or the relation says is a
place or an organisation.
"""

from __future__ import annotations

import re
from typing import Any

from graphrecall.ml.extraction import (
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    ExtractionInput,
)
from graphrecall.ml.offline_changes import is_role
from graphrecall.ml.offline_coreference import resolved
from graphrecall.ml.offline_rules import Rules, relation_name, third_person
from graphrecall.ml.offline_words import NER_LABELS, TARGET_LABELS

ORG_SUFFIXES = frozenset(
    """inc inc. ltd ltd. llc plc gmbh ag sa corp corp. co co. company corporation labs lab
    systems analytics robotics technologies technology tech group holdings partners bank
    studios studio foods mills shipping logistics software solutions capital ventures
    industries institute university college foundation agency networks media pharma
    therapeutics energy motors airlines bakery brewery school academy hospital clinic
    museum hotel restaurant cafe press""".split()  # noqa: SIM905
)
PLACE_PREPOSITIONS = frozenset({"in", "near", "outside", "across", "around"})
# A fact's relation tells what its target is, over NER on a bare name.
PLACE_RELATIONS = frozenset(
    """LIVES_IN MOVES_TO RELOCATES_TO MOVES_BACK_TO IS_HEADQUARTERED_IN IS_BASED_IN
    IS_LOCATED_IN IS_FOUNDED_IN OPENS_IN IS_BORN_IN GROWS_UP_IN""".split()  # noqa: SIM905
)
ROLE_PREPOSITIONS = frozenset({"of", "at", "for"})
# Relations whose target is an employer and nothing else (one leaves or joins a person too).
EMPLOYERS = frozenset({"WORKS_AT", "WORKS_FOR", "IS_EMPLOYED_BY", "STARTS_WORKING_AT"})
# What people do to organisations: the subject of "runs Brightwater Foods" is a person,
# whatever NER made of the name.
# (Not "owns", "hires", "launches": companies do those to companies too.)
PERSON_VERBS = frozenset(
    """run found co-found cofound lead head manage chair join leave quit work teach
    study marry direct""".split()  # noqa: SIM905
)
# "was set up by Helen Park": who sets up, founds or runs a company is a person.
PERSON_AGENTS = PERSON_VERBS | frozenset({"set", "establish", "start", "create", "launch"})


def read(nlp: Any, item: ExtractionInput, doc: Any) -> Extraction:
    """The facts of a document ``item``, parsed as ``doc`` (``nlp`` parses its resolved
    text)."""
    labels = corrected(doc)
    text = resolved(doc, labels)
    parsed = nlp(text) if text != doc.text else doc
    named = _names(doc, labels)
    named.update({k: v for k, v in _names(parsed, corrected(parsed)).items() if k not in named})
    result = Rules(item.model_copy(update={"text": text}), parsed).run()
    facts = [_possessive(f, named) for f in result.facts]
    facts = _roles(facts)
    facts += _unread_statements(parsed, facts, named)
    return _labelled(Extraction(entities=result.entities, facts=facts), named)


def corrected(doc: Any) -> dict[int, str]:
    """The spaCy label of each named entity (by its first token), corrected from the
    parse: an organisation's name by its last word, a place by the preposition before
    it, a person by what it does (runs, founded, joined an organisation; is its chief
    executive)."""
    out: dict[int, str] = {}
    for ent in doc.ents:
        label = ent.label_
        last = ent[-1].lower_
        if label in ("PERSON", "GPE", "NORP", "PRODUCT", "WORK_OF_ART") and last in ORG_SUFFIXES:
            label = "ORG"
        elif label in ("ORG", "GPE", "FAC", "NORP", "PRODUCT") and last not in ORG_SUFFIXES:
            if _acts_as_person(ent):
                label = "PERSON"
        elif (
            label == "PERSON"
            and ent.root.dep_ == "pobj"
            and ent.root.head.lower_ in PLACE_PREPOSITIONS
            and not any(t.dep_ == "case" for t in ent)  # "in Maria's house"
        ):
            label = "GPE"
        out[ent.start] = label
    return out


def _acts_as_person(ent: Any) -> bool:
    """The entity is the subject of what a person does to an organisation ("Nadia
    Petrova runs Brightwater Foods"), of a job title ("... is the finance director"), or
    the agent of such a deed ("was set up by Helen Park"). Only a name written as a
    person's full name is (two or three capitalised words): "Globex is the largest
    producer of steel" stays an organisation."""
    if not 2 <= len(ent) <= 3 or not all(t.is_alpha and t.text[:1].isupper() for t in ent):
        return False
    root = ent.root
    if root.dep_ == "pobj" and root.head.dep_ == "agent":
        return root.head.head.lemma_.lower() in PERSON_AGENTS
    if root.dep_ != "nsubj":
        return False
    verb = root.head
    if verb.lemma_.lower() == "be":
        return any(c.dep_ == "attr" and is_role(_phrase(c)) for c in verb.children)
    if verb.lemma_.lower() not in PERSON_VERBS:
        return False
    objects = [c for c in verb.children if c.dep_ == "dobj"]
    objects += [g for c in verb.children if c.dep_ == "prep" for g in c.children]
    return any(o.ent_type_ == "ORG" or o.lower_ in ORG_SUFFIXES for o in objects)


def _phrase(token: Any) -> str:
    """A noun with its compounds and adjectives ("finance director")."""
    words = [c.text for c in token.children if c.dep_ in ("compound", "amod") and c.i < token.i]
    return " ".join([*words, token.text])


def _names(doc: Any, labels: dict[int, str]) -> dict[str, str]:
    """name -> our label (Person, Organization, Location), of the named entities."""
    out: dict[str, str] = {}
    for ent in doc.ents:
        ours = NER_LABELS.get(labels.get(ent.start, ent.label_))
        if ours in ("Person", "Organization", "Location"):
            out.setdefault(_clean(ent.text), ours)
    return out


def _possessive(fact: ExtractedFact, named: dict[str, str]) -> ExtractedFact:
    """ "Harbor Analytics's largest client" IS Delmar -> Harbor Analytics
    HAS_LARGEST_CLIENT Delmar."""
    owner, mark, thing = fact.source.partition("'s ")
    if not mark or fact.relation != "IS" or owner not in named or not thing.strip():
        return fact
    return fact.model_copy(
        update={"source": owner, "relation": relation_name("has", thing), "rule": "document"}
    )


def _roles(facts: list[ExtractedFact]) -> list[ExtractedFact]:
    """ "X is the chief executive of Y", read as X IS "chief executive" and X IS_OF Y:
    one fact, X IS_CHIEF_EXECUTIVE_OF Y."""
    nouns = {
        (f.source, f.fact): f.target
        for f in facts
        if f.relation == "IS" and not f.target[:1].isupper()
    }
    out: list[ExtractedFact] = []
    merged: set[tuple[str, str]] = set()
    for fact in facts:
        prep = fact.relation.removeprefix("IS_").lower()
        noun = nouns.get((fact.source, fact.fact))
        if fact.relation.startswith("IS_") and prep in ROLE_PREPOSITIONS and noun:
            relation = relation_name("is", noun, prep)
            out.append(fact.model_copy(update={"relation": relation, "rule": "document"}))
            merged.add((fact.source, fact.fact))
        else:
            out.append(fact)
    return [f for f in out if not (f.relation == "IS" and (f.source, f.fact) in merged)]


def _unread_statements(
    doc: Any, facts: list[ExtractedFact], named: dict[str, str]
) -> list[ExtractedFact]:
    """A fact for each sentence that names two entities and gave no fact between named
    things: the first named one, the sentence's verb (with the preposition that links
    the second: "merged with" for "X and Y merged"), the second."""
    out: list[ExtractedFact] = []
    for sent in doc.sents:
        text = re.sub(r"\s+", " ", sent.text).strip()
        verb = sent.root
        if text.endswith("?") or verb.pos_ not in ("VERB", "AUX"):
            continue
        ents = [e for e in sent.ents if _clean(e.text) in named]
        if len(ents) < 2 or any(f.source in text and f.target in text for f in facts):
            continue
        first = ents[0]
        second = next((e for e in ents[1:] if _clean(e.text) != _clean(first.text)), None)
        if second is None:
            continue
        link = second.root.head
        if second.root.dep_ == "conj" and link.i == first.root.i:
            words = [third_person(verb.lemma_.lower()), "with"]
        elif link.dep_ in ("prep", "agent") and link.head.i == verb.i:
            words = [third_person(verb.lemma_.lower()), link.lower_]
        else:
            words = [third_person(verb.lemma_.lower())]
        dates = [e.text for e in sent.ents if e.label_ in ("DATE", "TIME")]
        out.append(
            ExtractedFact(
                source=_clean(first.text),
                relation=relation_name(*words),
                target=_clean(second.text),
                fact=text.rstrip(".")[:500],
                valid_at=dates[0] if dates else None,
                rule="document_statement",
            )
        )
    return out


def _clean(name: str) -> str:
    return re.sub(r"['\u2019]s$", "", " ".join(name.split()))


def _labelled(extraction: Extraction, named: dict[str, str]) -> Extraction:
    """The entities labelled from the corrected parse, then from the relations that
    name them (a relation's word on its target outweighs NER), so a Person label never
    stays on a place or an organisation."""
    by_relation: dict[str, str] = {}
    people_too: set[str] = set()  # targets a person can be: "left Tom", "joined Ana"
    for fact in extraction.facts:
        cue = "Location" if fact.relation in PLACE_RELATIONS else TARGET_LABELS.get(fact.relation)
        if cue:
            by_relation.setdefault(fact.target.casefold(), cue)
            if cue == "Organization" and fact.relation not in EMPLOYERS:
                people_too.add(fact.target.casefold())
    entities = {e.name.casefold(): e for e in extraction.entities}
    for fact in extraction.facts:  # names only the statements step used
        for name in (fact.source, fact.target):
            if name.casefold() not in entities:
                entities[name.casefold()] = ExtractedEntity(name=name, label=named.get(name))
    for key, entity in entities.items():
        parsed = named.get(entity.name)
        cue = by_relation.get(key)
        if parsed is not None and parsed != entity.label:
            entity.label = parsed
        # What the statement says the target is (an employer, a home, a headquarters)
        # outweighs NER on a bare name: "worked at Murano Glassworks" is no place, "based
        # in Faenza" no organisation (unless the name itself ends in a company word).
        company_name = entity.name.split()[-1].casefold() in ORG_SUFFIXES
        if cue is None or entity.label == cue or (cue == "Location" and company_name):
            continue
        if not (entity.label == "Person" and key in people_too):
            entity.label = cue
    return Extraction(entities=list(entities.values()), facts=extraction.facts)
