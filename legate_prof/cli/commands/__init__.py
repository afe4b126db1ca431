"""One thin module per ``legate_prof`` command: its sub-parser (``register``) and its run
(``run``), over the core's layers; ``cli.parser`` collects them."""
