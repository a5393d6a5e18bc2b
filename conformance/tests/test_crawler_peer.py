"""The crawler broker's peer variants (CRAWLER-PEER-1): each is the document the broker would serve, otherwise spelled.

A variant that changed what the upstream reads would make a peer check judge
the wrong thing: a spelling must parse to the same value, and a request with
added members must keep every member the contract defines and stay digestible.
"""

import json
import unittest

from conformance.planes import crawler_docs as docs
from conformance.planes.crawler.broker import BOOTSTRAP_SPELLINGS, REQUEST_MEMBERS, UNKNOWN_VALUE

SESSION_ID = "3f2b8c1e-7d4a-4e6b-9a15-c0d8e2f47b93"
UPLOAD_URL = ("https://127.0.0.1:4443/conformance-results/crawler-quarantine/v2/" + "a" * 64
              + "?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=c%2F20261205%2Fauto%2Fstorage%2Fgoog4_request"
              "&X-Goog-Date=20261205T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=content-type%3Bhost"
              "&X-Goog-Signature=" + "0" * 128)


def _bootstrap():
    request = docs.make_request("https://source.example/data.csv", "b" * 64, filename="donn\u00e9es.csv")
    capability = docs.make_capability(SESSION_ID, request, UPLOAD_URL, "2026-12-05T00:15:00Z")
    return docs.make_bootstrap(SESSION_ID, request, capability)


class SpellingsTest(unittest.TestCase):
    def test_every_spelling_is_the_same_value_to_the_lenient_parser(self):
        doc = _bootstrap()
        for name, spell in sorted(BOOTSTRAP_SPELLINGS.items()):
            with self.subTest(spelling=name):
                raw = spell(doc)
                self.assertNotEqual(raw, json.dumps(doc).encode("utf-8"))
                self.assertEqual(docs.parse_lenient(raw), doc)

    def test_each_spelling_shows_its_writer(self):
        doc = _bootstrap()
        self.assertIn(b"\\u0026X-Goog-Credential", BOOTSTRAP_SPELLINGS["go"](doc))
        self.assertIn(b"https:\\/\\/", BOOTSTRAP_SPELLINGS["php"](doc))
        self.assertIn(b"donn\\u00e9es.csv", BOOTSTRAP_SPELLINGS["php"](doc))
        indented = BOOTSTRAP_SPELLINGS["indented"](doc)
        self.assertIn(b"\r\n  ", indented)
        self.assertLess(indented.index(b'"upload_capability"'), indented.index(b'"schema_version"'))


class RequestMembersTest(unittest.TestCase):
    def test_members_are_added_where_named_and_every_defined_member_is_kept(self):
        request = docs.make_request("https://source.example/data.csv", "b" * 64)
        top = REQUEST_MEMBERS["top"](request)
        everywhere = REQUEST_MEMBERS["everywhere"](request)
        for variant in (top, everywhere):
            for key, value in request.items():
                if key != "query":
                    self.assertEqual(variant[key], value)
            for key in request["query"]:
                self.assertIn(key, variant["query"])
            for key, value in request["query"]["limits"].items():
                self.assertEqual(variant["query"]["limits"][key], value)
        self.assertEqual(len(top) - len(request), 1)
        self.assertEqual(top["query"], request["query"])
        self.assertEqual(len(everywhere["query"]) - len(request["query"]), 1)
        self.assertEqual(len(everywhere["query"]["limits"]) - len(request["query"]["limits"]), 1)

    def test_the_added_value_holds_no_float_so_the_request_keeps_a_digest(self):
        # D24: a float has no canonical spelling; the variant must stay digestible.
        def floats(value):
            if isinstance(value, dict):
                return [f for item in value.values() for f in floats(item)]
            if isinstance(value, list):
                return [f for item in value for f in floats(item)]
            return [value] if isinstance(value, float) else []
        self.assertEqual(floats(UNKNOWN_VALUE), [])
        request = REQUEST_MEMBERS["everywhere"](docs.make_request("https://source.example/data.csv", "b" * 64))
        self.assertEqual(len(docs.digest(request)), 64)
        self.assertNotEqual(docs.digest(request), docs.digest(docs.make_request("https://source.example/data.csv",
                                                                                "b" * 64)))


if __name__ == "__main__":
    unittest.main()
