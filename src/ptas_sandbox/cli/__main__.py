"""`python -m ptas_sandbox.cli` is the `ptas` command."""

import sys

from ptas_sandbox.cli import main

sys.exit(main())
