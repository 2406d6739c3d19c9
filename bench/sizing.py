"""How big a fleet a class needs, measured: what a sale costs each part of the fleet in CPU
time, what a room costs Redis in memory, what an instance holds in memory, and what one
grading of the lab costs. CPU time per sale (read from /proc, per process group) is what
carries over to another machine, and it holds on a shared one where a sales/s figure would not:
the other work on the cores slows the sale but does not make it cost more CPU.

    python3 bench/sizing.py --oversell target/release/oversell --loadtest target/release/loadtest

Starts its own fleets (`oversell up --port 0 --lab`, N instances), stops them, prints the
figures and the load average. Linux only (reads /proc)."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system time of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(entry))
            except OSError:
                pass
    return kids


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    return kb / 1024


class Fleet:
    def __init__(self, args, instances, lab=False):
        self.token = "sizing-" + os.urandom(6).hex()
        self.log = tempfile.NamedTemporaryFile("w+", delete=False, suffix=".log")
        env = dict(os.environ, MAX_ROOMS="1000")
        cmd = [args.oversell, "up", "--port", "0", "--instances", str(instances), "--admin-token", self.token]
        if lab:
            cmd.append("--lab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 90
        text = ""
        while time.time() < deadline:
            text = open(self.log.name).read()
            if re.search(r"^ready: ", text, re.M):
                break
            time.sleep(0.2)
        else:
            self.stop()
            sys.exit(f"oversell up not ready:\n{text[-2000:]}")
        self.url = re.search(r"^ready: (\S+)", text, re.M).group(1)
        self.apps = [int(p) for p in re.findall(r"^app\d+: \S+ pid=(\d+)", text, re.M)]
        self.redis = int(re.search(r"^redis: \S+ pid=(\d+)", text, re.M).group(1))
        self.redis_port = int(re.search(r"^redis: redis://127.0.0.1:(\d+)", text, re.M).group(1))
        self.nginx = int(re.search(r"^nginx: \S+ pid=(\d+)", text, re.M).group(1))

    def groups(self):
        return {"instances": self.apps, "redis": [self.redis], "nginx": [self.nginx] + children(self.nginx)}

    def cpu(self):
        return {name: sum(cpu_seconds(p) for p in pids) for name, pids in self.groups().items()}

    def admin(self, method, path, body):
        req = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "content-type": "application/json"},
        )
        return json.load(urllib.request.urlopen(req, timeout=60))

    def state(self, room):
        return json.load(urllib.request.urlopen(f"{self.url}/state?room={room}", timeout=10))

    def redis_memory(self):
        out = subprocess.run(
            ["redis-cli", "-p", str(self.redis_port), "info", "memory"], capture_output=True, text=True, check=True
        ).stdout
        return int(re.search(r"used_memory:(\d+)", out).group(1))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.unlink(self.log.name)


def loadtest(args, fleet, *more):
    out = subprocess.run(
        [args.loadtest, "run", "--url", fleet.url, "--quiet", "--json", "--no-hand-off", *more],
        capture_output=True, text=True, check=True,
    ).stdout
    return json.loads(out)


def sale_cost(args, fleet, tier, connections, seconds):
    room = f"cost-{tier}"
    fleet.admin("POST", f"/admin/reset?room={room}", {"stock": 1_000_000})
    fleet.admin("PUT", f"/admin/config?room={room}", {"tier": tier, "business_ms": 0})
    before, t0 = fleet.cpu(), time.time()
    report = loadtest(args, fleet, "--room", room, "-c", str(connections), "-z", f"{seconds}s")
    wall = time.time() - t0
    after = fleet.cpu()
    sold = fleet.state(room)["items_sold"]
    used = {k: after[k] - before[k] for k in after}
    return sold, wall, used, report["stats"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--oversell", required=True)
    parser.add_argument("--loadtest", required=True)
    parser.add_argument("--instances", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--rooms", type=int, default=300)
    parser.add_argument("--skip-grade", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(open('/proc/loadavg').read().split()[:3])}; cores: {os.cpu_count()}")

    fleet = Fleet(args, args.instances, lab=not args.skip_grade)
    try:
        idle = [rss_mib(p) for p in fleet.apps]
        print(f"\n{args.instances} instances behind nginx, one Redis (oversell up --lab)")
        print(f"instance memory idle: {', '.join(f'{m:.0f}' for m in idle)} MiB RSS")
        for tier in ("lua-release", "atomic-deduct"):
            memory = fleet.redis_memory()
            sold, wall, used, stats = sale_cost(args, fleet, tier, 64, args.seconds)
            per_order = (fleet.redis_memory() - memory) / sold
            rate = sold / wall
            per = {k: (sold / v if v else float("inf")) for k, v in used.items()}
            print(
                f"{tier}: {sold} sold in {wall:.1f} s ({rate:,.0f}/s through the fleet, p50 "
                f"{stats['latency_ms']['p50']:.1f} ms, non-200 {stats['sent'] - stats['ok']}); "
                f"CPU s used: instances {used['instances']:.1f}, redis {used['redis']:.1f}, nginx {used['nginx']:.1f}; "
                f"sales per CPU-second: instances {per['instances']:,.0f}, redis {per['redis']:,.0f}, nginx {per['nginx']:,.0f}; "
                f"Redis memory {per_order:.0f} B an order (the ledger, and the room's timeline, capped at 5,000 events)"
            )
        busy = [rss_mib(p) for p in fleet.apps]
        print(f"instance memory after the runs: {', '.join(f'{m:.0f}' for m in busy)} MiB RSS")

        # Memory: N rooms, each stocked with 100 and sold out (a class's sale of the ladder).
        base = fleet.redis_memory()
        names = [f"size-{i:03d}" for i in range(1, args.rooms + 1)]
        for name in names:
            fleet.admin("POST", f"/admin/reset?room={name}", {"stock": 100})
        stocked = fleet.redis_memory()
        before, t0 = fleet.cpu(), time.time()
        report = loadtest(args, fleet, "--room", "size", "--rooms", str(args.rooms), "-c", str(args.rooms),
                          "-n", str(args.rooms * 100))
        wall = time.time() - t0
        after = fleet.cpu()
        used = {k: after[k] - before[k] for k in after}
        sold_out = fleet.redis_memory()
        sold = sum(fleet.state(n)["items_sold"] for n in names[:10])
        print(
            f"\nRedis used_memory: {base / 2**20:.1f} MiB before; {args.rooms} rooms stocked "
            f"+{(stocked - base) / args.rooms / 1024:.1f} KiB a room; each sold out (100 orders, "
            f"{report['stats']['ok']} sold in all, statuses {report['stats']['statuses']}, {sold} in the first 10) "
            f"+{(sold_out - base) / args.rooms / 1024:.1f} KiB a room; redis RSS {rss_mib(fleet.redis):.0f} MiB"
        )
        ok = report["stats"]["ok"]
        print(
            f"lua-release over {args.rooms} rooms ({args.rooms} connections, one a room): {ok / wall:,.0f} sales/s; "
            f"sales per CPU-second: instances {ok / used['instances']:,.0f}, redis {ok / used['redis']:,.0f}, "
            f"nginx {ok / used['nginx']:,.0f}"
        )

        if not args.skip_grade:
            room = "grade-me"
            fleet.admin("POST", f"/admin/reset?room={room}", {"stock": 100})
            env = dict(os.environ, OVERSELL_ADMIN_TOKEN=fleet.token)
            common = ["--url", fleet.url, "--room", room, "--quiet"]
            subprocess.run([args.loadtest, "lab", "submit", *common, "--from", "static/locks/lua-release"],
                           check=True, env=env, capture_output=True)
            before, t0 = fleet.cpu(), time.time()
            card = subprocess.run([args.loadtest, "lab", "grade", *common], env=env, capture_output=True, text=True)
            wall = time.time() - t0
            after = fleet.cpu()
            used = {k: after[k] - before[k] for k in after}
            verdict = "graded" if card.returncode == 0 else f"exit {card.returncode}"
            print(
                f"\none lab grading (lua-release's steps): {wall:.1f} s wall, {verdict}; CPU s: instances "
                f"{used['instances']:.2f}, redis {used['redis']:.2f}, nginx {used['nginx']:.2f}"
            )
    finally:
        fleet.stop()
    print(f"\nload average at end: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
