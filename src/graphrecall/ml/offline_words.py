"""Word lists and patterns of the offline extractor's rules (data, no logic).

What each list is for is said beside it; ``ml/offline_rules.py`` and
``ml/offline_extractor.py`` read them.
"""

from __future__ import annotations

import re

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
SECOND_PERSON = {"you", "your", "yours", "yourself", "yourselves", "ya", "u", "ur"}
# Whose thing "her kids" is cannot be told offline; such facts would name the wrong owner.
OTHER_POSSESSIVE = SECOND_PERSON | {"his", "her", "their", "its", "theirs"}
GREETINGS = {
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank",
    "wow",
    "oh",
    "congrats",
    "congratulations",
    "yeah",
    "yes",
    "ok",
    "okay",
    "dear",
    "aw",
    "aww",
    "omg",
    "haha",
    "lol",
    "sure",
    "well",
    "hmm",
    "ah",
    "bye",
    "cheers",
}
# A message no rule finds a fact in yields at most this many reported statements.
STATEMENTS_PER_MESSAGE = 2
# Nouns too general to be an entity on their own ("way", "times", "fun"); kept inside a
# compound ("support group"), and as the light head of "a love for horses" (-> horses).
GENERIC_NOUNS = frozenset(
    """way time thing lot lots bit stuff kind sort type part day moment fun feeling idea sense
    chance one ones everything something anything nothing people others folks guy guys
    everyone someone anyone none much many difference impact progress effort advice
    encouragement inspiration motivation support love joy happiness hope strength courage
    peace comfort pride luck help change experience journey life world reminder step lesson
    word words question answer point reason opportunity memory memories vibe vibes situation
    news look thought thoughts interest passion fan lover member deal number couple
    amount plenty bunch ton tons kinds types parts sorts days moments feelings ideas things
    times ways others lots loads load variety rest blast path paths while""".split()  # noqa: SIM905
)
# Generic heads that point at their complement: "a big fan of pottery" -> pottery.
LIGHT_NOUNS = frozenset(
    """fan lover member love passion interest part kind sort type fear experience lot lots
    bunch ton tons piece""".split()  # noqa: SIM905
)
LIGHT_PREPOSITIONS = frozenset({"of", "for", "about", "in", "on", "with", "at", "to"})
# Opinion and quantity adjectives dropped from entity names ("amazing products" ->
# "products", "Gina's own store" -> "Gina's store").
EVALUATIVE = frozenset(
    """amazing great good nice lovely awesome beautiful cool big huge real whole own special
    cute wonderful fantastic incredible much many few several other same entire true actual
    super fun exciting perfect best new gorgeous stunning cozy fabulous brilliant terrific
    sweet crazy little bit such certain""".split()  # noqa: SIM905
)
HYPOTHETICAL = {"would", "could", "should", "might", "may", "'d", "must"}
CONDITIONAL_MARKS = {"if", "unless", "whether", "once"}
CONDITIONAL_WH = {"when", "where", "why", "whenever", "wherever"}
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
OBJECT_DEPS = {"dobj", "attr", "oprd", "dative", "acomp"}
CLAUSE_BREAK_DEPS = {"conj", "cc", "advcl", "ccomp", "parataxis", "relcl", "mark"}
UNTIL_WORDS = {"until", "till", "til"}
# A shared photo transcribed into the text, "[image: a photo of a dog on a beach]": the
# speaker shared it (SHARES_PHOTO_OF), and what it shows is the first specific noun of the
# description, past the people in it and the light heads ("a stack of books" -> books).
CAPTION = re.compile(
    r"\[\s*(?:image|photo|picture|img|pic)\s*:\s*([^\]\[]{3,400})\]", re.IGNORECASE
)
CAPTION_KIND = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?:\w+\s+)?(photography|photo|picture|image|pic|screenshot|"
    r"drawing|painting|video|selfie|sketch)s?\s+of\b\s*",
    re.IGNORECASE,
)
CAPTION_SKIP = LIGHT_NOUNS | frozenset(  # and the light heads: "a bunch of flowers"
    """photo photos photography picture pictures image images pic pics screenshot drawing
    painting video selfie sketch person people man men woman women boy boys girl girls child
    children kid kids group couple family crowd stack pile row set pair collection close
    closeup view front top side middle background""".split()  # noqa: SIM905
)


# Subjectless chat sentences ("Met with the creative team yesterday", "Still planning a
# trip to Rome", "Been busy tackling a project") leave the speaker unsaid. Only a
# sentence that opens (after adverbs such as "still") with a past form or a gerund gets the
# speaker back: "Check it out" (an imperative) and "Sounds great" (said of something) do
# not. spaCy tags such openers unreliably ("Met" as a proper noun, "Got" as a base verb),
# so the word's own form decides.
IRREGULAR_PAST = frozenset(
    """got met went made had took saw did found bought ran began came felt left kept gave
    thought told won wrote spent sent brought built caught taught heard lost paid sold
    tried""".split()  # noqa: SIM905
)
LEADING_ADVERBS = frozenset(
    """still just also really finally recently actually currently lately totally
    definitely always never""".split()  # noqa: SIM905
)
SUBJECT_LIKE_DEPS = SUBJECT_DEPS | {"expl", "csubj", "csubjpass"}
# Linking verbs in the past mostly describe a thing ("Felt so refreshing", "Looked great").
LINKING_PAST = frozenset({"felt", "looked", "seemed", "sounded", "tasted", "smelled"})
# Discourse fillers that open a clause and say nothing ("Actually Bob moved ..."): left
# out of fact text.
FILLERS = frozenset(
    """actually honestly basically anyway anyways so well um uh like literally frankly
    seriously""".split()  # noqa: SIM905
)
# Verbs whose gerund names no activity of its own ("started working", "keep doing"): such
# a gerund is never an entity.
LIGHT_VERBS = frozenset(
    """work do go get try make have be start begin keep stop finish continue quit take
    come think""".split()  # noqa: SIM905
)
# Job titles and roles: the last word of a name that is a role, not an organisation or
# a person ("CTO", "data engineer", "Head of Sales" is caught by its own key in JSON).
ROLE_WORDS = frozenset(
    """ceo cto cfo coo cio vp president director manager engineer developer designer nurse
    doctor teacher lawyer chef pharmacist photographer violinist student intern analyst
    consultant accountant architect scientist researcher professor assistant secretary
    founder owner clerk cashier waiter driver programmer editor writer""".split()  # noqa: SIM905
)
# Relations that say where someone lives or works, kept first among a clause's readings
# ("I work for Skoda in Mlada Boleslav": WORKS_FOR Skoda, not WORKS_IN Mlada Boleslav).
CORE_RELATIONS = frozenset(
    """LIVES_IN MOVES_TO RELOCATES_TO MOVES_BACK_TO WORKS_AT WORKS_FOR JOINS STARTS_AT
    STARTS_WORKING_AT STARTS_WORKING_FOR IS_MARRIED_TO IS_BORN_IN STUDIES_AT""".split()  # noqa: SIM905
)
# The type a relation gives its target when NER gave none or a doubtful one (Product,
# Work): "joined Globex" -> Globex is an Organization.
TARGET_LABELS = {
    **dict.fromkeys(
        """WORKS_AT WORKS_FOR JOINS STARTS_AT STARTS_WORKING_AT STARTS_WORKING_FOR
        IS_EMPLOYED_BY LEAVES QUITS""".split(),  # noqa: SIM905
        "Organization",
    ),
    **dict.fromkeys("LIVES_IN MOVES_TO RELOCATES_TO MOVES_BACK_TO".split(), "Location"),  # noqa: SIM905
}
# Adverbs that add a value beside those known ("I also work at Globex", "I have a cat
# too"): such a fact retires nothing of a single-valued relation (ingest/single_valued.py).
ADDITION_WORDS = frozenset({"also", "too", "additionally"})
