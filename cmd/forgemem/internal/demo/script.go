package demo

import (
	"time"

	"github.com/forgemem/forgemem/memcore"
)

// A session is one scripted agent session: a fresh agent process with its
// own conversation.
type session struct {
	// title says what the session shows.
	title string
	// after is when the session happens, counted from the first one's start.
	after time.Duration
	// id is the agent's session id, recorded in the memories it writes.
	id    string
	turns []turn
}

// A turn is one exchange: the user's message and the assistant's reply.
type turn struct {
	user      string
	assistant string
	// remember is what the scripted classifier keeps once this turn's user
	// message is in the conversation it is shown.
	remember []memorySpec
}

// memorySpec is one memory the scripted classifier answers with, in the
// classifier's reply format.
type memorySpec struct {
	scope    memcore.Scope
	category memcore.Category
	// content is the memory's text; its first line stands on its own, as
	// the classifier's instructions ask.
	content string
	// supersedes, when set, is a phrase the classifier looks for in the
	// lists of existing memories of its prompt, among memories of the same
	// scope and category: the one whose line holds it is superseded.
	supersedes string
}

// The strings the tests look for: the tool output of session 1, which must
// never reach a classifier or a memory, and the API key the user pastes,
// which must never reach disk.
const (
	toolOutput = "ok example.com/orders/internal/httpx 0.412s coverage: 91.3% of statements"
	pastedKey  = "sk-proj-Xc7dQ2mT9vLp4RzK8wYbN3hF6sJa1Ge0"
)

// script is the demo's four sessions, oldest first.
var script = []session{
	{
		title: "preferences and a correction",
		id:    "demo-1",
		turns: []turn{
			{
				user: "Let's add a retry helper to internal/httpx. Write the tests table-driven, " +
					"with t.Run subtests: that's how I want tests in every project.",
				assistant: "<tool_call>go test ./internal/httpx/...</tool_call>\n" +
					"<tool_result>" + toolOutput + "</tool_result>\n" +
					"Added httpx.Retry with exponential backoff, and TestRetry as one table of cases " +
					"run with t.Run. Each attempt runs in its own goroutine and prints its outcome " +
					"with fmt.Println.",
				remember: []memorySpec{{
					scope:    memcore.ScopeUser,
					category: memcore.CategoryCodingPreferences,
					content:  "Wants tests table-driven, each case run as a t.Run subtest, in every project.",
				}},
			},
			{
				user: "Two things. Those goroutines have no lifecycle: nothing cancels or waits for " +
					"them, so they leak when the caller gives up. And no fmt.Println in library " +
					"code: I want structured logging with zerolog, through a logger that is passed in.",
				assistant: "You're right. Attempts now run in the caller's goroutine and stop when ctx " +
					"is done, and Retry logs through an injected zerolog.Logger with attempt and " +
					"delay fields.",
				remember: []memorySpec{
					{
						scope:    memcore.ScopeUser,
						category: memcore.CategoryCodingPreferences,
						content: "Library code logs with zerolog: structured fields, through a logger " +
							"passed in.\nNever fmt.Println in library code.",
					},
					{
						scope:    memcore.ScopeUser,
						category: memcore.CategoryCorrections,
						content: "Was corrected for spawning goroutines without lifecycle management " +
							"(they leaked).\nEvery goroutine must stop when its context is done and be " +
							"waited for.",
					},
				},
			},
			{
				user: "Good. The integration test needs the staging key, here it is: " + pastedKey +
					". Read it from STAGING_API_KEY, and never commit it.",
				assistant: "TestRetryStaging now reads STAGING_API_KEY and is skipped when it is unset; " +
					"the key is not in the repository.",
				// The classifier never sees the key (capture redacts the
				// conversation before it is sent), but a model can still
				// write a secret; this scripted one writes the key anyway,
				// to show that capture redacts whatever the model returns.
				remember: []memorySpec{{
					scope:    memcore.ScopeRepo,
					category: memcore.CategoryProjectConventions,
					content: "Integration tests read the staging API key from STAGING_API_KEY and skip " +
						"when it is unset.\nThe key (" + pastedKey + ") must never be committed.",
				}},
			},
		},
	},
	{
		title: "a decision and its reason",
		after: 2*24*time.Hour + 5*time.Hour + 18*time.Minute,
		id:    "demo-2",
		turns: []turn{
			{
				user: "Profile edits time out when two requests update the same user. UpdateUser " +
					"takes SELECT … FOR UPDATE on the users row.",
				assistant: "The row lock is held across the address-validation call, so concurrent " +
					"updates queue behind it until they time out. We can shorten the transaction, " +
					"or switch to optimistic locking: a version column, compare-and-swap, retry on " +
					"conflict.",
			},
			{
				user: "Go optimistic: add a version column to users and retry up to 3 times on " +
					"conflict. The pessimistic locks are what caused these timeouts. The migration " +
					"goes in db/migrations, numbered, one file per change, like the others.",
				assistant: "Added db/migrations/0042_users_version.sql, and UpdateUser now does a " +
					"compare-and-swap on version, retrying up to 3 times with jitter. The tests are " +
					"a t.Run table covering a conflict and giving up.",
				remember: []memorySpec{
					{
						scope:    memcore.ScopeRepo,
						category: memcore.CategoryArchitecturalDecisions,
						content: "User updates use optimistic locking: a version column, " +
							"compare-and-swap, up to 3 retries.\nChosen because pessimistic row locks " +
							"(SELECT … FOR UPDATE) made profile edits time out.",
					},
					{
						scope:    memcore.ScopeRepo,
						category: memcore.CategoryProjectConventions,
						content:  "Database migrations live in db/migrations: numbered, one file per change.",
					},
				},
			},
		},
	},
	{
		title: "the decision changes",
		after: 9*24*time.Hour + 53*time.Minute,
		id:    "demo-3",
		turns: []turn{
			{
				user: "Incident review: a charge and a refund on the same account both hit a version " +
					"conflict and retried, and a customer was charged twice. Optimistic retries " +
					"can't be used for payments.",
				assistant: "My notes say user updates use optimistic locking with retries, chosen " +
					"because row locks caused timeouts. A retried payment write can repeat its side " +
					"effect, so for payments I'd go back to SELECT … FOR UPDATE with a short lock " +
					"timeout.",
			},
			{
				user: "Agreed. Keep optimistic locking for profile updates, but anything that " +
					"touches a balance takes the row lock, with a 2s lock_timeout.",
				assistant: "Done: payments.Apply locks the account row with SELECT … FOR UPDATE under " +
					"SET LOCAL lock_timeout = '2s'; UpdateUser is unchanged.",
				remember: []memorySpec{{
					scope:      memcore.ScopeRepo,
					category:   memcore.CategoryArchitecturalDecisions,
					supersedes: "optimistic locking",
					content: "Optimistic locking with retry is now for user profile updates only; balances " +
						"take the row lock.\nPayments use SELECT … FOR UPDATE, lock_timeout 2s: optimistic " +
						"retries charged a customer twice.",
				}},
			},
		},
	},
	{
		title: "the memories at work",
		after: 15*24*time.Hour + 7*time.Hour + 28*time.Minute,
		id:    "demo-4",
		turns: []turn{
			{
				user: "New endpoint: a transfer that debits one balance and credits another. Should " +
					"it use optimistic locking or take the row locks? Can the two legs run in " +
					"parallel goroutines, each with its own context? And add the tests.",
				assistant: "My notes say balances take the row lock: optimistic retries once charged " +
					"a customer twice. So Transfer locks both account rows with SELECT … FOR UPDATE, " +
					"in id order to avoid deadlocks, in one transaction with lock_timeout 2s. The " +
					"legs stay in that transaction, not in goroutines that nothing waits for. The " +
					"tests will be one t.Run table.",
			},
		},
	},
}
