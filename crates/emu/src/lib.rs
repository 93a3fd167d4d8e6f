//! tcplab-emu: what the emulation backend (python/tcplab/emu) needs from Rust — TUN
//! devices (`tun`) and the delay line that runs on them (`delay_line`), because this
//! machine's kernel has no netem (docs/architecture.md). Nothing here is on the simulator's path.

pub mod delay_line;
pub mod tun;
