"""A completed terminal is adopted without checking that it names this generation and input digest."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        if terminal["generation"] != runner["generation"] or terminal["input_sha256"] != runner["input_sha256"]:',
            '        if False:')]
KILLS = ["runner.adopt-bound"]
