# The image compose.yaml runs: kandev with its web client built, git for agents' working trees, and an
# unprivileged account agents run as (KANDEV_AGENT_USER=kandev-agent).
FROM python:3.12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git nodejs npm \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --create-home kandev-agent
WORKDIR /opt/kandev
COPY . .
# Editable: the server serves frontend/dist from the source tree.
RUN pip install --no-cache-dir -e . && cd frontend && npm ci --no-audit --no-fund && npm run build
ENTRYPOINT ["kandev"]
