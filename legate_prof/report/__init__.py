"""The offline HTML report (``legate_prof report``): a folder that opens from file://."""

__all__ = ["write_report"]


def __getattr__(name):  # (``report.folder`` alone, asked again, never imports the writer)
    if name == "write_report":
        from legate_prof.report.writer import write_report
        return write_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
