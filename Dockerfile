# One image for every service of docker-compose.yml (the command picks which runs):
# memserver init / serve, ingest-agent, read-agent. It runs as the user `app`, never root.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends gcc \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 app
WORKDIR /app
COPY pyproject.toml README.md constraints.txt ./
COPY memserver ./memserver
COPY ingest_agent ./ingest_agent
COPY read_agent ./read_agent
RUN pip install --no-cache-dir -c constraints.txt .
# The example (seeds an empty knowledge base on first start) and both configs.
COPY example_kb ./example_kb
COPY config.example.yaml config.dev.yaml ./
# Mount points owned by `app`, so named volumes mounted there start writable by it.
RUN mkdir -p /kb /secrets && chown app:app /kb /secrets
ENV MEMORY_KB=/kb
USER app
EXPOSE 8787 8788
CMD ["memserver", "serve", "--addr", "0.0.0.0:8787"]
