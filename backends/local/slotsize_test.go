package local

import (
	"testing"
	"unsafe"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// TestSlotSize pins the bytes of a slot, the state's expiry included: the
// window algorithms' slot is one 64-byte cache line. Catches: a 64-bit
// expiry or insert count (72 bytes, allocated as 80).
func TestSlotSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes pinned are a 64-bit platform's")
	}
	require.Equal(t, uintptr(64), unsafe.Sizeof(slot[core.WindowState]{}), "window slot")
	require.Equal(t, uintptr(56), unsafe.Sizeof(slot[core.BucketState]{}), "bucket slot")
	require.Equal(t, uintptr(72), unsafe.Sizeof(slot[core.LogState]{}), "log slot")
}
