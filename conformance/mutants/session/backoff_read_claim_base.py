"""A failed acquisition read is retried on the claim interval's schedule instead of ACQUISITION_POLL_S's."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '                    self.acquisition_wait(backoff_delay(failures, ACQUISITION_POLL_S, refused.retry_after_s),\n',
    '                    self.acquisition_wait(backoff_delay(failures, self.interval, refused.retry_after_s),\n',
)]
KILLS = ["backoff.read-base"]
