"""Messages about bad input: one line on stderr naming the key, what is wrong and what is
allowed, exit 2, no traceback; values beyond a quantity's range or physically impossible
refused, merely unusual ones run with one `warning:` line (docs/scenario-format.md, "Ranges").

The reproducers are `tcplab` command lines; most run in this process (`run_cli`), those that
need the real stderr (warnings) or a time bound (a FIFO) in a subprocess."""

from __future__ import annotations

import os
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

import tcplab
from tcplab import ScenarioWarning, scenario, studies

from .conftest import REPOSITORY, WIFI_SCENARIO, CliOutcome

TCPLAB = REPOSITORY / ".venv" / "bin" / "tcplab"
SHORT = ("--set", "duration=0.2s")


def assert_one_line_error(outcome: CliOutcome, expected: str) -> None:
    assert outcome.code == 2, outcome
    assert outcome.stderr.startswith(f"error: {expected}"), outcome.stderr
    assert outcome.stderr.count("\n") == 1 and "Traceback" not in outcome.stderr, outcome.stderr


# (--set assignment on rtt-lens, the error's start)
# fmt: off
REFUSED = [
    # A type mismatch says what was expected and what was found, with no serde words.
    ("duration=5", 'duration: expected a duration written as a string with a unit (ns, us, ms, s or min), e.g. "10ms", found the integer 5'),
    ("flows.0.cc=5", "flows.0.cc: expected an algorithm name (newreno, cubic, bbr, "),
    ('flows.0.cc={kind="cubic",hystart=5}', 'flows.0.cc.hystart: cubic: expected true, false or "hystart++", found the integer 5'),
    ('flows.0.cc={kind="cubic",beta="high"}', 'flows.0.cc.beta: cubic: expected a number, found the string "high"'),
    ("tcp.initial_ssthresh=1.5", 'tcp.initial_ssthresh: expected "inf" or a whole number of packets from 0 to 4294967295, found the number 1.5'),
    ("tcp.mss=-1", "tcp.mss: expected a whole number from 0 to 4294967295, found the integer -1"),
    ("tcp.recovery=rack", 'tcp.recovery: unknown value "rack"; allowed: rack-tlp, rfc6675'),
    ("tcp.undo=maybe", 'tcp.undo: expected true or false, found the string "maybe"'),
    # The key the user set is blamed.
    ("flows.0.src=r0", "flows.0.src: \"r0\" is this flow's default dst; set dst too, or a src other than \"r0\""),
    # Beyond a quantity's range: refused, never clamped.
    ("topology.bottleneck.rate=99999999999999999999Gbps", 'topology.bottleneck.rate: "99999999999999999999Gbps" is too large; allowed: at most 1000000000Gbps'),
    ("duration=99999999999s", 'duration: "99999999999s" is too large; allowed: at most 1000000000s'),
    ("tcp.snd_buf=99999999999GB", 'tcp.snd_buf: "99999999999GB" is too large; allowed: at most 1000000000GB'),
    ("topology.bottleneck.buffer=99999999999pkt", 'topology.bottleneck.buffer: "99999999999pkt" is too large; allowed: at most 4294967295pkt'),
    ("tcp.initial_cwnd=99999999999", "tcp.initial_cwnd: expected a whole number from 0 to 4294967295, found the integer 99999999999"),
    ("topology.bottleneck.loss=1e400", "topology.bottleneck.loss: "),
    # Physically impossible.
    ("tcp.mss=70000", "tcp.mss: 70000 is out of range; allowed: 1 to 65483 bytes"),
    ("topology.bottleneck.mtu=100000", "topology.bottleneck.mtu: 100000 is out of range; allowed: 68 to 65535 bytes"),
    ("tcp.rcv_buf=4GiB", "tcp.rcv_buf: 4GiB is more than TCP can advertise; allowed: one segment to 1GiB"),
    ('topology.wifi={standard="802.11n",mcs=4,max_ampdu="1GB"}', "topology.wifi.max_ampdu: 1GB is above what 802.11n allows; allowed: 0B (off) to 65535B"),
    ('topology.wifi={standard="802.11n",mcs=4,max_queue_delay="0ms"}', "topology.wifi.max_queue_delay: 0s would drop every packet before it is sent"),
    # Queue disciplines and token buckets.
    ('topology.bottleneck.queue={kind="codel",target_ms=-1}', "topology.bottleneck.queue.target_ms: -1 is out of range; allowed: 0.001 to 2000000 ms"),
    ('topology.bottleneck.queue={kind="fq_codel",quantum=0}', "topology.bottleneck.queue.quantum: 0 is out of range; allowed: 256 to 1048576 bytes"),
    ('topology.bottleneck.queue={kind="pie",tupdate_ms=0}', "topology.bottleneck.queue.tupdate_ms: 0 is out of range; allowed: 0.001 to 4294967.295 ms"),
    ('topology.bottleneck.queue={kind="red",min_th=50,max_th=20}', "topology.bottleneck.queue.min_th: 50 is above max_th 20; allowed: min_th ≤ max_th"),
    ('topology.bottleneck.queue={kind="codel",limit=5}', 'topology.bottleneck.queue: limit: unknown key "limit"; allowed: target_ms, interval_ms, ecn, ce_threshold_ms'),
    ('topology.bottleneck={rate="10Mbps",delay="20ms",queue="codel",ecn_threshold="1ms"}', 'topology.bottleneck.ecn_threshold: ecn_threshold does not apply to queue "codel", which marks by its own `ecn` parameter'),
    ('topology.bottleneck.shaper={rate="0Mbps",burst="3KB"}', 'topology.bottleneck.shaper.rate: must be > 0, e.g. "5Mbps"'),
    ('topology.bottleneck.policer={rate="5Mbps",burst="1KB"}', "topology.bottleneck.policer.burst: 1KB is smaller than one packet; allowed: at least 1500 B (the link's mtu)"),
    ('topology.wifi={standard="802.11n",mcs=4,queue="codel"}', 'topology.wifi.queue: "codel" is not a buffer size'),
]
# fmt: on


@pytest.mark.parametrize(("assignment", "expected"), REFUSED, ids=[a for a, _ in REFUSED])
def test_bad_values_are_one_line_errors_naming_the_key(
    run_cli: Callable[..., CliOutcome], assignment: str, expected: str
) -> None:
    outcome = run_cli("run", "rtt-lens", "--set", assignment, "--no-plots")
    assert_one_line_error(outcome, expected)
    for internal in ("untagged", "variant", " u32", " u64", " f64", "a a "):
        assert internal not in outcome.stderr


MMWAVE = REPOSITORY / "scenarios" / "mmwave-blockage.toml"


@pytest.mark.parametrize(
    ("assignment", "expected"),
    [
        (
            "topology.ues.1.position=[1.0e7,0.0,1.5]",
            "topology.ues.1.position: the UE is 10000000 m from the eNB at t = 0.000 s; allowed: within 5000 m",
        ),
        ("topology.enb.tx_power_dbm=1e6", "topology.enb.tx_power_dbm: 1000000 dBm is out of range; allowed: -30 to 60 dBm"),
    ],
)
def test_a_cell_out_of_physical_range_is_refused(run_cli: Callable[..., CliOutcome], assignment: str, expected: str) -> None:
    assert_one_line_error(run_cli("run", MMWAVE, "--set", assignment, "--no-plots"), expected)


def test_zero_sizes_print_as_zero_bytes() -> None:
    wifi = tcplab.resolve(WIFI_SCENARIO)["topology"]["wifi"]
    assert wifi["max_amsdu"] == "0B"
    assert tcplab.resolve(WIFI_SCENARIO, {"topology.wifi.max_ampdu": "0KiB"})["topology"]["wifi"]["max_ampdu"] == "0B"


def special_files(tmp_path: Path) -> list[tuple[str, str]]:
    """(path, the error's message) of things that are not scenario files."""
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone.toml")
    return [
        (f"{tmp_path}/dir", "is a directory, not a scenario file"),
        (f"{tmp_path}/dir/", "is a directory, not a scenario file"),
        (f"{tmp_path}/fifo", "is a FIFO (named pipe), not a scenario file"),
        (f"{tmp_path}/loop", "symbolic link loop"),
        (f"{tmp_path}/dangling", f"dangling symbolic link (to {tmp_path}/gone.toml)"),
        ("/dev/null", "is a character device, not a scenario file"),
    ]


def test_a_path_that_is_not_a_file_says_what_it_is(tmp_path: Path, run_cli: Callable[..., CliOutcome]) -> None:
    for path, message in special_files(tmp_path):
        if "FIFO" in message:  # in a subprocess with a time bound: reading it would block
            process = subprocess.run([TCPLAB, "run", path, "--no-plots"], capture_output=True, text=True, timeout=60)
            outcome = CliOutcome(process.returncode, process.stdout, process.stderr)
        else:
            outcome = run_cli("run", path, "--no-plots")
        assert outcome.code == 2 and outcome.stderr == f"error: {path}: {message}\n", outcome.stderr


def test_a_path_object_naming_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    # A Path is always opened as a file: without blocking, then refused for what it is.
    with pytest.raises(tcplab.ScenarioError, match=r"fifo: is a FIFO \(named pipe\), not a scenario file$"):
        scenario.load(tmp_path / "fifo")


def test_a_study_name_wins_over_a_directory_of_the_same_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rtt-lens").mkdir()  # e.g. `tcplab run rtt-lens -o rtt-lens` wrote it
    assert scenario.load("rtt-lens")["name"] == "rtt-lens"


def test_an_unusual_value_runs_with_one_warning_line(tmp_path: Path) -> None:
    process = subprocess.run(
        [TCPLAB, "run", "rtt-lens", *SHORT, "--set", "tcp.mss=100", "--no-plots", "-o", tmp_path / "run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stderr
    warning = "warning: tcp.mss: 100 B is below the IPv4 default MSS of 536 B (RFC 9293 §3.7.1)\n"
    assert process.stderr.count(warning) == 1, process.stderr
    assert "Traceback" not in process.stderr and "UserWarning" not in process.stderr


def test_library_users_get_a_scenario_warning_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario, "_REPORTED", set())
    unusual = {"topology.bottleneck.delay": "3s", "duration": "5s"}
    with pytest.warns(ScenarioWarning, match=r"^topology\.bottleneck\.delay: 3s one way: the run \(5s\) ends before"):
        tcplab.resolve("rtt-lens", unusual)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        tcplab.resolve("rtt-lens", unusual)
    assert not [w for w in again if issubclass(w.category, ScenarioWarning)], "reported twice"


def test_a_run_checks_its_scenario_once_and_still_warns_and_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """tcplab.run leaves every check to the core's run, which builds the network once: no
    separate validation pass (that built it a second time) — yet the same warnings and errors."""

    def no_second_pass(_: str) -> None:
        raise AssertionError("tcplab.run validated the scenario before running it")

    monkeypatch.setattr(tcplab._core, "validate", no_second_pass)
    monkeypatch.setattr(scenario, "_REPORTED", set())
    unusual = {"topology.bottleneck.delay": "3s", "duration": "5s", "sample_interval": "1s"}
    with pytest.warns(ScenarioWarning, match=r"^topology\.bottleneck\.delay: 3s one way: the run \(5s\) ends before"):
        tcplab.run("rtt-lens", overrides=unusual)
    unconnected = {
        "topology": {
            "kind": "explicit",
            "nodes": [{"name": n} for n in "abcd"],
            "links": [
                {"a": "a", "b": "b", "rate": "1Mbps", "delay": "1ms"},
                {"a": "c", "b": "d", "rate": "1Mbps", "delay": "1ms"},
            ],
        },
        "flows": [{"cc": "cubic", "src": "a", "dst": "d"}],
    }
    with pytest.raises(tcplab.ScenarioError, match=r"^flows\.0\.dst: .*cannot be reached"):
        tcplab.run({"duration": "1s", **unconnected})


def test_a_warning_prints_as_one_line() -> None:
    code = "import warnings, tcplab.scenario as s; warnings.warn('k: unusual', s.ScenarioWarning)"
    process = subprocess.run([REPOSITORY / ".venv" / "bin" / "python", "-c", code], capture_output=True, text=True, timeout=60)
    assert process.stderr == "warning: k: unusual\n"


def test_no_shipped_scenario_or_study_case_is_refused_or_warned_about() -> None:
    sources = sorted(str(p) for p in (REPOSITORY / "scenarios").glob("*.toml"))
    sources += [str(studies.find(name).path) for name in studies.all_studies()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScenarioWarning)
        for source in sources:
            cases = studies.cases_of(scenario._read_toml_file(Path(source)), source)
            for name in [None, *cases]:
                scenario._REPORTED.clear()
                tcplab.resolve(source if name is None else f"{source}{studies.CASE_SEPARATOR}{name}")
