//! Random loss of a link direction, drawn per frame (per IP packet or fragment): independent
//! (Bernoulli) loss, or the Gilbert–Elliott two-state Markov chain for bursty loss.
//!
//! Sources: E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst. Tech. J. 39 (1960);
//! E. O. Elliott, "Estimates of error rates for codes on burst-noise channels", Bell Syst.
//! Tech. J. 42 (1963); Linux netem's `gemodel p r 1-h 1-k` (net/sched/sch_netem.c,
//! `loss_gilb_ell()`): the chain moves once per packet, then the packet is lost with the
//! loss probability of the state it is in. Here `p` = P(good → bad), `r` = P(bad → good),
//! `loss_good` = netem's 1-k and `loss_bad` = netem's 1-h. The chain starts in the good
//! state. Left out: netem's 4-state model (`state p13 p31 p32 p23 p14`) and correlated
//! Bernoulli loss (`loss 1% 25%`).

use tcplab_core::SimRng;

/// The Gilbert–Elliott chain's parameters, each a probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GilbertElliott {
    /// P(good → bad), drawn once per frame in the good state.
    pub p: f64,
    /// P(bad → good), drawn once per frame in the bad state.
    pub r: f64,
    /// Loss probability in the good state.
    pub loss_good: f64,
    /// Loss probability in the bad state.
    pub loss_bad: f64,
}

impl GilbertElliott {
    /// Long-run fraction of frames lost: the stationary P(bad) = p / (p + r) weights the
    /// states' loss probabilities.
    pub fn stationary_loss(&self) -> f64 {
        let bad = self.p / (self.p + self.r);
        bad * self.loss_bad + (1.0 - bad) * self.loss_good
    }
}

/// How a link direction loses frames, with the model's state.
#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    /// Each frame lost independently with this probability (0: no loss, no draws).
    Bernoulli(f64),
    GilbertElliott {
        params: GilbertElliott,
        in_bad_state: bool,
    },
}

impl LossModel {
    pub fn gilbert_elliott(params: GilbertElliott) -> Self {
        LossModel::GilbertElliott { params, in_bad_state: false }
    }

    /// Whether the next frame is lost.
    #[inline]
    pub fn lose_frame(&mut self, rng: &mut SimRng) -> bool {
        match self {
            LossModel::Bernoulli(p) => rng.chance(*p),
            LossModel::GilbertElliott { params, in_bad_state } => {
                let leave = if *in_bad_state { params.r } else { params.p };
                if rng.chance(leave) {
                    *in_bad_state = !*in_bad_state;
                }
                rng.chance(if *in_bad_state { params.loss_bad } else { params.loss_good })
            }
        }
    }

    /// Whether a packet of `frames` frames is lost (any frame lost). Independent loss stops
    /// drawing at the first lost frame; every frame moves the Gilbert–Elliott chain, as every
    /// fragment crosses the link.
    #[inline]
    pub fn lose_packet(&mut self, frames: u64, rng: &mut SimRng) -> bool {
        match self {
            LossModel::Bernoulli(p) => *p > 0.0 && (0..frames).any(|_| rng.chance(*p)),
            LossModel::GilbertElliott { .. } => (0..frames).fold(false, |lost, _| self.lose_frame(rng) | lost),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GE: GilbertElliott = GilbertElliott { p: 0.01, r: 0.3, loss_good: 0.0, loss_bad: 1.0 };

    #[test]
    fn gilbert_elliott_loses_its_stationary_fraction() {
        // P(bad) = 0.01 / 0.31 = 3.23 %; with loss_good = 0.001 and loss_bad = 0.8:
        // 0.0323 · 0.8 + 0.9677 · 0.001 = 2.677 %.
        let params = GilbertElliott { loss_good: 0.001, loss_bad: 0.8, ..GE };
        assert!((params.stationary_loss() - 0.026_774).abs() < 1e-5);
        let mut model = LossModel::gilbert_elliott(params);
        let mut rng = SimRng::stream(1, "ge");
        let n = 100_000;
        let lost = (0..n).filter(|_| model.lose_frame(&mut rng)).count() as f64 / n as f64;
        assert!((lost / params.stationary_loss() - 1.0).abs() < 0.05, "{lost}");
    }

    #[test]
    fn gilbert_elliott_bursts_last_one_over_r_frames() {
        // loss_bad = 1, loss_good = 0: a burst of losses is a stay in the bad state, whose
        // length is geometric with mean 1 / r = 3.33 frames.
        let mut model = LossModel::gilbert_elliott(GE);
        let mut rng = SimRng::stream(2, "ge");
        let (mut bursts, mut lost, mut previous) = (0u32, 0u32, false);
        for _ in 0..200_000 {
            let now = model.lose_frame(&mut rng);
            bursts += u32::from(now && !previous);
            lost += u32::from(now);
            previous = now;
        }
        let mean_burst = f64::from(lost) / f64::from(bursts);
        assert!((mean_burst * GE.r - 1.0).abs() < 0.05, "{mean_burst}");
    }

    #[test]
    fn a_packet_is_lost_if_any_fragment_is() {
        let mut always = LossModel::gilbert_elliott(GilbertElliott { p: 1.0, r: 0.0, loss_good: 0.0, loss_bad: 1.0 });
        let mut rng = SimRng::stream(3, "ge");
        assert!(always.lose_packet(3, &mut rng));
        let mut never = LossModel::Bernoulli(0.0);
        assert!(!never.lose_packet(7, &mut rng));
    }
}
