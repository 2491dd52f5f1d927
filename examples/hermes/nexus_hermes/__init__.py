"""Nexus memory provider for Hermes Agent (a MemoryProvider plugin).

Install: copy this folder to $HERMES_HOME/plugins/nexus/ (or pip install the
package around it: entry point group hermes_agent.memory_providers), then
'hermes config set memory.provider nexus'. Configure with NEXUS_AGENT,
NEXUS_VAULT (and NEXUS_BIN), or NEXUS_URL and NEXUS_TOKEN for a remote
'nexus serve --http'. See docs/runtimes.md in the Nexus repository.

register(ctx) calls ctx.register_memory_provider(...) with one provider and
registers its pre_llm_call hook, so trivial prompts (which Hermes gives no
prefetch) still see what is new in the shared log.
"""

from __future__ import annotations

from .provider import NexusMemoryProvider, is_trivial, model_appended

__all__ = ["NexusMemoryProvider", "register", "is_trivial", "model_appended"]


def register(ctx) -> None:
    """Hermes plugin entry: one provider, plus its pre_llm_call hook."""
    provider = NexusMemoryProvider()
    ctx.register_memory_provider(provider)
    hook = getattr(ctx, "register_hook", None)
    if hook is not None:
        hook("pre_llm_call", provider.pre_llm_call)
