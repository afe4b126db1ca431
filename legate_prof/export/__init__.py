"""Exports to the tools people already use: Chrome trace JSON, Parquet, DuckDB, SQL."""

FORMATS = {"chrome": ".json", "parquet": "", "duckdb": ".duckdb"}
