"""Every loader of configuration: what a run is set up from, read from files and the environment.

- ``home``: the config directory (``$RHO_AGENT_HOME``, ``$XDG_CONFIG_HOME/rho-agent``,
  ``~/.config/rho-agent``) and its ``sessions``; a standard-library leaf.
- ``settings``: one run's settings from flags, the environment and the config file, in that
  order; the endpoint and its API key variable.
- ``config_files``: YAML agent configs and permission profiles (``resolve_profile``).
- ``databases_config``: the database aliases of ``databases.yaml``.
- ``prices``: the shipped ``data/prices.yaml`` merged with the user's ``prices.yaml``.
- ``templates`` and ``prompts/``: system prompt templates, the built-in ``default.md`` and the
  facts it is rendered with.
- ``databases_env``: database aliases from the engines' variables (``SQLITE_DB``,
  ``POSTGRES_HOST``...).
- ``hook_refs``: the config's ``module:function`` hook references, imported into ``Hooks``.
- ``stores``: the session store one URL names (flag, environment, YAML).
- ``mcp_servers``: the MCP tool source a config's servers make (``--mcp-config``).

Nothing is imported here: import the module you need.
"""
