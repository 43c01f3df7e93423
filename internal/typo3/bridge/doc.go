// Package bridge is Waymark's side of the TYPO3 extension
// (integrations/typo3, docs/typo3-bridge.md): what TYPO3 decides in PHP,
// Waymark asks TYPO3 for instead of imitating it.
//
// A Client sends signed requests to the extension (HMAC-SHA256 over method,
// path, time, nonce and body with the shared secret): whether a TYPO3
// backend session is still active, where a user's write would land (live or
// a draft workspace), and the write itself, which the extension applies
// through DataHandler as the editor, at most once per key. ParseTicket
// verifies the short-lived, single-use tickets with which the extension
// sends a backend user signed in to TYPO3 to Waymark. RecordWriter is the
// content.RecordWriter that writes approved cards through the extension.
package bridge
