"""python3 -m conformance CONTRACT NODE [options]: see conformance/cli.py."""

import sys

from conformance.cli import main

if __name__ == "__main__":
    sys.exit(main())
