"""The offline HTML report (``legate_prof report``): a folder that opens from file://."""

from legate_prof.report.writer import write_report

__all__ = ["write_report"]
