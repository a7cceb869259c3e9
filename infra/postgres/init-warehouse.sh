#!/bin/sh
# Runs once, on an empty data directory (the postgres image's /docker-entrypoint-initdb.d):
# a small "warehouse" database for the demo tenant's postgres source, read through a role that
# can only SELECT (the source never writes; least privilege all the same).
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v reader_password="$WAREHOUSE_PASSWORD" <<'SQL'
CREATE ROLE warehouse_reader LOGIN PASSWORD :'reader_password';
CREATE DATABASE warehouse;
\connect warehouse
CREATE SCHEMA demo;
COMMENT ON SCHEMA demo IS 'Demo data served by the gateway''s postgres source';
CREATE TABLE demo.customers (
  id integer PRIMARY KEY,
  name text NOT NULL,
  country text NOT NULL
);
COMMENT ON TABLE demo.customers IS 'Customers of the demo company';
INSERT INTO demo.customers VALUES (1, 'Ada', 'GB'), (2, 'Grace', 'US'), (3, 'Edsger', 'NL');
GRANT CONNECT ON DATABASE warehouse TO warehouse_reader;
GRANT USAGE ON SCHEMA demo TO warehouse_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA demo TO warehouse_reader;
SQL
