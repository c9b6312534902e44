"""The fact types of the synthetic chat-memory graphs: what an edge of each type says, and
how a user would ask about it.

Templates are ``str.format`` strings. ``{s}`` and ``{t}`` are the source and target names;
the other slots (``{role}``, ``{year}``, ``{date}``, ``{species}``...) are filled by the
generator, from the fact itself or from the target entity's attributes, so a question
("What is the name of Ana's cat?") agrees with the fact it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Temporal = Literal["none", "state", "past", "event", "future"]


@dataclass(frozen=True)
class Relation:
    name: str  # the edge name, UPPER_SNAKE
    source: str  # entity category of the source node
    target: str  # entity category of the target node
    weight: float  # relative share of the facts
    facts: tuple[str, ...]
    # The first question is the canonical one, the others are paraphrases.
    questions: tuple[str, ...]
    # Which endpoint the question names; the answer is the other one.
    asks: Literal["source", "target"] = "source"
    # none: no date in the text; state: true from valid_at until superseded; past: with an
    # end (invalid_at); event/future: happened (or will) on the date in the text.
    temporal: Temporal = "none"
    # A newer fact of this type about the same source invalidates the older one.
    exclusive: bool = False
    # Slots copied into the edge's attributes.
    attributes: tuple[str, ...] = ()


R = Relation
# fmt: off
RELATIONS: tuple[Relation, ...] = (
    R(
        "WORKS_AT", "person", "org", 6,
        ("{s} works at {t} as a {role}.", "{s} has been a {role} at {t} since {year}.",
         "{s} just started a new job at {t} as a {role}."),
        ("Where does {s} work?", "Which company does {s} work for?", "What is {s}'s job?",
         "who employs {s}"),
        temporal="state", exclusive=True, attributes=("role",),
    ),
    R(
        "WORKED_AT", "person", "org", 3,
        ("{s} used to work at {t} as a {role} until {end_year}.",
         "{s} left {t} in {end_year} after working there as a {role}."),
        ("Where did {s} work before?", "What was {s}'s previous job?",
         "Which companies has {s} worked for in the past?"),
        temporal="past", attributes=("role",),
    ),
    R(
        "LIVES_IN", "person", "city", 5,
        ("{s} lives in {t}.", "{s} moved to {t} in {month} {year}.",
         "{s} recently relocated to {t}."),
        ("Where does {s} live?", "Which city is {s} based in?", "where is {s} living these days"),
        temporal="state", exclusive=True,
    ),
    R(
        "GREW_UP_IN", "person", "city", 2,
        ("{s} grew up in {t}.", "{s} was born and raised in {t}."),
        ("Where did {s} grow up?", "What is {s}'s hometown?"),
    ),
    R(
        "VISITED", "person", "city", 6,
        ("{s} travelled to {t} in {month} {year}.",
         "{s} spent a week in {t} in the {season} of {year}.",
         "{s} went to {t} for a conference on {date}."),
        ("When did {s} visit {t}?", "Where has {s} travelled?", "What trips has {s} taken?"),
        temporal="event",
    ),
    R(
        "PLANS_TO_VISIT", "person", "city", 2,
        ("{s} is planning a trip to {t} in {month} {year}.",
         "{s} wants to visit {t} around {date}."),
        ("Where is {s} planning to travel?", "What trip is {s} planning?"),
        temporal="future",
    ),
    R(
        "FRIEND_OF", "person", "person", 6,
        ("{s} and {t} have been friends since {year}.",
         "{s} met {t} at {place} and they became close friends.",
         "{s} often goes hiking with {t}, a good friend."),
        ("Who are {s}'s friends?", "Who is {s} friends with?", "How did {s} meet {t}?"),
        temporal="state",
    ),
    R(
        "SIBLING_OF", "person", "person", 2,
        ("{t} is {s}'s {sibling}.", "{s} has a {sibling} called {t}."),
        ("Who is {s}'s {sibling}?", "Does {s} have any siblings?"),
        attributes=("sibling",),
    ),
    R(
        "MARRIED_TO", "person", "person", 1.5,
        ("{s} married {t} in {month} {year}.", "{s} is married to {t}."),
        ("Who is {s} married to?", "Who is {s}'s spouse?", "who's {s}'s partner"),
        temporal="state", exclusive=True,
    ),
    R(
        "DATING", "person", "person", 1,
        ("{s} has been dating {t} since {month} {year}.", "{s} started seeing {t} recently."),
        ("Who is {s} dating?", "Is {s} seeing anyone?"),
        temporal="state", exclusive=True,
    ),
    R(
        "COLLEAGUE_OF", "person", "person", 3,
        ("{s} and {t} work on the same team.", "{s} shares an office with {t}."),
        ("Who does {s} work with?", "Who are {s}'s colleagues?"),
    ),
    R(
        "MANAGES", "person", "person", 2,
        ("{s} is {t}'s manager.", "{t} reports to {s}."),
        ("Who is {t}'s manager?", "Who does {t} report to?"),
        asks="target", temporal="state",
    ),
    R(
        "PARENT_OF", "person", "person", 1.5,
        ("{s} is {t}'s {parent}.",),
        ("Who is {t}'s {parent}?", "Who are {t}'s parents?"),
        asks="target", attributes=("parent",),
    ),
    R(
        "LIKES_FOOD", "person", "food", 6,
        ("{s} loves {t}.", "{s}'s favourite dish is {t}.",
         "{s} orders {t} whenever they eat out."),
        ("What does {s} like to eat?", "What is {s}'s favourite food?",
         "What food does {s} enjoy?"),
    ),
    R(
        "DISLIKES_FOOD", "person", "food", 3,
        ("{s} can't stand {t}.", "{s} refuses to eat {t}."),
        ("What food does {s} dislike?", "What does {s} refuse to eat?"),
    ),
    R(
        "ALLERGIC_TO", "person", "allergen", 1.5,
        ("{s} is allergic to {t}.", "{s} found out in {year} that they are allergic to {t}."),
        ("What is {s} allergic to?", "Does {s} have any allergies?"),
    ),
    R(
        "ENJOYS", "person", "hobby", 6,
        ("{s} enjoys {t} on weekends.", "{s} took up {t} in {year}.",
         "{s} has been really into {t} lately."),
        ("What are {s}'s hobbies?", "What does {s} do for fun?",
         "What does {s} do on weekends?"),
    ),
    R(
        "PLAYS_INSTRUMENT", "person", "instrument", 1.5,
        ("{s} plays the {t}.", "{s} has been learning the {t} since {year}."),
        ("What instrument does {s} play?", "Does {s} play any music?"),
    ),
    R(
        "OWNS", "person", "product", 5,
        ("{s} bought a {t} in {month} {year}.", "{s} uses a {t} every day.",
         "{s} just upgraded to a {t}."),
        ("What {category} does {s} have?", "What {category} does {s} use?",
         "Which {category} did {s} buy?"),
        temporal="event",
    ),
    R(
        "WANTS_TO_BUY", "person", "product", 2,
        ("{s} is thinking about buying a {t}.", "{s} wants a {t} for their birthday."),
        ("What is {s} thinking of buying?", "What does {s} want for their birthday?"),
    ),
    R(
        "HAS_PET", "person", "pet", 2,
        ("{s} has a {species} named {t}.", "{s} adopted a {species} called {t} in {year}."),
        ("What is the name of {s}'s {species}?", "Does {s} have a pet?",
         "what's {s}'s {species} called"),
        attributes=("species",),
    ),
    R(
        "STUDIED_AT", "person", "school", 2.5,
        ("{s} studied {subject} at {t}, graduating in {year}.",
         "{s} has a degree in {subject} from {t}."),
        ("Where did {s} go to university?", "What did {s} study?",
         "Where did {s} study {subject}?"),
        temporal="past", attributes=("subject",),
    ),
    R(
        "ATTENDED", "person", "event", 4,
        ("{s} went to {t} on {date}.", "{s} attended {t} with some friends.",
         "{s} had a great time at {t}."),
        ("Which events did {s} attend?", "When did {s} go to {t}?",
         "What events has {s} been to?"),
        temporal="event",
    ),
    R(
        "READING", "person", "book", 3,
        ("{s} is reading {t}.", "{s} just finished reading {t} and loved it.",
         "{s} recommended the novel {t}."),
        ("What book is {s} reading?", "What has {s} been reading lately?",
         "Which books does {s} recommend?"),
    ),
    R(
        "SUPPORTS", "person", "team", 2,
        ("{s} is a big fan of {t}.", "{s} has supported {t} since childhood."),
        ("Which team does {s} support?", "What sports team is {s} a fan of?"),
    ),
    R(
        "SPEAKS", "person", "language", 2,
        ("{s} speaks {t} fluently.", "{s} is a native {t} speaker."),
        ("What languages does {s} speak?", "Does {s} speak {t}?"),
    ),
    R(
        "LEARNING", "person", "language", 2,
        ("{s} started learning {t} in {month} {year}.", "{s} takes {t} lessons twice a week."),
        ("What language is {s} learning?", "Is {s} taking any language classes?"),
        temporal="event",
    ),
    R(
        "LISTENS_TO", "person", "artist", 3,
        ("{s} listens to {t} a lot.", "{s} saw {t} live in {year}.",
         "{s}'s favourite artist is {t}."),
        ("What music does {s} like?", "Who is {s}'s favourite artist?",
         "What does {s} listen to?"),
    ),
    R(
        "WORKS_ON", "person", "project", 3,
        ("{s} is working on {t}, due on {date}.", "{s} leads {t} at work.",
         "{s} is stressed about the deadline for {t} on {date}."),
        ("What project is {s} working on?", "What is {s} working on at work?",
         "When is {t} due?"),
        temporal="future",
    ),
    R(
        "PREFERS", "person", "preference", 5,
        ("{s} prefers {t}.", "{s} mentioned that they like {t}.", "{s} always asks for {t}."),
        ("What does {s} prefer?", "What are {s}'s preferences?",
         "How does {s} like things done?"),
    ),
    R(
        "HEADQUARTERED_IN", "org", "city", 2,
        ("{s} is headquartered in {t}.", "{s} has its main office in {t}."),
        ("Where is {s} headquartered?", "Where is {s} based?"),
    ),
    R(
        "ACQUIRED", "org", "org", 1,
        ("{s} acquired {t} in {year}.", "{t} was bought by {s} in {month} {year}."),
        ("Who acquired {t}?", "Which company bought {t}?"),
        asks="target", temporal="event",
    ),
)
# fmt: on

# category -> (node label, how a summary describes it)
CATEGORIES: dict[str, tuple[str, str]] = {
    "person": ("Person", "a person"),
    "org": ("Organization", "a company"),
    "city": ("Location", "a city"),
    "food": ("Food", "a dish"),
    "allergen": ("Allergen", "an allergen"),
    "hobby": ("Activity", "a hobby"),
    "instrument": ("Instrument", "a musical instrument"),
    "product": ("Product", "a product"),
    "pet": ("Pet", "a pet"),
    "school": ("School", "a university"),
    "event": ("Event", "an event"),
    "book": ("Book", "a book"),
    "team": ("SportsTeam", "a sports team"),
    "language": ("Language", "a language"),
    "artist": ("Artist", "a musician"),
    "project": ("Project", "a work project"),
    "preference": ("Preference", "a preference"),
}
