# One image for the memory server and the read agent (the command picks which runs).
FROM python:3.11-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends gcc && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY memserver ./memserver
COPY ingest_agent ./ingest_agent
COPY read_agent ./read_agent
RUN pip install --no-cache-dir .
COPY example_kb /kb
ENV MEMORY_KB=/kb
EXPOSE 8787 8788
CMD ["memserver", "serve", "--addr", "0.0.0.0:8787"]
