//! Making a class from the command line: `oversell up --class N` does it for the fleet it
//! starts, `oversell class` for a fleet already running (compose's `class` service). Both ask
//! `POST /admin/class` through nginx, as the class page does, and print where the presenter's
//! view is and one line per room.

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
}

/// Makes the class; the table to print.
pub async fn make_class(
    url: &str,
    admin_token: &str,
    students: u16,
    public_url: Option<&str>,
) -> anyhow::Result<String> {
    let targets = oversell_client::Targets::parse(&[url.to_owned()], None)?;
    let admin = oversell_client::AdminClient::new(&targets, Some(admin_token.to_owned()));
    let made = admin
        .request(
            axum::http::Method::POST,
            "/admin/class",
            Some(serde_json::json!({ "students": students })),
        )
        .await?;
    let rooms = made["rooms"].as_array().cloned().unwrap_or_default();
    let mut table = format!(
        "class: {} rooms, each with its own token (shown only now; the class page /class \
         shows the rooms and issues new tokens)\n",
        rooms.len()
    );
    table += &format!(
        "presenter's view: {}/present.html (the class vote: a chapter's question, the votes \
         from the students' phones, then the run; it asks for the admin token)\n",
        url.trim_end_matches('/')
    );
    table += &format!("{:<12} {:<38} {}\n", "room", "token", "join link");
    for room in &rooms {
        let field = |name: &str| room[name].as_str().unwrap_or("-").to_owned();
        let link = match public_url.filter(|u| !u.is_empty()) {
            Some(base) => join_url(base.trim_end_matches('/'), &field("room"), &field("token")),
            None => field("join_url"),
        };
        table += &format!("{:<12} {:<38} {}\n", field("room"), field("token"), link);
    }
    Ok(table)
}

/// `oversell class`: makes the class, prints the table.
pub async fn run(args: ClassArgs) -> anyhow::Result<()> {
    let table = make_class(
        &args.url,
        &args.admin_token,
        args.students,
        args.public_url.as_deref(),
    )
    .await?;
    print!("{table}");
    Ok(())
}
