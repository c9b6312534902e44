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
