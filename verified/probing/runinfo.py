"""What a probe run ran on: torch build, devices, CPU code path, Python, platform.

Run as a script (``python -m verified.probing.runinfo``) it prints the JSON, so a caller
can learn it without importing torch (or initialising CUDA) in its own process.
``python -m verified.probing.runinfo --fingerprint`` prints what identifies the installed torch
without importing it at all (``fingerprint()``): a cache of the full run info keyed on
that fingerprint lets a build that reruns nothing skip torch's two-second import.
"""
import ast
import datetime
import glob
import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

# Environment variables that change which devices a run sees.
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
# Environment variables that change which CPU code path the kernels and the BLAS take.
CODE_PATH_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR")


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
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),  # the code path ATen's CPU kernels take
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if torch.cuda.is_available():
        info["devices"].append("cuda")
        info["device_names"]["cuda"] = torch.cuda.get_device_name(0)
        info["cuda_driver"] = cuda_driver()
    return info


def cuda_driver():
    """The NVIDIA driver's version as nvidia-smi prints it, or None where that cannot be asked."""
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = proc.stdout.split()
    return lines[0] if proc.returncode == 0 and lines else None


def fingerprint():
    """What identifies the torch this Python would import, read without importing it.

    The build's own ``torch/version.py`` (version, git commit, CUDA version), the size and
    modification time of its libraries (a reinstall changes them), the Python version, and
    what decides the devices (the GPU device nodes present and the variables that hide them) and
    the CPU code path (``CODE_PATH_VARIABLES``).
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        raise RuntimeError("No module named 'torch'")
    torch_dir = Path(spec.origin).parent
    version_file = torch_dir / "version.py"
    libraries = sorted(torch_dir.glob("_C*.so")) + sorted((torch_dir / "lib").glob("libtorch_c*.so*"))
    generator = importlib.util.find_spec("torchgen")
    return {
        "torch_dir": str(torch_dir),
        "torchgen_dir": str(Path(generator.origin).parent) if generator and generator.origin else None,
        "version": version_constants(version_file),
        "files": {p.relative_to(torch_dir).as_posix(): [p.stat().st_size, p.stat().st_mtime_ns]
                  for p in [version_file, *libraries]},
        "python": platform.python_version(),
        "gpu_nodes": sorted(glob.glob("/dev/nvidia[0-9]*") + glob.glob("/dev/kfd")),
        "environment": {name: os.environ.get(name) for name in DEVICE_VARIABLES + CODE_PATH_VARIABLES},
    }


def version_constants(version_file):
    """The string constants of torch/version.py (``__version__``, ``git_version``, ``cuda``...)."""
    found = {}
    for node in ast.parse(Path(version_file).read_text()).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant):
            found[target.id] = value.value
    return found


def collect_in_subprocess(python=sys.executable, cwd=None):
    """`collect()` run by `python` in a child process: CUDA is never initialised here."""
    return _run_module(python, [], cwd)


def fingerprint_in_subprocess(python=sys.executable):
    """`fingerprint()` as `python` sees it (its own site-packages), without importing torch."""
    return _run_module(python, ["--fingerprint"], None)


def _run_module(python, args, cwd):
    proc = subprocess.run(
        [python, "-m", "verified.probing.runinfo", *args], capture_output=True, text=True, cwd=cwd,
        env=dict(os.environ, PYTHONPATH=_package_parent()),
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                           else f"{python} -m verified.probing.runinfo failed")
    return json.loads(proc.stdout)


def repository_commit(path):
    """The git commit of the checkout holding `path`, or None outside git."""
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def now():
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _package_parent():
    parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # above verified/
    extra = os.environ.get("PYTHONPATH")
    return parent + (os.pathsep + extra if extra else "")


if __name__ == "__main__":
    json.dump(fingerprint() if sys.argv[1:] == ["--fingerprint"] else collect(), sys.stdout)
