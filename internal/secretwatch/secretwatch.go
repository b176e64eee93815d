// Package secretwatch lets a test suite see every error the SDK returns, so
// that it can prove no token ever appears in one. Outside tests no observer
// is set and the cost is one atomic load per failed call.
package secretwatch

import "sync/atomic"

var observer atomic.Pointer[func(string)]

// SetObserver makes f receive the text of every error the SDK returns.
// Passing nil removes it.
func SetObserver(f func(string)) {
	if f == nil {
		observer.Store(nil)
		return
	}
	observer.Store(&f)
}

// Error reports err to the observer, if any, and returns it unchanged.
func Error(err error) error {
	if err != nil {
		if f := observer.Load(); f != nil {
			(*f)(err.Error())
		}
	}
	return err
}
