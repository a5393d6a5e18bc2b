"""A small JSON Schema validator: the subset the contract documents use.

    problems = validate(instance, schema)      # [] when valid
    # ['#/inputs/0/sha256: "xyz" does not match ^[0-9a-f]{64}\\Z']

Every message starts with the JSON pointer (as a URI fragment, ``#`` for the
root) of the value it is about.

Supported keywords: type (a name or a list; "integer" is an int and never a
bool or a float - stricter than JSON Schema, because the contracts say
"ints are ints"; "number" is int or float, never bool), enum, const
(JSON equality: true is not 1, 1 equals 1.0), properties, required,
additionalProperties (bool or schema), patternProperties, propertyNames,
minProperties, maxProperties, items (a schema, or a list for tuples),
minItems, maxItems, uniqueItems, minLength, maxLength (code points),
pattern (Python ``re.search``: anchor with ``^`` and ``\\Z``), minimum,
maximum, exclusiveMinimum, exclusiveMaximum (numbers, draft 6 style),
multipleOf, allOf, anyOf, oneOf, not, if/then/else, and $ref to
``#``, ``#/definitions/...`` or ``#/$defs/...`` (siblings of $ref apply too).

Annotations are ignored ($schema, $id, $comment, title, description,
default, examples, format, readOnly, writeOnly, deprecated, $defs and
definitions themselves). `unsupported(schema)` lists any other keyword, so
a schema never relies on something this validator silently skips.
"""

import re

TYPES = ("null", "boolean", "object", "array", "number", "string", "integer")
_ANNOTATIONS = {"$schema", "$id", "$comment", "title", "description", "default", "examples", "format",
                "readOnly", "writeOnly", "deprecated", "$defs", "definitions"}
_KEYWORDS = {"type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
             "propertyNames", "minProperties", "maxProperties", "items", "minItems", "maxItems", "uniqueItems",
             "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
             "multipleOf", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref"}

_pattern_cache = {}


class SchemaError(ValueError):
    """The schema itself is malformed (bad $ref, unknown type name, bad pattern)."""


def _compile(pattern):
    compiled = _pattern_cache.get(pattern)
    if compiled is None:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise SchemaError("bad pattern %r: %s" % (pattern, exc))
        _pattern_cache[pattern] = compiled
    return compiled


def _pointer(path):
    if not path:
        return "#"
    return "#/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_type(value):
    """The JSON type name of a Python value ("integer" for ints)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value, name):
    if name not in TYPES:
        raise SchemaError("unknown type %r" % name)
    actual = json_type(value)
    if name == "number":
        return actual in ("integer", "number")
    return actual == name


def json_equal(a, b):
    """Equality as JSON sees it: booleans are not numbers; 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _short(value, limit=60):
    text = repr(value) if not isinstance(value, str) else '"%s"' % value
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _resolve(root, ref):
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise SchemaError("only local $ref are supported, not %r" % ref)
    node = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError("$ref %r does not resolve" % ref)
        node = node[part]
    return node


def validate(instance, schema):
    """Every way instance breaks schema, as "pointer: message" strings; [] when valid."""
    errors = []
    _validate(instance, schema, schema, [], errors, 0)
    return errors


def is_valid(instance, schema):
    return not validate(instance, schema)


def _validate(value, schema, root, path, errors, depth):
    if depth > 100:
        raise SchemaError("$ref recursion deeper than 100 at %s" % _pointer(path))
    if schema is True:
        return
    if schema is False:
        errors.append("%s: no value is allowed here" % _pointer(path))
        return
    if not isinstance(schema, dict):
        raise SchemaError("a schema must be an object or a boolean, not %s" % json_type(schema))
    where = _pointer(path)

    def fail(message):
        errors.append("%s: %s" % (where, message))

    if "$ref" in schema:
        _validate(value, _resolve(root, schema["$ref"]), root, path, errors, depth + 1)

    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, name) for name in names):
            fail("expected type %s, got %s" % (" or ".join(names), json_type(value)))
            return  # the other keywords would only repeat the type error
    if "enum" in schema and not any(json_equal(value, option) for option in schema["enum"]):
        fail("%s is not one of %s" % (_short(value), ", ".join(_short(o, 30) for o in schema["enum"])))
    if "const" in schema and not json_equal(value, schema["const"]):
        fail("%s is not %s" % (_short(value), _short(schema["const"])))

    kind = json_type(value)
    if kind == "object":
        _object(value, schema, root, path, errors, depth, fail)
    elif kind == "array":
        _array(value, schema, root, path, errors, depth, fail)
    elif kind == "string":
        if "minLength" in schema and len(value) < schema["minLength"]:
            fail("%s is shorter than %d characters" % (_short(value), schema["minLength"]))
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            fail("string of %d characters is longer than %d" % (len(value), schema["maxLength"]))
        if "pattern" in schema and not _compile(schema["pattern"]).search(value):
            fail("%s does not match %s" % (_short(value), schema["pattern"]))
    elif kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            fail("%r is less than the minimum %r" % (value, schema["minimum"]))
        if "maximum" in schema and value > schema["maximum"]:
            fail("%r is more than the maximum %r" % (value, schema["maximum"]))
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            fail("%r is not more than %r" % (value, schema["exclusiveMinimum"]))
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            fail("%r is not less than %r" % (value, schema["exclusiveMaximum"]))
        if "multipleOf" in schema:
            quotient = value / schema["multipleOf"]
            if quotient != int(quotient):
                fail("%r is not a multiple of %r" % (value, schema["multipleOf"]))

    for index, sub in enumerate(schema.get("allOf", [])):
        _validate(value, sub, root, path, errors, depth + 1)
    if "anyOf" in schema:
        if not any(_passes(value, sub, root, path, depth) for sub in schema["anyOf"]):
            fail("matches none of the %d anyOf alternatives%s" % (len(schema["anyOf"]),
                                                                 _closest(value, schema["anyOf"], root, path, depth)))
    if "oneOf" in schema:
        matched = [i for i, sub in enumerate(schema["oneOf"]) if _passes(value, sub, root, path, depth)]
        if not matched:
            fail("matches none of the %d oneOf alternatives%s" % (len(schema["oneOf"]),
                                                                 _closest(value, schema["oneOf"], root, path, depth)))
        elif len(matched) > 1:
            fail("matches %d oneOf alternatives (%s), exactly one allowed"
                 % (len(matched), ", ".join(str(i) for i in matched)))
    if "not" in schema and _passes(value, schema["not"], root, path, depth):
        fail("matches a schema it must not match")
    if "if" in schema:
        branch = "then" if _passes(value, schema["if"], root, path, depth) else "else"
        if branch in schema:
            _validate(value, schema[branch], root, path, errors, depth + 1)


def _passes(value, schema, root, path, depth):
    trial = []
    _validate(value, schema, root, path, trial, depth + 1)
    return not trial


def _closest(value, alternatives, root, path, depth):
    """The errors of the alternative that came closest, for the message."""
    best = None
    for sub in alternatives:
        trial = []
        _validate(value, sub, root, path, trial, depth + 1)
        if best is None or len(trial) < len(best):
            best = trial
    return " (closest: %s)" % "; ".join(best[:3]) if best else ""


def _object(value, schema, root, path, errors, depth, fail):
    for name in schema.get("required", []):
        if name not in value:
            fail("missing required property %r" % name)
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    for key, item in value.items():
        if not isinstance(key, str):
            fail("property name %r is not a string" % (key,))
            continue
        known = False
        if key in properties:
            known = True
            _validate(item, properties[key], root, path + [key], errors, depth + 1)
        for pattern, sub in patterns.items():
            if _compile(pattern).search(key):
                known = True
                _validate(item, sub, root, path + [key], errors, depth + 1)
        if not known and "additionalProperties" in schema:
            extra = schema["additionalProperties"]
            if extra is False:
                fail("property %r is not allowed" % key)
            elif extra is not True:
                _validate(item, extra, root, path + [key], errors, depth + 1)
        if "propertyNames" in schema:
            trial = []
            _validate(key, schema["propertyNames"], root, path + [key], trial, depth + 1)
            if trial:
                fail("property name %r is not allowed: %s" % (key, trial[0].split(": ", 1)[-1]))
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        fail("has %d properties, fewer than %d" % (len(value), schema["minProperties"]))
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        fail("has %d properties, more than %d" % (len(value), schema["maxProperties"]))


def _array(value, schema, root, path, errors, depth, fail):
    if "minItems" in schema and len(value) < schema["minItems"]:
        fail("has %d items, fewer than %d" % (len(value), schema["minItems"]))
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        fail("has %d items, more than %d" % (len(value), schema["maxItems"]))
    items = schema.get("items")
    if isinstance(items, list):
        for index, (item, sub) in enumerate(zip(value, items)):
            _validate(item, sub, root, path + [index], errors, depth + 1)
        extra = schema.get("additionalItems", True)
        if extra is False and len(value) > len(items):
            fail("has %d items, at most %d allowed" % (len(value), len(items)))
    elif items is not None:
        for index, item in enumerate(value):
            _validate(item, items, root, path + [index], errors, depth + 1)
    if schema.get("uniqueItems"):
        for i in range(len(value)):
            for j in range(i):
                if json_equal(value[i], value[j]):
                    fail("items %d and %d are equal; items must be unique" % (j, i))
                    return


def unsupported(schema, path=()):
    """Keywords in schema (recursively) that this validator does not implement."""
    found = []
    if isinstance(schema, dict):
        for key, sub in schema.items():
            here = list(path) + [key]
            if key in ("properties", "patternProperties", "$defs", "definitions"):
                if isinstance(sub, dict):
                    for name, child in sub.items():
                        found.extend(unsupported(child, here + [name]))
                continue
            if key not in _KEYWORDS and key not in _ANNOTATIONS and key != "additionalItems":
                found.append(_pointer(here))
            if key in ("items", "additionalProperties", "propertyNames", "not", "if", "then", "else"):
                for index, child in enumerate(sub if isinstance(sub, list) else [sub]):
                    found.extend(unsupported(child, here + ([index] if isinstance(sub, list) else [])))
            elif key in ("allOf", "anyOf", "oneOf") and isinstance(sub, list):
                for index, child in enumerate(sub):
                    found.extend(unsupported(child, here + [index]))
    return found
