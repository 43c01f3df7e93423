package main

import (
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
)

// cmdUser is "waymark user disable|enable USERNAME": the CLI twin of
// PUT /api/admin/users/{uid} with active false or true. Disabling ends the
// user's sessions; their tokens are refused until the user is enabled again.
// Beside TYPO3 (--typo3) the users are TYPO3's, and it is refused as the
// HTTP administration refuses it (409 managed_elsewhere), changing nothing.
func cmdUser(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || (args[0] != "disable" && args[0] != "enable") {
		return fmt.Errorf("%w: want user disable|enable [--db URL] USERNAME", errUsage)
	}
	action := args[0]
	f := newFlags("user "+action, e.stderr)
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	if len(f.Args()) != 1 {
		return fmt.Errorf("%w: want exactly one USERNAME", errUsage)
	}
	in, err := f.openInstallation(ctx)
	if err != nil {
		return err
	}
	defer in.Close()
	db := in.DB
	if access.External(in.Directory) {
		return errManagedElsewhere(action)
	}
	u, err := in.Directory.LoadUserByName(ctx, db, f.Args()[0])
	if errors.Is(err, access.ErrNoUser) {
		return fmt.Errorf("no user %q", f.Args()[0])
	}
	if err != nil {
		return err
	}
	active := action == "enable"
	_, err = access.SetActive(ctx, in.Source, in.Directory, db, u.UID, active)
	if errors.Is(err, access.ErrManagedElsewhere) {
		return errManagedElsewhere(action)
	}
	if errors.Is(err, access.ErrLastAdmin) {
		return fmt.Errorf("user %q is the last active administrator; make another user administrator first", u.Username)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "user %s %sd\n", u.Username, action)
	return nil
}

// errManagedElsewhere is the refusal of a user command beside TYPO3.
func errManagedElsewhere(action string) error {
	return fmt.Errorf("users are administered in TYPO3 (--typo3): %s them in TYPO3's backend; nothing was changed", action)
}
