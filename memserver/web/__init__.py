"""What every HTTP endpoint of the system shares: the guard middleware (Host, Origin, key,
media type, body size and time), the uvicorn config every server runs with, and listening
addresses. Imports only ``memserver.errors``; the memory server, the console and the read
agent's HTTP API all stand on it."""
