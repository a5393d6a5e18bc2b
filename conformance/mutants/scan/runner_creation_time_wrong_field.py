"""The identity's creation_time is read from field 21 of /proc/<pid>/stat (itrealvalue, always 0) instead of field 22 (starttime): every process looks alike."""
NODE = "nodes/scan_worker.py"
REPLACE = [('    return fields[0], fields[19]  # field 3 (state) and field 22',
            '    return fields[0], fields[18]  # field 3 (state) and field 22')]
KILLS = ["runner.identity"]
