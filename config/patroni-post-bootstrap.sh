#!/bin/sh
# Run by Patroni once, on the member that creates the cluster (bootstrap.post_bootstrap in
# config/patroni.yml), with a superuser connection string as its argument. Makes the role the nodes log in
# as: `storycircle`, no superuser, no CREATEROLE or CREATEDB, owner of the database `storycircle` (and so of
# its public schema, where the nodes' migrations create their tables), and nothing else. The password comes
# from PG_APP_PASSWORD in Patroni's environment, read by psql itself (\getenv), never from a command line
# (any process on the host can read another's arguments).
set -eu
: "${PG_APP_PASSWORD:?PG_APP_PASSWORD is not set}"
psql "$1" -v ON_ERROR_STOP=1 <<'SQL'
\getenv app_password PG_APP_PASSWORD
CREATE ROLE storycircle LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD :'app_password';
CREATE DATABASE storycircle OWNER storycircle;
REVOKE ALL ON DATABASE postgres FROM PUBLIC;
REVOKE ALL ON DATABASE storycircle FROM PUBLIC;
SQL
