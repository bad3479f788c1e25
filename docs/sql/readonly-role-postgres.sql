-- A PostgreSQL login for rho-agent that can read and nothing else.
-- Replace {database} and {password}; run as a superuser or the database owner.
CREATE ROLE rho_agent_ro LOGIN PASSWORD '{password}'
    NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
-- Read-only and bounded by default (rho-agent also sets both for every statement).
ALTER ROLE rho_agent_ro SET default_transaction_read_only = on;
ALTER ROLE rho_agent_ro SET statement_timeout = '60s';
ALTER ROLE rho_agent_ro SET idle_in_transaction_session_timeout = '60s';
-- Temporary files of one statement (a sort that spills); a superuser must set it.
ALTER ROLE rho_agent_ro SET temp_file_limit = '1GB';
GRANT CONNECT ON DATABASE {database} TO rho_agent_ro;
GRANT USAGE ON SCHEMA public TO rho_agent_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO rho_agent_ro;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO rho_agent_ro;
-- Never grant it pg_read_server_files, pg_write_server_files, pg_execute_server_program,
-- pg_signal_backend or pg_checkpoint. Extensions such as dblink and adminpack grant EXECUTE
-- to PUBLIC: revoke it (or keep them out of databases the agent reads).
