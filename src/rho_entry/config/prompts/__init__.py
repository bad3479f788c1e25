"""Built-in prompt templates (``*.md``) and the facts the default system prompt states."""
