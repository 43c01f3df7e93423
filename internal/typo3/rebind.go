package typo3

// Rebind turns a query written with MariaDB's backquotes and ? placeholders
// into d's: for packages beside this one that read the TYPO3 database.
func (d Dialect) Rebind(q string) string { return d.rebind(q) }
