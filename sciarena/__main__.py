"""`python -m sciarena …` — see sciarena/cli/main.py."""

import sys

from sciarena.cli.main import main

sys.exit(main())
