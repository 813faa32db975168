"""The Gradio user interface: ``build_app(services)`` returns the Blocks; launching is app.py's job."""

from sciarena.ui.app import build_app, launch_kwargs

__all__ = ["build_app", "launch_kwargs"]
