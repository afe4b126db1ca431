"""Models kept on disk: the one-file bundle (mapped back without copying), its validation,
several ranks written as one bundle, and the cache of built timelines.

May import ``assemble`` and below.
"""
