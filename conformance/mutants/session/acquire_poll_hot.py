"""A pending acquisition is read again after 100 ms rather than ACQUISITION_POLL_S, hammering the control plane."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '            self.acquisition_wait(ACQUISITION_POLL_S, ceiling)  # not yet\n',
    '            self.acquisition_wait(0.1, ceiling)  # not yet\n',
)]
KILLS = ["acquire.polling"]
