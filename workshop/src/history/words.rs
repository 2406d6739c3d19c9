//! The small pieces every sentence of the checker is made of, in English and Chinese: a time
//! relative to the run's first call, an operation named so a student can find it.

use oversell_api::history::{Request, Section};

/// `us` as seconds after `origin`: `12.064 s`.
pub fn secs(us: i64, origin: i64) -> String {
    // In i128: two times far apart (a hand-made file) do not wrap.
    format!(
        "{:.3} s",
        (i128::from(us) - i128::from(origin)) as f64 / 1e6
    )
}

/// A section in a sentence: `A (app1, fence 7)`, `A（app1，fence 7）`.
pub fn section(label: &str, s: &Section) -> (String, String) {
    match s.fence {
        Some(f) => (
            format!("{label} ({}, fence {f})", s.instance),
            format!("{label}（{}，fence {f}）", s.instance),
        ),
        None => (
            format!("{label} ({})", s.instance),
            format!("{label}（{}）", s.instance),
        ),
    }
}

/// A request in a sentence: `buyer b-17 (app2, 1.200 s → 1.350 s, stock_left 99)`.
pub fn request(r: &Request, origin: i64) -> (String, String) {
    let instance = r.instance.as_deref().unwrap_or("?");
    let left = r
        .stock_left
        .map(|l| format!(", stock_left {l}"))
        .unwrap_or_default();
    let span = format!(
        "{} → {}",
        secs(r.call_us, origin),
        secs(r.return_us, origin)
    );
    (
        format!("buyer {} ({instance}, {span}, {}{left})", r.buyer, r.status),
        format!("买家 {}（{instance}，{span}，{}{left}）", r.buyer, r.status),
    )
}

/// The units a sale that left `left` of `qty` took, in words (in `i128`: a `left` near
/// `i64::MAX` does not wrap).
pub fn units_of(left: Option<i64>, qty: u32) -> (String, String) {
    let Some(left) = left.map(i128::from) else {
        return ("no unit".into(), "未指明单位".into());
    };
    if qty <= 1 {
        (format!("unit {}", left + 1), format!("第 {} 件", left + 1))
    } else {
        let top = left + i128::from(qty);
        (
            format!("units {}–{top}", left + 1),
            format!("第 {}–{top} 件", left + 1),
        )
    }
}

/// An optional fence in words (`?` when none was recorded), as the unsigned number it is.
pub fn fence(f: Option<u64>) -> String {
    f.map_or_else(|| "?".to_string(), |f| f.to_string())
}

/// A fault kind as what it did to its target: `frozen`, `paused`.
pub fn fault_done(kind: &str) -> (&'static str, &'static str) {
    let k = kind.to_ascii_lowercase();
    if k.contains("freeze") || k.contains("stop") || k.contains("sigstop") {
        ("frozen", "被冻结")
    } else if k.contains("crash") || k.contains("kill") {
        ("crashed", "崩溃")
    } else if k.contains("partition") || k.contains("cut") {
        ("cut off by a partition", "被网络分区隔开")
    } else if k.contains("clock") {
        ("on a jumped clock", "时钟被调快")
    } else {
        ("paused", "被暂停")
    }
}

/// An optional stock value in words (`?` when none was recorded).
pub fn value(v: Option<i64>) -> String {
    v.map_or_else(|| "?".to_string(), |v| v.to_string())
}
