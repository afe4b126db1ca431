from legate_prof.runtime import numpy as np

N = 1024 * 1024
a = np.ones((N - 2,), dtype=np.float32)
b = np.zeros((N,),      dtype=np.float32)

# We will touch b[1:-1] now and later its full range → halo 1 on each side
b.stencil_hint(low_offsets=(1,), high_offsets=(1,))

b[1:-1] = a
c = b + 2
d = c + 3
