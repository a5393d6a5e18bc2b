"""Imports setproctitle (when installed) to name the worker in ps: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "        start_process()  # 6.1: wake pipes and stop handlers, before the first request (SCAN-STOP-1)\n"
    "        outcome = lifecycle(config)\n",
    "        start_process()  # 6.1: wake pipes and stop handlers, before the first request (SCAN-STOP-1)\n"
    "        try:\n"
    "            import setproctitle  # a readable name in ps, where the module is installed\n"
    "            setproctitle.setproctitle(PROGRAM)\n"
    "        except ImportError:\n"
    "            pass\n"
    "        outcome = lifecycle(config)\n",
)]
KILLS = ["node.stdlib"]
