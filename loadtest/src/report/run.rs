//! The `run` summary, as text or JSON, and `loadtest hand-off`'s reading of the ledger.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use oversell_api::Settings;
use serde_json::json;

use super::{ratio, tier_svg};
use crate::fairness::Fairness;
use crate::hand_off::{thousands, HandOff, Spread};
use crate::stats::RunStats;
use crate::worker::{Load, Model, Stop};
use oversell_client::target::Targets;

/// What a sale run adds to its summary: the settings it ran with and what the ground truth
/// says of its hand-offs, beside the acquires each client got.
#[derive(Debug, Clone)]
pub struct SaleRun {
    /// As `GET /state` reported them before the run; `None` when it could not be read.
    pub settings: Option<Settings>,
    /// From the ledger, or why not.
    pub hand_off: Result<HandOff, String>,
    pub fairness: Fairness,
}

impl SaleRun {
    /// "lua-release, wait pubsub, business 0 ms, lease 3000 ms", when the settings were read.
    pub fn describe(&self) -> Option<String> {
        self.settings.as_ref().map(|s| {
            format!(
                "{}, wait {}, business {} ms, lease {} ms",
                s.tier, s.wait, s.business_ms, s.ttl_ms
            )
        })
    }

    /// The chart's file name: the tier and its way of waiting (`lua-release-pubsub.svg`).
    pub fn chart_name(&self) -> String {
        match &self.settings {
            Some(s) => format!("{}-{}.svg", s.tier, s.wait.to_string().replace(':', "-")),
            None => "run.svg".to_owned(),
        }
    }

    /// A chart of this run's hand-offs and acquires per client.
    pub fn svg(&self, targets: &Targets) -> String {
        let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
        tier_svg(
            &self.describe().unwrap_or_else(|| "a sale run".to_owned()),
            &format!("Measured by loadtest run against {}", urls.join(", ")),
            self.hand_off.as_ref().map_err(String::as_str),
            &self.fairness,
        )
    }
}

/// A sentence describing the load, e.g. "closed loop, 50 connections, 10000 requests".
pub fn describe(load: &Load) -> String {
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let stop = |stop: Stop| match stop {
        Stop::Requests(n) => count(n, "request", "requests"),
        Stop::After(d) => format!("for {d:?}"),
    };
    let what = format!("{} {}", load.request.method, load.request.path);
    let connections = count(load.workers() as u64, "connection", "connections");
    match load.model {
        Model::Burst { buyers } => format!(
            "{what}: burst of {} released at once over {connections}",
            count(buyers, "buyer", "buyers")
        ),
        Model::Closed { stop: s } => format!("{what}: closed loop, {connections}, {}", stop(s)),
        Model::Open { rate, stop: s } => format!(
            "{what}: open loop at {rate} requests/s, at most {connections}, {} (latency from when each request was due)",
            stop(s)
        ),
    }
}

/// The `run` summary as text.
pub fn run_text(
    targets: &Targets,
    load: &Load,
    stats: &RunStats,
    sale: Option<&SaleRun>,
) -> String {
    let s = stats.summary();
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let mut out = String::new();
    let _ = writeln!(out, "Target      {}", urls.join(", "));
    if let Some(tier) = sale.and_then(SaleRun::describe) {
        let _ = writeln!(out, "Tier        {tier}");
    }
    let _ = writeln!(out, "Load        {}", describe(load));
    let _ = writeln!(
        out,
        "Elapsed     {:.3} s, {} sent, {:.1} answers/s",
        s.elapsed_s, s.sent, s.throughput_rps
    );
    let statuses: Vec<String> = s
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let _ = writeln!(
        out,
        "Answers     {}",
        match statuses.is_empty() {
            true => "none".to_owned(),
            false => statuses.join("   "),
        }
    );
    let _ = writeln!(
        out,
        "Failures    connection errors: {}   timeouts: {}{}",
        s.conn_errors,
        s.timeouts,
        s.first_error
            .as_ref()
            .map(|e| format!("   (first: {e})"))
            .unwrap_or_default()
    );
    let l = &s.latency_ms;
    let _ = writeln!(
        out,
        "Latency ms  p50 {}   p90 {}   p99 {}   p99.9 {}   max {}",
        l.p50, l.p90, l.p99, l.p99_9, l.max
    );
    if let Some(sale) = sale {
        out.push_str(&sale_text(sale));
    }
    out
}

/// The hand-off and fairness lines of a sale run.
fn sale_text(sale: &SaleRun) -> String {
    let mut out = hand_off_text(&sale.hand_off);
    let f = &sale.fairness;
    let _ = writeln!(
        out,
        "Acquires    per client ({} clients): min {}   max {}   min/max {}   Jain's index {}",
        f.clients,
        f.min,
        f.max,
        ratio(f.min_over_max),
        ratio(f.jain)
    );
    out.push_str(&instances_text(&f.per_instance));
    out
}

/// The hand-off lines: its percentiles and the time inside a section, or why there are none.
fn hand_off_text(hand_off: &Result<HandOff, String>) -> String {
    let spread = |s: &Spread| {
        format!(
            "p50 {}   p99 {}   p99.9 {}   max {}",
            s.p50, s.p99, s.p99_9, s.max
        )
    };
    let mut out = String::new();
    let h = match hand_off {
        Ok(h) => h,
        Err(why) => {
            let _ = writeln!(out, "Hand-off    not measured: {why}");
            return out;
        }
    };
    let _ = match &h.ms {
        Some(ms) => writeln!(
            out,
            "Hand-off ms {}   ({}; Redis' clock, from the ledger)",
            spread(ms),
            h.scope()
        ),
        None => writeln!(out, "Hand-off    {}", h.scope()),
    };
    if let Some(inside) = &h.inside_ms {
        let _ = writeln!(
            out,
            "Inside ms   {}   (a sold section, from its read to its write)",
            spread(inside)
        );
    }
    if let Some(split) = &h.inside_split {
        let _ = writeln!(
            out,
            "  of which  store → instance p50 {} p99 {} · instance p50 {} p99 {} · instance → store p50 {} p99 {}   (the instances' clock beside Redis')",
            split.to_instance_ms.p50,
            split.to_instance_ms.p99,
            split.in_instance_ms.p50,
            split.in_instance_ms.p99,
            split.to_store_ms.p50,
            split.to_store_ms.p99
        );
    }
    if let Some(turn) = &h.turn {
        let _ = writeln!(
            out,
            "Turn ms     {}   ({} sections in a row, one per buyer: an in-order lock's wait)",
            spread(&turn.ms),
            thousands(turn.sections)
        );
    }
    out
}

fn instances_text(per_instance: &BTreeMap<String, u64>) -> String {
    if per_instance.is_empty() {
        return String::new();
    }
    let each: Vec<String> = per_instance
        .iter()
        .map(|(id, n)| format!("{id} {}", thousands(*n)))
        .collect();
    format!("Instances   sales: {}\n", each.join("   "))
}

/// `loadtest hand-off`: what the room's ledger says as it stands, as text or JSON.
pub fn ledger_report(
    targets: &Targets,
    settings: &Settings,
    hand_off: &HandOff,
    per_instance: &BTreeMap<String, u64>,
    as_json: bool,
) -> String {
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    if as_json {
        let value = json!({
            "targets": urls,
            "settings": settings,
            "hand_off": hand_off,
            "per_instance": per_instance,
        });
        return format!("{value:#}\n");
    }
    let mut out = format!("Target      {}\n", urls.join(", "));
    let _ = writeln!(
        out,
        "Tier        {}, wait {}, business {} ms, lease {} ms",
        settings.tier, settings.wait, settings.business_ms, settings.ttl_ms
    );
    let _ = writeln!(out, "Ledger      every sale since the room's last reset");
    out.push_str(&hand_off_text(&Ok(hand_off.clone())));
    out.push_str(&instances_text(per_instance));
    out
}

/// The `run` summary as JSON.
pub fn run_json(
    targets: &Targets,
    load: &Load,
    stats: &RunStats,
    sale: Option<&SaleRun>,
) -> String {
    let urls: Vec<&str> = targets.iter().map(|t| t.url()).collect();
    let mut value = json!({
        "targets": urls,
        "load": describe(load),
        "connections": load.workers(),
        "stats": stats.summary(),
    });
    if let Some(sale) = sale {
        value["settings"] = json!(sale.settings);
        match &sale.hand_off {
            Ok(h) => value["hand_off"] = json!(h),
            Err(why) => {
                value["hand_off"] = serde_json::Value::Null;
                value["hand_off_unmeasured"] = json!(why);
            }
        }
        value["fairness"] = json!(sale.fairness);
    }
    format!("{value:#}\n")
}
