"""The read agent over HTTP (``read-agent serve``): ``POST /ask`` and an OpenAI-compatible
chat endpoint. Imports the agent, its connection and errors; nothing imports it but the CLI."""
