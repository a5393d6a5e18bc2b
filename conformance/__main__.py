"""python3 -m conformance CONTRACT NODE [options]: see conformance/cli.py."""

import sys

# Refused before anything else is imported: the harness is written for 3.9 and
# newer, and an older interpreter would fail half way through a run instead.
if sys.version_info < (3, 9):
    sys.stderr.write("conformance: Python 3.9 or newer is needed; %s is %d.%d\n"
                     % (sys.executable or "this interpreter", sys.version_info[0], sys.version_info[1]))
    sys.exit(2)

from conformance.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
