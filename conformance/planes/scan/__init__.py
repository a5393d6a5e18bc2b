"""The scan plane: a fake scan server for one scan worker's lives (contract/scan.md).

    plane = ctx.plane()                                      # ScanPlane: token file, trees, fakes
    target = plane.add_target("a.txt", b"one\\ntwo\\n")        # a pin {name, size, sha256, url}
    res = plane.add_assignment(targets=[target])             # queued: the next new claim gets it
    life = plane.start(parallelism=1)                        # a Lifecycle's first life (argv() options)
    plane.wait_ready()                                       # "worker: started with 1 slots"
    plane.wait_resolved(res)                                 # the bundle was accepted (or a report)
    ctx.expect(plane.bundle_problems(res) == [], ...)        # SCAN-BUNDLE-1..4
    plane.stop()                                             # SIGTERM: a drain; the RunResult

Crash points are the lifecycle's triggers, named by verb:

    life = plane.start(kill_at=plane.held("bundle", processed=True))   # the upload accepted, answer lost
    life.wait(PHASE_TIMEOUT_S)
    plane.restart()                                                    # same trees, same argv
    plane.start(kill_at=plane.when_phase(0, "bundle_ready"))

The modules, one part each (the plane composes them; the server is composed the same way):

    plane.py         ScanPlane: the fakes and the parts below composed, the environment and argv,
                     waits, crash points, invariants() after every check; the parts' methods the
                     checks call are the plane's too
                     plane.tripwire a LoopbackServer every proxy variable names: any connection
                                    breaks SCAN-CONFIG-5
    tokens.py        plane.tokens   TokenFile: the token file, its rotations, which token the server
                                    accepts now (token, rotate_token, write_token_file, new_token)
    trees.py         plane.trees    Trees: slot files read and planted, the journal, listings
    targets.py       plane.targets  Targets: the targets in plane.store (an ObjectStore, HTTPS) behind
                                    pre-signed GETs (add_target, target_match, key)
    worker.py        plane.worker   Worker: every Lifecycle, a Watch on each life (start, restart,
                                    life, lifecycles, watch_of)
    server.py        plane.server   ScanServer: the handler; claim (request-id dedupe, 201/200/204),
                                    status, progress, terminal; every request as a ScanCall; route
                                    matches for faults (claim_match, status_match, progress_match,
                                    terminal_match, bundle_match), error_answer(), set_no_work()
    reservations.py  server.book    Reservation, Reservations: the queue, the grants, the resolutions
                                    (add_reservation, grant, resolve, set_status, granted)
    scripts.py       server.scripts Script, Scripts: script() and script_claim_answer()
    upload.py        server.uploads Uploads: the bundle route, streamed to disk, digest-checked, kept
    calls.py         ScanCall and the form problems it records (claim_problems, build_values, ...)
    protocol.py      the routes, canonical JSON and the strict parser, instants, the error shape,
                     dialects (area PEER), patches (DELETE, KEEP), token pieces
    bundles.py       bundle_problems, read_bundle, build_bundle: SCAN-BUNDLE-1..4 on a bundle's bytes
    verdict.py       safe lines, slot-file problems, token hits, the server's own invariants, and
                     PlaneVerdict: everything invariants() judges

Faults enter one way, ``add_fault(fault, match)`` with a route helper:

    plane.server.add_fault(faults.status(503), plane.server.claim_match(first=1))
    plane.server.add_fault(plane.server.error_answer(409, "bundle_conflict"), plane.server.bundle_match(first=1))
    plane.store.add_fault(faults.reset(after_bytes=10), plane.target_match(target))

Options (``ctx.plane(**options)``): ScanServer.OPTIONS (retry_after, no_work_reason,
progress_stale_when_resolved, first_reservation_id, dialect, upload_status) and the plane's own:
proxies, token, token_grace_s, extra_env, drop_env, untrusted.

Peer variety (area PEER): ``dialect=("members", "floats", ...)`` rewrites every JSON answer as a
real server may write it (protocol.DIALECTS: members nobody defined, floats, numbers as text,
instants in other zones or none, indented JSON); ``upload_status=201`` accepts uploads with 201;
``plane.server.uploads.pace = (slow_bytes, bytes_per_s)`` reads uploads as a slow link would.
An assignment names the claiming worker's first capability unless a check gives one, and the
deployment constants in force (--deploy, D30) are read from ``deploy`` at call time.
"""

from conformance.planes.scan.bundles import (BundleReport, build_bundle, bundle_problems, expectation,
                                             read_bundle)
from conformance.planes.scan.plane import PHASE_TIMEOUT_S, READY_PREFIX, RUN_TIMEOUT_S, ScanPlane
from conformance.planes.scan.calls import ScanCall
from conformance.planes.scan.protocol import DELETE, KEEP, canonical, error_answer, instant, parse_strict
from conformance.planes.scan.reservations import Reservation
from conformance.planes.scan.server import ScanServer
from conformance.planes.scan.verdict import SAFE_LINE, slot_file_problems, unsafe_lines

__all__ = ["ScanPlane", "Plane", "make_plane", "ScanServer", "Reservation", "ScanCall", "error_answer", "canonical",
           "parse_strict", "instant", "DELETE", "KEEP", "PHASE_TIMEOUT_S", "RUN_TIMEOUT_S", "READY_PREFIX",
           "bundle_problems", "read_bundle", "build_bundle", "expectation", "BundleReport", "SAFE_LINE",
           "unsafe_lines", "slot_file_problems"]


def make_plane(ctx, *args, **kwargs):
    return ScanPlane(ctx, *args, **kwargs)


Plane = ScanPlane
