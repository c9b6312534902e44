"""The offline extractor's dependency-parse rules over one parsed message (``Rules``).

What the rules find is described in ``ml/offline_extractor.py``, which runs them.
"""

from __future__ import annotations

import re
from typing import Any

from graphrecall.ml import offline_changes
from graphrecall.ml.extraction import (
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    ExtractionInput,
)
from graphrecall.ml.offline_changes import trimmed
from graphrecall.ml.offline_words import (
    ADDITION_WORDS,
    CAPTION,
    CAPTION_KIND,
    CAPTION_SKIP,
    CLAUSE_BREAK_DEPS,
    CONDITIONAL_MARKS,
    CONDITIONAL_WH,
    EVALUATIVE,
    FIRST_PERSON,
    FIRST_PERSON_POSSESSIVE,
    GENERIC_NOUNS,
    GREETINGS,
    HYPOTHETICAL,
    IRREGULAR_PAST,
    LIGHT_NOUNS,
    LIGHT_PREPOSITIONS,
    LIGHT_VERBS,
    NER_LABELS,
    OBJECT_DEPS,
    OTHER_POSSESSIVE,
    RELATIVE_PRONOUNS,
    ROLE_WORDS,
    SECOND_PERSON,
    SKIP_PRONOUNS,
    STATEMENTS_PER_MESSAGE,
    SUBJECT_DEPS,
    UNTIL_WORDS,
)


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


Candidate = tuple[str, str | None]  # an entity's name and label, not yet registered


class Rules:
    def __init__(self, item: ExtractionInput, doc: Any) -> None:
        self.item = item
        self.doc = doc
        # The assistant is not an entity of the user's graph: what it says about itself
        # ("I can help with that") is no fact, and it is never a node.
        assistant = (item.speaker_label or "").casefold() == "assistant"
        self.speaker = None if assistant else item.speaker
        self._dates: set[int] | None = None
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
            name = _span_name(ent)
            if label and _valid_name(name) and not _is_pronoun_like(name) and not _is_role(name):
                self._entity(name, label)
        for token in self.doc:
            if token.pos_ in ("VERB", "AUX") and token.dep_ != "aux" and token.dep_ != "auxpass":
                self._verb(token)
        if self.speaker:
            for match in CAPTION.finditer(self.doc.text):
                self._caption(match)
        changes = offline_changes.read(self)
        if changes:  # they replace the clause rule's readings of the same clauses
            texts = {f.fact for f in changes}
            self.facts = [f for f in self.facts if f.fact not in texts] + changes
        return Extraction(entities=list(self.entities.values()), facts=self.facts)

    def statements(self) -> Extraction:
        """What the speaker said, for a message no other rule found a fact in: each of
        its first statements (not a question, a condition, an imperative or something
        said to "you") that names a specific thing is the speaker's TALKS_ABOUT fact
        about the first named thing, else the first such thing, its text the sentence as
        reported speech ("It was inspired by my own journey" -> "Joanna said it was
        inspired by Joanna's own journey") and its dates those the sentence names.
        Offline, what "it" is cannot be told; the statement is still what a later
        question about it will be answered from."""
        if not self.speaker:
            return Extraction()
        facts: list[ExtractedFact] = []
        dates = self._date_tokens()
        for sent in self.doc.sents:
            if len(facts) >= STATEMENTS_PER_MESSAGE:
                break
            root = sent.root
            subject = self._subject(root) if root.pos_ in ("VERB", "AUX") else None
            if subject is None or self._not_a_statement(root, subject):
                continue
            tokens = self._statement_tokens(sent)
            if (
                len(tokens) < 4
                or tokens[0].tag_ == "VB"  # "Capture the joy ...", "Let me know ...": a request
                or any(t.lower_ in SECOND_PERSON for t in tokens)
            ):
                continue
            things = [
                candidate
                for t in tokens
                if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound" and t.i not in dates
                if t.lower_ not in GREETINGS
                if (candidate := self._resolve(t)) is not None
                and candidate[0].casefold() != self.speaker.casefold()
            ]
            if not things:
                continue
            # A named thing before any other: "one of my favorites was Monster Hunter".
            target = next((c for c in things if c[1] is not None), things[0])
            text = self._clause_text(root, tokens)
            first = tokens[0].lower_
            if tokens[0].pos_ != "PROPN" and first not in FIRST_PERSON | FIRST_PERSON_POSSESSIVE:
                text = text[:1].lower() + text[1:]
            valid, invalid = self._times(root, tokens)
            facts.append(
                ExtractedFact(
                    source=self._entity(self.speaker, self.item.speaker_label or "Person"),
                    relation="TALKS_ABOUT",
                    target=self._entity(*target),
                    fact=f"{self.speaker} said {text}"[:500],
                    valid_at=valid,
                    invalid_at=invalid,
                    rule="statement",
                )
            )
        return Extraction(entities=list(self.entities.values()), facts=facts)

    # -- entities ------------------------------------------------------------------------
    def _entity(self, name: str, label: str | None) -> str:
        name = clean_name(name)
        key = name.casefold()
        if key not in self.entities:
            self.entities[key] = ExtractedEntity(name=name, label=label)
        elif label and not self.entities[key].label:
            self.entities[key].label = label
        return self.entities[key].name

    def _resolve(self, token: Any) -> Candidate | None:
        """The entity a subject/object token stands for, or None. Nothing is registered
        until a fact uses it, so a dropped fact leaves no stray node."""
        lower = token.lower_
        if lower in FIRST_PERSON or (
            token.dep_ in SUBJECT_DEPS
            and token.pos_ == "PRON"
            and any(c.dep_ == "conj" and c.lower_ in FIRST_PERSON for c in token.children)
        ):  # "she and I are going to a game": the speaker is
            return (self.speaker, None) if self.speaker else None
        if token.i in self.ent_of:
            ent = self.ent_of[token.i]
            if ent.label_ in ("DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT"):
                return None
            name = _span_name(ent)
            if _is_role(name):
                return (clean_name(name).lower(), None)  # "CTO" is a role, not an ORG
            return (name, NER_LABELS.get(ent.label_)) if _valid_name(name) else None
        for child in token.children:  # "my sister Jane" -> Jane
            if child.dep_ == "appos" and child.pos_ == "PROPN":
                return self._resolve(child)
        if token.pos_ == "PRON" or lower in SKIP_PRONOUNS or lower in SECOND_PERSON:
            return None
        if token.dep_ in SUBJECT_DEPS and any(
            c.dep_ == "det" and c.lower_ == "no" for c in token.children
        ):
            return None  # "no one came"; an object's "no" ("has no kids") negates the fact
        if token.pos_ == "PROPN":
            name = _compound(token)
            return (name, None) if _valid_name(name) else None
        if token.pos_ == "VERB":  # a gerund: "hiking", "painting"; not "working", "doing"
            ok = _valid_word(lower) and token.lemma_.lower() not in LIGHT_VERBS
            return (lower, None) if ok else None
        if token.pos_ == "NOUN":
            for acl in token.children:  # "a dog named Biscuit", "a cafe called Mo's"
                if acl.dep_ == "acl" and acl.lemma_.lower() in ("name", "call"):
                    named = next((c for c in acl.children if c.pos_ == "PROPN"), None)
                    if named is not None:
                        return self._resolve(named)
            phrase = _compound(token)
            has_compound = any(c.dep_ == "compound" for c in token.children)
            if not _valid_word(phrase) or (_head_word(token) in GENERIC_NOUNS and not has_compound):
                return None
            owner = next((c for c in token.children if c.dep_ == "poss"), None)
            if owner is not None and owner.lower_ in OTHER_POSSESSIVE:
                return None  # "your kids", "her kids": whose, we cannot tell
            if owner is not None and owner.lower_ in FIRST_PERSON_POSSESSIVE:
                if not self.speaker:
                    return None
                phrase = f"{self.speaker}'s {phrase}"
            elif owner is not None and owner.pos_ == "PROPN":
                phrase = f"{_compound(owner)}'s {phrase}"
            return (phrase, None)
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

    def _has_state(self, subject: Any, source: Candidate, adjective: Any) -> bool:
        if adjective.lower_ in EVALUATIVE or not adjective.is_alpha or len(adjective.text) < 3:
            return False
        if any(c.dep_ == "prep" and c.lower_ in LIGHT_PREPOSITIONS for c in adjective.children):
            return False  # "passionate about dancing" says it with its complement
        return (
            source[0] == self.speaker
            or subject.pos_ == "PROPN"
            or subject.i in self.ent_of
            or "'s " in source[0]
        )

    def _chain(self, verb: Any) -> list[Any]:
        """The verb and the verbs it shares a subject with, up to the one that has it
        ("could share my story and offer them support": offer, share)."""
        chain = [verb]
        current = verb
        while (
            len(chain) < 5
            and current.dep_ in ("conj", "xcomp")
            and current.head is not current
            and not any(c.dep_ in SUBJECT_DEPS for c in current.children)
        ):
            current = current.head
            chain.append(current)
        return chain

    def _not_a_statement(self, verb: Any, subject: Any) -> bool:
        """Questions, conditions, hypotheticals, what is said to or about "you", generic
        "we all", and clauses that describe a noun ("the support I get") state no fact."""
        if verb.sent.text.rstrip().endswith("?"):
            return True
        if (
            verb.dep_ in ("relcl", "acl")
            and subject.lower_ not in RELATIVE_PRONOUNS
            and subject.head is verb
        ):
            return True
        if subject.lower_ == "we" and any(
            t.lower_ == "all" for t in self.doc[subject.i + 1 : subject.i + 2]
        ):
            return True
        top = verb
        while top.dep_ == "xcomp" and top.head is not top:
            top = top.head
        if any(t.lower_ in SECOND_PERSON for t in self._clause_tokens(top)):
            return True
        for link in self._chain(verb):
            for child in link.children:
                lower = child.lower_
                if child.dep_ == "mark" and lower in CONDITIONAL_MARKS:
                    return True
                if (
                    child.dep_ == "advmod"
                    and child.tag_ == "WRB"
                    and lower in CONDITIONAL_WH
                    and not (lower == "when" and _past(link))
                ):
                    return True  # but "when I shared my book" tells what happened
                if child.dep_ == "aux" and lower in HYPOTHETICAL:
                    return True
                if child.dep_ == "advcl" and any(  # "if I win, I'll buy a boat"
                    c.dep_ == "mark" and c.lower_ in CONDITIONAL_MARKS for c in child.children
                ):
                    return True
            if link.dep_ == "ccomp" and link.head.lemma_ == "let":
                return True  # "let's ..."
        return False

    def _negated(self, verb: Any) -> bool:
        current = verb
        for _ in range(5):
            if any(c.dep_ == "neg" for c in current.children):
                return True
            if any(  # "I no longer live in Munich"
                c.lower_ == "longer" and any(g.lower_ == "no" for g in c.children)
                for c in current.children
            ):
                return True
            if current.dep_ != "xcomp" or current.head is current:
                return False
            current = current.head
        return False

    def _base(self, verb: Any) -> list[str]:
        """The relation words of a verb: "moves", "puts together", "wants to visit"."""
        particle = [c.lower_ for c in verb.children if c.dep_ == "prt"]
        head = verb.head
        if verb.dep_ == "xcomp" and head is not verb and head.pos_ in ("VERB", "AUX"):
            to = any(c.dep_ == "aux" and c.lower_ in ("to", "na") for c in verb.children)
            outer = ["plans"] if head.lemma_ == "go" and to else self._base(head)
            own = verb.lower_ if verb.tag_ == "VBG" else verb.lemma_.lower()
            return [*outer, *(["to"] if to else []), own, *particle]
        passive = any(c.dep_ == "auxpass" for c in verb.children)
        if passive and verb.lemma_ != "be":  # "was born in", "is run by"
            return ["is", verb.lower_, *particle]
        return [third_person(verb.lemma_.lower()), *particle]

    def _verb(self, verb: Any) -> None:
        subject_token = self._subject(verb)
        if subject_token is None or self._not_a_statement(verb, subject_token):
            return
        source = self._resolve(subject_token)
        if source is None:
            return
        negated = self._negated(verb)
        base = self._base(verb)
        targets: list[tuple[Any, list[str]]] = []
        for child in verb.children:
            if child.dep_ in OBJECT_DEPS:
                targets.append((child, base))
            elif child.dep_ in ("prep", "agent"):  # agent: "fascinated by reptiles"
                pobj = next((c for c in child.children if c.dep_ == "pobj"), None)
                if pobj is not None and pobj.i not in self._date_tokens():
                    targets.append((pobj, [*base, child.lower_]))
            elif child.dep_ == "xcomp":
                if (
                    child.pos_ == "VERB"
                    and child.tag_ != "VBG"
                    and any(c.dep_ in OBJECT_DEPS or c.dep_ == "prep" for c in child.children)
                ):
                    continue  # "wants to visit Paris": the complement's own fact says it
                obj = next((c for c in child.children if c.dep_ in OBJECT_DEPS), None)
                targets.append((obj if obj is not None else child, base))
        for target_token, rel_parts in list(targets):
            # "works as a nurse at Mass General": the named place hangs off the object.
            if target_token.pos_ == "VERB":
                continue  # a gerund object ("loves hiking in the Alps") has its own facts
            light = target_token.pos_ == "ADJ" or (
                target_token.pos_ == "NOUN" and _head_word(target_token) in LIGHT_NOUNS
            )
            for prep in target_token.children:
                if prep.dep_ != "prep" or (light and prep.lower_ not in LIGHT_PREPOSITIONS):
                    continue
                if light:  # "passionate about dancing", "a big fan of pottery"
                    pobj = next((c for c in prep.children if c.dep_ in ("pobj", "pcomp")), None)
                    if pobj is not None:
                        word = target_token.lemma_.lower()
                        targets.append((pobj, [*rel_parts, word, prep.lower_]))
                    continue
                pobj = next((c for c in prep.children if c.dep_ == "pobj"), None)
                if pobj is not None and pobj.i in self.ent_of:
                    targets.append((pobj, [*base, prep.lower_]))
        for target_token, rel_parts in targets:
            if target_token.pos_ == "ADJ":
                # A person's or a named thing's state ("Gina's store is open", "Melanie is
                # proud of it") is a fact; an opinion ("the bones were so cool") is not.
                if not self._has_state(subject_token, source, target_token):
                    continue
                target: Candidate | None = (target_token.lower_, None)
            else:
                target = self._resolve(target_token)
            if target is None or target[0].casefold() == source[0].casefold():
                continue
            no = any(c.dep_ == "det" and c.lower_ == "no" for c in target_token.children)
            relation = relation_name(*(["not"] if negated or no else []), *rel_parts)
            # An open complement ("loves hiking ...") reads best as its whole head clause.
            top = verb
            while top.dep_ == "xcomp" and top.head is not top:
                top = top.head
            fact_text = self._clause_text(top)
            valid, invalid = self._times(verb)
            rel_words = offline_changes.job_relation(rel_parts, verb)
            if rel_words is not rel_parts:
                relation = relation_name(*(["not"] if negated or no else []), *rel_words)
            self.facts.append(
                ExtractedFact(
                    source=self._entity(*source),
                    relation=relation,
                    target=self._entity(*target),
                    fact=fact_text,
                    valid_at=valid,
                    invalid_at=invalid,
                    rule="clause",
                    past=_told_in_past(top),
                    also=_an_addition(verb, target_token),
                )
            )

    def _caption(self, match: re.Match[str]) -> None:
        """ "[image: a photo of a necklace with a cross]": the speaker shared a photo of a
        necklace (SHARES_PHOTO_OF necklace)."""
        if self.speaker is None:
            return
        raw = match.group(1)
        start = match.start(1) + len(raw) - len(raw.lstrip())
        kind = CAPTION_KIND.match(raw.lstrip())
        if kind:
            start += kind.end()
        span = self.doc.char_span(start, match.end(1), alignment_mode="expand")
        shown = " ".join(self.doc.text[start : match.end(1)].split()).rstrip(" .")
        if span is None or not shown:
            return
        nouns = [
            t
            for t in span
            if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound" and _valid_word(t.lower_)
        ]
        target = next((t for t in nouns if _head_word(t) not in CAPTION_SKIP), None)
        if target is None:
            target = next(iter(nouns), None)
        if target is None:
            return
        noun = kind.group(1).lower() if kind else "image"
        noun = "photo" if noun in ("pic", "picture", "selfie", "photography") else noun
        article = "an" if noun[0] in "aeiou" else "a"
        self.facts.append(
            ExtractedFact(
                source=self._entity(self.speaker, self.item.speaker_label or "Person"),
                relation=relation_name("shares", noun, "of"),
                target=self._entity(_compound(target), None),
                fact=f"{self.speaker} shared {article} {noun} of {shown}"[:500],
                rule="caption",
            )
        )

    def _date_tokens(self) -> set[int]:
        if self._dates is None:
            self._dates = {t.i for e in self.doc.ents if e.label_ in ("DATE", "TIME") for t in e}
        return self._dates

    def _clause_tokens(self, verb: Any) -> list[Any]:
        skip: set[int] = set()
        for child in verb.children:
            vocative = (
                child.dep_ == "npadvmod"
                and child.pos_ == "PROPN"
                and child.i < verb.i
                and child.i not in self._date_tokens()  # "Last Tuesday I started ..."
            )
            if child.dep_ in CLAUSE_BREAK_DEPS or child.dep_ == "intj" or vocative:
                skip.update(t.i for t in child.subtree)  # also "Hey Maria, ..."
        subject = self._subject(verb)
        tokens = [t for t in verb.subtree if t.i not in skip]
        if subject is not None and all(t.i != subject.i for t in tokens):
            inside = {t.i for t in verb.subtree}
            head = [t for t in subject.subtree if t.i not in inside and t.i < verb.i]
            # The shared auxiliaries and negation: "I could share ... and offer ..." ->
            # "Caroline could offer ..."
            for link in self._chain(verb)[1:]:
                head += [
                    c
                    for c in link.children
                    if c.dep_ in ("aux", "auxpass", "neg") and subject.i < c.i < verb.i
                ]
            tokens = sorted(head + tokens, key=lambda t: t.i)
        return trimmed(tokens)

    def _statement_tokens(self, sent: Any) -> list[Any]:
        """A whole sentence as reported speech: without its interjections and the
        listener's name ("Thanks!", "..., James"), trimmed as a clause is."""
        skip: set[int] = set()
        for child in sent.root.children:
            if child.dep_ == "intj" or (child.dep_ == "npadvmod" and child.pos_ == "PROPN"):
                skip.update(t.i for t in child.subtree)
        return trimmed([t for t in sent if t.i not in skip])

    def _clause_text(self, verb: Any, tokens: list[Any] | None = None) -> str:
        """The clause of ``verb`` (or ``tokens``, a sentence) with the speaker for "I" and
        the verb after "I" in the third person."""
        subject = self._subject(verb) if tokens is None else None
        first_person = subject is not None and subject.lower_ in FIRST_PERSON and self.speaker
        words: list[str] = []
        previous = -2
        for token in self._clause_tokens(verb) if tokens is None else tokens:
            if words and token.i != previous + 1 and not words[-1].endswith(" "):
                words[-1] += " "  # tokens were skipped in between ("I'm off to" -> "X to")
            previous = token.i
            lower = token.lower_
            if self.speaker and lower in FIRST_PERSON:
                text = self.speaker
            elif self.speaker and lower in FIRST_PERSON_POSSESSIVE:
                text = f"{self.speaker}'s"
            elif (
                token.tag_ == "VBP" and token.lower_ not in IRREGULAR_PAST  # "I got to see"
            ) and (
                (first_person and verb.i in (token.i, token.head.i))
                or (
                    token.i > 0
                    and self.doc[token.i - 1].lower_ in ("i", "we")
                    and self.doc[token.i - 1].dep_ != "conj"  # "she and I are"
                )
            ):
                # "I work" -> "Alice works", "I'm" -> "Alice is", "don't" -> "doesn't",
                # also in a nested clause ("the paths I've taken" -> "Alice has taken")
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

    def _times(self, verb: Any, tokens: list[Any] | None = None) -> tuple[str | None, str | None]:
        """The dates the clause of ``verb`` (or ``tokens``) names: valid from, until. A
        phrase wherever it stands in the clause counts ("Last Tuesday I started ...",
        "I started ... last Tuesday"); a clause that names none takes the one its
        sentence names outside any other clause with a subject of its own ("Yesterday,
        after work, I met Linda"), so the phrase may leave the fact text but not its
        date."""
        clause = {t.i for t in (self._clause_tokens(verb) if tokens is None else tokens)}
        phrases = self._time_phrases()
        found = [p for p in phrases if p[0] in clause]
        if not found and tokens is None:
            found = [p for p in phrases if p[0] in self._sentence_level(verb)]
        valid: str | None = None
        invalid: str | None = None
        for start, text in found:
            before = self.doc[start - 1].lower_ if start > 0 else ""
            if before in UNTIL_WORDS:
                invalid = invalid or text
            else:
                valid = valid or (f"since {text}" if before == "since" else text)
        return valid, invalid

    def _time_phrases(self) -> list[tuple[int, str]]:
        """(first token, text) of each time phrase; a DATE followed by a TIME is one
        ("Yesterday" + "morning" -> "Yesterday morning")."""
        out: list[tuple[int, str]] = []
        end = -1
        for ent in self.doc.ents:
            if ent.label_ not in ("DATE", "TIME"):
                continue
            if out and ent.start == end:
                out[-1] = (out[-1][0], f"{out[-1][1]} {ent.text}")
            else:
                out.append((ent.start, ent.text))
            end = ent.end
        return out

    def _sentence_level(self, verb: Any) -> set[int]:
        """Tokens of ``verb``'s sentence that no other subject-bearing clause holds."""
        sent = verb.sent
        taken: set[int] = set()
        for token in sent:
            if (
                token is not verb
                and token.pos_ in ("VERB", "AUX")
                and token.dep_ in CLAUSE_BREAK_DEPS
                and any(c.dep_ in SUBJECT_DEPS for c in token.children)
                and verb not in token.subtree
            ):
                taken.update(t.i for t in token.subtree)
        return {t.i for t in sent if t.i not in taken}


def _told_in_past(verb: Any) -> bool:
    """The clause is told in a past tense: "lived", "was married", "had worked", "used to
    live" (not "has lived": the present perfect still holds)."""
    if verb.tag_ == "VBD":
        return True
    if any(c.dep_ in ("aux", "auxpass") and c.tag_ == "VBD" for c in verb.children):
        return True
    return verb.lemma_.lower() == "use" and verb.tag_ in ("VBD", "VBN")


def _an_addition(verb: Any, target: Any) -> bool:
    """The clause adds a value beside those known: "I also work at Globex", "... too", "...
    as well", "another job", "a second job"."""
    for child in verb.children:
        if child.dep_ == "advmod" and child.lower_ in ADDITION_WORDS:
            return True
        if child.lower_ == "well" and any(g.lower_ == "as" for g in child.children):
            return True
        if child.lower_ == "as" and any(g.lower_ == "well" for g in child.children):
            return True
    return any(c.lower_ in ("another", "second") for c in target.children)


def _compound(token: Any) -> str:
    parts = [
        c
        for c in token.children
        if c.i < token.i
        and (
            c.dep_ == "compound"
            or (c.dep_ == "amod" and c.lower_ not in EVALUATIVE and not list(c.children))
        )
    ]
    words = [c.text for c in sorted(parts, key=lambda c: c.i)]
    head = token.text if token.pos_ == "PROPN" else token.lemma_.lower()
    if token.pos_ == "NOUN" and token.tag_ == "NNS":
        head = token.text.lower()
    return " ".join([*words, head])


def _past(verb: Any) -> bool:
    """The verb is in a past tense: "shared", "was dancing", "had left"."""
    if verb.tag_ == "VBD":
        return True
    return any(c.dep_ in ("aux", "auxpass") and c.tag_ == "VBD" for c in verb.children)


def _head_word(token: Any) -> str:
    return str(token.lemma_.lower() if token.pos_ != "PROPN" else token.lower_)


def _valid_name(name: str) -> bool:
    """At least two letters, and not a word that only greets ("Hey")."""
    return sum(ch.isalpha() for ch in name) >= 2 and name.casefold() not in GREETINGS


def _valid_word(name: str) -> bool:
    """A common noun or gerund as an entity: three letters at least ("de" from "de-stress"
    is not one), and not a generic word."""
    return sum(ch.isalpha() for ch in name) >= 3 and _valid_name(name) and name not in GENERIC_NOUNS


def _span_name(span: Any) -> str:
    tokens = [t for t in span if t.dep_ != "det" and t.lower_ not in ("the", "a", "an")]
    while len(tokens) > 1 and tokens[0].lower_ in GREETINGS:  # "Hey Maria" -> "Maria"
        tokens = tokens[1:]
    text = " ".join(t.text for t in tokens) if tokens else span.text
    return re.sub(r"'s$", "", text).strip()


def clean_name(name: str) -> str:
    """A name without stray punctuation at its ends ("Acme Corp." -> "Acme Corp"), its
    inner spacing collapsed; a name that is all punctuation is kept as it was."""
    cleaned = " ".join(name.split()).strip(" .,;:!?\"'()[]")
    return cleaned or name


def _is_role(text: str) -> bool:
    """A job title or role ("CTO", "data engineer", "nurse"): a value, not an entity."""
    words = clean_name(text).casefold().split()
    return bool(words) and words[-1] in ROLE_WORDS


def _is_pronoun_like(text: str) -> bool:
    return text.casefold() in SKIP_PRONOUNS | FIRST_PERSON | FIRST_PERSON_POSSESSIVE
