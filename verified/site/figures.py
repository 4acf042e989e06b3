"""The ``gallery-figure`` directive: a gallery script's executed figure, inside a page.

    :::{gallery-figure} tensor/plot_view_footprint
    :image: 2
    What the figure shows (the caption; MyST, so {claim-ref} works).
    :::

places the image sphinx-gallery made from ``<examples dir>/tensor/plot_view_footprint.py``
(``<gallery dir>/tensor/images/sphx_glr_plot_view_footprint_002.png``) as a docutils figure,
with the caption and a link to the gallery page that shows the whole script. sphinx-gallery
runs the scripts at builder-inited, before any page is read, so the image exists when the
directive runs; Sphinx's image collector copies it to ``_images/`` and re-reads the page
when the image changes. A missing script or image is a build problem at the directive's
line. With ``:device: cuda``, a missing image (a build without a GPU) is shown as
"not run here" instead.
"""
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.util.docutils import SphinxDirective

CSS_FILE = "figures.css"


def gallery_dirs(config):
    """(examples dir, gallery dir), both relative to the source folder: the first pair of
    sphinx_gallery_conf, or sphinx-gallery's own defaults when the site does not use it."""
    conf = getattr(config, "sphinx_gallery_conf", None) or {}
    examples, pages = conf.get("examples_dirs", "../examples"), conf.get("gallery_dirs", "auto_examples")
    def first(value):
        return value[0] if isinstance(value, (list, tuple)) else value
    return first(examples), first(pages)


def image_name(script, number):
    """sphinx-gallery's name for the script's `number`-th figure."""
    return f"sphx_glr_{script}_{number:03d}.png"


def gallery_label(pages_dir, area, script):
    """The label sphinx-gallery gives the script's page (``sphx_glr_<dir>_<area>_<script>.py``)."""
    return "sphx_glr_" + "_".join(Path(pages_dir, area).parts) + f"_{script}.py"


class GalleryFigureDirective(SphinxDirective):
    """``gallery-figure <area>/<script>``, options ``:image:`` (1-based, default 1), ``:alt:``
    and ``:device:`` (``cuda``: a build without the image says "not run here")."""

    required_arguments = 1
    has_content = True
    option_spec = {"image": directives.positive_int, "alt": directives.unchanged,
                   "device": lambda value: directives.choice(value, ("cpu", "cuda"))}

    def run(self):
        target = self.arguments[0].strip().removesuffix(".py")
        area, _, script = target.rpartition("/")
        examples_dir, pages_dir = gallery_dirs(self.config)
        srcdir = Path(self.env.srcdir)
        script_file = srcdir / examples_dir / area / f"{script}.py"
        if not area or not script.startswith("plot_"):
            return self.problem(f"gallery-figure {target!r}: expected '<area>/plot_<name>', "
                                f"a script under {self.shown(srcdir / examples_dir)}/")
        if not script_file.is_file():
            return self.problem(f"gallery-figure {target!r}: no gallery script {self.shown(script_file)}")
        self.env.note_dependency(str(script_file))
        number = self.options.get("image", 1)
        image_file = srcdir / pages_dir / area / "images" / image_name(script, number)
        caption = self.caption_nodes()
        link = self.gallery_link(gallery_label(pages_dir, area, script))
        if not image_file.is_file():
            if self.options.get("device") == "cuda":
                return [self.not_run_here(caption, link)]
            return self.problem(f"gallery-figure {target!r}: {self.shown(script_file)} made no figure "
                                f"{number} ({self.shown(image_file)} does not exist)")
        uri = "/" + image_file.relative_to(srcdir).as_posix()  # "/..." is relative to the source folder
        # a width makes Sphinx link the image to its full-size file (html_scaled_image_link):
        # on a phone the reader opens it with one tap
        image = nodes.image(uri=uri, alt=self.options.get("alt", f"Figure {number} of {script}.py"), width="100%")
        figure = nodes.figure("", image, classes=["verified-gallery-figure"])
        figure += nodes.caption("", "", *caption, link)
        self.set_source_info(figure)
        return [figure]

    def caption_nodes(self):
        """The directive's body parsed as MyST; the caption keeps its paragraphs' inline text."""
        holder = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, holder)
        inline = []
        for child in holder.children:
            inline += child.children if isinstance(child, nodes.paragraph) else [child]
            inline.append(nodes.Text(" "))
        return inline

    def gallery_link(self, label):
        """A link to the script's gallery page (a std:ref, so a missing page is Sphinx's warning)."""
        xref = addnodes.pending_xref("", nodes.inline(text="The script and its output"), refdomain="std",
                                     reftype="ref", reftarget=label, refexplicit=True, refwarn=True)
        self.set_source_info(xref)
        return nodes.inline("", "", nodes.Text("("), xref, nodes.Text(".)"), classes=["verified-figure-link"])

    def not_run_here(self, caption, link):
        mark = nodes.strong(text="CUDA figure: not run here")
        return nodes.container("", nodes.paragraph("", "", mark, nodes.Text(" (this build had no GPU). "),
                                                   *caption, link),
                               classes=["verified-gallery-figure", "verified-figure-not-run"])

    def shown(self, path):
        """A path as the user sees it: relative to the project root (where conf.py is)."""
        path = Path(path).resolve()
        root = Path(self.env.app.confdir).resolve()
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.as_posix()

    def problem(self, message):
        """A build problem at this directive's line (reported with the others at the end)."""
        from verified.site.directives import record_problem  # directives imports the whole reader
        record_problem(self.env, self.env.docname, self.lineno, message, "gallery-figure")
        return []


def copy_css(app, exception):
    if exception is None and app.builder.format == "html":
        from sphinx.util.fileutil import copy_asset_file
        copy_asset_file(Path(__file__).parent / "static" / CSS_FILE, Path(app.outdir, "_static"), force=True)


def setup(app):
    """Called by verified.sphinx_ext.setup."""
    app.add_directive("gallery-figure", GalleryFigureDirective)
    app.add_css_file(CSS_FILE)
    app.connect("build-finished", copy_css)
