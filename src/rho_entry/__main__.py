"""``python -m rho_entry`` runs the ``rho-agent`` command."""

import sys

from rho_entry.cli import main

sys.exit(main())
