"""In a probe's process: the error and warning messages the probe observed, for the error index.

Every exception a probe's ``pytest.raises(Type)`` block catches, and every warning of the
expected category a ``pytest.warns(Type)`` block catches, is noted exactly as torch produced
it, with or without ``match=``; the plugin sends the notes with the probe's entry
(``messages`` in the results file). What the probe's own code raises or warns (a line of the
probe starting with ``raise`` or ``warnings.warn``) carries the probe's text, not PyTorch's,
and is not noted. The probe's own code is its files and pytest's (a failed ``match=`` is
pytest's text); a ``raise`` in the standard library or another installed package is a message
the reader meets too (``inspect.py`` raises what ``torch.jit.script(3)`` says), and is noted.

A message checked outside such a block (a child process or DDP rank returns ``str(exc)`` and
the probe checks it with ``startswith``) is noted by the probe itself, after its check:
``observed(ValueError, text)`` (or the type's name, for a type the parent cannot import).

Each note may carry where the message was raised (``raised_at``): the innermost frame of
the traceback, or the warning's own frame, that lies in the installed torch package, as a
repository path and line (``torch/nn/modules/module.py``, 2630), when that frame's line is the
``raise`` (or the warn call) itself. A message raised in C++ has no such line; the build finds
its line from the raise-site oracle (verified.sources.raise_sites) where that knows the message.

pytest offers no hook for what a ``raises`` block caught, so its two ``__exit__`` methods are
wrapped (pytest 9.2, pinned in requirements.txt).
"""
import builtins
import linecache
import os
import sys
import sysconfig

import _pytest
import pluggy
from _pytest.raises import RaisesExc
from _pytest.recwarn import WarningsChecker

ERROR, WARNING = "error", "warning"
checked = []  # in a probe's process: {"kind", "type", "message"[, "raised_at"]} per message, in order


def type_name(cls):
    """`RuntimeError` for builtins, the public dotted name otherwise (`torch.OutOfMemoryError`)."""
    if getattr(builtins, cls.__name__, None) is cls:
        return cls.__name__
    module = cls.__module__
    public = sys.modules.get(module.lstrip("_"))
    if module.startswith("_") and getattr(public, cls.__name__, None) is cls:  # _pickle -> pickle
        module = module.lstrip("_")
    if module.startswith("torch."):  # torch's exceptions are exported at the top level
        import torch

        if getattr(torch, cls.__name__, None) is cls:
            module = "torch"
    return f"{module}.{cls.__qualname__}"


def _torch_root():
    """The folder holding the installed torch package (its parent), or None before torch is imported."""
    torch = sys.modules.get("torch")
    file = getattr(torch, "__file__", None)
    return os.path.dirname(os.path.dirname(file)) + os.sep if file else None


def torch_location(filename, line):
    """(repository path, line) of a line in the installed torch, or None for a file outside it."""
    root = _torch_root()
    if root is None or not filename.startswith(root + "torch" + os.sep):
        return None
    return {"path": filename[len(root):].replace(os.sep, "/"), "line": line}


def raise_location(traceback):
    """Where in torch's Python files the exception was raised: the innermost frame, when it is
    in torch and its line is a `raise` statement (not a call into C++ or a builtin, whose line
    says where the call was made, not where the message comes from)."""
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    filename, line = traceback.tb_frame.f_code.co_filename, traceback.tb_lineno
    if not linecache.getline(filename, line).lstrip().startswith(("raise ", "raise(")):
        return None
    return torch_location(filename, line)


def warn_location(warning):
    """Where in torch's Python files a warning was issued: its frame, when that line warns
    (a warning issued with a `stacklevel` names the caller's line instead: not a warn site)."""
    if "warn" not in linecache.getline(warning.filename, warning.lineno):
        return None
    return torch_location(warning.filename, warning.lineno)


# where the standard library and installed packages live: a raise there is a library's message...
LIBRARY_DIRS = tuple(sorted({os.path.join(os.path.realpath(path), "") for key, path in sysconfig.get_paths().items()
                             if key in ("stdlib", "platstdlib", "purelib", "platlib")}))
# ...except the test harness's, which is the probe's side (pytest.raises failing its match=)
HARNESS_DIRS = tuple(os.path.join(os.path.dirname(os.path.realpath(m.__file__)), "") for m in (_pytest, pluggy))


def _own_line(filename, line, starts):
    """Whether the line is the probe's own (outside torch and the libraries, or pytest's) and
    starts with one of `starts` (the probe's own raise or warn)."""
    path = os.path.realpath(filename)
    outside = torch_location(filename, line) is None and not path.startswith(LIBRARY_DIRS)
    own = outside or path.startswith(HARNESS_DIRS)
    return own and linecache.getline(filename, line).lstrip().startswith(starts)


def _raised_by_own_code(traceback):
    """Whether the exception came from a `raise` statement of the probe's own code: the probe's
    text (a test module raising "boom"), not a message of PyTorch's or of a library it calls."""
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return _own_line(traceback.tb_frame.f_code.co_filename, traceback.tb_lineno, ("raise ", "raise("))


def _note(kind, cls_or_name, message, raised_at=None):
    name = cls_or_name if isinstance(cls_or_name, str) else type_name(cls_or_name)
    record = {"kind": kind, "type": name, "message": message}
    if raised_at:
        record["raised_at"] = raised_at
    if not any(r["kind"] == kind and r["type"] == name and r["message"] == message for r in checked):
        checked.append(record)


def observed(type_or_name, message, kind=ERROR):
    """Note a message the probe checked outside a raises/warns block (from a child process):
    `type_or_name` is the exception or warning class, or its public name ('RuntimeError')."""
    if kind not in (ERROR, WARNING):
        raise ValueError(f"kind must be {ERROR!r} or {WARNING!r}, not {kind!r}")
    if not isinstance(message, str) or not message.strip():
        raise ValueError(f"observed() needs the message as text, got {message!r}")
    _note(kind, type_or_name, message)


def record_checked_messages():
    """Wrap pytest.raises / pytest.warns so that what their blocks catch is noted."""
    if getattr(RaisesExc.__exit__, "verified_wrapped", False):
        return
    raises_exit, warns_exit = RaisesExc.__exit__, WarningsChecker.__exit__

    def exit_raises(self, exc_type, exc_val, exc_tb):
        __tracebackhide__ = True
        suppressed = raises_exit(self, exc_type, exc_val, exc_tb)
        if suppressed and exc_val is not None and not _raised_by_own_code(exc_tb):
            _note(ERROR, exc_type, str(exc_val), raise_location(exc_tb))
        return suppressed

    def exit_warns(self, exc_type, exc_val, exc_tb):
        __tracebackhide__ = True
        warns_exit(self, exc_type, exc_val, exc_tb)  # raises when no warning matched
        if exc_val is None:
            for warning in self:
                if self.matches(warning) and not _own_line(warning.filename, warning.lineno, ("warnings.warn(",)):
                    _note(WARNING, warning.category, str(warning.message), warn_location(warning))

    exit_raises.verified_wrapped = exit_warns.verified_wrapped = True
    RaisesExc.__exit__, WarningsChecker.__exit__ = exit_raises, exit_warns
