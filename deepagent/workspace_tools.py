"""The previous release's path of the workspace plugin (``Settings.modules`` entries may
name it); the plugin is ``deepagent.tools.offload.plugin``."""

from deepagent.tools.offload.plugin import MANIFEST, list_results, read_result

__all__ = ["MANIFEST", "list_results", "read_result"]
