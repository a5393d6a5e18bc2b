"""Imports setproctitle (when installed) to name the worker in ps: a third-party module in a node that must run on a bare Python."""
NODE = "nodes/scan_worker.py"
REPLACE = [(
    "        return EXIT_USAGE\n"
    "    install_handlers()  # SCAN-STOP-1: before the first file and the first request\n",
    "        return EXIT_USAGE\n"
    "    install_handlers()  # SCAN-STOP-1: before the first file and the first request\n"
    "    try:\n"
    "        import setproctitle  # a readable name in ps, where the module is installed\n"
    "        setproctitle.setproctitle(PROGRAM)\n"
    "    except ImportError:\n"
    "        pass\n",
)]
KILLS = ["node.stdlib"]
