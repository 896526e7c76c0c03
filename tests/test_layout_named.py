"""docs/dev/layout.md ("The modules") names every module of the product: a module added without
its line there fails here (the newcomer's map stays whole)."""

from __future__ import annotations

import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUT = os.path.join("docs", "dev", "layout.md")
PACKAGES = ("outbox", "sync", "cli", "mcpserve", "api", "integrations", "pipeline")


def _layout_section() -> str:
    with open(os.path.join(ROOT, LAYOUT), encoding="utf-8") as handle:
        text = handle.read()
    start = text.index("## The modules")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def _modules() -> list[str]:
    found = []
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
            found += [os.path.relpath(os.path.join(folder, name), ROOT)
                      for name in files if name.endswith(".py") and name != "__init__.py"]
    return sorted(found)


def test_every_module_is_named_in_the_layout():
    section = _layout_section()
    modules = _modules()
    assert len(modules) > 100  # the walk found the package, not an empty folder
    missing = [m for m in modules if os.path.basename(m) not in section]
    assert missing == [], (f"add a line for each of these to the block under \"## The modules\" "
                           f"in {LAYOUT}, in its folder's entry (what the module is for): "
                           f"{', '.join(missing)}")
