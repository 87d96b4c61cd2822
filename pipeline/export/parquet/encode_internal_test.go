package parquet

import "testing"

func TestPageBufferBytes(t *testing.T) {
	for _, tc := range []struct {
		part int64
		page int
		want int
	}{
		{0, 1 << 20, 64 << 10},
		{100, 1 << 20, 64 << 10},
		{64 << 10, 1 << 20, 64 << 10},
		{64<<10 + 1, 1 << 20, 128 << 10},
		{300 << 10, 1 << 20, 512 << 10},
		{1 << 20, 1 << 20, 1 << 20},
		{64 << 20, 1 << 20, 1 << 20},
		{10, 32 << 10, 32 << 10}, // never above the configured page size
	} {
		if got := pageBufferBytes(tc.part, tc.page); got != tc.want {
			t.Errorf("pageBufferBytes(%d, %d) = %d, want %d", tc.part, tc.page, got, tc.want)
		}
	}
}
