"""Did the runner's own test module load? Read from the guest's logs.

The guest's init says "gupnm: modprobe NAME failed" on the console when
the module it was given does not load (runner/guest/init). A test that
then skips for want of its module has not judged the kernel: that skip is
the runner's failure, exit 3 with the kernel's reason, never a SKIP that a
pipeline could count as green. Only a module the kernel command line
blacklists on purpose (module_blacklist=NAME: the user's own choice) stays
a skip.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .tap import split_timestamp

# The console's line and the status port's (runner/guest/init).
_FAILED = re.compile(r"^(?:gupnm: modprobe (\S+) failed|GUPNM-MODPROBE: failed (\S+))\s*$",
                     re.M)


@dataclass(frozen=True)
class LoadFailure:
    module: str
    reason: str             # modprobe's and the kernel's words, one line
    blacklisted: bool       # the kernel command line blacklists it

    def problem(self) -> str:
        return (f"the runner's test module {self.module} did not load "
                f"({self.reason}): the test could not judge the kernel; "
                "if the module is a cached build, runner/gupnm-run cache "
                "--clean kernels rebuilds it")


def _plain(text: str) -> list[str]:
    return [split_timestamp(line.rstrip("\r"))[1].strip() for line in text.splitlines()]


def _blacklisted(lines: list[str], module: str) -> bool:
    for line in lines:
        if line.startswith(("Kernel command line:", "Command line:")):
            for m in re.finditer(r"(?:^|\s)module_blacklist=(\S+)", line):
                if module in m.group(1).replace("-", "_").split(","):
                    return True
    return False


def _reason(lines: list[str], module: str) -> str:
    """modprobe's complaint and the kernel's first words about @module."""
    said = []
    for line in lines:
        m = re.match(rf"^modprobe: can't load module {re.escape(module)}\b.*?: (.+)$", line)
        if m:
            said.append(f"modprobe: {m.group(1)}")
            break
    for line in lines:
        # Taint notices come with every out-of-tree module: not a reason.
        if line.startswith(f"{module}: ") and "taint" not in line \
                or line == f"Module {module} is blacklisted":
            said.append(f"kernel: {line}")
            break
    return "; ".join(said) or "modprobe failed, no reason in the log"


def load_failure(console: str, status: str = "") -> LoadFailure | None:
    """The runner's module that did not load, from the console log or the
    status port's log (with its dmesg: the kernel's reason); None when it
    loaded or was not tried."""
    m = None
    for m in _FAILED.finditer(console + "\n" + status):
        pass
    if m is None:
        return None
    module = m.group(1) or m.group(2)
    lines = _plain(console) + _plain(status)
    return LoadFailure(module, _reason(lines, module), _blacklisted(lines, module))
