"""What each lane group shows, in a user's words: the tooltips of its rows in the viewer and
the report said only its name again ("dp: dp", "ops: ops", a review)."""

from __future__ import annotations

GROUP_WORDS = {
    "cpu": "CPU processors: the program's tasks as they ran (the guide's CPU lanes)",
    "gpu_dev": "GPU kernels, as the device ran them",
    "gpu_host": "GPU tasks on their host threads, launching their kernels",
    "utility": "utility processors: the runtime's own work (mapping, dependence analysis, "
               "messages between ranks), as meta-tasks",
    "io": "I/O processors",
    "python": "Python processors",
    "openmp": "OpenMP processors",
    "proc_group": "processor groups",
    "proc_set": "processor sets",
    "proc_other": "the program's own thread: the top-level task, and Python between the "
                  "operations it launches (the guide's I/O lane)",
    "system": "system memory (host DRAM, sized by --sysmem): Legion's instances in it",
    "framebuffer": "GPU memory (sized by --fbmem): Legion's instances in it",
    "zerocopy": "zero-copy memory (sized by --zcmem): Legion's instances in it",
    "registered": "registered memory: Legion's instances in it",
    "socket": "NUMA socket memory (sized by --numamem): Legion's instances in it",
    "mem_other": "other memory: Legion's instances in it",
    "arrays": "the program's arrays, as the array runtime made them, each named by the line "
              "that allocated it",
    "channel": "copies and fills between memories (the guide's Channel lanes)",
    "dp": "dependent partitioning: the runtime working out the pieces of sliced or indexed "
          "arrays",
    "ops": "the operations the program launched, from launch to completion (the array "
           "runtime's event stream)",
}


def group_words(group, title=""):
    """What the lane group ``group`` (its key) shows; its ``title`` where none is written."""
    return GROUP_WORDS.get(group, title)
