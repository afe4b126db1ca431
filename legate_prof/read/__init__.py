"""Bytes into record tables: Legion Prof logs, the array runtime's event stream, legate's
console log (and, for tests and the generator, the Legion Prof writer).

Knows file formats and nothing of lanes or timelines.  May import ``errors`` only.
"""
