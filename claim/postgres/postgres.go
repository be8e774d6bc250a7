// Package postgres is the store's PostgreSQL engine (claim.Engine): one
// queue shared by workers on many hosts. It holds every PostgreSQL
// statement of queuectl, the schema and its migrations (under an advisory
// lock), and PostgreSQL's mechanisms: claims with FOR UPDATE SKIP LOCKED,
// durability per transaction (SET LOCAL synchronous_commit), wake-ups by
// LISTEN/NOTIFY, and the classification of the server's errors.
//
// The engine uses pgx's own interface and pool (pgxpool) rather than
// database/sql: a listening connection must be a pgx.Conn of its own,
// errors come back as *pgconn.PgError with their SQLSTATE, and pgx
// prepares and caches each statement per connection by itself.
//
// Importing the package registers the engine with claim.Open.
package postgres

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/private"
)

func init() {
	claim.RegisterEngine(claim.EnginePostgres, func(ctx context.Context, dsn string, o claim.OpenOptions) (claim.Engine, error) {
		return open(ctx, dsn, o.MaxConns, nil)
	})
	claim.RegisterReader(claim.EnginePostgres, func(ctx context.Context, dsn string, _ claim.OpenOptions) (claim.Engine, error) {
		return OpenReadOnly(ctx, dsn)
	})
}

//go:embed schema.sql
var schemaV1 string

//go:embed migration2.sql
var migration2 string

//go:embed migration3.sql
var migration3 string

//go:embed migration4.sql
var migration4 string

//go:embed migration5.sql
var migration5 string

//go:embed migration6.sql
var migration6 string

//go:embed migration7.sql
var migration7 string

//go:embed migration8.sql
var migration8 string

//go:embed migration9.sql
var migration9 string

//go:embed migration10.sql
var migration10 string

//go:embed migration11.sql
var migration11 string

//go:embed migration12.sql
var migration12 string

//go:embed migration13.sql
var migration13 string

//go:embed migration14.sql
var migration14 string

//go:embed migration15.sql
var migration15 string

//go:embed migration16.sql
var migration16 string

//go:embed migration17.sql
var migration17 string

// migrations[i] takes a database from version i to i+1. Append only: a
// database made by an older binary must open with a newer one.
var migrations = []string{schemaV1, migration2, migration3, migration4, migration5, migration6, migration7, migration8, migration9, migration10, migration11, migration12, migration13, migration14, migration15, migration16, migration17}

// Engine is the queue in a PostgreSQL database (in the schema first on the
// connection's search_path). It is safe for concurrent use by many
// goroutines, and any number of processes on any number of hosts may open
// the same database.
type Engine struct {
	pool     *pgxpool.Pool
	location string // the DSN without its password
	schema   string // the schema the tables live in
	channel  string // the NOTIFY channel of this schema
	lockKey  int64  // the advisory lock of this schema's migrations
	foldKey  int64  // the advisory lock of foldCounts
	claimKey int64  // the advisory lock of claims while a queue has a limit

	listen listener
	group  committer // the group commit of workers' writes (batch.go)
}

var _ claim.Engine = (*Engine)(nil)

// maxConns is the pool's default size: a worker's slots share it, and
// every host's workers count against the server's max_connections (100 by
// default). pool_max_conns in the DSN overrides it.
const maxConns = 8

// ApplicationName is what a connection of queuectl's says it is to the
// server (pg_stat_activity), unless its URL or PGAPPNAME says otherwise.
const ApplicationName = "queuectl"

// Open connects to the database dsn names (postgres:// or postgresql://),
// checking that the server answers. Its schema is brought up to date by
// Migrate. The caller owns the Engine and must Close it.
func Open(ctx context.Context, dsn string) (*Engine, error) { return open(ctx, dsn, 0, nil) }

// open is Open, with a pool of conns connections (0: maxConns) unless the
// DSN sets pool_max_conns, and params set on every connection.
func open(ctx context.Context, dsn string, conns int, params map[string]string) (*Engine, error) {
	dsn = pgxURL(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, badURL(dsn, err)
	}
	if cfg.ConnConfig.Database == "" {
		return nil, noDatabase(dsn)
	}
	if u, err := url.Parse(dsn); err == nil && !u.Query().Has("pool_max_conns") {
		cfg.MaxConns = maxConns
		if conns > 0 {
			cfg.MaxConns = int32(conns)
		}
	}
	// A server that does not answer is an error at once, not a hang: the
	// connect timeout bounds each attempt, unless the DSN sets its own.
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	// Named in pg_stat_activity, unless the DSN (or PGAPPNAME) names it.
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = ApplicationName
	}
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	// A password file others may read is not read (password, at each
	// connection, the pool's and the listener's); a refusal then says so.
	loose := loosePassfile(dsn)
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.Password = password(dsn, cc.Password)
		return nil
	}
	e := &Engine{location: claim.RedactLocation(dsn)}
	e.listen.config = cfg.ConnConfig.Copy()
	e.listen.dsn = dsn
	e.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, looseError(openError(dsn, e.location, err), loose)
	}
	var schema *string
	var searchPath string
	if err := e.pool.QueryRow(ctx, "SELECT current_schema(), current_setting('search_path')").Scan(&schema, &searchPath); err != nil {
		e.pool.Close()
		return nil, looseError(openError(dsn, e.location, err), loose)
	}
	if schema == nil || *schema == "" {
		e.pool.Close()
		return nil, noSchema(e.location, searchPath)
	}
	e.schema = *schema
	e.channel = "queuectl_" + e.schema
	e.lockKey, e.foldKey = lockKey("migrate "+e.schema), lockKey("fold counts "+e.schema)
	e.claimKey = lockKey("claim " + e.schema)
	e.listen.channel = e.channel
	return e, nil
}

// loosePassfile returns the password file a connection to dsn would read
// (its passfile=, else $PGPASSFILE, else ~/.pgpass) when dsn and
// $PGPASSWORD give no password and the file is one that others may read
// or write: libpq ignores such a file, and so does queuectl; "" otherwise.
func loosePassfile(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || os.Getenv("PGPASSWORD") != "" || u.Query().Has("password") {
		return ""
	}
	if _, ok := u.User.Password(); ok {
		return ""
	}
	path := cmp.Or(u.Query().Get("passfile"), os.Getenv("PGPASSFILE"))
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		path = filepath.Join(home, ".pgpass")
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return path
}

// looseError is err, a failure to open the store, with the fix of a
// password file loosePassfile left unread, when the server wanted a
// password it would have given.
func looseError(err error, passfile string) error {
	var pe *pgconn.PgError
	if passfile == "" || !errors.As(err, &pe) || pe.Code != codeInvalidPassword && pe.Code != codeInvalidAuth {
		return err
	}
	return &hinted{err, fmt.Sprintf("%s is not read, as libpq does not read it: others may read it; make it yours alone: chmod 600 %s",
		passfile, private.Quote(passfile))}
}

// password is the password for a new connection to dsn: read again from
// the password file (~/.pgpass, PGPASSFILE, passfile=) where dsn has
// none, as libpq reads it for each connection, so that a password changed
// on the server and in the file is taken up by processes that run on; was
// otherwise (what the DSN, or the file when the store opened, gave). A file
// others may read is not read (loosePassfile), as libpq reads none.
func password(dsn, was string) string {
	if loosePassfile(dsn) != "" {
		return ""
	}
	cc, err := pgconn.ParseConfig(dsn)
	if err != nil || cc.Password == "" {
		return was
	}
	return cc.Password
}

// openError is the error of opening dsn (location, shown). A parameter
// that neither pgx nor the server knows (a typo: sslmod=disable) pgx sends
// the server as a setting, which the server refuses at each connection's
// start: that is invalid input, said of the URL, not a failure to connect.
func openError(dsn, location string, err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == codeUndefinedObject {
		if name, ok := strings.CutPrefix(pe.Message, "unrecognized configuration parameter "); ok {
			return &claim.LocationError{Location: dsn, Problem: "has a parameter that neither queuectl nor the server knows: " + name,
				Fix: "check its spelling: a URL takes libpq's parameters (sslmode, connect_timeout, …), pool_max_conns, " +
					"and settings of the server (search_path, application_name, …), as in " + claim.URLForm}
		}
	}
	return classify(fmt.Errorf("open database %s: %w", location, tidyAttempts(err)))
}

// noDatabase is the error of a URL that names no database: not in its
// path (postgres://HOST/DBNAME, postgres:///DBNAME), nor by a dbname=
// parameter, nor by $PGDATABASE or a service= file. libpq would connect
// to a database named after the user, and the queue's tables would be
// made in whatever that is, without a word; queuectl refuses instead.
func noDatabase(dsn string) error {
	return &claim.LocationError{Location: dsn, Problem: "names no database",
		Fix: "name one in the URL: postgres://HOST/DBNAME (postgres:///DBNAME for this host's socket), " +
			"or with ?dbname=DBNAME, or in $PGDATABASE"}
}

// noSchema is the error of a search_path that names no schema there is.
func noSchema(location, searchPath string) error {
	name := strings.Trim(strings.TrimSpace(strings.Split(searchPath, ",")[0]), `"`)
	if name == "" || name == "$user" {
		return &hinted{fmt.Errorf("open database %s: no schema on the search_path (%s) to keep the queue in", location, searchPath),
			"create one (CREATE SCHEMA NAME), then add &search_path=NAME to the URL"}
	}
	return &hinted{fmt.Errorf("open database %s: schema %q does not exist (the URL's search_path names it)", location, name),
		fmt.Sprintf("create it: psql URL -c 'CREATE SCHEMA %s' (or CREATE SCHEMA %s AUTHORIZATION USER, for another user), or drop search_path from the URL", name, name)}
}

// pgxURL is dsn as pgx reads it: pgx takes a URL for one only by its
// scheme in lower case, and anything else for libpq's keyword=value form,
// where the scheme is case-insensitive (PostgreSQL://… is a URL too).
func pgxURL(dsn string) string {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn
	}
	return strings.ToLower(scheme) + "://" + rest
}

// lockKey is the advisory lock key named by "queuectl " + name, hashed
// (FNV-1a) to 64 bits; names carry the schema, so that queues in different
// schemas of one database lock independently.
func lockKey(name string) int64 {
	h := uint64(14695981039346656037)
	for _, b := range []byte("queuectl " + name) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return int64(h)
}

// Location returns the DSN without its password.
func (e *Engine) Location() string { return e.location }

// Check has nothing to check: a PostgreSQL database cannot be replaced
// under its connections the way a file can.
func (e *Engine) Check() error { return nil }

// Close stops the listener and closes every connection.
func (e *Engine) Close() error {
	e.listen.stop()
	e.pool.Close()
	return nil
}

// Migrate brings the schema up to date under a transaction-scoped advisory
// lock: processes starting together on an empty database queue on the lock,
// the first creates the tables, the others find them made.
func (e *Engine) Migrate(ctx context.Context) error {
	// Most opens find the schema current: read the version without the lock.
	var version int
	err := e.pool.QueryRow(ctx, "SELECT version FROM queuectl_schema").Scan(&version)
	if err == nil && version == len(migrations) {
		return e.foldCounts(ctx)
	}
	if err == nil && version > len(migrations) {
		return newerSchema(version)
	}
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && pe.Code == codeUndefinedTable) && !errors.Is(err, pgx.ErrNoRows) {
		return classify(fmt.Errorf("read schema version: %w", err))
	}
	err = e.write(ctx, durable, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", e.lockKey); err != nil {
			return fmt.Errorf("lock schema: %w", err)
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS queuectl_schema (version integer NOT NULL)"); err != nil {
			return fmt.Errorf("create schema version: %w", err)
		}
		version := 0
		err := tx.QueryRow(ctx, "SELECT version FROM queuectl_schema").Scan(&version)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, "INSERT INTO queuectl_schema (version) VALUES (0)"); err != nil {
				return fmt.Errorf("set schema version: %w", err)
			}
		case err != nil:
			return fmt.Errorf("read schema version: %w", err)
		case version > len(migrations):
			return newerSchema(version)
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, "UPDATE queuectl_schema SET version = $1", len(migrations)); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return e.foldCounts(ctx)
}

func newerSchema(version int) error {
	return &claim.NewerSchemaError{Version: version, Known: len(migrations)}
}

// foldCounts adds the count rows of backends that are gone into shard 0
// (schema.sql, queue_counts), so that the rows a reader sums stay as few
// as the connections. One process folds at a time; the others skip it, and
// so does a role that may not write (a monitoring user): the sums are
// right without it.
func (e *Engine) foldCounts(ctx context.Context) error {
	err := e.fold(ctx)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == codeInsufficientPrivilege || pe.Code == codeReadOnly) {
		return nil
	}
	return err
}

func (e *Engine) fold(ctx context.Context) error {
	return e.write(ctx, light, func(tx pgx.Tx) error {
		var locked bool
		if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1)", e.foldKey).Scan(&locked); err != nil || !locked {
			return err
		}
		_, err := tx.Exec(ctx, `WITH gone AS (
				DELETE FROM queue_counts WHERE shard <> 0
				AND shard NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)
				RETURNING queue, state, n)
			INSERT INTO queue_counts (queue, state, shard, n)
			SELECT queue, state, 0, sum(n) FROM gone GROUP BY queue, state
			ON CONFLICT (queue, state, shard) DO UPDATE SET n = queue_counts.n + excluded.n`)
		if err != nil {
			return fmt.Errorf("fold job counts: %w", err)
		}
		return nil
	})
}

// Health reads the schema version and the server's clock (clock_timestamp:
// the time now, not the transaction's start). The server keeps its own
// pages' integrity; nothing here reads them all.
func (e *Engine) Health(ctx context.Context) (claim.Health, error) {
	h := claim.Health{Latest: len(migrations)}
	err := e.pool.QueryRow(ctx, "SELECT version, clock_timestamp() FROM queuectl_schema").Scan(&h.Schema, &h.ServerTime)
	if err != nil {
		return h, classify(fmt.Errorf("check database: %w", err))
	}
	return h, nil
}
