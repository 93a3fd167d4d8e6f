"""tcplab.emu: the plan of commands (no root needed), every scenario key applied or refused,
and, as root with iproute2, real runs on the kernel: the acceptance run (10 Mbps,
40 ms RTT, 10-BDP buffer, CUBIC and BBR for 15 s; skipped, after retries, when other
processes load the machine), applied settings seen in TCP_INFO, cleanup after success, an
error, Ctrl-C and SIGTERM, and what a SIGKILLed run leaves behind removed by the next run or
`tcplab emulate --cleanup` (no namespace, process or temporary file left)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import astuple
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tcplab
from tcplab import ScenarioError, _core
from tcplab.emu import EmulationError, delayline, emulate, kernel, leftovers, plan_for, settings, tcpinfo
from tcplab.emu import plan as emu_plan
from tcplab.emu import run as emu_run
from tcplab.scenario import prepare, validate

from .conftest import REPOSITORY, TINY_SCENARIO

ACCEPTANCE = {"duration": "15s"}  # rtt-lens: 10 Mbps, 40 ms base RTT, 330 packets = 10 BDP
LOAD_ATTEMPTS = 3
# Validity reasons that are symptoms of a busy machine, not of tcplab: other processes' CPU time,
# and the delay line's thread being scheduled late (also by work /proc/stat does not show as
# another process's, such as a hypervisor's steal) or moved to another CPU (reordering).
LOAD_REASONS = ("other processes used", "delay line lateness", "sender start delayed", "the emulated path reordered")

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None or not Path("/dev/net/tun").exists(),
    reason="the emulation needs root, iproute2 and /dev/net/tun",
)


def namespaces() -> set[str]:
    """The network namespaces on this machine, less those of emulations that other processes
    run meanwhile (`foreign_runs`)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    foreign = foreign_runs()
    return {name for name in (line.split()[0] for line in out.splitlines()) if name[:-1] not in foreign}


def emulation_processes() -> list[str]:
    """Command lines of the running processes (from /proc) of an emulation's tools, less those
    of emulations that other processes run meanwhile."""
    foreign = {pid for prefix in foreign_runs() for role in "srd" for pid in processes_in(f"{prefix}{role}")}
    found = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # not a process, or it just ended
            continue
        if "tcplab.emu." in args and int(entry.name) not in foreign:
            found.append(args)
    return found


def foreign_runs() -> set[str]:
    """Prefixes of the emulations in progress whose owner is not this test process or one it
    started: a user's or another test session's, which are neither this test's runs nor
    leftovers (a machine running two test sessions must not fail either)."""
    owner_files = leftovers.STATE_DIRECTORY.glob("tl*.json") if leftovers.STATE_DIRECTORY.is_dir() else []
    foreign = set()
    for path in owner_files:
        try:
            owner = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if leftovers.owner_running(owner) and not _started_here(owner["pid"]):
            foreign.add(path.stem)
    return foreign


def _started_here(pid: int) -> bool:
    """Whether `pid` is this process or one of its descendants (parent links in /proc)."""
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def processes_in(namespace: str) -> list[int]:
    out = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True).stdout
    return [int(pid) for pid in out.split()]


def running(pid: int) -> str | None:
    """The command line of process `pid` (from /proc) while it runs (not a zombie)."""
    try:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return None
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def emulation_leftovers(prefix: str, pids: list[int]) -> dict[str, list[str]]:
    """What run `prefix`, whose processes were `pids`, has on this machine: namespaces,
    processes, temporary directories and its owner file."""
    owner = leftovers.STATE_DIRECTORY / f"{prefix}.json"
    return {
        "namespaces": sorted(ns for ns in namespaces() if ns.startswith(prefix)),
        "processes": [args for args in map(running, pids) if args is not None],
        "directories": sorted(str(p) for p in Path(tempfile.gettempdir()).glob(f"tcplab-{prefix}-*")),
        "owner file": [str(owner)] if owner.exists() else [],
    }


# --- the plan ------------------------------------------------------------------------------


def test_the_plan_builds_three_namespaces_a_shaped_bottleneck_and_the_delay_routes() -> None:
    plan = plan_for(tcplab.resolve("rtt-lens"), prefix="tlabcdef")
    assert plan.namespaces == {"senders": "tlabcdefs", "router": "tlabcdefr", "receivers": "tlabcdefd"}
    text = plan.commands_text()
    # Each direction's bottleneck on its TUN device (IP packets: no size table), then the
    # routing back out of the device the delay line writes into.
    for tun, subnet in (("dl0", "2"), ("dl1", "1")):
        assert f"tc qdisc add dev {tun} root handle 1: tbf rate 10000000bit burst 3000" in text
        assert f"tc qdisc add dev {tun} parent 1:1 handle 10: pfifo limit 330" in text
        assert f"route replace 10.135.{subnet}.0/24 dev {tun}" in text and f"rule add iif {tun} lookup 100" in text
    assert "net.ipv4.tcp_no_metrics_save=1" in text
    assert "net.ipv4.tcp_dsack=1" in text and "net.ipv4.tcp_frto=2" in text  # tcp.undo = true
    # GSO off where packets queue; on the senders' veth the kernel's GSO sizes (TCP's GSO
    # bursts) without segmentation offloads (cut into MTU-size packets as they leave).
    for command in plan.setup:
        if command[:3] == ["ip", "-n", "tlabcdefs"] and "ve-s" in command:
            assert "gso_max_segs" not in command
        elif command[-2:] == ["gro_max_size", "1500"] and "ve-s" not in command:
            assert "gso_max_segs" in command
    assert ["ip", "netns", "exec", "tlabcdefs", sys.executable, "-m", "tcplab.emu.offloads", "ve-s"] in plan.setup
    assert "net.ipv4.tcp_limit_output_bytes=4194304" in text
    assert "net.ipv4.tcp_tso_win_divisor=3" in text
    # 20 ms one way once the direction's transmitter has sent the packet.
    pair = plan.pairs[0]
    assert [route.argument() for route in plan.delay_routes] == [
        f"{pair.receiver_ip}/32=20000000",
        f"{pair.sender_ip}/32=20000000",
    ]
    assert [delayline._route(route.argument()) for route in plan.delay_routes] == [astuple(r) for r in plan.delay_routes]
    assert delayline._tun("dl0@10000000") == ("dl0", 10_000_000)
    assert plan.teardown == [["ip", "netns", "delete", f"tlabcdef{x}"] for x in "srd"]
    # Nothing touches the root namespace: every command names one of the run's namespaces.
    for command in plan.setup:
        assert any(ns in command for ns in plan.namespaces.values()), command


def test_byte_buffers_become_bfifo_and_access_delays_lengthen_a_pairs_path() -> None:
    document = tcplab.resolve(
        "rtt-lens",
        {
            "topology.bottleneck.buffer": "64KB",
            "topology.pairs": 2,
            "topology.access_delays": ["1ms", "5ms"],
            "flows": [{"cc": "cubic"}, {"cc": "bbr"}],
        },
    )
    plan = plan_for(document)
    assert "bfifo limit 64000" in plan.commands_text()
    assert [p.one_way_delay_ns for p in plan.pairs] == [21_000_000, 25_000_000]
    assert [f.cc for f in plan.flows] == ["cubic", "bbr"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"topology.bottleneck.loss": 0.01}, "topology.bottleneck.loss: 0.01 needs random loss (netem)"),
        ({"topology.bottleneck.ecn_threshold": "20pkt"}, "topology.bottleneck.ecn_threshold: CE marking"),
        ({"topology.bottleneck.rate": "2Gbps"}, "topology.bottleneck.rate: 2Gbps is more than"),
        ({"topology.wifi": {"standard": "802.11ax", "mcs": 2}}, "topology.wifi: radio access cannot be emulated"),
        ({"record.flows": "groups"}, "record.flows: flow groups are not emulated: the kernel backend records each flow"),
        (
            {"record.aggregate_above": 0},
            'record.flows: flow groups are not emulated: the kernel backend records each flow; allowed: record.flows = "each", or "auto" with record.aggregate_above at least 1',
        ),
    ],
)
def test_what_cannot_be_emulated_is_refused_in_one_line(overrides: dict, expected: str) -> None:
    with pytest.raises(ScenarioError) as error:
        plan_for(tcplab.resolve("rtt-lens", overrides))
    assert str(error.value).startswith(expected) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("mmwave-blockage.toml", "mmwave"),
        ("explicit-lossy-path.toml", "explicit"),
        ("parking-lot.toml", "parking_lot"),
        ("leaf-spine.toml", "leaf_spine"),
    ],
)
def test_other_topologies_are_refused(source: str, kind: str) -> None:
    with pytest.raises(ScenarioError, match=rf"^topology\.kind: '{kind}' cannot be emulated; allowed: dumbbell$"):
        plan_for(tcplab.resolve(REPOSITORY / "scenarios" / source))


def test_rates_outside_the_faithful_range_are_a_warning() -> None:
    plan = plan_for(tcplab.resolve("rtt-lens", {"topology.bottleneck.rate": "5Mbps"}))
    assert any("outside the 10-100Mbps" in warning for warning in plan.warnings), plan.warnings


def test_dry_run_prints_the_commands_and_runs_nothing(run_cli, tmp_path: Path) -> None:
    before = namespaces() if shutil.which("ip") else set()
    outcome = run_cli("emulate", "rtt-lens", "--dry-run", "-o", tmp_path / "out")
    assert outcome.code == 0, outcome.stderr
    # rtt-lens records per-ACK RTTs, which the kernel has not: a warning, then the commands.
    assert outcome.stdout.startswith("# warning: record.rtt: not measured on the kernel")
    assert "\n# setup\nip netns add tl" in outcome.stdout
    assert "# teardown" in outcome.stdout and not (tmp_path / "out").exists()
    if shutil.which("ip"):
        assert namespaces() == before


def test_without_root_the_backend_refuses_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(EmulationError) as error:
        emulate("rtt-lens")
    assert str(error.value).startswith("the emulation backend needs root") and "\n" not in str(error.value)


# --- every scenario key: applied or refused -------------------------------------------------


def _schema_keys() -> set[str]:
    """Every key a dumbbell scenario can have, from the schema (`tcplab schema`), in the
    table's spelling (`flows.*.x`, `tcp.x`, `topology.bottleneck.x`)."""
    schema = json.loads(_core.schema())
    defs = schema["$defs"]
    dumbbell = next(t for t in defs["Topology"]["oneOf"] if t["properties"]["kind"].get("const") == "dumbbell")
    keys = {k for k in schema["properties"] if k not in ("record", "tcp", "topology", "flows")}
    keys |= {f"record.{k}" for k in defs["RecordSpec"]["properties"]}
    keys |= {f"tcp.{k}" for k in defs["TcpSpec"]["properties"]}
    keys |= {f"topology.{k}" for k in dumbbell["properties"] if k not in ("bottleneck", "access")}
    for link in ("bottleneck", "access"):
        keys |= {f"topology.{link}.{k}" for k in defs["LinkSpec"]["properties"] if k not in ("a", "b")}
    keys |= {f"flows.*.{k}" for k in defs["FlowGroupSpec"]["properties"] if k != "tcp"}
    return keys


def test_every_key_of_a_dumbbell_scenario_is_in_the_kernel_table_and_its_documentation() -> None:
    assert _schema_keys() == set(settings.KERNEL_SETTINGS)
    documented = (REPOSITORY / "docs" / "emulation.md").read_text(encoding="utf-8")
    for key in settings.KERNEL_SETTINGS:
        assert f"`{key}`" in documented, f"{key} is not in docs/emulation.md's table"


def _kernel_with(monkeypatch: pytest.MonkeyPatch, *features: str) -> None:
    """The running kernel as one built with `features` (tc names) and HZ 250."""
    options = {kernel.FEATURES[f]: "y" for f in features} | {"CONFIG_HZ": "250"}
    monkeypatch.setattr(kernel, "configuration", lambda: options)


def _refusal(overrides: dict) -> str:
    with pytest.raises(ScenarioError) as error:
        plan_for(tcplab.resolve("rtt-lens", overrides))
    message = str(error.value)
    assert "\n" not in message and "; allowed" in message, message
    return message


def test_the_kernels_configuration_says_which_qdiscs_it_has() -> None:
    text = "CONFIG_NET_SCH_TBF=y\nCONFIG_NET_SCH_CODEL=m\n# CONFIG_NET_SCH_RED is not set\nCONFIG_HZ=250\n"
    assert kernel.parse_config(text, modules_loadable=True) == {
        "CONFIG_NET_SCH_TBF": "y",
        "CONFIG_NET_SCH_CODEL": "y",
        "CONFIG_HZ": "250",
    }
    assert kernel.parse_config(text, modules_loadable=False)["CONFIG_NET_SCH_CODEL"] == "m"
    assert kernel.missing("codel") == "sch_codel (CONFIG_NET_SCH_CODEL)"
    assert kernel.missing("police") == "act_police (CONFIG_NET_ACT_POLICE)"


def test_a_queue_discipline_the_kernel_lacks_is_refused_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel_with(monkeypatch, "tbf", "pie")
    assert _refusal({"topology.bottleneck.queue": "codel"}) == (
        "topology.bottleneck.queue: codel needs the kernel's sch_codel (CONFIG_NET_SCH_CODEL), which this "
        "kernel does not have; allowed here: droptail, headdrop, pie"
    )


def test_a_kernel_that_does_not_tell_is_tried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "configuration", lambda: None)
    assert (
        "handle 10: codel limit 330"
        in plan_for(tcplab.resolve("rtt-lens", {"topology.bottleneck.queue": "codel"})).commands_text()
    )


@pytest.mark.parametrize(
    ("queue", "buffer", "child"),
    [
        ("droptail", "330pkt", "pfifo limit 330"),
        ("headdrop", "330pkt", "pfifo_head_drop limit 330"),
        ("codel", "330pkt", "codel limit 330 target 5000us interval 100000us noecn"),
        (
            {"kind": "codel", "target_ms": 2.5, "interval_ms": 50.0, "ecn": True, "ce_threshold_ms": 1.0},
            "1000pkt",
            "codel limit 1000 target 2500us interval 50000us ecn ce_threshold 1000us",
        ),
        (
            "fq_codel",
            "330pkt",
            "fq_codel limit 330 flows 1024 quantum 1514 target 5000us interval 100000us ecn drop_batch 64 memory_limit 33554432",
        ),
        (
            {"kind": "fq_codel", "flows": 16, "quantum": 300, "ecn": False, "ce_threshold_ms": 0.5, "drop_batch": 8},
            "100pkt",
            "fq_codel limit 100 flows 16 quantum 300 target 5000us interval 100000us noecn ce_threshold 500us "
            "drop_batch 8 memory_limit 33554432",
        ),
        (
            {"kind": "pie", "tupdate_ms": 16.0},
            "330pkt",
            "pie limit 330 target 15000us tupdate 16000us alpha 2 beta 20 noecn nobytemode no_dq_rate_estimator",
        ),
        (
            {
                "kind": "pie",
                "target_ms": 20.0,
                "tupdate_ms": 32.0,
                "alpha": 0.25,
                "beta": 2.0,
                "ecn": True,
                "bytemode": True,
                "dq_rate_estimator": True,
            },
            "330pkt",
            "pie limit 330 target 20000us tupdate 32000us alpha 4 beta 32 ecn bytemode dq_rate_estimator",
        ),
        ("red", "150KB", "red limit 150000 min 0 max 0 avpkt 1000 burst 0 probability 0.02 bandwidth 10000000bit"),
        (
            {
                "kind": "red",
                "min_th": 15000,
                "max_th": 45000,
                "probability": 0.1,
                "avpkt": 1500,
                "burst": 20,
                "ecn": True,
                "harddrop": True,
                "adaptive": True,
            },
            "150KB",
            "red limit 150000 min 15000 max 45000 avpkt 1500 burst 20 probability 0.1 bandwidth 10000000bit ecn harddrop adaptive",
        ),
    ],
)
def test_each_queue_becomes_the_tbfs_child_with_its_parameters(
    monkeypatch: pytest.MonkeyPatch, queue: str | dict, buffer: str, child: str
) -> None:
    _kernel_with(monkeypatch, "tbf", *settings.AQM_QUEUES)
    document = tcplab.resolve("rtt-lens", {"topology.bottleneck.queue": queue, "topology.bottleneck.buffer": buffer})
    text = plan_for(document).commands_text()
    for tun in (emu_plan.DATA_TUN, emu_plan.ACK_TUN):  # both directions: one link setting
        assert f"tc qdisc add dev {tun} parent 1:1 handle 10: {child}\n" in text


@pytest.mark.parametrize(
    ("overrides", "refusal"),
    [
        (
            {"topology.bottleneck.queue": "codel", "topology.bottleneck.buffer": "64KB"},
            "topology.bottleneck.queue: codel's limit counts packets in Linux (sch_codel)",
        ),
        ({"topology.bottleneck.queue": "red"}, "topology.bottleneck.queue: red with a buffer in packets averages packets"),
        (
            {"topology.bottleneck.queue": {"kind": "red", "gentle": True}, "topology.bottleneck.buffer": "150KB"},
            "topology.bottleneck.queue.gentle: true is not emulated: Linux's sch_red has no gentle mode",
        ),
        (
            {"topology.bottleneck.queue": {"kind": "pie", "max_burst_ms": 100.0, "tupdate_ms": 16.0}},
            "topology.bottleneck.queue.max_burst_ms: 100.0 is not emulated: sch_pie's burst allowance is fixed",
        ),
        (
            {"topology.bottleneck.queue": {"kind": "pie", "alpha": 0.0, "tupdate_ms": 16.0}},
            "topology.bottleneck.queue.alpha: 0 is not emulated: tc sends no alpha of 0",
        ),
        (
            {"topology.bottleneck.queue": "pie"},
            "topology.bottleneck.queue.tupdate_ms: 15.0 is not emulated: sch_pie's timer counts whole jiffies "
            "(usecs_to_jiffies), 4 ms at this kernel's HZ 250; allowed: a multiple of 4",
        ),
        (
            {"topology.bottleneck.queue": {"kind": "pie", "target_ms": 15.0005, "tupdate_ms": 16.0}},
            "topology.bottleneck.queue.target_ms: 15.0005 is not emulated: tc takes whole microseconds",
        ),
        ({"topology.access.queue": "fq_codel"}, "topology.access.queue: fq_codel is not emulated: it drops, marks or paces"),
        (
            {"topology.access.shaper": {"rate": "5Mbps", "burst": "10KB"}},
            "topology.access.shaper: access links are veths at memory speed",
        ),
        (
            {"topology.access.policer": {"rate": "5Mbps", "burst": "10KB"}},
            "topology.access.policer: access links are veths at memory speed",
        ),
        (
            {"topology.bottleneck.reverse": {"shaper": {"rate": "5Mbps", "burst": "10KB"}}},
            "topology.bottleneck.reverse: per-direction overrides are not emulated",
        ),
        (
            {"topology.bottleneck.policer": {"rate": "5Mbps", "burst": "10KB"}},
            "topology.bottleneck.policer: policing needs the kernel's act_police (CONFIG_NET_ACT_POLICE), which this kernel does not have",
        ),
    ],
)
def test_what_the_kernels_qdiscs_cannot_put_in_effect_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch, overrides: dict, refusal: str
) -> None:
    _kernel_with(monkeypatch, "tbf", *settings.AQM_QUEUES)
    message = _refusal(overrides)
    assert message.startswith(refusal), message


def test_a_policer_is_refused_even_where_the_kernel_has_act_police(monkeypatch: pytest.MonkeyPatch) -> None:
    _kernel_with(monkeypatch, "tbf", "police")
    message = _refusal({"topology.bottleneck.policer": {"rate": "5Mbps", "burst": "10KB"}})
    assert message.startswith("topology.bottleneck.policer: policing is not emulated"), message


def test_a_shaper_makes_the_data_directions_tbf_the_shapers_with_the_link_as_peak_rate() -> None:
    shaped = plan_for(tcplab.resolve("rtt-lens", {"topology.bottleneck.shaper": {"rate": "5Mbps", "burst": "15KB"}}))
    text = shaped.commands_text()
    assert "dev dl0 root handle 1: tbf rate 5000000bit burst 15000 peakrate 10000000bit mtu 1500 latency 10s\n" in text
    assert "dev dl1 root handle 1: tbf rate 10000000bit burst 3000 latency 10s\n" in text  # the ACKs: the link's
    assert "dev dl0 parent 1:1 handle 10: pfifo limit 330" in text
    # At the link rate or above the shaper changes nothing: the link's own tbf.
    plain = plan_for(tcplab.resolve("rtt-lens"), prefix="tlabcdef").commands_text()
    moot = {"topology.bottleneck.shaper": {"rate": "10Mbps", "burst": "15KB"}}
    assert plan_for(tcplab.resolve("rtt-lens", moot), prefix="tlabcdef").commands_text() == plain


def test_a_key_the_table_does_not_know_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(settings.KERNEL_SETTINGS, "tcp.quickack")
    with pytest.raises(ScenarioError, match=r"^flows.0.tcp.quickack: not known to the emulation backend"):
        plan_for(tcplab.resolve("rtt-lens"))


@pytest.mark.parametrize(
    ("override", "applied"),
    [
        ("tcp.mss=1000", ["--mss 1000"]),
        ("tcp.initial_cwnd=50", ["initcwnd 50", "initrwnd 50", "net.ipv4.tcp_rmem=4096 150000 "]),
        ("tcp.ack_every=1", ["initrwnd 10 quickack 1"]),
        ("tcp.sack=false", ["net.ipv4.tcp_sack=0"]),
        ("tcp.ecn=true", ["rto_min 200ms features ecn"]),
        ("tcp.min_rto=1s", ["rto_min 1000ms"]),
        ("tcp.max_rto=60s", ["--rto-max-ms 60000"]),
        ("tcp.pacing=fq", ["--pacing"]),
        ("tcp.slow_start_after_idle=false", ["net.ipv4.tcp_slow_start_after_idle=0"]),
        ("tcp.recovery=rfc6675", ["net.ipv4.tcp_recovery=0", "net.ipv4.tcp_early_retrans=0"]),
        ("flows.0.cc=newreno", ["traffic send --cc reno "]),
        (
            "topology.bottleneck.mtu=9000 topology.access.mtu=9000 tcp.mss=8948",
            ["ve-rd mtu 9000 gso_max_size 9000", "dl0 mtu 9000", "dl1 mtu 9000", "--mss 8948"],
        ),
    ],
)
def test_settings_the_kernel_can_have_are_in_the_plan(override: str, applied: list[str]) -> None:
    overrides = dict(tcplab.scenario.parse_assignment(text) for text in override.split())
    default = plan_for(tcplab.resolve("rtt-lens"), prefix="tlabcdef").commands_text()
    text = plan_for(tcplab.resolve("rtt-lens", overrides), prefix="tlabcdef").commands_text()
    for fragment in applied:
        assert fragment in text and fragment not in default, fragment


@pytest.mark.parametrize(
    ("override", "refusal"),
    [
        ("tcp.mss=9000", "tcp.mss: 9000 is not emulated: kernel TCP never sends a segment larger than the path MTU"),
        ('flows.0.cc={kind="cubic",beta=0.5}', "flows.0.cc.beta: 0.5 is not "),
        ('flows.0.cc={kind="bbr",cwnd_gain=3.0}', "flows.0.cc.cwnd_gain: 3.0 is not emulated"),
        ("tcp.ack_every=3", "tcp.ack_every: 3 is not emulated"),
        ("tcp.initial_ssthresh=100", "tcp.initial_ssthresh: 100 is not emulated"),
        ("tcp.initial_rto=3s", "tcp.initial_rto: 3s is not emulated"),
        ("tcp.rto=rfc6298", 'tcp.rto: "rfc6298" is not emulated'),
        ("tcp.delack_timeout=10ms", "tcp.delack_timeout: 10ms is not emulated"),
        ("tcp.quickack=4", "tcp.quickack: 4 is not emulated"),
        ("tcp.tsq=false", "tcp.tsq: false is not emulated: the kernel's TCP Small Queues cannot be switched off"),
        ("tcp.tso_defer=false", "tcp.tso_defer: false is not emulated: the kernel's TSO deferral cannot be switched off"),
        ('tcp.ato="fixed"', 'tcp.ato: "fixed" is not emulated'),
        ("tcp.undo=false", "tcp.undo: false is not emulated: the kernel undoes"),
        ("tcp.min_rto=1500us", "tcp.min_rto: 1500us is not emulated"),
        ("tcp.max_rto=200s", "tcp.max_rto: 200s is not emulated"),
        ("flows.0.tcp.mss=9000", "flows.0.tcp.mss: 9000 is not emulated"),
        ("sample_interval=1ms", "sample_interval: 1ms is shorter than"),
        ("topology.access.rate=50Mbps", "topology.access.rate: 50Mbps is not emulated"),
        ("topology.access.buffer=10pkt", "topology.access.buffer: 10pkt is not emulated"),
        ("topology.access.mtu=9000", "topology.access.mtu: 9000 differs from topology.bottleneck.mtu 1500"),
        ('flows.0.app={rate="1Mbps",packet_size="900B"}', "flows.0.app: fixed-rate applications are not emulated"),
    ],
)
def test_settings_the_kernel_cannot_have_are_refused_in_one_line(override: str, refusal: str) -> None:
    key, value = tcplab.scenario.parse_assignment(override)
    with pytest.raises(ScenarioError) as error:
        plan_for(tcplab.resolve("rtt-lens", {key: value}))
    message = str(error.value)
    assert message.startswith(refusal) and "; allowed: " in message and "\n" not in message, message


def test_dry_run_refuses_an_ignored_setting_in_one_line_with_exit_2(run_cli) -> None:
    outcome = run_cli("emulate", "rtt-lens", "--dry-run", "--set", "tcp.ack_every=4")
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.stderr.startswith("error: tcp.ack_every: 4 is not emulated") and outcome.stderr.count("\n") == 1, (
        outcome.stderr
    )


def test_namespace_and_route_settings_must_agree_where_the_kernel_shares_them() -> None:
    two_pairs = {"topology.pairs": 2, "flows": [{"cc": "cubic"}, {"cc": "cubic", "src": "s1", "dst": "r1"}]}
    with pytest.raises(
        ScenarioError,
        match=r"^flows.1.tcp.sack: false differs from flows.0.tcp.sack true; .* per namespace \(net.ipv4.tcp_sack\)",
    ):
        plan_for(tcplab.resolve("rtt-lens", {**two_pairs, "flows.1.tcp": {"sack": False}}))
    # Per-route settings may differ between pairs, not between the flows of one pair.
    text = plan_for(tcplab.resolve("rtt-lens", {**two_pairs, "flows.1.tcp": {"initial_cwnd": 4}})).commands_text()
    assert "initcwnd 10" in text and "initcwnd 4" in text
    one_pair = {
        "topology.pairs": 1,
        "flows": [{"cc": "cubic"}, {"cc": "bbr", "src": "s0", "dst": "r0", "tcp": {"initial_cwnd": 4}}],
    }
    with pytest.raises(
        ScenarioError, match=r"^flows.1.tcp.initial_cwnd: 4 differs from flows.0.tcp.initial_cwnd 10 on the same pair"
    ):
        plan_for(tcplab.resolve("rtt-lens", one_pair))


def test_per_ack_rtts_are_recorded_as_off_with_a_warning() -> None:
    plan = plan_for(tcplab.resolve("rtt-lens"))  # record.rtt = true
    assert plan.recorded == {"record.rtt": False}
    assert any(w.startswith("record.rtt: not measured on the kernel") for w in plan.warnings)
    assert plan_for(tcplab.resolve("rtt-lens", {"record.rtt": False})).recorded == {}


def test_the_emulations_frames_have_the_simulators_columns(tiny_result: tcplab.Result) -> None:
    """Built from the core's series schema (BBR's own columns included), even for a run that
    sampled nothing; all-zero goodputs are perfectly fair, as in the simulator's summary."""
    document = validate(prepare(TINY_SCENARIO))
    raw = {
        "origin": 0.0,
        "flows": {0: []},
        "qdisc": [],
        "qdisc_baseline": {device: emu_run.queue_sample([]) for device in emu_run.LINK_NAMES},
        "delay_line": {},
        "established": {},
        "connected_late": {},
        "interface_drops": {},
        "other_cpu_cores": 0.0,
    }
    result = emu_run._result(document, plan_for(document), raw, wall_s=0.0)
    assert result.flows.schema == tiny_result.flows.schema
    assert result.links.schema == tiny_result.links.schema
    assert result.summary["fairness_jain"] == 1.0


@pytest.mark.parametrize(
    ("kind", "drops", "app", "counters"),
    [
        ("pfifo", 7, b"", {"tail": 7}),
        ("bfifo", 7, b"", {"tail": 7}),
        ("pfifo_head_drop", 7, b"", {"head": 7}),
        # tc_codel_xstats: drop_overlimit 2, ecn_mark 3, ce_mark 4
        ("codel", 9, struct.pack("<9I", 1500, 0, 0, 0, 0, 2, 3, 0, 4), {"tail": 2, "aqm": 7, "ce": 7}),
        # tc_fq_codel_xstats: type 0, drop_overlimit 5, ecn_mark 1, ce_mark 2
        ("fq_codel", 9, struct.pack("<10I", 0, 1500, 5, 1, 0, 0, 0, 2, 0, 0), {"overlimit": 5, "aqm": 4, "ce": 3}),
        # tc_red_xstats: early 6, pdrop 3, marked 8
        ("red", 9, struct.pack("<4I", 6, 3, 0, 8), {"tail": 3, "aqm": 6, "ce": 8}),
        # tc_pie_xstats: dropped 9 (early and at the limit), overlimit 4, ecn_mark 2
        ("pie", 9, struct.pack("<Q8I", 0, 0, 0, 0, 100, 9, 4, 50, 2), {"tail": 4, "aqm": 5, "ce": 2}),
    ],
)
def test_a_queues_drops_are_split_by_reason_from_its_qdiscs_statistics(
    kind: str, drops: int, app: bytes, counters: dict[str, int]
) -> None:
    expected = dict.fromkeys(("tail", "head", "aqm", "overlimit", "policer", "ce"), 0) | counters
    assert emu_run.queue_counters(kind, drops, app) == expected


def _netlink_attribute(kind: int, payload: bytes) -> bytes:
    length = 4 + len(payload)
    return struct.pack("<HH", length, kind) + payload + bytes(-length % 4)


def _qdisc_message(kind: str, handle: int, parent: int, stats2: bytes) -> Any:
    """An RTM_NEWQDISC message as the kernel sends it: tcmsg, TCA_KIND, TCA_STATS2."""
    from pyroute2.netlink.rtnl.tcmsg import tcmsg

    body = struct.pack("<BBHiIII", 0, 0, 0, 2, handle, parent, 0)
    body += _netlink_attribute(1, kind.encode() + b"\0") + _netlink_attribute(7, stats2)
    message = tcmsg(bytearray(struct.pack("<IHHII", 16 + len(body), 36, 0, 0, 0) + body))
    message.decode()
    return message


def test_the_sampler_reads_the_queues_backlog_drops_and_marks_and_the_tbfs_bytes() -> None:
    """red: pyroute2 does not decode its statistics; the sampler reads them raw."""
    tbf = _qdisc_message("tbf", 0x00010000, emu_run.ROOT_PARENT, _netlink_attribute(1, struct.pack("<QI", 123456, 90)))
    queue = _netlink_attribute(3, struct.pack("<5I", 3, 4500, 11, 0, 0))  # qlen, backlog, drops
    red = _qdisc_message("red", emu_run.QUEUE_HANDLE, 0x00010001, queue + _netlink_attribute(4, struct.pack("<4I", 6, 5, 0, 8)))
    sample = emu_run.queue_sample([tbf, red])
    # The handle the sampler looks for is the plan's child's (tc reads "10:" as hex).
    setup = plan_for(tcplab.resolve("rtt-lens")).setup
    handle = next(c[c.index("handle") + 1] for c in setup if "parent" in c and "1:1" in c)
    assert int(handle.rstrip(":"), 16) << 16 == emu_run.QUEUE_HANDLE
    assert (sample.backlog_pkts, sample.backlog_bytes, sample.sent_bytes) == (3, 4500, 123456)
    assert sample.counters == {"tail": 5, "head": 0, "aqm": 6, "overlimit": 0, "policer": 0, "ce": 8}


def test_the_links_drops_by_reason_and_marks_count_from_the_baseline() -> None:
    document = validate(prepare(TINY_SCENARIO))
    plan = plan_for(document)

    def at(tail: int, aqm: int, ce: int, sent: int) -> emu_run.QueueSample:
        counters = dict.fromkeys((*emu_run.DROP_REASONS, "ce"), 0) | {"tail": tail, "aqm": aqm, "ce": ce}
        return emu_run.QueueSample(4, 6000, sent, counters)

    baseline = {device: at(1, 2, 3, 1000) for device in emu_run.LINK_NAMES}
    rows = [(t, {device: at(1 + t, 2 + 2 * t, 3 + 3 * t, 1000 + t) for device in emu_run.LINK_NAMES}) for t in (1, 2)]
    link_rows, summaries = emu_run._links(plan, rows, baseline, 1.0)
    assert [(r["drops"], r["tail_drops"], r["aqm_drops"], r["ce_marks"]) for r in link_rows[:2]] == [(3, 1, 2, 3)] * 2
    assert summaries[0]["drops"] == 6 and summaries[0]["ce_marks"] == 6 and summaries[0]["bytes_sent"] == 2
    assert summaries[0]["drops_by_reason"] == {"tail": 2, "head": 0, "aqm": 4, "overlimit": 0, "policer": 0}


@pytest.mark.parametrize(
    ("pacing_gain", "cwnd_gain", "mode"),
    # every pair of gains the kernel's BBR showed in a 300 s run (bench (d))
    [
        (2.88671875, 2.88671875, "STARTUP"),
        (0.34375, 2.88671875, "DRAIN"),
        (1.25, 2.0, "PROBE_BW"),
        (0.75, 2.0, "PROBE_BW"),
        (1.0, 2.0, "PROBE_BW"),
        (1.0, 1.0, "PROBE_RTT"),
    ],
)
def test_the_kernels_bbr_mode_follows_from_its_gains(pacing_gain: float, cwnd_gain: float, mode: str) -> None:
    assert tcpinfo.bbr_mode(pacing_gain, cwnd_gain) == mode


def test_bbr_flows_record_the_mode_as_the_simulator_names_it() -> None:
    """The names the emulation derives (above) are the simulator's: a BBR flow's 2 s go
    through STARTUP to PROBE_BW."""
    modes = set(tcplab.run(TINY_SCENARIO.replace('"cubic"', '"bbr"')).flows["cc_state"].unique())
    assert {"STARTUP", "PROBE_BW"} <= modes <= {"STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"}, modes


def test_a_run_whose_path_reordered_packets_is_invalid() -> None:
    """One FIFO bottleneck never reorders: a kernel that saw reordering met the emulation's."""
    document = validate(prepare(TINY_SCENARIO))
    fields = {name: 0 for name in tcpinfo.TcpInfo.__dataclass_fields__}
    sample = {**fields, "t": 1.0, "bbr": None, "snd_cwnd": 10, "min_rtt_us": 22_000, "reord_seen": 3}
    raw = {
        "origin": 0.0,
        "flows": {0: [sample]},
        "qdisc": [],
        "qdisc_baseline": {device: emu_run.queue_sample([]) for device in emu_run.LINK_NAMES},
        "delay_line": {"lateness_p99_us": 10},
        "established": {},
        "connected_late": {},
        "interface_drops": {},
        "other_cpu_cores": 0.0,
    }
    reasons = emu_run._result(document, plan_for(document), raw, wall_s=0.0).summary["run"]["validity"]["reasons"]
    assert "the emulated path reordered packets: flow 0's kernel saw 3 reorderings" in reasons
    raw["flows"][0][0]["reord_seen"] = 0
    reasons = emu_run._result(document, plan_for(document), raw, wall_s=0.0).summary["run"]["validity"]["reasons"]
    assert not any("reordered" in reason for reason in reasons)


def _sample(acked: int, retransmits: int, unacked: int) -> dict[str, int]:
    return {"bytes_acked": acked, "total_retrans": retransmits, "unacked": unacked}


@pytest.mark.parametrize(
    ("payload", "valid"),
    [
        (1_000_000 + 10 * 1448, True),  # acked + the 10 segments unacknowledged at the end
        # a deep queue still draining at the end, and retransmissions: acked + 10 + 400 + 600 segments
        (1_000_000 + 1010 * 1448, True),
        (1_000_000 * 0.94, False),  # fewer bytes than were acknowledged: traffic bypassed the qdisc
        ((1_000_000 + 1010 * 1448) * 1.06, False),  # more than could have crossed it
    ],
)
def test_the_bottleneck_carries_what_was_acknowledged_and_at_most_what_was_resent_or_outstanding(
    payload: float, valid: bool
) -> None:
    """Two flows: 600 000 + 400 000 B acknowledged, 400 retransmissions, 10 + 600 segments
    unacknowledged; the qdisc counts each 1448 B payload as a 1500 B IP packet."""
    samples = [_sample(600_000, 0, 10), _sample(400_000, 400, 600)]
    reason = emu_run.bottleneck_accounting(round(payload * 1500 / 1448), samples, 1448)
    assert (reason is None) == valid, reason
    if not valid:
        assert reason.startswith("bottleneck carried about") and "1000000 B acknowledged" in reason


def test_an_invalid_emulation_run_exits_3(
    run_cli, tiny_result: tcplab.Result, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    summary = copy.deepcopy(tiny_result.summary)
    summary["run"]["validity"] = {
        "valid": False,
        "reasons": ["other processes used 1.24 cores during the run"],
        "other_cpu_cores": 1.24,
    }
    invalid = tcplab.Result(
        scenario=tiny_result.scenario, summary=summary, flows=tiny_result.flows, links=tiny_result.links, rtt=None
    )
    monkeypatch.setattr(tcplab.emu, "emulate", lambda *args, **kwargs: invalid)
    outcome = run_cli("emulate", "rtt-lens", "-o", tmp_path / "out", "--no-plots")
    assert outcome.code == 3, outcome.stderr
    assert "INVALID emulation run: other processes used 1.24 cores" in outcome.stdout
    assert (tmp_path / "out" / "summary.json").is_file()


def test_leftovers_of_a_dead_owner_are_found_those_of_a_live_one_are_not(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    state, temporary = tmp_path / "state", tmp_path / "tmp"
    state.mkdir()
    temporary.mkdir()
    monkeypatch.setattr(leftovers, "STATE_DIRECTORY", state)
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(leftovers, "_namespaces", lambda: ["tl0000aas", "tl0000bbs", "tl0000ccd", "other"])
    monkeypatch.setattr(leftovers, "_processes_in", lambda namespace: {})
    dead = subprocess.Popen(["true"])  # a pid that has exited
    dead.wait()
    leftovers.claim("tl0000aa")  # this process: alive
    (state / "tl0000bb.json").write_text(json.dumps({"pid": dead.pid, "start_ticks": 1}))
    # A live pid with another start time is a reused pid: its run is dead.
    (state / "tl0000cc.json").write_text(json.dumps({"pid": os.getpid(), "start_ticks": 1}))
    for prefix in ("tl0000aa", "tl0000bb"):
        (temporary / f"tcplab-{prefix}-x").mkdir()
    found = {left.prefix: left for left in leftovers.find()}
    assert set(found) == {"tl0000bb", "tl0000cc"}
    assert found["tl0000bb"].namespaces == ["tl0000bbs"] and found["tl0000bb"].directories == [temporary / "tcplab-tl0000bb-x"]
    assert found["tl0000cc"].owner == os.getpid() and found["tl0000cc"].namespaces == ["tl0000ccd"]


# --- on the kernel -------------------------------------------------------------------------


def _emulate_on_a_quiet_machine(overrides: dict) -> tcplab.Result:
    """The run, repeated up to LOAD_ATTEMPTS times while it is invalid because the machine was
    busy (LOAD_REASONS; validity is load-sensitive by design, docs/emulation.md); then the
    test is skipped with that reason: CI cannot control the load of a shared machine."""
    for _ in range(LOAD_ATTEMPTS):
        result = emulate("rtt-lens", overrides=overrides)
        reasons = result.summary["run"]["validity"]["reasons"]
        if not any(reason.startswith(LOAD_REASONS) for reason in reasons):
            return result
    pytest.skip(f"the machine was busy in {LOAD_ATTEMPTS} attempts: {'; '.join(reasons)}")


@needs_root
def test_cubic_and_bbr_on_the_kernel_fill_the_link_and_differ_in_delay() -> None:
    before = namespaces()
    results = {cc: _emulate_on_a_quiet_machine({**ACCEPTANCE, "flows.0.cc": cc}) for cc in ("cubic", "bbr")}
    for cc, result in results.items():
        flow, bottleneck = result.summary["flows"][0], result.summary["links"][0]
        # The run's own validity bound: 1 ms, plus one full packet and one ACK on the
        # 10 Mbit/s bottleneck, which every RTT sample includes (41.001 ms seen under load).
        assert abs(flow["min_rtt_ms"] - 40.0) <= 1.0 + (1500 + 66) * 8 / 10e6 * 1e3, f"{cc}: min RTT {flow['min_rtt_ms']} ms"
        assert bottleneck["utilization"] >= 0.9, f"{cc}: {bottleneck['utilization']:.1%} of the link"
        assert result.summary["run"]["validity"]["valid"], result.summary["run"]["validity"]
        assert result.flows["t_s"].max() > 14.0 and result.links.height > 0
    cubic, bbr = (results[cc].summary["flows"][0]["rtt_mean_ms"] for cc in ("cubic", "bbr"))
    assert cubic >= 3 * bbr, f"CUBIC mean RTT {cubic} ms vs BBR {bbr} ms"
    # BBR's own model: a bandwidth estimate at most the link's payload rate (10 Mbit/s ×
    # 1448/1500 = 9.65; the delay line's transmitter never passes more, where the token
    # bucket's bursts alone gave 1 % more), and a min RTT of 40 ms plus the serialization of
    # its two-segment GSO bursts (2 × 1.2 ms): the simulator's BBR has 9.65 and 42.47.
    late = results["bbr"].flows.filter(pl.col("t_s") > 5)
    bw, min_rtt = late["bbr_bw_mbps"].median(), late["bbr_min_rtt_ms"].median()
    assert 8.0 < bw < 9.75 and 41.0 < min_rtt < 43.5, (bw, min_rtt)
    assert results["cubic"].flows["bbr_bw_mbps"].null_count() == results["cubic"].flows.height
    assert namespaces() == before and not emulation_processes()


@needs_root
def test_applied_settings_are_what_the_connection_has() -> None:
    applied = {"duration": "1s", "tcp.mss": 1000, "tcp.initial_cwnd": 50, "tcp.ecn": True, "tcp.sack": False, "tcp.ack_every": 1}
    result = emulate("rtt-lens", overrides=applied)
    assert result.summary["run"]["negotiated"] == [
        {"mss": 1000, "initial_cwnd": 50, "sack": False, "ecn": True, "timestamps": True}
    ]
    assert not [r for r in result.summary["run"]["validity"]["reasons"] if "the connection has" in r]
    assert result.scenario["record"]["rtt"] is False and result.rtt is None  # what was in effect
    assert result.scenario["tcp"]["mss"] == 1000


@needs_root
def test_an_algorithm_the_kernel_lacks_is_refused_before_anything_is_built() -> None:
    before = namespaces()
    with pytest.raises(ScenarioError, match=r"flows.0.cc: 'vegas' is not in this kernel; available: .*cubic"):
        emulate("rtt-lens", overrides={"flows.0.cc": "vegas"})
    assert namespaces() == before


@needs_root
def test_a_failed_setup_removes_everything_it_built(monkeypatch: pytest.MonkeyPatch) -> None:
    before = namespaces()
    real_plan = emu_plan.plan_for

    def broken(document, prefix=None):
        plan = real_plan(document, prefix)
        plan.setup.insert(6, ["ip", "-n", plan.namespaces["router"], "link", "set", "no-such-device", "up"])
        return plan

    monkeypatch.setattr(emu_plan, "plan_for", broken)
    with pytest.raises(EmulationError, match="no-such-device"):
        emu_run.emulate("rtt-lens", overrides={"duration": "2s"})
    assert namespaces() == before and not emulation_processes() and not leftovers.find()


@needs_root
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_cleans_up_and_writes_nothing(sent: signal.Signals, tmp_path: Path) -> None:
    before = namespaces()
    command = [sys.executable, "-m", "tcplab", "emulate", "rtt-lens", "--set", "duration=30s", "-o", str(tmp_path / "out")]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while len(namespaces() - before) < 3 or not emulation_processes():
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if process.stderr else ""
        time.sleep(0.1)
    time.sleep(1.0)  # the flows are running
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130 and stderr.strip().endswith("interrupted"), stderr
    assert namespaces() == before and not emulation_processes() and not leftovers.find()
    assert not (tmp_path / "out").exists()


def _start_emulation(tmp_path: Path, name: str) -> tuple[subprocess.Popen[str], str]:
    """Starts a 30-s `tcplab emulate` in a subprocess; returns it and its prefix once its
    flow runs (a sender in its senders' namespace)."""
    before = namespaces()
    process = subprocess.Popen(
        [sys.executable, "-m", "tcplab", "emulate", "rtt-lens", "--set", "duration=30s", "-o", str(tmp_path / name)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while True:
        assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if process.stderr else ""
        new = namespaces() - before
        if len(new) == 3:
            prefix = min(new)[:-1]
            if any("traffic send" in (running(pid) or "") for pid in processes_in(f"{prefix}s")):
                return process, prefix
        time.sleep(0.1)


def _start_and_kill_an_emulation(tmp_path: Path) -> tuple[str, list[int]]:
    """Starts `tcplab emulate`, SIGKILLs it while its flow runs, checks what it left behind
    and returns the run's prefix and the processes in its namespaces."""
    process, prefix = _start_emulation(tmp_path, "killed")
    process.kill()
    process.wait()
    pids = [pid for role in "srd" for pid in processes_in(f"{prefix}{role}")]
    left = emulation_leftovers(prefix, pids)
    assert len(left["namespaces"]) == 3 and left["directories"] and left["owner file"], left
    tools = ("tcplab.emu.delayline", "tcplab.emu.traffic receive", "tcplab.emu.traffic send")
    assert {tool for args in left["processes"] for tool in tools if tool in args} == set(tools), left
    return prefix, pids


def _nothing_left(prefix: str, pids: list[int]) -> bool:
    return not any(emulation_leftovers(prefix, pids).values())


@needs_root
def test_cleanup_removes_what_a_killed_run_left_and_leaves_a_live_run_alone(tmp_path: Path) -> None:
    before = namespaces()
    live, live_prefix = _start_emulation(tmp_path, "live")
    try:
        # The killed run started while the live one ran: its own start left the live run alone.
        prefix, pids = _start_and_kill_an_emulation(tmp_path)
        cleanup = subprocess.run(
            [sys.executable, "-m", "tcplab", "emulate", "--cleanup"], capture_output=True, text=True, timeout=60
        )
        assert cleanup.returncode == 0, cleanup.stderr
        assert cleanup.stdout.startswith(f"removed run {prefix} (owner pid ") and "3 processes" in cleanup.stdout
        assert cleanup.stdout.count("removed run") == 1, cleanup.stdout  # not the live run
        assert _nothing_left(prefix, pids), emulation_leftovers(prefix, pids)
        assert {f"{live_prefix}{role}" for role in "srd"} <= namespaces() and live.poll() is None
    finally:
        live.send_signal(signal.SIGINT)
        live.wait(timeout=30)
    assert namespaces() == before and not emulation_processes()


@needs_root
def test_the_next_emulation_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    prefix, pids = _start_and_kill_an_emulation(tmp_path)
    before = namespaces()
    outcome = subprocess.run(
        [
            sys.executable,
            "-m",
            "tcplab",
            "emulate",
            "rtt-lens",
            "--set",
            "duration=1s",
            "-o",
            str(tmp_path / "next"),
            "--no-plots",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert outcome.returncode in (0, 3), outcome.stderr  # 3: invalid on a busy machine
    assert f"warning: removed what a killed emulation left behind: run {prefix} (owner pid " in outcome.stderr
    assert _nothing_left(prefix, pids), emulation_leftovers(prefix, pids)
    assert namespaces() == before - {f"{prefix}{role}" for role in "srd"} and not emulation_processes()
