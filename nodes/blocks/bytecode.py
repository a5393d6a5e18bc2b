"""Shared block `bytecode`: canonical copy (see nodes/blocks/README.md).

Everything below the `# ---- block body ----` line is embedded verbatim in
each node that uses it; the imports above the line are the node's own job.
"""
import importlib.util
import marshal

# ---- block body ----
# bytecode: a node file's bytes compiled into a .pyc a child interpreter runs
# as its script (`python -I -S FILE.pyc ...`), so the child skips the compile
# that is most of a long node's start.  Which bytes, where the file goes and
# how a stale one is never run are the node's (scan D34, session D54).


def node_bytecode(source, filename):
    """The .pyc bytes of `source` (the node file's bytes, as hashed by the caller) compiled as `filename`.

    The header is what the interpreter reads before the code: its magic, flags 1
    (a hash-based .pyc that is never compared with a source; the caller's digest
    of `source` is that comparison) and the source hash.  SyntaxError or
    ValueError when `source` does not compile.
    """
    code = compile(source, filename, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + b"\x01\x00\x00\x00" + importlib.util.source_hash(source) \
        + marshal.dumps(code)
