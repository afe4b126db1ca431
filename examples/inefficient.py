from legate_prof.runtime import numpy as np

N = 10_000_000
x = np.random.random(N).astype(np.float32)
y = np.random.random(N).astype(np.float32)

# advanced indexing, extra comms/overhead
cond_idx = np.nonzero((x < 0.25) & (y > 0.5))

# extra temporaries
z     = x + y
z_alt = x * y + 1.0

# scatter writeback through indices (slower than boolean mask)
z[cond_idx] = z_alt[cond_idx]

# tiny chunked updates, lots of tiny tasks
CHUNK = 4096
for s in range(0, N, CHUNK):
    sub = z[s:s+CHUNK]
    gt1 = sub > 1.0
    sub[gt1]  = sub[gt1]  + 2.0
    sub[~gt1] = sub[~gt1] - 2.0
