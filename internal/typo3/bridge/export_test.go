package bridge

// TYPO3Words is typo3Words for the tests.
var TYPO3Words = typo3Words
