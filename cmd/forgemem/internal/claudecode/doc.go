// Package claudecode connects forgemem to Claude Code through its hooks:
// the JSON a hook command reads on its standard input ([ReadHookInput]),
// the output that adds recalled memories to a prompt
// ([WritePromptContext]), the conversation window of a session read from
// its transcript within bounds ([ReadWindow]) with the reply a Stop
// payload carries ([WithLastReply]), the hooks' timeout and deadline
// ([HookTimeout], [HookDeadline]), and the installation of forgemem's
// hooks in a settings file ([Install]), which recognises them by the
// command they run ([IsHookCommand]).
//
// A transcript path comes from a payload and may name anything: the
// transcript is opened only if it is a regular file (memcore/atomicfile),
// never through a symbolic link or waiting on a FIFO, and read in bounded
// memory.
//
// The events line up with forgemem's triggers: each UserPromptSubmit is a
// retrieval, each Stop (a finished turn) a turn trigger of capture, and
// each PreCompact a compaction trigger.
package claudecode
