"""Timeline viewer (PySide6 + pyqtgraph); talks to the core only through TraceModel queries."""
