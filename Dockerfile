# syntax=docker/dockerfile:1
# The oversell image: `oversell serve` by default; `loadtest` is in it too.
#   docker build -t oversell:local .     (docker compose up --build does this for you)

# --- build: the two binaries, release mode; crates and target dir cached between builds ---
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p oversell -p loadtest \
 && mkdir -p /out \
 && cp target/release/oversell target/release/loadtest /out/

# --- runtime: Debian slim, not distroless: a freezing instance asks `sh -c "sleep …; kill -CONT …"`
# to resume it, and the healthcheck uses bash. No compiler, no sources, not root. ---
FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin oversell
COPY --from=build /out/oversell /out/loadtest /usr/local/bin/
# The dashboard is built into the oversell binary: nothing else to copy.
ENV HOST=0.0.0.0 \
    PORT=3000
USER 10001
EXPOSE 3000
ENTRYPOINT ["oversell"]
CMD ["serve"]
