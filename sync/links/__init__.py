"""The fleet links: one connection to the AI Logger (`logger`) and one to the embedding service
(`embedder`), each speaking our failure vocabulary (`failures`: unreachable, credentials,
refused, failed; `credentials` tells a refused credential apart from an outage), and the
agent's pool of open links (`resident`). The fleet clients are imported only when a link
opens."""
