"""Run a small multiprocessing experiment as its own Python program, and read its report.

A probe hands over the source of a script. The script runs as ``__main__`` in a fresh
interpreter (its own session), so that `spawn` children re-import it as ``__mp_main__`` and
`fork` children copy a process that has done nothing else. The script finds, already defined:

- ``report(obj)``: hands a JSON-able result back to the probe (the script's last call);
- ``finish(p, timeout=60)``: joins a child process, terminates it if it is still alive after
  `timeout` seconds, and raises if it did not exit with code 0.

Whatever happens (a failed child, a hang), the script's whole process group is killed before
`run_mp_script` returns or raises.
"""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PRELUDE = '''
import json as _json, os as _os
_NOTES_MP_OUT = _os.environ["NOTES_MP_OUT"]

def report(obj):
    with open(_NOTES_MP_OUT + ".tmp", "w") as f:
        _json.dump(obj, f)
    _os.replace(_NOTES_MP_OUT + ".tmp", _NOTES_MP_OUT)

def finish(p, timeout=60):
    p.join(timeout)
    if p.is_alive():
        p.terminate()
        p.join(5)
        if p.is_alive():
            p.kill()
            p.join(5)
        raise RuntimeError("child process did not finish in %s s" % timeout)
    if p.exitcode != 0:
        raise RuntimeError("child process exited with code %s" % p.exitcode)
'''


class ScriptFailed(AssertionError):
    """The experiment raised, exited with an error, or ran out of time."""


def run_mp_script(tmp_path, source, timeout=150.0, env=None):
    """Run `source` (after the prelude) as a program; return the object it reported."""
    tmp_path = Path(tmp_path)
    script = tmp_path / "notes_mp_script.py"
    script.write_text(PRELUDE + "\n" + source)
    out = tmp_path / "notes_mp_report.json"
    log_path = tmp_path / "notes_mp_script.log"
    run_env = dict(os.environ, NOTES_MP_OUT=str(out))
    run_env.update(env or {})
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, str(script)], stdout=log, stderr=subprocess.STDOUT,
                                cwd=tmp_path, env=run_env, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    tail = log_path.read_text()[-3000:]
    if rc is None:
        raise ScriptFailed(f"the experiment ran past {timeout} s; its output:\n{tail}")
    if rc != 0 or not out.exists():
        raise ScriptFailed(f"the experiment exited with code {rc}; its output:\n{tail}")
    return json.loads(out.read_text())
