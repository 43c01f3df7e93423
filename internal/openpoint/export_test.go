package openpoint

// The fixture of the internal tests, for the tests of package
// openpoint_test (which import package tool, and tool imports this one).
var (
	OpSetup   = opSetup
	OpRecord  = opRecord
	OpRows    = opRows
	OpExec    = opExec
	Idents    = idents
	BenchSite = benchSite
)

// Users, pages and skills of the fixture.
const (
	OpHome    = opHome
	OpAbout   = opAbout
	OpWelcome = opWelcome
	OpSEO     = opSEO
	OpAlt     = opAlt
	OpErika   = opErika
)
