"""What a probe run ran on: torch build, devices, Python, platform.

Run as a script (``python -m verified.runinfo``) it prints the JSON, so a caller
can learn it without importing torch (or initialising CUDA) in its own process.
"""
import datetime
import json
import os
import platform
import subprocess
import sys


def collect():
    """Describe the torch build and the devices this process can use."""
    import torch

    info = {
        "torch": {
            "version": torch.__version__,
            "git_version": torch.version.git_version,
            "cuda": torch.version.cuda,
        },
        "devices": ["cpu"],
        "device_names": {"cpu": platform.processor() or platform.machine()},
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if torch.cuda.is_available():
        info["devices"].append("cuda")
        info["device_names"]["cuda"] = torch.cuda.get_device_name(0)
    return info


def collect_in_subprocess(python=sys.executable, cwd=None):
    """`collect()` run by `python` in a child process: CUDA is never initialised here."""
    proc = subprocess.run(
        [python, "-m", "verified.runinfo"], capture_output=True, text=True, cwd=cwd,
        env=dict(os.environ, PYTHONPATH=_package_parent()),
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                           else f"{python} -m verified.runinfo failed")
    return json.loads(proc.stdout)


def repository_commit(path):
    """The git commit of the checkout holding `path`, or None outside git."""
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _package_parent():
    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    extra = os.environ.get("PYTHONPATH")
    return parent + (os.pathsep + extra if extra else "")


if __name__ == "__main__":
    json.dump(collect(), sys.stdout)
