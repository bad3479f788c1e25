"""``rho-agent continuum``'s machinery: the loop of developer sessions (``loop``), what it
does in the workspace through the executor (``workspace``) and its state file
(``state_file``). The pure decisions are ``rho_domain.continuum``'s."""
