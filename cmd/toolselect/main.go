// Command toolselect registers tool catalogs, ranks them, selects tool calls
// with a small model and serves them over MCP. Run "toolselect help" for the
// list of commands; every command takes --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/toolselect/toolselect/otelsetup"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitInvalid = 1 // a check ran and said no (e.g. validate: invalid arguments)
	exitUsage   = 2 // bad flags, unreadable or invalid catalog
	exitFailed  = 3 // selection failed closed
)

// command is one sub-command. Each lives in its own file and registers itself
// from init, so commands can be added without touching this file.
type command struct {
	name    string
	summary string
	// run parses args with its own FlagSet and returns the exit code.
	run func(env *cmdEnv, args []string) int
}

// cmdEnv carries the process's streams so commands are testable in-process.
type cmdEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// environ lists the environment as KEY=VALUE (os.Environ): read only
	// to warn of selector variables that name no setting. nil: none.
	environ func() []string
	// tty is true when stdout is a terminal: select, validate and mcp stats
	// then print a summary for people; otherwise (and with --json) JSON.
	tty bool
}

// humanOutput reports whether a command with a --json flag (parsed into fs)
// prints its summary for people: on a terminal unless --json is given, and
// anywhere with an explicit --json=false (a demo, a log people read). Without
// the flag a pipe gets JSON, so scripts reading it keep getting JSON.
func (env *cmdEnv) humanOutput(fs *flag.FlagSet) bool {
	human := env.tty
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "json" {
			human = f.Value.String() == "false"
		}
	})
	return human
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("toolselect: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func main() {
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, environ: os.Environ, tty: isTerminal(os.Stdout)}
	// Traces and metrics go out over OTLP when the standard OTEL_*
	// environment asks for it (docs/observability.md); otherwise nothing is
	// installed and nothing is exported. A setting it cannot use turns its
	// signal off with a warning: every command still runs.
	shutdown, warnings := otelsetup.Setup(context.Background(), os.Getenv, os.Stderr)
	if warnings != nil {
		for _, w := range strings.Split(warnings.Error(), "\n") {
			fmt.Fprintln(os.Stderr, "toolselect: warning: telemetry:", w)
		}
	}
	code := run(env, os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := shutdown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "toolselect: exporting telemetry:", err)
	}
	cancel()
	os.Exit(code)
}

func run(env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(env.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "-v" {
		return runVersion(env, args[1:])
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "toolselect: unknown command %q (run \"toolselect help\")\n", args[0])
		return exitUsage
	}
	return c.run(env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: toolselect COMMAND [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"toolselect COMMAND --help\" for a command's flags.")
}

// newFlags returns a FlagSet that reports errors through the command's
// streams; parseFlags turns its outcome into an exit code.
func newFlags(env *cmdEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: toolselect %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; it returns (code, false) when the command should
// stop: 0 after --help (printed to stdout), 2 after a usage error.
func parseFlags(env *cmdEnv, fs *flag.FlagSet, args []string) (int, bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(env.stderr)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(env.stdout)
		fs.Usage()
		return exitOK, false
	}
	if err != nil {
		fmt.Fprintf(env.stderr, "toolselect %s: %v (run \"toolselect %s --help\")\n", fs.Name(), err, fs.Name())
		return exitUsage, false
	}
	return 0, true
}

// fail prints one clear error line and returns code.
func fail(env *cmdEnv, name string, code int, format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", " ")
	fmt.Fprintf(env.stderr, "toolselect %s: %s\n", name, msg)
	return code
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
