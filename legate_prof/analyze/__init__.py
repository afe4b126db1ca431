"""What the numbers say: statistics, the guide's inefficiency patterns (insights), comparing
two runs, the out-of-memory story, the critical path.

May import ``query`` and below.
"""
