//! Medians and percentiles over repetitions and samples.

/// The median of `values` (mean of the middle two for an even count); 0 when empty.
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) { (sorted[mid - 1] + sorted[mid]) / 2.0 } else { sorted[mid] }
}

/// Nearest-rank percentile (`p` in 0..=100) of already sorted samples; 0 when empty.
pub fn percentile_sorted(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// p50, p99 and max of latency samples in nanoseconds, as milliseconds.
pub struct Latencies {
    pub count: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latencies {
    pub fn of(mut samples_ns: Vec<u64>) -> Self {
        samples_ns.sort_unstable();
        let ms = |ns: u64| ns as f64 / 1e6;
        Self {
            count: samples_ns.len(),
            p50_ms: ms(percentile_sorted(&samples_ns, 50.0)),
            p99_ms: ms(percentile_sorted(&samples_ns, 99.0)),
            max_ms: ms(samples_ns.last().copied().unwrap_or(0)),
        }
    }
}
