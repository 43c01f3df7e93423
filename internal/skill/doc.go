// Package skill owns skills: SKILL.md texts with a YAML front matter that
// instruct the model, their sources and trust levels, the version digest that
// names one exact version, approvals as snapshots of a digest, revocations,
// the audit trail, attachments to configurations, the catalogue per actor,
// composition of instruction sections from approval snapshots, the tool
// allow-list of a run, and pins (ADR-214 items 1–6 as summarised in
// shared/reference/nr-llm-runtime.md §5 and §7).
//
// A skill version instructs the model only when its source's current trust
// level is at or above the instruction threshold and an unrevoked approval
// exists for its current digest and source; anything else admitted is
// composed as fenced reference data.
package skill
