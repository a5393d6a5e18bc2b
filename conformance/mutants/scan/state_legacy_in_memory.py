"""A legacy state is migrated in memory only: the file stays schema-less until some later save."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    '            self.save(migrated)  # SCAN-STATE-7: the migration is persisted on its first load\n',
    '',
)]
KILLS = ["state.legacy-migrated"]
