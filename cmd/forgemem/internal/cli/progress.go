package cli

import (
	"io"

	"github.com/schollz/progressbar/v3"
)

// progressMin is how many memories a build must embed for a progress bar
// to be worth showing.
const progressMin = 20

// progress shows on a terminal how far an index build that embeds many
// memories (a first run, a new embedding model) has got. It is only made
// when stderr is a terminal; its update is the engine's build-progress
// callback, which is never called concurrently with itself.
type progress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

// update draws done of total; (0, total) starts a bar, and the bar is
// cleared when done reaches total.
func (p *progress) update(done, total int) {
	if total < progressMin {
		return
	}
	if done == 0 || p.bar == nil {
		if p.bar != nil {
			_ = p.bar.Exit()
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription("embedding memories"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetRenderBlankState(true),
		)
	}
	_ = p.bar.Set(done)
	if done >= total {
		_ = p.bar.Finish()
		p.bar = nil
	}
}
