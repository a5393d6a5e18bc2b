"""Reads its configuration before parsing arguments, so --help needs the environment."""
NODE = "conformance/tests/data/toy_node.py"
REPLACE = [("    parser.parse_args(argv)\n", "    os.environ[\"TOY_NAME\"]\n    parser.parse_args(argv)\n")]
KILLS = ["node.help"]
