package run

import "testing"

func TestProcsFor(t *testing.T) {
	for _, c := range []struct{ slots, limit, want int }{
		{0, 2, 1}, {1, 2, 1}, {2, 2, 1}, {8, 2, 1}, {9, 2, 2}, {64, 2, 2},
		{9, 1, 1}, {16, 64, 2}, {17, 64, 3}, {64, 64, 8}, {1, 0, 1},
	} {
		if got := procsFor(c.slots, c.limit); got != c.want {
			t.Errorf("procsFor(%d slots, limit %d) = %d, want %d", c.slots, c.limit, got, c.want)
		}
	}
}
