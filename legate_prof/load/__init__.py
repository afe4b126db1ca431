"""Which inputs, which processes: the one pipeline from the paths a user gives (logs, gzipped
logs, runtime streams, bundles, folders, a console log) to a profile, built in this process or
rank by rank in worker processes, from the cache when it can.

May import ``store`` and below.
"""
