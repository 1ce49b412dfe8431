# The image compose.yaml runs: kandev with its web client built and git for agents' working trees. Its workers
# run each user's agents as a numeric identity of their own (KANDEV_AGENT_UIDS): no accounts are needed.
FROM python:3.12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/kandev
COPY . .
# Editable: the server serves frontend/dist from the source tree.
RUN pip install --no-cache-dir -e . && cd frontend && npm ci --no-audit --no-fund && npm run build
ENTRYPOINT ["kandev"]
