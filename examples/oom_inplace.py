from legate_prof.runtime import numpy as np
import gc

a = np.ones((1024 * 1024 - 2,))
b = np.zeros((1024 * 1024,))

# stage, then drop 'a' to reduce the live set (C.1 + C.2)
b[1:-1] = a
a = None
gc.collect()

# avoid creating 'c' and 'd' instances: in-place updates
np.add(b, 2, out=b)   # replaces: c = b + 2
np.add(b, 3, out=b)   # replaces: d = c + 3

# optional: if CuPy is also in this process, free its caches (C.3)
try:
    import cupy as cp
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()
except Exception:
    pass  # CuPy not used/installed, or no pools to flush
