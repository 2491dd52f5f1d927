"""Drives the provider through Hermes Agent's own MemoryManager, loaded from
a Hermes source checkout (HERMES_AGENT_SRC), for test_nexus_hermes.py's
RealHermesTest. Run in a subprocess so Hermes's 'agent' package never leaks
into the other tests.

    python3 hermes_real_driver.py HERMES_SRC VAULT NEXUS_BIN HERMES_HOME

Only agent/memory_provider.py and agent/memory_manager.py are Hermes's own;
the few modules of the rest of Hermes they import (skill commands, the tool
registry, toolsets, the daemon thread pool, hermes_constants) are replaced
by minimal stand-ins. Prints one JSON document.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import json
import os
import sys
import types


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


def main() -> None:
    src, vault, nexus, home = sys.argv[1:5]
    # The agent package without its __init__ (which pulls in all of Hermes).
    _module("agent", __path__=[os.path.join(src, "agent")])
    _module("agent.skill_commands", extract_user_instruction_from_skill_message=lambda s: s)
    _module("agent.redact", redact_for_egress=lambda s: s)
    _module("tools", __path__=[])
    _module("tools.registry", tool_error=lambda msg: json.dumps({"error": msg}))
    _module("tools.daemon_pool", DaemonThreadPoolExecutor=concurrent.futures.ThreadPoolExecutor)
    _module("tools.hook_output_spill", get_spill_config=lambda: None, spill_if_oversized=lambda r, **k: r)
    _module("toolsets", _HERMES_CORE_TOOLS=[], resolve_toolset=lambda n: [])
    _module("hermes_constants", get_hermes_home=lambda: home)

    import agent.memory_provider as mp
    from agent.memory_manager import MemoryManager

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from nexus_hermes import NexusMemoryProvider

    out = {"hermes_base": issubclass(NexusMemoryProvider, mp.MemoryProvider)}
    p = NexusMemoryProvider({"agent": "lyra", "vault": vault, "bin": nexus, "timeout": 20})
    out["available"] = p.is_available()
    warnings = []
    m = MemoryManager()
    m.add_provider(p)
    m.initialize_all(session_id="real-1", platform="cli", hermes_home=home, agent_context="primary",
                     agent_identity="lyra", warning_callback=warnings.append)
    m.on_turn_start(1, "What changed overnight on staging?")
    out["prefetch"] = m.prefetch_all("What changed overnight on staging?", session_id="real-1")
    out["recall"] = m.describe_recall() if hasattr(m, "describe_recall") else None
    m.sync_all("What changed overnight on staging?", "Ella fixed the login timeout.", session_id="real-1")
    m.on_delegation("Check the staging certificates", "All valid until March.", child_session_id="child-1")
    msgs = [{"role": "user", "content": "What changed overnight on staging?"},
            {"role": "assistant", "content": "Ella fixed the login timeout."}]
    params = inspect.signature(m.on_pre_compress).parameters
    out["fail_closed_offered"] = "require_checkpoint" in params
    if out["fail_closed_offered"]:
        out["compress"] = m.on_pre_compress(msgs, require_checkpoint=True)
    else:
        out["compress"] = m.on_pre_compress(msgs)
    if hasattr(m, "flush_pending"):
        m.flush_pending(timeout=60)
    m.on_session_end(msgs)
    m.shutdown_all()
    out["warnings"] = warnings
    print(json.dumps(out))


if __name__ == "__main__":
    main()
