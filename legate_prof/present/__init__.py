"""How numbers and pictures look, shared by the viewer, the report and the text outputs.

Pure functions and constants, no Qt: units and number formats, the colour of a name, the
shades of a task's states, how narrow an item may be before it merges, picture sizes.  Imports
nothing of legate_prof but ``errors``, so every layer above may use it.
"""
