"""NumPy-style array runtime on Legate, instrumented for profiling."""
