"""The core: model, events and the pure projection. No files, HTTP, CLI or LLMs."""
