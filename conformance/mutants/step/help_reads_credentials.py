"""Loads the credentials at the top of main(), before looking at --help, so --help needs a working environment."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    args = sys.argv[1:] if argv is None else list(argv)\n"
    "    if args in ([\"-h\"], [\"--help\"]):",
    "    args = sys.argv[1:] if argv is None else list(argv)\n"
    "    config = load_config(os.environ)\n"
    "    try:\n"
    "        Credentials(config.credentials_path, config.credentials_variable).get()\n"
    "    except StepFailure as exc:\n"
    "        say(\"could not start: %s\" % exc.message)\n"
    "        return exc.exit_code\n"
    "    if args in ([\"-h\"], [\"--help\"]):",
)]
KILLS = ["node.help", "creds.precedence"]
