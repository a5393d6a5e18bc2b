"""On restart a recorded runner is assumed gone: it is fenced on disk but never killed, and keeps running beside the retry."""
NODE = "nodes/scan_worker.py"
REPLACE = [('            if stop_exact_identity(identity["payload"], RUNNER_STOP_TIMEOUT_S) != "dead":',
            '            if False:')]
KILLS = ["runner.fence-leftover"]
