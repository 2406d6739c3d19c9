//! `loadtest scenario <id>` and `loadtest curriculum`: run scenarios against a fleet and print
//! each one's verdicts, figures and explanation, or how often it held over `--repeat` runs.

use std::fmt::Write;

use anyhow::{anyhow, bail};
use clap::Args;
use http::Method;
use serde_json::{json, Value};

use super::{find, Runner, Scenario, ScenarioRun, CATALOG};
use loadtest::args::{Lang, TargetArgs};
use oversell_client::admin::{AdminClient, TOKEN_HINT};
use oversell_client::http::preflight;
use oversell_client::target::Targets;

/// What every scenario command needs.
#[derive(Debug, Args)]
pub struct ScenarioCommon {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Admin token of the service.
    #[arg(long, env = "OVERSELL_ADMIN_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Instances behind the URL that must hear each settings change [default: those
    /// `GET /instances` lists].
    #[arg(long, value_name = "N")]
    pub instances: Option<usize>,

    /// Run each scenario this many times and report how often its expectation held.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,

    /// Language of the explanations.
    #[arg(long, value_enum, default_value = "both")]
    pub lang: Lang,

    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  loadtest scenario list
  OVERSELL_ADMIN_TOKEN=secret loadtest scenario setnx-crash
  loadtest scenario fenced-freeze --token secret --repeat 20 --lang zh
  loadtest scenario none-race --token secret --history none-race.jsonl && loadtest check none-race.jsonl")]
pub struct ScenarioArgs {
    /// Scenario id, or `list`.
    pub id: String,

    /// Write the run's whole history to FILE (JSON Lines: every request, section, lease and
    /// fault; `loadtest check FILE` reads it). With --repeat, the last run's.
    #[arg(long, value_name = "FILE")]
    pub history: Option<std::path::PathBuf>,

    #[command(flatten)]
    pub common: ScenarioCommon,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:
  OVERSELL_ADMIN_TOKEN=secret loadtest curriculum
  loadtest curriculum --token secret --timing-sensitive --repeat 20")]
pub struct CurriculumArgs {
    /// Only the scenarios whose outcome depends on timing.
    #[arg(long)]
    pub timing_sensitive: bool,

    #[command(flatten)]
    pub common: ScenarioCommon,
}

pub async fn one(args: ScenarioArgs) -> anyhow::Result<String> {
    if args.id == "list" {
        return Ok(list(args.common.lang));
    }
    let scenario = find(&args.id).ok_or_else(|| {
        let ids: Vec<&str> = CATALOG.iter().map(|s| s.id).collect();
        anyhow!("unknown scenario `{}`; valid: {}", args.id, ids.join(", "))
    })?;
    let results = run_all(&args.common, &[scenario]).await?;
    if let Some(path) = &args.history {
        let last = results.runs.first().and_then(|r| r.runs.last());
        match last.map(|run| &run.history) {
            Some(Ok(lines)) => crate::recorder::write(path, lines)?,
            Some(Err(why)) => bail!("the run's history could not be read back: {why}"),
            None => bail!("no run, so no history"),
        }
    }
    results.report()
}

pub async fn all(args: CurriculumArgs) -> anyhow::Result<String> {
    let chosen: Vec<&Scenario> = CATALOG
        .iter()
        .filter(|s| !args.timing_sensitive || s.timing_sensitive)
        .collect();
    run_all(&args.common, &chosen).await?.report()
}

fn list(lang: Lang) -> String {
    let mut out = String::new();
    for s in CATALOG.iter() {
        let _ = writeln!(out, "{:<34} {:<20} {}", s.id, s.tier, s.expectation());
        explain(&mut out, s, lang);
    }
    out
}

/// Every run of one scenario.
struct Runs<'a> {
    scenario: &'a Scenario,
    runs: Vec<ScenarioRun>,
}

impl Runs<'_> {
    fn held(&self) -> usize {
        self.runs.iter().filter(|r| r.passed).count()
    }
}

/// What a scenario command ran, and its report.
struct Results<'a> {
    runs: Vec<Runs<'a>>,
    report: String,
}

impl Results<'_> {
    /// The report; an error carrying it when a scenario did not always hold.
    fn report(self) -> anyhow::Result<String> {
        let failed = self.runs.iter().filter(|r| r.held() < r.runs.len()).count();
        match failed {
            0 => Ok(self.report),
            n => Err(anyhow!(
                "{}\n{n} of {} scenarios did not always show their expected outcome",
                self.report,
                self.runs.len()
            )),
        }
    }
}

async fn run_all<'a>(
    common: &ScenarioCommon,
    scenarios: &[&'a Scenario],
) -> anyhow::Result<Results<'a>> {
    let targets = Targets::parse(&common.target.urls, common.target.room.as_deref())?;
    let Some(token) = common.token.clone() else {
        bail!("scenarios need the admin token — {TOKEN_HINT}");
    };
    preflight(&targets, common.target.timeout).await?;
    let admin = AdminClient::new(&targets, Some(token));
    let instances = match common.instances {
        Some(n) => n,
        None => live_instances(&admin).await?,
    };
    let runner = Runner {
        targets: &targets,
        admin: &admin,
        instances,
        spare: None,
        step: Default::default(),
    };
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for scenario in scenarios {
        // A lock-store scenario on a fleet with another lock store: say so, run the rest.
        if scenarios.len() > 1 {
            if let Some(why) = runner.misfit(scenario).await? {
                skipped.push(format!("SKIP  {}: {why}", scenario.id));
                continue;
            }
        }
        let mut runs = Vec::new();
        for _ in 0..common.repeat {
            runs.push(runner.run(scenario).await?);
        }
        if !common.json && !common.target.quiet {
            let held = runs.iter().filter(|r| r.passed).count();
            eprintln!("{:<34} held {held}/{}", scenario.id, runs.len());
        }
        results.push(Runs { scenario, runs });
    }
    let mut report = match common.json {
        true => json_report(&results),
        false => text_report(&results, common.lang, common.repeat),
    };
    if !common.json && !skipped.is_empty() {
        report += &format!("\n{}\n", skipped.join("\n"));
    }
    Ok(Results {
        runs: results,
        report,
    })
}

async fn live_instances(admin: &AdminClient) -> anyhow::Result<usize> {
    let listed = admin.request(Method::GET, "/instances", None).await?;
    let n = listed["instances"].as_array().map_or(0, Vec::len);
    if n == 0 {
        bail!("GET /instances lists no live instance; pass --instances N");
    }
    Ok(n)
}

fn explain(out: &mut String, s: &Scenario, lang: Lang) {
    if lang != Lang::Zh {
        let _ = writeln!(out, "    why: {}", s.en);
    }
    if lang != Lang::En {
        let _ = writeln!(out, "    为什么: {}", s.zh);
    }
    let _ = writeln!(out, "    source: {}", s.source);
}

const SHOWN: [(&str, &str); 8] = [
    ("orders", "orders"),
    ("stock", "stock"),
    ("oversold", "oversold"),
    ("lost_updates", "lost"),
    ("overlaps", "overlaps"),
    ("foreign_releases", "foreign"),
    ("stale_writes_rejected", "stale"),
    ("sent_503", "503s"),
];

fn text_report(results: &[Runs<'_>], lang: Lang, repeat: u32) -> String {
    let mut out = String::new();
    for r in results {
        let s = r.scenario;
        let verdict = match (r.held(), r.runs.len()) {
            (h, n) if h == n => "PASS",
            _ => "FAIL",
        };
        let rate = match repeat {
            1 => String::new(),
            _ => format!(
                " — held {}/{} ({:.0}%)",
                r.held(),
                r.runs.len(),
                100.0 * r.held() as f64 / r.runs.len() as f64
            ),
        };
        let _ = writeln!(out, "{verdict}  {} (tier {}){rate}", s.id, s.tier);
        let _ = writeln!(out, "    expect: {}", s.expectation());
        // The last run that failed tells the most; otherwise the last run.
        let shown = r
            .runs
            .iter()
            .rev()
            .find(|run| !run.passed)
            .or(r.runs.last());
        if let Some(run) = shown {
            for v in &run.verdicts {
                let mark = if v.held { "ok " } else { "NO " };
                let _ = writeln!(out, "    {mark} {} — saw {}", v.check, v.seen);
            }
            let figures: Vec<String> = SHOWN
                .iter()
                .filter_map(|(key, label)| run.figures.get(*key).map(|v| format!("{label} {v}")))
                .collect();
            let _ = writeln!(out, "    figures: {}", figures.join(", "));
            let checked = match &run.check {
                Ok(checked) => checked.cell(),
                Err(why) => format!("not checked: {why}"),
            };
            let _ = writeln!(out, "    history checker: {checked}");
        }
        explain(&mut out, s, lang);
    }
    let passed = results.iter().filter(|r| r.held() == r.runs.len()).count();
    let _ = writeln!(out, "\n{passed}/{} scenarios PASS", results.len());
    out
}

fn json_report(results: &[Runs<'_>]) -> String {
    let rows: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "id": r.scenario.id,
                "tier": r.scenario.tier,
                "expectation": r.scenario.expectation(),
                "runs": r.runs.len(),
                "held": r.held(),
                "passed": r.held() == r.runs.len(),
                "last": r.runs.last(),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({ "scenarios": rows }))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}
