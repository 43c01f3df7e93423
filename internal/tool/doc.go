// Package tool owns the tools the model may call: the Registry (name,
// description, JSON-Schema arguments validated before execution, effect,
// group and the global enabled state stored in tool_settings) and the builtin
// tools of API.md §4 — read_page, read_record, update_page_metadata,
// update_content, choose, and the process tools set_progress and
// highlight_record (ADR-228 item 10; highlight_record ships disabled).
//
// A tool answers the model with a JSON object. Bad arguments, a disabled tool,
// a record the acting user may not see or a refused write are error results
// ({"error": "…"}) shown to the model; Go errors are reserved for
// infrastructure faults such as a dead database. Write tools are approval-bound:
// they name their Target and build a structured Preview (field, label, current,
// proposed, length measure) that the approver sees before the write runs, and
// their result carries a WriteStep with the completeness and
// hookFailedAfterWrite of DESIGN.md §4 (WriteCompleteness), recorded as a
// tool_write event naming table, uid and fields — never values.
package tool
