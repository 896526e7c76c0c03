"""The project's resident agent (`sync --watch`): the loop and its scheduler (`watcher`), the
control socket (`channel`: where it listens and how frames travel; `server`: the listening
end; `service`: what each request does), the answers to commands waiting for their files
(`handoff`, `settlement`), the vector backfill (`backfill`), the file events, the backoff, the
published state (`published`, `report`) and a stderr that never blocks it (`stderr_pump`)."""
