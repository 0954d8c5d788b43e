package consumercheck

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWorkspaceReadsSiblingRequirements(t *testing.T) {
	root := miniWorkspace(t)
	mods, err := LoadWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []WorkModule{
		{Path: corePath, Dir: filepath.Join(root, "core"), Siblings: map[string]string{}},
		{Path: heavyPath, Dir: filepath.Join(root, "heavy"), Siblings: map[string]string{corePath: "v0.3.0"}},
		{Path: cmdPath, Dir: filepath.Join(root, "cmd"), Siblings: map[string]string{corePath: "v0.3.0", heavyPath: "v0.3.0"}},
	}
	if len(mods) != len(want) {
		t.Fatalf("LoadWorkspace = %+v, want %+v", mods, want)
	}
	for i := range want {
		if mods[i].Path != want[i].Path || mods[i].Dir != want[i].Dir || !maps.Equal(mods[i].Siblings, want[i].Siblings) {
			t.Errorf("module %d = %+v, want %+v", i, mods[i], want[i])
		}
	}
}

func TestLoadWorkspaceWithoutGoWork(t *testing.T) {
	if _, err := LoadWorkspace(t.TempDir()); err == nil || !strings.Contains(err.Error(), "go.work") {
		t.Fatalf("LoadWorkspace of an empty folder = %v, want an error naming go.work", err)
	}
}

func TestReleaseVersion(t *testing.T) {
	mod := func(path string, sibs ...string) WorkModule {
		m := WorkModule{Path: path, Siblings: map[string]string{}}
		for i := 0; i < len(sibs); i += 2 {
			m.Siblings[sibs[i]] = sibs[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		mods    []WorkModule
		want    string
		wantErr []string
	}{
		{
			name: "all agree",
			mods: []WorkModule{mod("a"), mod("b", "a", "v0.1.0"), mod("c", "a", "v0.1.0", "b", "v0.1.0")},
			want: "v0.1.0",
		},
		{
			name:    "disagree",
			mods:    []WorkModule{mod("a"), mod("b", "a", "v0.1.0"), mod("c", "a", "v0.2.0", "b", "v0.1.0")},
			wantErr: []string{"different versions", "v0.1.0: b requires a, c requires b", "v0.2.0: c requires a", "scripts/release"},
		},
		{
			name:    "pseudo-version",
			mods:    []WorkModule{mod("a"), mod("b", "a", "v0.0.0-00010101000000-000000000000")},
			wantErr: []string{"v0.0.0-00010101000000-000000000000, which is not a release version", "scripts/release VERSION"},
		},
		{
			name:    "no sibling requirement",
			mods:    []WorkModule{mod("a"), mod("b")},
			wantErr: []string{"no workspace module requires another"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReleaseVersion(tc.mods)
			if len(tc.wantErr) == 0 {
				if err != nil || got != tc.want {
					t.Fatalf("ReleaseVersion = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReleaseVersion = %q, want an error", got)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
