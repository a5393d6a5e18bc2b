"""A runner the slot cannot prove gone is treated as an ordinary failed step: the slot retries after the error delay, forever, instead of ending the worker."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                kind, delay = self.step()\n'
    '                self.failures = 0\n'
    '            except (StopRequested, ContainmentPending):\n'
    '                raise\n',
    '                kind, delay = self.step()\n'
    '                self.failures = 0\n'
    '            except StopRequested:\n'
    '                raise\n',
)]
KILLS = ["slot.died"]
