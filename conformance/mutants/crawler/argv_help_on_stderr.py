"""--help prints the usage text to stderr, like every other message of the node, instead of stdout."""
NODE = "nodes/crawler_job.py"
REPLACE = [(
    '        write_all(1, USAGE.encode("ascii"))  # CRAWLER-NODE-2: no environment, no file, no request\n',
    '        write_all(2, USAGE.encode("ascii"))  # messages go to stderr; stdout stays clean\n',
)]
KILLS = ["argv.help", "node.help"]
