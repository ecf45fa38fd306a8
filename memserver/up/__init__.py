"""``memserver up``: the whole system from one command: the memory server in its own
process, both agents as children, ports, health polls, logs and a clean stop. Imports the
server and everything below it; only ``commands`` imports it."""
