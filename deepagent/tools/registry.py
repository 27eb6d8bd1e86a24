"""The tool registry: business module -> function module -> tool.

Business modules are plugins. Each is a Python module that defines ``ToolSpec`` objects
(with ``@tool``) and has a manifest: a ``MANIFEST`` attribute or a YAML file with the
same stem next to it. They are found through the ``deepagent.modules`` entry-point group
and ``Settings.modules``; the engine never imports a business package by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

import yaml
from pydantic import Field, ValidationError

from deepagent.core.question import Language
from deepagent.core.schema import JSON, Strict
from deepagent.core.settings import Settings
from deepagent.core.yamlfile import safe_load
from deepagent.requirements.vocabulary import Vocabulary
from deepagent.tools.spec import ToolSpec

ENTRY_POINT_GROUP = "deepagent.modules"
COMMON_MODULE = "common"
WORKSPACE_MODULE = "workspace"  # engine tools over offloaded results (FileSystem on)
ALWAYS_LOADED = (COMMON_MODULE, WORKSPACE_MODULE)


class ParamSpec(Strict):
    """A context-parameter provider: one tool call whose data fills one or more parameters.

    ``args`` may use ``{{question}}`` and ``{{params.X}}`` placeholders; the parameters
    they read must exist first (the loader orders providers by these dependencies, and
    skips a provider whose inputs are missing). ``outputs`` maps each parameter name to a
    JMESPath over the tool's data. A provider whose outputs are all known already (for
    example given by the request) is not run.
    """

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    tool: str
    args: dict[str, JSON] = Field(default_factory=dict)
    outputs: dict[str, str] = Field(min_length=1)
    timeout_s: float = Field(default=2.0, gt=0)


class ToolTitle(Strict):
    """A tool's name for people (progress lines), in both languages."""

    zh: str = Field(min_length=1, max_length=40)
    en: str = Field(min_length=1, max_length=80)


class ModuleManifest(Strict):
    """What the context loader knows about a business module before loading its tools."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title_zh: str
    title_en: str
    description: str
    keywords: list[str] = Field(default_factory=list, description="zh/en aliases and keywords")
    anchors: list[str] = Field(
        default_factory=list,
        description="high-precision phrases that on their own mean the module is needed",
    )
    examples: list[str] = Field(
        default_factory=list,
        description="example questions this module answers"
        " (intent examples for offline classification)",
    )
    pages: list[str] = Field(default_factory=list, description="product pages it backs")
    function_modules: dict[str, str] = Field(
        default_factory=dict, description="function module name -> description"
    )
    tool_titles: dict[str, ToolTitle] = Field(
        default_factory=dict,
        description="tool name -> its title for people (zh, en), shown while a run works",
    )
    params: list[ParamSpec] = Field(
        default_factory=list, description="context parameters loaded before planning"
    )
    vocabulary: Vocabulary = Field(
        default_factory=Vocabulary,
        description="measures, aspects and listings its data answers (requirements, coverage)",
    )


EntityNames = Callable[[Settings], list[str]]
"""A module's optional ``entity_names(settings)`` hook: names of the things its data holds
(category names, brands). The offline classifier removes them before intent similarity."""


SubjectNames = Callable[[Settings], dict[str, list[str]]]
"""A module's optional ``subject_names(settings)`` hook: names a question may name a
subject by, per subject type (``{"brand": [...]}``), for the requirements extractor."""


@dataclass(frozen=True)
class BusinessModule:
    manifest: ModuleManifest
    tools: tuple[ToolSpec, ...]
    entity_names: EntityNames | None = None
    subject_names: SubjectNames | None = None

    @property
    def name(self) -> str:
        return self.manifest.name


class RegistryError(ValueError):
    """A plugin module is malformed (bad manifest, duplicate tool, unknown function module)."""


class ToolRegistry:
    def __init__(self, modules: Iterable[BusinessModule]) -> None:
        self.modules: dict[str, BusinessModule] = {}
        self.tools: dict[str, ToolSpec] = {}
        self._vocabulary: Vocabulary | None = None
        for module in modules:
            self._add(module)

    def _add(self, module: BusinessModule) -> None:
        if module.name in self.modules:
            raise RegistryError(f"business module {module.name!r} is registered twice")
        for spec in module.tools:
            if spec.name in self.tools:
                raise RegistryError(f"tool {spec.name!r} is defined twice")
            if spec.module != module.name:
                raise RegistryError(
                    f"tool {spec.name!r} declares module {spec.module!r}, found in {module.name!r}"
                )
            if spec.function_module not in module.manifest.function_modules:
                raise RegistryError(
                    f"tool {spec.name!r}: function module {spec.function_module!r} is not in "
                    f"the {module.name!r} manifest"
                )
            self.tools[spec.name] = spec
        unknown = set(module.manifest.tool_titles) - {spec.name for spec in module.tools}
        if unknown:
            raise RegistryError(
                f"the {module.name!r} manifest titles tools it does not define: "
                + ", ".join(sorted(unknown))
            )
        self.modules[module.name] = module

    def get(self, name: str) -> ToolSpec | None:
        return self.tools.get(name)

    def title(self, name: str, language: Language) -> str:
        """The tool's title for people in ``language`` (its manifest's ``tool_titles``),
        else its name in words ("get_category_overview" -> "category overview")."""
        spec = self.tools.get(name)
        module = self.modules.get(spec.module) if spec is not None else None
        titled = module.manifest.tool_titles.get(name) if module is not None else None
        if titled is not None:
            return titled.zh if language == "zh" else titled.en
        words = name.split("_")
        return " ".join(words[1:] if len(words) > 1 and words[0] == "get" else words)

    def module_title(self, name: str, language: Language) -> str:
        """The business module's title in ``language`` (its name when unknown)."""
        module = self.modules.get(name)
        if module is None:
            return name
        return module.manifest.title_zh if language == "zh" else module.manifest.title_en

    def entity_names(self, settings: Settings) -> list[str]:
        """All modules' entity names (see ``EntityNames``)."""
        return sorted(
            {n for m in self.modules.values() if m.entity_names for n in m.entity_names(settings)}
        )

    def vocabulary(self) -> Vocabulary:
        """Every module's vocabulary merged (common included): what any data can answer."""
        if self._vocabulary is None:
            self._vocabulary = Vocabulary.merge(
                m.manifest.vocabulary for m in self.modules.values()
            )
        return self._vocabulary

    def subject_names(self, settings: Settings) -> dict[str, list[str]]:
        """All modules' subject names by subject type (see ``SubjectNames``)."""
        out: dict[str, set[str]] = {}
        for m in self.modules.values():
            for kind, names in (m.subject_names(settings) if m.subject_names else {}).items():
                out.setdefault(kind, set()).update(names)
        return {kind: sorted(names) for kind, names in out.items()}

    def business_modules(self) -> list[str]:
        """Every module except the always-loaded ``common`` (and ``workspace``)."""
        return [name for name in self.modules if name not in ALWAYS_LOADED]

    def tools_for(self, modules: Iterable[str]) -> list[ToolSpec]:
        """The tools of the given modules plus the always-loaded ones, in registry order."""
        wanted = {*modules, *ALWAYS_LOADED}
        return [spec for spec in self.tools.values() if spec.module in wanted]

    def tree(self, module: str | None = None) -> list[dict[str, JSON]]:
        """The registry as nested dicts: module -> function modules -> tools."""
        out: list[dict[str, JSON]] = []
        for mod in self.modules.values():
            if module is not None and mod.name != module:
                continue
            groups = []
            for fm_name, fm_desc in mod.manifest.function_modules.items():
                tools = [t.summary() for t in mod.tools if t.function_module == fm_name]
                groups.append({"name": fm_name, "description": fm_desc, "tools": tools})
            out.append(
                {
                    "name": mod.name,
                    "title_zh": mod.manifest.title_zh,
                    "title_en": mod.manifest.title_en,
                    "description": mod.manifest.description,
                    "function_modules": groups,
                }
            )
        return out

    @classmethod
    def load(cls, settings: Settings) -> ToolRegistry:
        """Load the plugin modules named by entry points and ``settings.modules``."""
        paths: list[str] = []
        if settings.entry_points:
            eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)
            paths.extend(ep.value for ep in eps)
        wanted = [_ALIASES.get(p, p) for p in settings.modules]
        paths.extend(p for p in dict.fromkeys(wanted) if p not in paths)
        if settings.filesystem and WORKSPACE_PLUGIN not in paths:
            paths.append(WORKSPACE_PLUGIN)
        return cls(load_module(path) for path in paths)


WORKSPACE_PLUGIN = "deepagent.tools.offload.plugin"
_ALIASES = {"deepagent.workspace_tools": WORKSPACE_PLUGIN}
"""Plugin paths of the previous release, loaded as their new module (never twice)."""


def load_module(path: str) -> BusinessModule:
    """Import one plugin module and collect its manifest and tools."""
    try:
        py_module = importlib.import_module(path)
    except ImportError as exc:
        raise RegistryError(f"cannot import business module {path!r}: {exc}") from exc
    manifest = _manifest_of(py_module)
    tools = tuple(v for v in vars(py_module).values() if isinstance(v, ToolSpec))
    hooks = {h: getattr(py_module, h, None) for h in ("entity_names", "subject_names")}
    for hook, fn in hooks.items():
        if fn is not None and not callable(fn):
            raise RegistryError(f"{path}: {hook} must be a function of the settings")
    return BusinessModule(manifest=manifest, tools=tools, **hooks)


def _manifest_of(py_module: ModuleType) -> ModuleManifest:
    declared = getattr(py_module, "MANIFEST", None)
    if isinstance(declared, ModuleManifest):
        return declared
    if py_module.__file__ is None:
        raise RegistryError(f"{py_module.__name__} has no MANIFEST and no file")
    path = Path(py_module.__file__).with_suffix(".yaml")
    if not path.exists():
        raise RegistryError(f"{py_module.__name__}: no MANIFEST and no manifest file {path}")
    try:
        return ModuleManifest.model_validate(safe_load(path.read_text(encoding="utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise RegistryError(f"invalid manifest {path}: {exc}") from exc
