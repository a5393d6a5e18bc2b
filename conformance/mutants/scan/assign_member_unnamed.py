"""An incompatible assignment is reported with a generic diagnostic code that does not name the member that failed."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '                self, "assigned", "worker_contract_invalid." + exc.member, "PROTOCOL", exc))',
    '                self, "assigned", "client_process_failed", "PROTOCOL", exc))',
)]
KILLS = ["assign.incompatible"]
