package waymarktest

// Site is a small standard fixture: an admin, two editors (erika initiates,
// otto has no grants), paula with the approve grant, a service account, a
// page tree, content, and two configurations on the scripted server — "chat"
// (uid 1) and "four-eyes" (uid 2, requireSecondApprover).
const Site = `
languages:
  - {uid: 0, title: English, locale: en}
  - {uid: 1, title: Deutsch, locale: de}
groups:
  - {uid: 1, title: Editors, tablesSelect: [pages, tt_content], tablesModify: [pages, tt_content],
     nonExcludeFields: ["pages:description", "pages:seoTitle", "pages:keywords"], languages: [0, 1], mounts: [1], subgroups: []}
users:
  - {uid: 1, username: admin, token: token-admin-0001, admin: true, backendLanguage: en}
  - {uid: 2, username: erika, token: token-erika-0002, groups: [1], backendLanguage: de}
  - {uid: 3, username: paula, token: token-paula-0003, groups: [1], grants: [approve], backendLanguage: en}
  - {uid: 4, username: otto, token: token-otto-00004, groups: [1], backendLanguage: en}
  - {uid: 5, username: robot, token: token-robot-0005, groups: [1], serviceAccount: true}
pages:
  - {uid: 1, pid: 0, title: Home, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ""}}
  - {uid: 2, pid: 1, title: About, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: "Short."}}
  - {uid: 11, pid: 0, title: Startseite, language: 1, l10nParent: 1, owner: 2, group: 1, perms: {user: 31, group: 27, everybody: 0}, fields: {description: ""}}
records:
  - {table: tt_content, uid: 100, pid: 1, language: 0, fields: {CType: text, header: Welcome, bodytext: "Hello there"}}
  - {table: tt_content, uid: 101, pid: 1, language: 1, l10nParent: 100, fields: {CType: text, header: Willkommen, bodytext: "Hallo"}}
  - {table: tt_content, uid: 102, pid: 1, language: -1, fields: {CType: image, header: Office}}
configurations:
  - {uid: 1, identifier: chat, name: Chat, active: true, groups: [1],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: false, privacy: metadata}
  - {uid: 2, identifier: four-eyes, name: Four eyes, active: true, groups: [1],
     provider: {type: openai, baseUrl: "{{LLM}}", apiKey: sk-scenario-secret, model: m},
     contextWindow: 32000, maxOutputTokens: 1000, requireSecondApprover: true, privacy: metadata}
`

// Tokens of the users of Site.
const (
	Admin = "token-admin-0001"
	Erika = "token-erika-0002"
	Paula = "token-paula-0003"
	Otto  = "token-otto-00004"
	Robot = "token-robot-0005"
)
