package claim

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestOrderAfter(t *testing.T) {
	job := func(id string, after ...string) NewJob { return NewJob{ID: id, Command: "true", After: after} }
	tests := []struct {
		batch []NewJob
		want  []int  // nil: an error
		err   string // with this text
	}{
		{[]NewJob{job("b", "a")}, []int{0}, ""},
		{[]NewJob{job("d", "b", "c"), job("b", "a"), job("c", "a"), job("a")}, []int{3, 1, 2, 0}, ""},
		{[]NewJob{job("a", "c"), job("b", "a"), job("c", "b")}, nil, "jobs a → c → b → a wait for each other"},
		{[]NewJob{job("a", "b"), job("b", "a")}, nil, "jobs a → b → a wait for each other"},
	}
	for _, tt := range tests {
		got, err := orderAfter(tt.batch)
		switch {
		case tt.want != nil && (err != nil || !slices.Equal(got, tt.want)):
			t.Errorf("orderAfter(%v) = %v, %v; want %v", tt.batch, got, err, tt.want)
		case tt.want == nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("orderAfter(%v) = %v, want ErrInvalid containing %q", tt.batch, err, tt.err)
		}
	}
}
