#!/bin/sh
# A PostgreSQL member's container (config/patroni.Dockerfile): config/patroni.yml filled in from this
# member's environment (the same names scripts/cluster.sh fills in), then Patroni, which runs PostgreSQL.
set -eu
envsubst '${MEMBER_NAME} ${MEMBER_API} ${MEMBER_API_LISTEN} ${MEMBER_PG} ${MEMBER_PG_LISTEN} ${MEMBER_DATA} ${MEMBER_SOCKETS} ${PG_BIN} ${ETCD_HOSTS} ${PG_SUPERUSER_PASSWORD} ${PG_REPLICATION_PASSWORD} ${PG_NETWORK} ${TLS_DIR} ${PATRONI_API_PASSWORD} ${MEMBER_POST_BOOTSTRAP}' \
  </etc/patroni/patroni.yml.template >/tmp/patroni.yml
chmod 600 /tmp/patroni.yml
exec patroni /tmp/patroni.yml
