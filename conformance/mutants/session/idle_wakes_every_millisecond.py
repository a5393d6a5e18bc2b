"""Every wait wakes each millisecond to look at the clocks and the stop flag, instead of sleeping in the kernel until it is due."""
NODE = "nodes/session_worker.py"
REPLACE = [(
    'WALL_CLOCK_RECHECK_S = 1.0  # a long wait wakes this often to see a wall clock stepped forward (DEADLINE-1)\n',
    'WALL_CLOCK_RECHECK_S = 0.001  # a long wait wakes this often to see a wall clock stepped forward (DEADLINE-1)\n',
)]
KILLS = ["idle.cpu"]
