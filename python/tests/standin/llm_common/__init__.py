"""A stand-in for llm-common, written the way llm-common is: attribute-only
messages, clients that read attributes, a BaseTool registry, and an executor
that imports ToolSelector at module level and builds one per task without
closing it. The toolselect tests drive it unchanged."""
