//! The chapters' runs beside the course's report: each run's viewer (what `loadtest check
//! --html` writes) as a file the report's table links, and, for a run whose history shows a
//! violation, its first one drawn, in the report's "Where it broke".

use std::fmt::Write as _;

use anyhow::Context;

use super::{Chapter, Outcome};

/// A chapter's last run, as the report shows it: the viewer that steps through the whole run
/// (the file `loadtest check --html` writes), and its first violation drawn, when it had one.
pub(super) struct Drawn {
    pub(super) svg: Option<String>,
    pub(super) view: String,
}

/// Where the runs' viewers and pictures go, beside the report: its name as the report links
/// it, and its path. The fleets the course starts are gone when it ends, so a run's viewer is
/// a file of its own, not a fleet's URL.
pub(super) fn runs_dir(report: &std::path::Path) -> (String, std::path::PathBuf) {
    let stem = report
        .file_stem()
        .map_or("course-report".into(), |s| s.to_string_lossy());
    let name = format!("{stem}-runs");
    let path = report.with_file_name(&name);
    (name, path)
}

/// The report's table cell that names a chapter's viewer (`dir_name`: [`runs_dir`]'s name).
pub(super) fn run_cell(c: &Chapter<'_>, dir_name: &str) -> String {
    match &c.outcome {
        Outcome::Ran { drawn: Some(_), .. } => {
            format!("[step through]({dir_name}/{}.html)", c.scenario.id)
        }
        _ => "—".to_owned(),
    }
}

/// Writes each chapter's viewer and first violation beside the report (`<report>-runs/<id>.html`
/// and `<id>.svg`; the report's table links each viewer) and returns the report's section that
/// shows the violations.
pub(super) fn pictures(done: &[Chapter<'_>], report: &std::path::Path) -> anyhow::Result<String> {
    let drawn: Vec<(&str, &Drawn)> = done
        .iter()
        .filter_map(|c| match &c.outcome {
            Outcome::Ran {
                drawn: Some(drawn), ..
            } => Some((c.scenario.id, drawn)),
            _ => None,
        })
        .collect();
    if drawn.is_empty() {
        return Ok(String::new());
    }
    let (dir_name, dir) = runs_dir(report);
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot make {} for the runs' viewers", dir.display()))?;
    let mut out = String::new();
    for (id, drawn) in drawn {
        let files = [("html", Some(&drawn.view)), ("svg", drawn.svg.as_ref())];
        for (ext, text) in files.into_iter().filter_map(|(e, t)| Some((e, t?))) {
            let path = dir.join(format!("{id}.{ext}"));
            std::fs::write(&path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        if drawn.svg.is_none() {
            continue;
        }
        if out.is_empty() {
            out += "\n## Where it broke\n\nEach chapter whose history shows a violation, its first one drawn by the history checker.\n\n";
        }
        let _ = writeln!(
            out,
            "### `{id}`\n\n![{id}: where it broke]({dir_name}/{id}.svg)\n\n\
             [Step through the run]({dir_name}/{id}.html): every operation, the stores' state \
             before and after each.\n"
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, CATALOG};

    /// A chapter of the ladder run once, drawn as `svg` (a broken run's picture) and `view`.
    fn ran(scenario: &'static Scenario, svg: Option<&str>, view: &str) -> Chapter<'static> {
        Chapter {
            scenario,
            group: "ladder",
            fleet: "3 instances".into(),
            seconds: 1.0,
            outcome: Outcome::Ran {
                held: 1,
                runs: 1,
                missed: Vec::new(),
                landed: vec![None],
                checker: String::new(),
                drawn: Some(Drawn {
                    svg: svg.map(String::from),
                    view: view.into(),
                }),
            },
        }
    }

    #[test]
    fn a_broken_chapter_gets_its_picture_and_its_viewer_beside_the_report() {
        let scenario = CATALOG
            .iter()
            .find(|s| s.id == "lua-release-slow-business")
            .unwrap();
        let chapter = ran(scenario, Some("<svg/>"), "<!doctype html>");
        // A chapter that held: its viewer still, no picture.
        let held = CATALOG.iter().find(|s| s.id == "none-race").unwrap();
        let held = ran(held, None, "<!doctype html><p>held</p>");
        let dir = std::env::temp_dir().join(format!("oversell-course-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = dir.join("course.md");
        let done = [chapter, held];
        let section = pictures(&done, &report).unwrap();
        let [_, held] = done;
        let id = scenario.id;
        assert!(section.contains(&format!("(course-runs/{id}.svg)")));
        assert!(section.contains(&format!("(course-runs/{id}.html)")));
        assert!(
            !section.contains("none-race"),
            "a chapter that held has no picture: {section}"
        );
        let written =
            |id: &str, ext| std::fs::read_to_string(dir.join(format!("course-runs/{id}.{ext}")));
        assert_eq!(written(id, "svg").unwrap(), "<svg/>");
        assert_eq!(written(id, "html").unwrap(), "<!doctype html>");
        assert_eq!(
            written("none-race", "html").unwrap(),
            "<!doctype html><p>held</p>"
        );
        assert!(written("none-race", "svg").is_err());
        // The report's table names each chapter's viewer, and a chapter without a history none.
        assert_eq!(
            run_cell(&held, "course-runs"),
            "[step through](course-runs/none-race.html)"
        );
        let failed = Chapter {
            outcome: Outcome::Error("the fleet did not start".into()),
            ..held
        };
        assert_eq!(run_cell(&failed, "course-runs"), "—");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
