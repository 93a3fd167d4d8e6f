//! `[[flows]]` entries that stand for many flows (`count = N`, docs/scenario-format.md, "Flow
//! groups"): the input form of a flow ([`FlowGroupSpec`]), its checks, and its expansion
//! into N ordinary [`FlowSpec`]s, which is all the resolved scenario (and so the run, the
//! emulation and every output) ever sees.
//!
//! Per-index patterns: algorithms by fractions (`mix`), apportioned by the largest remainder
//! method (Hamilton's) and interleaved by smooth weighted round robin (nginx's
//! ngx_http_upstream_get_peer()), so a 50/50 mix alternates; start times spread evenly, drawn
//! uniformly or as a Poisson process; sizes fixed or drawn from a uniform, exponential,
//! Pareto (type I: scale x_m = mean·(shape−1)/shape, inverse-CDF sampling) or piecewise-linear
//! empirical distribution (as the web-search and data-mining workloads of DCTCP, Alizadeh et
//! al. SIGCOMM 2010, and pFabric, SIGCOMM 2013, are published and as ns-3's
//! EmpiricalRandomVariable with interpolation samples them); host names with the index in them.
//! Every draw comes from SimRng streams named after the entry (`flows/<entry>/start`,
//! `flows/<entry>/bytes`), so a run is the same for the same seed and one entry's draws never
//! shift another's.
//! Left out: per-index algorithm parameters (a `mix` takes names with their defaults; an
//! entry per parameter set does the rest), closed-loop workloads (a flow starting when another
//! ends), and size distributions other than these four.

use crate::error::ScenarioError;
use crate::scenario::{AppSpec, FlowSpec, TcpSpec};
use crate::units::{DurationValue, SizeValue, MAX_QUANTITY};
use schemars::JsonSchema;
use serde::de::{self, value::MapAccessDeserializer, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;
use tcplab_cc::CcConfig;
use tcplab_core::{SimDuration, SimRng};

/// How much the fractions of a `mix` may miss 1.
const MIX_SUM_TOLERANCE: f64 = 1e-9;

/// One `[[flows]]` entry as written: a flow, or with `count` a group of flows whose start,
/// size, algorithm and ends may follow per-index patterns. Each entry becomes `count`
/// ordinary flows, in order, in the resolved scenario.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupSpec {
    /// How many flows this entry stands for (default 1); i = 0 … count−1 is a flow's index
    /// within the entry.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u64,
    /// Congestion control: a name ("cubic") or a table with `kind` and parameters. Exactly
    /// one of `cc` and `mix`.
    #[serde(default)]
    pub cc: Option<CcConfig>,
    /// Instead of `cc`: algorithm names with the fraction of the entry's flows running each
    /// (> 0, summing to 1), e.g. { cubic = 0.5, bbr = 0.5 }; counts by largest remainder, the
    /// algorithms interleaved by index (smooth weighted round robin, names in alphabetical
    /// order), so a 50/50 mix alternates.
    #[serde(default)]
    pub mix: Option<BTreeMap<String, f64>>,
    /// Sending host (dumbbell default: s<k>, k the flow's index among all flows); "{i}",
    /// "{i % M}" and "{i / M}" are replaced by the index within the entry (M a positive
    /// whole number), e.g. "h{i % 32}".
    #[serde(default)]
    pub src: Option<String>,
    /// Receiving host (dumbbell default: r<k>); the same patterns as `src`.
    #[serde(default)]
    pub dst: Option<String>,
    /// When the connection starts: a duration, or { spread = [FROM, TO] } (flow i at
    /// FROM + i·(TO−FROM)/count), { uniform = [FROM, TO] } (independent draws) or
    /// { poisson = MEAN } (exponential gaps of that mean, the first flow at the first gap).
    #[serde(default = "zero_start")]
    pub start: StartPattern,
    /// When the application stops writing (default: never).
    #[serde(default)]
    pub stop: Option<DurationValue>,
    /// Bytes to transfer (default: unbounded): a size, or a distribution { uniform = [MIN,
    /// MAX] }, { exponential = MEAN }, { pareto = { mean = MEAN, shape = S } } (S > 1) or
    /// { cdf = [[SIZE, P], …] } (piecewise-linear empirical CDF); draws are rounded to whole
    /// bytes, at least 1.
    #[serde(default)]
    pub bytes: Option<SizePattern>,
    /// The application: bulk (default, always data to send) or writes at a fixed rate.
    #[serde(default)]
    pub app: Option<AppSpec>,
    /// TCP settings of these flows (defaults: the scenario's `tcp` table).
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
}

fn one() -> u64 {
    1
}

fn zero_start() -> StartPattern {
    Pattern::Fixed(DurationValue(SimDuration::ZERO))
}

/// A value written either as a quantity ("1s", "10KB") or as a table naming a distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern<Fixed, Drawn> {
    Fixed(Fixed),
    Drawn(Drawn),
}

pub type StartPattern = Pattern<DurationValue, StartDistribution>;
pub type SizePattern = Pattern<SizeValue, SizeDistribution>;

/// What a distribution table is called in "expected …" messages.
pub trait Expected {
    const EXPECTED: &'static str;
}

impl<'de, F: FromStr<Err = String>, D: Deserialize<'de> + Expected> Deserialize<'de> for Pattern<F, D> {
    fn deserialize<De: Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        struct PatternVisitor<F, D>(PhantomData<(F, D)>);
        impl<'de, F: FromStr<Err = String>, D: Deserialize<'de> + Expected> Visitor<'de> for PatternVisitor<F, D> {
            type Value = Pattern<F, D>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(D::EXPECTED)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                s.parse().map(Pattern::Fixed).map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                D::deserialize(MapAccessDeserializer::new(map)).map(Pattern::Drawn)
            }
        }
        d.deserialize_any(PatternVisitor(PhantomData))
    }
}

impl<F: JsonSchema, D: JsonSchema> JsonSchema for Pattern<F, D> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}Or{}", F::schema_name(), D::schema_name()).into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "anyOf": [generator.subschema_for::<F>(), generator.subschema_for::<D>()] })
    }
}

/// Start times of an entry's flows, one table key naming the pattern.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum StartDistribution {
    /// Flow i of N at FROM + i·(TO−FROM)/N.
    Spread([DurationValue; 2]),
    /// Independent draws, uniform in [FROM, TO).
    Uniform([DurationValue; 2]),
    /// A Poisson process: exponential gaps with this mean, the first flow after the first gap.
    Poisson(DurationValue),
}

impl Expected for StartDistribution {
    const EXPECTED: &'static str =
        "a duration such as \"1s\" or a table { spread = [FROM, TO] }, { uniform = [FROM, TO] } or { poisson = MEAN }";
}

/// A flow-size distribution, one table key naming it.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDistribution {
    /// Uniform in [MIN, MAX].
    Uniform([SizeValue; 2]),
    /// Exponential with this mean.
    Exponential(SizeValue),
    /// Pareto (type I) with this mean and shape (> 1, or the mean is infinite).
    Pareto(ParetoSpec),
    /// Piecewise-linear empirical CDF: [size, cumulative probability] points, sizes strictly
    /// increasing, probabilities non-decreasing from at least 0 to exactly 1; draws below the
    /// first probability take the first size.
    Cdf(Vec<(SizeValue, f64)>),
}

impl Expected for SizeDistribution {
    const EXPECTED: &'static str = "a size such as \"100KB\" or a table { uniform = [MIN, MAX] }, { exponential = MEAN }, { pareto = { mean = MEAN, shape = S } } or { cdf = [[SIZE, P], ...] }";
}

#[derive(Clone, Copy, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParetoSpec {
    pub mean: SizeValue,
    /// Tail index α: > 1 (the mean is infinite at 1 and below); smaller is heavier.
    pub shape: f64,
}

/// A checked entry, ready to expand.
#[derive(Clone, Debug)]
pub struct FlowGroup {
    spec: FlowGroupSpec,
    /// The algorithms and how many of the entry's flows run each (summing to `count`).
    algorithms: Vec<(CcConfig, u64)>,
    src: Option<HostPattern>,
    dst: Option<HostPattern>,
}

impl FlowGroup {
    /// Checks `spec` (entry `path`, "flows.<n>"); `parse_cc` reads an algorithm name of the
    /// entry's stack (an error is the key at fault and what is wrong).
    pub fn new(
        spec: FlowGroupSpec,
        path: &str,
        parse_cc: impl Fn(Value) -> Result<CcConfig, (String, String)>,
    ) -> Result<FlowGroup, ScenarioError> {
        let err = |key: &str, message: String| ScenarioError::new(format!("{path}.{key}"), message);
        if spec.count == 0 {
            return Err(err("count", "0 stands for no flow; allowed: 1 or more (remove the entry for none)".into()));
        }
        let algorithms = match (&spec.cc, &spec.mix) {
            (Some(_), Some(_)) => return Err(err("mix", "is set with cc; allowed: one of cc (one algorithm) and mix (fractions)".into())),
            (None, None) => return Err(err("cc", "missing; give cc (one algorithm) or mix (algorithm names with fractions)".into())),
            (Some(cc), None) => vec![(cc.clone(), spec.count)],
            (None, Some(mix)) => {
                let mut parsed = Vec::with_capacity(mix.len());
                for (name, &fraction) in mix {
                    let key = format!("mix.{name}");
                    let cc = parse_cc(Value::String(name.clone())).map_err(|(_, message)| err(&key, message))?;
                    if !(fraction > 0.0 && fraction <= 1.0) {
                        return Err(err(&key, format!("{fraction} is not a fraction of the flows; allowed: more than 0, at most 1")));
                    }
                    parsed.push((cc, fraction));
                }
                if parsed.is_empty() {
                    return Err(err("mix", "is empty; allowed: algorithm names with fractions > 0 summing to 1".into()));
                }
                let sum: f64 = parsed.iter().map(|(_, f)| f).sum();
                if (sum - 1.0).abs() > MIX_SUM_TOLERANCE {
                    return Err(err(
                        "mix",
                        format!("the fractions sum to {sum}; allowed: algorithm names with fractions > 0 summing to 1"),
                    ));
                }
                let counts = largest_remainder(&parsed.iter().map(|(_, f)| *f).collect::<Vec<_>>(), spec.count);
                parsed.into_iter().zip(counts).map(|((cc, _), n)| (cc, n)).collect()
            }
        };
        let host = |key: &str, name: &Option<String>| name.as_deref().map(|n| HostPattern::parse(n).map_err(|m| err(key, m))).transpose();
        let (src, dst) = (host("src", &spec.src)?, host("dst", &spec.dst)?);
        if let Pattern::Drawn(d) = &spec.start {
            check_start(d).map_err(|(key, message)| err(&join_key("start", key), message))?;
        }
        if let Some(Pattern::Drawn(d)) = &spec.bytes {
            check_sizes(d).map_err(|(key, message)| err(&join_key("bytes", key), message))?;
        }
        Ok(FlowGroup { spec, algorithms, src, dst })
    }

    pub fn count(&self) -> u64 {
        self.spec.count
    }

    /// Appends the entry's flows to `out`; `entry` is the entry's index among the `[[flows]]`.
    pub fn expand(&self, entry: usize, seed: u64, out: &mut Vec<FlowSpec>) {
        let n = self.spec.count;
        let mut starts = StartSampler { rng: SimRng::stream(seed, &format!("flows/{entry}/start")), last_ns: 0.0 };
        let mut size_rng = SimRng::stream(seed, &format!("flows/{entry}/bytes"));
        let mut algorithms = SmoothRoundRobin::new(self.algorithms.iter().map(|(_, k)| *k).collect());
        for i in 0..n {
            out.push(FlowSpec {
                cc: self.algorithms[algorithms.next()].0.clone(),
                src: self.src.as_ref().map(|p| p.render(i)),
                dst: self.dst.as_ref().map(|p| p.render(i)),
                start: starts.start(&self.spec.start, i, n),
                stop: self.spec.stop,
                bytes: self.spec.bytes.as_ref().map(|b| match b {
                    Pattern::Fixed(size) => *size,
                    Pattern::Drawn(d) => SizeValue(d.sample(&mut size_rng)),
                }),
                app: self.spec.app.clone(),
                tcp: self.spec.tcp.clone(),
            });
        }
    }
}

fn join_key(key: &str, inner: String) -> String {
    if inner.is_empty() {
        key.to_string()
    } else {
        format!("{key}.{inner}")
    }
}

/// Seats per party by the largest remainder method: each gets the whole part of its quota
/// (fraction·seats), the seats left go to the largest remainders (ties: the earlier party).
pub fn largest_remainder(fractions: &[f64], seats: u64) -> Vec<u64> {
    let quotas: Vec<f64> = fractions.iter().map(|f| f * seats as f64).collect();
    let mut counts: Vec<u64> = quotas.iter().map(|q| (q.floor() as u64).min(seats)).collect();
    let mut by_remainder: Vec<usize> = (0..fractions.len()).collect();
    by_remainder.sort_by(|&a, &b| (quotas[b] - quotas[b].floor()).total_cmp(&(quotas[a] - quotas[a].floor())).then(a.cmp(&b)));
    let given: u64 = counts.iter().sum();
    for &party in by_remainder.iter().cycle().take(seats.saturating_sub(given) as usize) {
        counts[party] += 1;
    }
    // Rounding of the quotas can only overshoot by whole seats when the fractions sum above 1
    // within the tolerance: take them back from the last parties.
    let mut excess = counts.iter().sum::<u64>().saturating_sub(seats);
    for count in counts.iter_mut().rev() {
        let back = excess.min(*count);
        *count -= back;
        excess -= back;
    }
    counts
}

/// Smooth weighted round robin: each step every party gains its weight, the one with the
/// most (the earlier on ties) is chosen and pays the total; over sum(weights) steps each
/// party is chosen exactly its weight's times, spread as evenly as it can be.
struct SmoothRoundRobin {
    weights: Vec<u64>,
    current: Vec<i128>,
    total: i128,
}

impl SmoothRoundRobin {
    fn new(weights: Vec<u64>) -> Self {
        let total = weights.iter().map(|&w| i128::from(w)).sum();
        SmoothRoundRobin { current: vec![0; weights.len()], weights, total }
    }

    fn next(&mut self) -> usize {
        for (c, &w) in self.current.iter_mut().zip(&self.weights) {
            *c += i128::from(w);
        }
        let chosen = (0..self.current.len()).fold(0, |best, k| if self.current[k] > self.current[best] { k } else { best });
        self.current[chosen] -= self.total;
        chosen
    }
}

/// Start times of one entry: the Poisson process keeps its last arrival.
struct StartSampler {
    rng: SimRng,
    last_ns: f64,
}

impl StartSampler {
    fn start(&mut self, pattern: &StartPattern, i: u64, n: u64) -> DurationValue {
        let ns = match pattern {
            Pattern::Fixed(d) => return *d,
            Pattern::Drawn(StartDistribution::Spread([from, to])) => {
                let span = u128::from(to.0.as_nanos() - from.0.as_nanos());
                from.0.as_nanos() + (span * u128::from(i) / u128::from(n)) as u64
            }
            Pattern::Drawn(StartDistribution::Uniform([from, to])) => {
                let span = (to.0.as_nanos() - from.0.as_nanos()) as f64;
                from.0.as_nanos() + (self.rng.next_f64() * span) as u64
            }
            Pattern::Drawn(StartDistribution::Poisson(mean)) => {
                self.last_ns += self.rng.exponential(mean.0.as_nanos() as f64);
                (self.last_ns.round() as u64).min(MAX_QUANTITY)
            }
        };
        DurationValue(SimDuration::from_nanos(ns))
    }
}

/// (key inside the start table, what is wrong) of a start pattern that cannot be drawn.
fn check_start(d: &StartDistribution) -> Result<(), (String, String)> {
    match d {
        StartDistribution::Spread([from, to]) | StartDistribution::Uniform([from, to]) if to < from => {
            let key = if matches!(d, StartDistribution::Spread(_)) { "spread" } else { "uniform" };
            Err((key.into(), format!("[{from}, {to}] ends before it begins; allowed: [FROM, TO] with TO not before FROM")))
        }
        StartDistribution::Poisson(mean) if mean.0.as_nanos() == 0 => {
            Err(("poisson".into(), "0s would start every flow at once; allowed: a mean gap > 0 (or start = \"0s\")".into()))
        }
        _ => Ok(()),
    }
}

/// (key inside the bytes table, what is wrong) of a size distribution that cannot be drawn.
fn check_sizes(d: &SizeDistribution) -> Result<(), (String, String)> {
    let zero =
        |key: &str, size: SizeValue| (size.0 == 0).then(|| (key.to_string(), format!("{size} is not a flow size; allowed: at least 1B")));
    let problem = match d {
        SizeDistribution::Uniform([min, max]) => zero("uniform.0", *min).or_else(|| {
            (max < min)
                .then(|| ("uniform".into(), format!("[{min}, {max}] ends below its start; allowed: [MIN, MAX] with MAX at least MIN")))
        }),
        SizeDistribution::Exponential(mean) => zero("exponential", *mean),
        SizeDistribution::Pareto(p) => zero("pareto.mean", p.mean).or_else(|| {
            (!(p.shape > 1.0 && p.shape.is_finite()))
                .then(|| ("pareto.shape".into(), format!("{} leaves the mean undefined (infinite); allowed: a finite shape > 1", p.shape)))
        }),
        SizeDistribution::Cdf(points) => check_cdf(points),
    };
    problem.map_or(Ok(()), Err)
}

fn check_cdf(points: &[(SizeValue, f64)]) -> Option<(String, String)> {
    let Some(&(_, last)) = points.last() else {
        return Some(("cdf".into(), "is empty; allowed: [[SIZE, P], ...] with P reaching 1".into()));
    };
    let mut previous: Option<(SizeValue, f64)> = None;
    for (j, &(size, p)) in points.iter().enumerate() {
        let at = |k: usize| format!("cdf.{j}.{k}");
        if size.0 == 0 {
            return Some((at(0), format!("{size} is not a flow size; allowed: at least 1B")));
        }
        if !(0.0..=1.0).contains(&p) {
            return Some((at(1), format!("{p} is not a probability; allowed: 0 to 1")));
        }
        if let Some((size_before, p_before)) = previous {
            if size <= size_before {
                return Some((at(0), format!("{size} is not above the size before ({size_before}); allowed: strictly increasing sizes")));
            }
            if p < p_before {
                return Some((at(1), format!("{p} is below the probability before ({p_before}); allowed: non-decreasing probabilities")));
            }
        }
        previous = Some((size, p));
    }
    (last != 1.0)
        .then(|| (format!("cdf.{}.1", points.len() - 1), format!("{last} ends the CDF below 1; allowed: the last probability exactly 1")))
}

impl SizeDistribution {
    /// One size, whole bytes, at least 1 and at most the largest size a scenario can write.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        let bytes = match self {
            SizeDistribution::Uniform([min, max]) => min.0 as f64 + rng.next_f64() * (max.0 - min.0) as f64,
            SizeDistribution::Exponential(mean) => rng.exponential(mean.0 as f64),
            SizeDistribution::Pareto(p) => {
                let scale = p.mean.0 as f64 * (p.shape - 1.0) / p.shape;
                scale * (1.0 - rng.next_f64()).powf(-1.0 / p.shape)
            }
            SizeDistribution::Cdf(points) => cdf_inverse(points, rng.next_f64()),
        };
        (bytes.round() as u64).clamp(1, MAX_QUANTITY)
    }

    /// The distribution's mean, bytes (before rounding).
    pub fn mean(&self) -> f64 {
        match self {
            SizeDistribution::Uniform([min, max]) => (min.0 + max.0) as f64 / 2.0,
            SizeDistribution::Exponential(mean) => mean.0 as f64,
            SizeDistribution::Pareto(p) => p.mean.0 as f64,
            SizeDistribution::Cdf(points) => {
                let (first, p0) = points[0];
                let linear: f64 = points.windows(2).map(|w| (w[1].1 - w[0].1) * (w[0].0 .0 + w[1].0 .0) as f64 / 2.0).sum();
                p0 * first.0 as f64 + linear
            }
        }
    }
}

/// The size at cumulative probability `u` of a piecewise-linear CDF (the first size below
/// its probability).
fn cdf_inverse(points: &[(SizeValue, f64)], u: f64) -> f64 {
    let above = points.partition_point(|&(_, p)| p <= u).min(points.len() - 1);
    let (size, p) = points[above];
    if above == 0 || u < points[0].1 {
        return points[0].0 .0 as f64;
    }
    let (size_before, p_before) = points[above - 1];
    size_before.0 as f64 + (u - p_before) / (p - p_before) * (size.0 - size_before.0) as f64
}

/// A host name with "{i}", "{i % M}" or "{i / M}" in it.
#[derive(Clone, Debug, PartialEq)]
struct HostPattern(Vec<Piece>);

#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Text(String),
    Index,
    IndexModulo(u64),
    IndexDivided(u64),
}

impl HostPattern {
    const ALLOWED: &'static str = "allowed: {i}, {i % M} or {i / M} with M a positive whole number";

    fn parse(name: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut rest = name;
        while let Some(open) = rest.find(['{', '}']) {
            let (text, from_brace) = rest.split_at(open);
            pieces.extend((!text.is_empty()).then(|| Piece::Text(text.to_string())));
            let close = from_brace.find('}').filter(|_| from_brace.starts_with('{'));
            let Some(close) = close else {
                return Err(format!("{name:?} has an unmatched brace; {}", Self::ALLOWED));
            };
            let inside: String = from_brace[1..close].chars().filter(|c| !c.is_whitespace()).collect();
            let divisor = |s: &str| s.parse::<u64>().ok().filter(|&m| m > 0);
            let piece = match (inside.as_str(), inside.strip_prefix("i%"), inside.strip_prefix("i/")) {
                ("i", _, _) => Some(Piece::Index),
                (_, Some(m), _) => divisor(m).map(Piece::IndexModulo),
                (_, _, Some(m)) => divisor(m).map(Piece::IndexDivided),
                _ => None,
            };
            let Some(piece) = piece else {
                return Err(format!("{:?} in {name:?} is not an index pattern; {}", &from_brace[..=close], Self::ALLOWED));
            };
            pieces.push(piece);
            rest = &from_brace[close + 1..];
        }
        pieces.extend((!rest.is_empty()).then(|| Piece::Text(rest.to_string())));
        Ok(HostPattern(pieces))
    }

    fn render(&self, i: u64) -> String {
        self.0
            .iter()
            .map(|piece| match piece {
                Piece::Text(t) => Cow::Borrowed(t.as_str()),
                Piece::Index => Cow::Owned(i.to_string()),
                Piece::IndexModulo(m) => Cow::Owned((i % m).to_string()),
                Piece::IndexDivided(m) => Cow::Owned((i / m).to_string()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::resolve;
    use crate::scenario::Scenario;
    use serde_json::json;

    /// A dumbbell scenario of `flows` entries and `pairs` pairs (None: one per flow).
    fn scenario(flows: Value, pairs: Option<u32>) -> Value {
        let mut v = json!({
            "duration": "10s",
            "seed": 7,
            "topology": { "kind": "dumbbell", "bottleneck": { "rate": "10Mbps", "delay": "10ms", "buffer": "100pkt" } },
            "flows": flows
        });
        if let Some(pairs) = pairs {
            v["topology"]["pairs"] = json!(pairs);
        }
        v
    }

    fn resolved(flows: Value) -> Scenario {
        resolve(scenario(flows, None)).unwrap_or_else(|e| panic!("rejected: {e}"))
    }

    fn error(flows: Value) -> String {
        resolve(scenario(flows, Some(64))).expect_err("should be rejected").to_string()
    }

    fn ccs(s: &Scenario) -> Vec<&str> {
        s.flows.iter().map(|f| f.cc.name()).collect()
    }

    fn starts_ns(s: &Scenario) -> Vec<u64> {
        s.flows.iter().map(|f| f.start.0.as_nanos()).collect()
    }

    fn sizes(s: &Scenario) -> Vec<u64> {
        s.flows.iter().map(|f| f.bytes.expect("sized").0).collect()
    }

    #[test]
    fn entries_expand_in_order_with_dumbbell_ends_by_overall_index() {
        let s = resolved(json!([
            { "cc": "cubic" },
            { "cc": "bbr", "count": 3, "start": "1s", "bytes": "1MB", "stop": "5s", "tcp": { "mss": 1000 } },
            { "cc": "vegas" }
        ]));
        assert_eq!(ccs(&s), ["cubic", "bbr", "bbr", "bbr", "vegas"]);
        let ends: Vec<(&str, &str)> = s.flows.iter().map(|f| (f.src.as_deref().unwrap(), f.dst.as_deref().unwrap())).collect();
        assert_eq!(ends, [("s0", "r0"), ("s1", "r1"), ("s2", "r2"), ("s3", "r3"), ("s4", "r4")]);
        let crate::scenario::Topology::Dumbbell(d) = &s.topology else { unreachable!() };
        assert_eq!(d.pairs, Some(5));
        for f in &s.flows[1..4] {
            assert_eq!(
                (f.start.to_string(), f.bytes.unwrap().to_string(), f.stop.unwrap().to_string()),
                ("1s".into(), "1MB".into(), "5s".into())
            );
            assert_eq!(f.tcp.as_ref().unwrap().mss, 1000);
        }
        assert_eq!(s.flows[4].tcp.as_ref().unwrap().mss, 1448);
    }

    #[test]
    fn the_resolved_json_lists_every_expanded_flow() {
        let s = resolved(
            json!([{ "mix": { "cubic": 0.5, "bbr": 0.5 }, "count": 4, "start": { "spread": ["0s", "1s"] }, "bytes": { "exponential": "10KB" } }]),
        );
        let text = serde_json::to_value(&s).unwrap();
        let flows = text["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 4);
        for (f, spec) in flows.iter().zip(&s.flows) {
            assert!(f.get("count").is_none() && f.get("mix").is_none());
            assert_eq!(f["start"], json!(spec.start.to_string()));
            assert_eq!(f["bytes"], json!(spec.bytes.unwrap().to_string()));
            assert_eq!(f["cc"]["kind"], json!(spec.cc.name()));
        }
        // Written back, the resolved scenario resolves to itself.
        assert_eq!(resolve(text).unwrap(), s);
    }

    #[test]
    fn a_mix_is_apportioned_by_largest_remainder_and_interleaved() {
        let s = resolved(json!([{ "mix": { "cubic": 0.5, "bbr": 0.5 }, "count": 6 }]));
        assert_eq!(ccs(&s), ["bbr", "cubic", "bbr", "cubic", "bbr", "cubic"]);
        let s = resolved(json!([{ "mix": { "cubic": 0.3, "bbr": 0.7 }, "count": 10 }]));
        let names = ccs(&s);
        assert_eq!(names.iter().filter(|n| **n == "cubic").count(), 3);
        assert_eq!(names.iter().filter(|n| **n == "bbr").count(), 7);
        // Smooth: no two cubic flows in a row.
        assert!(names.windows(2).all(|w| w != ["cubic", "cubic"]), "{names:?}");
        assert_eq!(largest_remainder(&[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0], 10), [4, 3, 3]);
        assert_eq!(largest_remainder(&[0.5, 0.5], 1), [1, 0]);
        assert_eq!(largest_remainder(&[0.05, 0.95], 1000), [50, 950]);
    }

    #[test]
    fn spread_starts_are_exact_and_draws_are_deterministic_and_in_range() {
        let s = resolved(json!([{ "cc": "cubic", "count": 4, "start": { "spread": ["1s", "2s"] } }]));
        assert_eq!(starts_ns(&s), [1_000_000_000, 1_250_000_000, 1_500_000_000, 1_750_000_000]);
        let s = resolved(json!([{ "cc": "cubic", "count": 3, "start": { "spread": ["0s", "1s"] } }]));
        assert_eq!(starts_ns(&s), [0, 333_333_333, 666_666_666]);

        let drawn = |start: Value, seed: u64| {
            let mut v = scenario(json!([{ "cc": "cubic", "count": 200, "start": start }]), None);
            v["seed"] = json!(seed);
            starts_ns(&resolve(v).unwrap())
        };
        let uniform = json!({ "uniform": ["2s", "3s"] });
        let a = drawn(uniform.clone(), 1);
        assert_eq!(a, drawn(uniform.clone(), 1));
        assert_ne!(a, drawn(uniform, 2));
        assert!(a.iter().all(|t| (2_000_000_000..3_000_000_000).contains(t)));
        let mean_ns = a.iter().map(|&t| t as f64).sum::<f64>() / a.len() as f64;
        assert!((mean_ns - 2.5e9).abs() < 0.05e9, "{mean_ns}");

        let poisson = json!({ "poisson": "20ms" });
        let p = drawn(poisson.clone(), 1);
        assert_eq!(p, drawn(poisson.clone(), 1));
        assert_ne!(p, drawn(poisson, 2));
        assert!(p[0] > 0 && p.windows(2).all(|w| w[0] <= w[1]), "arrivals increase from the first gap");
        // 200 gaps of mean 20 ms: about 4 s (the standard deviation of the sum is 0.28 s).
        assert!((3.0e9..5.0e9).contains(&(p[199] as f64)), "{}", p[199]);
    }

    #[test]
    fn each_entry_draws_from_its_own_streams() {
        let entry = json!({ "cc": "cubic", "count": 5, "start": { "uniform": ["0s", "1s"] }, "bytes": { "exponential": "10KB" } });
        let one = resolved(json!([entry.clone()]));
        let two =
            resolved(json!([entry, { "cc": "bbr", "count": 2, "start": { "poisson": "1ms" }, "bytes": { "uniform": ["1KB", "2KB"] } }]));
        assert_eq!(starts_ns(&one), starts_ns(&two)[..5]);
        assert_eq!(sizes(&one), sizes(&two)[..5], "entry 0's stream is the same whatever comes after");
        // Sizes and starts come from separate streams: changing one leaves the other.
        let other_sizes =
            resolved(json!([{ "cc": "cubic", "count": 5, "start": { "uniform": ["0s", "1s"] }, "bytes": { "uniform": ["1KB", "9KB"] } }]));
        assert_eq!(starts_ns(&one), starts_ns(&other_sizes));
    }

    #[test]
    fn host_patterns_take_the_index_within_the_entry() {
        let mut v = scenario(json!([]), None);
        let nodes: Vec<Value> =
            (0..6).map(|k| json!({ "name": format!("h{k}") })).chain([json!({ "name": "sw", "role": "router" })]).collect();
        let links: Vec<Value> = (0..6).map(|k| json!({ "a": format!("h{k}"), "b": "sw", "rate": "1Gbps", "delay": "1ms" })).collect();
        v["topology"] = json!({ "kind": "explicit", "nodes": nodes, "links": links });
        v["flows"] = json!([
            { "cc": "cubic", "count": 4, "src": "h{i % 2}", "dst": "h5" },
            { "cc": "cubic", "count": 4, "src": "h{ i / 2 }", "dst": "h{i}{i}" },
        ]);
        let e = resolve(v.clone()).expect_err("h22 and h33 do not exist").to_string();
        assert!(e.starts_with("flows.1.dst: flow 0 of the entry's 4 (flows.4 once expanded): unknown node \"h00\""), "{e}");
        v["flows"][1]["dst"] = json!("h{i / 1}");
        v["flows"][1]["src"] = json!("h{i % 1}{i/4}");
        v["flows"][1]["count"] = json!(3);
        v["flows"][1]["dst"] = json!("h{i}");
        v["flows"][1]["src"] = json!("h5");
        let s = resolve(v).unwrap();
        let ends: Vec<String> = s.flows.iter().map(|f| format!("{}>{}", f.src.as_deref().unwrap(), f.dst.as_deref().unwrap())).collect();
        assert_eq!(ends, ["h0>h5", "h1>h5", "h0>h5", "h1>h5", "h5>h0", "h5>h1", "h5>h2"]);
        assert_eq!(HostPattern::parse("h{i % 1}{i/4}x").unwrap().render(9), "h02x");
        for (bad, message) in [
            (
                "h{j}",
                "flows.0.src: \"{j}\" in \"h{j}\" is not an index pattern; allowed: {i}, {i % M} or {i / M} with M a positive whole number",
            ),
            ("h{i % 0}", "flows.0.src: \"{i % 0}\" in \"h{i % 0}\" is not an index pattern"),
            ("h{i", "flows.0.src: \"h{i\" has an unmatched brace"),
            ("h}", "flows.0.src: \"h}\" has an unmatched brace"),
        ] {
            let e = error(json!([{ "cc": "cubic", "count": 2, "src": bad, "dst": "r0" }]));
            assert!(e.starts_with(message), "{e}");
        }
    }

    #[test]
    fn bad_entries_are_refused_with_their_key_path() {
        let cases = [
            (json!({ "cc": "cubic", "count": 0 }), "flows.0.count: 0 stands for no flow; allowed: 1 or more"),
            (json!({ "cc": "cubic", "count": -1 }), "flows.0.count: expected a whole number"),
            (json!({ "count": 2 }), "flows.0.cc: missing; give cc (one algorithm) or mix"),
            (json!({ "cc": "cubic", "mix": { "bbr": 1.0 } }), "flows.0.mix: is set with cc"),
            (
                json!({ "mix": { "cubic": 0.5, "bbr": 0.4 } }),
                "flows.0.mix: the fractions sum to 0.9; allowed: algorithm names with fractions > 0 summing to 1",
            ),
            (json!({ "mix": {} }), "flows.0.mix: is empty; allowed: algorithm names with fractions > 0 summing to 1"),
            (
                json!({ "mix": { "cubic": 1.0, "bbr": 0.0 } }),
                "flows.0.mix.bbr: 0 is not a fraction of the flows; allowed: more than 0, at most 1",
            ),
            (json!({ "mix": { "cubic": 1.5, "bbr": -0.5 } }), "flows.0.mix.bbr: -0.5 is not a fraction"),
            (json!({ "mix": { "cubic": 0.5, "quic": 0.5 } }), "flows.0.mix.quic: "),
            (json!({ "mix": { "cubic": "half" } }), "flows.0.mix.cubic: expected a number"),
            (json!({ "cc": "cubic", "start": { "spread": ["2s", "1s"] } }), "flows.0.start.spread: [2s, 1s] ends before it begins"),
            (json!({ "cc": "cubic", "start": { "uniform": ["2s", "1s"] } }), "flows.0.start.uniform: [2s, 1s] ends before it begins"),
            (json!({ "cc": "cubic", "start": { "poisson": "0s" } }), "flows.0.start.poisson: 0s would start every flow at once"),
            (json!({ "cc": "cubic", "start": { "spread": ["0s", "1x"] } }), "flows.0.start.spread.1: \"1x\" has an unknown duration unit"),
            (
                json!({ "cc": "cubic", "start": { "gauss": "1s" } }),
                "flows.0.start.gauss: unknown value \"gauss\"; allowed: spread, uniform, poisson",
            ),
            (json!({ "cc": "cubic", "start": 5 }), "flows.0.start: "),
            (
                json!({ "cc": "cubic", "bytes": { "uniform": ["0B", "1KB"] } }),
                "flows.0.bytes.uniform.0: 0B is not a flow size; allowed: at least 1B",
            ),
            (json!({ "cc": "cubic", "bytes": { "uniform": ["2KB", "1KB"] } }), "flows.0.bytes.uniform: [2KB, 1KB] ends below its start"),
            (json!({ "cc": "cubic", "bytes": { "uniform": ["-2KB", "1KB"] } }), "flows.0.bytes.uniform.0: \"-2KB\" is negative"),
            (json!({ "cc": "cubic", "bytes": { "exponential": "0B" } }), "flows.0.bytes.exponential: 0B is not a flow size"),
            (
                json!({ "cc": "cubic", "bytes": { "pareto": { "mean": "100KB", "shape": 1.0 } } }),
                "flows.0.bytes.pareto.shape: 1 leaves the mean undefined (infinite); allowed: a finite shape > 1",
            ),
            (
                json!({ "cc": "cubic", "bytes": { "pareto": { "mean": "0B", "shape": 1.5 } } }),
                "flows.0.bytes.pareto.mean: 0B is not a flow size",
            ),
            (
                json!({ "cc": "cubic", "bytes": { "pareto": { "mean": "1KB" } } }),
                "flows.0.bytes.pareto.shape: missing; this key is required",
            ),
            (json!({ "cc": "cubic", "bytes": { "cdf": [] } }), "flows.0.bytes.cdf: is empty"),
            (
                json!({ "cc": "cubic", "bytes": { "cdf": [["1KB", 0.5], ["1KB", 1.0]] } }),
                "flows.0.bytes.cdf.1.0: 1KB is not above the size before (1KB); allowed: strictly increasing sizes",
            ),
            (
                json!({ "cc": "cubic", "bytes": { "cdf": [["1KB", 0.5], ["2KB", 0.4], ["3KB", 1.0]] } }),
                "flows.0.bytes.cdf.1.1: 0.4 is below the probability before (0.5)",
            ),
            (
                json!({ "cc": "cubic", "bytes": { "cdf": [["1KB", -0.1], ["2KB", 1.0]] } }),
                "flows.0.bytes.cdf.0.1: -0.1 is not a probability; allowed: 0 to 1",
            ),
            (
                json!({ "cc": "cubic", "bytes": { "cdf": [["1KB", 0.5], ["2KB", 0.99]] } }),
                "flows.0.bytes.cdf.1.1: 0.99 ends the CDF below 1; allowed: the last probability exactly 1",
            ),
            (json!({ "cc": "cubic", "bytes": { "cdf": [["0B", 0.0], ["2KB", 1.0]] } }), "flows.0.bytes.cdf.0.0: 0B is not a flow size"),
            (json!({ "cc": "cubic", "bytes": { "cdf": [["1KB", 0.5, 3]] } }), "flows.0.bytes.cdf.0: "),
            (
                json!({ "cc": "cubic", "bytes": "0B", "count": 3 }),
                "flows.0.bytes: flow 0 of the entry's 3 (flows.0 once expanded): must be > 0",
            ),
            (
                json!({ "cc": "cubic", "count": 3, "start": { "spread": ["0s", "20s"] } }),
                "flows.0.start: flow 2 of the entry's 3 (flows.2 once expanded): 13333333333ns is not before the end of the run (10s)",
            ),
        ];
        for (entry, start) in cases {
            let e = error(json!([{ "cc": "bbr" }, entry.clone()])).replacen("flows.1", "flows.0", 1).replace("(flows.3 ", "(flows.2 ");
            let e = if e.contains("once expanded") { error(json!([entry])) } else { e };
            assert!(e.starts_with(start), "expected {start:?} in {e:?}");
        }
        // A mix's algorithms are read for the entry's stack: ns-3's variants on the ns3 stack.
        let e = error(json!([{ "mix": { "bbr": 0.5, "dctcp": 0.5 }, "tcp": { "stack": "ns3" } }]));
        assert!(e.starts_with("flows.0.mix.dctcp: "), "{e}");
        let s = resolved(json!([{ "mix": { "bbr": 0.5, "cubic": 0.5 }, "count": 2, "tcp": { "stack": "ns3" } }]));
        assert_eq!(s.flows[0].cc, tcplab_cc::ns3::parse(json!("bbr")).unwrap());
        assert_ne!(s.flows[0].cc, CcConfig::parse(json!("bbr")).unwrap());
    }

    #[test]
    fn a_huge_count_is_refused_before_anything_is_allocated() {
        let e = resolve(scenario(json!([{ "cc": "cubic", "count": 1_000_000_000u64 }]), None)).unwrap_err().to_string();
        assert_eq!(
            e,
            "flows.0.count: 1000000000 flows would need ~7.5 TiB (record.memory_limit 512 MiB); allowed: at most 65536 flows in all"
        );
        let e = resolve(scenario(json!([{ "cc": "cubic", "count": 10 }, { "cc": "cubic", "count": 65_530 }]), None)).unwrap_err();
        assert_eq!(e.path, "flows.1.count");
        assert!(e.message.starts_with("65530 flows (65540 with the entries before) would need"), "{e}");
        // A larger limit lets more through.
        let mut v = scenario(json!([{ "cc": "cubic", "count": 65537 }]), None);
        assert_eq!(resolve(v.clone()).unwrap_err().path, "flows.0.count");
        v["record"] = json!({ "memory_limit": "1GiB" });
        v["duration"] = json!("1s");
        v["sample_interval"] = json!("1s");
        assert_eq!(resolve(v).unwrap().flows.len(), 65537);
    }

    #[test]
    fn the_schema_shows_the_input_form_of_flows() {
        let schema = crate::schema();
        assert_eq!(schema["properties"]["flows"]["items"]["$ref"], json!("#/$defs/FlowGroupSpec"));
        let entry = &schema["$defs"]["FlowGroupSpec"]["properties"];
        for key in ["count", "cc", "mix", "src", "dst", "start", "stop", "bytes", "app", "tcp"] {
            assert!(entry.get(key).is_some(), "{key} missing from {entry}");
        }
        let defs = serde_json::to_string(&schema["$defs"]).unwrap();
        for name in ["spread", "poisson", "exponential", "pareto", "cdf", "shape"] {
            assert!(defs.contains(&format!("\"{name}\"")), "{name} missing from the schema");
        }
    }

    /// Sample means of 20 000 draws (a fixed seed: not flaky) against the distribution's mean.
    #[test]
    fn size_draws_have_their_distributions_mean() {
        let cdf = SizeDistribution::Cdf(vec![
            (SizeValue(1_000), 0.2),
            (SizeValue(10_000), 0.5),
            (SizeValue(100_000), 0.9),
            (SizeValue(1_000_000), 1.0),
        ]);
        // 0.2·1000 + 0.3·5500 + 0.4·55000 + 0.1·550000
        assert!((cdf.mean() - 78_850.0).abs() < 1e-6);
        let cases = [
            (SizeDistribution::Uniform([SizeValue(1_000), SizeValue(9_000)]), 0.01),
            (SizeDistribution::Exponential(SizeValue(100_000)), 0.03),
            (SizeDistribution::Pareto(ParetoSpec { mean: SizeValue(100_000), shape: 2.5 }), 0.03),
            (cdf, 0.03),
        ];
        for (d, tolerance) in cases {
            let mut rng = SimRng::stream(1, "flows/0/bytes");
            let draws: Vec<u64> = (0..20_000).map(|_| d.sample(&mut rng)).collect();
            let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
            assert!((mean / d.mean() - 1.0).abs() < tolerance, "{d:?}: sample mean {mean} vs {}", d.mean());
            assert!(draws.iter().all(|&b| b >= 1));
        }
        // Below the first probability, the first size; between points, linear.
        let points = [(SizeValue(1_000), 0.5), (SizeValue(3_000), 1.0)];
        assert_eq!(cdf_inverse(&points, 0.25), 1_000.0);
        assert_eq!(cdf_inverse(&points, 0.75), 2_000.0);
        assert_eq!(cdf_inverse(&[(SizeValue(7), 1.0)], 0.3), 7.0);
        // The Pareto's tail is held to the largest size a scenario can write.
        let heavy = SizeDistribution::Pareto(ParetoSpec { mean: SizeValue(1_000_000), shape: 1.0001 });
        let mut rng = SimRng::stream(3, "x");
        assert!((0..1000).all(|_| heavy.sample(&mut rng) <= MAX_QUANTITY));
    }
}
