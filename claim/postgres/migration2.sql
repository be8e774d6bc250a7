-- Version 2 of the queuectl schema on PostgreSQL: steering jobs (cancel,
-- pause), as SQLite's migration8.sql.

-- When `cancel` was asked of the job; while it is processing, its worker is
-- stopping it, and every statement that ends its run ends it canceled.
ALTER TABLE jobs ADD COLUMN cancel_at bigint;

-- Queues no worker claims from until resumed; '*' pauses every queue.
CREATE TABLE paused_queues (
    queue     text   COLLATE "C" PRIMARY KEY,
    paused_at bigint NOT NULL
);
