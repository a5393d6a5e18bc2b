"""The clash counter goes before the last dot of the whole path, so outputs/my.port/file becomes outputs/my-2.port/file."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    head, slash, last = path.rpartition(\"/\")\n"
    "    stem, dot, extension = last.rpartition(\".\")\n"
    "    last = \"%s-%d.%s\" % (stem, n, extension) if dot else \"%s-%d\" % (last, n)\n"
    "    return head + slash + last\n",
    "    stem, dot, extension = path.rpartition(\".\")\n"
    "    return \"%s-%d.%s\" % (stem, n, extension) if dot else \"%s-%d\" % (path, n)\n",
)]
KILLS = ["work.name-clash"]
