"""The size pin is coerced with int(), so '4' and true are accepted as sizes instead of refused."""
NODE = "nodes/hello_node.py"
REPLACE = [(
    "    size = spec.get(\"size\")\n"
    "    if isinstance(size, float) and size.is_integer():\n"
    "        size = int(size)  # STEP-INPUT-4 (D43): 6.0 is how some JSON producers write 6; the pin still holds\n"
    "    # STEP-INPUT-4 (D4): a malformed size pin is refused, not ignored: the bound it sets would not hold\n"
    "    if size is not None and (not is_int(size) or size < 0):\n",
    "    size = spec.get(\"size\")\n"
    "    try:\n"
    "        size = None if size is None else int(size)\n"
    "    except (TypeError, ValueError):\n"
    "        raise Permanent(\"%s has a size pin that is not a number; it is not read\" % label) from None\n"
    "    if size is not None and size < 0:\n",
)]
KILLS = ["input.size-pin-string", "input.size-pin-bool"]
