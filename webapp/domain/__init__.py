"""The domain: the tool catalog, the input schemas, the actions and what results show.

Nothing here knows HTTP: an action takes a storage, validated input and a context, and
answers a `ToolResult`. The web layer (and any other transport) calls actions.
"""
