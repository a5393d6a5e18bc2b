"""Every Python file of the project parses as Python 3.9 and imports only the
standard library (or the project's own packages).

The machine runs a newer Python, so this is what keeps `match`, `X | Y` in
annotations evaluated at run time, parenthesised context managers and
third-party imports out of nodes, harness, examples and tests alike. The same
judge the harness applies to a user's node (conformance.static) is applied here.
"""

import ast
import os
import unittest

from conformance import static

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROJECT_PACKAGES = {"conformance", "nodes"}


def python_files():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.join(top, name)


class GrammarTest(unittest.TestCase):
    def test_every_file_parses_as_python_3_9(self):
        for path in python_files():
            with self.subTest(path=os.path.relpath(path, ROOT)):
                with open(path, encoding="utf-8") as handle:
                    ast.parse(handle.read(), filename=path, feature_version=(3, 9))

    def test_every_import_is_standard_library_or_the_project(self):
        for path in python_files():
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
            for line, top, _how in static.imported_modules(tree):
                if top in PROJECT_PACKAGES or top == "__main__":
                    continue
                with self.subTest(path=os.path.relpath(path, ROOT), line=line, module=top):
                    self.assertIn(top, static.STDLIB_MODULES)


if __name__ == "__main__":
    unittest.main()
