"""The benches: `python3 -m conformance.bench [CONTRACT] [OPTIONS]` (CONTRACT: step by default).

    core.py      what every bench shares: running a node through its plane and measuring it,
                 repetitions and medians, stop-latency trials, tables, the command line, --json
    CONTRACT.py  one module per contract, defining `Bench` (a core.ContractBench), found by its
                 name: step.py (make bench: the step node beside a naive node, its floor, the
                 store and sha256 alone), crawler.py (make bench-crawler: peak RSS against
                 source size, stop latency), session.py (make bench-session: probe latency, idle
                 CPU, RSS over many probes, heartbeat, stop latency) and scan.py (make bench-scan:
                 throughput per slots, idle CPU, RSS uploading up to 1 GiB, restart and stop latency)
    floor.py     the step bench's floor program (run by path; standard library only)

See core.py's docstring.
"""
