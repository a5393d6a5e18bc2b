"""A timed-out scan is reported as client_process_failed instead of starting a timeout_bundle generation."""
NODE = "nodes/scan_worker.py"
REPLACE = [('            return self.new_generation(state, OPERATION_TIMEOUT, 1, window, phase)',
            '            self.save(state)\n            raise RunnerProtocolError(detail="the scan timed out")')]
KILLS = ["runner.watchdog"]
