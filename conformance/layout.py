"""The shape a node copied from a reference node keeps: its table of contents and its [EDIT] frame.

A reference node is one file in numbered sections (STYLE item 1): `grep -n '^# [0-9]'` prints its
table of contents, one KEEP line separates the part a copier edits (sections 1 to 3) from the
contract machinery (4 to 9), and section 3 opens with a frame box that names, among other things,
every name defined below the KEEP line that section 3 may use:

    # 3 Your work [EDIT] ===========================================================
    # +- The frame -----------------------------------------------------------------
    # | Called, in order: ...
    # | Your code may use: ...
    # | Uses from below KEEP: write_all, StopRequested
    # | To refuse work: ...
    # +-----------------------------------------------------------------------------

`edit_surface(source)` reads a file and says which names section 3 reads from below the KEEP line
without listing them (what a copier would lose, unwarned, by rewriting the machinery's names);
`toc_problems(source)` says where the numbered banners stray from the one table of contents.
Both are static: the file is parsed, never run.
"""

import ast
import re

KEEP_LINE = "# ---- Below this line: contract machinery [KEEP] ----"
BANNER_WIDTH = 80
BANNER_RE = re.compile(r"# (?P<number>[0-9]+(?:\.[0-9]+)?) (?P<title>.*?) =+\Z")
TOC_LINE_RE = re.compile(r"# [0-9]")
FRAME_OPEN = "# +- The frame "
FRAME_CLOSE = "# +---"
FRAME_LABELS = ("Called, in order", "Your code may use", "Uses from below KEEP", "To refuse work")
FRAME_FIELD_RE = re.compile(r"# \| (?P<label>[A-Z][A-Za-z ,]*?): ?(?P<rest>.*)\Z")
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The top-level banners of every node, in order (STYLE item 1).
TOP_LEVEL = ("Imports", "Configuration [EDIT]", "Your work [EDIT]", "Limits", "Errors", "Protocol",
             "Lifecycle", "main()", "Shared blocks")
# The protocol topics every node numbers alike (a node without one keeps the banner, "not used").
PROTOCOL_TOPICS = ("Process and output", "Documents and forms", "Configuration", "Identity",
                   "HTTP exchanges", "State on disk", "Child framing", "Progress")
NOT_USED = " (not used by this node)"


class Banner(object):
    __slots__ = ("line", "number", "title")

    def __init__(self, line, number, title):
        self.line, self.number, self.title = line, number, title

    def parts(self):
        return tuple(int(part) for part in self.number.split("."))


def banners(lines):
    """[Banner] for every line `grep '^# [0-9]'` would print that is a banner; and the strays."""
    found, strays = [], []
    for index, line in enumerate(lines):
        if not TOC_LINE_RE.match(line):
            continue
        match = BANNER_RE.match(line)
        if match is None:
            strays.append((index + 1, line))
        else:
            found.append(Banner(index + 1, match.group("number"), match.group("title")))
    return found, strays


def toc_problems(source):
    """Where the numbered banners of a node differ from the one table of contents ([] when none)."""
    lines = source.splitlines()
    found, strays = banners(lines)
    problems = ["line %d: %r looks like a table-of-contents entry but is no banner" % (line, text[:60])
                for line, text in strays]
    for banner in found:
        text = lines[banner.line - 1]
        if len(text) != BANNER_WIDTH and not text.endswith(" ==="):
            problems.append("line %d: banner is %d characters wide, not %d" % (banner.line, len(text), BANNER_WIDTH))
    tops = [banner for banner in found if "." not in banner.number]
    titles = tuple(banner.title for banner in tops)
    if titles != TOP_LEVEL or [banner.number for banner in tops] != [str(n) for n in range(1, len(TOP_LEVEL) + 1)]:
        problems.append("top-level banners are %s, not %s" % (
            ", ".join("%s %s" % (b.number, b.title) for b in tops), ", ".join(
                "%d %s" % (n, t) for n, t in enumerate(TOP_LEVEL, 1))))
    previous = (0,)
    for banner in found:
        parts = banner.parts()
        if len(parts) == 1:
            expected = (previous[0] + 1,)
        elif len(previous) == 1:
            expected = (previous[0], 1)
        else:
            expected = (previous[0], previous[1] + 1)
        # 3.2 may come without 3.1 (a node whose hooks need no subsection of their own)
        if parts != expected and not (parts == (3, 2) and previous == (3,)):
            problems.append("line %d: banner %s follows %s (expected %s)" % (
                banner.line, banner.number, ".".join(map(str, previous)), ".".join(map(str, expected))))
        previous = parts
    protocol = dict((banner.parts()[1], banner.title) for banner in found
                    if len(banner.parts()) == 2 and banner.parts()[0] == 6)
    for number, topic in enumerate(PROTOCOL_TOPICS, 1):
        title = protocol.get(number)
        if title not in (topic, topic + NOT_USED):
            problems.append("banner 6.%d is %r, not %r (or %r)" % (number, title, topic, topic + NOT_USED))
    keep = [index + 1 for index, line in enumerate(lines) if line == KEEP_LINE]
    limits = [banner.line for banner in found if banner.number == "4"]
    if len(keep) != 1 or not limits or not _only_blank_between(lines, keep[0], limits[0]):
        problems.append("the KEEP line must appear once, directly above the banner 4 Limits")
    return problems


def _only_blank_between(lines, first, last):
    return first < last and all(not line.strip() for line in lines[first:last - 1])


def frame(lines, start, end):
    """{label: text} of the frame box in lines[start:end] (section 3), or None when there is none."""
    fields, label, inside = {}, None, False
    for line in lines[start:end]:
        if line.startswith(FRAME_OPEN):
            inside = True
            continue
        if not inside:
            if line.strip() and not line.startswith("#"):
                return None  # code before any box: section 3 has no frame
            continue
        if line.startswith(FRAME_CLOSE):
            return fields
        match = FRAME_FIELD_RE.match(line)
        if match and match.group("label") in FRAME_LABELS:
            label = match.group("label")
            fields[label] = match.group("rest")
        elif label is not None and line.startswith("# |"):
            fields[label] += " " + line[3:].strip()
    return None


def listed_names(text):
    """The identifiers a `Uses from below KEEP:` field names ("(none)" names none)."""
    text = re.sub(r"\(none\)", "", text)
    return set(IDENTIFIER_RE.findall(text))


def _bound_names(node):
    """Names bound inside a function or class body (parameters, targets, imports, nested definitions)."""
    bound = set()
    for child in ast.walk(node):
        if isinstance(child, ast.arg):
            bound.add(child.arg)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            bound.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child is not node:
            bound.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            bound.add(child.name)
    return bound


def _top_level_names(statement):
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    names = set()
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            names.update(node.id for node in ast.walk(target) if isinstance(node, ast.Name))
    elif isinstance(statement, (ast.Import, ast.ImportFrom)):
        names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
    return names


class Surface(object):
    """What section 3 of a node reads from below its KEEP line."""

    def __init__(self, has_keep, has_frame, listed, reached, late=None):
        self.has_keep = has_keep  # False: the file is no copy of a reference node (nothing to judge)
        self.has_frame = has_frame
        self.listed = listed  # names the frame lists
        self.reached = reached  # {name: first line in section 3 that reads it}
        self.late = late or {}  # {name: (first line in section 3 that reads it, the function that binds it)}

    def late_reads(self):
        """[(line, name, function)] read by section 3 but bound only once `function` has run, in line order."""
        return sorted((line, name, function) for name, (line, function) in self.late.items())

    def unlisted(self):
        """[(line, name)] read from below KEEP but not listed, in line order."""
        return sorted((line, name) for name, line in self.reached.items() if name not in self.listed)


def edit_surface(source):
    """A Surface for a node's source (str); raises SyntaxError when it does not parse."""
    lines = source.splitlines()
    keep = [index + 1 for index, line in enumerate(lines) if line == KEEP_LINE]
    found, _ = banners(lines)
    third = [banner.line for banner in found if banner.number == "3"]
    if len(keep) != 1 or not third or third[0] > keep[0]:
        return Surface(False, False, set(), {})
    start, end = third[0], keep[0]  # section 3: its banner to the KEEP line (1-based, exclusive)
    fields = frame(lines, start, end - 1)
    listed = listed_names(fields.get("Uses from below KEEP", "")) if fields else set()
    tree = ast.parse(source)
    above, below = set(), set()
    for statement in tree.body:
        (above if statement.lineno < end else below).update(_top_level_names(statement))
    below -= above  # a name defined above KEEP too is the copier's own
    late_bound = late_bindings(tree)
    reached, late = {}, {}
    for statement in tree.body:
        if not start <= statement.lineno < end:
            continue
        local = _bound_names(statement) if isinstance(
            statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else set()
        for node in ast.walk(statement):
            if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) or node.id in local:
                continue
            if node.id in below:
                reached.setdefault(node.id, node.lineno)
            elif node.id in late_bound:
                late.setdefault(node.id, (node.lineno, late_bound[node.id]))
    return Surface(True, fields is not None and all(label in fields for label in FRAME_LABELS), listed, reached,
                   late)


def late_bindings(tree):
    """{name: function} for every name a top-level function binds with `global` and no module-level
    statement binds: a module the machinery imports late (the session's worker_imports(), the
    crawler's job_imports()), unbound in a process that never ran that function, such as the
    probe child or the normaliser child that runs section 3."""
    module_level = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module_level.add(statement.name)
            continue
        for node in ast.walk(statement):  # an import or assignment inside a module-level if or try counts too
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                module_level.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                module_level.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    found = {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(statement):
                if isinstance(node, ast.Global):
                    for name in node.names:
                        if name not in module_level:
                            found.setdefault(name, statement.name)
    return found
