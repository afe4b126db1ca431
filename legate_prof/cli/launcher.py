"""This process's place under a parallel launcher (``mpirun``, ``srun``, ``mpiexec``): which
of how many processes it is, from the variables each launcher sets."""

from __future__ import annotations

import os

# (rank variable, size variable): Open MPI, MPICH / Hydra / Intel MPI (PMI), Slurm's srun.
# (Slurm's size is the step's: a batch script's own shell has SLURM_PROCID=0 and the job's
# SLURM_NTASKS too, though it is one process, not one of a step's tasks.)
LAUNCHER_VARIABLES = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
                      ("PMI_RANK", "PMI_SIZE"),
                      ("SLURM_PROCID", "SLURM_STEP_NUM_TASKS"))


def launcher_share(environ=None):
    """(this process, processes) under a launcher that started more than one, else None.  The
    first launcher whose two variables are both set, as whole numbers, process < processes."""
    env = os.environ if environ is None else environ
    for rank_var, size_var in LAUNCHER_VARIABLES:
        rank, size = env.get(rank_var, "").strip(), env.get(size_var, "").strip()
        if rank.isdigit() and size.isdigit() and int(rank) < int(size):
            return (int(rank), int(size)) if int(size) > 1 else None
    return None
