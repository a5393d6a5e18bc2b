"""Object names are never validated: '..', absolute, empty-component, backslash and control-character names are uploaded."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    # STEP-OUTPUT-2: the collector refuses a whole marker for one bad relpath\n    if not isinstance(relpath, str) or not relpath:\n",
    "    return\n"
    "    # STEP-OUTPUT-2: the collector refuses a whole marker for one bad relpath\n    if not isinstance(relpath, str) or not relpath:\n",
)]
KILLS = ["output.bad-relpath.dotdot", "output.bad-relpath.absolute", "output.bad-relpath.empty-component",
         "output.bad-relpath.backslash", "output.bad-relpath.control"]
