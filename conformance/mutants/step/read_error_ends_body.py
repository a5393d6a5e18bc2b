"""An error while reading an input body is taken as its end, so a reset reads as a short (permanent) input."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "                try:\n"
    "                    return source.readinto(view)\n"
    "                except Exception as exc:  # a reset, a timeout, a disk error: transient, or the stop's\n"
    "                    raise network_failure(reading, exc) from None\n",
    "                try:\n"
    "                    return source.readinto(view)\n"
    "                except Exception:\n"
    "                    return 0  # the connection ended: that is the end of the body\n",
)]
KILLS = ["http.reset-get"]
