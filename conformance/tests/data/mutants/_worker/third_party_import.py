"""Imports a third-party module in a code path the tests never reach."""
NODE = "conformance/tests/data/toy_worker.py"
REPLACE = [("def main(argv=None):\n", "def _unused():\n    import requests  # noqa\n\n\ndef main(argv=None):\n")]
KILLS = ["node.stdlib"]
