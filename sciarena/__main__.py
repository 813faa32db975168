"""`python -m sciarena …` — see sciarena/cli.py."""

import sys

from sciarena.cli import main

sys.exit(main())
