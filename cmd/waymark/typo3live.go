package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
)

// openBridge returns the client of the TYPO3 extension of --typo3-bridge
// and --typo3-bridge-secret, or nil without --typo3-bridge. It needs the
// installation (t3, from --typo3) and asks the extension once: a URL that
// does not answer, a wrong secret or an extension without one is a
// one-line error before anything is served.
func (f *flags) openBridge(ctx context.Context, t3 *live.TYPO3) (*bridge.Client, error) {
	switch {
	case f.TYPO3Bridge == "" && f.TYPO3BridgeSecret != "":
		return nil, fmt.Errorf("%w: --typo3-bridge-secret needs --typo3-bridge URL", errUsage)
	case f.TYPO3Bridge == "":
		return nil, nil
	case t3 == nil:
		return nil, fmt.Errorf("%w: --typo3-bridge needs --typo3 DSN: Waymark reads the installation it writes to through the extension", errUsage)
	case f.TYPO3BridgeSecret == "":
		return nil, fmt.Errorf("%w: --typo3-bridge needs the shared secret: WAYMARK_TYPO3_BRIDGE_SECRET (or --typo3-bridge-secret)", errUsage)
	}
	c, err := bridge.NewClient(f.TYPO3Bridge, f.TYPO3BridgeSecret, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if _, err := c.Ping(ctx); err != nil {
		return nil, fmt.Errorf("typo3 bridge %s: %w", c.Base(), err)
	}
	return c, nil
}

// openTYPO3 opens the TYPO3 installation of --typo3 and --typo3-sites for
// openInstallation, or returns nil when --typo3 is not given (the
// built-in source and directory). A DSN that does not connect, missing
// tables and a site configuration that cannot be read are one-line errors,
// before anything is written. close closes the TYPO3 database.
func (f *flags) openTYPO3(ctx context.Context) (inst *live.TYPO3, close func(), err error) {
	none := func() {}
	switch {
	case f.TYPO3 == "" && f.TYPO3Sites != "":
		return nil, none, fmt.Errorf("%w: --typo3-sites needs --typo3 DSN (or WAYMARK_TYPO3)", errUsage)
	case f.TYPO3 == "":
		return nil, none, nil
	case f.TYPO3Sites == "":
		return nil, none, fmt.Errorf("%w: --typo3-sites DIR is required with --typo3: the installation's config/sites folder", errUsage)
	}
	if st, err := os.Stat(f.TYPO3Sites); err != nil || !st.IsDir() {
		return nil, none, fmt.Errorf("--typo3-sites %s: the folder does not exist", f.TYPO3Sites)
	}
	db, d, err := typo3.Open(ctx, f.TYPO3)
	if errors.Is(err, typo3.ErrBadDSN) {
		return nil, none, fmt.Errorf("%w: %w", errUsage, err)
	}
	if err != nil {
		return nil, none, err
	}
	inst, err = live.New(ctx, db, d, f.TYPO3Sites, nil)
	if err != nil {
		db.Close()
		return nil, none, fmt.Errorf("typo3 %s: %w", redactDSN(f.TYPO3), err)
	}
	return inst, func() { db.Close() }, nil
}
