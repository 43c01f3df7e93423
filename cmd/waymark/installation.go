package main

import (
	"context"

	"waymark/internal/access"
	"waymark/internal/app"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/typo3/bridge"
	"waymark/internal/typo3/live"
)

// installationCmds are the commands that read the installation's users,
// rights, pages or content (or build the application, which does): each
// opens it with openInstallation and takes the TYPO3 options, so every
// process of an installation reads the same users and pages.
const installationCmds = "serve worker import token reap skill user mcp"

// installation is an installation as a command opened it: Waymark's
// database and, beside TYPO3, the TYPO3 installation its users, groups,
// rights, pages, content and languages are read from, and the TYPO3
// extension approved changes are written through.
type installation struct {
	DB *store.DB
	// Source and Directory are where the installation's records and users
	// are read from: TYPO3 beside it, else the built-in ones. A command
	// that reads them without an application reads these; one that builds
	// an application hands them to it (appConfig's TYPO3), so both read
	// the same.
	Source    content.Source
	Directory access.Directory
	TYPO3     *live.TYPO3    // nil: Waymark's built-in source and directory
	Bridge    *bridge.Client // nil: no --typo3-bridge
	close     func()
}

// openInstallation opens the installation of --db and the TYPO3 options
// (--typo3, --typo3-sites, --typo3-bridge, --typo3-bridge-secret; a
// command that does not take them runs on the built-in source). It is the
// one way a command reaches users and content: beside TYPO3, the
// installation's Source and Directory are TYPO3, and every read of the
// command goes to them, whether it builds an application or not. Bad TYPO3 options, an installation that cannot be
// read and an extension that does not answer are one-line errors before
// Waymark's database is opened (or created). Close undoes it all.
func (f *flags) openInstallation(ctx context.Context) (*installation, error) {
	t3, closeT3, err := f.openTYPO3(ctx)
	if err != nil {
		return nil, err
	}
	b, err := f.openBridge(ctx, t3)
	if err != nil {
		closeT3()
		return nil, err
	}
	db, err := f.openDB(ctx, f.DB)
	if err != nil {
		closeT3()
		return nil, err
	}
	in := &installation{DB: db, Source: content.Builtin{}, Directory: access.BuiltinDirectory{}, TYPO3: t3, Bridge: b,
		close: func() {
			db.Close()
			closeT3()
		}}
	if t3 != nil {
		in.Source, in.Directory = t3, t3
	}
	return in, nil
}

// Close closes Waymark's database and the TYPO3 one.
func (in *installation) Close() { in.close() }

// appConfig is the app.Config of in with what every command's
// application takes from the options (the secret key, the skills folder);
// the command adds its own (workers, lease, HTTP).
func (f *flags) appConfig(e *env, in *installation) *app.Config {
	return &app.Config{DataDir: dataDir(f.DataDir, f.DB), SecretKey: f.SecretKey, SkillsRoot: f.SkillsRoot,
		Logger: e.log, Version: version, TYPO3: in.TYPO3, Bridge: in.Bridge, MCPFormWait: f.MCPFormWait, MCPFormProgress: f.MCPFormProgress}
}
