"""The scenario fuzzer (tests/fuzz_scenarios.py) over a fixed set of mutants of the shipped
scenarios: none may abort, hang, escape as a traceback, need more than 30 s of CPU or 1 GiB."""

from __future__ import annotations

from tests import fuzz_scenarios

MUTANTS = 1500
SEED = 14


def test_no_mutant_of_a_shipped_scenario_breaks_the_simulator() -> None:
    outcomes = fuzz_scenarios.fuzz(MUTANTS, SEED)
    failures = [
        f"{outcome['kind']}: {mutant.origin}: {mutant.mutation}: {outcome['detail'][:200]}"
        for mutant, outcome in outcomes
        if outcome["kind"] in fuzz_scenarios.FAILURES
    ]
    assert not failures, fuzz_scenarios.table(outcomes) + "\n" + "\n".join(failures)
    ran = sum(outcome.get("detail") == "ran" for _, outcome in outcomes)
    assert ran >= MUTANTS // 20, "the mutants should still include runnable scenarios"
