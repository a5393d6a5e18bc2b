"""Tests of the scan contract's own content: the tables and examples only contract/scan.md has.

The rules every contract document keeps (clause headings and IDs, Decisions, the audit,
schemas, copies and examples) are conformance/tests/test_contracts.py's. Here, what is the
scan's own:

- the lists and tables of the prose (phases, statuses, reasons, the slot-state phase table,
  the limits, the exit statuses, the waits) equal what the schemas say, and the limits table
  agrees with the prose where a value is repeated;
- D30's deployment constants are the reference node's;
- valid examples are real documents: the worker's own hold no fraction, the server's show
  the upstream's variety, and digests and identities agree where clauses bind them (the
  schema of an example is the longest schema name its file name starts with, followed by
  ``-``).

Run: python3 -m unittest conformance.tests.test_contract_scan -v
"""

import hashlib
import json
import os
import re
import unittest

from conformance.tests.contract_text import ContractText, table_rows

DOC = ContractText("scan")
DECISION_HEADING = re.compile(r"^### (D[0-9]+) \S")
KIB, MIB = 1024, 1024 * 1024

# The documents the scan server writes: read as the upstream reads them (D24 to D26), so their
# examples may hold floats, digit strings and members nobody defined.
SERVER_DOCUMENTS = frozenset(["assignment", "status", "claim-resolution", "progress-ack", "error"])
NODE_PATH = os.path.join(os.path.dirname(DOC.path), os.pardir, "nodes", "scan_worker.py")


def _schema_names():
    folder = DOC.schema_dir
    return sorted(f[:-len(".schema.json")] for f in os.listdir(folder) if f.endswith(".schema.json"))


def _schema_of(filename, names):
    """The longest schema name `filename` starts with, followed by '-' (None if none)."""
    for name in sorted(names, key=len, reverse=True):
        if filename.startswith(name + "-"):
            return name
    return None


def _canonical(value):
    return json.dumps(value, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode("ascii")


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def _valid(name):
    return DOC.example("valid", name + ".json")


def _number(text):
    text = text.strip().strip("`")
    return float(text) if "." in text else int(text)


def _limits():
    """The 'Limits and constants' table: {name: number}, rows without a number left out."""
    limits = {}
    for row in table_rows(DOC.section("## Limits and constants"))[1:]:
        names = re.findall(r"`([A-Z0-9_]+)`", row[0])
        values = [part.split()[0] for part in row[1].split(",") if part.strip()]
        if len(names) != len(values) or not all(re.match(r"^[0-9.]+$", v) for v in values):
            continue
        for name, value in zip(names, values):
            limits[name] = _number(value)
    return limits


def _listed(text, member):
    """The backticked words in the parentheses that follow `member` in text."""
    match = re.search(r"`%s`\s+\(([^)]*)\)" % re.escape(member), text)
    if match is None:
        raise AssertionError("no list after `%s`" % member)
    return re.findall(r"`([^`]+)`", match.group(1))


class SchemasTest(unittest.TestCase):

    def test_slot_state_branches_are_the_phase_table(self):
        table = {}
        for row in table_rows(DOC.section("### SCAN-STATE-3 "))[1:]:
            phase = row[0].strip("`")
            required = [w for w in re.findall(r"`([a-z_]+)`", row[1]) if w != "assigned"]
            if "the `assigned` members" in row[1]:
                required = table["assigned"][0] + required
            optional = re.findall(r"`([a-z_]+)`", row[2])
            table[phase] = (required, optional)
        branches = {}
        for branch in DOC.schema("slot-state")["oneOf"]:
            phase = branch["properties"]["phase"]["const"]
            branches[phase] = (sorted(branch["required"]),
                               sorted(set(branch["properties"]) - set(branch["required"])))
            self.assertIs(branch["additionalProperties"], False)
        self.assertEqual(branches, {p: (sorted(r), sorted(o)) for p, (r, o) in table.items()})

    def test_enumerations_equal_the_prose(self):
        runner = DOC.section("## The runner")
        progress_1 = DOC.section("### SCAN-PROGRESS-1 ")
        diagnostic = DOC.schema("diagnostic")["properties"]
        record = DOC.schema("slot-state")["$defs"]["state_runner"]["anyOf"][1]["properties"]
        pairs = [
            ("progress event phase", _listed(progress_1, "phase"),
             DOC.schema("progress-event")["properties"]["phase"]["enum"]),
            ("diagnostic phase", _listed(progress_1, "phase"), diagnostic["phase"]["enum"]),
            ("runner event phase", _listed(runner, "phase"), DOC.schema("runner-event")["properties"]["phase"]["enum"]),
            ("runner terminal decision", _listed(runner, "decision"),
             DOC.schema("runner-terminal")["properties"]["decision"]["enum"]),
            ("runner terminal reason", _listed(runner, "reason"),
             DOC.schema("runner-terminal")["properties"]["reason"]["enum"]),
            ("runner record status", _listed(DOC.section("### SCAN-RUNNER-2 "), "status"), record["status"]["enum"]),
            ("runner record operation", _listed(DOC.section("### SCAN-RUNNER-2 "), "operation"),
             record["operation"]["enum"]),
            ("diagnostic kind", _listed(DOC.section("### SCAN-TERMINAL-2 "), "kind"), diagnostic["kind"]["enum"]),
            ("diagnostic category", _listed(DOC.section("### SCAN-TERMINAL-2 "), "category"),
             diagnostic["category"]["enum"]),
            ("bundle header status", _listed(DOC.section("### SCAN-BUNDLE-1 "), "status"),
             DOC.schema("bundle-header")["properties"]["status"]["enum"]),
        ]
        claim_5 = DOC.section("### SCAN-CLAIM-5 ")
        resolutions = re.search(r"`resolution` one of (`[a-z_]+`,\s+`[a-z_]+`,\s+`[a-z_]+`)", claim_5).group(1)
        pairs.append(("claim resolution", re.findall(r"`([a-z_]+)`", resolutions),
                      DOC.schema("claim-resolution")["properties"]["resolution"]["properties"]["resolution"]["enum"]))
        terminal_1 = DOC.section("### SCAN-TERMINAL-1 ")
        pairs.append(("failure codes", re.findall(r"`(client_[a-z_]+_failed)`", terminal_1),
                      DOC.schema("terminal-report")["properties"]["failure_code"]["enum"]))
        for label, prose, schema in pairs:
            with self.subTest(list=label):
                self.assertTrue(prose)
                self.assertEqual(sorted(set(prose)), sorted(schema))
        code = diagnostic["code"]["pattern"]
        for word in _listed(DOC.section("### SCAN-TERMINAL-2 "), "code"):
            with self.subTest(diagnostic_code=word):
                self.assertRegex(word.replace("<member>", "targets"), code)

    def test_limits_agree_with_the_schemas(self):
        limits = _limits()
        assignment = DOC.schema("assignment")["properties"]["assignment"]
        state = DOC.schema("slot-state")["$defs"]
        report = DOC.schema("terminal-report")
        diagnostic = DOC.schema("diagnostic")
        pairs = [
            ("MAX_TARGETS", assignment["properties"]["targets"]["maxItems"]),
            ("MAX_TARGETS", DOC.schema("runner-input")["properties"]["targets"]["maxItems"]),
            ("MAX_TARGET_BYTES",
             DOC.schema("assignment")["$defs"]["server_target"]["properties"]["size"]["anyOf"][0]["maximum"]),
            ("MAX_TARGET_BYTES", DOC.schema("runner-input")["$defs"]["target"]["properties"]["size"]["maximum"]),
            ("MAX_DIAGNOSTICS", report["properties"]["diagnostics"]["maxItems"]),
            ("MAX_DETAIL_CHARS", report["properties"]["detail"]["maxLength"]),
            ("MAX_DIAGNOSTIC_SUMMARY_BYTES", diagnostic["properties"]["summary"]["maxLength"]),
            ("MAX_DIAGNOSTIC_BODY_BYTES", diagnostic["$defs"]["material"]["properties"]["text"]["maxLength"]),
            ("MAX_RETAINED_WORK", state["state_retained_work"]["maxItems"]),
            ("MAX_SLOT_ID", diagnostic["$defs"]["slot_id"]["maximum"]),
            ("MAX_JSON_INTEGER", diagnostic["$defs"]["reservation_id"]["maximum"]),
            ("RUNNER_MAX_ATTEMPTS", DOC.schema("runner-input")["properties"]["attempt"]["maximum"]),
            ("MAX_RETRY_AFTER_S",
             DOC.schema("progress-event")["properties"]["progress"]["properties"]["retry_after_seconds"]["maximum"]),
        ]
        for name, value in pairs:
            with self.subTest(limit=name):
                self.assertEqual(limits[name], value)
        self.assertEqual(limits["MAX_JSON_INTEGER"], 2 ** 53 - 1)

    def test_limits_agree_with_the_prose(self):
        limits = _limits()
        # The values the prose repeats in other words.
        self.assertEqual(limits["TERMINAL_REPORT_MAX_BYTES"], 16384)
        self.assertIn("### SCAN-TERMINAL-3 (MUST) At most 16 KiB", DOC.lines())
        self.assertEqual(limits["TERMINAL_REPORT_MAX_BYTES"], 16 * KIB)
        self.assertEqual(limits["MAX_API_RESPONSE_BYTES"], 1048576)
        self.assertIn("### D15 Answers are bounded at 1 MiB", DOC.lines())
        self.assertEqual(limits["MAX_API_RESPONSE_BYTES"], 1 * MIB)
        self.assertEqual(limits["UPLOAD_CHUNK_BYTES"], 1 * MIB)
        # D15: every answer the worker keeps must fit a state file.
        self.assertLessEqual(limits["MAX_API_RESPONSE_BYTES"], limits["MAX_PENDING_BYTES"])
        self.assertEqual((limits["MIN_PARALLELISM"], limits["MAX_PARALLELISM"]), (1, 128))
        self.assertIn("### SCAN-ARGV-3 (MUST) Parallelism within 1..128", DOC.lines())
        argv_3 = DOC.section("### SCAN-ARGV-3 ")
        self.assertIn("0 and %d exit" % (limits["MAX_PARALLELISM"] + 1), argv_3)
        self.assertIn("that %d starts" % limits["MAX_PARALLELISM"], argv_3)
        self.assertEqual(limits["PROGRESS_BATCH"], 128)
        self.assertEqual((limits["MIN_RETRY_AFTER_S"], limits["MAX_RETRY_AFTER_S"]), (1, 300))
        time_section = DOC.section("## Time in checks")
        self.assertIn("(`Retry-After`\n%d..%d)" % (limits["MIN_RETRY_AFTER_S"], limits["MAX_RETRY_AFTER_S"]),
                      time_section)
        no_work = [row for row in table_rows(time_section) if row[0] == "no-work wait"]
        self.assertEqual(no_work[0][3], "%d..%d s" % (limits["MIN_RETRY_AFTER_S"], limits["MAX_RETRY_AFTER_S"]))
        self.assertEqual(limits["MAX_TARGET_BYTES"], 4 * KIB * MIB)
        self.assertEqual(limits["MAX_BUNDLE_LINE_BYTES"], 64 * KIB)

    def test_the_waits_of_time_in_checks_agree_with_the_limits(self):
        limits = _limits()
        text = DOC.section("## Time in checks")
        found = re.findall(r"`([A-Z_]+_S)` \(([0-9.]+) s\)", text)
        self.assertGreaterEqual(len(found), 5)
        for name, value in found:
            if name in limits:
                with self.subTest(constant=name):
                    self.assertEqual(float(limits[name]), float(value))
        drain = [row for row in table_rows(text) if row[2] == "`--drain-seconds`"][0]
        self.assertEqual(drain[1], "20 s")
        self.assertIn("`--drain-seconds` (default 20 s", DOC.decisions(DECISION_HEADING)["D11"])

    def test_the_exit_statuses_agree(self):
        limits = _limits()
        rows = table_rows(DOC.section("### SCAN-ARGV-2 "))[1:]
        statuses = {}
        for row in rows:
            number, name = row[0].split()
            statuses[name.strip("`")] = int(number)
        self.assertEqual(statuses, {name: value for name, value in limits.items() if name.startswith("EXIT_")})


class DeploymentConstantsTest(unittest.TestCase):
    """D30's table names the values of the reference node's section 2."""

    def test_the_deployment_constants_are_the_nodes(self):
        # D30's table against section 2 of the reference node, by name and value.
        import ast
        with open(NODE_PATH, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        values = {}
        for statement in tree.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
                try:  # a literal, or arithmetic of literals (64 * 1024)
                    values[statement.targets[0].id] = eval(compile(ast.Expression(statement.value), NODE_PATH, "eval"),
                                                           {"__builtins__": {}})
                except Exception:
                    values[statement.targets[0].id] = None
        text = "\n".join(line.strip() for line in DOC.decisions(DECISION_HEADING)["D30"].splitlines())
        rows = table_rows(text)[1:]
        self.assertEqual(len(rows), 4)
        for name, _module, value in rows:
            name, value = name.strip("`"), value.strip("`")
            with self.subTest(constant=name):
                self.assertIn(name, values)
                self.assertEqual(json.loads(value) if value[:1] in "{0123456789" else value, values[name])


class ExamplesTest(unittest.TestCase):

    def test_examples_hold_json_the_worker_can_parse(self):
        names = _schema_names()
        for kind in ("valid", "invalid"):
            for example in DOC.examples(kind):
                with self.subTest(example=kind + "/" + example):
                    value = DOC.example(kind, example)
                    self.assertIsInstance(value, dict)
                    if _schema_of(example, names) not in SERVER_DOCUMENTS:
                        self.assertFalse(_floats(value), "the worker's own documents hold no fractions")

    def test_the_server_documents_show_the_upstreams_variety(self):
        # SCAN-PEER-1, -2: each document the server writes has a valid example with a float or a
        # member nobody defined (D24, D25).
        names = _schema_names()
        for schema in sorted(SERVER_DOCUMENTS):
            with self.subTest(schema=schema):
                varied = [e for e in DOC.examples("valid") if _schema_of(e, names) == schema
                          and _floats(DOC.example("valid", e))]
                self.assertTrue(varied, "no valid %s example shows a float" % schema)

    def test_the_bundle_examples_are_one_real_bundle(self):
        header, trailer = _valid("bundle-header-completed"), _valid("bundle-trailer-end")
        events = [_valid("bundle-event-finding"), _valid("bundle-event-target-done")]
        event_bytes = b"".join(_canonical(event) + b"\n" for event in events)
        self.assertEqual(trailer["event_count"], len(events))
        self.assertEqual(trailer["events_sha256"], _sha256(event_bytes))
        bundle = _canonical(header) + b"\n" + event_bytes + _canonical(trailer) + b"\n"
        self.assertEqual(_valid("bundle-trailer-no-events")["events_sha256"], _sha256(b""))
        # SCAN-BUNDLE-4: the state's record of it.
        record = _valid("slot-state-bundle-ready")["bundle"]
        self.assertEqual(record, {"bytes": len(bundle), "canonical_scan_event_hash": trailer["events_sha256"],
                                  "payload_sha256": _sha256(bundle)})
        # SCAN-RUNNER-6: the runner's outcome names the same bytes.
        outcome = _valid("runner-terminal-completed")["outcome"]
        self.assertEqual(outcome["bundle"], {"ready_relative_path": "ready/%s.jsonl" % header["bundle_id"],
                                             "bytes": len(bundle), "payload_sha256": _sha256(bundle),
                                             "events_sha256": trailer["events_sha256"]})
        # SCAN-UPLOAD-4: the receipt carries the digest sent.
        self.assertEqual(_valid("status-bundle-accepted-receipt")["payload_sha256"], _sha256(bundle))

    def test_the_examples_share_one_reservation(self):
        assignment = _valid("assignment-one-target")["assignment"]
        reservation = assignment["reservation"]
        identity = {key: reservation[key] for key in ("reservation_id", "bundle_id", "scan_event_id")}
        header = _valid("bundle-header-completed")
        runner_input = _valid("runner-input-execute")
        for label, document in (("bundle header", header), ("runner input", runner_input),
                                ("outcome identity", _valid("runner-terminal-completed")["outcome"]["identity"]),
                                ("stale record", _valid("stale-record-404")),
                                ("receipt", _valid("status-bundle-accepted-receipt"))):
            with self.subTest(document=label):
                self.assertEqual({key: document[key] for key in identity}, identity)
        # SCAN-BUNDLE-2 and SCAN-BUNDLE-3: the header names the assignment; target_done its pins.
        self.assertEqual(header["execution_snapshot_sha256"], assignment["execution_snapshot_sha256"])
        self.assertEqual(runner_input["targets"], assignment["targets"])
        done, target = _valid("bundle-event-target-done"), assignment["targets"][0]
        self.assertEqual((done["target"], done["bytes"], done["sha256"]),
                         (target["name"], target["size"], target["sha256"]))
        # The input digest binds the runner record, the gate and the terminal (SCAN-RUNNER-2, -3, -6).
        input_sha = _sha256(_canonical(runner_input))
        self.assertEqual(_valid("runner-terminal-completed")["input_sha256"], input_sha)
        self.assertEqual(_valid("start-gate-start")["input_sha256"], input_sha)
        record = _valid("slot-state-assigned-runner-running")["runner"]
        self.assertEqual(record["input_sha256"], input_sha)
        self.assertEqual(record["root_name"], "worker-assignment-%d-%d-%s" % (
            runner_input["slot_id"], runner_input["reservation_id"], runner_input["generation"]))
        for ref, leaf in (("input_ref", "input.json"), ("events_ref", "events.jsonl"),
                          ("start_ref", "start.json"), ("terminal_ref", "terminal.json")):
            self.assertEqual(record[ref], record["root_name"] + "/" + leaf)

    def test_the_prebundle_receipt_binds_the_report(self):
        report = _valid("terminal-report-storage-missing")
        status = _valid("status-prebundle-report")
        self.assertEqual(status["failure_code"], report["failure_code"])
        self.assertEqual(status["payload_sha256"], _sha256(_canonical(report)))  # SCAN-RECONCILE-4

    def test_the_valid_reports_fit_their_ceiling(self):
        limits = _limits()
        for example in DOC.examples("valid"):
            if example.startswith("terminal-report-"):
                with self.subTest(example=example):
                    size = len(_canonical(DOC.example("valid", example)))
                    self.assertLessEqual(size, limits["TERMINAL_REPORT_MAX_BYTES"])


def _floats(value):
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_floats(v) for v in value.values())
    if isinstance(value, list):
        return any(_floats(v) for v in value)
    return False


if __name__ == "__main__":
    unittest.main()
