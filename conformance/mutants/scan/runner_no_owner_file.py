"""owner.json is never written: the root does not say whose runner it is once the identity is recorded."""
NODE = "nodes/scan_worker.py"
REPLACE = [('        write_owner(paths, runner["generation"], runner["input_sha256"], identity)',
            '        pass  # owner.json is skipped')]
KILLS = ["runner.identity"]
