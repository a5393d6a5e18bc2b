"""Reads the configuration before looking at the command line (fail fast on a misdeployed job), so --help needs STUDIO_API_ORIGIN."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    '    if tokens in (["--help"], ["-h"]):  # SESSION-NODE-2: nothing read, nothing sent\n',
    '    if not os.environ.get("STUDIO_API_ORIGIN"):  # fail fast when the job is not deployed right\n'
    '        say("%s: STUDIO_API_ORIGIN is required" % SESSION_WORKER_CONFIG_INVALID)\n'
    '        return EXIT_FAILED\n'
    '    if tokens in (["--help"], ["-h"]):  # SESSION-NODE-2: nothing read, nothing sent\n',
)]
KILLS = ["node.help"]
