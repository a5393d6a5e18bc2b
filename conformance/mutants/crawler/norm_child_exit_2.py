"""In child mode a refused source exits 2 (the usage-error habit) instead of 1."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        # CRAWLER-CHILD-8: the one line the node admits; anything else becomes CHILD_FAILED\n'
    '        write_all(2, status_line(code))\n'
    '        return EXIT_FAILED\n',
    '        # CRAWLER-CHILD-8: the one line the node admits; anything else becomes CHILD_FAILED\n'
    '        write_all(2, status_line(code))\n'
    '        return EXIT_USAGE\n',
)]
KILLS = ["norm.child-protocol", "child.own-mode"]
