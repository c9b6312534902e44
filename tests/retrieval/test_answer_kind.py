"""The kind of answer a question asks for, and whether a text mentions one."""

from __future__ import annotations

import pytest

from graphrecall.retrieval.answer_kind import AnswerKind, holds, kind_of


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did Dave find the car he repaired?", "time"),
        ("what date was the concert?", "time"),
        ("What time do I wake up on Saturday mornings?", "time"),
        ("Which year did they move?", "time"),
        ("How long ago did I go rafting?", "time"),
        # A count of days since something asks when it was, not how long it lasted.
        ("How many days ago did I attend the service?", "time"),
        ("How many days passed between the two trips?", "time"),
        ("So when did Caroline go to the support group?", "time"),
        # Which came first, in what order: a question of when things happened.
        ("Which trip did I take first, the one to Europe or to Thailand?", "time"),
        ("What is the order of the three events, from earliest to latest?", "time"),
        ("How much money did I raise for charity in total?", "money"),
        ("How much have I spent on bike-related expenses?", "money"),
        ("How long was I in Japan for?", "duration"),
        ("How many hours have I spent on my sculpture?", "duration"),
        # A measured amount: a weight, a distance, a count of people.
        ("What is the total weight of the feed I bought?", "quantity"),
        ("How far did I run last week in total?", "quantity"),
        ("How many people attended the party?", "quantity"),
        ("What was the total number of people reached by my ads?", "quantity"),
        ("Where did Audrey get Pixie from?", "place"),
        ("Which cities did Dave travel to in 2023?", "place"),
        ("And where did she study?", "place"),
        # Forms left out: who, how many (of things), tastes, the rest.
        ("Who supports Caroline when she has a negative experience?", None),
        ("How many trips have I taken my camera on?", None),
        ("What is Melanie's favourite book?", None),
        ("How much do you love it?", None),
        ("What did Dave find?", None),
        ("", None),
    ],
)
def test_the_kind_of_answer_comes_from_the_questions_form(
    question: str, kind: AnswerKind | None
) -> None:
    assert kind_of(question) == kind


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("time", "I found it last week, and it was in bad shape.", True),
        ("time", "We went on 3 May.", True),
        ("time", "I wake up at 7:30 am on weekends.", True),
        ("time", "Back in 2019 we lived there.", True),
        ("time", "Yesterday was great.", True),
        # "may" and "march" in lower case are verbs.
        ("time", "I may march with them.", False),
        ("time", "It was in bad shape.", False),
        ("money", "The new lights were $40.", True),
        ("money", "It cost me 120 dollars.", True),
        ("money", "I bought new lights.", False),
        ("duration", "It took two weeks to heal.", True),
        ("duration", "I spent 5 hours on it.", True),
        ("duration", "It took a while.", False),
        ("quantity", "I also bought 20 pounds of scratch grains.", True),
        ("quantity", "I got a 50-pound batch.", True),
        ("quantity", "She promoted it to her 10,000 followers.", True),
        ("quantity", "I ran five kilometers.", True),
        # A number of things that are not measured, or a unit's letters inside a word.
        ("quantity", "I have 2 kids and an album.", False),
        ("place", "We met up in Boston.", True),
        ("place", "I found a breeder near the park.", True),
        ("place", "it was fun.", False),
        # Place names are capitalised: a lower-case word after "in" is not one.
        ("place", "I am in love with it.", False),
    ],
)
def test_a_text_holds_an_answer_of_a_kind(kind: AnswerKind, text: str, expected: bool) -> None:
    assert holds(kind, text) is expected
