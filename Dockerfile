# The oversell image: every member of the compose fleet runs it. `oversell serve` by default;
# `loadtest` is in it, and so are Debian's redis-server, redis-sentinel, ZooKeeper, PostgreSQL and nginx,
# the same packages `oversell up` runs on a Debian host: one behaviour on both paths.
#   docker build -t oversell:local .     (docker compose up --build does this for you)
#
# Both stages start from images a registry has (Docker Desktop pulls them). A machine with no
# registry makes them first, from Debian's packages and its own Rust toolchain:
#   bash deploy/base-images.sh
# No BuildKit-only syntax (cache mounts, `# syntax=`): the legacy builder builds this too.

# --- build: the two binaries, release mode ---
FROM rust:1-bookworm AS build
WORKDIR /src
# Only what cargo reads, so that editing the compose file, the docs or the tests does not
# rebuild the binaries (the legacy builder has no cache mounts: a rebuild is a whole one).
COPY Cargo.toml Cargo.lock build.rs ./
COPY src src
COPY api api
COPY client client
COPY loadtest loadtest
COPY workshop workshop
# The schedule search behind `loadtest explore` (Lua 5.1 built from source by the C compiler
# this image has for the clock shim).
COPY explore explore
# The bench crate is a workspace member: cargo reads its manifest and sources, not its
# scripts, so editing a bench script does not rebuild the binaries.
COPY bench/Cargo.toml bench/
COPY bench/src bench/src
COPY static static
COPY deploy/nginx.conf.template deploy/
# Niced: a build beside other work (CI makes this image while its tests run) leaves it the CPU.
RUN nice -n 10 cargo build --release --locked -p oversell -p workshop \
 && mkdir -p /out \
 && cp target/release/oversell target/release/loadtest /out/

# --- runtime: Debian, not distroless: a freezing instance asks `sh -c "sleep …; kill -CONT …"`
# to resume it, the healthcheck uses bash, and the stores are Debian's packages. ---
FROM debian:bookworm-slim
# envsubst (gettext-base) fills nginx's per-client limits in at start; procps for `ps` when
# looking into a member; nftables for the stores' supervisors (`oversell member`), which cut a
# member's links inside its own network namespace. ZooKeeper brings Debian's headless JRE.
# prometheus: the `observe` profile's server (deploy/prometheus/).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      redis-server redis-sentinel redis-tools zookeeper postgresql nginx nftables gettext-base procps \
      prometheus \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin oversell
# Where the resource store keeps its append-only file on an orchestrator that replaces a dead
# container with a new one (a volume mounted here keeps the orders across it).
# /class: where compose's class service writes the rooms' tokens and slips; a fresh volume
# mounted there takes this owner and mode.
RUN install -d -o oversell -g oversell /var/lib/oversell \
 && install -d -m 0700 -o oversell -g oversell /class
COPY --from=build /out/oversell /out/loadtest /usr/local/bin/
# How compose starts ZooKeeper and nginx (as `oversell up` configures them).
COPY deploy/zookeeper.sh /usr/local/bin/oversell-zookeeper
COPY deploy/postgres.sh /usr/local/bin/oversell-postgres
COPY deploy/nginx.sh /usr/local/bin/oversell-nginx
# The dashboard is built into the oversell binary: nothing else to copy.
ENV HOST=0.0.0.0 \
    PORT=3000
USER 10001
EXPOSE 3000
ENTRYPOINT ["oversell"]
CMD ["serve"]
