"""The parser is built without its --help option, so --help is a usage error."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '    parser = _Parser(prog=PROGRAM, allow_abbrev=False,',
    '    parser = _Parser(prog=PROGRAM, allow_abbrev=False, add_help=False,',
)]
KILLS = ["argv.help"]
