"""User-facing errors: one line naming the file and the problem."""


class ProfileError(Exception):
    """A file that cannot be read as a profile at all (exit code 2)."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):  # (pickled whole: a file read by a forked copy, ``load.two_readers``)
        return type(self), (self.path, self.problem)


class ProfileWarning:
    """Something was wrong in a file but what could be read is kept."""

    __slots__ = ("path", "problem")

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem

    def __str__(self):
        return f"warning: {self.path}: {self.problem}"

    def __repr__(self):
        return f"ProfileWarning({self.path!r}, {self.problem!r})"
