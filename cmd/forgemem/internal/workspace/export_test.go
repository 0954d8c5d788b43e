package workspace

// Builds counts the index builds of the workspace's engines, for the
// tests of package workspace_test.
func (w *Workspace) Builds() int64 { return w.builds.Load() }
