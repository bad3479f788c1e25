"""The design documents' API, below the facade: the names their code blocks use.

- ``tools``: ``ToolHandler``, ``ToolInvocation``, ``ToolOutput``, ``ToolRegistry`` and the
  wrapping of a document handler into the domain's tool protocol.
- ``handlers``: the documents' ``*Handler`` names and ``ToolFactory`` over the domain's tools.
- ``model_client``: ``ModelClient``, the documents' streaming client over the one model adapter.
- ``state``: the documents' ``State`` (``from_jsonl``, the mutators) over the domain's State.
- ``approval_callback``: ``session.approval_callback`` turned into an ``Approver``.

Their import paths are ``src/rho_agent/``'s (``rho_agent.tools``, ``rho_agent.client.model``...);
the documents' ``SessionStore`` opens facade sessions and so stands above the facade
(``rho_entry.stored``). Nothing is imported here: import the module you need.
"""
