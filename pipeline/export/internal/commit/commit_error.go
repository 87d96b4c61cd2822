package commit

import (
	"errors"
	"fmt"
)

// PartitionError is a commit that failed for one partition: its file (a
// Parquet part or an archive segment) could not be written or renamed
// into its directory, e.g. because a regular file stands where the
// partition's directory belongs. It costs only that partition: the other
// partitions' files of the same commit are committed, the failed one stays
// buffered (nothing is acknowledged past it, so nothing is lost) and is
// tried again at the next commit, with the later files of its partition.
// Remove what is in the way (Dir says where); the next commit succeeds.
type PartitionError struct {
	Partition Partition
	Dir       string // the partition's directory
	FirstSeq  uint64 // the stream range of the file that failed
	LastSeq   uint64
	Err       error
}

func (e *PartitionError) Error() string {
	return fmt.Sprintf("commit sequences %d-%d of partition %s: %v", e.FirstSeq, e.LastSeq, e.Dir, e.Err)
}

// Unwrap returns the cause.
func (e *PartitionError) Unwrap() error { return e.Err }

// OnlyPartitionErrors reports whether err is one *PartitionError, or
// several joined, and nothing else: a commit whose only failures cost
// their partitions, not the whole commit (a manifest that could not be
// written, a cancellation, a change not known durable).
func OnlyPartitionErrors(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !OnlyPartitionErrors(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	var pe *PartitionError
	return errors.As(err, &pe) && !errors.Is(err, ErrNotDurable)
}
