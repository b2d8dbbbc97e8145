# A PostgreSQL 15 member under Patroni for docker-compose.yml: Debian 12's patroni (3.0.2) on the official
# PostgreSQL 15 image (also Debian 12), configured from config/patroni.yml by config/patroni-entrypoint.sh.
# Its certificates come from the mounted TLS folder (docker-compose.yml), never from the image.
FROM postgres:15-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends patroni gettext-base curl \
 && rm -rf /var/lib/apt/lists/*
COPY config/patroni.yml /etc/patroni/patroni.yml.template
COPY config/patroni-entrypoint.sh /usr/local/bin/patroni-entrypoint.sh
COPY config/patroni-post-bootstrap.sh /usr/local/bin/patroni-post-bootstrap.sh
USER postgres
ENTRYPOINT ["/usr/local/bin/patroni-entrypoint.sh"]
