"""python3 -m conformance.bench [CONTRACT] [OPTIONS]: run one contract's bench (see core.py)."""

import sys

from conformance.bench.core import dispatch

sys.exit(dispatch())
