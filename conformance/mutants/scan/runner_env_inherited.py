"""The runner inherits the worker's whole environment (HOME, the XDG trees, proxy variables, PYTHONPATH) instead of SSL_CERT_FILE and TMPDIR alone."""
NODE = "nodes/scan_worker.py"
REPLACE = [('env=child_environment())', 'env=None)')]
KILLS = ["runner.spawn"]
