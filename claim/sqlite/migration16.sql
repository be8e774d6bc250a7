-- Version 16 of the queuectl schema: the lease and heartbeat interval each
-- worker runs with.
--
-- A worker reads lease and heartbeat-interval once, when it starts, so a
-- later `config set` does not reach it until it restarts; a reader that
-- judged it by the config it reads now would call a live worker gone (or a
-- gone one live). The worker records its own, in nanoseconds; 0 is a row
-- of an older queuectl, judged by the reader's config as before.
ALTER TABLE workers ADD COLUMN lease_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workers ADD COLUMN heartbeat_ns INTEGER NOT NULL DEFAULT 0;
