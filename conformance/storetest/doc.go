// Package storetest is the conformance suite for implementations of
// memcore.MemoryStore. A store plug-in author runs it from a test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(ctx context.Context, t *testing.T) (storetest.Harness, error) {
//			return newMyHarness(t)
//		}, storetest.Config{})
//	}
//
// Each rule is a subtest named after it; a failure says which rule broke and
// how. The harness opens stores over one storage, so the suite can check
// that what one store wrote is seen by a store opened later. A store that
// cannot meet a rule declares it in [Capabilities] with the reason, and the
// subtest is skipped saying so; anything else that misbehaves fails.
//
// A [Config] changes how hard the suite pushes (Writers, PerWriter,
// LargeBody); a zero field means its default, so Config{} is
// [DefaultConfig]. A field out of range makes [Run] fail the test at once,
// naming every such field and the values it accepts, and no rule runs.
//
// memcore.FileStore and memcore.MemStore pass the suite; see this module's
// tests.
package storetest
