"""The start gate is checked for the generation and input digest only, not for the runner's own pid and identity."""
NODE = "nodes/scan_worker.py"
REPLACE = [('                    and gate["identity"]["pid"] == os.getpid()', '                    and True'),
           ('                    and (me is None or gate["identity"] == me))', '                    and True)')]
KILLS = ["runner.start-gate"]
