//! `docker-compose.yml` and `deploy/nginx.conf` describe the same topology as `oversell up`:
//! the same instance ids, ports, environment and upstream list, all taken from
//! `oversell::launch::topology`, so neither side can drift.

use std::collections::BTreeMap;

use oversell::launch::topology::{
    instance_id, InstanceEnv, NginxValues, COMPOSE_APP_PORT, COMPOSE_INSTANCES,
    COMPOSE_NGINX_FLEET_PORT, COMPOSE_NGINX_PORT,
};
use serde_yaml::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{ROOT}/{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `docker-compose.yml` with its `<<: *anchor` merges applied, as compose applies them.
fn compose() -> Value {
    let mut value: Value = serde_yaml::from_str(&read("docker-compose.yml")).expect("valid YAML");
    // An anchor that merges another (x-redis merges x-member) needs a second pass.
    while serde_yaml::to_string(&value).unwrap().contains("<<:") {
        value.apply_merge().expect("merge keys");
    }
    value
}

fn service<'a>(compose: &'a Value, name: &str) -> &'a Value {
    let service = &compose["services"][name];
    assert!(
        service.is_mapping(),
        "docker-compose.yml has no service `{name}`"
    );
    service
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn app_ids() -> Vec<String> {
    (1..=COMPOSE_INSTANCES).map(instance_id).collect()
}

#[test]
fn deploy_nginx_conf_is_the_template_rendered_with_the_compose_values() {
    let rendered = NginxValues::compose().render();
    if std::env::var_os("OVERSELL_BLESS").is_some() {
        std::fs::write(format!("{ROOT}/deploy/nginx.conf"), &rendered).unwrap();
    }
    assert!(
        read("deploy/nginx.conf") == rendered,
        "deploy/nginx.conf is not the rendering of deploy/nginx.conf.template; \
         edit the template, then run: OVERSELL_BLESS=1 cargo test topology"
    );
}

#[test]
fn nginx_conf_round_robins_over_the_compose_app_services_and_listens_on_the_published_port() {
    let conf = read("deploy/nginx.conf");
    let mut in_upstream = false;
    let mut upstreams = Vec::new();
    let mut listen = Vec::new();
    for line in conf.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
        let words: Vec<&str> = line.trim_end_matches(';').split_whitespace().collect();
        match words.as_slice() {
            ["upstream", "oversell", "{"] => in_upstream = true,
            ["}"] => in_upstream = false,
            ["server", addr, ..] if in_upstream => upstreams.push(addr.to_string()),
            ["listen", port] => listen.push(port.to_string()),
            _ => {}
        }
    }
    let expected: Vec<String> = app_ids()
        .iter()
        .map(|id| format!("{id}:{COMPOSE_APP_PORT}"))
        .collect();
    assert_eq!(upstreams, expected);
    // The published port, and the fleet's own (`FLEET_URL`), which the apps are given.
    assert_eq!(
        listen,
        [
            COMPOSE_NGINX_PORT.to_string(),
            COMPOSE_NGINX_FLEET_PORT.to_string()
        ]
    );
    assert!(conf.contains("keepalive 64;"));
    assert!(conf.contains("proxy_http_version 1.1;"));
    assert!(conf.contains("proxy_set_header Connection \"\";"));
}

#[test]
fn compose_runs_the_same_instances_as_oversell_up() {
    let compose = compose();
    let services = compose["services"].as_mapping().expect("services");
    let apps: Vec<String> = services
        .keys()
        .filter_map(Value::as_str)
        .filter(|name| name.starts_with("app"))
        .map(str::to_owned)
        .collect();
    assert_eq!(apps, app_ids());
}

#[test]
fn every_compose_app_gets_the_environment_oversell_up_gives_its_instances() {
    let compose = compose();
    for n in 1..=COMPOSE_INSTANCES {
        let app = service(&compose, &instance_id(n));
        let env: BTreeMap<String, String> = app["environment"]
            .as_mapping()
            .unwrap_or_else(|| panic!("app{n}: environment must be a mapping"))
            .iter()
            .map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    other => panic!("app{n}: environment value {other:?}"),
                };
                (k.as_str().unwrap().to_owned(), value)
            })
            .collect();
        let expected: BTreeMap<String, String> = InstanceEnv::compose(n)
            .vars()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        assert_eq!(env, expected, "environment of app{n}");
    }
}

#[test]
fn compose_refuses_to_start_without_an_admin_token() {
    let compose = compose();
    let mut tokens: Vec<String> = app_ids()
        .iter()
        .map(|id| service(&compose, id)["environment"]["ADMIN_TOKEN"].clone())
        .chain([service(&compose, "loadtest")["environment"]["OVERSELL_ADMIN_TOKEN"].clone()])
        .map(|v| v.as_str().unwrap_or_default().to_owned())
        .collect();
    tokens.dedup();
    assert_eq!(tokens.len(), 1, "one token for the whole fleet: {tokens:?}");
    // `${VAR:?message}`: compose stops with the message when VAR is unset or empty.
    assert!(tokens[0].starts_with("${ADMIN_TOKEN:?"), "{}", tokens[0]);
    assert!(!read("docker-compose.yml").contains("change-me"));
}

#[test]
fn every_compose_app_runs_one_image_under_an_init_with_a_healthcheck() {
    let compose = compose();
    let mut images = Vec::new();
    for id in app_ids() {
        let app = service(&compose, &id);
        images.push(app["image"].as_str().unwrap_or("").to_owned());
        assert_eq!(app["restart"].as_str(), Some("unless-stopped"), "{id}");
        // The freeze fault stops the process itself; PID 1 of a container ignores that.
        assert_eq!(app["init"].as_bool(), Some(true), "{id} needs `init: true`");
        assert!(
            !strings(&app["healthcheck"]["test"]).is_empty(),
            "{id} healthcheck"
        );
        assert!(
            app["depends_on"]["redis"].is_mapping(),
            "{id} depends on redis"
        );
    }
    images.dedup();
    assert_eq!(images.len(), 1, "one image for every app: {images:?}");
    assert!(!images[0].is_empty());
}

#[test]
fn compose_nginx_publishes_the_fleet_port_and_mounts_the_rendered_config() {
    let compose = compose();
    let nginx = service(&compose, "nginx");
    let port = COMPOSE_NGINX_PORT;
    // Loopback unless OVERSELL_BIND says otherwise: the admin API must not face the LAN
    // by accident.
    assert_eq!(
        strings(&nginx["ports"]),
        [format!(
            "${{OVERSELL_BIND:-127.0.0.1}}:${{OVERSELL_PORT:-{port}}}:{port}"
        )]
    );
    assert!(
        strings(&nginx["volumes"])
            .contains(&"./deploy/nginx.conf:/etc/oversell/nginx.conf:ro".to_owned()),
        "nginx must mount deploy/nginx.conf where deploy/nginx.sh reads it"
    );
    assert_eq!(
        strings(&nginx["entrypoint"]),
        ["/usr/local/bin/oversell-nginx"]
    );
    // deploy/nginx.sh fills in the limits, and only them (nginx's own $variables stay): every
    // placeholder the rendering leaves has its variable in the environment and in the list
    // the script hands envsubst.
    let env = &nginx["environment"];
    let conf = read("deploy/nginx.conf");
    let script = read("deploy/nginx.sh");
    for var in [
        "CLIENT_RATE",
        "CLIENT_BURST",
        "CLIENT_CONNS",
        "CLIENT_EXEMPT",
    ] {
        assert!(
            conf.contains(&format!("${{{var}}}")),
            "{var} in deploy/nginx.conf"
        );
        assert!(
            env[var].as_str().is_some(),
            "{var} in the nginx service's environment"
        );
        assert!(
            script.contains(&format!("${{{var}}}")),
            "{var} in deploy/nginx.sh's envsubst list"
        );
    }
    for id in app_ids() {
        assert!(
            nginx["depends_on"][id.as_str()].is_mapping(),
            "nginx depends on {id}"
        );
    }
    assert_eq!(nginx["restart"].as_str(), Some("unless-stopped"));
    assert!(!strings(&nginx["healthcheck"]["test"]).is_empty());
}

#[test]
fn compose_redis_is_the_one_the_instances_point_at() {
    let compose = compose();
    let redis = service(&compose, "redis");
    assert_eq!(redis["restart"].as_str(), Some("unless-stopped"));
    assert!(!strings(&redis["healthcheck"]["test"]).is_empty());
    assert_eq!(InstanceEnv::compose(1).redis_url, "redis://redis:6379");
}

#[test]
fn the_loadtest_service_only_runs_under_its_profile_against_nginx() {
    let compose = compose();
    let loadtest = service(&compose, "loadtest");
    assert_eq!(strings(&loadtest["profiles"]), ["loadtest"]);
    // The fleet's address comes from the environment, so that a command typed after
    // `docker compose run --rm loadtest` (which replaces the default one) still reaches nginx.
    assert_eq!(
        loadtest["environment"]["OVERSELL_URL"].as_str(),
        Some(format!("http://nginx:{COMPOSE_NGINX_PORT}").as_str()),
        "{loadtest:?}"
    );
    let command = strings(&loadtest["command"]).join(" ");
    assert!(!command.contains("--url"), "{command}");
}

/// The class service writes the rooms' tokens and slips to a volume of its own, never to its
/// log; the volume starts as the image's `/class`, made for the image's user alone (a fresh
/// named volume takes the owner and mode of the directory it is mounted over).
#[test]
fn the_class_service_writes_its_tokens_to_a_volume_of_its_own_and_prints_none() {
    let compose = compose();
    let class = service(&compose, "class");
    assert_eq!(strings(&class["profiles"]), ["class"]);
    let runs = format!(
        "{} {}",
        strings(&class["entrypoint"]).join(" "),
        strings(&class["command"]).join(" ")
    );
    assert!(runs.starts_with("oversell class "), "{runs}");
    assert!(runs.contains(" --out /class"), "{runs}");
    assert!(!runs.contains("--show-tokens"), "{runs}");
    assert!(
        runs.contains("--students ${CLASS:-60}"),
        "a class of 60: {runs}"
    );
    assert_eq!(strings(&class["volumes"]), ["class:/class"]);
    assert!(compose["volumes"]
        .as_mapping()
        .is_some_and(|v| v.contains_key("class")));
    let dockerfile = read("Dockerfile");
    let runtime = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(
        runtime.contains("install -d -m 0700 -o oversell -g oversell /class"),
        "the image's /class, its user's alone"
    );
}

/// The run sheets' compose command for the 90-minute fleet brings up what `oversell up
/// --class 60 --lab --lock-store sentinel` starts: profiles compose has, Sentinel for the
/// lab's lock store, and the class, reachable from the room (`OVERSELL_BIND`, `PUBLIC_URL`).
#[test]
fn the_run_sheets_compose_command_names_the_profiles_of_the_90_minute_fleet() {
    let sheet = read("docs/src/guide/run-sheets.md");
    let command = sheet
        .split("```sh")
        .filter_map(|block| block.split("```").next())
        .map(|block| block.replace("\\\n", " "))
        .flat_map(|block| block.lines().map(str::to_owned).collect::<Vec<_>>())
        .find(|line| line.contains("deploy/compose.sh up"))
        .expect("a compose command in the run sheets");
    let profiles: Vec<&str> = command
        .split("deploy/compose.sh up")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(profiles, ["sentinel", "class"], "{command}");
    let compose = compose();
    for profile in &profiles {
        let named = compose["services"]
            .as_mapping()
            .unwrap()
            .values()
            .any(|svc| strings(&svc["profiles"]).iter().any(|p| p == profile));
        assert!(named, "no service has the profile {profile}");
    }
    for var in ["ADMIN_TOKEN=", "PUBLIC_URL=", "OVERSELL_BIND=0.0.0.0"] {
        assert!(command.contains(var), "{command} sets no {var}");
    }
}

#[test]
fn the_image_runs_as_non_root_with_the_dashboard_built_in() {
    let dockerfile = read("Dockerfile");
    let runtime = dockerfile.rsplit("\nFROM ").next().unwrap();
    let user = runtime
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("the runtime stage sets USER");
    assert!(!matches!(user.trim(), "root" | "0" | "0:0"), "USER {user}");
    // The dashboard is embedded in the binary: no copy of static/, no STATIC_DIR.
    assert!(!runtime.contains("static"), "the image copies static/");
    assert_eq!(InstanceEnv::compose(1).static_dir, "");
    assert!(runtime.contains(&format!("EXPOSE {COMPOSE_APP_PORT}")));
}

/// Every member runs the image the Dockerfile makes from Debian's packages: nothing is
/// pulled from a registry but the Dockerfile's two base images, which
/// deploy/base-images.sh makes where none can be pulled. And no member is handed the
/// Docker socket: whoever holds the admin token must not become root on the host.
#[test]
fn every_compose_member_runs_the_one_image_and_none_gets_the_docker_socket() {
    let compose = compose();
    let services = compose["services"].as_mapping().expect("services");
    for (name, svc) in services {
        let name = name.as_str().unwrap();
        assert_eq!(svc["image"].as_str(), Some("oversell:local"), "{name}");
        assert_eq!(svc["build"].as_str(), Some("."), "{name}");
        for volume in strings(&svc["volumes"]) {
            assert!(!volume.contains("docker.sock"), "{name} mounts {volume}");
        }
        assert!(svc["privileged"].as_bool() != Some(true), "{name}");
        // NET_ADMIN (nft in its own namespace) for the stores' supervisors alone, and no other
        // capability or root user for anyone else.
        let caps = strings(&svc["cap_add"]);
        let runs = format!(
            "{} {}",
            strings(&svc["entrypoint"]).join(" "),
            strings(&svc["command"]).join(" ")
        );
        let supervised = runs.contains("oversell member");
        assert!(caps.iter().all(|c| c == "NET_ADMIN"), "{name}: {caps:?}");
        assert!(
            caps.is_empty() || supervised,
            "{name} gets {caps:?} unsupervised"
        );
        assert!(svc["user"].is_null() || supervised, "{name} overrides USER");
    }
    let dockerfile = read("Dockerfile");
    let bases: Vec<&str> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("FROM "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(bases, ["rust:1-bookworm", "debian:bookworm-slim"]);
    let script = read("deploy/base-images.sh");
    for base in bases {
        assert!(
            script.contains(&format!("={base}")),
            "base-images.sh makes {base}"
        );
    }
}

#[test]
fn the_lock_stores_the_instances_name_exist_under_their_profiles() {
    let compose = compose();
    let env = InstanceEnv::compose(1);
    let single = env
        .lock_redis_url
        .trim_start_matches("redis://")
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        strings(&service(&compose, &single)["profiles"]),
        ["lock-single"]
    );
    for sentinel in oversell::launch::topology::COMPOSE_SENTINELS {
        let name = sentinel.split(':').next().unwrap();
        let svc = service(&compose, name);
        assert_eq!(strings(&svc["profiles"]), ["sentinel"], "{name}");
        let script = strings(&svc["command"]).join(" ");
        assert!(
            script.contains("sentinel monitor oversell-lock lock1 6379 2")
                && script.contains(&oversell::lock_store::DEFAULT_SENTINEL_MASTER.to_string()),
            "{name} watches the master the instances ask for: {script}"
        );
    }
    let zookeeper = oversell::launch::topology::COMPOSE_ZOOKEEPER
        .split(':')
        .next()
        .unwrap();
    let svc = service(&compose, zookeeper);
    assert_eq!(strings(&svc["profiles"]), ["zookeeper"]);
    assert_eq!(
        strings(&svc["command"]),
        ["--id", zookeeper, "--", "/usr/local/bin/oversell-zookeeper"]
    );
    for url in oversell::launch::topology::COMPOSE_REDLOCK_NODES {
        let name = url
            .trim_start_matches("redis://")
            .split(':')
            .next()
            .unwrap();
        let svc = service(&compose, name);
        assert_eq!(strings(&svc["profiles"]), ["redlock"], "{name}");
        // Under its supervisor, its clock movable: the clock-jump chapter strikes it there.
        assert_eq!(
            strings(&svc["entrypoint"]),
            ["oversell", "member", "--clock-shim", "--child-uid", "10001"],
            "{name}"
        );
        let command = strings(&svc["command"]);
        assert_eq!(command[..3], ["--id", name, "--"], "{name}");
    }
}
