"""Whole lines on the console while several threads log through Sphinx.

Sphinx prints a progress line in pieces (``reading sources... [ 50%] `` then the page name,
then the newline, each a separate ``logger.info(..., nonl=True)``), and the probe thread logs
through the same logger while the main thread reads pages. Sphinx has no lock for this, so a
probe line could land in the middle of a progress line. ``WholeLines`` wraps the stream behind
Sphinx's handlers: each thread's text is kept until it ends a line (``\\n``, or ``\\r`` as in
Sphinx's one-line progress on a terminal), and whole lines are written under one lock.
"""
import threading

_LOCK = threading.Lock()  # one writer at a time, across every wrapped stream
ENDINGS = ("\n", "\r")


class WholeLines:
    """A text stream that passes on only complete lines, each thread's on its own."""

    def __init__(self, stream):
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None)
        self._pending = {}  # thread id -> the start of a line that thread has not ended yet

    def write(self, data):
        ident = threading.get_ident()
        with _LOCK:
            text = self._pending.pop(ident, "") + data
            cut = max(text.rfind(ending) for ending in ENDINGS) + 1
            if cut:
                self.stream.write(text[:cut])
            if text[cut:]:
                self._pending[ident] = text[cut:]
        return len(data)

    def flush(self):
        """Flush what is whole; a line a thread has not ended stays with it."""
        with _LOCK:
            if hasattr(self.stream, "flush"):
                self.stream.flush()

    def close_lines(self):
        """Write out every unfinished line (the end of a build), each ended, so nothing is lost."""
        with _LOCK:
            for ident in list(self._pending):
                self.stream.write(self._pending.pop(ident) + "\n")
            if hasattr(self.stream, "flush"):
                self.stream.flush()


def wrap_sphinx_streams(logger_name="sphinx"):
    """Put WholeLines behind every stream handler of Sphinx's logger; returns the wrappers.

    Sphinx's handlers write to a ``SafeEncodingWriter`` whose ``stream`` is the real one
    (sphinx.util.logging.setup); the wrapper goes in between, once. Lines left unfinished
    when the process exits are written then, so nothing is lost.
    """
    import atexit
    import logging

    wrappers = []
    for handler in logging.getLogger(logger_name).handlers:
        writer = getattr(handler, "stream", None)
        inner = getattr(writer, "stream", None)
        if inner is None or isinstance(inner, WholeLines) or not hasattr(inner, "write"):
            continue
        writer.stream = WholeLines(inner)
        wrappers.append(writer.stream)
        atexit.register(writer.stream.close_lines)
    return wrappers
