"""The runner's stdout is the worker's own (stdout=None), so whatever a runner prints would reach the worker's output."""
NODE = "nodes/scan_worker.py"
REPLACE = [('process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,',
            'process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=None,')]
KILLS = ["runner.spawn"]
