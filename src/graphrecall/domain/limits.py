"""Input limits, in one place. Values follow the Zep documentation where it names one."""

MAX_BODY_BYTES = 8 * 1024 * 1024
# How deep a request body's JSON may nest (objects and arrays, the body itself counted):
# deep enough for any real attributes or meta, far below what a JSON reader or the
# response serialiser can walk.
MAX_JSON_DEPTH = 64
LIST_PAGE_SIZE_DEFAULT = 50
LIST_PAGE_SIZE_MAX = 100
MAX_METADATA_KEYS = 10
MAX_USER_ID_CHARS = 500
MAX_EPISODE_CHARS = 10_000
MAX_MESSAGE_CHARS = 10_000
MAX_MESSAGES_PER_CALL = 30
MAX_EDGES_PER_CALL = 100
MAX_NODES_PER_CALL = 100
MAX_UUID_LIST = 256
MAX_NAME_CHARS = 500
NODE_EPISODE_UUIDS_MAX = 100
MAX_BATCH_ITEMS_PER_CALL = 1000
MAX_BATCH_ITEMS = 100_000
MAX_DOCUMENT_ID_CHARS = 500
MAX_SUMMARY_INSTRUCTIONS = 5
MAX_INSTRUCTION_CHARS = 100

# Free-text fields (issue 47, item 6): each text a request can store has a cap, so a
# handful of records cannot fill a list response or the server's memory, and a name that
# becomes an index key (a node's name: PostgreSQL's btree row holds at most 2,704 bytes)
# always fits it. A user's node is named "first last", else user_id, else email: 200 +
# 1 + 200 characters, 500 or 320, at most 2,000 bytes of UTF-8. docs/api.md lists them.
MAX_PERSON_NAME_CHARS = 200  # first_name, last_name
MAX_EMAIL_CHARS = 320  # RFC 5321's longest address
MAX_DESCRIPTION_CHARS = 10_000  # graph and user-group description
MAX_SUMMARY_CHARS = 10_000  # a node's summary given through the API
MAX_LABEL_CHARS = 100  # one node label
MAX_LABELS = 20  # labels of one node
MAX_SOURCE_DESCRIPTION_CHARS = 500
MAX_TIME_ZONE_CHARS = 64  # IANA names are shorter
MAX_TIMESTAMP_CHARS = 64  # reference_time, valid_at, ...: RFC 3339 is shorter
MAX_TEMPLATE_CHARS = 10_000  # a context template's text
MAX_GUIDANCE_CHARS = 2_000  # graph.query's guidance
# A free JSON object (node or edge attributes, an episode's or message's metadata on
# update, a user's or graph's content policy), counted as compact JSON in UTF-8.
MAX_JSON_OBJECT_BYTES = 64 * 1024

# What one request may ask the server to compute (issue 47, item 7): a heavy but valid
# request from one tenant must not slow another's more than a few times (measured by
# `graphrecall bench stall`, docs/security.md). 400 naming the field beyond these.
MAX_TEMPLATE_SLOTS = 20  # variables of one context template
MAX_TEMPLATE_ITEMS = 200  # the sum of a template's slot limits
MAX_QUERY_TERMS = 128  # distinct words of a search or context query
MAX_FULLTEXT_CHARS = 2_000  # memory.search fulltext
MAX_SEMANTIC_CHARS = 8_192  # memory.search semantic (the vector leg reads no further)
