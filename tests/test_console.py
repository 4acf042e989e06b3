"""Whole lines from two threads (verified.site.console): the interleaving that broke a build's output."""
import io
import logging
import threading

from verified.site.console import WholeLines, wrap_sphinx_streams


def in_thread(function):
    thread = threading.Thread(target=function)
    thread.start()
    thread.join()


def test_a_line_from_another_thread_never_splits_an_unfinished_one():
    out = io.StringIO()
    stream = WholeLines(out)
    stream.write("reading sources... [ 50%] ")  # Sphinx's progress line, in pieces
    in_thread(lambda: stream.write("probes: unchanged, reusing the cached results of 2 file(s)\n"))
    stream.write("claims")
    stream.write("\n")
    assert out.getvalue().splitlines() == ["probes: unchanged, reusing the cached results of 2 file(s)",
                                           "reading sources... [ 50%] claims"]


def test_carriage_returns_end_a_line_and_unfinished_lines_are_kept_until_closed():
    out = io.StringIO()
    stream = WholeLines(out)
    stream.write("reading sources... [ 50%] claims\r")
    stream.write("writing output... ")
    assert out.getvalue() == "reading sources... [ 50%] claims\r"
    stream.flush()
    assert out.getvalue() == "reading sources... [ 50%] claims\r"
    stream.close_lines()
    assert out.getvalue() == "reading sources... [ 50%] claims\rwriting output... \n"


def test_each_thread_keeps_its_own_unfinished_line():
    out = io.StringIO()
    stream = WholeLines(out)
    stream.write("main: ")
    in_thread(lambda: (stream.write("probe "), stream.write("line\n")))
    stream.write("done\n")
    assert out.getvalue().splitlines() == ["probe line", "main: done"]


def test_the_wrapper_goes_behind_each_stream_handler_once():
    logger = logging.getLogger("verified-test-console")

    class Writer:  # as Sphinx's SafeEncodingWriter: the real stream is its `stream`
        def __init__(self, stream):
            self.stream = stream

        def write(self, text):
            self.stream.write(text)

    out = io.StringIO()
    handler = logging.StreamHandler(Writer(out))
    logger.addHandler(handler)
    try:
        assert len(wrap_sphinx_streams(logger.name)) == 1
        assert wrap_sphinx_streams(logger.name) == []  # already wrapped
        assert isinstance(handler.stream.stream, WholeLines) and handler.stream.stream.stream is out
    finally:
        logger.removeHandler(handler)
