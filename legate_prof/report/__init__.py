"""The offline HTML report (``legate_prof report``): a folder that opens from file://."""

from .writer import write_report

__all__ = ["write_report"]
