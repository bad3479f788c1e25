-- A MariaDB / MySQL account for rho-agent that can read and nothing else.
-- Replace {database} and {password}; run as an administrator.
CREATE USER 'rho_agent_ro'@'%' IDENTIFIED BY '{password}';
GRANT SELECT, SHOW VIEW ON {database}.* TO 'rho_agent_ro'@'%';
-- MariaDB only: a server-side limit for every statement of this account (seconds).
ALTER USER 'rho_agent_ro'@'%' WITH MAX_STATEMENT_TIME 60;
-- Never grant it FILE, PROCESS, SUPER, RELOAD, CREATE TEMPORARY TABLES, LOCK TABLES,
-- SYSTEM_VARIABLES_ADMIN or CONNECTION_ADMIN. Also set secure_file_priv on the server.
