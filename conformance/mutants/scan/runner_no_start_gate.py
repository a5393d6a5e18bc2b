"""The runner starts working at once, without waiting for start.json: a runner whose worker died before recording its identity works unsupervised."""
NODE = "nodes/scan_worker.py"
REPLACE = [('            if not wait_gate(paths, runner_input, input_sha256, stop, deadline):',
            '            if False:')]
KILLS = ["runner.start-gate"]
