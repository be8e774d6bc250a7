package claim

import "context"

// OpenEngine opens and migrates the engine of location, as Open does, for
// tests that watch what a Store asks of it.
func OpenEngine(location string) (Engine, error) {
	open, err := opener(EngineFor(location))
	if err != nil {
		return nil, err
	}
	e, err := open(context.Background(), location, OpenOptions{})
	if err != nil {
		return nil, err
	}
	if err := e.Migrate(context.Background()); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}
