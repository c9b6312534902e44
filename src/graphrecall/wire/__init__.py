"""The wire shapes shared by the HTTP faces and the in-process library.

Request bodies, response models and the conversions from domain records to them, with
no web framework: ``api/`` serves them over HTTP and ``library/`` returns them in
process, so both answer with the same fields. Sits above ``services/`` and below both.
"""
