"""--help prints its usage text on stderr, where a person piping the output does not get it."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '        write_all(1, USAGE.encode("ascii"))\n',
    '        write_all(2, USAGE.encode("ascii"))\n',
)]
KILLS = ["argv.help"]
