# syntax=docker/dockerfile:1
#
# sessionpipe's daemons in one small static image: every command under
# ./cmd (tailer, indexer, exporter, sessionpipe) built
# with CGO_ENABLED=0 onto distroless/static, run as the non-root user
# 65532. docker-compose.yml builds it for the indexer and exporter.
#
#   docker build -t sessionpipe .
#   docker run --rm sessionpipe indexer -h

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
ARG TARGETOS TARGETARCH
# go build fetches only the modules the daemons import (go mod download
# would fetch the DuckDB test bindings of every platform too).
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/bin/ ./cmd/... && \
    mkdir -p /out/data /out/parquet /out/archive

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
# Named volumes mounted here start owned by the non-root user.
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build --chown=65532:65532 /out/parquet /parquet
COPY --from=build --chown=65532:65532 /out/archive /archive
USER 65532:65532
ENV SESSIONPIPE_DATA_DIR=/data
WORKDIR /data
# No entrypoint: the command names the daemon, e.g. ["indexer", "serve"].
CMD ["sessionpipe", "-h"]
