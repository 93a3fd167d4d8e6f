"""`python -m tcplab.emu.offloads DEVICE`: turns off DEVICE's TCP segmentation offloads (TSO
and generic segmentation) in the current network namespace, as `ethtool -K DEVICE tso off gso
off` would (this machine has no ethtool; the ioctl comes from pyroute2).

TCP still builds GSO packets of up to 64 KB (`tcp_tso_autosize`: Linux always segments in
software when the device cannot), and the kernel cuts each into MTU-size packets when it hands
it to DEVICE: they leave back to back, as from a NIC, and every queue behind holds MTU-size
packets. A veth that keeps its offloads passes the GSO packet whole instead."""

from __future__ import annotations

import sys

SEGMENTATION_FEATURES = (
    "tx-generic-segmentation",
    "tx-tcp-segmentation",
    "tx-tcp-ecn-segmentation",
    "tx-tcp-mangleid-segmentation",
    "tx-tcp6-segmentation",
    "tx-tcp-accecn-segmentation",
)


def main(argv: list[str] | None = None) -> int:
    from pyroute2.ethtool import Ethtool  # the emulation's own dependency

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m tcplab.emu.offloads DEVICE", file=sys.stderr)
        return 2
    device = args[0]
    ethtool = Ethtool()
    try:
        features = ethtool.get_features(device)
        for name in SEGMENTATION_FEATURES:
            if name in features.features:
                features.features[name].enable = False
        ethtool.set_features(device, features)
        left = [name for name in SEGMENTATION_FEATURES if name in (f := ethtool.get_features(device).features) and f[name].enable]
    finally:
        ethtool.close()
    if left:
        print(f"error: {device} keeps {', '.join(left)} on", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
