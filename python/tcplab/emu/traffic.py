"""The traffic tools the emulation runs inside its namespaces (`python -m tcplab.emu.traffic`):

    receive IP:PORT [IP:PORT ...]        accept connections and discard what they send
    send --flow N --cc NAME --bind IP --connect IP:PORT --start-at T --stop-at T
         [--bytes N] --interval S --out FILE [--mss N] [--rto-max-ms N] [--pacing]
                                         one bulk (or byte-count) connection with congestion
                                         control NAME, TCP_INFO (and BBR's TCP_CC_INFO) sampled
                                         every S seconds into FILE as JSON lines, after a first
                                         line {"established": TCP_INFO} read once connected

Socket options, set before connecting: --mss N is the payload per segment (TCP_MAXSEG N plus
the timestamp option), --rto-max-ms N caps the RTO (TCP_RTO_MAX_MS), --pacing turns on the
kernel's own pacing (SO_MAX_PACING_RATE, as the fq qdisc would pace). Times are
CLOCK_MONOTONIC seconds, which every network namespace shares. A sender whose algorithm the
kernel lacks exits with status 3 and says which it has.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import struct
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from . import tcpinfo

CHUNK = b"\0" * 65536
EXIT_NO_ALGORITHM = 3
CONNECT_ATTEMPTS = 200
CONNECT_RETRY_S = 0.01
TIMESTAMP_OPTION_BYTES = 12  # TCP_MAXSEG counts TCP options, the scenario's mss does not
# include/uapi/linux/tcp.h and asm-generic/socket.h (Python's socket module lacks them).
TCP_RTO_MAX_MS = 44
SO_MAX_PACING_RATE = 47
# Any rate but ~0 turns the kernel's internal pacing on (sk_pacing_status, net/core/sock.c);
# this one never caps the rate TCP computes.
UNCAPPED_PACING_RATE = 2**64 - 2


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    return host, int(port)


def available_algorithms() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def receive(addresses: list[str]) -> None:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def drain(conn: socket.socket) -> None:
        with conn:
            while conn.recv_into(bytearray(262144)):
                pass

    def serve(address: str) -> None:
        server = socket.create_server(_address(address), backlog=64)
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=drain, args=(conn,), daemon=True).start()

    for address in addresses:
        threading.Thread(target=serve, args=(address,), daemon=True).start()
    print("ready", flush=True)
    while not stop.wait(0.1):
        pass


def send(args: argparse.Namespace) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    except OSError:
        print(
            f"congestion control {args.cc!r} is not available; the kernel has: {', '.join(available_algorithms())}",
            file=sys.stderr,
        )
        return EXIT_NO_ALGORITHM
    if args.mss is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, args.mss + TIMESTAMP_OPTION_BYTES)
    if args.rto_max_ms is not None:
        sock.setsockopt(socket.IPPROTO_TCP, TCP_RTO_MAX_MS, args.rto_max_ms)
    if args.pacing:
        sock.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, struct.pack("=Q", UNCAPPED_PACING_RATE))
    sock.bind((args.bind, 0))
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            sock.connect(_address(args.connect))
            break
        except ConnectionRefusedError:
            if attempt == CONNECT_ATTEMPTS - 1:
                raise
            time.sleep(CONNECT_RETRY_S)
    connected_at = time.monotonic()
    established = tcpinfo.read(sock)  # before any data: the initial window as set up
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    time.sleep(max(0.0, args.start_at - time.monotonic()))
    budget = args.bytes

    def pump() -> None:
        nonlocal budget
        sock.settimeout(0.05)
        while not stop.is_set() and time.monotonic() < args.stop_at and (budget is None or budget > 0):
            chunk = CHUNK if budget is None else CHUNK[: min(len(CHUNK), budget)]
            try:
                sent = sock.send(chunk)
            except TimeoutError:
                continue
            except OSError:
                return
            if budget is not None:
                budget -= sent

    sender = threading.Thread(target=pump, daemon=True)
    sender.start()
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(json.dumps({"established": asdict(established), "connected_at": connected_at}) + "\n")
        next_sample = args.start_at
        while True:
            now = time.monotonic()
            info = tcpinfo.read(sock)
            bbr = tcpinfo.read_bbr(sock) if args.cc == "bbr" else None
            out.write(json.dumps({"t": now, **asdict(info), "bbr": None if bbr is None else asdict(bbr)}) + "\n")
            finished = not sender.is_alive() and info.unacked == 0
            if stop.is_set() or now >= args.stop_at or finished:
                break
            next_sample += args.interval
            time.sleep(max(0.0, next_sample - time.monotonic()))
    stop.set()
    sender.join()
    sock.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcplab.emu.traffic", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rx = commands.add_parser("receive")
    rx.add_argument("addresses", nargs="+")
    tx = commands.add_parser("send")
    tx.add_argument("--flow", type=int, required=True)
    tx.add_argument("--cc", required=True)
    tx.add_argument("--bind", required=True)
    tx.add_argument("--connect", required=True)
    tx.add_argument("--start-at", type=float, required=True)
    tx.add_argument("--stop-at", type=float, required=True)
    tx.add_argument("--bytes", type=int)
    tx.add_argument("--interval", type=float, required=True)
    tx.add_argument("--out", required=True)
    tx.add_argument("--mss", type=int)
    tx.add_argument("--rto-max-ms", type=int)
    tx.add_argument("--pacing", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "receive":
        receive(args.addresses)
        return 0
    return send(args)


if __name__ == "__main__":
    sys.exit(main())
