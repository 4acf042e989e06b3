"""The site's markup as plain Sphinx would show it: `make bench`'s baseline (verified.bench).

Every directive and role that ``verified.sphinx_ext`` registers is registered here under the
same name and with the same arguments and options, but does nothing of its own: a directive
becomes a container of its parsed content, a role its text as a literal. The names are read
off ``sphinx_ext.setup`` itself, so the baseline can never fall behind the markup: a new
directive or role is stripped the day it is added.
"""
from docutils import nodes
from docutils.parsers.rst import Directive


class _Recorder:
    """Stands in for the Sphinx application while ``sphinx_ext.setup`` registers its markup."""

    def __init__(self):
        self.directives, self.roles, self.config_values = {}, [], []

    def add_directive(self, name, cls, **_):
        self.directives[name] = cls

    def add_role(self, name, _role, **_):
        self.roles.append(name)

    def add_config_value(self, *args, **kwargs):
        self.config_values.append((args, kwargs))

    def __getattr__(self, name):  # add_domain, add_node, connect, add_css_file ...: not markup
        return lambda *args, **kwargs: None


def registered_markup():
    """(directive classes by name, role names, config values) of the real extension."""
    from verified import sphinx_ext

    recorder = _Recorder()
    sphinx_ext.setup(recorder)
    return recorder.directives, recorder.roles, recorder.config_values


def plain_directive(real):
    """A directive that takes what `real` takes and shows only its content."""
    class Plain(Directive):
        required_arguments = real.required_arguments
        optional_arguments = real.optional_arguments
        final_argument_whitespace = real.final_argument_whitespace
        option_spec = real.option_spec
        has_content = True

        def run(self):
            box = nodes.container(classes=["plain-" + self.name])
            if self.arguments:
                box += nodes.paragraph(text=" ".join(self.arguments))
            self.state.nested_parse(self.content, self.content_offset, box)
            return [box]

    return Plain


def plain_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [nodes.literal(rawtext, text)], []


def setup(app):
    directives, roles, config_values = registered_markup()
    for args, kwargs in config_values:  # conf.py sets them; plain Sphinx just keeps them
        app.add_config_value(*args, **kwargs)
    for name, cls in directives.items():
        app.add_directive(name, plain_directive(cls))
    for name in roles:
        app.add_role(name, plain_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
