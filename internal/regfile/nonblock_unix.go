//go:build unix

package regfile

import "syscall"

// nonBlock makes opening a FIFO return at once instead of waiting for a
// writer; it changes nothing for a regular file.
const nonBlock = syscall.O_NONBLOCK
