"""Reads its configuration before parsing arguments, so --help needs the environment."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [("    parser.parse_args(argv)\n", "    os.environ[\"TOY_PLANE_URL\"]\n    parser.parse_args(argv)\n")]
KILLS = ["node.help"]
