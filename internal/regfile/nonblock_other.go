//go:build !unix

package regfile

// nonBlock is 0 where there is no O_NONBLOCK; the type check before
// opening still refuses a non-regular file.
const nonBlock = 0
