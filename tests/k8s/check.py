"""What a schema cannot say about the rendered Kubernetes manifests, checked against the code.

    python check.py ROOT RENDERED.yaml…     (tests/k8s/validate.sh runs it on every overlay)

For each rendering:
- every image is the one the Dockerfile builds (docker-compose.yml's `image:`), and every
  program a container starts is one that image has;
- the instances set every variable `oversell serve` reads (its clap `env =` attributes in
  src/config.rs) but the two that must stay unset, and nothing it does not read; the stores'
  supervisors and the class Job likewise with `oversell member` and `oversell class`;
- every probe asks a route the service (or the supervisor) has, on a port the container names;
- every Secret reference is the Secret README tells to create, with the key the code reads;
- no privilege beyond NET_ADMIN (and the few a supervisor needs to run its store as another
  user), no host namespace or path, no service-account token mounted;
- every reference resolves: ConfigMaps, the Service's and Ingress' targets, the HPA's and
  the PodDisruptionBudget's.
Prints one line per rendering; exits 1 with every problem found."""
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(sys.argv[1])
SECRET = ("oversell-admin", "ADMIN_TOKEN")
# Read by `oversell serve` but never to be set here: the socket `oversell up` hands over, and
# a directory to serve the dashboard from instead of the copy built into the binary.
MUST_STAY_UNSET = {"OVERSELL_LISTEN_FD", "STATIC_DIR"}
# Read by the scripts a store's supervisor starts (deploy/zookeeper.sh), not by oversell.
STORE_SCRIPT_ENV = set(re.findall(r"\$\{?(ZOO_[A-Z_]+)", (ROOT / "deploy/zookeeper.sh").read_text()))
# What a store's supervisor may be given beyond nothing: its cuts (NET_ADMIN), and starting
# and signalling its store as another user (SETUID, SETGID, KILL).
SUPERVISOR_CAPS = {"NET_ADMIN", "SETUID", "SETGID", "KILL"}


def clap_env(path):
    return set(re.findall(r'env = "([A-Z_]+)"', (ROOT / path).read_text()))


SERVE_ENV = clap_env("src/config.rs")
MEMBER_ENV = clap_env("src/launch/member_supervisor.rs")
CLASS_ENV = clap_env("src/class_setup.rs")
# The service's routes are registered with their OpenAPI entries (`#[utoipa::path(… path = "…")]`).
ROUTES = {
    path
    for file in (ROOT / "src/routes").glob("*.rs")
    for path in re.findall(r'\bpath = "(/[^"]*)"', file.read_text())
}
MEMBER_ROUTES = set(re.findall(r'\.route\("([^"]+)"', (ROOT / "src/launch/member_supervisor.rs").read_text()))
SUBCOMMANDS = {w.lower() for w in re.findall(r"^\s+([A-Z][a-z]+)\(", (ROOT / "src/main.rs").read_text(), re.M)}


def compose_image():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return compose["x-member"]["image"]


def image_programs():
    """The programs the Dockerfile's runtime stage has: its copied binaries and scripts, the
    Debian packages' servers and tools, and the shells."""
    text = (ROOT / "Dockerfile").read_text()
    runtime = text[text.rindex("\nFROM ") :]
    programs = {"sh", "bash"}
    for src, dest in re.findall(r"^COPY (?:--from=\S+ )?(.+?) (/usr/local/bin/\S*)$", runtime, re.M):
        if dest.endswith("/"):
            programs |= {Path(s).name for s in src.split()}
        else:
            programs |= {dest, Path(dest).name}
    packages = set(re.findall(r"[a-z][a-z0-9.+-]+", runtime.split("apt-get install", 1)[1].split("&&", 1)[0]))
    for package, binaries in {
        "redis-server": ["redis-server"],
        "redis-sentinel": ["redis-sentinel"],
        "redis-tools": ["redis-cli"],
    }.items():
        if package in packages:
            programs |= set(binaries)
    return programs


IMAGE = compose_image()
PROGRAMS = image_programs() | {"setpriv"}  # util-linux: in every Debian base


def containers(doc):
    spec = doc.get("spec", {})
    template = spec.get("template") or spec.get("jobTemplate", {}).get("spec", {}).get("template")
    if not template:
        return None, []
    pod = template["spec"]
    return pod, pod.get("containers", []) + pod.get("initContainers", [])


def check(path):
    docs = [d for d in yaml.safe_load_all(Path(path).read_text()) if d]
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    problems = []
    say = problems.append
    configmaps = by_kind.get("ConfigMap", {})

    def env_names(c):
        names = {e["name"] for e in c.get("env", [])}
        for source in c.get("envFrom", []):
            ref = source.get("configMapRef", {}).get("name")
            if ref not in configmaps:
                say(f"{c['name']}: envFrom a ConfigMap that is not rendered: {ref}")
            else:
                names |= set(configmaps[ref].get("data", {}))
        return names

    workloads = 0
    for doc in docs:
        pod, cs = containers(doc)
        if pod is None:
            continue
        workloads += 1
        where = f"{doc['kind']}/{doc['metadata']['name']}"
        if pod.get("automountServiceAccountToken") is not False:
            say(f"{where}: mounts a service-account token (nothing here talks to the API)")
        for key in ("hostNetwork", "hostPID", "hostIPC"):
            if pod.get(key):
                say(f"{where}: {key}")
        for volume in pod.get("volumes", []):
            if "hostPath" in volume:
                say(f"{where}: a hostPath volume ({volume['name']})")
        for c in cs:
            name = f"{where}/{c['name']}"
            if c.get("image") != IMAGE:
                say(f"{name}: image {c.get('image')}, not {IMAGE} (the Dockerfile's, docker-compose.yml)")
            command = c.get("command") or ["oversell"]  # the image's ENTRYPOINT
            args = c.get("args", [])
            words = command + args
            if command[0] not in PROGRAMS:
                say(f"{name}: starts {command[0]}, which the image does not have")
            is_oversell = command[0] == "oversell"
            sub = words[1] if is_oversell and len(words) > 1 else None
            if is_oversell and sub not in SUBCOMMANDS:
                say(f"{name}: `oversell {sub}` is no subcommand ({sorted(SUBCOMMANDS)})")
            shell = command[0] in ("sh", "bash")
            script = " ".join(args) if shell else ""
            is_member = sub == "member" or "oversell member" in script
            if "--" in words:
                child = words[words.index("--") + 1]
                if child not in PROGRAMS:
                    say(f"{name}: its supervisor starts {child}, which the image does not have")
            for program in re.findall(r"-- \\?\s*(\S+)", script):
                if program not in PROGRAMS:
                    say(f"{name}: its script's supervisor starts {program}, which the image does not have")
            set_env = env_names(c)
            if sub == "serve":
                missing = SERVE_ENV - MUST_STAY_UNSET - set_env
                if missing:
                    say(f"{name}: `oversell serve` reads {sorted(missing)}, not set")
                if set_env & MUST_STAY_UNSET:
                    say(f"{name}: sets {sorted(set_env & MUST_STAY_UNSET)}, which must stay unset")
                unknown = set_env - SERVE_ENV
                if unknown:
                    say(f"{name}: sets {sorted(unknown)}, which `oversell serve` does not read")
                probes = {k: c.get(k) for k in ("readinessProbe", "livenessProbe")}
                for kind, probe in probes.items():
                    if not probe or probe.get("httpGet", {}).get("path") != "/health":
                        say(f"{name}: {kind} is not an HTTP GET of /health")
            elif is_member:
                unknown = set_env - MEMBER_ENV - STORE_SCRIPT_ENV
                if unknown:
                    say(f"{name}: sets {sorted(unknown)}, which neither `oversell member` nor its store reads")
                if "ADMIN_TOKEN" not in set_env:
                    say(f"{name}: a supervisor without ADMIN_TOKEN answers nobody")
            elif sub == "class":
                unknown = set_env - CLASS_ENV
                if unknown:
                    say(f"{name}: sets {sorted(unknown)}, which `oversell class` does not read")
                if "ADMIN_TOKEN" not in set_env:
                    say(f"{name}: `oversell class` needs ADMIN_TOKEN")
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref and ((ref["name"], ref["key"]) != SECRET or e["name"] != "ADMIN_TOKEN"):
                    say(f"{name}: {e['name']} from secret {ref['name']}/{ref['key']}, not ADMIN_TOKEN from {SECRET[0]}/{SECRET[1]}")
                cref = e.get("valueFrom", {}).get("configMapKeyRef")
                if cref and cref["key"] not in configmaps.get(cref["name"], {}).get("data", {}):
                    say(f"{name}: {e['name']} from ConfigMap key {cref['name']}/{cref['key']}, not rendered")
            ports = {p.get("name") for p in c.get("ports", [])} | {p["containerPort"] for p in c.get("ports", [])}
            for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
                probe = c.get(kind) or {}
                for how in ("httpGet", "tcpSocket"):
                    if how in probe and probe[how]["port"] not in ports:
                        say(f"{name}: {kind} on port {probe[how]['port']}, which the container does not name")
                if "httpGet" in probe:
                    routes = MEMBER_ROUTES if is_member else ROUTES
                    if probe["httpGet"]["path"] not in routes:
                        say(f"{name}: {kind} asks {probe['httpGet']['path']}, no such route")
            sc = c.get("securityContext", {})
            if sc.get("privileged") or sc.get("allowPrivilegeEscalation") is not False:
                say(f"{name}: privileged, or privilege escalation not refused")
            caps = sc.get("capabilities", {})
            if "ALL" not in caps.get("drop", []):
                say(f"{name}: does not drop every capability first")
            added = set(caps.get("add", []))
            if added and (not is_member or not added <= SUPERVISOR_CAPS):
                say(f"{name}: adds {sorted(added)} (only a store's supervisor, only {sorted(SUPERVISOR_CAPS)})")
            if sc.get("runAsUser", pod.get("securityContext", {}).get("runAsUser")) == 0 and not is_member:
                say(f"{name}: runs as root without being a store's supervisor")

    def pods_labelled(selector):
        return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet")
                and selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()]

    for name, svc in by_kind.get("Service", {}).items():
        if not pods_labelled(svc["spec"]["selector"]):
            say(f"Service/{name}: selects no workload")
    for name, ing in by_kind.get("Ingress", {}).items():
        for rule in ing["spec"]["rules"]:
            for p in rule["http"]["paths"]:
                backend = p["backend"]["service"]
                svc = by_kind.get("Service", {}).get(backend["name"])
                if not svc or backend["port"].get("name") not in {q.get("name") for q in svc["spec"]["ports"]}:
                    say(f"Ingress/{name}: {p['path']} goes to {backend}, not a rendered Service port")
    for name, hpa in by_kind.get("HorizontalPodAutoscaler", {}).items():
        target = hpa["spec"]["scaleTargetRef"]
        if target["name"] not in by_kind.get(target["kind"], {}):
            say(f"HorizontalPodAutoscaler/{name}: scales {target['kind']}/{target['name']}, not rendered")
        else:
            c = by_kind[target["kind"]][target["name"]]["spec"]["template"]["spec"]["containers"][0]
            if "cpu" not in c.get("resources", {}).get("requests", {}):
                say(f"HorizontalPodAutoscaler/{name}: scales on CPU, its target requests none")
    for name, pdb in by_kind.get("PodDisruptionBudget", {}).items():
        if not pods_labelled(pdb["spec"]["selector"]["matchLabels"]):
            say(f"PodDisruptionBudget/{name}: covers no workload")
    if "Deployment" not in by_kind or "oversell" not in by_kind["Deployment"]:
        say("no Deployment/oversell: the instances are missing")
    return problems, len(docs), workloads


# The book's page on the orchestrators is where a reader deploying to Kubernetes looks.
RUN_SHEET = "docs/src/ops/orchestrators.md"


def book_creates_the_secret():
    text = (ROOT / RUN_SHEET).read_text()
    want = f"create secret generic {SECRET[0]} --from-literal={SECRET[1]}="
    return [] if want in text else [f"{RUN_SHEET}: no `{want}…` telling how to create the Secret"]


failed = book_creates_the_secret()
for line in failed:
    print(f"k8s: FAIL {line}")
for path in sys.argv[2:]:
    problems, n, workloads = check(path)
    label = Path(path).stem
    if problems:
        failed += problems
        for p in problems:
            print(f"k8s: FAIL {label}: {p}")
    else:
        print(f"k8s: PASS {label}: {n} objects, {workloads} workloads; images, programs, env, probes, Secret, privileges, references")
sys.exit(1 if failed else 0)
