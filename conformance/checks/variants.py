"""Variants: one clause, several inputs that must all be handled the same way.

Many clauses list inputs a node must refuse alike (every malformed base URL,
every spelling of a UUID that is not canonical). `each_variant` runs the node
once per variant, on a fresh plane, and names the first variant that went
wrong, so a report says "variant 'uppercase'" rather than a loop index. It
works for any contract whose plane has `invariants()` and `close()`.
"""

__all__ = ["each_variant", "retire_plane"]


def retire_plane(ctx, plane):
    """Judge a finished variant's plane now (the invariants run_check would
    apply at the end, a broken one failing the check here, named), then close it.

    A plane holds a few dozen descriptors and several server threads until it
    is closed: a check with dozens of variants, several such checks under
    --jobs, would otherwise hold thousands at once.
    """
    violations = plane.invariants() or []
    if violations:
        # The plane stays registered: run_check masks the secrets of every
        # registered plane in the report, and this one's may be in the text.
        first = violations[0]
        ctx.fail(expected="invariant %s: %s" % (first.name, first.expected),
                 actual="; ".join(v.actual for v in violations),
                 diagnosis=first.diagnosis or "invariant broken: %s" % first.name)
    ctx.planes.remove(plane)
    plane.close()


def each_variant(ctx, variants, act):
    """Run act(label, value) for each (label, value) in variants; each call
    makes its own plane with ctx.plane(...) and asserts with variant=label.
    The planes of a variant whose assertions held are judged and closed at
    once (retire_plane); a failing variant's stay for the report."""
    for label, value in variants:
        ctx.note("variant: %s" % label)
        before = len(ctx.planes)
        act(label, value)
        for plane in list(ctx.planes[before:]):
            retire_plane(ctx, plane)
