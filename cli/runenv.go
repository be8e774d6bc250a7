package cli

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
)

// What `run` stores of its caller's environment. A job runs with its env
// laid over its worker's environment, so a recipe line prefixed with
// `queuectl run --` sees what it would see run directly (make's exported
// variables, a `VAR=x` before the command) when the job carries every
// variable whose value the worker's environment lacks or has otherwise.
// The rest, usually nearly all of it and often secrets (tokens in the
// login environment that the worker has too), is not stored: runEnv keeps
// only the variables that differ from the environment of each live worker
// of this host that may run the job. When one that may run it cannot be
// read (another host's worker, no /proc) or none runs yet, runEnv keeps
// the whole environment: the job must see it wherever it runs.

// A variable the workers have and the caller does not (make's unexport,
// env -u) is named in the job's QUEUECTL_UNSET (run.UnsetEnv), so that the
// job does not get it from its worker either. The worker's own QUEUECTL_
// variables are never among them; a name with white space, which the list
// cannot hold, is left out of it, and such a variable of the caller's is
// stored whatever its value (run.UnsetEnv).

// runEnv returns what run stores of environ (the caller's, as
// front.RunEnv reads it) for a job of queue, given the live workers and
// where their environments are kept (nil: read each).
func runEnv(environ map[string]string, queue string, live []claim.WorkerInfo, kept *workerEnvs) map[string]string {
	var workers []map[string]string
	for _, w := range live {
		if !served(queue, []claim.WorkerInfo{w}) {
			continue
		}
		env, ok := kept.of(w)
		if !ok {
			workers = nil
			break
		}
		workers = append(workers, env)
	}
	env := map[string]string{}
	for k, v := range environ {
		// A name UnsetEnv cannot list is stored always: the worker gives
		// a job that carries UnsetEnv none of its own by such a name.
		if len(workers) == 0 || differs(workers, k, v) || !run.Listable(k) {
			env[k] = v
		}
	}
	var unset []string
	measured := false
	for _, w := range workers {
		for k := range w {
			if _, has := environ[k]; has || strings.HasPrefix(k, "QUEUECTL_") || slices.Contains(unset, k) {
				continue
			}
			measured = true
			if run.Listable(k) {
				unset = append(unset, k)
			}
		}
	}
	if measured {
		slices.Sort(unset)
		env[run.UnsetEnv] = strings.Join(unset, " ")
	}
	return env
}

// differs reports whether any of the workers' environments lacks k=v.
func differs(workers []map[string]string, k, v string) bool {
	for _, w := range workers {
		if got, ok := w[k]; !ok || got != v {
			return true
		}
	}
	return false
}

// workerEnvs keeps the environments workerEnv read, by worker: the one a
// worker started with, which does not change while it runs (an id names
// one process). The worker serving `run` on its socket reads its peers'
// once, not for each job.
type workerEnvs struct {
	mu   sync.Mutex
	envs map[string]map[string]string // by worker id; read only
}

// keptEnvs bounds a workerEnvs: past it, it starts again empty.
const keptEnvs = 256

// of returns worker w's environment, as workerEnv; kept when c is not nil.
func (c *workerEnvs) of(w claim.WorkerInfo) (map[string]string, bool) {
	if c == nil {
		return workerEnv(w)
	}
	c.mu.Lock()
	env, ok := c.envs[w.ID]
	c.mu.Unlock()
	if ok {
		return env, true
	}
	if env, ok = workerEnv(w); !ok {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.envs == nil || len(c.envs) >= keptEnvs {
		c.envs = map[string]map[string]string{}
	}
	c.envs[w.ID] = env
	return env, true
}

// workerEnv reads the environment worker w started with, where w runs on
// this host: /proc/PID/environ, which only its user can read.
func workerEnv(w claim.WorkerInfo) (map[string]string, bool) {
	if w.Host != run.HostID() || w.PID <= 0 {
		return nil, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.PID) + "/environ")
	if err != nil {
		return nil, false
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return env, true
}
