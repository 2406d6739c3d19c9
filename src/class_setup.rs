//! Making a class from the command line: `oversell up --class N` does it for the fleet it
//! starts, `oversell class` for a fleet already running (compose's `class` service). Both ask
//! `POST /admin/class` through nginx, as the class page does, and both write the rooms'
//! tokens and the slips to files only their owner may read ([`token_files`]), naming the
//! files rather than printing a token (unless `--show-tokens`): `up` in its class dir,
//! `oversell class` in `--out`.

pub mod slips;
pub mod token_files;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::routes::class::join_url;

/// `oversell class`: rooms student-01…student-N on a running fleet, each with its own token.
#[derive(Args, Debug)]
pub struct ClassArgs {
    /// The fleet's URL (nginx).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// How many rooms (1..=400, as `POST /admin/class` takes; more than the fleet's
    /// MAX_ROOMS, 200 by default, needs it raised).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=400))]
    pub students: u16,
    /// The admin token of the fleet.
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: String,
    /// The URL students reach the fleet at, for the join links [default: --url]. Behind
    /// compose, --url names nginx on the compose network, which no student can reach.
    #[arg(long, env = "PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
    /// The directory to write the room tokens file and the slips page to (made, mode 0700,
    /// if missing; the files are 0600). The log names them instead of printing a token.
    #[arg(long, value_name = "DIR", required_unless_present = "show_tokens")]
    pub out: Option<PathBuf>,
    /// Print every room's token and join link as well (without --out: instead), for a
    /// terminal or a log nobody else reads.
    #[arg(long)]
    pub show_tokens: bool,
}

/// One room of a class just made. Its token exists in plain text only here: the fleet keeps
/// its digest.
#[derive(Debug, Clone)]
pub struct MadeRoom {
    pub room: String,
    pub token: String,
    /// The short join code on the room's slip (`POST /join/session`).
    pub code: String,
    /// The link a student opens: the room in the query, the token in the fragment.
    pub join_link: String,
}

/// A class just made: its rooms and where the presenter's view is.
#[derive(Debug, Clone)]
pub struct MadeClass {
    pub rooms: Vec<MadeRoom>,
    pub presenter: String,
}

/// The join page of the fleet at `base`: the one address the projector shows.
pub fn join_page(base: &str) -> String {
    crate::routes::class::join_page(base.trim_end_matches('/'))
}

impl MadeClass {
    /// A class of two rooms, `student-01` and `student-02`, whose join links end in `extra`:
    /// what the files' and slips' tests write.
    #[cfg(test)]
    pub(crate) fn two_rooms(extra: &str) -> MadeClass {
        let room = |n: u8| MadeRoom {
            room: format!("student-0{n}"),
            token: format!("room-{n}"),
            code: format!("AAAA-000{n}"),
            join_link: format!("http://h/?room=student-0{n}#token=room-{n}{extra}"),
        };
        MadeClass {
            rooms: vec![room(1), room(2)],
            presenter: "http://h/present.html".into(),
        }
    }

    /// Two lines: how many rooms, and where the presenter's view is. `printed_only`: whether
    /// the tokens are printed below and kept in no file (then this is the only time they show).
    pub fn summary(&self, printed_only: bool) -> String {
        let shown = if printed_only { ", shown only now" } else { "" };
        format!(
            "class: {} rooms, each with its own token{shown}; the class page /class shows the \
             rooms and issues new tokens\n\
             presenter's view: {} (the class vote: a chapter's question, the votes from the \
             students' phones, then the run; it asks for the admin token)\n",
            self.rooms.len(),
            self.presenter
        )
    }

    /// The join page at the join links' own address (`--public-url`, else nginx's).
    pub fn join_page(&self) -> Option<String> {
        let link = &self.rooms.first()?.join_link;
        link.split_once("/?room=").map(|(base, _)| join_page(base))
    }

    /// One row per room, `room token join-link code`, under a header row that starts with
    /// `#` (the code last, so `awk '{print $2}'` still reads the token).
    pub fn table(&self) -> String {
        let mut table = format!(
            "# {:<10} {:<38} {:<72} {}\n",
            "room", "token", "join link", "code"
        );
        for made in &self.rooms {
            table += &format!(
                "{:<12} {:<38} {:<72} {}\n",
                made.room, made.token, made.join_link, made.code
            );
        }
        table
    }
}

/// Makes the class through nginx, as the class page does.
pub async fn make_class(
    url: &str,
    admin_token: &str,
    students: u16,
    public_url: Option<&str>,
) -> anyhow::Result<MadeClass> {
    let targets = oversell_client::Targets::parse(&[url.to_owned()], None)?;
    let admin = oversell_client::AdminClient::new(&targets, Some(admin_token.to_owned()));
    let made = admin
        .request(
            axum::http::Method::POST,
            "/admin/class",
            Some(serde_json::json!({ "students": students })),
        )
        .await?;
    let field =
        |room: &serde_json::Value, name: &str| room[name].as_str().unwrap_or("-").to_owned();
    let rooms = made["rooms"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|room| {
            let (name, token) = (field(room, "room"), field(room, "token"));
            let code = field(room, "code");
            let join_link = match public_url.filter(|u| !u.is_empty()) {
                Some(base) => join_url(base.trim_end_matches('/'), &name, &token),
                None => field(room, "join_url"),
            };
            MadeRoom {
                room: name,
                token,
                code,
                join_link,
            }
        })
        .collect();
    // The teacher opens it, from where the students reach the fleet when that is said.
    let presenter_base = public_url.filter(|u| !u.is_empty()).unwrap_or(url);
    Ok(MadeClass {
        rooms,
        presenter: format!("{}/present.html", presenter_base.trim_end_matches('/')),
    })
}

/// A class the fleet already has (`up` started again on its class dir): how many rooms, and
/// how many of them still have a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenClass {
    pub rooms: usize,
    pub with_token: usize,
}

/// The class the fleet has, read through nginx as the class page reads it; `None`: no class.
pub async fn open_class(url: &str, admin_token: &str) -> anyhow::Result<Option<OpenClass>> {
    let targets = oversell_client::Targets::parse(&[url.to_owned()], None)?;
    let admin = oversell_client::AdminClient::new(&targets, Some(admin_token.to_owned()));
    let overview = admin
        .request(axum::http::Method::GET, "/admin/class", None)
        .await?;
    let rooms = overview["rooms"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    Ok((!rooms.is_empty()).then(|| OpenClass {
        rooms: rooms.len(),
        with_token: rooms.iter().filter(|r| r["has_token"] == true).count(),
    }))
}

/// The log line naming the room tokens file; `since` qualifies what it holds.
pub fn room_tokens_line(file: &Path, since: &str) -> String {
    format!(
        "room tokens file: {} (readable by you alone: every room's token and join \
         link{since})\n",
        file.display()
    )
}

/// The log line naming the slips file; `join_page`: the one address the projector shows.
pub fn slips_line(file: &Path, join_page: &str) -> String {
    format!(
        "slips file: {} (readable by you alone: print it, A4, and hand each student \
         their room's slip: its QR code, link and join code; the projector shows {join_page} \
         only)\n",
        file.display()
    )
}

/// `oversell class`: makes the class, writes its files to `--out` and names them; prints
/// the tokens only with `--show-tokens`.
pub async fn run(args: ClassArgs) -> anyhow::Result<()> {
    // Before the class exists: a class whose tokens reach no file is a class to make again.
    if let Some(dir) = &args.out {
        token_files::make_dir(dir)?;
    }
    let class = make_class(
        &args.url,
        &args.admin_token,
        args.students,
        args.public_url.as_deref(),
    )
    .await?;
    let mut out = class.summary(args.show_tokens && args.out.is_none());
    if let Some(dir) = &args.out {
        let files = token_files::write_class(dir, &class, &args.url).map_err(|err| {
            err.context(
                "the class is made but its tokens are in no file: run this again (a new \
                 class revokes this one)",
            )
        })?;
        out += &room_tokens_line(&files.room_tokens, "");
        out += &slips_line(&files.slips, &files.join_page);
    }
    if args.show_tokens {
        out += &class.table();
    }
    print!("{out}");
    Ok(())
}
