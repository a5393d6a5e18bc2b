"""Keep the shared blocks embedded in every node identical to nodes/blocks/.

    python3 -m conformance.sync            rewrite every embedded copy from its block
    python3 -m conformance.sync --check    change nothing; exit 1 naming each node and
                                           block that differ, 0 when all agree

The embedding rule (nodes/blocks/README.md says the same for block authors):

* A block file `nodes/blocks/<name>.py` is a header, one line that reads exactly
  `# ---- block body ----`, then the body.  The header (docstring, imports, and
  `from nodes.blocks.<other> import ...` for blocks it builds on) exists so the
  block runs and is tested on its own; it is never copied.
* A node embeds the body between the lines
  `# ---- BEGIN BLOCK <name> (nodes/blocks/<name>.py) ----` and
  `# ---- END BLOCK <name> ----`.  What lies strictly between them must equal the
  body with its leading and trailing blank lines removed.
* Every standard-library module a block's header imports must also be imported
  at the top level of each node embedding it (the node's section 1).  `--check`
  reports a missing one; a rewrite cannot add it, so it reports it too.
* A node embeds exactly the blocks whose BEGIN/END lines it carries: that is
  all this module knows of which node uses which block, and the lines are how a
  node takes a block on (`make sync` fills them in).  A block that builds on
  another (its header's `from nodes.blocks.<other> import ...`) refers to the
  other's names, so a node embedding it must embed the other too; `--check`
  reports one that does not.

Derivatives get the same treatment one level up. A file `examples/*.py` whose
module docstring has a line `Derived from nodes/<node>.py` is a copy of that
reference node edited only in its `[EDIT]` sections (the module docstring and
sections 2 and 3); its section 1 (from `# 1 Imports` to `# 2 Configuration`)
and everything from the `# ---- Below this line: contract machinery [KEEP]`
line to the end are rewritten from the reference, so a fix to the machinery
reaches the examples that show how to use it.

Exit status: 0 when every copy agrees (or was rewritten) and no import is
missing; 1 otherwise, one line per problem on stderr; 2 on bad usage.
Nodes are `nodes/*.py` and derivatives `examples/*.py` under the repository
root; nothing else is touched.
"""

import argparse
import ast
import os
import re
import sys

BODY_MARKER = "# ---- block body ----"
BEGIN_RE = re.compile(r"# ---- BEGIN BLOCK (?P<name>[A-Za-z0-9_]+) \((?P<path>[^)]*)\) ----\Z")
END_RE = re.compile(r"# ---- END BLOCK (?P<name>[A-Za-z0-9_]+) ----\Z")
DEFAULT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DERIVED_RE = re.compile(r"^Derived from (nodes/[A-Za-z0-9_]+\.py)\b", re.M)
IMPORTS_BANNER = "# 1 Imports "
CONFIG_BANNER = "# 2 Configuration [EDIT] "
KEEP_LINE = "# ---- Below this line: contract machinery [KEEP] ----"


class SyncError(Exception):
    """A node or block file whose markers cannot be understood."""


def block_source_path(name):
    return "nodes/blocks/%s.py" % name


def split_block(text, name):
    """(header, body) of a block file; body without leading/trailing blank lines."""
    lines = text.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BODY_MARKER]
    if len(marks) != 1:
        raise SyncError("%s: needs exactly one line %r, found %d"
                        % (block_source_path(name), BODY_MARKER, len(marks)))
    header = "".join(lines[:marks[0]])
    body = "".join(lines[marks[0] + 1:]).strip("\n")
    if not body:
        raise SyncError("%s: the body below %r is empty" % (block_source_path(name), BODY_MARKER))
    return header, body + "\n"


def imported_modules(source, label):
    """Module names imported by top-level import statements of `source`, and by a top-level
    function that declares the names it imports `global` (a node's deferred imports, such as
    the session node's worker_imports(): its main() calls it before any block runs)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise SyncError("%s: does not parse (%s, line %s)" % (label, exc.msg, exc.lineno))
    modules = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
        elif isinstance(node, ast.FunctionDef):
            bound = set(name for statement in node.body if isinstance(statement, ast.Global)
                        for name in statement.names)
            modules.update(alias.name for statement in node.body if isinstance(statement, ast.Import)
                           for alias in statement.names
                           if (alias.asname or alias.name.split(".")[0]) in bound)
    return modules


def load_blocks(root):
    """{name: (body, stdlib modules its header imports, blocks it builds on)} for nodes/blocks/*.py."""
    directory = os.path.join(root, "nodes", "blocks")
    blocks = {}
    if not os.path.isdir(directory):
        return blocks
    for filename in sorted(os.listdir(directory)):
        if not filename.endswith(".py") or filename.startswith("_"):
            continue
        name = filename[:-3]
        with open(os.path.join(directory, filename), encoding="utf-8") as handle:
            header, body = split_block(handle.read(), name)
        imports = imported_modules(header, block_source_path(name))
        needs = set(m for m in imports if m != "nodes" and not m.startswith("nodes."))
        builds_on = set(m[len("nodes.blocks."):] for m in imports if m.startswith("nodes.blocks."))
        blocks[name] = (body, needs, builds_on)
    return blocks


def find_regions(text, label):
    """[(name, begin line index, end line index)] of the blocks embedded in a node."""
    regions, open_begin = [], None
    for index, line in enumerate(text.splitlines()):
        begin, end = BEGIN_RE.match(line), END_RE.match(line)
        if begin:
            if open_begin is not None:
                raise SyncError("%s:%d: BEGIN BLOCK %s inside block %s"
                                % (label, index + 1, begin.group("name"), open_begin[0]))
            if begin.group("path") != block_source_path(begin.group("name")):
                raise SyncError("%s:%d: BEGIN BLOCK %s must name %s"
                                % (label, index + 1, begin.group("name"), block_source_path(begin.group("name"))))
            open_begin = (begin.group("name"), index)
        elif end:
            if open_begin is None or end.group("name") != open_begin[0]:
                raise SyncError("%s:%d: END BLOCK %s without its BEGIN" % (label, index + 1, end.group("name")))
            regions.append((open_begin[0], open_begin[1], index))
            open_begin = None
    if open_begin is not None:
        raise SyncError("%s:%d: BEGIN BLOCK %s has no END" % (label, open_begin[1] + 1, open_begin[0]))
    return regions


def embed(text, label, blocks):
    """(new text, names of blocks whose copies differed, names used)."""
    lines = text.splitlines(keepends=True)
    regions = find_regions(text, label)
    differing, used = [], []
    for name, begin, end in reversed(regions):
        if name not in blocks:
            raise SyncError("%s:%d: no block named %s (expected %s)"
                            % (label, begin + 1, name, block_source_path(name)))
        used.append(name)
        wanted = blocks[name][0]
        if "".join(lines[begin + 1:end]) != wanted:
            differing.append(name)
            lines[begin + 1:end] = wanted.splitlines(keepends=True)
    return "".join(lines), sorted(differing), sorted(set(used))


def node_paths(root):
    directory = os.path.join(root, "nodes")
    if not os.path.isdir(directory):
        return []
    return [os.path.join(directory, f) for f in sorted(os.listdir(directory))
            if f.endswith(".py") and os.path.isfile(os.path.join(directory, f))]


def kept_parts(text, label):
    """(start, end) of section 1 and the start of the KEEP part, as offsets in text."""
    offsets = []
    for marker in (IMPORTS_BANNER, CONFIG_BANNER, KEEP_LINE):
        found = [m.start() for m in re.finditer("^" + re.escape(marker), text, re.M)]
        if len(found) != 1:
            raise SyncError("%s: needs exactly one line starting %r, found %d" % (label, marker, len(found)))
        offsets.append(found[0])
    if not offsets[0] < offsets[1] < offsets[2]:
        raise SyncError("%s: sections 1, 2 and the KEEP line are out of order" % label)
    return offsets


def derive(text, label, reference, reference_label):
    """The derivative `text` with section 1 and the KEEP part taken from `reference`."""
    mine = kept_parts(text, label)
    theirs = kept_parts(reference, reference_label)
    return (text[:mine[0]] + reference[theirs[0]:theirs[1]] + text[mine[1]:mine[2]]
            + reference[theirs[2]:])


def derivative_paths(root):
    """[(path, reference node path)] of examples/*.py that say `Derived from nodes/X.py`."""
    directory = os.path.join(root, "examples")
    if not os.path.isdir(directory):
        return []
    found = []
    for filename in sorted(os.listdir(directory)):
        path = os.path.join(directory, filename)
        if not filename.endswith(".py") or not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as handle:
            head = handle.read(4096)
        match = DERIVED_RE.search(head)
        if match:
            found.append((path, os.path.join(root, match.group(1))))
    return found


def sync_derivatives(root, check):
    """Sync (or check) the KEEP parts of every derivative; return problem lines."""
    problems = []
    for path, reference_path in derivative_paths(root):
        label, reference_label = os.path.relpath(path, root), os.path.relpath(reference_path, root)
        try:
            with open(reference_path, encoding="utf-8", newline="") as handle:
                reference = handle.read()
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
            new_text = derive(text, label, reference, reference_label)
        except (OSError, SyncError) as exc:
            problems.append(str(exc))
            continue
        if new_text == text:
            continue
        if check:
            problems.append("%s: section 1 or the KEEP part differs from %s (run make sync)" % (label, reference_label))
        else:
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(new_text)
            print("%s: rewrote section 1 and the KEEP part from %s" % (label, reference_label))
    return problems


def run(root, check):
    """Sync (or check) every node and derivative under `root`; return the list of problem lines."""
    problems = []
    try:
        blocks = load_blocks(root)
    except (OSError, SyncError) as exc:
        return [str(exc)]
    for path in node_paths(root):
        label = os.path.relpath(path, root)
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        try:
            new_text, differing, used = embed(text, label, blocks)
            have = imported_modules(new_text, label)
        except SyncError as exc:
            problems.append(str(exc))
            continue
        for name in differing:
            if check:
                problems.append("%s: block %s differs from %s" % (label, name, block_source_path(name)))
            else:
                print("%s: rewrote block %s" % (label, name))
        if differing and not check:
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(new_text)
        for name in used:
            for module in sorted(blocks[name][1] - have):
                problems.append("%s: block %s needs `import %s` in the node's section 1"
                                % (label, name, module))
            for other in sorted(blocks[name][2] - set(used)):
                problems.append("%s: block %s builds on block %s, which the node does not embed"
                                % (label, name, other))
    # Derivatives after the nodes: their KEEP part comes from a node just synced.
    problems.extend(sync_derivatives(root, check))
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m conformance.sync",
        description="Rewrite (or with --check, compare) the shared blocks embedded in nodes/*.py, and the "
                    "contract machinery of the derivatives in examples/*.py.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a copy differs")
    parser.add_argument("--root", default=DEFAULT_ROOT, help="repository root (default: %(default)s)")
    args = parser.parse_args(argv)
    problems = run(args.root, args.check)
    for problem in problems:
        print("sync: " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
