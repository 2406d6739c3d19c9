//! The fleet's shape, written once: instance ids, the environment each instance is given, and
//! the nginx config rendered from `deploy/nginx.conf.template`.
//!
//! `oversell up` fills it with local values (loopback ports, a temp run dir). docker-compose
//! fills it with container values: [`NginxValues::compose`] renders `deploy/nginx.conf` and
//! [`InstanceEnv::compose`] is the `environment:` of each `appN` service in
//! `docker-compose.yml`. `tests/api/topology.rs` checks both files against these functions, so
//! the two topologies cannot drift apart.

use std::fmt::Write;

/// The template both `oversell up` and `deploy/nginx.conf` are rendered from.
pub const NGINX_TEMPLATE: &str = include_str!("../../deploy/nginx.conf.template");

/// How many instances docker-compose runs.
pub const COMPOSE_INSTANCES: usize = 3;
/// The port every instance listens on inside its container.
pub const COMPOSE_APP_PORT: u16 = 3000;
/// The port nginx listens on, in its container and published on the host.
pub const COMPOSE_NGINX_PORT: u16 = 8080;
/// nginx's port for the fleet's own calls (`FLEET_URL`), never limited per client: reachable
/// on the compose network only (not published).
pub const COMPOSE_NGINX_FLEET_PORT: u16 = 8081;
/// The Sentinels of the compose `sentinel` profile.
pub const COMPOSE_SENTINELS: [&str; 3] = ["sentinel1:26379", "sentinel2:26379", "sentinel3:26379"];
/// The Redlock masters of the compose `redlock` profile.
pub const COMPOSE_REDLOCK_NODES: [&str; 5] = [
    "redis://redlock1:6379",
    "redis://redlock2:6379",
    "redis://redlock3:6379",
    "redis://redlock4:6379",
    "redis://redlock5:6379",
];
/// Whose `X-Real-IP` the compose instances believe: loopback and the private ranges, one of
/// which holds the compose network (Docker picks which).
pub const COMPOSE_TRUSTED_PROXIES: &str =
    "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7";
/// The ZooKeeper server of the compose `zookeeper` profile.
pub const COMPOSE_ZOOKEEPER: &str = "zk:2181";
/// The dashboard's directory in the image.
pub const COMPOSE_STATIC_DIR: &str = "/app/static";

/// The id of the `n`th instance (from 1): `app1`, `app2`, … in the ledger, the logs, the
/// admin API and the compose service names alike.
pub fn instance_id(n: usize) -> String {
    format!("app{n}")
}

/// Everything an instance is told through its environment (the flags of `oversell serve`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceEnv {
    pub instance_id: String,
    pub host: String,
    pub port: String,
    pub redis_url: String,
    /// `single` (`redis_url`) or `cluster` (`redis_cluster`: its nodes, `host:port,…`).
    pub resource_store: String,
    pub redis_cluster: String,
    /// `shared`, `single`, `sentinel`, `redlock` or `cluster`, and where that store is (empty
    /// when unused).
    pub lock_store: String,
    pub lock_redis_url: String,
    pub lock_sentinels: String,
    pub lock_redis_nodes: String,
    pub lock_cluster: String,
    /// ZooKeeper's connect string, for the ZooKeeper tiers (empty: none).
    pub zookeeper: String,
    /// PostgreSQL's URL, for the database tiers (empty: none).
    pub postgres: String,
    pub admin_token: String,
    pub lock_tier: String,
    pub static_dir: String,
    /// Where the fleet can be reached as a whole (nginx), for server-side bursts.
    pub fleet_url: String,
    /// Where students reach the fleet, for join links (empty: each request's own address).
    pub public_url: String,
    /// The instances' own per-client limit (`serve --client-rate`, `--client-burst`): the
    /// numbers nginx's is given, `0` rate for none.
    pub client_rate: String,
    pub client_burst: String,
    /// Whose `X-Real-IP` the instances believe: where nginx reaches them from.
    pub trusted_proxies: String,
    /// `compose` on the compose fleet, so the dashboard shows its members (empty: `up`).
    pub fleet: String,
    /// Threads each instance serves on (`serve --worker-threads`): `up`'s share of the cores
    /// per instance; `0`, one per core; empty, left out (also one per core).
    pub worker_threads: String,
}

impl InstanceEnv {
    /// The variables, in the order `docker-compose.yml` lists them.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![
            ("INSTANCE_ID", self.instance_id.clone()),
            ("HOST", self.host.clone()),
            ("PORT", self.port.clone()),
            ("REDIS_URL", self.redis_url.clone()),
            ("RESOURCE_STORE", self.resource_store.clone()),
            ("REDIS_CLUSTER", self.redis_cluster.clone()),
            ("LOCK_STORE", self.lock_store.clone()),
            ("LOCK_REDIS_URL", self.lock_redis_url.clone()),
            ("LOCK_SENTINELS", self.lock_sentinels.clone()),
            ("LOCK_REDIS_NODES", self.lock_redis_nodes.clone()),
            ("LOCK_CLUSTER", self.lock_cluster.clone()),
            ("ZOOKEEPER", self.zookeeper.clone()),
            ("POSTGRES", self.postgres.clone()),
            ("ADMIN_TOKEN", self.admin_token.clone()),
            ("LOCK_TIER", self.lock_tier.clone()),
            ("STATIC_DIR", self.static_dir.clone()),
            ("FLEET_URL", self.fleet_url.clone()),
            ("PUBLIC_URL", self.public_url.clone()),
            ("CLIENT_RATE", self.client_rate.clone()),
            ("CLIENT_BURST", self.client_burst.clone()),
            ("TRUSTED_PROXIES", self.trusted_proxies.clone()),
            ("OVERSELL_FLEET", self.fleet.clone()),
            ("WORKER_THREADS", self.worker_threads.clone()),
        ];
        // No STATIC_DIR or WORKER_THREADS at all when empty: an empty one is a flag given no
        // value, which `oversell serve` refuses.
        vars.retain(|(name, value)| {
            !matches!(*name, "STATIC_DIR" | "WORKER_THREADS") || !value.is_empty()
        });
        vars
    }

    /// The environment of compose service `app{n}`. Token and tier are compose
    /// substitutions, so `ADMIN_TOKEN=… LOCK_TIER=… docker compose up` sets them fleet-wide.
    /// The token has no default: `:?` makes compose refuse to start without one, since the
    /// admin API can crash, freeze and reset the fleet.
    pub fn compose(n: usize) -> Self {
        InstanceEnv {
            instance_id: instance_id(n),
            host: "0.0.0.0".into(),
            port: COMPOSE_APP_PORT.to_string(),
            redis_url: "redis://redis:6379".into(),
            // One Redis unless deploy/compose.sh puts the stock on the `cluster` profile's nodes.
            resource_store: "${RESOURCE_STORE:-single}".into(),
            redis_cluster: "${REDIS_CLUSTER:-}".into(),
            // `LOCK_STORE=sentinel docker compose --profile sentinel up` moves the locks (and
            // `LOCK_STORE=redlock … --profile redlock` spreads them over five masters).
            lock_store: "${LOCK_STORE:-shared}".into(),
            lock_redis_url: "redis://lock:6379".into(),
            lock_sentinels: COMPOSE_SENTINELS.join(","),
            lock_redis_nodes: COMPOSE_REDLOCK_NODES.join(","),
            // Empty unless the `cluster` profile runs (deploy/compose.sh sets it).
            lock_cluster: "${LOCK_CLUSTER:-}".into(),
            // Empty unless a ZooKeeper profile runs (deploy/compose.sh sets it: the one server
            // of `zookeeper`, COMPOSE_ZOOKEEPER, or zk1..3 of `zookeeper3`): an instance given
            // a ZooKeeper waits for it to be up before a scenario starts.
            zookeeper: "${ZOOKEEPER:-}".into(),
            // Empty unless the `postgres` profile runs (deploy/compose.sh sets it).
            postgres: "${POSTGRES:-}".into(),
            admin_token: "${ADMIN_TOKEN:?set ADMIN_TOKEN to a secret, e.g. ADMIN_TOKEN=my-secret docker compose up}".into(),
            lock_tier: "${LOCK_TIER:-lua-release}".into(),
            // Empty (left out): the dashboard built into the binary; the image has no copy of
            // static/.
            static_dir: String::new(),
            fleet_url: format!("http://nginx:{COMPOSE_NGINX_FLEET_PORT}"),
            // `PUBLIC_URL=http://<this machine>:8080 docker compose up` for a class's join
            // links; empty: the address each request came to.
            public_url: "${PUBLIC_URL:-}".into(),
            // The same variables as nginx's limits, with the same defaults.
            client_rate: format!("${{CLIENT_RATE:-{DEFAULT_CLIENT_RATE}}}"),
            client_burst: format!("${{CLIENT_BURST:-{DEFAULT_CLIENT_BURST}}}"),
            // nginx has an address of the compose network, which Docker picks from the private
            // ranges; nothing but the compose network reaches an instance.
            trusted_proxies: format!("${{TRUSTED_PROXIES:-{COMPOSE_TRUSTED_PROXIES}}}"),
            fleet: "compose".into(),
            // One per core unless set: a container may have cores of its own. Three instances
            // sharing 2 cores sold more with one thread each (BENCHMARKS.md, "One thread per
            // instance"): `WORKER_THREADS=1` on such a host.
            worker_threads: "${WORKER_THREADS:-0}".into(),
        }
    }
}

/// The values the nginx template's placeholders are filled with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxValues {
    /// The `listen` arguments: `8080`, or `127.0.0.1:8080` (and the bridge's address of a
    /// fleet network, where its namespaced instances reach nginx).
    pub listen: Vec<String>,
    /// The `listen` arguments of the fleet's own port (`FLEET_URL`), which no per-client
    /// limit counts: `127.0.0.1:8081` (and the fleet network's gateway).
    pub fleet_listen: Vec<String>,
    /// That port alone, which the limits' map tells the fleet's requests apart by.
    pub fleet_port: u16,
    /// The instances, as `host:port`, in round-robin order.
    pub upstreams: Vec<String>,
    /// Where the pid file and temp paths go.
    pub run_dir: String,
    pub error_log: String,
    pub access_log: String,
    /// Each client address's fair share; `None`: no limit.
    pub limits: Option<ClientLimits>,
}

/// What one client address may take of the fleet (nginx's `limit_req` / `limit_conn`): in a
/// workshop, one laptop running `wrk -c 1000` must not take the cores from the demo. Strings,
/// so the compose rendering can leave `${CLIENT_RATE}` for the nginx image to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientLimits {
    /// Requests per second per address, on average.
    pub rate: String,
    /// Requests over the rate served at once (`nodelay`) before the 429s start: a page load,
    /// a class page's loop over every room.
    pub burst: String,
    /// Connections open at once per address (a dashboard's stream is one).
    pub conns: String,
    /// Addresses never limited (CIDR): the fleet's own callers, the instructor's machine.
    pub exempt: Vec<String>,
}

/// The instances' own limit takes the same numbers (`oversell serve --client-rate`).
pub use crate::client_limit::{DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_RATE};
/// `--client-conns`' default: 60 phones behind one address, each with its one stream and a
/// browser's 6 connections loading its page at once (420; the `phones` bench).
pub const DEFAULT_CLIENT_CONNS: u32 = 500;

impl ClientLimits {
    /// The `http` block's part: whom to count, and the shared zones.
    fn http_block(&self) -> String {
        format!(
            "    # Fair share per client address: {rate} requests/s, bursts of {burst} served at once,
    # {conns} connections. The key is empty (never limited) for ::1 and {exempt}, and on the
    # fleet's own port.
    geo $oversell_limited {{
        default 1;
        ::1/128 0;
{exempt_lines}    }}
    map $server_port $oversell_fleet_port {{
        {{{{fleet_port}}}} 1;
        default 0;
    }}
    map $oversell_fleet_port$oversell_limited $oversell_client {{
        01 $binary_remote_addr;
        default \"\";
    }}
    # The address the instances count a request against (their own limit, behind this one):
    # the one counted here, as X-Real-IP; none for the exempt and the fleet's port, which
    # the instances do not count either.
    map $oversell_fleet_port$oversell_limited $oversell_real_ip {{
        01 $remote_addr;
        default \"\";
    }}
    limit_req_zone $oversell_client zone=oversell_rate:10m rate={rate}r/s;
    limit_conn_zone $oversell_client zone=oversell_conns:10m;
    limit_req_status 429;
    limit_conn_status 429;
    # A refusal is answered, not logged (below the error log's `warn`): a line on nginx's
    # stderr for each of a flood's 100,000 refusals a second, which `oversell up` reads and
    # prints, cost the demo half its rate.
    limit_req_log_level info;
    limit_conn_log_level info;

",
            rate = self.rate,
            burst = self.burst,
            conns = self.conns,
            exempt = self.exempt.join(", "),
            exempt_lines = self
                .exempt
                .iter()
                .map(|cidr| format!("        {cidr} 0;\n"))
                .collect::<String>(),
        )
    }

    /// The `server` block's part: every route counts, and every location (the streams' too)
    /// names the client to the instance, an empty value sending no header at all.
    fn server_block(&self) -> String {
        format!(
            "        proxy_set_header X-Real-IP $oversell_real_ip;
        limit_req zone=oversell_rate burst={} nodelay;
        limit_conn oversell_conns {};
",
            self.burst, self.conns
        )
    }
}

impl NginxValues {
    /// The values `deploy/nginx.conf` is rendered with: compose service names and ports, and
    /// logs on the container's stdout/stderr.
    pub fn compose() -> Self {
        NginxValues {
            listen: vec![COMPOSE_NGINX_PORT.to_string()],
            fleet_listen: vec![COMPOSE_NGINX_FLEET_PORT.to_string()],
            fleet_port: COMPOSE_NGINX_FLEET_PORT,
            upstreams: (1..=COMPOSE_INSTANCES)
                .map(|n| format!("{}:{COMPOSE_APP_PORT}", instance_id(n)))
                .collect(),
            run_dir: "/tmp".into(),
            error_log: "stderr".into(),
            access_log: "/dev/stdout".into(),
            // Filled in by the nginx image from the compose environment (see the nginx
            // service in docker-compose.yml); the compose network is exempt.
            limits: Some(ClientLimits {
                rate: "${CLIENT_RATE}".into(),
                burst: "${CLIENT_BURST}".into(),
                conns: "${CLIENT_CONNS}".into(),
                exempt: vec!["${CLIENT_EXEMPT}".into()],
            }),
        }
    }

    /// The template with every placeholder filled.
    pub fn render(&self) -> String {
        let mut servers = String::new();
        for upstream in &self.upstreams {
            // A refused connection takes a server out of rotation for 2s only.
            let _ = writeln!(
                servers,
                "        server {upstream} max_fails=1 fail_timeout=2s;"
            );
        }
        let (http, server) = match &self.limits {
            Some(limits) => (limits.http_block(), limits.server_block()),
            // No limits: a client's own X-Real-IP is dropped all the same.
            None => (
                String::new(),
                "        proxy_set_header X-Real-IP \"\";\n".to_owned(),
            ),
        };
        NGINX_TEMPLATE
            .replace("{{upstream_servers}}\n", &servers)
            .replace("{{client_limits_http}}\n", &http)
            .replace("{{client_limits_server}}\n", &server)
            .replace("{{listen}}", &self.listen.join(";\n        listen "))
            .replace(
                "{{fleet_listen}}",
                &self.fleet_listen.join(";\n        listen "),
            )
            .replace("{{fleet_port}}", &self.fleet_port.to_string())
            .replace("{{run_dir}}", &self.run_dir)
            .replace("{{error_log}}", &self.error_log)
            .replace("{{access_log}}", &self.access_log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_fills_every_placeholder() {
        let text = NginxValues::compose().render();
        assert!(!text.contains("{{"), "unfilled placeholder in:\n{text}");
        assert!(text.contains("server app3:3000 max_fails=1 fail_timeout=2s;"));
    }

    #[test]
    fn compose_instances_are_named_app1_to_app3() {
        let ids: Vec<_> = (1..=COMPOSE_INSTANCES)
            .map(|n| InstanceEnv::compose(n).instance_id)
            .collect();
        assert_eq!(ids, ["app1", "app2", "app3"]);
    }
}
