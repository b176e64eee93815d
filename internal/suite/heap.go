package suite

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// HeapGrowth runs f while sampling HeapInuse every 200µs (and once more when
// f returns), and returns the largest growth seen over the heap in use after
// a GC just before f. A test bounds what a call holds at once with it,
// without timing anything.
func HeapGrowth(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
			peak.Store(ms.HeapInuse - base)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	f()
	sample()
	close(done)
	wg.Wait()
	return peak.Load()
}
