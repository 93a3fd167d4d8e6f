//! Packet error rate of an MPDU from its SNR, MCS and size (TableBasedErrorRateModel): the
//! table-based model of ns-3 ≥ 3.33 (the default) and the NIST model of older releases.
//!
//! - Table-based, lean form (lean form of TableBasedErrorRateModel): log10(PER) is linear in SNR
//!   through the three anchors of each table (PER 50 %, 10 %, 1 %) and extrapolated with the slope
//!   of the nearest segment on either side, PER capped at 1 and set to 0 below 1e-5 (ns-3's floor).
//!   BCC uses the 32-B table for MPDUs under 400 B and the 1458-B table otherwise, LDPC its 1458-B
//!   table; the result is scaled to the MPDU's size as PER = 1 − (1 − PER_ref)^(L / L_ref). HT MCS
//!   index the tables directly (0–7). BCC has no table for MCS 10–11: like ns-3, those fall back to
//!   an analytic model, here NIST's.
//! - NIST (Pei & Henderson): uncoded BER of the constellation, the union bound over the
//!   convolutional code's distance spectrum (Pe from D = √(4p(1−p))), success = (1 − Pe)^bits.
//! - Left out: the table model's own 0.01 dB SNR rounding and its tables' fine shape between
//!   anchors (the anchors are read off ns-3's tables; the real curves are within ±0.1 dB of these
//!   lines in the waterfall region).

use super::phy::Mcs;

/// Which SNR → PER model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorModel {
    TableBased,
    Nist,
}

/// Forward error correction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coding {
    Bcc,
    Ldpc,
}

/// PER values of the anchors and their log10.
const ANCHOR_PER: [f64; 3] = [0.5, 0.1, 0.01];
/// PER below this is 0 (ns-3's floor on scaled table values).
const PER_FLOOR: f64 = 1e-5;
/// The small BCC table applies to MPDUs under this size, bytes.
const SMALL_TABLE_LIMIT_BYTES: u32 = 400;

/// SNR (dB) at PER 50 / 10 / 1 % per MCS (TableBasedErrorRateModel).
const BCC_1458: [[f64; 3]; 10] = [
    [0.30, 0.92, 1.56],
    [3.30, 3.94, 4.60],
    [5.78, 6.43, 7.11],
    [8.92, 9.70, 10.48],
    [12.02, 12.80, 13.56],
    [16.22, 17.04, 17.98],
    [17.52, 18.38, 19.31],
    [18.80, 19.63, 20.50],
    [22.77, 23.71, 24.76],
    [24.26, 25.15, 26.16],
];
const BCC_32: [[f64; 3]; 10] = [
    [-1.34, -0.36, 0.47],
    [1.66, 2.61, 3.47],
    [4.17, 5.10, 5.96],
    [6.94, 8.06, 9.11],
    [10.18, 11.28, 12.25],
    [14.06, 15.31, 16.44],
    [15.42, 16.61, 17.77],
    [16.84, 18.08, 19.30],
    [20.37, 21.73, 22.97],
    [22.04, 23.29, 24.45],
];
const LDPC_1458: [[f64; 3]; 12] = [
    [-0.94, -0.62, -0.29],
    [2.07, 2.39, 2.71],
    [4.57, 4.86, 5.15],
    [7.55, 7.92, 8.25],
    [10.61, 10.93, 11.23],
    [14.78, 15.13, 15.47],
    [16.15, 16.48, 16.86],
    [17.65, 18.00, 18.42],
    [21.29, 21.68, 22.05],
    [23.09, 23.48, 23.93],
    [26.38, 26.80, 27.24],
    [28.43, 28.89, 29.33],
];

/// PER of an MPDU of `bytes` at `snr_db` (linear SNR over the channel width) and `mcs`.
pub fn per(model: ErrorModel, coding: Coding, snr_db: f64, mcs: Mcs, bytes: u32) -> f64 {
    let index = mcs.index as usize;
    let table = match (model, coding) {
        (ErrorModel::Nist, _) => None,
        (ErrorModel::TableBased, Coding::Ldpc) => Some((&LDPC_1458[index], 1458)),
        (ErrorModel::TableBased, Coding::Bcc) if index >= BCC_1458.len() => None,
        (ErrorModel::TableBased, Coding::Bcc) if bytes < SMALL_TABLE_LIMIT_BYTES => Some((&BCC_32[index], 32)),
        (ErrorModel::TableBased, Coding::Bcc) => Some((&BCC_1458[index], 1458)),
    };
    let per = match table {
        Some((anchors, reference_bytes)) => {
            let reference = table_per(anchors, snr_db);
            1.0 - (1.0 - reference).powf(f64::from(bytes) / f64::from(reference_bytes))
        }
        None => 1.0 - nist_success(snr_db, mcs, bytes),
    };
    if per < PER_FLOOR {
        0.0
    } else {
        per.min(1.0)
    }
}

/// Log-linear interpolation of PER through the anchors of one table row.
fn table_per(anchors: &[f64; 3], snr_db: f64) -> f64 {
    let segment = if snr_db < anchors[1] { 0 } else { 1 };
    let (x0, x1) = (anchors[segment], anchors[segment + 1]);
    let (y0, y1) = (ANCHOR_PER[segment].log10(), ANCHOR_PER[segment + 1].log10());
    let log_per = y0 + (snr_db - x0) * (y1 - y0) / (x1 - x0);
    10f64.powf(log_per.min(0.0))
}

/// Complementary error function (Numerical Recipes `erfcc`, fractional error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    const C: [f64; 10] = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ];
    let poly = C.iter().rev().fold(0.0, |acc, c| acc * t + c);
    let r = t * (-z * z + poly).exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// Uncoded bit error rate of square M-QAM (BPSK for 1 bit per subcarrier) at linear SNR.
fn uncoded_ber(bits_per_subcarrier: u32, snr: f64) -> f64 {
    match bits_per_subcarrier {
        1 => 0.5 * erfc(snr.sqrt()),
        bits => {
            let m = f64::from(1u32 << bits);
            let root = m.sqrt();
            (root - 1.0) / (root * (bits as f64 / 2.0)) * erfc((snr / (2.0 * (m - 1.0) / 3.0)).sqrt())
        }
    }
}

/// First-event error probability of the 802.11 convolutional code of rate `code_rate` after
/// a BSC with crossover `p` (union bound over the code's distance spectrum).
fn coded_event_probability(p: f64, code_rate: (u32, u32)) -> f64 {
    let d = (4.0 * p * (1.0 - p)).sqrt();
    // (puncturing period b, first distance, spectrum) of the rate-1/2 mother code and its
    // punctured rates 2/3, 3/4 (Frenger et al.) and 5/6 (Haccoun & Bégin, Table V).
    let (b, d_free, step, weights): (f64, i32, i32, &[f64]) = match code_rate {
        (1, 2) => (1.0, 10, 2, &[36.0, 211.0, 1404.0, 11633.0, 77433.0, 502690.0, 3322763.0, 21292910.0, 134365911.0]),
        (2, 3) => (2.0, 6, 1, &[3.0, 70.0, 285.0, 1276.0, 6160.0, 27128.0, 117019.0, 498860.0, 2103891.0, 8784123.0]),
        (3, 4) => (3.0, 5, 1, &[42.0, 201.0, 1492.0, 10469.0, 62935.0, 379644.0, 2253373.0, 13073811.0, 75152755.0, 428005675.0]),
        _ => (5.0, 4, 1, &[92.0, 528.0, 8694.0, 79453.0, 792114.0, 7375573.0, 67884974.0, 610875423.0, 5427275376.0, 47664215639.0]),
    };
    let sum: f64 = weights.iter().enumerate().map(|(k, w)| w * d.powi(d_free + step * k as i32)).sum();
    sum / (2.0 * b)
}

/// NIST model: probability that all `bytes` of an MPDU survive.
fn nist_success(snr_db: f64, mcs: Mcs, bytes: u32) -> f64 {
    let ber = uncoded_ber(mcs.bits_per_subcarrier(), 10f64.powf(snr_db / 10.0));
    if ber == 0.0 {
        return 1.0;
    }
    let pe = coded_event_probability(ber, mcs.code_rate()).min(1.0);
    (1.0 - pe).powf(8.0 * f64::from(bytes))
}

/// The highest SNR at which `per` is still at least `target` (bisection; `per` falls with SNR).
pub fn snr_for_per(target: f64, per: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (-20.0, 60.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if per(mid) >= target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mcs(index: u32) -> Mcs {
        Mcs { index }
    }

    #[test]
    fn erfc_matches_known_values() {
        for (x, want) in [(0.0, 1.0), (0.5, 0.479_500_122), (1.0, 0.157_299_207), (2.0, 0.004_677_735), (-1.0, 1.842_700_793)] {
            assert!((erfc(x) - want).abs() < 2e-7, "erfc({x}) = {}", erfc(x));
        }
    }

    #[test]
    fn w3_table_based_reproduces_its_anchors_at_the_reference_sizes() {
        for (coding, table, bytes) in
            [(Coding::Bcc, &BCC_1458[..], 1458), (Coding::Bcc, &BCC_32[..], 32), (Coding::Ldpc, &LDPC_1458[..], 1458)]
        {
            for (index, anchors) in table.iter().enumerate() {
                for (snr, want) in anchors.iter().zip(ANCHOR_PER) {
                    let got = per(ErrorModel::TableBased, coding, *snr, mcs(index as u32), bytes);
                    assert!((got / want - 1.0).abs() < 1e-9, "{coding:?} MCS {index} at {snr} dB: {got}");
                }
            }
        }
    }

    #[test]
    fn table_based_scales_with_size_and_saturates() {
        let m4 = mcs(4);
        // 1538 B is 1.055 reference frames: 10 % becomes 1 − 0.9^1.055.
        let got = per(ErrorModel::TableBased, Coding::Bcc, 12.80, m4, 1538);
        assert!((got - (1.0 - 0.9f64.powf(1538.0 / 1458.0))).abs() < 1e-12);
        // 90-B TCP ACK MPDUs use the 32-B table.
        let ack = per(ErrorModel::TableBased, Coding::Bcc, 11.28, m4, 90);
        assert!((ack - (1.0 - 0.9f64.powf(90.0 / 32.0))).abs() < 1e-12);
        assert_eq!(per(ErrorModel::TableBased, Coding::Bcc, -5.0, m4, 1538), 1.0);
        assert_eq!(per(ErrorModel::TableBased, Coding::Bcc, 30.0, m4, 1538), 0.0);
        // At −80 dBm (docs/validation.md W13): 13.97 dB (20 MHz) carries MCS 4 but not 5; 7.95 dB
        // (80 MHz) MCS 2 but not 3.
        let at = |snr, m| per(ErrorModel::TableBased, Coding::Bcc, snr, mcs(m), 1538);
        assert!(at(13.97, 4) < 0.01 && at(13.97, 5) > 0.99);
        assert!(at(7.95, 2) < 0.01 && at(7.95, 3) > 0.9);
        assert!(at(13.97, 7) == 1.0, "HtMcs7 at −80 dBm loses every MPDU");
    }

    #[test]
    fn w3_nist_thresholds_match_b4() {
        // SNR at PER 10 % for a 1538-B MPDU, 1 % for 1538 B, 10 % for 90 B (NistErrorRateModel).
        let want = [
            (3.97, 4.59, 3.15),
            (6.98, 7.60, 6.16),
            (9.87, 10.54, 9.01),
            (13.51, 14.20, 12.61),
            (16.62, 17.32, 15.71),
            (21.36, 22.07, 20.45),
            (22.63, 23.36, 21.67),
            (23.79, 24.52, 22.83),
            (28.50, 29.26, 27.49),
            (29.71, 30.46, 28.71),
            (34.35, 35.13, 33.29),
            (35.60, 36.37, 34.57),
        ];
        for (index, (p10, p1, small)) in want.into_iter().enumerate() {
            let m = mcs(index as u32);
            let at = |target, bytes| snr_for_per(target, |snr| per(ErrorModel::Nist, Coding::Bcc, snr, m, bytes));
            for (got, want, what) in
                [(at(0.1, 1538), p10, "10 % 1538 B"), (at(0.01, 1538), p1, "1 % 1538 B"), (at(0.1, 90), small, "10 % 90 B")]
            {
                assert!((got - want).abs() <= 0.2, "MCS {index} {what}: {got:.2} dB, anchor {want}");
            }
        }
    }

    #[test]
    fn bcc_mcs_10_and_11_fall_back_to_nist() {
        let m = mcs(11);
        assert_eq!(per(ErrorModel::TableBased, Coding::Bcc, 35.6, m, 1538), per(ErrorModel::Nist, Coding::Bcc, 35.6, m, 1538));
        assert!(per(ErrorModel::TableBased, Coding::Ldpc, 28.89, m, 1458) > 0.09);
    }
}
