"""``legate_prof convert``: a profile as one bundle, or one bundle beside each rank's log."""

from __future__ import annotations

import os

from legate_prof.cli.arguments import add_files
from legate_prof.cli.common import EXIT_USER_ERROR, input_files, load_with_progress
from legate_prof.errors import ProfileError
from legate_prof.output_file import check_output


def register(sub):
    c = sub.add_parser("convert", help="write the merged model as one .lpbundle file, or with "
                                       "--per-rank one bundle beside each rank's file")
    add_files(c)
    c.add_argument("-o", "--output", help="the bundle (default: beside a single input, "
                                          "named after it)")
    c.add_argument("--per-rank", action="store_true",
                   help="one bundle per rank file, beside it (on a cluster: run where each "
                        "file lies); `view DIR` opens them together")
    c.set_defaults(func=run)


def bundle_beside(path):
    name = os.path.basename(path)
    for ext in (".prof.gz", ".prof", ".gz"):
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return os.path.join(os.path.dirname(path), name + ".lpbundle")


def run(args):
    from legate_prof.load.inputs import expand_inputs
    from legate_prof.store.bundle import write_bundle
    inputs = input_files(args)
    if args.per_rank:  # a directory's logs, each converted beside itself
        inputs = expand_inputs(inputs, logs_only=True)
    if args.per_rank or (args.output is None and len(inputs) == 1):
        if args.output is not None and len(inputs) > 1:
            raise ProfileError(args.output, "--per-rank writes one bundle beside each input; "
                                            "leave out -o")
        jobs = [(f, args.output or bundle_beside(f)) for f in inputs]
    elif args.output is None:
        raise ProfileError(inputs[0], "several inputs: give -o for one merged bundle, or "
                                      "--per-rank for one beside each")
    else:
        jobs = [(inputs, args.output)]
    for _, out in jobs:
        check_output(out, inputs, {".lpbundle"}, "bundle")
    rc = 0
    for files, out in jobs:
        model = load_with_progress(files if isinstance(files, list) else [files], args,
                                   check_files=isinstance(files, list))
        write_bundle(model, out)
        print(f"wrote {out} ({model.n_items} items)")
        rc = rc or (EXIT_USER_ERROR if model.errors else 0)
    return rc
