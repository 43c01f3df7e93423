package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"waymark/internal/demo"

	"waymark/internal/agent"
	"waymark/internal/httpapi"
	"waymark/internal/store"
)

// option is one option of the command line, defined once: its flag, its
// environment variable, its default, its help text, whether it is a secret
// and the commands that take it. The flag sets, `waymark help`, `waymark CMD
// -h` and the README's option list are all made from optionTable, and no
// other part of the program reads the environment (the exceptions are
// named in envExceptions).
type option struct {
	flag   string // flag name; "" for a variable only (a secret kept out of the process list)
	env    string // "" is WAYMARK_ + flag in capitals with "-" as "_"
	def    string // the default as typed on the command line; "" is none
	arg    string // the value's name in help; "" is its type (string, int, duration)
	field  string // the config field the value is parsed into
	cmds   string // the commands that take it, separated by spaces; "*" is every one
	secret bool   // never printed: no default in help, no value in an error or a log
	usage  string
}

// The commands that open the installation's database with --db.
const dbCmds = "serve worker import migrate purge reap token user skill backup restore mcp"

// The commands that open the application and so need its secret key.
const keyCmds = "serve worker import reap skill demo backup restore mcp"

// optionTable is every option of every command. A flag name may have one
// row per group of commands (bench's --db is not serve's); a command takes
// each flag once (TestOptionTableHasOneRowPerFlagAndCommand).
var optionTable = []option{
	{flag: "log-level", def: "info", arg: "LEVEL", field: "LogLevel", cmds: "*", usage: "log level: debug, info, warn or error"},
	{flag: "db", def: store.DefaultURL, field: "DB", cmds: dbCmds, usage: "database: sqlite:PATH or postgres://…"},
	{flag: "db", field: "DB", cmds: "demo", usage: "database: sqlite:PATH, postgres://… or a plain SQLite file path (default: a new temporary file); one that has users is served as it is"},
	{flag: "db", env: "WAYMARK_BENCH_DB", field: "DB", cmds: "bench", usage: "database to run on, never WAYMARK_DB: an empty one or one an earlier bench made, any other is refused (default: a new temporary SQLite file)"},
	{flag: "store-no-fast-paths", def: "false", field: "StoreNoFastPaths", cmds: dbCmds + " demo", usage: "turn the store's speed mechanisms off (statement caches, SQLite's own transactions, read snapshots, the settings cache, background checkpoints): same answers, slower; to rule them out when chasing a bug"},
	{flag: "addr", def: "127.0.0.1:8080", field: "Addr", cmds: "serve demo", usage: "listen address"},
	{flag: "workers", def: "2", field: "Workers", cmds: "serve worker mcp", usage: "queue workers: runs worked at once (serve: 0 runs none in this process, for separate waymark worker processes)"},
	{flag: "chat-workers", def: "0", field: "ChatWorkers", cmds: "serve worker mcp", usage: fmt.Sprintf("chat jobs (turns, decisions) worked at once; they wait on the model most of the time (0: %d × --workers)", chatWorkersPerWorker)},
	{flag: "data-dir", field: "DataDir", cmds: keyCmds, usage: "folder of the secret key file secret.key (default: the SQLite file's folder; on PostgreSQL this or WAYMARK_SECRET_KEY is required)"},
	{env: "WAYMARK_SECRET_KEY", field: "SecretKey", cmds: keyCmds, secret: true, usage: "the secret key that seals provider API keys, 32 bytes as hex or base64 (wins over the file in --data-dir); the same in every process of an installation"},
	{flag: "skills-root", field: "SkillsRoot", cmds: "serve worker import reap skill", usage: "folder every directory skill source must lie in (none: directory sources are refused)"},
	{flag: "max-open-runs", def: strconv.Itoa(agent.DefaultMaxOpenRuns), field: "MaxOpenRuns", cmds: "serve demo", usage: "runs one user may have queued or waiting for a decision at once"},
	{flag: "lease", def: agent.DefaultLease.String(), field: "Lease", cmds: "serve worker", usage: "run lease, renewed while a run waits on the model or a tool; a crashed process's runs are reaped about a lease later (at least 3s)"},
	{flag: "mcp-form-wait", def: "30m0s", field: "MCPFormWait", cmds: "serve demo mcp", usage: "how long an MCP elicitation form (a card asked of the user) may stay open; an answer given within it is carried out even when the client gave up on the call"},
	{flag: "mcp-form-progress", def: "15s", field: "MCPFormProgress", cmds: "serve demo mcp", usage: "how often a progress notification goes to an MCP call that asked for progress while its form is open, so clients that reset their request timeout on progress keep waiting"},
	{flag: "model-stream", def: "false", field: "ModelStream", cmds: "serve worker", usage: "ask the model for streamed replies, for a gateway that closes connections silent while a long reply is generated (a reply is used once complete either way)"},
	{flag: "demo-pages", def: strconv.Itoa(demo.DefaultBranchPages), field: "DemoPages", cmds: "demo", usage: "pages of the demo's generated guide branch below page 1000 (0 to 5000), for campaigns over many pages"},
	{flag: "demo-pace", def: "0s", field: "DemoPace", cmds: "demo", usage: "the offline model sends its replies word by word with this pause between words (0: at once): to watch streamed text and try Stop"},
	{flag: "shutdown-timeout", def: "30s", field: "ShutdownTimeout", cmds: "serve worker demo", usage: "on SIGTERM, how long running jobs and requests may take to finish before what is left is cancelled and handed to other workers at once"},
	{flag: "purge-every", def: "1h", field: "PurgeEvery", cmds: "serve worker", usage: "purge as waymark purge does (--older-than, --waiting-older-than) at start and then this often, one process of the installation at a time (0: only by hand with waymark purge; else at least 1s)"},
	{flag: "public-url", field: "PublicURL", cmds: "serve", usage: "URL users reach the server at (https://… turns --secure-cookies on)"},
	{flag: "secure-cookies", def: "false", field: "SecureCookies", cmds: "serve", usage: "mark the session cookie Secure (when neither the flag nor its variable is set: on for an https:// --public-url or with --tls-cert)"},
	{flag: "tls-cert", arg: "FILE", field: "TLSCert", cmds: "serve", usage: "PEM certificate file: serve HTTPS (with --tls-key)"},
	{flag: "tls-key", arg: "FILE", field: "TLSKey", cmds: "serve", usage: "PEM key file of --tls-cert"},
	{flag: "max-client-conns", def: strconv.Itoa(httpapi.DefaultMaxClientConns), field: "MaxClientConns", cmds: "serve", usage: "open connections per client address; behind a proxy, raise it"},
	{flag: "trusted-proxies", arg: "CIDR,…", field: "TrustedProxies", cmds: "serve demo", usage: "addresses of reverse proxies (CIDR or IP, comma-separated) whose X-Forwarded-For / Forwarded names the client (none: the peer address is the client)"},
	{env: "WAYMARK_TOKEN", field: "Token", cmds: "mcp", secret: true, usage: "the API token of the user waymark mcp acts for (a variable only: kept out of the process list)"},
	{flag: "metrics-token", field: "MetricsToken", cmds: "serve", secret: true, usage: "bearer token GET /metrics requires (none: /metrics is public); prefer the variable to the flag"},
	{flag: "cpuprofile", arg: "FILE", field: "CPUProfile", cmds: "serve worker", usage: "write a CPU profile of this process to FILE when it stops, and its heap profile to FILE.heap (go tool pprof)"},
	{flag: "older-than", def: "720h", field: "OlderThan", cmds: "purge serve worker", usage: "delete finished runs (and their events) finished longer ago"},
	{flag: "waiting-older-than", def: "2160h", field: "WaitingOlderThan", cmds: "purge serve worker", usage: "delete runs waiting for a decision untouched this long"},
	{flag: "to", env: "WAYMARK_MIGRATE_TO", arg: "VERSION", field: "MigrateTo", cmds: "migrate", usage: "bring the schema to this version, down as well as up (one of the versions --status lists); run it with the newer binary before starting an older one"},
	{flag: "status", env: "WAYMARK_MIGRATE_STATUS", def: "false", field: "MigrateStatus", cmds: "migrate", usage: "list every migration with its version, name and whether it is applied, and the newest version this waymark knows; applies nothing"},
	{flag: "to", env: "WAYMARK_BACKUP_TO", arg: "FILE", field: "BackupTo", cmds: "backup", usage: "the archive file to write (a .tar.gz holding the database copy, secret.key and manifest.json); must not exist"},
	{flag: "from", env: "WAYMARK_RESTORE_FROM", arg: "FILE", field: "RestoreFrom", cmds: "restore", usage: "the archive file waymark backup wrote"},
	{flag: "label", def: "cli", field: "Label", cmds: "token", usage: "a label stored with the token"},
	{flag: "typo3", arg: "DSN", field: "TYPO3", cmds: "typo3 " + installationCmds, secret: true, usage: "the TYPO3 database: mysql://user:password@host:port/database or postgres://…; it carries a password, so prefer the variable to the flag (users, rights, pages, content and languages come from it, read live; give every command of the installation the same TYPO3 options)"},
	{flag: "typo3-sites", arg: "DIR", field: "TYPO3Sites", cmds: "typo3 " + installationCmds, usage: "the TYPO3 installation's config/sites folder, its site configurations (demo: where it writes them); required with --typo3"},
	{flag: "typo3-bridge", arg: "URL", field: "TYPO3Bridge", cmds: "typo3 " + installationCmds, usage: "TYPO3's base URL where the Waymark TYPO3 extension answers (integrations/typo3): approved changes are written through TYPO3's DataHandler as the editor, in her workspace, and editors open Waymark from the TYPO3 backend; needs --typo3 and the secret"},
	{flag: "typo3-bridge-secret", arg: "SECRET", field: "TYPO3BridgeSecret", cmds: "typo3 " + installationCmds, secret: true, usage: "the secret shared with the TYPO3 extension (its WAYMARK_BRIDGE_SECRET or extension configuration), at least 32 characters; prefer the variable to the flag"},
	{flag: "typo3-password-login", def: "false", field: "TYPO3PasswordLogin", cmds: "serve", usage: "beside the TYPO3 bridge, also let TYPO3 users log in with their password (off: they open Waymark from the TYPO3 backend, second factor included); a user with an active second factor is always refused"},
	{flag: "as", field: "As", cmds: "skill", usage: "the user who approves or revokes (approve, revoke)"},
	{flag: "typo3", env: "WAYMARK_BENCH_TYPO3", arg: "DSN", field: "TYPO3", cmds: "bench", secret: true, usage: "also run beside TYPO3 and print both figures side by side: an EMPTY TYPO3 database (mysql://… or postgres://…, never WAYMARK_TYPO3), where the bench creates its site as TYPO3 rows; one with any table is refused"},
	{flag: "typo3-sites", env: "WAYMARK_BENCH_TYPO3_SITES", arg: "DIR", field: "TYPO3Sites", cmds: "bench", usage: "an empty or new folder the bench writes its TYPO3 site configuration to (default: a temporary one)"},
	{flag: "data-dir", env: "WAYMARK_BENCH_DATA_DIR", field: "DataDir", cmds: "bench", usage: "folder of a secret key file for --db (default: a new key per new database, kept in the database the bench makes for a later run)"},
	{flag: "worker-processes", env: "WAYMARK_BENCH_WORKER_PROCESSES", def: "0", field: "WorkerProcesses", cmds: "bench", usage: "waymark worker processes to start (0: workers inside the server; SQLite allows 1)"},
	{flag: "conversations", env: "WAYMARK_BENCH_CONVERSATIONS", def: "8", field: "Conversations", cmds: "bench", usage: "guided conversations at once, one editor and page each"},
	{flag: "duration", env: "WAYMARK_BENCH_DURATION", def: "20s", field: "Duration", cmds: "bench", usage: "how long new tours are started"},
	{flag: "cpuprofile", env: "WAYMARK_BENCH_CPUPROFILE", arg: "FILE", field: "CPUProfile", cmds: "bench", usage: "write a CPU profile of the server child to FILE, and its heap profile to FILE.heap (go tool pprof)"},
}

// envExceptions are the variables the program reads outside optionTable,
// and why; TestNoEnvironmentReadOutsideTheOptionTable allows only these.
var envExceptions = map[string]string{
	"OTEL_*": "the OpenTelemetry standard's variables, read by its SDK (internal/tracing decides from them whether to export at all)",
}

// config is what a command's options parse into; each option of
// optionTable names its field. Args are the arguments after the flags.
type config struct {
	LogLevel                                                     level
	DB, Addr, DataDir, SecretKey, SkillsRoot                     string
	PublicURL, TLSCert, TLSKey, MetricsToken, CPUProfile         string
	Label, As, TYPO3, TYPO3Sites, Token                          string
	TYPO3Bridge, TYPO3BridgeSecret                               string
	MigrateTo, BackupTo, RestoreFrom                             string
	Workers, ChatWorkers, MaxOpenRuns, MaxClientConns, DemoPages int
	WorkerProcesses, Conversations                               int
	Lease, ShutdownTimeout, PurgeEvery, DemoPace                 time.Duration
	OlderThan, WaitingOlderThan, Duration                        time.Duration
	MCPFormWait, MCPFormProgress                                 time.Duration
	ModelStream, SecureCookies, StoreNoFastPaths                 bool
	MigrateStatus, TYPO3PasswordLogin                            bool
	TrustedProxies                                               prefixes
}

// envName is the variable of o.
func (o option) envName() string {
	if o.env != "" {
		return o.env
	}
	return "WAYMARK_" + strings.ToUpper(strings.ReplaceAll(o.flag, "-", "_"))
}

// takes reports whether command cmd (its first word) takes o.
func (o option) takes(cmd string) bool {
	cmd, _, _ = strings.Cut(cmd, " ")
	return o.cmds == "*" || strings.Contains(" "+o.cmds+" ", " "+cmd+" ")
}

// optionsOf are the rows of optionTable command cmd takes, in table order.
func optionsOf(cmd string) []option {
	var out []option
	for _, o := range optionTable {
		if o.takes(cmd) {
			out = append(out, o)
		}
	}
	return out
}

// optionsMarkdown is optionTable as the README lists it: one row per
// option, then the variables read outside the table.
func optionsMarkdown() string {
	var b strings.Builder
	b.WriteString("| Flag | Variable | Default | Commands | What it sets |\n|---|---|---|---|---|\n")
	for _, o := range optionTable {
		flagCell := "–"
		if o.flag != "" {
			flagCell = "`--" + o.flag
			if a := o.argName(); a != "" {
				flagCell += " " + a
			}
			flagCell += "`"
		}
		def := ""
		switch d := o.shownDefault(); {
		case o.secret:
			def = "secret"
		case d != "":
			def = "`" + d + "`"
		}
		cmds := strings.ReplaceAll(o.cmds, " ", ", ")
		if o.cmds == "*" {
			cmds = "every command"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", flagCell, o.envName(), def, cmds, strings.ReplaceAll(o.usage, "|", "\\|"))
	}
	b.WriteString("\n")
	for _, k := range slices.Sorted(maps.Keys(envExceptions)) {
		fmt.Fprintf(&b, "Read outside this table: `%s`, %s.\n", k, envExceptions[k])
	}
	return b.String()
}
