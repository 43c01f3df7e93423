package app

import (
	"errors"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/typo3"
	"waymark/internal/typo3/bridge"
)

// validate refuses the combinations of the installation's seams that
// cannot work together.
func (cfg Config) validate() error {
	if cfg.Bridge != nil && cfg.TYPO3 == nil {
		return errors.New("app.New: Bridge needs TYPO3: the TYPO3 extension writes into the installation Waymark reads")
	}
	if cfg.Test.TYPO3Writer != nil && cfg.TYPO3 == nil {
		return errors.New("app.New: TYPO3Writer needs TYPO3: approved changes are written into TYPO3 only beside it")
	}
	if cfg.TYPO3 != nil && (cfg.Source != nil || cfg.Directory != nil) {
		return errors.New("app.New: Source and Directory are TYPO3's beside TYPO3: set TYPO3 or them, not both")
	}
	return nil
}

// recordWriter is where approved changes are written: through the TYPO3
// extension beside a bridge, into TYPO3 beside TYPO3 (cfg.Test.TYPO3Writer
// in tests), else Waymark's own content.
func recordWriter(cfg Config, db *store.DB, src content.Source, checker *access.Checker, clk clock.Clock) (content.RecordWriter, error) {
	typo3Writer := cfg.Test.TYPO3Writer
	if cfg.TYPO3 != nil && typo3Writer == nil {
		var err error
		if typo3Writer, err = cfg.TYPO3.Writer(clk.Now); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.Bridge != nil:
		w, err := bridge.NewRecordWriter(cfg.Bridge, db, src, cfg.TYPO3)
		if err != nil {
			return nil, err
		}
		return w, nil
	case typo3Writer != nil:
		return &typo3.RecordWriter{TYPO3: typo3Writer, Local: content.NewWriter(db, src, checker, clk), DB: db}, nil
	}
	return content.NewWriter(db, src, checker, clk), nil
}
