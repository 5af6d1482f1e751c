package proxier

import "errors"

// ErrSyncFailed wraps a transaction nftables refused; the next sync is a
// full one.
var ErrSyncFailed = errors.New("proxier: nftables sync failed")
