"""What each kind of file legate_prof reads begins with, apart from the modules that read
them: telling an input's kind (``load.inputs.sniff``) and keying a cache entry or a kept
answer import no numpy (a command asked again of the same run: ~0.1 s of its ~0.2 s was
numpy's import)."""

LEGION_LOG = b"FileType: BinaryLegionProf v: "  # Legion Prof's binary log
GZIP = b"\x1f\x8b"  # a gzipped log
RUNTIME_STREAM = b"LPRTSTR1"  # legate_prof's runtime stream (``read.runtime_stream``)
BUNDLE = b"LPBUNDLE"  # a built timeline (``store.bundle_file``), of this format:
BUNDLE_VERSION = 6  # 6: the runtime's arrays as each rank's piece (their ``src``: the whole
# array's bytes), its operations' shapes in items.detail; 5: the event graph (items' events,
# waits' events, model.events); 4: lanes named by model.lane_names; 3: calls folded into
# waits, items.detail (a cache entry's key says it: ``store.cache.cache_key``)
