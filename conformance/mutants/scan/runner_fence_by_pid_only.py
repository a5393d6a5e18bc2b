"""A recorded runner is judged alive by its pid alone: the start time and executable are not compared, so a recycled pid (someone else's process) is killed."""
NODE = "nodes/scan_worker.py"
REPLACE = [('    if starttime != identity["creation_time"]:', '    if False:'),
           ('    if executable != identity["executable"]:', '    if False:')]
KILLS = ["runner.fence-exact"]
