package netmodel

import (
	"testing"
	"time"
)

func TestWorldWideSpread(t *testing.T) {
	m, err := WorldWide(8, 5*time.Millisecond, 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if m.RedisRTT[0] != 5*time.Millisecond || m.RedisRTT[7] != 150*time.Millisecond {
		t.Fatalf("RTTs %v, want 5ms..150ms", m.RedisRTT)
	}
	if m.OneWay[0][4] != 75*time.Millisecond || m.OneWay[0][1] <= 0 || m.OneWay[3][3] != 0 {
		t.Fatalf("one-way row 0 %v", m.OneWay[0])
	}
	if m.OneWay[2][5] != m.OneWay[5][2] {
		t.Fatal("one-way delays are not symmetric")
	}
	if _, err := WorldWide(0, 0, 0); err == nil {
		t.Fatal("zero PoPs accepted")
	}
}
