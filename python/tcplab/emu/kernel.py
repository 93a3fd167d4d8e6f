"""What the running kernel can do for the emulation: which qdiscs and tc actions it has, read
from its build configuration (/proc/config.gz, CONFIG_IKCONFIG_PROC), and its timer tick
(CONFIG_HZ), which sch_pie's update interval is counted in (usecs_to_jiffies in
net/sched/sch_pie.c pie_change).

An option set to `y` is built in; `m` is a module, available where the kernel can load
modules (CONFIG_MODULES) and this release has a module directory (/lib/modules/RELEASE, where
`modprobe` looks); `tc` then loads it, or fails with its own message. Where the kernel does not
expose its configuration, every feature is "unknown": the backend tries, and `tc` says what is
missing when a command fails.

Leaves out: kernels that have an option but not the matching module file (the directory is
checked, not each module), and features compiled in under another option name.
"""

from __future__ import annotations

import functools
import gzip
import os
from pathlib import Path

CONFIG = Path("/proc/config.gz")
MODULES = Path("/lib/modules")

# tc's name of each qdisc or action -> the kernel option that builds it.
FEATURES = {
    "codel": "CONFIG_NET_SCH_CODEL",
    "fq_codel": "CONFIG_NET_SCH_FQ_CODEL",
    "red": "CONFIG_NET_SCH_RED",
    "pie": "CONFIG_NET_SCH_PIE",
    "netem": "CONFIG_NET_SCH_NETEM",
    "fq": "CONFIG_NET_SCH_FQ",
    "tbf": "CONFIG_NET_SCH_TBF",
    "htb": "CONFIG_NET_SCH_HTB",
    "dualpi2": "CONFIG_NET_SCH_DUALPI2",
    "police": "CONFIG_NET_ACT_POLICE",
}


def parse_config(text: str, modules_loadable: bool) -> dict[str, str]:
    """`CONFIG_X=value` lines of a kernel configuration as {option: value}; options that are
    `m` count as `y` when `modules_loadable`, else as not set."""
    options = {}
    for line in text.splitlines():
        name, equals, value = line.partition("=")
        if equals and name.startswith("CONFIG_"):
            options[name] = "y" if value == "m" and modules_loadable else value
    return options


@functools.cache
def configuration() -> dict[str, str] | None:
    """The running kernel's options, or None where it does not expose them."""
    if not CONFIG.exists():
        return None
    text = gzip.decompress(CONFIG.read_bytes()).decode(errors="replace")
    loadable = "CONFIG_MODULES=y" in text.splitlines() and (MODULES / os.uname().release).is_dir()
    return parse_config(text, loadable)


def has(feature: str) -> bool | None:
    """Whether the kernel has qdisc or action `feature` (a key of FEATURES): True, False, or
    None when unknown (no configuration to read)."""
    options = configuration()
    if options is None:
        return None
    return options.get(FEATURES[feature]) == "y"


def hz() -> int | None:
    """The kernel's timer ticks per second (CONFIG_HZ), or None when unknown."""
    options = configuration()
    return None if options is None or "CONFIG_HZ" not in options else int(options["CONFIG_HZ"])


def missing(feature: str) -> str:
    """How a refusal names what the kernel lacks: `sch_codel (CONFIG_NET_SCH_CODEL)`."""
    option = FEATURES[feature]
    prefix = "act_" if option.startswith("CONFIG_NET_ACT_") else "sch_"
    return f"{prefix}{feature} ({option})"
