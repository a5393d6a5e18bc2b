"""Loads the credentials at the top of main(), before looking at --help, so --help needs a working environment."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    if tokens in ([\"-h\"], [\"--help\"]):\n",
    "    config = load_config(environ)\n"
    "    try:\n"
    "        Credentials(config.credentials_path, config.credentials_variable).get()\n"
    "    except StepFailure as exc:\n"
    "        raise UsageError(exc.message, exc.outcome) from None\n"
    "    if tokens in ([\"-h\"], [\"--help\"]):\n",
)]
KILLS = ["node.help", "creds.precedence"]
