//! The printed result: a Markdown table (so it can be pasted into `docs/benchmarks.md`).

/// Whether a row meets its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Met,
    Missed,
    /// Context only; no target.
    Info,
}

impl Verdict {
    pub fn of(met: bool) -> Self {
        if met { Verdict::Met } else { Verdict::Missed }
    }

    fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::Missed => "**MISSED**",
            Verdict::Info => "",
        }
    }
}

pub struct Row {
    pub bench: &'static str,
    pub measure: String,
    pub input: String,
    pub result: String,
    pub baseline: String,
    pub verdict: Verdict,
}

#[derive(Default)]
pub struct Table {
    rows: Vec<Row>,
}

impl Table {
    pub fn push(
        &mut self,
        bench: &'static str,
        measure: impl Into<String>,
        input: impl Into<String>,
        result: impl Into<String>,
        baseline: impl Into<String>,
        verdict: Verdict,
    ) {
        self.rows.push(Row {
            bench,
            measure: measure.into(),
            input: input.into(),
            result: result.into(),
            baseline: baseline.into(),
            verdict,
        });
    }

    pub fn missed(&self) -> usize {
        self.rows.iter().filter(|r| r.verdict == Verdict::Missed).count()
    }

    pub fn print(&self) {
        println!("| # | measure | input | result (median) | baseline / target | verdict |");
        println!("|---|---|---|---|---|---|");
        for row in &self.rows {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                row.bench,
                row.measure,
                row.input,
                row.result,
                row.baseline,
                row.verdict.label()
            );
        }
    }
}

/// Microseconds with a sensible number of digits.
pub fn micros(us: f64) -> String {
    if us >= 100.0 { format!("{us:.0} µs") } else { format!("{us:.1} µs") }
}

pub fn millis(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.3} ms")
    }
}
