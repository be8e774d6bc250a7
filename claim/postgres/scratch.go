package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/queuectl/queuectl/claim"
)

func init() { claim.RegisterScratch(claim.EnginePostgres, Scratch) }

// Scratch creates an empty database, queuectl_scratch_<random>, on the
// server that dsn names (connected to as dsn says), and returns a DSN of
// it (dsn's, without its search_path, which names a schema of the other
// database) and the function that drops it, closing whatever connections
// are still open to it.
func Scratch(ctx context.Context, dsn string) (string, func(context.Context) error, error) {
	dsn = pgxURL(dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, badURL(dsn, err)
	}
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return "", nil, badURL(dsn, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "queuectl_scratch_" + hex.EncodeToString(b[:])
	if err := serverExec(ctx, dsn, "CREATE DATABASE "+name); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == codeInsufficientPrivilege {
			user := u.User.Username()
			return "", nil, &hinted{fmt.Errorf("create a scratch database on %s: user %s may not create databases: %w", claim.RedactLocation(dsn), user, err),
				fmt.Sprintf("give it the right (as a superuser: ALTER ROLE %s CREATEDB), or pass --db with a user that has it", user)}
		}
		return "", nil, classify(fmt.Errorf("create a scratch database on %s: %w", claim.RedactLocation(dsn), err))
	}
	q := u.Query()
	q.Del("search_path")
	scratch := *u
	scratch.Path, scratch.RawPath, scratch.RawQuery = "/"+name, "", q.Encode()
	drop := func(ctx context.Context) error {
		if err := serverExec(ctx, dsn, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return classify(fmt.Errorf("drop scratch database %s: %w", name, err))
		}
		return nil
	}
	return scratch.String(), drop, nil
}

// serverExec runs one statement on a connection of its own: CREATE and DROP
// DATABASE cannot run in a transaction, nor in the database they drop.
func serverExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
