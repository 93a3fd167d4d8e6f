"""Derives the direct-beam loss constants of channel.rs (UMI_LOS_BF_LOSS, UMI_NLOS_BF_LOSS):
`python3 direct_beam_loss.py [seed=2] [drops=6000] [d2D=150]` prints their mean, σ and percentiles.

Direct-beam (MmWave3gppChannel DirectBeam=true) beamforming loss below the ideal 8x8 x 4x4
array gain, TR 38.901 UMi-Street Canyon at 28 GHz, d2D 150 m, hBS 10 m, hUT 1.5 m: steps 3-8
(LSPs without cross-correlation, cluster delays and powers, cluster and ray angles, random ray
coupling), isotropic elements, lambda/2 UPAs in the y-z plane, both steered at the geometric
LOS direction. Wideband gain = sum over rays of P_ray * G_bs(ray) * G_ue(ray) (the random ray
phases and the delays average the cross terms out over 1 GHz)."""

import math
import random
import statistics
import sys

FC = 28.0
L = math.log10(1 + FC)
N_BS, N_UE = 8, 4
A = [0.0447, 0.1413, 0.2492, 0.3715, 0.5129, 0.6797, 0.8844, 1.1481, 1.5195, 2.1551]
ALPHA = A + [-a for a in A]  # Table 7.5-3
C_PHI = {12: 1.146, 19: 1.273}  # Table 7.5-2
C_THETA = {12: 1.104, 19: 1.184}  # Table 7.5-4
rad = math.radians


def af2(n, x):
    den = math.sin(math.pi * x / 2)
    if abs(den) < 1e-12:
        return n * n
    return (math.sin(n * math.pi * x / 2) / den) ** 2


def upa_gain(n, zen, az, zen0, az0):
    """|a^H w|^2 of an n x n lambda/2 UPA (y-z plane) steered at (zen0, az0); max n*n."""
    u = math.sin(rad(zen)) * math.sin(rad(az)) - math.sin(rad(zen0)) * math.sin(rad(az0))
    v = math.cos(rad(zen)) - math.cos(rad(zen0))
    return af2(n, u) * af2(n, v) / (n * n)


def one(rng, los, d2d=150.0, hbs=10.0, hut=1.5):
    zod_los = 90 + math.degrees(math.atan2(hbs - hut, d2d))
    zoa_los = 180 - zod_los
    aod_los, aoa_los = 0.0, 180.0
    g = rng.gauss
    if los:  # Table 7.5-6 UMi-SC LOS, 7.5-8 ZSD
        N, r_tau, c_asd, c_asa, c_zsa = 12, 3.0, 3.0, 17.0, 7.0
        ds = 10 ** g(-0.24 * L - 7.14, 0.38)
        asd = 10 ** g(-0.05 * L + 1.21, 0.41)
        asa = 10 ** g(-0.08 * L + 1.73, 0.014 * L + 0.28)
        zsa = 10 ** g(-0.1 * L + 0.73, -0.04 * L + 0.34)
        mu_zsd = max(-0.21, -14.8 * d2d / 1000 + 0.01 * abs(hut - hbs) + 0.83)
        zod_off = 0.0
        K = g(9.0, 5.0)
        kr = 10 ** (K / 10)
    else:  # Table 7.5-6 UMi-SC NLOS, 7.5-8 ZSD and ZOD offset
        N, r_tau, c_asd, c_asa, c_zsa = 19, 2.1, 10.0, 22.0, 7.0
        ds = 10 ** g(-0.24 * L - 6.83, 0.16 * L + 0.28)
        asd = 10 ** g(-0.23 * L + 1.53, 0.11 * L + 0.33)
        asa = 10 ** g(-0.08 * L + 1.81, 0.05 * L + 0.3)
        zsa = 10 ** g(-0.04 * L + 0.92, -0.07 * L + 0.41)
        mu_zsd = max(-0.5, -3.1 * d2d / 1000 + 0.01 * max(hut - hbs, 0) + 0.2)
        zod_off = -(10 ** (-1.5 * math.log10(max(10, d2d)) + 3.3))
        K = 0.0
        kr = 0.0
    zsd = 10 ** g(mu_zsd, 0.35)
    asd, asa, zsd, zsa = min(asd, 104), min(asa, 104), min(zsd, 52), min(zsa, 52)
    tau = [-r_tau * ds * math.log(1 - rng.random()) for _ in range(N)]
    t0 = min(tau)
    tau = sorted(t - t0 for t in tau)
    p = [math.exp(-t * (r_tau - 1) / (r_tau * ds)) * 10 ** (-g(0, 3.0) / 10) for t in tau]
    s = sum(p)
    p_nlos = [x / s for x in p]
    p_ang = [x / (kr + 1) for x in p_nlos]
    p_ang[0] += kr / (kr + 1)  # (7.5-8)
    pmax = max(p_ang)
    cphi, cth = C_PHI[N], C_THETA[N]
    if los:
        cphi *= 1.1035 - 0.028 * K - 0.002 * K**2 + 0.0001 * K**3
        cth *= 1.3086 + 0.0339 * K - 0.0077 * K**2 + 0.0002 * K**3
    rel = [math.log(x / pmax) for x in p_ang]

    def angles(spread, los_dir, off, zenith):
        if zenith:
            base = [-spread * r / cth for r in rel]
        else:
            base = [2 * (spread / 1.4) * math.sqrt(-r) / cphi for r in rel]
        x = [rng.choice((-1, 1)) for _ in range(N)]
        y = [g(0, spread / 7) for _ in range(N)]
        out = [x[i] * base[i] + y[i] + los_dir + off for i in range(N)]
        if los:
            shift = x[0] * base[0] + y[0] + off
            out = [o - shift for o in out]
        return out

    aoa = angles(asa, aoa_los, 0.0, False)
    aod = angles(asd, aod_los, 0.0, False)
    zoa = angles(zsa, zoa_los, 0.0, True)
    zod = angles(zsd, zod_los, zod_off, True)
    gain = 0.0
    for n in range(N):
        if p_ang[n] < pmax * 10**-2.5:  # step 6: drop clusters 25 dB below the strongest
            continue
        perms = [rng.sample(range(20), 20) for _ in range(4)]  # step 8
        acc = 0.0
        for m in range(20):
            a_d = aod[n] + c_asd * ALPHA[perms[0][m]]
            a_a = aoa[n] + c_asa * ALPHA[perms[1][m]]
            z_d = zod[n] + 3 / 8 * 10**mu_zsd * ALPHA[perms[2][m]]
            z_a = zoa[n] + c_zsa * ALPHA[perms[3][m]]
            acc += upa_gain(N_BS, z_d, a_d, zod_los, aod_los) * upa_gain(N_UE, z_a, a_a, zoa_los, aoa_los)
        gain += p_nlos[n] / (kr + 1) * acc / 20
    gain += kr / (kr + 1) * (N_BS * N_UE) ** 2
    return 10 * math.log10((N_BS * N_UE) ** 2) - 10 * math.log10(gain)


D2D = float(sys.argv[3]) if len(sys.argv) > 3 else 150.0
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 6000
for los in (True, False):
    x = sorted(one(rng, los, D2D) for _ in range(n))
    print(
        "LOS " if los else "NLOS",
        f"mean {statistics.mean(x):.2f} std {statistics.pstdev(x):.2f}",
        "p1/5/50/95/99:",
        " ".join(f"{x[int(f * (len(x) - 1))]:.2f}" for f in (0.01, 0.05, 0.5, 0.95, 0.99)),
    )
