"""The offline extractor on sentences of the kind agents see."""

from __future__ import annotations

import pytest

from graphrecall.ml.extraction import Extraction, ExtractionInput
from graphrecall.ml.offline_extractor import OfflineExtractor
from graphrecall.ml.offline_rules import relation_name, third_person

REF = "2026-11-25T15:00:00Z"


@pytest.fixture(scope="module")
def extractor() -> OfflineExtractor:
    return OfflineExtractor()


def run(extractor: OfflineExtractor, text: str, speaker: str | None = "Alice") -> Extraction:
    return extractor.extract([ExtractionInput(text=text, speaker=speaker, reference_time=REF)])[0]


def triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {(f.source, f.relation, f.target) for f in extraction.facts}


def test_first_person_is_the_speaker_and_relations_are_upper_snake(
    extractor: OfflineExtractor,
) -> None:
    result = run(extractor, "I just moved to Lisbon last Tuesday and I work at Acme now.")
    assert triples(result) == {("Alice", "MOVES_TO", "Lisbon"), ("Alice", "WORKS_AT", "Acme")}
    move = next(f for f in result.facts if f.relation == "MOVES_TO")
    assert (
        move.fact == "Alice just moved to Lisbon last Tuesday" and move.valid_at == "last Tuesday"
    )
    work = next(f for f in result.facts if f.relation == "WORKS_AT")
    assert work.fact == "Alice works at Acme now"
    labels = {e.name: e.label for e in result.entities}
    assert labels["Lisbon"] == "Location" and labels["Acme"] == "Organization"


def test_possessives_appositions_and_nested_places(extractor: OfflineExtractor) -> None:
    result = run(
        extractor,
        "My sister Jane lives in Boston and works as a nurse at Mass General.",
        speaker="Bob",
    )
    # One fact per statement: the clause "works as a nurse at Mass General" is the named
    # workplace, its text keeps the role.
    assert triples(result) == {("Jane", "LIVES_IN", "Boston"), ("Jane", "WORKS_AT", "Mass General")}
    work = next(f for f in result.facts if f.relation == "WORKS_AT")
    assert work.fact == "Bob's sister Jane works as a nurse at Mass General"


def test_negation_and_until(extractor: OfflineExtractor) -> None:
    assert ("Alice", "NOT_LIKES", "coffee") in triples(run(extractor, "I don't like coffee."))
    worked = run(extractor, "I worked at Google until 2020.").facts[0]
    assert (worked.relation, worked.invalid_at) == ("WORKS_AT", "2020")


def test_no_facts_from_small_talk(extractor: OfflineExtractor) -> None:
    assert run(extractor, "Hey! Good to see you! How have you been?").facts == []


def test_text_without_speaker(extractor: OfflineExtractor) -> None:
    result = run(extractor, "Acme opened a new office in Berlin in 2021.", speaker=None)
    assert ("Acme", "OPENS", "office") in triples(result) or (
        "Acme",
        "OPENS_IN",
        "Berlin",
    ) in triples(result)


def test_helpers() -> None:
    assert [third_person(v) for v in ("move", "carry", "watch", "be", "have", "go", "play")] == [
        "moves",
        "carries",
        "watches",
        "is",
        "has",
        "goes",
        "plays",
    ]
    assert relation_name("not", "likes") == "NOT_LIKES"
    assert relation_name("works", "at") == "WORKS_AT"


def test_chit_chat_questions_and_the_listener_give_no_facts(extractor: OfflineExtractor) -> None:
    for text in (
        "How have your family been supportive during your move?",
        "Wow, your kids had so much fun at the park!",
        "I'm so proud of you for spreading awareness.",
        "Those times are always special.",
        "Thanks! Take care of yourself.",
        "Is the sauce a family secret?",
        "That was so much fun!",
        "If I win, I'll buy a boat.",
        "I would love to visit Japan.",
    ):
        result = run(extractor, text)
        assert result.facts == [], text
        # no stray nodes for what was dropped
        assert {e.name for e in result.entities} <= {"Alice", "Japan"}, text


def test_a_message_with_no_fact_gives_what_the_speaker_said(extractor: OfflineExtractor) -> None:
    # An opinion is no fact about the bones, but it is what Alice said about them.
    result = run(extractor, "The bones were so cool.")
    assert triples(result) == {("Alice", "TALKS_ABOUT", "bones")}
    assert result.facts[0].fact == "Alice said the bones were so cool"
    # The listener's name and the thanks are not part of it; a later "I" is the speaker;
    # a named thing is what it is about before any other.
    result = run(extractor, "Thanks, Dave! That show in Tokyo was awesome, I think I'll go back.")
    assert triples(result) == {("Alice", "TALKS_ABOUT", "Tokyo")}
    assert result.facts[0].fact == (
        "Alice said that show in Tokyo was awesome, Alice thinks Alice'll go back"
    )
    # The dates it names are the fact's, as for any fact.
    said = run(extractor, "My album finally dropped last Friday, it was a wild feeling!").facts
    assert [(f.relation, f.target, f.valid_at) for f in said] == [
        ("TALKS_ABOUT", "Alice's album", "last Friday")
    ]
    # A request is not a statement.
    assert run(extractor, "Capture the joy that dance brings, it's magical!").facts == []
    # "My" opens the report as the speaker's name; at most two statements a message.
    result = run(
        extractor,
        "My dogs will tag along. The beach is lovely. The sunsets are amazing. The sand is soft.",
    )
    assert [f.fact for f in result.facts] == [
        "Alice said Alice's dogs will tag along",
        "Alice said the beach is lovely",
    ]


def test_what_was_said_is_not_added_beside_a_fact(extractor: OfflineExtractor) -> None:
    result = run(extractor, "I moved to Lisbon. The food there is great.")
    assert triples(result) == {("Alice", "MOVES_TO", "Lisbon")}
    # ... nor said for a speaker no one named
    assert run(extractor, "The bones were so cool.", speaker=None).facts == []


def test_negation_reaches_through_complements_and_no(extractor: OfflineExtractor) -> None:
    assert triples(run(extractor, "I'm not going to move to Berlin.")) == {
        ("Alice", "NOT_PLANS_TO_MOVE_TO", "Berlin")
    }
    assert triples(run(extractor, "I have no kids.")) == {("Alice", "NOT_HAS", "kids")}
    fact = run(extractor, "I never eat meat.").facts[0]
    assert (fact.relation, fact.fact) == ("NOT_EATS", "Alice never eats meat")


def test_complements_adjectives_and_light_nouns(extractor: OfflineExtractor) -> None:
    assert triples(run(extractor, "I want to visit Paris next year.")) == {
        ("Alice", "WANTS_TO_VISIT", "Paris")
    }
    assert triples(run(extractor, "I'm passionate about dancing.")) == {
        ("Alice", "IS_PASSIONATE_ABOUT", "dancing")
    }
    assert triples(run(extractor, "I'm a big fan of pottery.")) == {
        ("Alice", "IS_FAN_OF", "pottery")
    }
    assert triples(run(extractor, "I've always had a love for horses!")) == {
        ("Alice", "HAS_LOVE_FOR", "horses")
    }


def test_greetings_are_not_entities_or_fact_text(extractor: OfflineExtractor) -> None:
    result = run(extractor, "Hey Maria, I opened my own store in Chicago last week.", "Gina")
    assert "Hey Maria" not in {e.name for e in result.entities}
    [opened] = result.facts
    assert opened.fact == "Gina opened Gina's own store in Chicago last week"
    store = run(extractor, "Hey Maria, I opened my own store last week.", "Gina")
    assert [f.target for f in store.facts] == ["Gina's store"]  # "own" is not in the name


def test_a_subjectless_chat_sentence_is_the_speakers(extractor: OfflineExtractor) -> None:
    """Chat drops the "I": a sentence opening with a past form or a gerund is the
    speaker's, with its tense kept ("Been busy" -> "has been busy")."""
    met = run(extractor, "Met with the creative team for my album yesterday.", speaker="Calvin")
    assert ("Calvin", "MEETS_WITH", "creative team") in triples(met)
    fact = next(f for f in met.facts if f.relation == "MEETS_WITH")
    assert fact.fact == "Calvin met with the creative team for Calvin's album yesterday"
    assert fact.valid_at == "yesterday"
    trip = run(extractor, "Thanks, Gina. Still planning a trip to Rome.", speaker="Jon")
    assert ("Jon", "PLANS_TO", "Rome") in triples(trip)
    assert {f.fact for f in trip.facts} == {"Jon is still planning a trip to Rome"}
    been = run(extractor, "Been real busy tackling a project to support veterans.", speaker="John")
    assert any(f.fact.startswith("John has been real busy tackling a project") for f in been.facts)
    # Another clause's subject ("it's great") does not make the opening verb's.
    yoga = run(extractor, "Just started doing aerial yoga, it's great.", speaker="Maria")
    assert {(f.source, f.target) for f in yoga.facts} == {("Maria", "aerial yoga")}
    trip = run(extractor, "Took a trip to a new place - it's been amazing.", speaker="John")
    assert ("John", "TAKES", "trip") in triples(trip)


def test_no_speaker_is_supplied_for_imperatives_descriptions_or_questions(
    extractor: OfflineExtractor,
) -> None:
    for text in (
        "Check out this photo of the lake!",  # an imperative
        "Sounds great!",
        "Felt so refreshing after the rain.",  # said of something, not of the speaker
        "Been quite a ride!",
        "Inspiring!",
        "Wedding pics from last week.",  # "Wedding" is a noun
        "Tried the new cafe on Main Street yet?",
        "Reminded me of my mom's garden in Porto.",  # something did it to the speaker
    ):
        assert run(extractor, text, speaker="Sam").facts == [], text
    # Without a speaker there is no one to put back.
    assert run(extractor, "Met with the creative team yesterday.", speaker=None).facts == []


def test_a_passive_agent_is_an_object(extractor: OfflineExtractor) -> None:
    result = run(extractor, "I was fascinated by reptiles as a kid.", speaker="Jolene")
    assert ("Jolene", "IS_FASCINATED_BY", "reptiles") in triples(result)
    assert ("Alice", "IS_BORN_IN", "Porto") in triples(run(extractor, "I was born in Porto."))


def test_a_shared_photo_is_a_fact_of_what_it_shows(extractor: OfflineExtractor) -> None:
    """A photo transcribed into the text ("[image: ...]") is something the speaker
    shared; its target is the first specific noun, past the people and light heads."""
    result = run(
        extractor,
        "Take a look at this. [image: a photo of a person holding a necklace with a cross]",
        speaker="Caroline",
    )
    assert triples(result) == {("Caroline", "SHARES_PHOTO_OF", "necklace")}
    assert result.facts[0].fact == (
        "Caroline shared a photo of a person holding a necklace with a cross"
    )
    books = run(extractor, "Nice! [image: a photo of a stack of books on a wooden table]")
    assert triples(books) == {("Alice", "SHARES_PHOTO_OF", "books")}
    plain = run(extractor, "[Image:  sunset over the lake ]")
    assert [(f.relation, f.target, f.fact) for f in plain.facts] == [
        ("SHARES_IMAGE_OF", "sunset", "Alice shared an image of sunset over the lake")
    ]
    captioned = run(extractor, "[image: a photography of a red car on a lift in a garage]")
    assert [(f.relation, f.target, f.fact) for f in captioned.facts] == [
        ("SHARES_PHOTO_OF", "red car", "Alice shared a photo of a red car on a lift in a garage")
    ]
    # Nothing shown, or no one who shared it: no fact.
    assert run(extractor, "Look! [image: a photo of]").facts == []
    assert run(extractor, "[image: a photo of a dog]", speaker=None).facts == []


def test_a_past_when_clause_is_what_happened(extractor: OfflineExtractor) -> None:
    """ "when" in the past tells what happened; in the present or future it is a
    condition."""
    lost = run(extractor, "I lost my keys when I was in Paris.")
    assert ("Alice", "IS_IN", "Paris") in triples(lost)
    assert "Alice was in Paris" in {f.fact for f in lost.facts}  # no leading "When"
    shared = run(extractor, "Was so nervous when I shared my book with my writers group.")
    assert ("Alice", "SHARES", "Alice's book") in triples(shared)
    assert ("Alice", "MOVES_TO", "Paris") not in triples(
        run(extractor, "When I move to Paris, I will learn French.")
    )
    present = triples(run(extractor, "When I'm in Paris I visit the Louvre."))
    assert ("Alice", "IS_IN", "Paris") not in present


def test_she_and_i_is_the_speaker(extractor: OfflineExtractor) -> None:
    result = run(extractor, "She and I are going to a baseball game next Sunday.", "James")
    assert triples(result) == {("James", "GOES_TO", "baseball game")}
    assert result.facts[0].fact == "She and James are going to a baseball game next Sunday"


def test_an_attachment_is_not_a_photo(extractor: OfflineExtractor) -> None:
    assert run(extractor, "Here you go [attachment: quarterly report]").facts == []


def test_one_statement_is_one_fact(extractor: OfflineExtractor) -> None:
    """A clause read several ways (STARTS job, STARTS_AT Orbital Labs) is one fact: the
    reading with the named target; the entities only the dropped readings named go too."""
    job = run(extractor, "I started a new job at Orbital Labs.", speaker="Kofi")
    assert triples(job) == {("Kofi", "STARTS_AT", "Orbital Labs")}
    assert {e.name for e in job.entities} == {"Kofi", "Orbital Labs"}
    bob = run(extractor, "Bob Smith started working at Acme Corp as a data engineer.", "Kofi")
    assert [(f.source, f.target) for f in bob.facts] == [("Bob Smith", "Acme Corp")]
    names = {e.name for e in bob.entities}
    assert "working" not in names and "data engineer" not in names
    alps = run(extractor, "I love hiking in the Alps.", speaker="Bob")
    assert [f.target for f in alps.facts] == ["Alps"]


def test_time_phrases_anywhere_in_the_sentence(extractor: OfflineExtractor) -> None:
    for text, phrase in (
        ("Last Tuesday I started a new job at Orbital Labs.", "Last Tuesday"),
        ("I started a new job at Orbital Labs last Tuesday.", "last Tuesday"),
        ("I finally, last Friday, got my driving licence.", "last Friday"),
        ("Yesterday morning I met my manager Linda Park for coffee.", "Yesterday morning"),
        ("Two weeks ago I flew to Lisbon for a conference.", "Two weeks ago"),
        ("On 3 May we visited Boulder.", "3 May"),
    ):
        facts = run(extractor, text, speaker="Kofi").facts
        assert facts and all(f.valid_at == phrase for f in facts), (text, facts)


def test_fillers_the_assistant_and_named_things(extractor: OfflineExtractor) -> None:
    moved = run(extractor, "Actually Bob Smith moved to Denver.", speaker="Kofi")
    assert [f.fact for f in moved.facts] == ["Bob Smith moved to Denver"]
    assert "Actually" not in {e.name for e in moved.entities}
    said = extractor.extract(
        [
            ExtractionInput(
                text="I can help you plan the trip to Kyoto.",
                speaker="Assistant",
                speaker_label="Assistant",
                reference_time=REF,
            )
        ]
    )[0]
    assert "Assistant" not in {e.name for e in said.entities}
    assert all(f.source != "Assistant" for f in said.facts)
    dog = run(extractor, "We adopted a dog named Biscuit.", speaker="Bob")
    assert triples(dog) == {("Bob", "ADOPTS", "Biscuit")}
    cto = run(extractor, "Maria is the CTO of Acme Corp.", speaker="Bob")
    assert all(e.name != "CTO" or e.label is None for e in cto.entities)


def test_a_workplace_is_an_organization_whatever_ner_says(extractor: OfflineExtractor) -> None:
    joined = run(extractor, "I left Acme Corp and joined Globex last Monday.", speaker="Bob")
    assert {e.name: e.label for e in joined.entities}["Globex"] == "Organization"
    assert ("Bob", "JOINS", "Globex") in triples(joined)
