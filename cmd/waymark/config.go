package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"waymark/internal/httpapi"
)

// flags is the flag set of one command, made from the rows of optionTable
// it takes, and the config they parse into.
type flags struct {
	*config
	cmd string // the command, with its subcommand ("skill approve")
	fs  *flag.FlagSet
	set map[string]bool // flag names (variable names for variable-only options) given on the command line or in the environment
}

// newFlags returns the flags of command cmd, each at its default, with
// errors and -h written to out.
func newFlags(cmd string, out io.Writer) *flags {
	f := &flags{config: new(config), cmd: cmd, fs: flag.NewFlagSet("waymark "+cmd, flag.ContinueOnError)}
	f.fs.SetOutput(out)
	for _, o := range optionsOf(cmd) {
		v := f.value(o)
		if o.def != "" {
			if err := v.Set(o.def); err != nil {
				panic(fmt.Sprintf("option %s: default %q: %v", o.flag, o.def, err))
			}
		}
		if o.flag != "" {
			f.fs.Var(v, o.flag, o.usage)
		}
	}
	return f
}

// value is the config field of o as a flag.Value.
func (f *flags) value(o option) fieldValue {
	v := reflect.ValueOf(f.config).Elem().FieldByName(o.field)
	if !v.IsValid() {
		panic(fmt.Sprintf("option %s: config has no field %s", o.flag, o.field))
	}
	return fieldValue{v}
}

// option is the row of optionTable of flag name for f's command.
func (f *flags) option(name string) (option, bool) {
	for _, o := range optionsOf(f.cmd) {
		if o.flag == name {
			return o, true
		}
	}
	return option{}, false
}

// given reports whether the option of flag name (or of variable name, for a
// variable-only option) was given on the command line or in the
// environment, rather than left at its default.
func (f *flags) given(name string) bool { return f.set[name] }

// Args are the arguments after the flags.
func (f *flags) Args() []string { return f.fs.Args() }

// parse parses args, then sets every option the command line left unset
// whose variable is set (an empty variable is unset): the command line
// wins. Errors are usage errors naming the flag or the variable (never a
// secret's value). -h prints every option with its variable and default.
func (f *flags) parse(args []string) error {
	out := f.fs.Output()
	f.fs.SetOutput(io.Discard)
	if err := f.fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			f.printHelp(out)
			return err
		}
		return fmt.Errorf("%w: %s", errUsage, strings.TrimSpace(err.Error()))
	}
	f.set = map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	for _, o := range optionsOf(f.cmd) {
		key := o.key()
		if f.set[key] {
			continue
		}
		v, ok := os.LookupEnv(o.envName()) // the one place the program reads its variables
		if !ok || v == "" {
			continue
		}
		if err := f.value(o).Set(v); err != nil {
			if o.secret {
				return fmt.Errorf("%w: %s: %v", errUsage, o.envName(), err)
			}
			return fmt.Errorf("%w: %s=%q: %v", errUsage, o.envName(), v, err)
		}
		f.set[key] = true
	}
	// A flag defined outside optionTable still reads WAYMARK_ and its name;
	// `waymark CMD -h` marks it, and a test fails until it has its row.
	var err error
	f.fs.VisitAll(func(fl *flag.Flag) {
		if _, ok := f.option(fl.Name); ok || f.set[fl.Name] || err != nil {
			return
		}
		name := option{flag: fl.Name}.envName()
		if v := os.Getenv(name); v != "" {
			if e := f.fs.Set(fl.Name, v); e != nil {
				err = fmt.Errorf("%w: %s=%q: %v", errUsage, name, v, e)
			}
		}
	})
	if err != nil {
		return err
	}
	logLevel.Set(f.LogLevel.l)
	return nil
}

// key is what flags.set knows o by: its flag, else its variable.
func (o option) key() string {
	if o.flag != "" {
		return o.flag
	}
	return o.envName()
}

// printHelp writes every flag of the set with its variable and default,
// then the variable-only options.
func (f *flags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: %s [flags]\n", f.fs.Name())
	f.fs.VisitAll(func(fl *flag.Flag) {
		if o, ok := f.option(fl.Name); ok {
			fmt.Fprint(w, o.help())
			return
		}
		fmt.Fprintf(w, "  --%s\n      %s\n      env %s; not in the option table\n", fl.Name, fl.Usage, option{flag: fl.Name}.envName())
	})
	for _, o := range optionsOf(f.cmd) {
		if o.flag == "" {
			fmt.Fprint(w, o.help())
		}
	}
}

// help is o as `waymark CMD -h` prints it.
func (o option) help() string {
	var b strings.Builder
	if o.flag == "" {
		fmt.Fprintf(&b, "  env %s (a variable only, secret)\n      %s\n", o.envName(), o.usage)
		return b.String()
	}
	fmt.Fprintf(&b, "  --%s", o.flag)
	if a := o.argName(); a != "" {
		fmt.Fprintf(&b, " %s", a)
	}
	fmt.Fprintf(&b, "\n      %s\n      env %s", o.usage, o.envName())
	if d := o.shownDefault(); d != "" {
		fmt.Fprintf(&b, ", default %q", d)
	}
	if o.secret {
		b.WriteString(", secret")
	}
	b.WriteString("\n")
	return b.String()
}

// argName is the name of o's value in help: its arg, else its type; ""
// for a switch.
func (o option) argName() string {
	if o.arg != "" {
		return o.arg
	}
	switch reflect.ValueOf(config{}).FieldByName(o.field).Interface().(type) {
	case int:
		return "int"
	case time.Duration:
		return "duration"
	case bool:
		return ""
	}
	return "string"
}

// shownDefault is o's default as help prints it: none for a secret or an
// off switch.
func (o option) shownDefault() string {
	if o.secret || o.def == "false" {
		return ""
	}
	return o.def
}

// fieldValue is a config field as a flag.Value.
type fieldValue struct{ v reflect.Value }

func (f fieldValue) String() string {
	if !f.v.IsValid() { // the zero Value flag.isZeroValue makes
		return ""
	}
	switch p := f.v.Addr().Interface().(type) {
	case flag.Value:
		return p.String()
	case *time.Duration:
		return p.String()
	}
	return fmt.Sprint(f.v.Interface())
}

func (f fieldValue) Set(s string) error {
	switch p := f.v.Addr().Interface().(type) {
	case flag.Value:
		return p.Set(s)
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("want a whole number")
		}
		*p = n
	case *bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		*p = b
	case *time.Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("want a duration such as 30s or 2h")
		}
		*p = d
	default:
		panic(fmt.Sprintf("config field of type %s has no parser", f.v.Type()))
	}
	return nil
}

// IsBoolFlag lets a switch stand alone (--model-stream).
func (f fieldValue) IsBoolFlag() bool { return f.v.IsValid() && f.v.Kind() == reflect.Bool }

// level is --log-level.
type level struct{ l slog.Level }

func (l *level) String() string { return strings.ToLower(l.l.String()) }

func (l *level) Set(s string) error {
	if err := l.l.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("want debug, info, warn or error")
	}
	return nil
}

// logLevel is the level of every logger of the process (--log-level).
var logLevel = new(slog.LevelVar)

// prefixes is a comma-separated list of CIDR prefixes or addresses
// (--trusted-proxies); an address is its one-address prefix.
type prefixes []netip.Prefix

func (p *prefixes) String() string {
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *prefixes) Set(v string) error {
	nets, err := httpapi.ParseTrustedProxies(v)
	if err != nil {
		return err
	}
	*p = nets
	return nil
}

// LogValue is every option of the command with its value, a secret's as
// "[set]" or "" — what a log may show of the configuration.
func (f *flags) LogValue() slog.Value {
	var attrs []slog.Attr
	for _, o := range optionsOf(f.cmd) {
		v := f.value(o).String()
		if o.secret && v != "" {
			v = "[set]"
		}
		attrs = append(attrs, slog.String(o.key(), v))
	}
	return slog.GroupValue(attrs...)
}
