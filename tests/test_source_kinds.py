"""Kinds of source references in a whole build, and the build's check of its own lines."""
from types import SimpleNamespace

from verified.site import directives, records
from verified.sources import resolver as sources


def test_kinds_are_reported_shown_and_counted(good_site):
    report = good_site.report()
    kinds = {(s["path"], s["symbol"]): s["kind"] for s in report["sources"]}
    assert kinds == {
        ("aten/src/ATen/native/native_functions.yaml", "add.Tensor"): "definition",
        ("c10/core/StorageImpl.h", "StorageImpl"): "definition",
        ("c10/core/TensorImpl.h", "TensorImpl"): "definition",
        ("aten/src/ATen/native/TensorShape.cpp", None): "file",
        ("torch/csrc/autograd/engine.h", "Engine::execute"): "declaration",
        ("torch/csrc/autograd/saved_variable.cpp", "SavedVariable::unpack"): "raise-site",
        ("torch/csrc/autograd/VariableTypeManual.cpp", "aten::detach@Autograd"): "registration",
    }
    index = good_site.html("index.html")
    # The source map has no Kind column: a kind other than definition is said after the symbol.
    assert "<th class=\"head\"><p>Kind</p></th>" not in index
    assert '<span class="verified-src-kind"> (raise site)</span>' in index
    assert '<span class="verified-src-kind"> (declaration)</span>' in index
    assert "7 source references, 3 pinned to a definition; the rest: 1 declaration, 1 registration, " \
           "1 raise site, 1 file." in index
    claims = good_site.html("claims.html")
    assert ("By kind: definition: 3; declaration: 1; registration: 1; raise site: 1; file: 1 "
            "(of 7 references).") in claims


class _Resolver:
    def __init__(self, resolution):
        self.resolution = resolution

    def resolve(self, ref):
        return self.resolution


def _env(tmp_path, resolution):
    (tmp_path / "docs").mkdir()
    app = SimpleNamespace(confdir=str(tmp_path), verified_resolver=_Resolver(resolution))
    return SimpleNamespace(app=app, domaindata={records.DOMAIN: records.initial_data()},
                           doc2path=lambda docname: str(tmp_path / "docs" / f"{docname}.md"))


def test_a_line_that_does_not_define_the_symbol_is_a_build_error(tmp_path):
    wrong = sources.Resolution(sources.VERIFIED, 42, "u", "found", sources.DEFINITION, "  return raw_alloc(n);")
    env = _env(tmp_path, wrong)
    record = directives.resolve_reference(env.app, env, "memory/page", 7, "c10/x.h raw_alloc")
    assert record["status"] == sources.BROKEN and record["kind"] is None
    [problem] = records.of(env, "problems")["memory/page"]
    assert problem.kind == "line-check"
    assert str(problem) == ("docs/memory/page.md:7: source reference 'c10/x.h raw_alloc' is pinned to line 42 "
                            "'return raw_alloc(n);', which fails the line check: the line does not define 'raw_alloc'")


def test_a_declaration_pinned_as_a_definition_is_a_build_error(tmp_path):
    wrong = sources.Resolution(sources.VERIFIED, 9, "u", "found", sources.DEFINITION, "  virtual void* f(size_t) = 0;")
    env = _env(tmp_path, wrong)
    directives.resolve_reference(env.app, env, "p", 3, "c10/x.h f")
    assert "only declares 'f' (no body), but its kind is definition" in str(records.of(env, "problems")["p"][0])


def test_a_defining_line_passes(tmp_path):
    right = sources.Resolution(sources.VERIFIED, 9, "u", "found", sources.DEFINITION, "inline void* f(size_t n) {")
    env = _env(tmp_path, right)
    record = directives.resolve_reference(env.app, env, "p", 3, "c10/x.h f")
    assert record["kind"] == sources.DEFINITION and records.of(env, "problems") == {}
