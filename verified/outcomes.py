"""The results contract: the devices probes run on and the names of their outcomes.

Every module that writes or reads an outcome spells it with these names. A probe *entry*
(one probe on one device, in a results file: verified/schemas/results.schema.json) has one
of ENTRY_OUTCOMES; a *claim* on a device (a badge, verification.json) has one of
CLAIM_OUTCOMES: the worst of its probes' entries, where a skipped probe makes it "not run".
"""
CPU, CUDA = "cpu", "cuda"
DEVICES = (CPU, CUDA)

PASSED = "passed"
FAILED = "failed"          # an assertion (or a raises/warns block) of the probe failed
ERROR = "error"            # the probe broke outside its checks: a fixture, collection, xfail
CRASHED = "crashed"        # its process died (a signal), or it returned no report
TIMEOUT = "timeout"        # killed after its time limit
SKIPPED = "skipped"        # an entry whose device this machine lacks
NOT_APPLICABLE = "not applicable"  # an entry outside its torch_version range; a claim with no such entry
NOT_RUN = "not run"        # a claim whose probes were skipped on the device

BAD = (CRASHED, TIMEOUT, ERROR, FAILED)  # the outcomes that fail a build, worst first
NOT_CHECKED = (SKIPPED, NOT_APPLICABLE)  # entries that neither pass nor fail
ENTRY_OUTCOMES = (PASSED, *BAD, *NOT_CHECKED)
CLAIM_OUTCOMES = (PASSED, *BAD, NOT_RUN, NOT_APPLICABLE)

NOT_RUN_HERE = "not run here"  # how the pages say NOT_RUN, and the start of a skipped entry's message
LABELS = {  # a claim outcome as its badge says it
    PASSED: "verified",
    FAILED: "FAILED",
    ERROR: "ERROR",
    CRASHED: "CRASHED",
    TIMEOUT: "TIMED OUT",
    NOT_RUN: NOT_RUN_HERE,
    NOT_APPLICABLE: "n/a",
}
