"""The JSON Schema subset validator."""

import glob
import json
import os
import unittest

from conformance.clauses import REPO_ROOT
from conformance.schema import SchemaError, is_valid, json_equal, unsupported, validate


class TypeTest(unittest.TestCase):
    def test_each_type(self):
        samples = {"null": None, "boolean": True, "integer": 3, "number": 2.5, "string": "s",
                   "array": [1], "object": {"a": 1}}
        for name, value in samples.items():
            self.assertEqual(validate(value, {"type": name}), [], name)
        self.assertTrue(is_valid(3, {"type": "number"}))

    def test_integer_is_strict(self):
        self.assertEqual(validate(True, {"type": "integer"}), ["#: expected type integer, got boolean"])
        self.assertFalse(is_valid(False, {"type": "number"}))
        self.assertFalse(is_valid(1.0, {"type": "integer"}))  # "ints are ints"
        self.assertFalse(is_valid(1, {"type": "boolean"}))

    def test_type_list_and_unknown_type(self):
        self.assertTrue(is_valid(None, {"type": ["string", "null"]}))
        self.assertEqual(validate(1, {"type": ["string", "null"]}), ["#: expected type string or null, got integer"])
        with self.assertRaises(SchemaError):
            validate(1, {"type": "int"})

    def test_type_error_stops_other_keywords(self):
        self.assertEqual(len(validate(5, {"type": "string", "minLength": 3, "pattern": "x"})), 1)


class ValueTest(unittest.TestCase):
    def test_enum_and_const_use_json_equality(self):
        self.assertTrue(is_valid(1.0, {"const": 1}))
        self.assertFalse(is_valid(True, {"const": 1}))
        self.assertFalse(is_valid(1, {"enum": [True, "1"]}))
        self.assertTrue(is_valid({"a": [1, 2]}, {"const": {"a": [1, 2]}}))
        self.assertFalse(is_valid({"a": [1, 2]}, {"const": {"a": [2, 1]}}))
        self.assertEqual(validate("c", {"enum": ["a", "b"]}), ['#: "c" is not one of "a", "b"'])
        self.assertTrue(json_equal([1, {"x": None}], [1.0, {"x": None}]))
        self.assertFalse(json_equal(0, False))

    def test_strings(self):
        rule = {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+\\Z"}
        self.assertTrue(is_valid("abc", rule))
        self.assertIn("shorter than 2", validate("a", rule)[0])
        self.assertIn("longer than 4", validate("abcde", rule)[0])
        self.assertIn("does not match", validate("ab1", rule)[0])
        self.assertFalse(is_valid("ab\n", rule))  # \Z, not $, so a trailing newline is refused
        self.assertTrue(is_valid("xay", {"pattern": "a"}))  # re.search, not match
        self.assertTrue(is_valid("\U0001f600\U0001f600", {"maxLength": 2}))  # code points
        with self.assertRaises(SchemaError):
            validate("x", {"pattern": "("})

    def test_numbers(self):
        rule = {"minimum": 1, "maximum": 10, "exclusiveMaximum": 10, "multipleOf": 0.5}
        self.assertTrue(is_valid(9.5, rule))
        self.assertIn("less than the minimum", validate(0, rule)[0])
        self.assertEqual(len(validate(10, rule)), 1)
        self.assertIn("not a multiple", validate(2.25, rule)[0])
        self.assertIn("not more than", validate(0, {"exclusiveMinimum": 0})[0])
        self.assertTrue(is_valid("not a number", {"minimum": 5}))  # numeric keywords ignore other types


class StructureTest(unittest.TestCase):
    OBJECT = {
        "type": "object",
        "required": ["name", "size"],
        "properties": {"name": {"type": "string"}, "size": {"type": "integer", "minimum": 0},
                       "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": True}},
        "additionalProperties": False,
    }

    def test_object(self):
        self.assertEqual(validate({"name": "a", "size": 1}, self.OBJECT), [])
        errors = validate({"size": -1, "extra": 1}, self.OBJECT)
        self.assertIn("#: missing required property 'name'", errors)
        self.assertIn("#/size: -1 is less than the minimum 0", errors)
        self.assertIn("#: property 'extra' is not allowed", errors)

    def test_pointers_into_arrays_and_escaping(self):
        errors = validate({"name": "a", "size": 1, "tags": ["x", 3, "x"]}, self.OBJECT)
        self.assertIn("#/tags/1: expected type string, got integer", errors)
        self.assertIn("#/tags: has 3 items, more than 2", errors)
        self.assertIn("#/tags: items 0 and 2 are equal; items must be unique", errors)
        odd = validate({"a/b~c": 1}, {"properties": {"a/b~c": {"type": "string"}}})
        self.assertEqual(odd, ["#/a~1b~0c: expected type string, got integer"])

    def test_additional_properties_schema_and_pattern_properties(self):
        rule = {"properties": {"a": {}}, "patternProperties": {"^x-": {"type": "integer"}},
                "additionalProperties": {"type": "string"}}
        self.assertTrue(is_valid({"a": None, "x-1": 1, "other": "s"}, rule))
        self.assertEqual(len(validate({"x-1": "s", "other": 2}, rule)), 2)
        self.assertFalse(is_valid({"B": 1}, {"propertyNames": {"pattern": "^[a-z]+\\Z"}}))
        self.assertFalse(is_valid({}, {"minProperties": 1}))
        self.assertFalse(is_valid({"a": 1, "b": 2}, {"maxProperties": 1}))

    def test_arrays(self):
        self.assertFalse(is_valid([], {"minItems": 1}))
        tuple_rule = {"items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}
        self.assertTrue(is_valid(["a", 1], tuple_rule))
        self.assertFalse(is_valid(["a", "b"], tuple_rule))
        self.assertFalse(is_valid(["a", 1, 2], tuple_rule))
        self.assertTrue(is_valid([1, True], {"uniqueItems": True}))  # 1 and true differ in JSON

    def test_boolean_schemas(self):
        self.assertTrue(is_valid(1, True))
        self.assertEqual(validate(1, False), ["#: no value is allowed here"])
        self.assertFalse(is_valid({"a": 1}, {"properties": {"a": False}}))


class CombinatorTest(unittest.TestCase):
    def test_one_of(self):
        rule = {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 2}, {"type": "integer"}]}
        self.assertTrue(is_valid("long", rule))
        self.assertTrue(is_valid(1, rule))
        self.assertIn("matches 2 oneOf alternatives", validate("ab", rule)[0])
        self.assertIn("matches none of the 3 oneOf alternatives", validate(None, rule)[0])

    def test_any_all_not_if(self):
        self.assertTrue(is_valid(1, {"anyOf": [{"type": "string"}, {"type": "integer"}]}))
        message = validate(None, {"anyOf": [{"type": "string"}, {"type": "integer"}]})[0]
        self.assertIn("closest", message)
        self.assertEqual(len(validate(5, {"allOf": [{"minimum": 6}, {"maximum": 4}]})), 2)
        self.assertFalse(is_valid("x", {"not": {"type": "string"}}))
        rule = {"if": {"properties": {"mode": {"const": "post"}}}, "then": {"required": ["url"]},
                "else": {"required": ["path"]}}
        self.assertTrue(is_valid({"mode": "post", "url": "u"}, rule))
        self.assertFalse(is_valid({"mode": "post"}, rule))
        self.assertTrue(is_valid({"mode": "local", "path": "p"}, rule))

    def test_refs(self):
        rule = {"definitions": {"pin": {"type": "string", "pattern": "^[0-9a-f]{64}\\Z"}},
                "$defs": {"list": {"type": "array", "items": {"$ref": "#/definitions/pin"}}},
                "properties": {"pins": {"$ref": "#/$defs/list"}}}
        self.assertTrue(is_valid({"pins": ["a" * 64]}, rule))
        self.assertEqual(len(validate({"pins": ["a" * 63]}, rule)), 1)
        self.assertTrue(validate({"pins": ["z"]}, rule)[0].startswith("#/pins/0: "))
        tree = {"type": "object", "properties": {"child": {"$ref": "#"}}, "additionalProperties": False}
        self.assertTrue(is_valid({"child": {"child": {}}}, tree))
        self.assertFalse(is_valid({"child": {"other": 1}}, tree))
        with self.assertRaises(SchemaError):
            validate(1, {"$ref": "#/definitions/missing"})
        with self.assertRaises(SchemaError):
            validate(1, {"$ref": "other.json#/x"})
        with self.assertRaises(SchemaError):
            validate(1, {"$ref": "#"})  # infinite recursion is reported, not looped

    def test_sibling_keywords_of_ref_apply(self):
        rule = {"definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s", "maxLength": 1}
        self.assertFalse(is_valid("ab", rule))


class UnsupportedTest(unittest.TestCase):
    def test_lists_keywords_the_validator_would_skip(self):
        rule = {"$schema": "x", "title": "t", "type": "object", "dependentRequired": {},
                "properties": {"a": {"contains": {}}, "b": {"items": {"unevaluatedItems": False}}},
                "definitions": {"d": {"format": "uri", "prefixItems": []}}}
        self.assertEqual(sorted(unsupported(rule)), ["#/definitions/d/prefixItems", "#/dependentRequired",
                                                    "#/properties/a/contains",
                                                    "#/properties/b/items/unevaluatedItems"])
        self.assertEqual(unsupported({"type": "string", "description": "d", "examples": []}), [])


class ContractSchemasTest(unittest.TestCase):
    """Whatever schemas and examples the contracts ship use only this subset and agree."""

    def test_shipped_schemas_and_examples(self):
        schema_files = sorted(glob.glob(os.path.join(REPO_ROOT, "contract", "schemas", "*", "*.schema.json")))
        if not schema_files:
            self.skipTest("no contract schemas yet")
        for path in schema_files:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
            self.assertEqual(unsupported(document), [], path)
            validate({}, document)  # resolves every $ref it reaches without SchemaError


if __name__ == "__main__":
    unittest.main()
