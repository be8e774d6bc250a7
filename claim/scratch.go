package claim

import (
	"context"
	"fmt"
)

// A ScratchMaker makes an empty database on the server that location
// names, and returns the new database's location and the function that
// drops it again.
type ScratchMaker func(ctx context.Context, location string) (scratch string, drop func(context.Context) error, err error)

// scratchMakers are the engines' ScratchMakers, by engine name; only
// engines with a server have one.
var scratchMakers = map[string]ScratchMaker{}

// RegisterScratch makes an engine's ScratchMaker available to Scratch.
// Engines call it from their package's init.
func RegisterScratch(name string, m ScratchMaker) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	scratchMakers[name] = m
}

// Scratch makes an empty database on the server that location names, for
// `bench --db` to run on, and returns its location and the function that
// drops it. A location that names no server (a SQLite file) is ErrInvalid.
func Scratch(ctx context.Context, location string) (string, func(context.Context) error, error) {
	m, err := scratchMaker(location)
	if err != nil {
		return "", nil, err
	}
	return m(ctx, location)
}

// CanScratch is the error Scratch returns at once for location, if any:
// ErrInvalid when it names no database server.
func CanScratch(location string) error {
	_, err := scratchMaker(location)
	return err
}

func scratchMaker(location string) (ScratchMaker, error) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if m, ok := scratchMakers[EngineFor(location)]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("%w: %s names no database server to make scratch databases on (a postgres:// URL)", ErrInvalid, RedactLocation(location))
}
