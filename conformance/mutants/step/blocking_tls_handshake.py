"""The TLS handshake is done by a blocking wrap_socket(), on a socket taken off the stop ledger until it is done."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "            tls = ssl_context.wrap_socket(sock, server_hostname=target.host,\n"
    "                                          do_handshake_on_connect=False, session=tls_session)\n"
    "        except BaseException:\n"
    "            sock.close()\n"
    "            raise\n"
    "        stop.track(tls)\n"
    "        try:\n"
    "            _handshake(tls, stop, deadline)\n"
    "        except BaseException as exc:\n"
    "            stop.untrack(tls)\n"
    "            tls.close()\n"
    "            if isinstance(exc, OSError):\n"
    "                stop.check(\"the TLS handshake\")  # the error a stop's shutdown leaves is the stop's\n"
    "            raise\n",
    "            sock.settimeout(max(0.001, deadline.remaining()))\n"
    "            tls = ssl_context.wrap_socket(sock, server_hostname=target.host, session=tls_session)  # handshakes\n"
    "        except BaseException:\n"
    "            sock.close()\n"
    "            raise\n"
    "        tls.setblocking(False)\n"
    "        stop.track(tls)\n",
)]
KILLS = ["stop.tls-handshake"]
