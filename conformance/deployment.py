"""Deployment constants: values a contract's platform fixes but its upstream never defines.

An upstream program may import a value from its platform's own package (a
media type, a size bound, a variable's name) and compare it by exact
equality with what the control plane sends.  The contract then gives this
project's value and says so in a Decision; a node copies it into one marked
place; and a deployment whose platform uses another value changes it there.
The harness must then judge that node with the same value, so each such
constant is a `Setting` here and `--deploy NAME=VALUE` sets it for a run:

    python3 -m conformance crawler my_node.py --deploy RESULT_MEDIA_TYPE=application/x.result+json

A contract's checks package exposes one `Deployment` as `DEPLOYMENT`; the
fakes read the current values at call time, never at import.
"""


class Setting(object):
    """One constant: its name (the node's constant's name), default, parser and a line of help.

    `parse(text)` returns the value or raises ValueError saying what is wrong;
    `show(value)` writes it back as text for a rerun command.
    """

    def __init__(self, name, default, parse, show=str, help=""):
        self.name = name
        self.default = default
        self.parse = parse
        self.show = show
        self.help = help


class Deployment(object):
    """A contract's settings and the function that installs values into its fakes.

    `apply(values)` receives the whole mapping name -> value every time (the
    defaults for what is not overridden), so it can recompute what depends on
    several constants.
    """

    def __init__(self, settings, apply):
        self.settings = dict((s.name, s) for s in settings)
        self._apply = apply
        self.values = dict((s.name, s.default) for s in settings)
        apply(dict(self.values))

    def names(self):
        return sorted(self.settings)

    def set(self, assignments):
        """Install NAME=VALUE assignments (a list of strings); ValueError names the bad one."""
        values = dict((name, s.default) for name, s in self.settings.items())
        seen = set()
        for item in assignments:
            name, sep, text = item.partition("=")
            if not sep or not name:
                raise ValueError("--deploy takes NAME=VALUE, got %r" % item)
            if name not in self.settings:
                raise ValueError("unknown deployment constant %r (known: %s)" % (name, ", ".join(self.names())))
            if name in seen:
                raise ValueError("deployment constant %s given twice" % name)
            seen.add(name)
            try:
                values[name] = self.settings[name].parse(text)
            except ValueError as problem:
                raise ValueError("--deploy %s: %s" % (name, problem)) from None
        self._apply(dict(values))
        self.values = values

    def reset(self):
        self.set([])

    def overrides(self):
        """["NAME=VALUE", ...] for every value that is not the default, sorted by name."""
        return ["%s=%s" % (name, self.settings[name].show(self.values[name]))
                for name in self.names() if self.values[name] != self.settings[name].default]

    def describe(self):
        """One line per setting, for --help-like listings."""
        return ["%s (default %s): %s" % (name, self.settings[name].show(self.settings[name].default),
                                         self.settings[name].help) for name in self.names()]
