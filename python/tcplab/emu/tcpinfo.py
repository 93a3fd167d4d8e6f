"""The kernel's per-socket TCP state (getsockopt TCP_INFO, struct tcp_info in
include/uapi/linux/tcp.h) turned into the simulator's flows.parquet columns."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

TCP_INFO_BYTES = 232
# Offsets into struct tcp_info (the u8 fields, then u32 and u64 fields in declaration order).
_FIELDS = {
    "ca_state": (1, "B"),
    "options": (5, "B"),
    "rate_flags": (7, "B"),  # bit 0: tcpi_delivery_rate_app_limited
    "snd_mss": (16, "I"),
    "unacked": (24, "I"),
    "sacked": (28, "I"),
    "lost": (32, "I"),
    "retrans": (36, "I"),
    "rtt_us": (68, "I"),
    "snd_ssthresh": (76, "I"),
    "snd_cwnd": (80, "I"),
    "total_retrans": (100, "I"),
    "pacing_rate": (104, "Q"),
    "bytes_acked": (120, "Q"),
    "min_rtt_us": (148, "I"),
    "data_segs_out": (156, "I"),
    "delivery_rate": (160, "Q"),
    "bytes_sent": (200, "Q"),
    "reord_seen": (220, "I"),  # reorderings the sender's SACK scoreboard saw (tcp_check_sack_reordering)
}
# ssthresh at or above this is "infinite" (TCP_INFINITE_SSTHRESH); pacing_rate ~0 is "none".
INFINITE_SSTHRESH = 0x7FFFFFFF
NO_PACING = 2**64 - 1
# tcpi_options bits (include/uapi/linux/tcp.h): what the handshake negotiated.
OPTION_BITS = {"timestamps": 1, "sack": 2, "window_scaling": 4, "ecn": 8}
# tcp_ca_state (include/uapi/linux/tcp.h) as the simulator names the sender's states.
CA_STATES = {0: "open", 1: "disorder", 2: "cwr", 3: "recovery", 4: "loss"}


@dataclass(frozen=True)
class TcpInfo:
    ca_state: int
    options: int
    rate_flags: int
    snd_mss: int
    unacked: int
    sacked: int
    lost: int
    retrans: int
    rtt_us: int
    snd_ssthresh: int
    snd_cwnd: int
    total_retrans: int
    pacing_rate: int
    bytes_acked: int
    min_rtt_us: int
    data_segs_out: int
    delivery_rate: int
    bytes_sent: int
    reord_seen: int

    @property
    def in_flight(self) -> int:
        """Packets in flight as Linux counts them (tcp_packets_in_flight)."""
        return max(0, self.unacked - self.sacked - self.lost + self.retrans)

    def negotiated(self, option: str) -> bool:
        """Whether the handshake turned `option` (a key of OPTION_BITS) on."""
        return bool(self.options & OPTION_BITS[option])

    @property
    def state(self) -> str:
        """`slow_start` / `cong_avoid` while open, else the recovery state (as the simulator)."""
        if self.ca_state == 0:
            return "slow_start" if self.snd_cwnd < self.snd_ssthresh else "cong_avoid"
        return CA_STATES.get(self.ca_state, str(self.ca_state))


def parse(raw: bytes) -> TcpInfo:
    if len(raw) < max(offset + struct.calcsize(kind) for offset, kind in _FIELDS.values()):
        raise ValueError(f"struct tcp_info of {len(raw)} bytes is too short")
    return TcpInfo(**{name: struct.unpack_from(f"={kind}", raw, offset)[0] for name, (offset, kind) in _FIELDS.items()})


def read(sock: socket.socket) -> TcpInfo:
    return parse(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES))


# getsockopt TCP_CC_INFO (include/uapi/linux/inet_diag.h): for BBR, struct tcp_bbr_info.
TCP_CC_INFO = 26
_BBR_INFO = struct.Struct("=IIIII")  # bw_lo, bw_hi (bytes/s), min_rtt (us), pacing_gain, cwnd_gain
BBR_UNIT = 256  # gains are fixed point with 8 fractional bits (BBR_UNIT)


@dataclass(frozen=True)
class BbrInfo:
    bw_bytes_per_s: int
    min_rtt_us: int
    pacing_gain: float
    cwnd_gain: float


def bbr_mode(pacing_gain: float, cwnd_gain: float) -> str:
    """BBR's mode, which TCP_CC_INFO leaves out, from the gains Linux `bbr_update_gains` sets
    for it: STARTUP paces and sizes cwnd at the high gain (2.89), DRAIN paces below 1 with
    the high cwnd gain, PROBE_RTT has both gains 1, PROBE_BW cycles its pacing gain with cwnd
    gain 2. Named as the simulator names them."""
    if cwnd_gain == 1.0 and pacing_gain == 1.0:
        return "PROBE_RTT"
    if pacing_gain > 2.0:
        return "STARTUP"
    if pacing_gain < 0.5 and cwnd_gain > 2.0:
        return "DRAIN"
    return "PROBE_BW"


def read_bbr(sock: socket.socket) -> BbrInfo | None:
    """BBR's model of the path (bandwidth estimate, min RTT, gains), None for other algorithms."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, _BBR_INFO.size)
    if len(raw) < _BBR_INFO.size:
        return None
    bw_lo, bw_hi, min_rtt, pacing_gain, cwnd_gain = _BBR_INFO.unpack(raw)
    return BbrInfo(bw_lo | bw_hi << 32, min_rtt, pacing_gain / BBR_UNIT, cwnd_gain / BBR_UNIT)
