package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/skill"
)

// skillArgs is the usage line of the skill command.
const skillArgs = "sync|list|approve|revoke [--db URL] …"

// cmdSkill dispatches the skill subcommands:
//
//	waymark skill sync    [--db URL] SOURCE_UID
//	waymark skill list    [--db URL]
//	waymark skill approve [--db URL] --as USERNAME UID DIGEST
//	waymark skill revoke  [--db URL] --as USERNAME UID DIGEST
func cmdSkill(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: want a subcommand: sync, list, approve or revoke", errUsage)
	}
	sub, args := args[0], args[1:]
	f := newFlags("skill "+sub, e.stderr)
	want := map[string]int{"sync": 1, "list": 0, "approve": 2, "revoke": 2}
	n, ok := want[sub]
	if !ok {
		return fmt.Errorf("%w: unknown subcommand %q: want sync, list, approve or revoke", errUsage, sub)
	}
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) != n {
		return fmt.Errorf("%w: skill %s takes %d argument(s), got %d", errUsage, sub, n, len(f.Args()))
	}
	var uid int64
	if n > 0 {
		var err error
		if uid, err = strconv.ParseInt(f.Args()[0], 10, 64); err != nil || uid <= 0 {
			return fmt.Errorf("%w: %q is not a uid", errUsage, f.Args()[0])
		}
	}
	if (sub == "approve" || sub == "revoke") != (f.As != "") {
		return fmt.Errorf("%w: --as USERNAME is for approve and revoke, and they need it", errUsage)
	}
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	a, err := app.New(ctx, db, f.appConfig(e, in))
	if err != nil {
		return err
	}
	switch sub {
	case "sync":
		rep, err := a.Skills.Sync(ctx, uid)
		if err != nil {
			return err
		}
		printSyncReport(e.stdout, rep)
		return nil
	case "list":
		return listSkills(ctx, e.stdout, a.Skills)
	}
	// Beside TYPO3, --as names a TYPO3 user (an administrator, or one
	// holding the grant), read from TYPO3 as a login would.
	actor, err := a.Directory.LoadUserByName(ctx, db, f.As)
	if errors.Is(err, access.ErrNoUser) {
		return fmt.Errorf("no user %q", f.As)
	}
	if err != nil {
		return err
	}
	digest := f.Args()[1]
	if sub == "approve" {
		ap, err := a.Skills.Approve(ctx, actor.UID, uid, digest)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "approved skill %d digest %s as %s (trust %s)\n", uid, ap.Digest, actor.Username, ap.Trust)
		return nil
	}
	if err := a.Skills.Revoke(ctx, actor.UID, uid, digest); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked skill %d digest %s as %s\n", uid, digest, actor.Username)
	return nil
}

// printSyncReport writes one summary line, then a line per non-empty list.
func printSyncReport(w io.Writer, rep skill.SyncReport) {
	lists := []struct {
		name string
		ids  []string
	}{{"added", rep.Added}, {"changed", rep.Changed}, {"disabled", rep.Disabled}, {"orphaned", rep.Orphaned},
		{"restored", rep.Restored}, {"unchanged", rep.Unchanged}}
	counts := make([]string, len(lists))
	for i, l := range lists {
		counts[i] = fmt.Sprintf("%s %d", l.name, len(l.ids))
	}
	fmt.Fprintf(w, "synced source %d: %s\n", rep.Source, strings.Join(counts, ", "))
	for _, l := range lists {
		if len(l.ids) > 0 {
			fmt.Fprintf(w, "  %s: %s\n", l.name, strings.Join(l.ids, ", "))
		}
	}
}

// listSkills writes a table of every skill.
func listSkills(ctx context.Context, out io.Writer, st *skill.Store) error {
	ks, err := st.List(ctx, 0)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "UID\tSOURCE\tIDENTIFIER\tSTATE\tINSTRUCTS\tDIGEST\tNAME")
	for _, k := range ks {
		instructs, _, err := st.Instructs(ctx, k.UID)
		if err != nil {
			return err
		}
		state := "disabled"
		switch {
		case k.Orphaned:
			state = "orphaned"
		case k.Enabled:
			state = "enabled"
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%t\t%s\t%s\n", k.UID, k.Source, k.Identifier, state, instructs, k.Digest(), k.Version.Name)
	}
	return w.Flush()
}
