// Package cli defines queuectl's commands: one file per command family, the
// exit-code table (exit.go) and the home and flag helpers (home.go). Main is
// the whole program; main.go only calls it.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/queuectl/queuectl/front"
)

// Main runs queuectl with args (args[0] is the program name) and returns its
// exit code. Every command reads stdin and writes stdout and stderr given
// here, never the process's own. The first SIGINT, SIGTERM or SIGHUP
// cancels the commands' context (a worker stops claiming); the second
// cancels the context a worker's running jobs hold (SPEC §5). A SIGINT or
// SIGHUP ignored when the process started stays ignored (stopSignals).
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if r, ok := front.TakeResume(); ok {
		ctx = context.WithValue(ctx, resumeKey{}, r)
	}
	soft, hard, stop := stages(ctx, stopSignals()...)
	defer stop()
	app := newApp(hard)
	if words, ok := completionWords(args); ok {
		complete(soft, app, words, stdout)
		return legacyAfterDashes(args, stderr)
	}
	app.Reader, app.Writer, app.ErrWriter = stdin, stdout, stderr
	code := exitOK
	app.CommandNotFound = commandNotFound(&code)
	app.Action = func(c *cli.Context) error {
		if c.NArg() > 0 {
			app.CommandNotFound(c, c.Args().First())
			return nil
		}
		_, err := fmt.Fprint(c.App.Writer, shortUsage(c.App))
		return err
	}
	args = helpArgs(app, args)
	if err := repeatedFlag(app, args); err != nil {
		return exitCode(err, stderr)
	}
	if err := app.RunContext(soft, reorderArgs(app, args)); err != nil {
		code := exitCode(err, stderr)
		var in front.Interrupted
		if by := (endedBy{}); errors.As(err, &by) {
			front.Die(by.signal)
		} else if code == exitInterrupted && errors.As(context.Cause(soft), &in) && (in.Signal == syscall.SIGINT || in.Signal == syscall.SIGHUP) {
			// Ended by Ctrl-C or a hangup: die of it, so that a script
			// waiting for this command stops too (a shell takes a command
			// that exited 130 for one that handled the signal, and goes
			// on: front.Exit).
			front.Die(in.Signal)
		}
		return code
	}
	return code
}

// stopSignals are the signals that stop a command: SIGTERM, and SIGINT
// unless the process started with it ignored, as a background command of
// a script does (`queuectl worker start &`): a Ctrl-C at the script's
// terminal is not for it, as it is for no other command run so. A hangup
// (the terminal or ssh session of a foreground `worker start` closed)
// stops it as SIGTERM does, letting its running jobs finish, unless it
// was started under nohup. A SIGINT or SIGHUP ignored at start is caught
// and dropped all the same: what the process starts (a worker's jobs and
// hooks) then gets it at its default, whichever way the worker was
// started, instead of ignoring it for good (a shell cannot trap a signal
// ignored when it started, and `kill -HUP $$` must end a job as it ends
// the command run directly).
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	var ignored []os.Signal
	if front.HangupIgnored {
		ignored = append(ignored, syscall.SIGHUP)
	} else {
		sigs = append(sigs, syscall.SIGHUP)
	}
	if front.InterruptIgnored {
		ignored = append(ignored, os.Interrupt)
	} else {
		sigs = append(sigs, os.Interrupt)
	}
	if len(ignored) > 0 {
		dropSignals.Do(func() { dropAll(ignored) })
	}
	return sigs
}

// dropSignals catches the signals ignored at start once, for good
// (stopSignals).
var dropSignals sync.Once

// dropAll catches sigs and drops them.
func dropAll(sigs []os.Signal) {
	dropped := make(chan os.Signal, 1)
	signal.Notify(dropped, sigs...)
	go func() {
		for range dropped {
		}
	}()
}

// helpArgs reads `queuectl help [COMMAND...]` as `queuectl [COMMAND...]
// --help`, also after the app's flags (`queuectl --json help status`). No
// command has a help subcommand (a job may be named help: `queuectl cancel
// help`), but the program's first word is no job's, and many tools take
// help there.
func helpArgs(app *cli.App, args []string) []string {
	global := flagSpec(app.Flags)
	i := 1
	for ; i < len(args) && args[i] != "--" && isFlag(args[i]); i++ {
		if name, inline := flagName(args[i]); global[name] && !inline {
			i++ // its value
		}
	}
	if i >= len(args) || args[i] != "help" {
		return args
	}
	return append(append(slices.Clip(args[:i]), args[i+1:]...), "--help")
}

// newApp defines the commands. hard is the context a worker's running jobs
// hold: cancelled by the second signal.
func newApp(hard context.Context) *cli.App {
	app := &cli.App{
		Name:    "queuectl",
		Usage:   "run shell jobs in the background, from a spool directory or the command line",
		Version: versionText(),
		Description: `A job queue for one machine. A job is a shell command: drop a JSON file such as
{"command": "make -C ~/src/app test"} into ~/.queuectl/spool/, or run queuectl enqueue.
queuectl worker start runs jobs with /bin/sh -c, several at a time and in any number of
processes, keeps each run's stdout and stderr under ~/.queuectl/logs/, retries failures with
exponential backoff, and moves jobs that keep failing to the dead-letter queue (queuectl dlq).
Everything is in one SQLite file (~/.queuectl/queue.db), with no server to run; hosts that
share the work share a PostgreSQL database instead (--db postgres://…).

A first run:
   queuectl worker start &                       # runs jobs; one line per event on stderr
   id=$(queuectl enqueue -q --command 'echo hi')
   queuectl wait "$id" && queuectl logs "$id"    # prints: hi

Each command has --help with an example; each whose output is data takes --json (before its
name too: queuectl --json status). Exit codes:
` + exitTable(),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "home", Usage: "queuectl home `DIR` (default $QUEUECTL_HOME, else ~/.queuectl)"},
			&cli.StringFlag{Name: "db", Usage: "the store: a SQLite file's `PATH`, or a postgres://USER@HOST/DATABASE URL that many hosts share, which must name its database (in its path, by dbname=, or by $PGDATABASE) (default $QUEUECTL_DB, $QUEUECTL_DB_PATH, else HOME/queue.db)"},
		},
		Commands: []*cli.Command{
			enqueueCommand(), workerCommand(hard), statusCommand(), listCommand(), showCommand(),
			dlqCommand(), configCommand(), watchCommand(), ingestCommand(), waitCommand(), logsCommand(),
			purgeCommand(), benchCommand(), rejectedCommand(), runCommand(), serveCommand(),
			scheduleCommand(), completionCommand(), versionCommand(), queueCommand(),
			cancelCommand(), restartCommand(), rmCommand(), pauseCommand(), resumeCommand(), dbCommand(),
			holdCommand(), releaseCommand(), editCommand(), doctorCommand(),
		},
		Before:          emptyHomeOrDB,
		HideHelpCommand: true,
		Suggest:         true,
		ExitErrHandler:  func(*cli.Context, error) {},
		OnUsageError:    usageError,
	}
	setCommandDefaults(app.Commands)
	setCategories(app.Commands)
	return app
}

// emptyHomeOrDB refuses a --home or --db given empty: in a script that is
// an unset variable (`--home "$QHOME"`), and taking it for no flag would
// act on $QUEUECTL_HOME or ~/.queuectl, another queue than the one meant.
func emptyHomeOrDB(c *cli.Context) error {
	for _, name := range []string{"home", "db"} {
		if c.IsSet(name) && c.String(name) == "" {
			return withHint(usagef("--%s is empty", name),
				"give --"+name+" a value, or leave it out: "+homeDefaults[name])
		}
	}
	return nil
}

var homeDefaults = map[string]string{
	"home": "then $QUEUECTL_HOME, else ~/.queuectl is the home",
	"db":   "then $QUEUECTL_DB, $QUEUECTL_DB_PATH, else HOME/queue.db is the store",
}

// usageError makes a flag the parser refuses exit 2 with a hint, instead of
// urfave/cli's exit 1 and a help text on stdout.
func usageError(c *cli.Context, err error, _ bool) error {
	name := "queuectl"
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName // "queuectl dlq retry"; FullName() is only "retry"
	}
	if unknown := unknownFlag(c, err, name+" --help"); unknown != nil {
		return unknown
	}
	return withHint(usagef("%v", explainFlagError(c, err)), "see: "+name+" --help")
}

// setCommandDefaults gives every command the app's usageError (urfave/cli
// calls only the running command's own), help that shows only real
// defaults, and no help subcommand.
func setCommandDefaults(cmds []*cli.Command) {
	for _, cmd := range cmds {
		if cmd.OnUsageError == nil {
			cmd.OnUsageError = usageError
		}
		// Without it urfave/cli gives every command a "help" (and "h")
		// subcommand: `queuectl cancel help` would print help and exit 0,
		// not cancel the job named help. --help is unchanged.
		cmd.HideHelpCommand = true
		if len(cmd.Subcommands) > 0 && cmd.Action == nil {
			cmd.Action = groupAction
		}
		for _, f := range cmd.Flags {
			realDefault(f)
		}
		setCommandDefaults(cmd.Subcommands)
	}
}

// groupAction runs a group (worker, dlq…) given no subcommand of its own:
// its help, or, for any word, even an empty one (queuectl worker "$cmd"
// with cmd unset), no such command. urfave/cli showed the help for an
// empty word and exited 0.
func groupAction(c *cli.Context) error {
	if c.Args().Present() {
		c.App.CommandNotFound(c, c.Args().First())
		return nil
	}
	return cli.ShowSubcommandHelp(c)
}
