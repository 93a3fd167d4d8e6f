"""The emulation backend: the same scenario on this machine's kernel TCP, in network
namespaces with a real bottleneck qdisc and a constant-delay line (`tcplab emulate`,
`tcplab run --backend emu`). `settings` says what becomes of each scenario key, `plan_for` turns
a scenario into commands, `run` executes them and returns a `Result` with the simulator's
schema; `traffic` and `delayline` are the tools it starts inside the namespaces; `leftovers`
removes what killed runs left behind."""

from .plan import EmuPlan, plan_for
from .run import EmulationError, emulate

__all__ = ["EmuPlan", "EmulationError", "emulate", "plan_for"]
