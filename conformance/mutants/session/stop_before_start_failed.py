"""A stop that cuts the entry or attempt:start is taken for a transport failure: the run ends failed, exit 1."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    "            except StopRequested:\n"
    "                self.decide(terminal=SERVICE_STOPPED)  # SESSION-STOP-7: before the start was answered\n",
    "            except StopRequested:\n"
    "                self.decide(failure=CONTROL_PLANE_UNREACHABLE)  # SESSION-STOP-7: before the start was answered\n",
)]
KILLS = ["stop.before-start"]
