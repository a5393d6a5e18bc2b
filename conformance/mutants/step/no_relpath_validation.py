"""Object names are never validated: '..', absolute, empty-component, backslash and control-character names are uploaded."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if not isinstance(relpath, str) or not relpath:  # STEP-OUTPUT-2\n",
    "    return\n"
    "    if not isinstance(relpath, str) or not relpath:  # STEP-OUTPUT-2\n",
)]
KILLS = ["output.bad-relpath.dotdot", "output.bad-relpath.absolute", "output.bad-relpath.empty-component",
         "output.bad-relpath.backslash", "output.bad-relpath.control"]
