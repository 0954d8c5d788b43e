// Package claudecode connects forgemem to Claude Code through its hooks:
// the JSON a hook command reads on its standard input ([ReadHookInput]),
// the output that adds recalled memories to a prompt
// ([WritePromptContext]), the conversation window of a session read from
// its transcript ([ReadWindow]), and the installation of forgemem's hooks
// in a settings.json ([Install]).
//
// The events line up with forgemem's triggers: each UserPromptSubmit is a
// retrieval, each Stop (a finished turn) a turn trigger of capture, and
// each PreCompact a compaction trigger.
package claudecode
