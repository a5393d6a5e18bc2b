"""The benches: `python3 -m conformance.bench [CONTRACT] [OPTIONS]` (CONTRACT: step by default).

    core.py      what every bench shares: running a node through its plane and measuring it,
                 repetitions and medians, stop-latency trials, tables, the command line, --json
    CONTRACT.py  one module per contract, defining `Bench` (a core.ContractBench), found by its
                 name: step.py (make bench: the step node beside a naive node, its floor, the
                 store and sha256 alone) and crawler.py (make bench-crawler: peak RSS against
                 source size, stop latency)
    floor.py     the step bench's floor program (run by path; standard library only)

See core.py's docstring.
"""
