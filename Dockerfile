# Dockerfile: allot's container images, built on Debian 12 (bookworm) with the
# scripts the README and CI use: scripts/install-deps.sh (the one package
# list) and scripts/build.sh.
#
#   docker build -t allot .                         allotd, allot, the dashboard
#   docker build --target agent -t allot-agent .    allot-agent, allot
#
#   docker run -d --name allot -p 127.0.0.1:8080:8080 -v allot-data:/var/lib/allot allot
#
# allotd listens on 0.0.0.0:8080 inside the container and speaks plain HTTP:
# TLS is the job of a reverse proxy in front of it (docs/install.md).

# ---- build: the same packages and build as CI ------------------------------
FROM debian:bookworm AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN ./scripts/install-deps.sh
COPY . .
RUN ./scripts/build.sh
RUN DESTDIR=/staging/server cmake --install build --prefix /usr --strip --component server \
 && DESTDIR=/staging/server cmake --install build --prefix /usr --strip --component cli \
 && DESTDIR=/staging/agent cmake --install build --prefix /usr --strip --component agent \
 && DESTDIR=/staging/agent cmake --install build --prefix /usr --strip --component cli \
 && rm -rf /staging/server/usr/lib/systemd /staging/agent/usr/lib/systemd /staging/agent/etc

# ---- agent: allot-agent and allot ------------------------------------------
FROM debian:bookworm-slim AS agent
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN /tmp/install-deps.sh --runtime agent && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh
RUN groupadd --gid 10001 allot \
 && useradd --uid 10001 --gid allot --home-dir /var/lib/allot-agent --no-create-home \
      --shell /usr/sbin/nologin allot \
 && install -d -o allot -g allot -m 0750 /var/lib/allot-agent
COPY --from=build /staging/agent/ /
USER allot
VOLUME /var/lib/allot-agent
ENTRYPOINT ["allot-agent", "--work-dir", "/var/lib/allot-agent"]
CMD ["--help"]

# ---- server (the default target): allotd, allot and the dashboard ----------
FROM debian:bookworm-slim AS server
COPY scripts/install-deps.sh /tmp/install-deps.sh
RUN /tmp/install-deps.sh --runtime server && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh
RUN groupadd --gid 10001 allot \
 && useradd --uid 10001 --gid allot --home-dir /var/lib/allot --no-create-home \
      --shell /usr/sbin/nologin allot \
 && install -d -o allot -g allot -m 0750 /var/lib/allot
COPY --from=build /staging/server/ /
USER allot
WORKDIR /var/lib/allot
VOLUME /var/lib/allot
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["allotd"]
CMD ["--config", "/etc/allot/allotd.conf", "--listen", "0.0.0.0:8080"]
