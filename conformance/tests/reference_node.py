"""A reference node imported as a module, for the unit tests of its parts.

Importing a node does nothing (NODE-3 in every contract): no thread, no handler, no file. Each
caller gets a module of its own (its `tag` names it), so a test that patches one never changes
another's. No bytecode is written beside the node: nodes/ holds exactly the files a user copies.
"""

import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def node_path(name):
    """nodes/<name>.py."""
    return os.path.join(ROOT, "nodes", name + ".py")


def load_node(name, tag, worker_imports=False):
    """nodes/<name>.py as the module `<name>_<tag>_under_test`; worker_imports: call the session
    worker's worker_imports() first, as main() has before the worker's own paths run."""
    spec = importlib.util.spec_from_file_location("%s_%s_under_test" % (name, tag), node_path(name))
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    if worker_imports:
        module.worker_imports()
    return module
