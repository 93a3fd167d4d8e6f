"""tcplab.scenario: loading scenarios from every kind of source, `--set` parsing, dotted
overrides, TOML output, and the validator's one-line errors for a table of bad scenarios."""

from __future__ import annotations

import datetime
import tomllib
from pathlib import Path
from typing import Any

import pytest

import tcplab
from tcplab import ScenarioError, studies
from tcplab.scenario import (
    apply_overrides,
    load,
    parse_assignment,
    parse_value,
    prepare,
    resolve,
    to_json,
    to_toml,
    validate,
)

from .conftest import TINY_SCENARIO

# --- --set values and assignments ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bbr", "bbr"),
        ("5s", "5s"),
        ("10Mbps", "10Mbps"),
        ("330pkt", "330pkt"),
        ("left->right", "left->right"),
        ("false", False),
        ("true", True),
        ("42", 42),
        ("0.8", 0.8),
        ("1e3", 1000.0),
        ("-3", -3),
        ('"quoted text"', "quoted text"),
        ("'literal'", "literal"),
        ('"true"', "true"),
        ("[1, 2, 3]", [1, 2, 3]),
        ('["1ms", "10ms"]', ["1ms", "10ms"]),
        ('{kind="cubic",beta=0.8}', {"kind": "cubic", "beta": 0.8}),
        ('{ kind = "bbr" }', {"kind": "bbr"}),
        ("inf", "inf"),  # initial_ssthresh = "inf" is a string in scenarios
        ("nan", "nan"),
        ("2024-01-01", "2024-01-01"),  # dates are not scenario values
        ("", ""),
        ("two words", "two words"),
        ("{kind=cubic}", "{kind=cubic}"),  # not TOML: kept as written, the validator says why
    ],
)
def test_set_values_are_toml_when_they_parse_and_text_otherwise(text: str, expected: Any) -> None:
    assert parse_value(text) == expected


@pytest.mark.parametrize(
    ("argument", "key", "value"),
    [
        ("flows.0.cc=bbr", "flows.0.cc", "bbr"),
        ("duration=5s", "duration", "5s"),
        ("tcp.sack=false", "tcp.sack", False),
        ('flows.0.cc={kind="cubic",beta=0.8}', "flows.0.cc", {"kind": "cubic", "beta": 0.8}),
        (" tcp.mss = 9000 ", "tcp.mss", 9000),
        ("name=a=b", "name", "a=b"),
        ("name=", "name", ""),
    ],
)
def test_assignments_split_at_the_first_equals_sign(argument: str, key: str, value: Any) -> None:
    assert parse_assignment(argument) == (key, value)


@pytest.mark.parametrize("argument", ["flows.0.cc", "=bbr", " =1", ""])
def test_assignments_without_a_key_and_value_are_errors(argument: str) -> None:
    with pytest.raises(ScenarioError, match="expected KEY=VALUE") as error:
        parse_assignment(argument)
    assert "\n" not in str(error.value)


# --- dotted overrides ----------------------------------------------------------------------

DOCUMENT = {
    "duration": "2s",
    "topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps"}},
    "flows": [{"cc": "cubic"}, {"cc": "newreno", "start": "1s"}],
}


@pytest.mark.parametrize(
    ("overrides", "expected_changes"),
    [
        ({"duration": "5s"}, {"duration": "5s"}),
        ({"flows.1.cc": "bbr"}, {"flows": [{"cc": "cubic"}, {"cc": "bbr", "start": "1s"}]}),
        (
            {"topology.bottleneck.loss": 0.01},
            {"topology": {"kind": "dumbbell", "bottleneck": {"rate": "10Mbps", "loss": 0.01}}},
        ),
        ({"record.rtt": True}, {"record": {"rtt": True}}),
        ({"tcp.x.y": 1}, {"tcp": {"x": {"y": 1}}}),
        ({"flows": [{"cc": "bbr"}]}, {"flows": [{"cc": "bbr"}]}),
        (
            {"flows.0": {"cc": "bbr", "stop": "1s"}},
            {"flows": [{"cc": "bbr", "stop": "1s"}, DOCUMENT["flows"][1]]},
        ),
    ],
)
def test_overrides_set_nested_keys_and_create_missing_tables(overrides: dict[str, Any], expected_changes: dict[str, Any]) -> None:
    assert apply_overrides(DOCUMENT, overrides) == {**DOCUMENT, **expected_changes}


def test_overrides_apply_in_order_and_later_keys_see_earlier_ones() -> None:
    result = apply_overrides(DOCUMENT, {"flows.0.cc": {"kind": "cubic"}, "flows.0.cc.beta": 0.8})
    assert result["flows"][0]["cc"] == {"kind": "cubic", "beta": 0.8}


def test_overrides_copy_and_leave_their_inputs_alone() -> None:
    value = {"kind": "cubic"}
    result = apply_overrides(DOCUMENT, {"flows.0.cc": value, "flows.0.cc.beta": 0.8})
    assert value == {"kind": "cubic"}
    assert DOCUMENT["flows"][0] == {"cc": "cubic"}
    result["topology"]["bottleneck"]["rate"] = "1Mbps"
    assert DOCUMENT["topology"]["bottleneck"]["rate"] == "10Mbps"


@pytest.mark.parametrize(
    ("path", "message_start", "fragment"),
    [
        ("flows.2.cc", "flows.2: ", "index 2 is past the end of flows (length 2)"),
        ("flows.7", "flows.7: ", "past the end"),
        ("flows.cc", "flows.cc: ", "flows is an array; use an index, e.g. flows.0"),
        ("flows.-1.cc", "flows.-1: ", "is an array"),
        ("duration.unit", "duration.unit: ", "duration is a string ('2s'), not a table"),
        ("flows.0.cc.kind", "flows.0.cc.kind: ", "flows.0.cc is a string"),
        ("topology.bottleneck.rate.x.y", "topology.bottleneck.rate.x: ", "not a table"),
        ("a..b", "a..b: ", "empty key"),
        (".duration", ".duration: ", "empty key"),
        ("duration.", "duration.: ", "empty key"),
    ],
)
def test_bad_override_paths_are_one_line_errors_naming_the_path(path: str, message_start: str, fragment: str) -> None:
    with pytest.raises(ScenarioError) as error:
        apply_overrides(DOCUMENT, {path: 1})
    message = str(error.value)
    assert message.startswith(message_start), message
    assert fragment in message
    assert "\n" not in message


def test_index_into_an_empty_array_is_past_the_end() -> None:
    with pytest.raises(ScenarioError, match=r"^flows\.0: index 0 is past the end of flows \(length 0\)"):
        apply_overrides({"flows": []}, {"flows.0.cc": "bbr"})


def test_keyword_settings_use_double_underscores_for_dots() -> None:
    document = prepare(TINY_SCENARIO, {"duration": "3s"}, flows__0__cc="bbr", seed=5)
    assert (document["duration"], document["flows"][0]["cc"], document["seed"]) == ("3s", "bbr", 5)


def test_keyword_settings_win_over_the_overrides_mapping() -> None:
    assert prepare(TINY_SCENARIO, {"duration": "3s"}, duration="4s")["duration"] == "4s"


# --- loading -------------------------------------------------------------------------------


def test_a_scenario_loads_from_a_path_a_string_path_toml_text_and_a_dict(
    tiny_scenario: Path,
) -> None:
    expected = tomllib.loads(TINY_SCENARIO)
    assert load(tiny_scenario) == expected
    assert load(str(tiny_scenario)) == expected
    assert load(TINY_SCENARIO) == expected
    assert load(expected) == expected


def test_a_dict_is_copied_not_shared() -> None:
    original = tomllib.loads(TINY_SCENARIO)
    load(original)["flows"][0]["cc"] = "bbr"
    assert original["flows"][0]["cc"] == "cubic"


def test_a_study_name_loads_the_study_file_without_its_study_table() -> None:
    document = tomllib.loads(studies.find("rtt-lens").path.read_text())
    document.pop("study", None)
    assert load("rtt-lens") == document


def test_a_file_in_the_working_directory_wins_over_a_study_of_the_same_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("rtt-lens").write_text(TINY_SCENARIO)
    assert load("rtt-lens")["name"] == "tiny"


@pytest.mark.parametrize("source", ["missing.toml", "no-such-study"])
def test_an_unknown_source_is_a_one_line_error_listing_the_studies(source: str) -> None:
    with pytest.raises(ScenarioError) as error:
        load(source)
    message = str(error.value)
    assert message.startswith(f"{source}: no such scenario file or study")
    assert "rtt-lens" in message and "\n" not in message


def test_a_missing_path_object_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"missing\.toml: cannot read: No such file"):
        load(tmp_path / "missing.toml")


def test_a_toml_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('name = "x"\nduration = \n')
    with pytest.raises(ScenarioError) as error:
        load(path)
    message = str(error.value)
    assert message.startswith(f"{path}: invalid TOML: ") and "line 2" in message
    assert "\n" not in message


def test_a_long_toml_text_is_not_mistaken_for_a_path() -> None:
    text = TINY_SCENARIO + f"\n# {'x' * 5000}\n"
    assert load(text)["name"] == "tiny"


@pytest.mark.parametrize(
    ("value", "path"),
    [
        (float("inf"), "tcp.initial_ssthresh"),
        (float("nan"), "tcp.initial_ssthresh"),
        (datetime.date(2024, 1, 1), "tcp.initial_ssthresh"),
    ],
)
def test_values_json_cannot_carry_are_named_by_path(value: Any, path: str) -> None:
    with pytest.raises(ScenarioError, match=rf"^{path}: .* is not a scenario value"):
        to_json({"tcp": {"initial_ssthresh": value}})


def test_toml_output_round_trips_without_nulls_and_with_a_header() -> None:
    document = {
        "name": "x",
        "stop": None,
        "flows": [{"cc": {"kind": "cubic", "beta": 0.7}, "bytes": None}],
    }
    text = to_toml(document, header="first line\nsecond line")
    assert text.startswith("# first line\n# second line\n")
    assert tomllib.loads(text) == {"name": "x", "flows": [{"cc": {"kind": "cubic", "beta": 0.7}}]}


# --- validation by the Rust core -----------------------------------------------------------


def test_resolving_fills_in_every_default() -> None:
    resolved = resolve(TINY_SCENARIO)
    assert resolved["name"] == "tiny"
    assert resolved["seed"] == 1
    assert resolved["tcp"]["mss"] == 1448
    assert resolved["flows"][0]["src"] == "s0" and resolved["flows"][0]["dst"] == "r0"
    assert resolved["topology"]["bottleneck"]["queue"] == "droptail"
    assert validate(resolved) == resolved, "a resolved scenario resolves to itself"


def test_resolving_applies_overrides() -> None:
    resolved = tcplab.resolve(TINY_SCENARIO, {"flows.0.cc": "bbr"}, duration="1s")
    assert resolved["flows"][0]["cc"]["kind"] == "bbr"
    assert resolved["duration"] == "1s"


def test_the_ns3_stack_takes_ns3_defaults_for_what_a_scenario_leaves_out() -> None:
    text = TINY_SCENARIO.replace('cc = "cubic"', 'cc = "hybla"\n[[flows]]\ncc = "cubic"\ntcp = { stack = "linux" }')
    resolved = resolve(text + '[tcp]\nstack = "ns3"\nsnd_buf = "1MiB"\n')
    ns3, linux = (flow["tcp"] for flow in resolved["flows"])
    # ns-3 3.44's attribute defaults: SegmentSize 536, MinRto 1 s, DelAckTimeout 200 ms, RcvBufSize 128 KiB
    assert (ns3["stack"], ns3["mss"], ns3["min_rto"], ns3["delack_timeout"], ns3["rcv_buf"]) == (
        "ns3",
        536,
        "1s",
        "200ms",
        "128KiB",
    )
    assert (ns3["gso"], ns3["recovery"], ns3["undo"], ns3["rto"]) == (False, "rfc6675", False, "rfc6298")
    assert ns3["snd_buf"] == "1MiB", "what the scenario sets wins"
    assert resolved["flows"][0]["cc"] == {"kind": "hybla", "rtt0_ms": 50}, "ns-3's TcpHybla RRTT"
    assert (linux["stack"], linux["mss"], linux["gso"], linux["snd_buf"]) == ("linux", 1448, True, "1MiB")
    assert validate(resolved) == resolved, "a resolved scenario resolves to itself"


def test_the_ns3_release_the_ns3_stack_follows_changes_its_bbr() -> None:
    """tcp.ns3_version = "3.35" runs 3.35's TcpBbr (no 1 % pacing margin): another result."""
    text = TINY_SCENARIO.replace('cc = "cubic"', 'cc = "bbr"') + '[tcp]\nstack = "ns3"\n'
    assert resolve(text)["tcp"]["ns3_version"] == "3.44"
    runs = {v: tcplab.run(text, overrides={"tcp.ns3_version": v}).summary["flows"][0] for v in ("3.44", "3.35")}
    assert runs["3.35"]["bytes_sent"] != runs["3.44"]["bytes_sent"]


@pytest.mark.parametrize(
    ("tcp", "cc", "expected"),
    [
        ('stack = "ns4"', '"cubic"', 'flows.0.tcp.stack: unknown value "ns4"; allowed: linux, ns3'),
        (
            'stack = "ns3"\ngso = true',
            '"cubic"',
            'flows.0.tcp.gso: true needs tcp.stack = "linux": ns-3 sends one segment at a time',
        ),
        ('stack = "ns3"\nrecovery = "rack-tlp"', '"cubic"', 'flows.0.tcp.recovery: "rack-tlp" needs tcp.stack = "linux"'),
        (
            'stack = "ns3"',
            '"scalable"',
            'flows.0.cc: scalable has no ns-3 variant (tcp.stack = "ns3"); allowed: newreno, cubic, bbr',
        ),
        (
            'stack = "ns3"',
            '{ kind = "siad", variant = "linux" }',
            'flows.0.cc.variant: variant = "linux" needs tcp.stack = "linux"',
        ),
        ('stack = "ns3"', '"bbr3"', "flows.0.cc: bbr3 has no ns-3 variant"),
        (
            'stack = "linux"',
            '{ kind = "siad", variant = "ns3-study" }',
            'flows.0.cc.variant: variant = "ns3-study" needs tcp.stack = "ns3"',
        ),
        ('stack = "ns3"', '{ kind = "bbr", lt_bw = true }', 'flows.0.cc.lt_bw: lt_bw = true needs tcp.stack = "linux"'),
        ('stack = "linux"\nns3_version = "3.35"', '"bbr"', 'flows.0.tcp.ns3_version: "3.35" needs tcp.stack = "ns3"'),
        ('stack = "ns3"\nns3_version = "3.36"', '"bbr"', 'flows.0.tcp.ns3_version: unknown value "3.36"; allowed: 3.44, 3.35'),
        (
            'stack = "ns3"',
            '{ kind = "cubic", hystart = "hystart++" }',
            'flows.0.cc.hystart: hystart = "hystart++" needs tcp.stack',
        ),
    ],
)
def test_what_the_chosen_stack_cannot_do_is_a_one_line_error(tcp: str, cc: str, expected: str) -> None:
    text = TINY_SCENARIO.replace('cc = "cubic"', f"cc = {cc}\ntcp = {{ {tcp.replace(chr(10), ', ')} }}")
    with pytest.raises(ScenarioError) as error:
        resolve(text)
    message = str(error.value)
    assert message.startswith(expected) and "\n" not in message, message


def test_scenario_error_is_a_value_error() -> None:
    assert issubclass(ScenarioError, ValueError)


def test_every_study_is_a_valid_scenario_with_a_description() -> None:
    assert {"rtt-lens", "deep-buffer"} <= set(studies.all_studies())
    for study in studies.all_studies().values():
        assert study.description and not study.description.startswith("#")
        assert resolve(study.name)["name"] == study.name


def test_the_rtt_lens_study_is_10_bdp_of_buffer_on_a_40ms_path() -> None:
    intended = resolve(
        {
            "name": "rtt-lens",
            "duration": "21s",
            "record": {"rtt": True},
            "tcp": {"ack_every": 2},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "330pkt"},
                "access": {"rate": "1Gbps", "delay": "0s"},
            },
            "flows": [{"cc": "cubic"}],
        }
    )
    assert resolve("rtt-lens") == intended


# Bad scenarios: (id, document, where the error must point, text the message must contain).
# Each document is a valid base with one thing broken.
DUMBBELL = tomllib.loads(TINY_SCENARIO)
EXPLICIT = {
    "duration": "2s",
    "topology": {
        "kind": "explicit",
        "nodes": [{"name": "h1"}, {"name": "r1", "role": "router"}, {"name": "h2"}],
        "links": [
            {"a": "h1", "b": "r1", "rate": "100Mbps", "delay": "1ms", "buffer": "100pkt"},
            {"a": "r1", "b": "h2", "rate": "10Mbps", "delay": "10ms", "buffer": "50pkt"},
        ],
    },
    "flows": [{"cc": "newreno", "src": "h1", "dst": "h2"}],
}


def dumbbell(**overrides: Any) -> dict[str, Any]:
    return apply_overrides(DUMBBELL, {key.replace("__", "."): v for key, v in overrides.items()})


def explicit(**overrides: Any) -> dict[str, Any]:
    return apply_overrides(EXPLICIT, {key.replace("__", "."): v for key, v in overrides.items()})


def without(document: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != key}


NODES_WITH_AN_ISLAND = [*EXPLICIT["topology"]["nodes"], {"name": "h3"}]

# fmt: off
MALFORMED = [
    ("unknown top-level key", dumbbell(colour="red"), "colour", "colour"),
    ("unknown tcp key", dumbbell(tcp__bogus=1), "tcp", "bogus"),
    ("unknown link key", dumbbell(topology__bottleneck__speed="1Mbps"), "topology.bottleneck", "speed"),
    ("unknown record key", dumbbell(record__cwnd=True), "record", "cwnd"),
    ("wrong type: string for boolean", dumbbell(tcp__sack="yes"), "tcp.sack", "yes"),
    ("wrong type: number for duration", dumbbell(duration=5), "duration", ""),
    ("wrong type: array for rate", dumbbell(topology__bottleneck__rate=[10]), "topology.bottleneck.rate", ""),
    ("bad rate unit", dumbbell(topology__bottleneck__rate="10Mbs"), "topology.bottleneck.rate", "10Mbs"),
    ("bad size unit", dumbbell(tcp__snd_buf="6MiBB"), "tcp.snd_buf", "6MiBB"),
    ("bad duration unit", dumbbell(duration="2 fortnights"), "duration", ""),
    ("negative rate", dumbbell(topology__bottleneck__rate="-10Mbps"), "topology.bottleneck.rate", ""),
    ("zero rate", dumbbell(topology__bottleneck__rate="0Mbps"), "topology.bottleneck.rate", ""),
    ("zero access rate", dumbbell(topology__access__rate="0bps"), "topology.access.rate", ""),
    ("unknown algorithm", dumbbell(flows__0__cc="cubbic"), "flows.0.cc", "cubbic"),
    ("unknown cc parameter", dumbbell(flows__0__cc={"kind": "cubic", "gamma": 0.5}), "flows.0.cc", "gamma"),
    ("cc table without kind", dumbbell(flows__0__cc={"beta": 0.5}), "flows.0.cc", "kind"),
    ("cc of the wrong type", dumbbell(flows__0__cc=5), "flows.0.cc", ""),
    ("buffer smaller than one packet", dumbbell(topology__bottleneck__buffer="100B"), "topology.bottleneck.buffer", ""),
    ("zero-packet buffer", dumbbell(topology__bottleneck__buffer="0pkt"), "topology.bottleneck.buffer", ""),
    ("negative delay", dumbbell(topology__bottleneck__delay="-5ms"), "topology.bottleneck.delay", ""),
    ("duration 0", dumbbell(duration="0s"), "duration", ""),
    ("missing duration", without(DUMBBELL, "duration"), "duration", ""),
    ("missing topology", without(DUMBBELL, "topology"), "topology", ""),
    ("sample_interval longer than duration", dumbbell(sample_interval="3s"), "sample_interval", ""),
    ("unknown queue kind", dumbbell(topology__bottleneck__queue="fifo-ish"), "topology.bottleneck.queue", "fifo-ish"),
    ("loss probability 1.5", dumbbell(topology__bottleneck__loss=1.5), "topology.bottleneck.loss", "1.5"),
    ("negative loss probability", dumbbell(topology__bottleneck__loss=-0.1), "topology.bottleneck.loss", ""),
    ("mtu 0", dumbbell(topology__bottleneck__mtu=0), "topology.bottleneck.mtu", ""),
    ("mss 0", dumbbell(tcp__mss=0), "tcp.mss", ""),
    ("mss 0 in a flow's own tcp table", dumbbell(flows__0__tcp={"mss": 0}), "flows.0.tcp.mss", ""),
    ("ack_every 0", dumbbell(tcp__ack_every=0), "tcp.ack_every", ""),
    ("initial_cwnd 0", dumbbell(tcp__initial_cwnd=0), "tcp.initial_cwnd", ""),
    ("unknown rto rule", dumbbell(tcp__rto="bsd"), "tcp.rto", "bsd"),
    ("max_rto below min_rto", dumbbell(tcp__max_rto="100ms"), "tcp.max_rto", ""),
    ("negative seed", dumbbell(seed=-1), "seed", ""),
    ("start after duration", dumbbell(flows__0__start="5s"), "flows.0.start", ""),
    ("stop before start", dumbbell(flows__0__start="1s", flows__0__stop="0.5s"), "flows.0.stop", ""),
    ("empty flows list", dumbbell(flows=[]), "flows", ""),
    ("unknown topology kind", dumbbell(topology__kind="ring"), "topology.kind", "ring"),
    ("dumbbell pairs < number of flows", dumbbell(topology__pairs=1, flows=[{"cc": "cubic"}, {"cc": "bbr"}]), "flows.1", "pairs"),
    ("access_delays not one per pair", dumbbell(topology__access_delays=["1ms", "2ms"]), "topology.access_delays", ""),
    ("flow from a router", dumbbell(flows__0__src="left"), "flows.0.src", "router"),
    ("unknown node name in a flow", explicit(flows__0__src="h9"), "flows.0.src", "h9"),
    ("src == dst", explicit(flows__0__dst="h1"), "flows.0.dst", ""),
    ("duplicate node names", explicit(topology__nodes=[*EXPLICIT["topology"]["nodes"], {"name": "r1"}]), "topology.nodes.3.name", "r1"),
    ("link to an unknown node", explicit(topology__links__1__b="h7"), "topology.links.1.b", "h7"),
    ("link from a node to itself", explicit(topology__links__1__b="r1"), "topology.links.1", ""),
    ("explicit link without an end", explicit(topology__links__0={"a": "h1", "rate": "1Mbps", "delay": "1ms"}), "topology.links.0.b", ""),
    ("explicit topology without links", explicit(topology__links=[]), "topology.links", ""),
    ("SIAD Num_RTT below 2", dumbbell(flows__0__cc={"kind": "siad", "num_rtt": 1}), "flows.0.cc", "num_rtt = 1 is out of range; allowed: num_rtt ≥ 2"),
    ("Vegas alpha above beta", dumbbell(flows__0__cc={"kind": "vegas", "alpha": 5, "beta": 4}), "flows.0.cc", "alpha = 5 is out of range"),
    ("negative BBR gain", dumbbell(flows__0__cc={"kind": "bbr", "cwnd_gain": -2}), "flows.0.cc", "cwnd_gain = -2 is out of range"),
    ("BBRv3 profile unknown", dumbbell(flows__0__cc={"kind": "bbr3", "profile": "v4"}), "flows.0.cc", "v4"),
    ("CUBIC beta of 1", dumbbell(flows__0__cc={"kind": "cubic", "beta": 1.0}), "flows.0.cc", "0 < beta < 1"),
    ("DCTCP shift_g too large", dumbbell(flows__0__cc={"kind": "dctcp", "shift_g": 11}), "flows.0.cc", "shift_g = 11 is out of range; allowed: 0 ≤ shift_g ≤ 10"),
    ("ECN threshold unit", dumbbell(topology__bottleneck__ecn_threshold="20 packets"), "topology.bottleneck.ecn_threshold", ""),
]

# Reachability needs the routing table, so it is checked when the world is built (at run time).
UNREACHABLE = ("flow between unconnected nodes", explicit(topology__nodes=NODES_WITH_AN_ISLAND, flows__0__dst="h3"), "flows.0.dst", "h3")
# fmt: on


def assert_one_line_error_at(message: str, path: str, fragment: str) -> None:
    assert "\n" not in message, f"multi-line error: {message!r}"
    assert message.startswith(path), f"expected the path {path!r} first: {message!r}"
    assert fragment in message, f"expected {fragment!r} in {message!r}"


def test_the_table_holds_enough_bad_scenarios() -> None:
    assert len(MALFORMED) >= 25


@pytest.mark.parametrize(
    ("document", "path", "fragment"),
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_validation_rejects_bad_scenarios_with_one_line_naming_the_key_path(
    document: dict[str, Any], path: str, fragment: str
) -> None:
    with pytest.raises(ScenarioError) as error:
        validate(document)
    assert_one_line_error_at(str(error.value), path, fragment)


def test_an_unreachable_destination_is_a_scenario_error_when_the_run_starts() -> None:
    _, document, path, fragment = UNREACHABLE
    with pytest.raises(ScenarioError) as error:
        tcplab.run(document)
    assert_one_line_error_at(str(error.value), path, fragment)


def test_both_bases_of_the_table_are_valid() -> None:
    validate(DUMBBELL)
    validate(EXPLICIT)


def test_a_study_case_applies_its_overrides_and_is_named_after_it() -> None:
    document = load("siad-mmwave:ns3-bbr-4MB")
    assert document["flows"][0]["cc"] == "bbr"
    assert document["topology"]["rlc"]["buffer"] == "4MB"
    assert document["tcp"]["stack"] == "ns3"
    assert document["name"] == "siad-mmwave-ns3-bbr-4MB"
    assert "study" not in document and "study" not in load("siad-mmwave")


def test_cases_cross_the_axes_in_file_order() -> None:
    assert list(studies.find("siad-mmwave").cases) == [
        f"{stack}-{cc}-{buffer}"
        for stack in ("ns3", "linux")
        for cc in ("siad", "bbr")
        for buffer in ("4MB", "7MB", "20MB", "40MB")
    ]
    assert len(studies.find("mmwave-5cc").cases) == 2 * 15
    assert list(studies.find("mmwave-5cc").cases)[:2] == ["ns3-1a-newreno", "ns3-1a-yeah"]
    assert list(studies.find("rtt-lens").cases) == [
        f"{cc}-{loss}" for cc in ("cubic", "bbr") for loss in ("none", "random", "bursty")
    ]


def test_every_case_of_every_study_is_a_valid_scenario() -> None:
    for study in studies.all_studies().values():
        for case in study.cases:
            assert resolve(f"{study.name}:{case}")["name"] == f"{study.name}-{case}"


def test_a_file_with_axes_has_cases_too(tmp_path: Path) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(TINY_SCENARIO + '\n[study.axes.cc.bbr]\n"flows.0.cc" = "bbr"\n')
    assert load(f"{path}:bbr")["flows"][0]["cc"] == "bbr"
    assert load(path)["flows"][0]["cc"] == "cubic"


def test_an_unknown_case_is_a_one_line_error_listing_the_cases(tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text(TINY_SCENARIO)
    for source, expected in [
        ("siad-mmwave:bbr-5MB", "siad-mmwave:bbr-5MB: no such case (cases: ns3-siad-4MB, "),
        (f"{plain}:bbr", f"{plain}:bbr: no such case (cases: none: it has no [study.axes] table)"),
    ]:
        with pytest.raises(ScenarioError) as error:
            load(source)
        assert str(error.value).startswith(expected) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("study_table", "expected"),
    [
        ('[study]\nname = "x"\n', "[study] may only hold assumptions, axes, published, quick, seeds"),
        ("[study.axes]\ncc = 1\n", "study.axes.cc must be a table of values"),
        ("[study.axes.cc]\nbbr = 1\n", "study.axes.cc.bbr must be a table of dotted-key overrides"),
    ],
)
def test_a_malformed_study_table_is_a_one_line_error(tmp_path: Path, study_table: str, expected: str) -> None:
    path = tmp_path / "sweep.toml"
    path.write_text(TINY_SCENARIO + "\n" + study_table)
    with pytest.raises(ScenarioError) as error:
        load(f"{path}:bbr")
    assert str(error.value) == f"{path}: {expected}"


def test_the_examples_of_the_scenario_format_page_are_valid() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md").read_text()
    blocks = text.split("```toml\n")[1:]
    examples = [block for block in blocks if "[topology]" in block]
    assert len(examples) == 5  # the full file, explicit, parking lot, leaf-spine, mmWave
    wifi = next(block for block in blocks if block.startswith("[topology.wifi]"))
    examples.append('[topology]\nkind = "dumbbell"\nbottleneck = { rate = "10Mbps", delay = "5ms" }\n' + wifi)
    for example in examples:
        document = example.split("```")[0]
        if "duration" not in document:
            document = 'duration = "40s"\n' + document
        if "[[flows]]" not in document:
            ends = 'src = "h1"\ndst = "h2"\n' if '"explicit"' in document else ""
            document += f'\n[[flows]]\ncc = "cubic"\n{ends}'
        assert resolve(document)["flows"][0]["cc"]["kind"] == "cubic"
