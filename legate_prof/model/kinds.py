"""Processor, memory, item and lane-group kinds, with the names the seed guide uses."""

from enum import IntEnum


class ProcKind(IntEnum):
    """Realm processor kinds (0 appears in real files for legate's external thread)."""
    NONE = 0
    GPU = 1
    CPU = 2
    UTILITY = 3
    IO = 4
    PROC_GROUP = 5
    PROC_SET = 6
    OPENMP = 7
    PYTHON = 8


class MemKind(IntEnum):
    NONE = 0
    GLOBAL = 1
    SYSTEM = 2
    REGISTERED = 3
    SOCKET = 4
    ZERO_COPY = 5
    FRAMEBUFFER = 6
    DISK = 7
    HDF5 = 8
    FILE = 9
    L3_CACHE = 10
    L2_CACHE = 11
    L1_CACHE = 12
    GPU_MANAGED = 13
    GPU_DYNAMIC = 14


class ItemKind(IntEnum):
    """What a timeline item is; decides which details it has."""
    TASK = 0
    GPU_KERNEL = 1
    META = 2
    MESSAGE = 3
    MAPPER_CALL = 4
    RUNTIME_CALL = 5
    APP_CALL = 6
    PROF_TASK = 7
    COPY = 8
    FILL = 9
    DEP_PART = 10
    INSTANCE = 11
    RUNTIME_OP = 12  # operation launch from our runtime's event stream
    PROGRAM_WAIT = 13  # the program waiting for an array's values (our runtime's stream)


# Lane groups: (key, display name, short lane prefix, summary colour).
# Order is the order groups appear under a rank, as in the reference viewer.
GROUPS = [
    ("gpu_dev", "gpu dev", "g", "olivedrab"),
    ("gpu_host", "gpu host", "g", "orangered"),
    ("cpu", "cpu", "c", "steelblue"),
    ("utility", "utility", "u", "crimson"),
    ("io", "io", "i", "orangered"),
    ("python", "python", "p", "olivedrab"),
    ("openmp", "omp", "o", "orangered"),
    ("proc_group", "proc group", "pg", "orangered"),
    ("proc_set", "proc set", "ps", "orangered"),
    # legate 26.06 runs the top-level task on an external thread (the reference: "Extern"),
    # where the guide's pictures show an I/O lane
    ("proc_other", "io (extern)", "e", "slategray"),
    ("system", "system", "s", "olivedrab"),
    ("framebuffer", "framebuffer", "f", "blue"),
    ("zerocopy", "zerocopy", "z", "crimson"),
    ("registered", "registered", "r", "darkmagenta"),
    ("socket", "socket", "k", "olivedrab"),
    ("mem_other", "memory", "m", "gray"),
    ("arrays", "arrays", "a", "teal"),
    ("channel", "chan", "", "orangered"),
    ("dp", "dp", "dp", "orangered"),
    ("ops", "ops", "op", "slategray"),
]
# groups whose utilization is 1 while anything in them is active (not a share of lanes)
ANY_ACTIVE_GROUPS = ("channel", "dp")
GROUP_KEYS = [g[0] for g in GROUPS]
GROUP_INDEX = {g[0]: i for i, g in enumerate(GROUPS)}
GROUP_TITLE = {g[0]: g[1] for g in GROUPS}
GROUP_COLOR = {g[0]: g[3] for g in GROUPS}
PROCESSOR_GROUPS = {"gpu_dev", "gpu_host", "cpu", "utility", "io", "python", "openmp",
                    "proc_group", "proc_set", "proc_other"}
MEMORY_GROUPS = {"system", "framebuffer", "zerocopy", "registered", "socket", "mem_other",
                 "arrays"}

PROC_GROUP = {
    ProcKind.CPU: "cpu", ProcKind.UTILITY: "utility", ProcKind.IO: "io",
    ProcKind.PYTHON: "python", ProcKind.OPENMP: "openmp", ProcKind.PROC_GROUP: "proc_group",
    ProcKind.PROC_SET: "proc_set", ProcKind.GPU: "gpu_host",
}
MEM_GROUP = {
    MemKind.SYSTEM: "system", MemKind.FRAMEBUFFER: "framebuffer",
    MemKind.ZERO_COPY: "zerocopy", MemKind.REGISTERED: "registered", MemKind.SOCKET: "socket",
}
def proc_kind_name(kind: int) -> str:
    if kind == ProcKind.NONE:  # legate's external thread, where the top-level task runs
        return "extern (top level)"
    try:
        return ProcKind(kind).name.lower()
    except ValueError:
        return f"unknown({kind})"


def mem_kind_name(kind: int) -> str:
    try:
        return MemKind(kind).name.lower()
    except ValueError:
        return f"unknown({kind})"


# Dependent-partitioning op kinds (DepPartOpKind), in Legion's order.
DEP_PART_NAMES = [
    "Union", "Unions", "Union Reduction", "Intersection", "Intersections",
    "Intersection Reduction", "Difference", "Differences", "Equal Partition",
    "Partition by Field", "Partition by Image", "Partition by Image Range",
    "Partition by Preimage", "Partition by Preimage Range", "Create Association",
    "Partition by Weights",
]


def node_of_id(ids):
    """Node (rank) of a ProcID or MemID: bits 40..55 (Realm id layout)."""
    return (ids >> 40) & 0xFFFF


def index_of_proc(ids):
    return ids & 0xFFF


def index_of_mem(ids):
    return ids & 0xFF


def processor_lanes(procs):
    """(rank, group, processor id) of each processor's lane: its kind's group
    (``proc_other`` for a kind not known), and a GPU's device lane besides its host's."""
    out = []
    for p, k, r in zip(procs["proc_id"].tolist(), procs["kind"].tolist(),
                       procs["rank"].tolist()):
        out.append((int(r), PROC_GROUP.get(_pk(k), "proc_other"), int(p)))
        if k == ProcKind.GPU:
            out.append((int(r), "gpu_dev", int(p)))
    return out


def _pk(k):
    try:
        return ProcKind(k)
    except ValueError:
        return None
