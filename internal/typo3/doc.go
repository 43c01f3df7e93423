// Package typo3 reads a TYPO3 13.4 installation the way TYPO3 itself does:
// backend users' passwords as TYPO3's password hashing stores them, the site
// configurations under config/sites, the core tables (be_users, be_groups,
// pages, tt_content, sys_history, sys_log, cache_pages, cache_pages_tags) and
// a backend user's effective rights from be_users, be_groups and the pages'
// perms_* columns.
//
// It is the groundwork of running Waymark beside a real TYPO3 site: the
// content source and user directory that later sit behind Waymark's seam read
// through this package. It also creates a demo TYPO3 database with the demo
// site "Nordlicht Digital", so the TYPO3 path can be tried and tested without
// a TYPO3 installation. Columns a real installation has beyond the ones
// named in schema.go are ignored.
package typo3
